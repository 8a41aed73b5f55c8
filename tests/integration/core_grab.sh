#!/usr/bin/env bash
# core_grab.sh -- server grabs through tincan (issue 16): a client that grabs the server
# and is killed holding it; a client that grabs, makes a round trip and ungrabs 100 times
# while another draws and a third connects; a grab held while a new client connects
# through the spare connection. Throughout, a probe directly on the real Xvfb
# (tests/clients/xprobe.c) must be answered within 1 s, except while a test client holds
# the grab on purpose, and then within 1 s of its end.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_xvfb b && xl_start_pair p b ||
    { fail "That two Xvfbs and a tincan pair start"; summary; exit 1; }
xl_start_probe a && xl_start_probe b || { fail "That the probes start on both Xvfbs"; summary; exit 1; }
xl_on p timeout 20 xdpyinfo >/dev/null 2>&1 # the first client waits for the display side's facts

probe_check() { # SENTENCE [FROM TO]
    if xl_probe_ok b "${@:2}"; then pass "$1"; else fail "$1: $XL_PROBE_WHY"; fi
}
# answered_after MS: the probe on b has a round trip that ended after MS.
answered_after() { awk -v t="$1" 'NF == 2 && $2 > t { ok = 1 } END { exit !ok }' "$XL_TMP/b.probe"; }
# grab_line FILE WORD: FILE (a background client's output) has the line WORD.
grab_line() { grep -q "^$2" "$1"; }

# stop_if_frozen: the rest cannot run on a frozen server; say so once and end.
stop_if_frozen() {
    if xl_probe_stuck b; then
        fail "That the real server is not frozen after the last part (the rest is not run)"
        summary; exit 1
    fi
}

# 1. Grab, then SIGKILL while holding it.
t0=$SECONDS
from=$(xl_now_ms)
rm -f "$XL_TMP/hold1.out"
xl_bg p "$XL_BIN/xgrab" hold >"$XL_TMP/hold1.out"; g=$XL_LAST
check "That a client through tincan grabs the server" xl_wait_for 10 grab_line "$XL_TMP/hold1.out" grabbed
sleep 0.5 # the grab is held: the probe on the real server waits, as it must
kill -KILL "$g"; to=$(xl_now_ms); wait "$g" 2>/dev/null
check "That the real server answers the probe within 1 s of the grabbing client's SIGKILL" \
    timeout 1.5 bash -c "until awk -v t=$to 'NF == 2 && \$2 > t { ok = 1 } END { exit !ok }' '$XL_TMP/b.probe'; do sleep 0.05; done"
probe_check "That the probe was never slow but for the grab, and then by under 1 s" "$from" "$to"
check "That a new direct client of the real server connects within 1 s after (xdpyinfo)" \
    xl_on b timeout 1 xdpyinfo -queryExtensions >/dev/null
check "That a client through tincan is served after the grabbing client died" xl_on p timeout 10 xdpyinfo >/dev/null
echo "    (grab and SIGKILL: $((SECONDS - t0)) s)"
stop_if_frozen

# 2. A grab held while a new client connects through the spare connection: the client's
#    setup is answered at once (the spare), its first round trip once the grab ends.
#    (Directly, its setup would wait for the end of the grab. The grabbing client itself takes
#    a spare: it waits 1 s before grabbing, for the next spare to be set up.)
t0=$SECONDS
spares() { kill -USR1 "$p_app_pid"; sleep 0.3
    sed -n 's/^connection setups answered here (spare connections): \([0-9]*\).*/\1/p' "$p_app_log" | tail -1; }
before=$(spares)
rm -f "$XL_TMP/hold3.out" "$XL_TMP/late.out"
xl_bg p "$XL_BIN/xgrab" -w 1000 hold >"$XL_TMP/hold3.out"; g=$XL_LAST
check "That a client through tincan grabs the server again" xl_wait_for 10 grab_line "$XL_TMP/hold3.out" grabbed
from=$(xl_now_ms)
xl_bg p "$XL_BIN/xprobe" 100 >"$XL_TMP/late.out"; late=$XL_LAST
check "That a new client through tincan connects while the grab is held" xl_wait_for 5 grab_line "$XL_TMP/late.out" ready
xl_bg p xlogo -geometry 100x100+10+600; logo=$XL_LAST
sleep 1
check "That the new client's round trip waits while the grab is held" test "$(grep -c '^[0-9]' "$XL_TMP/late.out")" = 0
kill -USR1 "$g"; to=$(xl_now_ms)
check "That the grabbing client ungrabs" xl_wait_for 5 grab_line "$XL_TMP/hold3.out" ungrabbed
check "That the new client's first round trip is answered within 1 s of the ungrab" \
    timeout 1.5 bash -c "until awk -v t=$to 'NF == 2 && \$2 > t && \$2 - t <= 1000 { ok = 1 } END { exit !ok }' '$XL_TMP/late.out'; do sleep 0.05; done"
