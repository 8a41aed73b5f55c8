#!/usr/bin/env bash
# core_ownwin.sh -- answers about a client's own windows given at the app side
# (docs/PROTOCOL.md 3.4): GetGeometry, GetWindowAttributes and GetProperty replies are
# byte for byte the server's, a change made by another client is seen, and xterm no
# longer waits on the link for its own windows before it maps.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb a && xl_start_xvfb b && xl_start_pair p b --log-level debug ||
    { fail "That two Xvfbs and a tincan pair start"; summary; exit 1; }

# Replies directly and through tincan: every line (label, reply bytes or error code).
xl_on a "$XL_BIN/xownwin" replies >"$XL_TMP/direct.out" 2>&1
xl_on p "$XL_BIN/xownwin" replies >"$XL_TMP/tincan.out" 2>&1
if grep -q '^done$' "$XL_TMP/direct.out" && diff -u "$XL_TMP/direct.out" "$XL_TMP/tincan.out" >"$XL_TMP/replies.diff"; then
    pass "That replies about a client's own windows are the server's, byte for byte, through tincan ($(wc -l <"$XL_TMP/direct.out") lines)"
else
    fail "That replies about a client's own windows are the server's, byte for byte, through tincan"
    head -n 30 "$XL_TMP/replies.diff" | sed 's/^/    /'
fi
# Of its 55 questions, three are left to the server on purpose: the one after an Append
# that fails (BadMatch), the property too large to keep, and the one after UnmapSubwindows
# (not a quiet request); three more are errors (an offset beyond the value, a pixmap freed,
# one of a depth the screen lacks). The pixmaps' four geometries are answered here.
own_trips=$(grep -cE 'round trip ended by the reply to request [0-9]+ \((GetGeometry|GetWindowAttributes|GetProperty)\)' "$p_app_log")
check "That the app side answered all but 3 of those questions itself ($own_trips went to the server)" test "$own_trips" -le 3
# QueryTree and TranslateCoordinates: three left to the server on purpose (into the root,
# and the two after a restack), the other seven answered here.
tree_trips=$(grep -cE 'round trip ended by the reply to request [0-9]+ \((QueryTree|TranslateCoordinates)\)' "$p_app_log")
check "That the app side answered all but 3 of its 10 QueryTree and TranslateCoordinates itself ($tree_trips went to the server)" \
    test "$tree_trips" -le 3
check "That the pixmaps' geometries are replies (one made from a pixmap freed since too), the freed and the odd-depth pixmap's errors" \
    bash -c "[ \$(grep -cE '^(pixmap|pixmap of a pixmap|bitmap|pixmap of a freed pixmap): 01' '$XL_TMP/direct.out') = 4 ] &&
             [ \$(grep -cE '^pixmap (freed|of depth 7): error 9' '$XL_TMP/direct.out') = 2 ]"

# Another client changes a property and a child's position: seen by the client.
rm -f "$XL_TMP/watched.out"; mkfifo "$XL_TMP/go"
xl_bg p bash -c "exec '$XL_BIN/xownwin' watched <'$XL_TMP/go' >'$XL_TMP/watched.out' 2>&1"
exec 7>"$XL_TMP/go"
xl_wait_for 20 grep -q '^window' "$XL_TMP/watched.out"
read -r _ top child < <(grep '^window' "$XL_TMP/watched.out")
xl_on b "$XL_BIN/xownwin" foreign "$top" "$child" >/dev/null
echo go >&7; exec 7>&-
xl_wait_for 20 grep -q 'geometry$' "$XL_TMP/watched.out"
check "That a property another client set is seen through tincan" grep -q '^seen property' "$XL_TMP/watched.out"
check "That a child window another client moved is seen through tincan" grep -q '^seen geometry' "$XL_TMP/watched.out"
check "That a window another client made in the client's is in its QueryTree through tincan" grep -q '^seen children' "$XL_TMP/watched.out"
grep -q '^seen' "$XL_TMP/watched.out" || sed 's/^/    /' "$XL_TMP/watched.out"
check "That the display side told the app side of the three changes" \
    test "$(grep -c 'changed by another client' "$p_disp_log")" -ge 3

# xterm: no round trip before its window maps is a question about its own windows.
xl_on p xterm -e true >/dev/null 2>&1
ch=$(grep -oE 'channel [0-9]+: request [0-9]+ maps a window' "$p_app_log" | tail -1 | awk '{print $2}')
before_map=$(awk -v ch="channel $ch" 'index($0, ch) && /maps a window/ { exit } index($0, ch) && /round trip ended/' "$p_app_log")
n_own=$(grep -cE '\((GetGeometry|GetWindowAttributes|GetProperty)\)' <<<"$before_map")
check "That xterm asks nothing about its own windows across the link before it maps ($(grep -c . <<<"$before_map") round trips, $n_own of them about windows)" \
    test -n "$ch" -a "$n_own" -eq 0

xl_stop_pair p
check "That the app side exits 0 after SIGTERM" test "$p_app_rc" = 0
check "That the display side exits 0 when the app side says goodbye" test "$p_disp_rc" = 0
check "That the display side counted no answer contradicted by the server without another client's change" \
    bash -c "! grep -q 'contradicted by the server' '$p_disp_log' || grep -q 'changed by another client' '$p_disp_log'"
check "That neither half reported a sanitizer error or an answer of its own it found wrong" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
grep -hE "please report|runtime error|Sanitizer" "$p_app_log" "$p_disp_log" | head -5 | sed "s/^/    log: /"
summary
