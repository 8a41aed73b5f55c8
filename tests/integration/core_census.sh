#!/usr/bin/env bash
# core_census.sh -- the atom census (PROTOCOL.md 3.2): atoms another client makes are told
# by their names' hashes (ATOM_HASHES), so only-if-exists InternAtom of such a name still
# reaches the server and gets the atom, while a name no atom has is answered None at the
# app side.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_pair p a --log-level debug || { fail "That an Xvfb and a tincan pair start"; summary; exit 1; }
xl_on p "$XL_BIN/xatom" WM_NAME >/dev/null # the first client waits for the display side's facts

# A client of the server itself (outside tincan) makes an atom; a look finds it.
made=$(xl_on a "$XL_BIN/xatom" -c _TINCAN_OUTSIDE_ATOM | sed -n 's/^_TINCAN_OUTSIDE_ATOM=//p')
check "That a direct client made an atom ($made)" test "${made:-0}" -gt 0
check "That the display side's census found it and told it by its hash" \
    xl_wait_for 10 grep -q "observer: atom $made is new: told by its name's hash" "$p_disp_log"
sleep 0.3 # its ATOM_HASHES and census cross the link

# trips NAME...: InternAtom only-if-exists through tincan; prints its output, then how many
# of its requests went to the server (round trips in the app side's log).
trips() {
    local before after
    before=$(grep -c 'round trip ended by the reply to request [0-9]* (InternAtom)' "$p_app_log")
    xl_on p "$XL_BIN/xatom" "$@"
    after=$(grep -c 'round trip ended by the reply to request [0-9]* (InternAtom)' "$p_app_log")
    echo "trips=$((after - before))"
}
out=$(trips _TINCAN_OUTSIDE_ATOM)
check "That only-if-exists InternAtom of a name told by hash gets its atom from the server ($(echo $out))" \
    test "$out" = "$(printf '_TINCAN_OUTSIDE_ATOM=%s\ntrips=1' "$made")"
out=$(trips _TINCAN_NO_SUCH_ATOM)
check "That only-if-exists InternAtom of a name no atom has is answered None at the app side ($(echo $out))" \
    test "$out" = "$(printf '_TINCAN_NO_SUCH_ATOM=0\ntrips=0')"
# Learnt from that reply, the name is now answered at the app side.
out=$(trips _TINCAN_OUTSIDE_ATOM)
check "That the atom, learnt from the reply, is then answered at the app side ($(echo $out))" \
    test "$out" = "$(printf '_TINCAN_OUTSIDE_ATOM=%s\ntrips=0' "$made")"
check "That the census told the atom by its hash (a FACT of a few bytes, no name)" \
    grep -qE 'link write: [0-9]+ frame bytes -> [0-9]+:.* FACT:0:[3-9] ' "$p_disp_log"

# A client through tincan makes an atom and stays: its reply tells the app side, the census
# adds nothing. (One that goes away at once has every atom of the next look told by hash.)
sleep 1.2 # no client has gone since the last look began
own=$(xl_on p "$XL_BIN/xatom" -s 2 -c _TINCAN_OWN_ATOM | sed -n 's/^_TINCAN_OWN_ATOM=//p')
check "That the census leaves an atom made through tincan ($own) to its reply" \
    grep -q "observer: atom $own is new: its reply tells it" "$p_disp_log"
gone=$(xl_on p "$XL_BIN/xatom" -c _TINCAN_GONE_ATOM | sed -n 's/^_TINCAN_GONE_ATOM=//p')
check "That an atom of a client that went away at once ($gone) is told by its hash: its reply may be lost" \
    xl_wait_for 10 grep -q "observer: atom $gone is new: told by its name's hash" "$p_disp_log"
sleep 0.3
out=$(trips _TINCAN_NO_SUCH_ATOM_2)
check "That the census is still whole: a name no atom has is answered None at the app side ($(echo $out))" \
    test "$out" = "$(printf '_TINCAN_NO_SUCH_ATOM_2=0\ntrips=0')"

xl_stop_pair p
check "That both halves exit 0" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That no InternAtom answered None turned out to exist" bash -c "! grep -q 'answered None at the app side' '$p_disp_log'"
check "That neither half reported a sanitizer error or an inconsistency" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
