#!/usr/bin/env bash
# core_spare.sh -- connections set up ahead (PROTOCOL.md 3.4): a client that takes the
# spare gets the setup reply a new connection would get now, even after another client
# changed what a setup reply says (the root window's event masks), and the spare is
# really used.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_start_xvfb b && xl_start_pair p b || { fail "That an Xvfb and a tincan pair start"; summary; exit 1; }

# The root's event masks, as a client's setup reply gives them (xdpyinfo prints them).
masks() { xl_on "$1" xdpyinfo 2>&1 | sed -n '/current input event mask/,/^  [a-z]/p' | sed '$d'; }
same_masks() { masks p >"$XL_TMP/m.p"; masks b >"$XL_TMP/m.b"; [ -s "$XL_TMP/m.b" ] && cmp -s "$XL_TMP/m.p" "$XL_TMP/m.b"; }

xl_on p xdpyinfo >/dev/null 2>&1 # the first client may come before the spare is on offer
check "That a client through tincan gets the root's event masks a direct client gets" xl_wait_for 10 same_masks

kill -USR1 "$p_app_pid"
check "That clients took spare connections (no link round trip to connect)" \
    xl_wait_for 5 grep -qE '^connection setups answered here \(spare connections\): [1-9]' "$p_app_log"

# A direct client selects keyboard events on the root: every setup reply from now on says so.
masks b >"$XL_TMP/m.before"
changed() { masks b >"$XL_TMP/m.now"; ! cmp -s "$XL_TMP/m.before" "$XL_TMP/m.now"; }
xl_bg b xev -root -event keyboard >/dev/null 2>&1
check "That the direct client changed the root's event masks" xl_wait_for 10 changed
# The spare on offer was set up before the change; it is checked about once a second.
sleep 2.5
check "That the spare set up before the change is not given out: the next client sees the new masks" same_masks

xl_stop_pair p
check "That both halves exit 0" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That neither half reported a sanitizer error or an inconsistency" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
