#!/usr/bin/env bash
# core_outage_packet.sh -- out of radio range: the halves joined by TCP across tincan-link's
# packet mode (real kernel TCP between two namespaces, 1 Mbit/s, 20 ms each way), and the
# emulator frozen for 8 s, so that every packet is lost for a while and nothing is closed.
# The app side notices the silence, redials into the void until the link moves again, and
# the session resumes: the programs live, typed text arrives once, and the screen is
# byte-identical to the same programs run directly. Needs root; skips otherwise.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
LINK=${TINCAN_LINK:-$XL_ROOT/build/tincan-link}
if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ] || ! command -v nsenter >/dev/null; then
    echo "SKIP: packet mode needs root, /dev/net/tun and nsenter"; summary; exit 0
fi
xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start"; summary; exit 1; }
"$LINK" packet --info-file "$XL_TMP/info" --rate 1M --delay 20ms 2>"$XL_TMP/emu.log" &
emu=$!; xl_track "$emu"
xl_wait_for 10 test -s "$XL_TMP/info" || { fail "That packet mode starts"; summary; exit 1; }
ns_a=$(sed -n 's/^ns_a=//p' "$XL_TMP/info"); ns_b=$(sed -n 's/^ns_b=//p' "$XL_TMP/info")
printf 'core-outage-packet-secret-0123456789\n' >"$XL_TMP/secret"
XAUTHORITY=$b_auth nsenter --net="$ns_b" "$TINCAN" display --link-listen 10.77.0.2:7100 --secret-file "$XL_TMP/secret" \
    --display "$b_display" --stats 2>"$XL_TMP/display.log" &
disp=$!; xl_track "$disp"
xl_wait_for 20 grep -q 'waiting for the app side' "$XL_TMP/display.log"
nsenter --net="$ns_a" "$TINCAN" app --link-connect 10.77.0.2:7100 --secret-file "$XL_TMP/secret" \
    --xauthority "$XL_TMP/app.xauth" --stats >"$XL_TMP/app.out" 2>"$XL_TMP/app.log" &
app=$!; xl_track "$app"
xl_wait_for 30 grep -q '^DISPLAY=' "$XL_TMP/app.out" || { fail "That the pair starts across packet mode"; cat "$XL_TMP"/*.log; summary; exit 1; }
p_display=$(sed -n 's/^DISPLAY=//p' "$XL_TMP/app.out") p_auth=$XL_TMP/app.xauth

for t in a p; do
    s=$([ "$t" = a ] && echo a || echo b)
    xl_bg_connected "$t" "$s" xlogo -geometry 120x100+700+450 && xl_wait_window "$s" '^xlogo$'
    xl_bg_connected "$t" "$s" xterm -geometry 40x10+680+20 -title typed -e cat && xl_wait_window "$s" '^typed$'
done
type_on() { xl_on "$1" xdotool mousemove 760 80 sleep 0.1 type --delay 20 "$2"; }
for s in a b; do type_on "$s" "before "; done
sleep 1
kill -STOP "$emu" # every packet lost from now on; no connection is closed
type_on b "during "; type_on a "during "
silent() { grep -q 'link lost (silent' "$XL_TMP/app.log"; }
check "That the app side noticed the silent link within 10 s" xl_wait_for 10 silent
sleep 4
kill -CONT "$emu"
back() { grep -q 'link back' "$XL_TMP/app.log"; }
check "That the session came back once packets moved again" xl_wait_for 30 back
grep -hE 'link (lost|back)|refused' "$XL_TMP/app.log" "$XL_TMP/display.log" | sed 's/^/    /'
type_on b "after"; type_on a "after"
check "That the programs through tincan are alive" xl_has_window b '^typed$'
xl_dump_stable a "$XL_TMP/a.xwd" 30
if xl_dump_until_same b "$XL_TMP/a.xwd" "$XL_TMP/b.xwd" 30; then
    pass "That the screen after the outage is byte-identical to the direct one"
else
    fail "That the screen after the outage is byte-identical to the direct one"
    xl_describe_diff "$XL_TMP/a.xwd" "$XL_TMP/b.xwd"
fi
kill -TERM "$app"
check "That the app side exits 0" xl_wait_exit "$app" 15
check "That the display side ends with it" xl_wait_exit "$disp" 15
check "That no sanitizer error or tincan report appeared" xl_sanitizer_clean "$XL_TMP/app.log" "$XL_TMP/display.log"
summary
