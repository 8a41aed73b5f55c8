#!/usr/bin/env bash
# emu_stream.sh -- tincan-link stream mode end to end, with no root: CLI, rate, delay,
# half-close, unix sockets, back-pressure, counters, clean exit. Tolerances are loose
# (busy 2-core CI, sanitized binary); bench/emu/ measures fidelity strictly.
source "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
LINK=${TINCAN_LINK:-$here/../../build/tincan-link}
PROBE=$here/../../bench/emu/streamprobe.py
tmp=$(mktemp -d /tmp/emu_stream.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
server=unix:$tmp/server.sock

# start_relay NAME ARGS...: runs the relay on an ephemeral port; sets RELAY and RELAY_PID.
start_relay() {
    local name=$1; shift
    rm -f "$tmp/$name.ready"
    "$LINK" stream --listen 127.0.0.1:0 --connect "$server" --ready-file "$tmp/$name.ready" --stats-file "$tmp/$name.stats" "$@" \
        2>"$tmp/$name.err" &
    RELAY_PID=$!; pids+=("$RELAY_PID")
    for _ in $(seq 100); do [ -s "$tmp/$name.ready" ] && break; sleep 0.05; done
    RELAY=$(sed -n 's/^listen=//p' "$tmp/$name.ready")
}
stop_relay() { kill "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null; }
val() { sed -n "s/^$1=//p" "$2" | head -1; }
within() { python3 -c "import sys; v,lo,hi=map(float,sys.argv[1:]); sys.exit(0 if lo<=v<=hi else 1)" "$@"; }


check "That --help describes both modes" bash -c "'$LINK' --help | grep -q 'tincan-link stream' && '$LINK' --help | grep -q 'tincan-link packet'"
check "That --list-profiles names the serial, radio, wifi, cellular and satellite profiles" \
    bash -c "'$LINK' --list-profiles | grep -c -E '^(serial9600|serial38400|radio256|wifi11|cell3g|satellite) ' | grep -qx 6"
"$LINK" stream --listen 127.0.0.1:0 --connect 127.0.0.1:1 --rate fast 2>"$tmp/bad.err"
check "That a bad value is refused with exit status 2 and names the option" \
    bash -c "[ $? -eq 2 ] && grep -q -- '--rate' '$tmp/bad.err'"
"$LINK" stream --listen 127.0.0.1:0 --connect 127.0.0.1:1 --profile moon 2>"$tmp/bad.err"
check "That an unknown profile is refused clearly" grep -q "unknown profile 'moon'" "$tmp/bad.err"
"$LINK" stream --listen 127.0.0.1:0 2>"$tmp/bad.err"
check "That stream mode without --connect says what it needs" grep -q -- "--connect" "$tmp/bad.err"

start_relay rate --rate 4M --delay 10ms
python3 "$PROBE" bulk --relay "$RELAY" --server "$server" --bytes 1000000 >"$tmp/up.out"
python3 "$PROBE" bulk --relay "$RELAY" --server "$server" --bytes 1000000 --direction down >"$tmp/down.out"
check "That bulk goodput up is within 10% of 4 Mbit/s" within "$(val goodput_bps "$tmp/up.out")" 3.6e6 4.4e6
check "That bulk goodput down is within 10% of 4 Mbit/s" within "$(val goodput_bps "$tmp/down.out")" 3.6e6 4.4e6
check "That every byte arrives" bash -c "[ '$(val bytes "$tmp/up.out")' = 1000000 ] && [ '$(val bytes "$tmp/down.out")' = 1000000 ]"
stop_relay
check "That the stats file counts the bytes of each direction" \
    bash -c "[ '$(val up_bytes "$tmp/rate.stats")' = 1000000 ] && [ '$(val down_bytes "$tmp/rate.stats")' = 1000000 ]"

start_relay rtt --delay 20ms --rate 10M
python3 "$PROBE" rtt --relay "$RELAY" --server "$server" --count 20 >"$tmp/rtt.out"
check "That a small round trip takes twice the one-way delay (40-46 ms)" within "$(val rtt_median_ms "$tmp/rtt.out")" 40 46
check "That the client's close reaches the server" bash -c "[ '$(val eof_forwarded "$tmp/rtt.out")' = 1 ]"
python3 "$PROBE" halfclose --relay "$RELAY" --server "$server" >"$tmp/hc.out"
check "That a half-close travels behind the data and the answer still comes back" \
    bash -c "[ '$(val halfclose_ok "$tmp/hc.out")' = 1 ]"
stop_relay

rm -f "$tmp/relay.sock"
"$LINK" stream --listen "unix:$tmp/relay.sock" --connect "$server" --rate 64k --stats-file "$tmp/bp.stats" 2>/dev/null &
RELAY_PID=$!; pids+=("$RELAY_PID")
for _ in $(seq 100); do [ -S "$tmp/relay.sock" ] && break; sleep 0.05; done
python3 "$PROBE" backpressure --relay "unix:$tmp/relay.sock" --server "$server" --seconds 2 >"$tmp/bp.out"
kill -USR1 "$RELAY_PID"; sleep 0.3
check "That a unix-socket relay passes data" within "$(val up_bytes "$tmp/bp.stats")" 1 1e9
check "That with a stalled receiver the relay takes in no more than the link drains (64 kbit/s x 2 s + queue)" \
    within "$(val up_bytes_in "$tmp/bp.stats")" 1 24000
check "That the sender is pushed back (it could not write much more than the buffers hold)" \
    within "$(val client_sent "$tmp/bp.out")" 1 8e6
stop_relay
check "That the relay removes its unix socket when stopped" test ! -e "$tmp/relay.sock"

start_relay refused --delay 1ms
"$LINK" --help >/dev/null
python3 - "$RELAY" <<'PY' >"$tmp/refused.out" 2>&1
import socket, sys
h, p = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((h, int(p)))
s.settimeout(5)
try:
    print("closed" if s.recv(1) == b"" else "data")
except ConnectionResetError:
    print("reset")
PY
check "That a client is reset when the upstream refuses" grep -q reset "$tmp/refused.out"
check "That the relay survives a refused upstream" kill -0 "$RELAY_PID"
stop_relay
check "That the refused connection is counted" bash -c "[ '$(val connections_failed "$tmp/refused.stats")' = 1 ]"
check "That the relay reported no sanitizer error" bash -c "! cat $tmp/*.err | grep -E -q 'runtime error|Sanitizer'"
summary
