#!/usr/bin/env bash
# core_screens.sh -- tincan is transparent to drawing: for each workload, the screen of an
# Xvfb driven through a tincan pair is byte-identical (xwd -root) to that of a twin Xvfb,
# started with the same settings, driven directly. Both screens are dumped the same way,
# so even the xwd headers must match; the whole files are compared with cmp.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

check "That the test clients build" xl_build_clients
TEXT=/usr/share/common-licenses/GPL-3
SECRET=$XL_TMP/secret
"$TINCAN" secret "$SECRET"

# Each workload W has wl_W TARGET SCREEN: start the program as a client of TARGET (the
# Xvfb itself, or the tincan pair in front of it) and return once it has finished drawing
# as far as can be told from outside; SCREEN is the Xvfb that shows it. Pids go in WL_PIDS.

wl_x11perf() {
    # x11perf clears its windows between tests and destroys them at the end; a window
    # without background underneath (xkeeper, a direct client) keeps its last picture:
    # the status line and the cleared test window. So this compares little more than that
    # x11perf ran the same; xdraw below leaves the same kinds of drawing on screen.
    rm -f "$XL_TMP/keeper.out"
    xl_bg "$2" "$XL_BIN/xkeeper" >"$XL_TMP/keeper.out"; WL_PIDS+=("$XL_LAST")
    xl_wait_for 10 grep -q ready "$XL_TMP/keeper.out" || return 1
    xl_on "$1" timeout 120 x11perf -repeat 1 -reps 20 -rect10 -seg10 -ftext -copywinwin10 -putimage10 \
        -oddtilerect10 -circle10 >"$XL_TMP/x11perf.$1.out" 2>&1 || return 1
    [ "$(grep -c ' reps @ ' "$XL_TMP/x11perf.$1.out")" -eq 7 ]
}

wl_xdraw() {
    rm -f "$XL_TMP/xdraw.out"
    xl_bg "$1" "$XL_BIN/xdraw" >"$XL_TMP/xdraw.out"; WL_PIDS+=("$XL_LAST")
    xl_wait_for 60 grep -q drawn "$XL_TMP/xdraw.out"
}

wl_xterm() {
    # Jump scroll off: every line is drawn. The cursor-position query makes bash wait until
    # xterm has parsed all the text; bash then stays until the test ends.
    rm -f "$XL_TMP/xterm.ready"
    xl_bg "$1" xterm +j -geometry 80x24+0+0 -e bash -c \
        "cat '$TEXT'; IFS= read -rs -d R -p \$'\\e[6n' _; touch '$XL_TMP/xterm.ready'; sleep 600"
    WL_PIDS+=("$XL_LAST")
    xl_wait_for 120 test -e "$XL_TMP/xterm.ready"
}

wl_xlogo() { xl_bg "$1" xlogo -geometry 200x200+50+50; WL_PIDS+=("$XL_LAST"); xl_wait_window "$2" '^xlogo$'; }
wl_xeyes() { xl_bg "$1" xeyes -geometry 200x150+300+50; WL_PIDS+=("$XL_LAST"); xl_wait_window "$2" '^xeyes$'; }
wl_gtk3demo() { # GTK 3 uses XInput 2, RENDER, XFIXES and falls back from the hidden MIT-SHM
    NO_AT_BRIDGE=1 GDK_BACKEND=x11 xl_bg "$1" gtk3-demo; WL_PIDS+=("$XL_LAST")
    xl_wait_window "$2" '^Application Class$'
}
wl_xrender() {
    rm -f "$XL_TMP/xrender.out"
    xl_bg "$1" "$XL_BIN/xrender" >"$XL_TMP/xrender.out"; WL_PIDS+=("$XL_LAST")
    xl_wait_for 60 grep -q drawn "$XL_TMP/xrender.out"
}
wl_xcalc() { xl_bg "$1" xcalc -geometry +100+100; WL_PIDS+=("$XL_LAST"); xl_wait_window "$2" '^Calculator$'; }

# same_screen WORKLOAD SENTENCE-SUBJECT [PAIR OPTIONS...]
same_screen() {
    local w=$1 what=$2 ref=$XL_TMP/$1.direct.xwd out=$XL_TMP/$1.tincan.xwd ok=1
    shift 2
    local t0=$SECONDS
    WL_PIDS=()
    xl_start_xvfb a && xl_start_xvfb b && xl_start_pair p b "$@" || { fail "That $what can be set up"; return; }
    # The pointer is part of the picture for some (xeyes) and decides focus for others.
    xl_on a xdotool mousemove 1000 750; xl_on b xdotool mousemove 1000 750

    if ! "wl_$w" a a; then
        fail "That $what runs directly on Xvfb"; ok=0
    elif ! xl_dump_stable a "$ref" 30; then
        fail "That $what settles on the direct Xvfb"; ok=0
    fi
    if [ "$ok" = 1 ]; then
        if ! "wl_$w" p b; then
            fail "That $what runs through tincan"
        elif xl_dump_until_same b "$ref" "$out" 30; then
            pass "That $what through tincan looks byte for byte as it does directly"
        else
            fail "That $what through tincan looks byte for byte as it does directly"
            xl_describe_diff "$ref" "$out"
            mkdir -p /tmp/tincan-core-failures && cp "$ref" "$out" /tmp/tincan-core-failures/ &&
                echo "    (dumps kept in /tmp/tincan-core-failures/)"
        fi
    fi
    local p
    for p in "${WL_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${WL_PIDS[@]}"; do xl_wait_exit "$p" 5 || kill -KILL "$p" 2>/dev/null; done
    xl_stop_pair p
    if [ "$p_app_rc" = 0 ] && [ "$p_disp_rc" = 0 ] && xl_sanitizer_clean "$p_app_log" "$p_disp_log"; then
        pass "That both halves end cleanly after $what, with no sanitizer report"
    else
        fail "That both halves end cleanly after $what, with no sanitizer report (app $p_app_rc, display $p_disp_rc)"
        tail -n 30 "$p_app_log" "$p_disp_log" | sed 's/^/    /'
    fi
    kill "$a_pid" "$b_pid"; xl_wait_exit "$a_pid" 5; xl_wait_exit "$b_pid" 5
    echo "    ($w: $((SECONDS - t0)) s)"
}

same_screen x11perf "an x11perf mix (rect10 seg10 ftext copywinwin10 putimage10 oddtilerect10 circle10)"
same_screen xdraw "a drawing client's mix with 4 MiB and 1.2 MB images both ways"
XL_LINK=127.0.0.1:$(xl_free_port) same_screen xdraw \
    "the drawing client's mix over a TCP link with a secret and no compression" --secret-file "$SECRET" --compress 0
same_screen xterm "xterm printing the GPL-3 (674 lines, no jump scroll)"
same_screen xterm "xterm printing the GPL-3 with zstd level 19 on the link" --compress 19
same_screen xlogo "xlogo"
same_screen xeyes "xeyes"
same_screen xcalc "xcalc"
same_screen xrender "a RENDER client: fills with operators and alpha, a masked ARGB composite, AA trapezoids, glyphs"
if command -v gtk3-demo >/dev/null; then
    same_screen gtk3demo "gtk3-demo (GTK 3)"
else
    echo "NOTE: gtk3-demo is not run: install gtk-3-examples."
fi
echo "NOTE: rendercheck is not run: Debian 12 has no rendercheck package (tests/clients/xrender.c stands in)."
summary
