#!/usr/bin/env bash
# core_clients.sh -- many clients on one link: 20 programs at once, clients coming and
# going in random order, clients killed with SIGKILL in the middle of a request. Others
# carry on, and once all are gone both halves hold no connection for any of them.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

check "That the test clients build" xl_build_clients
xl_start_xvfb b && xl_start_pair p b || { fail "That an Xvfb and a tincan pair start"; summary; exit 1; }

# Sockets held with no client: the app side's X listeners and link, the display side's link.
app_idle=$(xl_socket_count "$p_app_pid")
disp_idle=$(xl_socket_count "$p_disp_pid")
xvfb_idle=$(xl_socket_count "$b_pid")

# A witness that lives through everything below.
xl_bg p xlogo -geometry 100x100+900+600 -name witness; witness=$XL_LAST
xl_wait_window b '^witness$'
witness_win=$(xl_window b '^witness$')

# --- 20 programs at once
logos=()
for i in $(seq 20); do
    xl_bg p xlogo -geometry 60x60+$((i * 45))+100 -name "logo$i"; logos+=("$XL_LAST")
done
check "That 20 xlogo started at once through one link all show their windows" \
    xl_wait_for 90 xl_windows_are b '^logo[0-9]+$' 20

# --- coming and going in random order, with short-lived clients in between
loop_ok=$XL_TMP/loops
mkdir -p "$loop_ok"
short_lived() { # i: five xdpyinfo and xprop in a row; a file per success
    local k
    for k in 1 2 3 4 5; do
        xl_on p xdpyinfo >"$XL_TMP/loop$1.$k.out" 2>&1 && grep -q '^name of display:' "$XL_TMP/loop$1.$k.out" &&
            xl_on p xprop -root >/dev/null 2>&1 && touch "$loop_ok/$1.$k"
    done
}
loops=()
for i in $(seq 10); do short_lived "$i" & loops+=($!); done
killed=0
for pid in $(printf '%s\n' "${logos[@]}" | shuf); do
    kill "$pid"; killed=$((killed + 1))
    if [ "$killed" = 10 ]; then
        check "That after ten of them have gone in random order, the other ten are still shown" \
            xl_wait_for 20 xl_windows_are b '^logo[0-9]+$' 10
    fi
    sleep 0.0$((RANDOM % 10))
done
for pid in "${loops[@]}"; do wait "$pid"; done
check "That 50 short-lived xdpyinfo and xprop, ten at a time among the others, all succeed" \
    test "$(find "$loop_ok" -type f | wc -l)" -eq 50
check "That every xlogo window is gone once its program is" xl_wait_for 20 xl_windows_are b '^logo[0-9]+$' 0

# --- SIGKILL in the middle of a request
rm -f "$XL_TMP/hold.out"
xl_bg p "$XL_BIN/xbadclient" hold-partial >"$XL_TMP/hold.out"; hold=$XL_LAST
xl_wait_for 20 grep -q ready "$XL_TMP/hold.out"
kill -KILL "$hold"; wait "$hold" 2>/dev/null
check "That a client killed with half a request sent is noticed by the app side" \
    xl_wait_for 10 grep -q 'client left in the middle of a request (12 bytes dropped)' "$p_app_log"
kill -USR1 "$p_app_pid"
xl_wait_for 5 grep -q 'dropped for bad input' "$p_app_log"
check "That the app side counted no client as refused or bad so far" \
    grep -qE '^clients: [0-9]+ connected, 0 refused, 0 dropped for bad input$' "$p_app_log"
warnings=$(grep -c warning "$p_app_log")

# A client that dies with replies unread: the kernel resets its connection. That is an
# ordinary departure, not bad input, and not worth a warning.
xl_on p "$XL_BIN/xbadclient" unread
xl_wait_for 10 xl_sockets_are "$p_app_pid" $((app_idle + 1)) # the witness's
kill -USR1 "$p_app_pid"
xl_wait_for 5 bash -c "[ \$(grep -c 'dropped for bad input' '$p_app_log') -ge 2 ]"
check "That a client reset by the kernel (it died with replies unread) is not counted as bad input" \
    bash -c "grep 'dropped for bad input' '$p_app_log' | tail -1 | grep -q ' 0 dropped for bad input'"
check "That a client reset by the kernel leaves no warning in the log" test "$(grep -c warning "$p_app_log")" = "$warnings"
grep warning "$p_app_log" | tail -n +$((warnings + 1)) | sed 's/^/    log: /'
grep 'dropped for bad input' "$p_app_log" | tail -1 | sed 's/^/    log: /'

# Programs killed at random moments of their conversation: xlsfonts -l asks for the
# metrics of 1500 fonts one by one and is always mid-conversation; xdpyinfo may not be.
for i in $(seq 12); do
    if [ $((i % 2)) = 0 ]; then xl_bg p xlsfonts -l >/dev/null 2>&1; else xl_bg p xdpyinfo -ext all >/dev/null 2>&1; fi
    victim=$XL_LAST
    sleep 0.$((RANDOM % 5))$((RANDOM % 10))
    kill -KILL "$victim" 2>/dev/null; wait "$victim" 2>/dev/null
done
sleep 0.2
check "That the witness xlogo is still running" kill -0 "$witness"
xl_on p xwininfo -id "$witness_win" >"$XL_TMP/witness.out" 2>&1
check "That the witness's window can still be queried through tincan" grep -q witness "$XL_TMP/witness.out"
xl_on p xdpyinfo >"$XL_TMP/after.out" 2>&1
check "That a new client is served after all that" grep -q '^name of display' "$XL_TMP/after.out"

# --- no trace left
kill "$witness"
check "That the app side ends up holding no client connection (no channel left)" \
    xl_wait_for 10 xl_sockets_are "$p_app_pid" "$app_idle"
check "That the display side ends up holding no connection to the X server" \
    xl_wait_for 10 xl_sockets_are "$p_disp_pid" "$disp_idle"
check "That the X server ends up with no client from tincan" xl_wait_for 10 xl_sockets_are "$b_pid" "$xvfb_idle"
check "That both halves are still running" kill -0 "$p_app_pid" "$p_disp_pid"
xl_stop_pair p
check "That both halves exit 0 at the end" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That neither half reported a sanitizer error" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
