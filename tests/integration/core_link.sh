#!/usr/bin/env bash
# core_link.sh -- the TCP link is safe: it listens on loopback only, needs a secret to
# start, and refuses peers that do not prove the secret (wrong secret, none, not tincan,
# another protocol version) before any X data flows, logging why and listening on for the
# right peer, which then gets through.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
V=$("$TINCAN" version | sed -n 's/.*link protocol \([0-9]*\).*/\1/p')   # the link protocol version
NEXT=$((V + 1))
unset TINCAN_SECRET

xl_start_xvfb b || { fail "That an Xvfb starts"; summary; exit 1; }
S1=$XL_TMP/secret1 S2=$XL_TMP/secret2
"$TINCAN" secret "$S1" && "$TINCAN" secret "$S2"
check "That tincan secret makes a file only its owner can read" test "$(stat -c %a "$S1")" = 600
check "That tincan secret makes a different secret each time" bash -c "! cmp -s '$S1' '$S2'"
check "That tincan secret will not overwrite a file" bash -c "! '$TINCAN' secret '$S1' 2>/dev/null"

# --- refusing to start without a secret
port=$(xl_free_port)
XAUTHORITY=$b_auth timeout 10 "$TINCAN" display --link-listen "127.0.0.1:$port" --display "$b_display" \
    >"$XL_TMP/nosecret.out" 2>&1
rc=$?
check "That the display side will not listen on TCP without a secret (exit status $rc)" test "$rc" = 2
check "That it says a TCP link needs a session secret" grep -q 'a TCP link needs a session secret' "$XL_TMP/nosecret.out"
timeout 10 "$TINCAN" app --link-connect "127.0.0.1:$port" --xauthority "$XL_TMP/x.xauth" >"$XL_TMP/nosecret.out" 2>&1
rc=$?
check "That the app side will not connect over TCP without a secret (exit status $rc)" test "$rc" = 2
TINCAN_SECRET=short timeout 10 "$TINCAN" app --link-connect "127.0.0.1:$port" >"$XL_TMP/short.out" 2>&1
check "That a TINCAN_SECRET shorter than 16 bytes is refused clearly" grep -q 'TINCAN_SECRET must hold 16' "$XL_TMP/short.out"

# --- the listener
# start_display NAME ADDR [options]: starts a display side listening on ADDR; DISP_PID.
start_display() {
    local name=$1 addr=$2; shift 2
    rm -f "$XL_TMP/$name.log"
    XAUTHORITY=$b_auth "$TINCAN" display --link-listen "$addr" --display "$b_display" --stats "$@" \
        2>"$XL_TMP/$name.log" &
    DISP_PID=$!; xl_track "$DISP_PID"
    xl_wait_for 20 grep -q 'waiting for the app side' "$XL_TMP/$name.log"
}
# listeners PORT: the local addresses listening on PORT, as /proc/net/tcp{,6} spell them.
listeners() {
    local hex
    hex=$(printf '%04X' "$1")
    awk -v p=":$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { print $2 }' /proc/net/tcp /proc/net/tcp6
}

port=$(xl_free_port)
start_display disp "127.0.0.1:$port" --secret-file "$S1"
log=$XL_TMP/disp.log
check "That the display side listens on 127.0.0.1:$port and nowhere else" test "$(listeners "$port")" = "0100007F:$(printf '%04X' "$port")"
xvfb_idle=$(xl_socket_count "$b_pid")

# refused PATTERN COUNT: the display side has logged COUNT refusals in all so far, and one matching PATTERN.
refused_logged() { xl_wait_for 10 bash -c "grep -qE '$1' '$log' && [ \$(grep -c 'peer refused (.*); still listening' '$log') -ge $2 ]"; }

# A tincan app with the wrong secret, trying to run xdpyinfo.
timeout 30 "$TINCAN" app --link-connect "127.0.0.1:$port" --secret-file "$S2" --xauthority "$XL_TMP/app.xauth" \
    -- xdpyinfo >"$XL_TMP/wrong.out" 2>&1
rc=$?
check "That an app side with the wrong secret fails (exit status $rc) and its program gets no display" \
    bash -c "[ $rc -ne 0 ] && ! grep -q '^name of display' '$XL_TMP/wrong.out'"
# The display side usually reads the app side's bad proof; but the app side may find the
# display side's proof bad first and close with it unread, and the reset then loses the
# proof in flight: either line names the wrong secret.
check "That the display side logs the wrong secret and keeps listening" \
    refused_logged 'error: link: peer failed to prove the session secret \(wrong secret\?\): refused|link closed during the handshake \(.*\): wrong secret or not a tincan peer\?' 1
check "That no X connection was made for the refused peer" test "$(xl_socket_count "$b_pid")" = "$xvfb_idle"

