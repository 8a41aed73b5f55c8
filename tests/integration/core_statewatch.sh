#!/usr/bin/env bash
# core_statewatch.sh -- RANDR state told ahead (src/proxy/statewatch.c): the display side
# asks the screen's resources, CRTCs and outputs itself and watches RANDR's change events,
# so `xrandr --current` through tincan prints what it prints directly without waiting on the
# link for those queries; after another client changes the screen's modes on the server,
# it prints the new state.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_start_xvfb b && xl_start_pair p b --log-level debug --no-cache ||
    { fail "That an Xvfb and a tincan pair start"; summary; exit 1; }

# state_waits: the app side's round trips that ended with a RANDR state query's answer.
state_waits() {
    grep -cE 'round trip ended by the reply to request [0-9]+ \(RANDR (GetScreenSizeRange|GetScreenResourcesCurrent|GetCrtcInfo|GetOutputInfo|GetMonitors|GetOutputPrimary)\)' "$p_app_log"
}

xl_on b xrandr --current >"$XL_TMP/direct1.out" 2>&1
xl_on p xrandr --current >"$XL_TMP/tincan1.out" 2>&1
check "That xrandr through tincan prints what it prints directly" cmp -s "$XL_TMP/direct1.out" "$XL_TMP/tincan1.out"
check "That its screen, CRTC and output queries were answered at the app side ($(state_waits) waits)" \
    test "$(state_waits)" -eq 0

# Another client adds a mode: RANDR tells the observer, which tells the app side again.
before=$(grep -c 'state watch: RANDR changed' "$p_disp_log")
xl_on b xrandr --newmode tc800 40 800 840 968 1056 600 601 605 628 && xl_on b xrandr --addmode screen tc800
xl_wait_for 20 test "$(grep -c 'state watch: RANDR changed' "$p_disp_log")" -gt "$before"
sleep 0.3 # the new facts cross the (local) link
xl_on b xrandr --current >"$XL_TMP/direct2.out" 2>&1
xl_on p xrandr --current >"$XL_TMP/tincan2.out" 2>&1
check "That the new mode is there when asked directly" grep -q tc800 "$XL_TMP/direct2.out"
check "That xrandr through tincan prints the changed state" cmp -s "$XL_TMP/direct2.out" "$XL_TMP/tincan2.out"

# A client of tincan changes it: both sides forget at once, and learn the new state again.
xl_on p xrandr --delmode screen tc800
xl_on p xrandr --current >"$XL_TMP/tincan3.out" 2>&1
xl_on b xrandr --current >"$XL_TMP/direct3.out" 2>&1
check "That a change made through tincan is seen through tincan at once" cmp -s "$XL_TMP/direct3.out" "$XL_TMP/tincan3.out"
xl_on b xrandr --rmmode tc800

xl_stop_pair p
check "That the pair's logs are clean" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
