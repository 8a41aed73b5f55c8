#!/usr/bin/env bash
# core_run.sh -- `tincan run`: the whole chain on one machine (an embedded Xvfb or a given
# display, both halves, the command), statistics at the end, and nothing left behind.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

t0=$SECONDS
timeout 60 "$TINCAN" run --no-emulator --xvfb --duration 3 --screenshot "$XL_TMP/run.xwd" -- xlogo \
    >"$XL_TMP/run.out" 2>"$XL_TMP/run.err"
rc=$?
took=$((SECONDS - t0))
check "That tincan run --no-emulator --xvfb --duration 3 -- xlogo succeeds (exit status $rc)" test "$rc" = 0
if [ "$rc" != 0 ]; then
    sed 's/^/    /' "$XL_TMP/run.err" | grep -vE '^    (request|reply|event|setup|kind|class) ' | head -20
else
    check "That it lasts about the 3 seconds asked for (took $took s)" test "$took" -ge 2 -a "$took" -le 20
    check "That it prints the display side's statistics" grep -q '^== tincan display side statistics' "$XL_TMP/run.err"
    check "That it prints the app side's statistics" grep -q '^== tincan app side statistics' "$XL_TMP/run.err"
    check "That the statistics count xlogo's requests by name" \
        grep -qE '^request +CreateWindow +[1-9][0-9]* ' "$XL_TMP/run.err"
    check "That the statistics count the one client" \
        bash -c "[ \$(grep -c '^clients: 1 connected, 0 refused, 0 dropped for bad input' '$XL_TMP/run.err') = 2 ]"
    check "That it says how the command ended" grep -q '^tincan run: xlogo ended' "$XL_TMP/run.err"
    # xlogo connects as the link comes up: it waits for the first spare connection (PROTOCOL.md 3.5)
    check "That the command's first client connected through a spare connection, without a link round trip" \
        grep -q '^connection setups answered here (spare connections): 1$' "$XL_TMP/run.err"
    # The screenshot: an xwd of the embedded Xvfb's whole screen (1280x800) with xlogo on it.
    check "That the screenshot is an xwd of the whole 1280x800 screen" python3 -c '
import struct, sys
h = struct.unpack(">25I", open(sys.argv[1], "rb").read(100))
sys.exit(0 if (h[4], h[5]) == (1280, 800) else 1)' "$XL_TMP/run.xwd"
    check "That the screenshot is not blank (xlogo is on it)" \
        python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
h = struct.unpack(">25I", d[:100])
pixels = d[h[0] + 12 * h[19]:]  # after the header and the colour map
sys.exit(0 if len(set(pixels)) > 1 else 1)' "$XL_TMP/run.xwd"
fi
n=$(sed -n 's/^tincan run: started Xvfb on :\([0-9]*\)$/\1/p' "$XL_TMP/run.err")
check "That the embedded Xvfb (:${n:-?}) is gone afterwards" test -n "$n" -a ! -e "/tmp/.X$n-lock"
dir=$(grep -o '/tmp/tincan-run\.[A-Za-z0-9]*' "$XL_TMP/run.err" | head -1)
[ -z "$dir" ] || check "That tincan run's temporary directory is removed" test ! -e "$dir"
check "That no process reported a sanitizer error" xl_sanitizer_clean "$XL_TMP/run.err"

# Xvfb writes its display number and the newline after it with two write() calls, and dies
# if the pipe has been closed in between. tests/clients/slow-xvfb/Xvfb wraps the real one
# and leaves 0.3 s between the two writes, so a reader that stops after the first read
# (and closes the pipe) kills its Xvfb every time instead of once in a while.
PATH=$XL_ROOT/tests/clients/slow-xvfb:$PATH timeout 60 "$TINCAN" run --no-emulator --xvfb --duration 2 \
    --screenshot "$XL_TMP/slow.xwd" -- xlogo >/dev/null 2>"$XL_TMP/slow.err"
check "That tincan run reads Xvfb's whole display-number line before closing the pipe (Xvfb lives on)" \
    bash -c "! grep -qE 'Cannot write display number|X connection to :[0-9]+ broken' '$XL_TMP/slow.err' && [ -s '$XL_TMP/slow.xwd' ]"
grep -E 'Cannot write display number|connection to :[0-9]+ broken|xlogo ended' "$XL_TMP/slow.err" | sed 's/^/    log: /'

# On a given display, with the command's own exit status.
xl_start_xvfb b || fail "That an Xvfb starts"
XAUTHORITY=$b_auth timeout 60 "$TINCAN" run --no-emulator --display "$b_display" -- \
    sh -c 'xdpyinfo > "$0" && exit 3' "$XL_TMP/dpy.out" >/dev/null 2>"$XL_TMP/run2.err"
rc=$?
check "That tincan run --display exits with the command's status (3, got $rc)" test "$rc" = 3
check "That the command ran as a client of tincan's app side" \
    bash -c "grep -q '^name of display:    :[0-9]' '$XL_TMP/dpy.out' && ! grep -qE '^    MIT-SHM' '$XL_TMP/dpy.out'"
XAUTHORITY=$b_auth timeout 60 "$TINCAN" run --no-emulator --display "$b_display" --quiet -- xdpyinfo \
    >/dev/null 2>"$XL_TMP/run3.err"
rc=$?
check "That --quiet runs the command (status $rc) and prints no statistics" \
    bash -c "[ $rc = 0 ] && ! grep -q 'statistics' '$XL_TMP/run3.err'"
# A desktop session: a window manager and a program from a script. With --session the
# session ends when the script does, though the window manager is still connected.
printf 'RandomPlacement\n' >"$XL_TMP/twmrc"
cat >"$XL_TMP/session.sh" <<SESSION
twm -f "$XL_TMP/twmrc" &
xlogo -geometry 100x100+300+300 &
sleep 3
echo "twm \$(kill -0 \$! && echo alive)" >"$XL_TMP/session.out"
exit 4
SESSION
t0=$SECONDS
XAUTHORITY=$b_auth timeout 60 "$TINCAN" run --no-emulator --display "$b_display" --session --quiet -- \
    sh "$XL_TMP/session.sh" >/dev/null 2>"$XL_TMP/run4.err"
rc=$?
check "That tincan run --session ends with its script's status (4, got $rc), within 20 s ($((SECONDS - t0)) s)" \
    test "$rc" = 4 -a $((SECONDS - t0)) -lt 20
check "That the window manager ran in the session and the script ran to its end" grep -q 'twm alive' "$XL_TMP/session.out"
check "That the session's clients are gone with it (twm, xlogo)" xl_wait_for 10 xl_windows_are b '^xlogo$' 0
check "That those runs reported no sanitizer error" xl_sanitizer_clean "$XL_TMP/run2.err" "$XL_TMP/run3.err" "$XL_TMP/run4.err"
summary
