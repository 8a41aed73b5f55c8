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

# GetMonitors: asked by the display side only once every output's name is an atom (the
# server interns a monitor's name when first asked): after a direct client asked it, and a
# change (the one above) made the display side ask again.
xl_build_clients || fail "That the test clients build"
xl_on b "$XL_BIN/xkbstate" randr >/dev/null 2>&1
before=$(grep -c 'state watch: RANDR changed' "$p_disp_log")
xl_on b xrandr --newmode tc640 25 640 656 752 800 480 490 492 525 && xl_on b xrandr --addmode screen tc640
xl_wait_for 20 test "$(grep -c 'state watch: RANDR changed' "$p_disp_log")" -gt "$before"
sleep 0.3
xl_on b "$XL_BIN/xkbstate" randr >"$XL_TMP/randr.direct" 2>&1
waits0=$(state_waits)
xl_on p "$XL_BIN/xkbstate" randr >"$XL_TMP/randr.tincan" 2>&1
check "That GTK 3's RANDR start prints through tincan what it prints directly" \
    sh -c "test -s '$XL_TMP/randr.direct' && cmp -s '$XL_TMP/randr.direct' '$XL_TMP/randr.tincan'"
check "That its GetScreenResourcesCurrent and GetMonitors were answered at the app side ($(($(state_waits) - waits0)) waits)" \
    test "$(state_waits)" -eq "$waits0"
xl_on b xrandr --delmode screen tc640; xl_on b xrandr --rmmode tc640

xl_stop_pair p
check "That the pair's logs are clean" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
