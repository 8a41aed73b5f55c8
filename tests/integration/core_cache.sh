#!/usr/bin/env bash
# core_cache.sh -- the compression cache (warm start): a second session of the same program
# sends far fewer link bytes than the first and draws the same screen as the program run
# directly; a corrupted cache file is ignored with a log line; two sides whose caches differ
# start cold and still work; the pixel bodies of a session are kept alike at both ends and
# sent as their old codes in the next.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

TEXT=/usr/share/common-licenses/GPL-3
[ -r "$TEXT" ] || TEXT=$XL_ROOT/docs/PROTOCOL.md
STOP=$XL_TMP/stop
# The program: xterm prints a file, then waits for $STOP (so the screen can be compared).
PROG=(xterm +j -geometry 80x24+0+0 -e sh -c "cat '$TEXT'; while [ ! -e '$STOP' ]; do sleep 0.1; done")

xl_start_xvfb b || { fail "That an Xvfb starts"; summary; exit 1; }

# The reference: the program directly on the Xvfb.
rm -f "$STOP"
xl_bg b "${PROG[@]}"
direct=$XL_TMP/direct.xwd
xl_dump_stable b "$direct" 30 || fail "That xterm's screen settles when run directly"
touch "$STOP"; xl_wait_exit "$XL_LAST" 10

# session NAME APP_CACHE_OPTS DISP_CACHE_OPTS: one session of the program through a tincan
# pair, cache options per side (a word list); compares the screen with the direct run and
# leaves the app side's link byte count (in + out) in BYTES.
session() {
    local name=$1 app_opts=$2 disp_opts=$3 link=unix:$XL_TMP/$1.link pid_d pid_a
    rm -f "$STOP" "$XL_TMP/$name".{display.log,app.log}
    # shellcheck disable=SC2086
    XAUTHORITY=$b_auth "$TINCAN" display --link-listen "$link" --display "$b_display" --stats $disp_opts \
        2>"$XL_TMP/$name.display.log" &
    pid_d=$!; xl_track "$pid_d"
    xl_wait_for 20 grep -qs 'waiting for the app side' "$XL_TMP/$name.display.log"
    # shellcheck disable=SC2086
    "$TINCAN" app --link-connect "$link" --xauthority "$XL_TMP/$name.xauth" --stats $app_opts -- "${PROG[@]}" \
        2>"$XL_TMP/$name.app.log" &
    pid_a=$!; xl_track "$pid_a"
    if xl_dump_until_same b "$direct" "$XL_TMP/$name.xwd" 30; then
        pass "That the $name session draws the same screen as the program run directly"
    else
        fail "That the $name session draws the same screen as the program run directly"
        xl_describe_diff "$direct" "$XL_TMP/$name.xwd"
    fi
    touch "$STOP"
    xl_wait_exit "$pid_a" 20 || kill -TERM "$pid_a"
    xl_wait_exit "$pid_d" 20 || kill -TERM "$pid_d"
    BYTES=$(sed -n 's/.*link: \([0-9]*\) bytes in .*, \([0-9]*\) bytes out .*/\1 \2/p' "$XL_TMP/$name.app.log" |
        awk '{ print $1 + $2 }' | tail -1)
    check "That the $name session reports its link bytes ($BYTES)" test -n "$BYTES"
}

C=$XL_TMP/cache
session cold "--cache-dir $C" "--cache-dir $C"
cold=$BYTES
check "That the first session starts cold" grep -q 'zstd level [0-9]*, cold' "$XL_TMP/cold.app.log"
check "That it leaves one dictionary per direction, mode 0600, in a 0700 directory" \
    test "$(find "$C" -name 'up-*.tcd' -perm 600 | wc -l):$(find "$C" -name 'down-*.tcd' -perm 600 | wc -l):$(stat -c %a "$C")" = 1:1:700

session warm "--cache-dir $C" "--cache-dir $C"
warm=$BYTES
check "That the second session starts warm in both directions" grep -q 'warm: up [0-9]* KiB, down' "$XL_TMP/warm.app.log"
check "That the warm session sends at most 75% of the cold session's bytes ($warm vs $cold)" \
    test "$((warm * 100))" -le "$((cold * 75))"

