#!/usr/bin/env bash
# core_colors.sh -- colour names answered at the app side (PROTOCOL.md 3.2, 3.2.1): the
# display side looks up every name of the built-in colour table on its own connection, and
# the app side then answers LookupColor and AllocNamedColor of any of them, in any case, as
# the real server does; names the server does not know still reach it and get its error.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a || { fail "That an Xvfb starts"; summary; exit 1; }

# Every name of X.Org's database as its file spells it, some in other cases, and names no
# database has (a number past gray100, a number form the server does not parse, a space).
names=$XL_TMP/names
awk '!/^!/ && NF >= 4 { n = $4; for (i = 5; i <= NF; i++) n = n " " $i; print n }' /usr/share/X11/rgb.txt >"$names"
awk 'NR % 7 == 0 { print toupper($0) } NR % 11 == 0 { print tolower($0) }' "$names" >>"$names"
printf '%s\n' grey101 NoSuchColour '#ff0000' 'navy ' ' navy' 'light  blue' >>"$names"
head -n 40 "$names" >"$names.alloc"; tail -n 8 "$names" >>"$names.alloc"
xl_on a "$XL_BIN/xcolor" -f "$names" >"$XL_TMP/direct.out" 2>&1
xl_on a "$XL_BIN/xcolor" -a -f "$names.alloc" >"$XL_TMP/direct-a.out" 2>&1
unknown=$(grep -c '=error ' "$XL_TMP/direct.out")
check "That the server knows the $(wc -l <"$names") names but $unknown" \
    test "$unknown" -ge 6 -a "$(grep -c '=exact ' "$XL_TMP/direct.out")" -ge 800
# Debian's file has a name or two the server's built-in database lacks (DebianRed).
lacks=$(head -n "$(grep -vc '^!' /usr/share/X11/rgb.txt)" "$XL_TMP/direct.out" | grep -c '=error ')

xl_start_pair p a --log-level debug --no-cache || { fail "That a tincan pair starts"; summary; exit 1; }
xl_on p "$XL_BIN/xatom" WM_NAME >/dev/null # the first client waits for the display side's facts
check "That the display side confirmed every entry of the colour table the server knows ($lacks lacking)" \
    grep -q "colour names ($lacks of the table not confirmed) (TrueColor checked)" "$p_disp_log"
# waited COMMAND...: runs a client through the pair; prints how many of its answers the app
# side waited for on the link (round trips ended by a reply or an error).
waited() {
    local before; before=$(grep -c 'round trip ended by the' "$p_app_log")
    xl_on p "$@" >"$XL_TMP/waited.out" 2>&1
    echo $(($(grep -c 'round trip ended by the' "$p_app_log") - before))
}
w=$(waited "$XL_BIN/xcolor" -f "$names"); cp "$XL_TMP/waited.out" "$XL_TMP/p.out"
check "That LookupColor of every name gives through tincan what it gives directly" cmp -s "$XL_TMP/direct.out" "$XL_TMP/p.out"
check "That only the names the server does not know waited on the link ($w of $(wc -l <"$names"), $unknown unknown)" \
    test "$w" -eq "$unknown"
w=$(waited "$XL_BIN/xcolor" -a -f "$names.alloc"); cp "$XL_TMP/waited.out" "$XL_TMP/p-a.out"
check "That AllocNamedColor gives the same pixels and values through tincan" cmp -s "$XL_TMP/direct-a.out" "$XL_TMP/p-a.out"
check "That AllocNamedColor waited only for the unknown names ($w)" test "$w" -eq "$(grep -c '=error ' "$XL_TMP/direct-a.out")"
xl_stop_pair p
check "That both halves exit 0" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That no answer given at the app side differed from the server's" \
    bash -c "! grep -q 'differs from the answer given at the app side' '$p_disp_log'"
check "That neither half reported a sanitizer error or an inconsistency" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
