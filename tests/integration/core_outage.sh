#!/usr/bin/env bash
# core_outage.sh -- the session survives the link. Programs run through a pair joined by a
# tincan-link stream relay (2 Mbit/s, 20 ms), and the same programs directly on a twin Xvfb:
# text typed into an xterm before, during and after each outage, an xlogo, a client making
# GetImage round trips throughout, and xdraw's 4 MiB image crossing the first drop. Outages:
# the relay killed and restarted (the link closes), then the relay stopped (SIGSTOP: the
# link falls silent without closing; the old link comes back after a new one took over).
# Afterwards every program is alive and the screen is byte-identical to the direct one.
# Then a link lost for longer than --grace ends the session cleanly, with its reason.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
OUTAGE_S=${OUTAGE_S:-2}

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start"; summary; exit 1; }

xl_start_relayed_pair b "" --stats --grace 900 || { fail "That the pair starts"; cat "$XL_TMP"/*.log; summary; exit 1; }

# The same programs on both, in the same order: a directly, p through tincan (shown on b).
declare -A pids
for t in a p; do
    s=$([ "$t" = a ] && echo a || echo b)
    xl_bg_connected "$t" "$s" xlogo -geometry 120x100+700+450 && xl_wait_window "$s" '^xlogo$'; pids[$t.logo]=$XL_LAST
    xl_bg_connected "$t" "$s" xterm -geometry 40x10+680+20 -title typed -e cat && xl_wait_window "$s" '^typed$'
    pids[$t.term]=$XL_LAST
done
# An xclock ticking through the outages: off the screen's edge, so that the screens stay
# comparable (its time is not the direct run's).
xl_bg p xclock -update 1 -geometry 100x100+1100+100; pids[p.clock]=$XL_LAST
# Keys go to the real displays (XTEST), into the window under the pointer.
type_on() { xl_on "$1" xdotool mousemove 760 80 sleep 0.1 type --delay 20 "$2"; }
for s in a b; do type_on "$s" "before "; done

rm -f "$XL_TMP"/{a,p}.draw.out
xl_bg a "$XL_BIN/xdraw" >"$XL_TMP/a.draw.out"; pids[a.draw]=$XL_LAST
xl_bg p "$XL_BIN/xdraw" >"$XL_TMP/p.draw.out"; pids[p.draw]=$XL_LAST
rm -f "$XL_TMP/rt.out"
xl_bg p "$XL_BIN/xrtloop" 150 >"$XL_TMP/rt.out"; rt=$XL_LAST
sleep 0.5 # xdraw's 4 MiB image is crossing now

# Outage 1: the relay dies; the link closes.
kill -KILL "$XL_RELAY"; wait "$XL_RELAY" 2>/dev/null
xl_wait_for 10 grep -q 'link lost' "$XL_TMP/app.log"
check "That the app side noticed the closed link and kept its clients" grep -q 'link lost.*clients wait' "$XL_TMP/app.log"
type_on b "during "; type_on a "during "
notice_shown() { xl_on b xwininfo -root -tree 2>/dev/null | grep -q ' 360x20+8+'; }
check "That the display side shows the outage on the screen" xl_wait_for 5 notice_shown
sleep "$OUTAGE_S"
check "That both halves are alive during the outage" kill -0 "$app" "$disp"
xl_relay_start
check "That the link came back after the relay restarted" xl_wait_for 20 grep -q 'link back' "$XL_TMP/app.log"
type_on b "after "; type_on a "after "
no_notice() { ! notice_shown; }
check "That the notice is gone once the link is back" xl_wait_for 5 no_notice
check "That xdraw's drawing, its 4 MiB image crossing the drop, finished through tincan" \
    xl_wait_for 60 grep -q drawn "$XL_TMP/p.draw.out"
xl_wait_for 60 grep -q drawn "$XL_TMP/a.draw.out"

# Outage 2: the relay freezes: nothing closes, nothing arrives (out of radio range).
kill -STOP "$XL_RELAY"
lost_twice() { [ "$(grep -c 'link lost' "$XL_TMP/app.log")" -ge 2 ]; }
back_twice() { [ "$(grep -c 'link back' "$XL_TMP/app.log")" -ge 2 ]; }
check "That a silent link was noticed within 10 s" xl_wait_for 10 lost_twice
grep 'link lost' "$XL_TMP/app.log" | tail -1 | sed 's/^/    /'
type_on b "silent "; type_on a "silent "
old_relay=$XL_RELAY
xl_relay_start # a new route; the old one thaws after the new link took over
check "That the link came back on the new relay" xl_wait_for 30 back_twice
kill -CONT "$old_relay"
type_on b "end"; type_on a "end"

check "That the round-trip client made all 150 round trips across both outages" xl_wait_for 60 grep -q 'done 150' "$XL_TMP/rt.out"
for k in logo term draw clock; do
    check "That the $k program through tincan is alive after the outages" kill -0 "${pids[p.$k]}"
done
sleep 1
xl_dump_stable a "$XL_TMP/a.xwd" 30
if xl_dump_until_same b "$XL_TMP/a.xwd" "$XL_TMP/b.xwd" 30; then
    pass "That the screen after two outages is byte-identical to the direct one (nothing lost, nothing doubled)"
else
    fail "That the screen after two outages is byte-identical to the direct one (nothing lost, nothing doubled)"
    xl_describe_diff "$XL_TMP/a.xwd" "$XL_TMP/b.xwd"
fi
kill -USR1 "$app" "$disp"; sleep 0.5
check "That the app side's statistics count two outages" grep -q 'link outages: 2,' "$XL_TMP/app.log"
# What each side held (its buffers and the stream kept to resend) stayed under --max-memory.
within_bound() { # the buffers at most, plus the compression's reserve, under the bound
    sed -n 's/^memory: buffers held \([0-9.]*\) MiB.*compression \([0-9.]*\) MiB.*bound \([0-9]*\) MiB.*/\1 \2 \3/p' "$1" |
        tail -1 | awk '{ exit !(NF == 3 && $1 > 0 && $1 + $2 <= $3) }'
}
check "That the app side's buffers stayed within its memory bound" within_bound "$XL_TMP/app.log"
check "That the display side's buffers stayed within its memory bound" within_bound "$XL_TMP/display.log"
grep -h '^memory: buffers held' "$XL_TMP/app.log" "$XL_TMP/display.log" | sed 's/^/    /'

