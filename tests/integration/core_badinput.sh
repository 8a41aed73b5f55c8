#!/usr/bin/env bash
# core_badinput.sh -- bad clients on the app side: garbage instead of a setup, a setup for
# another protocol version, half a request then goodbye, a BIG-REQUESTS length of 1 GiB, no
# cookie, a wrong cookie. Each is disconnected alone, with a clear line in the app side's
# log, while a running xlogo carries on and new clients are served.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

check "That the test clients build" xl_build_clients
xl_start_xvfb b && xl_start_pair p b || { fail "That an Xvfb and a tincan pair start"; summary; exit 1; }
xl_bg p xlogo -geometry 100x100+10+10 -name witness; witness=$XL_LAST
xl_wait_window b '^witness$'
witness_win=$(xl_window b '^witness$')

# others_carry_on WHAT: the witness lives and answers, and a new client is served.
others_carry_on() {
    if kill -0 "$witness" && xl_on p xwininfo -id "$witness_win" 2>/dev/null | grep -q witness &&
        xl_on p xdpyinfo 2>/dev/null | grep -q '^name of display'; then
        pass "That after $1, the running xlogo carries on and a new client is served"
    else
        fail "That after $1, the running xlogo carries on and a new client is served"
    fi
}
# logged PATTERN: the app side's log has a line matching PATTERN (give it a moment).
logged() { xl_wait_for 10 grep -qE "$1" "$p_app_log"; }

out=$(xl_on p "$XL_BIN/xbadclient" garbage)
check "That a client sending garbage instead of a setup is disconnected ($out)" test "${out#closed}" != "$out"
check "That the garbage is logged clearly" logged 'warning: channel [0-9]+: garbage instead of an X connection setup; closing this connection only'
others_carry_on "a garbage setup"

out=$(xl_on p "$XL_BIN/xbadclient" bad-version)
check "That a setup for X protocol version 99 is disconnected ($out)" test "${out#closed}" != "$out"
check "That the other protocol version is refused as a server would, and logged" \
    logged 'warning: channel [0-9]+: client asked for X protocol version 99: refused'
others_carry_on "a setup for another protocol version"

xl_on p "$XL_BIN/xbadclient" truncated
check "That a client leaving after half a request is logged with the bytes dropped" \
    logged 'info: channel [0-9]+: client left in the middle of a request \(12 bytes dropped\)'
others_carry_on "a truncated request"

out=$(xl_on p "$XL_BIN/xbadclient" bigreq)
check "That a BIG-REQUESTS request announcing 1 GiB is disconnected ($out)" test "${out#closed}" != "$out"
check "That the absurd length is logged clearly" \
    logged 'warning: channel [0-9]+: client sent a message length beyond the limit; closing this connection only'
others_carry_on "an absurd request length"

XAUTHORITY=/dev/null DISPLAY=$p_display xdpyinfo >"$XL_TMP/nocookie.out" 2>&1
check "That xdpyinfo without a cookie is refused" test $? -ne 0
check "That xdpyinfo without a cookie is told why" grep -q 'Invalid MIT-MAGIC-COOKIE-1 key' "$XL_TMP/nocookie.out"
check "That the refusal without a cookie is logged" \
    logged "warning: channel [0-9]+: client did not present this display's MIT-MAGIC-COOKIE-1: refused"
others_carry_on "a client without a cookie"

xauth -q -f "$XL_TMP/wrong.xauth" add "$p_display" . "$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')" 2>/dev/null
XAUTHORITY=$XL_TMP/wrong.xauth DISPLAY=$p_display xdpyinfo >"$XL_TMP/wrong.out" 2>&1
check "That xdpyinfo with a wrong cookie is refused with an authorization error" \
    bash -c "! grep -q '^name of display' '$XL_TMP/wrong.out' && grep -q 'Invalid MIT-MAGIC-COOKIE-1 key' '$XL_TMP/wrong.out'"
check "That the wrong cookie's refusal is logged too" \
    xl_wait_for 10 bash -c "[ \$(grep -c 'did not present this display' '$p_app_log') -eq 2 ]"
others_carry_on "a client with a wrong cookie"

kill -USR1 "$p_app_pid"
# Refused: protocol version 99, no cookie, a wrong cookie. Dropped: garbage, 1 GiB length.
check "That the app side counts 3 clients refused and 2 dropped for bad input" \
    xl_wait_for 5 grep -qE '^clients: [0-9]+ connected, 3 refused, 2 dropped for bad input$' "$p_app_log"
grep 'dropped for bad input' "$p_app_log" | tail -1 | sed 's/^/    log: /'
check "That no bad client reached the X server: the display side never logged a warning" \
    bash -c "! grep -q warning '$p_disp_log'"
kill "$witness"
xl_stop_pair p
check "That both halves exit 0 at the end" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That neither half reported a sanitizer error" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