check "That xlogo, started during the grab, maps after it" xl_wait_window b '^xlogo$' 10
probe_check "That the real server answers the probe within 1 s of the ungrab" "$from" "$to"
after=$(spares)
check "That the client connected during the grab took a spare connection ($before, then $after)" \
    test -n "$after" -a "${after:-0}" -gt "${before:-0}"
kill "$g" "$late" "$logo" 2>/dev/null
echo "    (grab with a new client: $((SECONDS - t0)) s)"

stop_if_frozen

# 3. 100 grab, round trip, ungrab while a client draws and a third connects; the same on
#    the direct Xvfb, whose screen the tincan one must equal.
#    xdraw's 4 MiB PutImage waits at the display side while the server is grabbed, which
#    takes the display side over its memory mark (8 MiB of the default --max-memory 64M);
#    the grabbing client's connection must still be read, or its reply never comes and it
#    never ungrabs (the real server stayed grabbed before session_may_read allowed it).
grab_loop_run() { # TARGET SCREEN
    local t=$1 s=$2
    rm -f "$XL_TMP/loop.$t.out" "$XL_TMP/draw.$t.out"
    xl_bg "$t" "$XL_BIN/xgrab" loop 100 >"$XL_TMP/loop.$t.out"; LOOP_PID=$XL_LAST
    xl_bg "$t" "$XL_BIN/xdraw" >"$XL_TMP/draw.$t.out"; DRAW_PID=$XL_LAST
    xl_wait_alive "$s" 30 grep -q drawn "$XL_TMP/draw.$t.out" || return 1
    xl_bg "$t" xlogo -geometry 200x200+700+100; LOGO_PID=$XL_LAST
    xl_wait_alive "$s" 30 xl_has_window "$s" '^xlogo$' || return 1
    xl_wait_alive "$s" 60 grab_line "$XL_TMP/loop.$t.out" "done 100"
}
t0=$SECONDS
check "That 100 grabs with a round trip each, a drawing client and xlogo run directly" grab_loop_run a a
# From here no grab is held on purpose: a probe counts from this moment (the one waiting
# through part 2's grab, held for over a second by design, counts from here only).
loop_from=$(xl_now_ms)
dpid=($LOOP_PID $DRAW_PID $LOGO_PID)
xl_dump_stable a "$XL_TMP/loop.direct.xwd" 30 || fail "That the direct screen settles"
check "That 100 grabs with a round trip each, a drawing client and xlogo run through tincan" grab_loop_run p b
rc=running; ! xl_probe_stuck b && xl_wait_exit "$LOOP_PID" 10 && { wait "$LOOP_PID"; rc=$?; }
check "That the grabbing client exits 0 through tincan" test "$rc" = 0
if ! xl_probe_stuck b && xl_dump_until_same b "$XL_TMP/loop.direct.xwd" "$XL_TMP/loop.tincan.xwd" 30; then
    pass "That the drawing and xlogo beside 100 grabs look byte for byte as they do directly"
else
    fail "That the drawing and xlogo beside 100 grabs look byte for byte as they do directly"
    [ -e "$XL_TMP/loop.tincan.xwd" ] && xl_describe_diff "$XL_TMP/loop.direct.xwd" "$XL_TMP/loop.tincan.xwd"
fi
probe_check "That the real server answered every probe within 1 s during the 100 grabs" 0 "$loop_from"
kill "${dpid[@]}" "$DRAW_PID" "$LOGO_PID" 2>/dev/null
echo "    (100 grabs: $((SECONDS - t0)) s)"


stop_if_frozen
probe_check "That the real server answered every probe within 1 s since" 0 "$loop_from"
kill "$b_probe_pid" "$a_probe_pid"
xl_stop_pair p
check "That both halves exit 0" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That neither half reported a sanitizer error or an inconsistency" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