# A peer that offers no authentication at all.
printf 'TINCAN %s app 0 none\n' "$V" | timeout 10 nc -N 127.0.0.1 "$port" >"$XL_TMP/none.out" 2>&1
check "That a peer without a secret is refused and logged" \
    refused_logged 'error: link: peer does not prove the session secret: refused' 2
check "That the peer without a secret got nothing but the banner and a nonce (under 100 bytes)" \
    bash -c "head -c 17 '$XL_TMP/none.out' | grep -q '^TINCAN $V display' && [ \$(stat -c %s '$XL_TMP/none.out') -lt 100 ]"

# Something that is not tincan at all.
echo garbage | timeout 10 nc -N 127.0.0.1 "$port" >/dev/null 2>&1
check "That a peer that is not tincan is refused and logged" \
    refused_logged 'error: link: peer is not a tincan link' 3
printf 'GET / HTTP/1.0\r\n\r\n' | timeout 10 nc -N 127.0.0.1 "$port" >/dev/null 2>&1
check "That an HTTP request is refused as not tincan" refused_logged 'peer is not a tincan link \(banner' 4

# A tincan of another link protocol version.
printf 'TINCAN %s app 0 hmac-sha256\n' "$NEXT" | timeout 10 nc -N 127.0.0.1 "$port" >/dev/null 2>&1
check "That a peer speaking link protocol version $NEXT gets a clear version error in the log" \
    refused_logged "error: link: peer speaks link protocol version $NEXT, this tincan speaks $V: upgrade the older side" 5

# Another display side pretending to be an app side.
printf 'TINCAN %s display 0 hmac-sha256\n' "$V" | timeout 10 nc -N 127.0.0.1 "$port" >/dev/null 2>&1
check "That a second display side is refused as the wrong role" refused_logged 'peer is a tincan display side too' 6

check "That the display side is still running after six refused peers" kill -0 "$DISP_PID"
check "That still no X connection was made" test "$(xl_socket_count "$b_pid")" = "$xvfb_idle"

# The right peer now gets through.
timeout 60 "$TINCAN" app --link-connect "127.0.0.1:$port" --secret-file "$S1" --xauthority "$XL_TMP/app.xauth" \
    -- xdpyinfo >"$XL_TMP/right.out" 2>&1
rc=$?
check "That the app side with the right secret then runs xdpyinfo (exit status $rc)" \
    bash -c "[ $rc = 0 ] && grep -q '^name of display' '$XL_TMP/right.out'"
check "That the display side ends by itself with that session" xl_wait_exit "$DISP_PID" 15
rc=$(xl_exit_status "$DISP_PID")
check "That its exit status is 0 (was $rc)" test "$rc" = 0
check "That the display side counted the one client" grep -qE '^clients: 1 connected, 0 refused' "$log"

# --- the secret from the environment; a listener given as :PORT (no host)
port=$(xl_free_port)
TINCAN_SECRET=$(cat "$S1") start_display env ":$port"
check "That --link-listen :PORT listens on loopback only" test "$(listeners "$port")" = "0100007F:$(printf '%04X' "$port")"
timeout 60 "$TINCAN" app --link-connect "127.0.0.1:$port" --secret-file "$S1" --xauthority "$XL_TMP/app.xauth" \
    -- xdpyinfo >"$XL_TMP/env.out" 2>&1
check "That TINCAN_SECRET on one side matches the same secret in a file on the other" \
    grep -q '^name of display' "$XL_TMP/env.out"
xl_wait_exit "$DISP_PID" 15

# --- a peer that connects and then says nothing (a port scanner, or someone keeping the
# port busy) must not keep the right peer out until its handshake times out.
port=$(xl_free_port)
start_display silent "127.0.0.1:$port" --secret-file "$S1"
nc -d 127.0.0.1 "$port" >/dev/null 2>&1 &
silent=$!; xl_track "$silent"
xl_wait_for 10 grep -q 'peer connected' "$XL_TMP/silent.log"
timeout 30 "$TINCAN" app --link-connect "127.0.0.1:$port" --secret-file "$S1" --xauthority "$XL_TMP/app.xauth" \
    -- xdpyinfo >"$XL_TMP/silent.out" 2>&1
check "That a silent peer holding a connection does not keep the right peer out" \
    grep -q '^name of display' "$XL_TMP/silent.out"
grep -E 'refusing|error' "$XL_TMP/silent.log" "$XL_TMP/silent.out" | sed 's/^/    log: /'
kill "$silent"; kill "$DISP_PID" 2>/dev/null; xl_wait_exit "$DISP_PID" 10

check "That no process reported a sanitizer error" \
    xl_sanitizer_clean "$XL_TMP"/disp.log "$XL_TMP"/env.log "$XL_TMP"/silent.log "$XL_TMP"/*.out
summary
