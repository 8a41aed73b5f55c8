#!/usr/bin/env bash
# core_focus.sh -- GetInputFocus (XSync's round trip) answered at the app side with the
# client's last answer, while nothing else from the server has reached the client and its
# requests since could not move the focus (PROTOCOL.md 3.2): the answers are those a direct
# client gets, also after queries answered by the server; an event, an UnmapWindow or a
# DestroyWindow of the focus, or the focus moved by another client (seen by a client that
# polls) all reach the client as they would directly.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start"; summary; exit 1; }
xl_start_pair p b --log-level debug || { fail "That a tincan pair starts"; summary; exit 1; }
xl_on p "$XL_BIN/xfocus" pair >/dev/null # the first client waits for the display side's facts

# waited MODE: runs xfocus MODE through the pair (output in $XL_TMP/MODE.p) and prints how
# many of its GetInputFocus waited on the link.
waited() {
    local before; before=$(grep -c 'round trip ended by the reply to request [0-9]* (GetInputFocus)' "$p_app_log")
    xl_on p "$XL_BIN/xfocus" "$1" >"$XL_TMP/$1.p" 2>&1
    echo $(($(grep -c 'round trip ended by the reply to request [0-9]* (GetInputFocus)' "$p_app_log") - before))
}
for mode in pair event unmap query destroy; do
    xl_on a "$XL_BIN/xfocus" "$mode" >"$XL_TMP/$mode.a" 2>&1
    w=$(waited "$mode")
    check "That xfocus $mode prints through tincan what it prints directly ($(tr '\n' ' ' <"$XL_TMP/$mode.a"))" \
        cmp -s "$XL_TMP/$mode.a" "$XL_TMP/$mode.p"
    case $mode in
    pair) check "That the second of two GetInputFocus in a row was answered at the app side ($w waited)" test "$w" -eq 1 ;;
    event) check "That a GetInputFocus after an event went to the server ($w of 2 waited)" test "$w" -eq 2 ;;
    unmap) check "That a GetInputFocus after the focus window was unmapped went to the server ($w of 2 waited)" test "$w" -eq 2 ;;
    query) check "That a GetInputFocus after answered queries (a reply, an error) was answered at the app side ($w waited)" test "$w" -eq 1 ;;
    destroy) check "That a GetInputFocus after the focus window was destroyed went to the server ($w of 2 waited)" test "$w" -eq 2 ;;
    esac
done
check "That the unmapped window's focus reverted, directly and through tincan" \
    test "$(tail -1 "$XL_TMP/unmap.a")" = "focus=pointerroot revert=1"
check "That the destroyed window's focus reverted to its parent, the root, directly and through tincan" \
    test "$(tail -1 "$XL_TMP/destroy.a")" = "focus=root revert=0"

# Another client (on the server itself) moves the focus while one through tincan polls.
xl_on b "$XL_BIN/xfocus" window >"$XL_TMP/win.out" 2>&1 & winpid=$!
xl_wait_for 10 test -s "$XL_TMP/win.out"
win=$(head -1 "$XL_TMP/win.out")
xl_on p "$XL_BIN/xfocus" poll "$win" >"$XL_TMP/poll.out" 2>&1 & pollpid=$!
sleep 0.5
xl_on b "$XL_BIN/xfocus" give "$win"
wait "$pollpid"; rc=$?
check "That a client polling the focus through tincan sees another client move it ($(cat "$XL_TMP/poll.out"))" test "$rc" = 0
kill "$winpid" 2>/dev/null; wait "$winpid" 2>/dev/null

xl_stop_pair p
check "That both halves exit 0" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That the display side knew every such answer (none 'please report')" bash -c "! grep -q 'please report' '$p_disp_log'"
check "That neither half reported a sanitizer error or an inconsistency" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