# A link lost for longer than the grace period: the session ends cleanly, with its reason.
for k in logo term draw clock; do kill "${pids[a.$k]}" "${pids[p.$k]}" 2>/dev/null; done
kill -KILL "$XL_RELAY"; kill -KILL "$old_relay" 2>/dev/null
kill -TERM "$app"
check "That the app side ends when told to during an outage" xl_wait_exit "$app" 15
check "That no sanitizer error or tincan report appeared" xl_sanitizer_clean "$XL_TMP/app.log" "$XL_TMP/display.log"
kill -TERM "$disp"
xl_wait_exit "$disp" 15

# Grace: 2 s, then the session ends on both sides, each client disconnected.
xl_start_relayed_pair b 2 --grace 2 || fail "That the second pair starts"
xl_bg p xlogo; logo=$XL_LAST
xl_wait_window b '^xlogo$'
kill -KILL "$XL_RELAY"
check "That the app side ends after the grace period" xl_wait_exit "$app" 20
check "That the display side ends after the grace period" xl_wait_exit "$disp" 20
check "That the app side says why it ended" grep -q 'longer than the grace period (2 s)' "$XL_TMP/app2.log"
check "That the client was disconnected" xl_wait_exit "$logo" 10
no_logo() { ! xl_has_window b '^xlogo$'; }
check "That the program's window left the real display" xl_wait_for 10 no_logo
summary
