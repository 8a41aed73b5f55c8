#!/usr/bin/env bash
# core_fontset.sh -- a font set in one round trip (src/proxy/fontset.c): XCreateFontSet in
# a UTF-8 locale asks ListFonts for each of 16 charsets, then ListFontsWithInfo for each
# name found, one at a time. Once a client asks a second charset of one base pattern, the
# display side asks the rest itself and the app side answers them: the program prints what
# it prints directly, after at most 2 font round trips instead of 32. A single-charset
# locale (LANG=C) starts nothing.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start"; summary; exit 1; }

LC_ALL=C.UTF-8 xl_on a "$XL_BIN/xfontset" >"$XL_TMP/direct.out" 2>&1
LC_ALL=C xl_on a "$XL_BIN/xfontset" >"$XL_TMP/direct-c.out" 2>&1
check "That the font set covers many charsets when made directly in C.UTF-8" \
    test "$(grep -c '^font ' "$XL_TMP/direct.out")" -ge 10

# font_list_waits LOG: the app side's round trips that ended with a font list's answer.
font_list_waits() { grep -cE 'round trip ended by the reply to request [0-9]+ \((ListFonts|ListFontsWithInfo)\)' "$1"; }

xl_start_pair p b --log-level debug --cache-dir "$XL_TMP/cache-p" || { fail "That a tincan pair starts"; summary; exit 1; }
LC_ALL=C.UTF-8 xl_on p "$XL_BIN/xfontset" >"$XL_TMP/p.out" 2>&1
check "That the font set made through tincan is the one made directly" cmp -s "$XL_TMP/direct.out" "$XL_TMP/p.out"
waits=$(font_list_waits "$p_app_log")
check "That the client waited on the link for at most 2 font list answers ($waits)" test "$waits" -le 2
told=$(sed -n 's/.*font set: told the app side \([0-9]*\) answers.*/\1/p' "$p_disp_log" | tail -1)
check "That the display side told the app side the answers ahead (${told:-none})" test "${told:-0}" -ge 20
facts=$(awk '/font set: told the app side/ { on = 1; next } on && /link write/ { print; exit }' "$p_disp_log" | grep -o 'FACT:0:' | wc -l)
check "That the answers crossed together, in one link write ($facts facts)" test "$facts" -ge "${told:-1}"
LC_ALL=C xl_on p "$XL_BIN/xfontset" >"$XL_TMP/p-c.out" 2>&1
check "That the same pattern in LANG=C gives what it gives directly" cmp -s "$XL_TMP/direct-c.out" "$XL_TMP/p-c.out"
xl_stop_pair p
asked=$(awk '$1 == "request" && ($2 == "ListFonts" || $2 == "ListFontsWithInfo") { n += $3 } END { print n + 0 }' "$p_app_log")
check "That the client asked at least 30 font list questions, answered at the app side but those ($asked)" test "$asked" -ge 30
check "That the pair's logs are clean" xl_sanitizer_clean "$p_app_log" "$p_disp_log"

# LANG=C asks one charset: nothing is asked ahead.
xl_start_pair c b --log-level debug --cache-dir "$XL_TMP/cache-c" || { fail "That a tincan pair starts"; summary; exit 1; }
LC_ALL=C xl_on c "$XL_BIN/xfontset" >"$XL_TMP/c.out" 2>&1
check "That LANG=C through tincan gives what it gives directly" cmp -s "$XL_TMP/direct-c.out" "$XL_TMP/c.out"
check "That in LANG=C nothing is asked ahead (the display side's log read: $(wc -l <"$c_disp_log" 2>/dev/null || echo none) lines)" \
    bash -c "grep -q 'link up' '$c_disp_log' && ! grep -q 'font set:' '$c_disp_log'"
xl_stop_pair c

summary
