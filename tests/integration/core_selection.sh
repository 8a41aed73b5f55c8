#!/usr/bin/env bash
# core_selection.sh -- GetSelectionOwner answered at the app side from the display side's
# watch of the selection (XFIXES; SELECTION facts, PROTOCOL.md 3.2): the answers are those a
# direct client gets; after the first ask of a selection the next are answered without the
# link; another client taking the selection on the server is seen by a client that polls; a
# client through tincan that sets the owner sees its own change at once; a selection toolkits
# ask at start whose atom the server has before the session is watched from its start.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start"; summary; exit 1; }
xl_on b "$XL_BIN/xselowner" ask CLIPBOARD_MANAGER 0 >/dev/null # its atom exists before the session
xl_start_pair p b --log-level debug || { fail "That a tincan pair starts"; summary; exit 1; }
xl_on p "$XL_BIN/xselowner" ask TINCAN_WARMUP 0 >/dev/null # the first client waits for the display side's facts

rts() { grep -c 'round trip ended by the reply to request [0-9]* (GetSelectionOwner)' "$p_app_log"; }
# same NAME ARGS...: runs xselowner ARGS directly and through tincan; prints how many of its
# GetSelectionOwner waited on the link.
same() {
    local name=$1; shift
    xl_on a "$XL_BIN/xselowner" "$@" >"$XL_TMP/$name.a" 2>&1
    local before; before=$(rts)
    xl_on p "$XL_BIN/xselowner" "$@" >"$XL_TMP/$name.p" 2>&1
    echo $(($(rts) - before))
}
w=$(same early ask CLIPBOARD_MANAGER 0)
check "That CLIPBOARD_MANAGER's owner prints through tincan what it prints directly ($(tr '\n' ' ' <"$XL_TMP/early.a"))" \
    cmp -s "$XL_TMP/early.a" "$XL_TMP/early.p"
check "That its first GetSelectionOwner was answered at the app side: watched from the start ($w waited)" test "$w" -eq 0
w=$(same ask ask TINCAN_SEL_A 3)
check "That xselowner ask prints through tincan what it prints directly ($(tr '\n' ' ' <"$XL_TMP/ask.a"))" \
    cmp -s "$XL_TMP/ask.a" "$XL_TMP/ask.p"
check "That after the first GetSelectionOwner of a selection the next three were answered at the app side ($w of 4 waited)" \
    test "$w" -eq 1
w=$(same take take TINCAN_SEL_A)
check "That a client that takes a selection sees itself the owner, directly and through tincan ($(tr '\n' ' ' <"$XL_TMP/take.p"))" \
    bash -c "cmp -s '$XL_TMP/take.a' '$XL_TMP/take.p' && test \"\$(tail -1 '$XL_TMP/take.p')\" = owner=self"
check "That the ask after its own SetSelectionOwner went to the server ($w of 2 waited)" test "$w" -eq 1

# Another client (on the server itself) takes a selection a client through tincan polls.
xl_on p "$XL_BIN/xselowner" ask TINCAN_SEL_B 0 >/dev/null # watched from here on
xl_on p "$XL_BIN/xselowner" wait TINCAN_SEL_B >"$XL_TMP/wait.out" 2>&1 & waitpid=$!
sleep 0.3
xl_on b "$XL_BIN/xselowner" own TINCAN_SEL_B >"$XL_TMP/own.out" 2>&1 & ownpid=$!
wait "$waitpid"; rc=$?
check "That a client polling a selection through tincan sees another client take it ($(cat "$XL_TMP/wait.out"))" test "$rc" = 0
pkill -f "xselowner own TINCAN_SEL_B"; wait "$ownpid" 2>/dev/null
# The owner's client is gone: the selection has no owner, and the app side hears of it.
gone() { [ "$(xl_on p "$XL_BIN/xselowner" ask TINCAN_SEL_B 0)" = owner=none ]; }
check "That the selection is told ownerless once its owner's client is gone" xl_wait_for 10 gone

xl_stop_pair p
check "That both halves exit 0" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That the display side knew every such answer (none 'please report')" bash -c "! grep -q 'please report' '$p_disp_log'"
check "That neither half reported a sanitizer error or an inconsistency" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
