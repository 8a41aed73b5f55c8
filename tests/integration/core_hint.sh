#!/usr/bin/env bash
# core_hint.sh -- hints of a local client (src/proxy/hint.c): the app side reads a new
# client's locale and its program's app-defaults from /proc and tells the display side
# (FRAME_HINT), which asks the server ahead: the whole font set of a UTF-8 program on its
# first charset, and the fonts the app-defaults name. xcalc in C.UTF-8, in a first session
# (empty cache), then waits on the link at most twice before its window maps (4 without),
# and draws what it draws directly. In LANG=C no font set is asked ahead. The switches
# turn both off.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

command -v xcalc >/dev/null || { echo "SKIP: no xcalc"; exit 0; }
xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb b || { fail "That an Xvfb starts"; summary; exit 1; }

# calc_dump TARGET FILE LOCALE: runs xcalc on TARGET in LOCALE until its window shows on
# Xvfb b and the screen settles, dumps the screen, then ends it.
calc_dump() {
    local target=$1 out=$2 ok=0
    LC_ALL=$3 xl_bg "$target" xcalc
    local pid=$XL_LAST
    xl_wait_window b Calculator 30 && xl_dump_stable b "$out" && ok=1
    kill -TERM "$pid" 2>/dev/null
    xl_wait_exit "$pid" 10 || kill -KILL "$pid"
    xl_wait_for 10 bash -c "! DISPLAY=$b_display XAUTHORITY=$b_auth xdotool search --onlyvisible --name Calculator >/dev/null 2>&1"
    [ "$ok" = 1 ]
}

# same_pixels A B: two xwd dumps show the same pixels (xwd leaves the padding of its colour
# entries as its memory held it, so whole files may differ there).
same_pixels() {
    python3 -c '
import struct, sys
def pixels(path):
    b = open(path, "rb").read()
    header, ncolors = struct.unpack(">I", b[:4])[0], struct.unpack(">I", b[76:80])[0]
    return b[:header] + b[header + 12 * ncolors:] if len(b) > 100 else None
a, b = pixels(sys.argv[1]), pixels(sys.argv[2])
sys.exit(0 if a is not None and a == b else 1)' "$1" "$2"
}

# waits LOG CHANNEL [KINDS]: the app side's round trips of one channel (of those requests).
waits() { grep -cE "channel $2: round trip ended by the reply to request [0-9]+ \\(${3:-[A-Za-z]+}\\)" "$1"; }
# show_waits LOG CHANNEL: which they were (for a failure's message).
show_waits() { grep -E "channel $2: round trip ended" "$1" | sed 's/^/    /'; }

# Directly first: the reference, and the atoms xcalc makes exist already (as in a session
# beside programs that ran before: creating an atom is the server's, at any locale).
check "That xcalc draws in C.UTF-8 directly" calc_dump b "$XL_TMP/direct.xwd" C.UTF-8
check "That xcalc draws in LANG=C directly" calc_dump b "$XL_TMP/direct-c.xwd" C

xl_start_pair p b --log-level debug --cache-dir "$XL_TMP/cache-p" || { fail "That a tincan pair starts"; summary; exit 1; }
check "That xcalc through tincan in C.UTF-8 draws what it draws directly" calc_dump p "$XL_TMP/p.xwd" C.UTF-8
check "That the dumps are the same" same_pixels "$XL_TMP/direct.xwd" "$XL_TMP/p.xwd"
check "That the app side read a UTF-8 locale and xcalc's 3 fonts" \
    grep -q 'channel 1: hint: a UTF-8 locale, 3 fonts of its app-defaults' "$p_app_log"
n=$(waits "$p_app_log" 1)
check "That xcalc, cold, waited on the link at most twice ($n)" test "$n" -le 2
[ "$n" -le 2 ] || show_waits "$p_app_log" 1
check "That the font set was asked on its first charset" grep -q 'font set: a client asks the charsets' "$p_disp_log"
n=$(waits "$p_app_log" 1 'QueryFont|OpenFont')
check "That at most one of its fonts' answers crossed as a reply ($n)" test "$n" -le 1

