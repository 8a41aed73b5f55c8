#!/usr/bin/env bash
# core_xkbstate.sh -- the keyboard's XKEYBOARD state told ahead (src/proxy/statewatch.c): the
# display side asks GetState, GetControls, GetMap and GetNames as GTK 3 and emacs ask them,
# and ListExtensions, and watches XKEYBOARD's change events; tests/clients/xkbstate asks
# them (and PerClientFlags) through tincan and prints what it prints directly, without
# waiting on the link for them; after another client changes the keyboard's state, its
# layout, it prints the new state.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb b && xl_start_pair p b --log-level debug --no-cache ||
    { fail "That an Xvfb and a tincan pair start"; summary; exit 1; }

# waits: the app side's round trips that ended with an answer to one of the told queries.
waits() {
    grep -cE 'round trip ended by the reply to request [0-9]+ \((XKEYBOARD (GetState|GetControls|GetMap|GetNames|PerClientFlags)|ListExtensions)\)' "$p_app_log"
}
# same NAME MODE: xkbstate MODE directly and through tincan print the same (ListExtensions
# aside: tincan hides MIT-SHM; the display side checks that answer against the server's
# reply, as every answer, and logs an error if it differs: the logs' check below).
same() {
    xl_on b "$XL_BIN/xkbstate" "$2" 2>&1 | grep -v '^ListExtensions' >"$XL_TMP/$1.direct"
    xl_on p "$XL_BIN/xkbstate" "$2" 2>&1 | grep -v '^ListExtensions' >"$XL_TMP/$1.tincan"
    test -s "$XL_TMP/$1.direct" && cmp -s "$XL_TMP/$1.direct" "$XL_TMP/$1.tincan"
}
# changed BEFORE: the display side has seen an XKEYBOARD change since BEFORE were counted.
changes() { grep -c 'state watch: XKEYBOARD changed' "$p_disp_log"; }

xl_on p "$XL_BIN/xkbstate" ask >/dev/null # the first client waits for the display side's facts
before=$(waits)
check "That xkbstate through tincan prints what it prints directly" same ask ask
check "That its queries were answered at the app side ($(($(waits) - before)) waits)" test "$(waits)" -eq "$before"
check "That PerClientFlags (computed from the client's own flags) prints what it prints directly" same flags flags
check "That it was answered at the app side too ($(($(waits) - before)) waits)" test "$(waits)" -eq "$before"

# Another client holds Shift down on the server: StateNotify; the new state is told.
n=$(changes)
xl_on b xdotool keydown Shift_L
xl_wait_for 20 test "$(changes)" -gt "$n"
sleep 0.3 # the new facts cross the (local) link
before=$(waits)
check "That a modifier held on the server shows in GetState through tincan" same shift ask
check "That it was answered at the app side ($(($(waits) - before)) waits)" test "$(waits)" -eq "$before"
check "That the direct GetState differs from before" sh -c "! cmp -s '$XL_TMP/ask.direct' '$XL_TMP/shift.direct'"
xl_on b xdotool keyup Shift_L

# Another client loads another layout: the map and names change.
n=$(changes)
xl_on b setxkbmap -layout de
xl_wait_for 20 test "$(changes)" -gt "$n"
sleep 0.5
before=$(waits)
check "That another layout shows through tincan" same layout ask
check "That it was answered at the app side ($(($(waits) - before)) waits)" test "$(waits)" -eq "$before"
check "That its map is not the first one's" sh -c "! cmp -s '$XL_TMP/ask.direct' '$XL_TMP/layout.direct'"

# A client of tincan changes it: both sides forget at once.
xl_on p setxkbmap -layout us
check "That a change made through tincan is seen through tincan at once" same back ask

check "That the display side found no answer different from the server's" \
    sh -c "! grep -E 'differs from the answer|answered at the app side from state that changed' '$p_disp_log'"
xl_stop_pair p
check "That the pair's logs are clean" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
