#!/usr/bin/env bash
# core_learnt.sh -- learn once (src/proxy/learnt.c): font questions a client asked in one
# session (QueryFont of fonts opened by name, ListFonts, ListFontsWithInfo) are asked again
# by the display side at the next session's start, so the app side answers them locally; the
# output stays that of the program run directly. A damaged file is ignored with a warning;
# --no-cache neither reads nor writes one.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_start_xvfb b || { fail "That an Xvfb starts"; summary; exit 1; }

# The program: QueryFont of every 13-pixel fixed font (xlsfonts -ll opens each), a
# ListFonts, and ListFontsWithInfo (xlsfonts -l).
PROG="xlsfonts -ll -fn '-misc-fixed-medium-r-normal--13-*'; xlsfonts -l -fn '*-fixed-*-20-*'; xlsfonts -fn '*cursor*'"
xl_on b sh -c "$PROG" >"$XL_TMP/direct.out" 2>&1
check "That the program prints fonts when run directly" test "$(grep -c 'fixed' "$XL_TMP/direct.out")" -gt 20

# session NAME OPTS: one session of the program through a tincan pair (both sides given OPTS).
session() {
    local name=$1 opts=$2 link=unix:$XL_TMP/$1.link pid_d pid_a
    rm -f "$XL_TMP/$name".{display.log,app.log,out}
    # shellcheck disable=SC2086
    XAUTHORITY=$b_auth "$TINCAN" display --link-listen "$link" --display "$b_display" --stats --log-level debug $opts \
        2>"$XL_TMP/$name.display.log" &
    pid_d=$!; xl_track "$pid_d"
    xl_wait_for 20 grep -qs 'waiting for the app side' "$XL_TMP/$name.display.log"
    # shellcheck disable=SC2086
    "$TINCAN" app --link-connect "$link" --xauthority "$XL_TMP/$name.xauth" --stats --log-level debug $opts \
        -- sh -c "$PROG" >"$XL_TMP/$name.out" 2>"$XL_TMP/$name.app.log" &
    pid_a=$!; xl_track "$pid_a"
    xl_wait_exit "$pid_a" 120 || kill -TERM "$pid_a"
    xl_wait_exit "$pid_d" 20 || kill -TERM "$pid_d"
    check "That the $name session prints what the program prints directly" cmp -s "$XL_TMP/direct.out" "$XL_TMP/$name.out"
    check "That the $name session's logs are clean" xl_sanitizer_clean "$XL_TMP/$name.app.log" "$XL_TMP/$name.display.log"
}

# font_waits NAME: the app side's round trips that ended with a font answer.
font_waits() { grep -cE 'round trip ended by the reply to request [0-9]+ \((QueryFont|ListFonts|ListFontsWithInfo)\)' \
    "$XL_TMP/$1.app.log"; }

C=$XL_TMP/cache
session first "--cache-dir $C"
first=$(font_waits first)
check "That the first session waits for the server's font answers ($first round trips)" test "$first" -ge 10
check "That it leaves one file of questions, mode 0600" test "$(find "$C" -name 'learnt-*.tcl' -perm 600 | wc -l)" = 1

session second "--cache-dir $C"
second=$(font_waits second)
check "That the display side asks the remembered questions again and tells the answers" \
    grep -qE 'learnt questions: told the app side [1-9][0-9]* answers to questions of earlier sessions, dropped 0' \
    "$XL_TMP/second.display.log"
check "That the second session answers the font questions locally (waits: $second, first session: $first)" \
    test "$second" -eq 0
a1=$(sed -n 's/.* \([0-9]*\) requests answered here.*/\1/p' "$XL_TMP/first.app.log" | tail -1)
a2=$(sed -n 's/.* \([0-9]*\) requests answered here.*/\1/p' "$XL_TMP/second.app.log" | tail -1)
check "That the app side's stats say more requests were answered there ($a2 vs $a1)" test "${a2:-0}" -gt "${a1:-0}"

# A damaged file: ignored with a warning, the session cold but right, a good file written.
for f in "$C"/learnt-*.tcl; do printf 'X' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 3)) conv=notrunc 2>/dev/null; done
session damaged "--cache-dir $C"
check "That a damaged file of questions is ignored with a warning" \
    grep -q 'learnt questions: ignoring .*corrupt, truncated, or another server' "$XL_TMP/damaged.display.log"
check "That the session after it waits for the font answers again" test "$(font_waits damaged)" -ge 10
session repaired "--cache-dir $C"
check "That the next session answers them locally again" test "$(font_waits repaired)" -eq 0

XDG_CACHE_HOME=$XL_TMP/xdg session nocache "--no-cache"
check "That --no-cache neither reads nor writes questions" \
    bash -c "test ! -e '$XL_TMP/xdg/tincan' && ! grep -q 'learnt questions' '$XL_TMP/nocache.display.log'"
check "That without the cache the font answers cross the link" test "$(font_waits nocache)" -ge 10

summary