# LANG=C in the same session: the fonts are known, no font set is asked. Xt's default font
# (XtDefaultFont: ListFonts of -*-*-*-R-*-*-*-120-*-*-*-*-ISO8859-1, known from the font set,
# then QueryFont of the name found) is one wait.
check "That xcalc through tincan in LANG=C draws what it draws directly" calc_dump p "$XL_TMP/p-c.xwd" C
check "That the LANG=C dumps are the same" same_pixels "$XL_TMP/direct-c.xwd" "$XL_TMP/p-c.xwd"
check "That the app side read another locale" grep -q 'channel 2: hint: another locale' "$p_app_log"
n=$(waits "$p_app_log" 2)
check "That xcalc in LANG=C, with its fonts known, waited at most once ($n)" test "$n" -le 1
[ "$n" -le 1 ] || show_waits "$p_app_log" 2

# A program that makes a font set of another base in C.UTF-8 (no app-defaults of its own):
# one wait at most, where it was two.
FS_BASE='-*-*-*-R-*-*-*-140-*-*-*-*'
LC_ALL=C.UTF-8 xl_on b "$XL_BIN/xfontset" "$FS_BASE" >"$XL_TMP/direct-fs.out" 2>&1
LC_ALL=C.UTF-8 xl_on p "$XL_BIN/xfontset" "$FS_BASE" >"$XL_TMP/p-fs.out" 2>&1
check "That the font set made through tincan is the one made directly" cmp -s "$XL_TMP/direct-fs.out" "$XL_TMP/p-fs.out"
n=$(waits "$p_app_log" 3 'ListFonts|ListFontsWithInfo')
check "That the font set cost one round trip ($n)" test "$n" -eq 1
[ "$n" -eq 1 ] || show_waits "$p_app_log" 3
xl_stop_pair p
check "That the pair's logs are clean" xl_sanitizer_clean "$p_app_log" "$p_disp_log"

# LANG=C first in a session of its own: nothing of a font set is asked or told.
xl_start_pair c b --log-level debug --cache-dir "$XL_TMP/cache-c" || { fail "That a tincan pair starts"; summary; exit 1; }
check "That xcalc in LANG=C, cold, draws what it draws directly" calc_dump c "$XL_TMP/c.xwd" C
check "That those dumps are the same" same_pixels "$XL_TMP/direct-c.xwd" "$XL_TMP/c.xwd"
check "That in LANG=C no font set is asked ahead" bash -c "! grep -q 'font set:.*charsets' '$c_disp_log'"
check "That xcalc's fonts were asked ahead" grep -q "fonts: a client's app-defaults name 3 fonts" "$c_disp_log"
n=$(waits "$c_app_log" 1)
check "That xcalc in LANG=C, cold, waited on the link at most twice ($n)" test "$n" -le 2
[ "$n" -le 2 ] || show_waits "$c_app_log" 1
xl_stop_pair c
check "That the LANG=C pair's logs are clean" xl_sanitizer_clean "$c_app_log" "$c_disp_log"

# The switches: no hint at all, and xcalc waits as it did before them.
XL_APP_OPTS="--no-locale-hint --no-font-hint" xl_start_pair o b --log-level debug --cache-dir "$XL_TMP/cache-o" ||
    { fail "That a tincan pair starts"; summary; exit 1; }
check "That xcalc with the hints off draws what it draws directly" calc_dump o "$XL_TMP/o.xwd" C.UTF-8
check "That those dumps are the same" same_pixels "$XL_TMP/direct.xwd" "$XL_TMP/o.xwd"
check "That no hint was sent" bash -c "! grep -q 'hint:' '$o_app_log'"
n=$(waits "$o_app_log" 1)
check "That xcalc with the hints off waited more than twice ($n)" test "$n" -gt 2
xl_stop_pair o
check "That the pair without hints has clean logs" xl_sanitizer_clean "$o_app_log" "$o_disp_log"

summary