# Corrupt every cache file (one byte near the end) and write a foreign one: all ignored.
for f in "$C"/*.tcd; do printf 'X' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 5)) conv=notrunc 2>/dev/null; done
echo "not a tincan cache file" >"$C/up-foreign.tcd"
session corrupt "--cache-dir $C" "--cache-dir $C"
check "That corrupt and foreign cache files are ignored with a log line" \
    grep -q 'compression cache: ignoring .*corrupt, truncated or not a tincan cache file' "$XL_TMP/corrupt.app.log"
check "That the session after the corruption starts cold" grep -q 'zstd level [0-9]*, cold' "$XL_TMP/corrupt.app.log"

# The display side with a cache of its own (empty): no common dictionary, cold, working.
session different "--cache-dir $C" "--cache-dir $XL_TMP/other-cache"
check "That two sides with different caches start cold" grep -q 'zstd level [0-9]*, cold' "$XL_TMP/different.display.log"

XDG_CACHE_HOME=$XL_TMP/xdg session nocache "--no-cache" "--no-cache"
check "That --no-cache neither reads nor writes the default cache" \
    bash -c "grep -q 'zstd level [0-9]*, cold' '$XL_TMP/nocache.app.log' && test ! -e '$XL_TMP/xdg/tincan'"

# Pixel bodies: an xterm drawing with an Xft font uploads its glyphs (RENDER AddGlyphs).
# Both sides keep the same set, and a second session sends those glyphs as their codes of
# the first without running the pixel coder on them, at no more link bytes than a session
# primed with the same dictionaries that codes them again.
PROG=(xterm +j -fa 'DejaVu Sans Mono' -fs 10 -geometry 80x24+0+0 -e sh -c "cat '$TEXT'; while [ ! -e '$STOP' ]; do sleep 0.1; done")
rm -f "$STOP"
xl_bg b "${PROG[@]}"
xl_dump_stable b "$direct" 30 || fail "That the Xft xterm's screen settles when run directly"
touch "$STOP"; xl_wait_exit "$XL_LAST" 10
P=$XL_TMP/pix
session glyphs-cold "--cache-dir $P/app" "--cache-dir $P/disp"
pix_a=$(cd "$P/app" && ls pix-*.tcd 2>/dev/null) pix_d=$(cd "$P/disp" && ls pix-*.tcd 2>/dev/null)
check "That both sides saved the same pixel bodies ($pix_a)" test -n "$pix_a" -a "$pix_a" = "$pix_d"
cp -a "$P" "$XL_TMP/pix-without"
rm -f "$XL_TMP/pix-without"/*/pix-*.tcd
session glyphs-warm "--cache-dir $P/app" "--cache-dir $P/disp"
with=$BYTES
check "That the second session loaded them at both ends" \
    bash -c "grep -q 'warm: .*, [1-9][0-9]* pixel bodies' '$XL_TMP/glyphs-warm.app.log' &&
             grep -q 'warm: .*, [1-9][0-9]* pixel bodies' '$XL_TMP/glyphs-warm.display.log'"
sent=$(sed -n 's/.*compression cache: \([0-9]*\) pixel bodies sent again.*/\1/p' "$XL_TMP/glyphs-warm.app.log")
got=$(sed -n 's/.*compression cache: \([0-9]*\) pixel bodies sent again.*/\1/p' "$XL_TMP/glyphs-warm.display.log")
check "That it sent glyphs as their old codes, and the display side took as many ($sent, $got)" \
    test "${sent:-0}" -gt 20 -a "${sent:-0}" = "${got:-0}"
session glyphs-without "--cache-dir $XL_TMP/pix-without/app" "--cache-dir $XL_TMP/pix-without/disp"
check "That the same dictionaries without the pixel bodies start warm too" \
    bash -c "grep 'warm: up' '$XL_TMP/glyphs-without.app.log' | grep -vq 'pixel bodies'"
check "That the old codes cost no more link bytes than coding again ($with with the bodies, $BYTES without)" \
    test "$((with * 100))" -le "$((BYTES * 115))"

check "That no sanitizer or tincan report appeared" xl_sanitizer_clean "$XL_TMP"/*.log
summary
