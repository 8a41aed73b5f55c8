#!/usr/bin/env bash
# core_outage_storm.sh -- outages in a row at random points of a busy session: the relay
# between the halves killed every 0.05 to 1 s and restarted 0 to 0.3 s later, so that links
# die in the middle of frames, of handshakes and of resumes, while a client floods PutImage,
# another makes round trips, xdraw draws its 4 MiB image and text is typed into an xterm.
# Afterwards every program is alive and the screen is byte-identical to the same programs
# run directly. OUTAGES (default 12 here; bench/outage runs 100) sets how many.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
OUTAGES=${OUTAGES:-12}
RANDOM=${STORM_SEED:-$$}
echo "seed ${STORM_SEED:-$$}"
[ -n "${XL_KEEP:-}" ] && echo "logs in $XL_TMP"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start"; summary; exit 1; }
XL_RELAY_OPTS="--rate 4M --delay 5ms"
xl_start_relayed_pair b "" --stats --grace 120 ${STORM_LOG:-} ||
    { fail "That the pair starts"; cat "$XL_TMP"/*.log; summary; exit 1; }

declare -A pids
for t in a p; do
    s=$([ "$t" = a ] && echo a || echo b)
    xl_bg_connected "$t" "$s" xterm -geometry 60x12+680+20 -title typed -e cat && xl_wait_window "$s" '^typed$'
    pids[$t.term]=$XL_LAST
done
type_on() { xl_on "$1" xdotool mousemove 760 80 sleep 0.05 type --delay 10 "$2"; }
xl_bg p "$XL_BIN/xflood" 128 128 >/dev/null; flood=$XL_LAST
rm -f "$XL_TMP/rt.out"
xl_bg p "$XL_BIN/xrtloop" 1000000 20 >"$XL_TMP/rt.out"; rt=$XL_LAST
rm -f "$XL_TMP"/{a,p}.draw.out
draw_at=$((RANDOM % OUTAGES))
for i in $(seq 0 $((OUTAGES - 1))); do
    if [ "$i" = "$draw_at" ]; then
        draw_t0=$SECONDS
        xl_bg a "$XL_BIN/xdraw" >"$XL_TMP/a.draw.out"; pids[a.draw]=$XL_LAST
        xl_bg p "$XL_BIN/xdraw" >"$XL_TMP/p.draw.out"; pids[p.draw]=$XL_LAST
    fi
    word="w$i "
    type_on b "$word"; type_on a "$word"
    sleep "$(printf '0.%02d' $((5 + RANDOM % 95)))"
    kill -KILL "$XL_RELAY"; wait "$XL_RELAY" 2>/dev/null
    sleep "$(printf '0.%02d' $((RANDOM % 30)))"
    xl_relay_start
done
back() { [ "$(grep -c 'link back' "$XL_TMP/app.log")" -ge 1 ] && session_up; }
session_up() { xl_on p timeout 20 xdpyinfo -queryExtensions >/dev/null 2>&1; }
check "That the session is up after $OUTAGES outages" xl_wait_for 60 session_up
echo "    app side: $(grep -c 'link lost' "$XL_TMP/app.log") links lost, $(grep -c 'link back' "$XL_TMP/app.log") resumed"
if [ "$(grep -c 'link lost' "$XL_TMP/app.log")" != "$(grep -c 'link back' "$XL_TMP/app.log")" ]; then
    # Not resumed: the halves' and the relay's last words about links, for whoever reads this.
    for f in app.log display.log relay.log; do
        echo "    --- the last link lines of $f"
        grep -E 'link|refus|handshake|resum' "$XL_TMP/$f" | tail -n 12 | sed 's/^/      /'
    done
fi
check "That the flooding client lived through every outage" kill -0 "$flood"
# Stopped now: the outages are over, and its PutImages, each coded as WebP, take most of the
# (sanitized) app side's CPU. With it running, xdraw's last 1.2 MB image crawled behind it,
# with or without outages: without one relay kill (STORM_SEED=60376), xdraw through tincan
# did not finish in 90 s once, in 28 and 40 s in two other runs (7 s directly).
kill "$flood" 2>/dev/null
type_on b "end"; type_on a "end"
check "That xdraw's drawing finished through tincan" xl_wait_for 90 grep -q drawn "$XL_TMP/p.draw.out"
echo "    xdraw: $(grep -q drawn "$XL_TMP/p.draw.out" && echo "drawn through tincan within $((SECONDS - draw_t0)) s of its start" || echo "not drawn") (outages from outage $draw_at of $OUTAGES on)"
[ -n "${STORM_KEEP:-}" ] && { echo "kept: $XL_TMP"; trap - EXIT; sleep 100000; }
xl_wait_for 60 grep -q drawn "$XL_TMP/a.draw.out"
check "That the round-trip client is alive and was never given a wrong answer" kill -0 "$rt"
kill "$rt"
for k in term draw; do check "That the $k program is alive" kill -0 "${pids[p.$k]}"; done
xl_dump_stable a "$XL_TMP/a.xwd" 30
if xl_dump_until_same b "$XL_TMP/a.xwd" "$XL_TMP/b.xwd" 60; then
    pass "That the screen after $OUTAGES outages is byte-identical to the direct one"
else
    fail "That the screen after $OUTAGES outages is byte-identical to the direct one"
    xl_describe_diff "$XL_TMP/a.xwd" "$XL_TMP/b.xwd"
fi
check "That no half ended or reported an error" bash -c "kill -0 $app $disp && ! grep -qE 'error:|corrupt' '$XL_TMP/app.log' '$XL_TMP/display.log'"
grep -hE 'error:|corrupt' "$XL_TMP/app.log" "$XL_TMP/display.log" | head -5 | sed 's/^/    /'
# xdotool's typing changes the keyboard mapping: the server tells every client, the display
# side's spare connection too. That is no reason to drop the spare: a client whose OPEN
# named it while it was withdrawn was closed (xrtloop, 3 of 5 runs under load).
check "That a keyboard mapping change did not cost the spare X connection" \
    bash -c "! grep -q 'spare X connection .* lost: unexpected bytes' '$XL_TMP/display.log'"
for k in term draw; do kill "${pids[a.$k]}" "${pids[p.$k]}" 2>/dev/null; done
kill -TERM "$app"
check "That the app side exits 0" bash -c "xl_wait() { for i in \$(seq 1 150); do kill -0 $app 2>/dev/null || return 0; sleep 0.1; done; return 1; }; xl_wait"
check "That the display side ends with it" xl_wait_exit "$disp" 20
check "That no sanitizer error or tincan report appeared" xl_sanitizer_clean "$XL_TMP/app.log" "$XL_TMP/display.log"
summary
