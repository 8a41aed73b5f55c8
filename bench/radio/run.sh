#!/usr/bin/env bash
# bench/radio/run.sh -- the seeds' shared-radio experiments over tincan-link cell mode, with
# the kernel's own TCP: MACA (PARC MPad cell, 256 kbit/s) bulk TCP with 512-byte packets,
# 16-byte datagrams, 1 and 4 stations at once; 802.11b DCF one station (long and short
# preamble), N stations, and the 1 + 11 Mbit/s anomaly; streams and HTTP with a bad apple,
# with one FIFO at the access point and with a queue per client (--ap-queue). Needs root.
# Prints one table row per run (results: docs/EMULATOR.md).
# Usage: bench/radio/run.sh [path/to/tincan-link]; RADIO_PARTS="bulk dgrams pens streams http"
# (the default) names the tables to run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LINK=${1:-$here/../../build/tincan-link}
BULK=$here/../emu/bulk.py
tmp=$(mktemp -d /tmp/radio_bench.XXXXXX)
LP=
cleanup() { [ -n "$LP" ] && kill "$LP" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
val() { sed -n "s/^$1=//p" "$2" | head -1; }
start() {
    rm -f "$tmp/info"
    "$LINK" cell --info-file "$tmp/info" --stats-file "$tmp/stats" "$@" 2>"$tmp/err" &
    LP=$!
    for _ in $(seq 100); do [ -s "$tmp/info" ] && break; sleep 0.05; done
}
stop() { kill "$LP"; wait "$LP" 2>/dev/null; LP=; }
in_ns() { local n; n=$(val "ns_$1" "$tmp/info"); shift; nsenter --net="$n" "$@"; }

# bulk DESC BYTES NSTA CELL-OPTIONS...: NSTA stations send BYTES each to the base at once;
# per station its bytes over its own transfer time, all stations all bytes over the longest
bulk() {
    local desc=$1 bytes=$2 nsta=$3; shift 3
    start --stations "$nsta" "$@"
    local pids=
    for i in $(seq "$nsta"); do
        in_ns base python3 "$BULK" recv 10.78.0.1 $((7200 + i)) >"$tmp/g$i" & pids="$pids $!"
    done
    sleep 0.3
    for i in $(seq "$nsta"); do in_ns "$i" timeout 300 python3 "$BULK" send 10.78.0.1 $((7200 + i)) "$bytes" & done
    wait $pids
    stop
    local per="" secs=0
    for i in $(seq "$nsta"); do
        local g; g=$(val goodput_Bps "$tmp/g$i")
        per="$per $(python3 -c "print('%.1f' % ($g * 8 / 1e3))")"
        secs=$(python3 -c "print(max($secs, $(val secs "$tmp/g$i")))")
    done
    local sum; sum=$(python3 -c "print($nsta * $bytes * 8 / $secs / 1e3)")   # all bytes over the longest transfer
    local coll=0 att=0
    for i in $(seq 0 "$nsta"); do
        local p; p=$([ "$i" = 0 ] && echo base || echo "sta$i")
        coll=$((coll + $(val ${p}_collisions "$tmp/stats"))); att=$((att + $(val ${p}_attempts "$tmp/stats")))
    done
    printf '| %s | `%s` | %s | %.1f | %d / %d |\n' "$desc" "$*" "${per# }" "$sum" "$coll" "$att"
}

# dgrams DESC RATE SECS CELL-OPTIONS...: station 1 sends 16-byte UDP datagrams at RATE per second
dgrams() {
    local desc=$1 rate=$2 secs=$3; shift 3
    start --stations 1 "$@"
    in_ns base timeout $((secs + 5)) python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.78.0.1', 7300)); s.settimeout($secs + 2)
n = 0
try:
    while True: s.recv(64); n += 1; s.settimeout(2)
except socket.timeout: pass
print(n)" >"$tmp/n" &
    local r=$!
    sleep 0.3
    in_ns 1 python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); t0 = time.monotonic(); k = 0
while time.monotonic() - t0 < $secs:
    s.sendto(b'p' * 16, ('10.78.0.1', 7300)); k += 1
    time.sleep(max(0, t0 + k / $rate - time.monotonic()))"
    wait $r
    stop
    local n; n=$(cat "$tmp/n")
    printf '| %s | `%s` | %.1f pkt/s (%.1f kbit/s of payload), offered %s/s; p50 one-way %s ms |\n' "$desc" "$*" \
        "$(python3 -c "print($n / $secs)")" "$(python3 -c "print($n * 16 * 8 / $secs / 1e3)")" "$rate" \
        "$(python3 -c "print($(val sta1_up_one_way_p50_us "$tmp/stats") / 1e3)")"
}

# pens DESC NPADS MODE CELL-OPTIONS...: NPADS pads send pen events at 50/s for 8 s
pens() {
    local desc=$1 npads=$2 mode=$3; shift 3
    start --stations "$npads" "$@"
    local pids=
    for i in $(seq "$npads"); do
        in_ns base python3 "$here/pen.py" server 10.78.0.1 $((7400 + i)) 8 >"$tmp/p$i" & pids="$pids $!"
    done
    sleep 0.3
    for i in $(seq "$npads"); do in_ns "$i" python3 "$here/pen.py" pad 10.78.0.1 $((7400 + i)) 50 8 "$mode" & done
    wait $pids
    stop
    local ev=0 p50="" p99=""
    for i in $(seq "$npads"); do
        ev=$((ev + $(val events "$tmp/p$i"))); p50="$p50 $(val lat_p50_ms "$tmp/p$i")"; p99="$p99 $(val lat_p99_ms "$tmp/p$i")"
    done
    printf '| %s | `%s` | %d of %d | %s | %s |\n' "$desc" "$*" "$ev" $((npads * 400)) "${p50# }" "${p99# }"
}

# streams DESC NCLI CELL-OPTIONS...: the base streams 528 kbit/s to each of NCLI stations for
# 10 s; each client's received rate over the last 7 s
streams() {
    local desc=$1 ncli=$2; shift 2
    start --stations "$ncli" "$@"
    local pids=
    for i in $(seq "$ncli"); do
        in_ns base timeout 40 python3 "$here/stream.py" serve 10.78.0.1 $((7500 + i)) 528000 10 & pids="$pids $!"
    done
    sleep 0.3
    for i in $(seq "$ncli"); do
        in_ns "$i" timeout 40 python3 "$here/stream.py" watch 10.78.0.1 $((7500 + i)) 10 3 >"$tmp/s$i" &
        pids="$pids $!"
    done
    wait $pids
    stop
    local per="" ok=0
    for i in $(seq "$ncli"); do
        local r; r=$(val rate_bps "$tmp/s$i")
        [ -n "$r" ] || { per="$per failed"; continue; }     # a client that never got its stream
        per="$per $(python3 -c "print('%.0f' % ($r / 1e3))")"
        ok=$((ok + $(python3 -c "print(1 if $r >= 0.95 * 528000 else 0)")))
    done
    printf '| %s | `%s` | %s | %d of %d |\n' "$desc" "$*" "${per# }" "$ok" "$ncli"
}

# http DESC NCLI SIZE CELL-OPTIONS...: NCLI stations fetch SIZE bytes from the base over and
# over for 8 s, a TCP connection per request
http() {
    local desc=$1 ncli=$2 size=$3; shift 3
    start --stations "$ncli" "$@"
    nsenter --net="$(val ns_base "$tmp/info")" python3 "$here/http.py" serve 10.78.0.1 8080 &
    local srv=$!                              # nsenter execs python: this is the server's pid
    sleep 0.3
    local pids=
    for i in $(seq "$ncli"); do
        in_ns "$i" timeout 40 python3 "$here/http.py" fetch 10.78.0.1 8080 "$size" 8 >"$tmp/h$i" & pids="$pids $!"
    done
    wait $pids
    kill $srv 2>/dev/null; wait $srv 2>/dev/null
    stop
    local req=0 bytes=0 p50=""
    for i in $(seq "$ncli"); do
        req=$((req + $(val requests "$tmp/h$i"))); bytes=$((bytes + $(val bytes "$tmp/h$i"))); p50="$p50 $(val resp_p50_ms "$tmp/h$i")"
    done
    printf '| %s | `%s` | %d B | %.1f | %.0f | %s |\n' "$desc" "$*" "$size" "$(python3 -c "print($req / 8)")" \
        "$(python3 -c "print($bytes * 8 / 8 / 1e3)")" "${p50# }"
}

PARTS=" ${RADIO_PARTS:-bulk dgrams pens streams http} "
part() { case $PARTS in *" $1 "*) return 0 ;; esac; return 1; }

echo "# tincan-link cell mode, $(date -u +%F), $(nproc) cores, kernel $(uname -r), TCP $(sysctl -n net.ipv4.tcp_congestion_control)"
echo
if part bulk; then
    echo "| run | cell options | goodput per station, kbit/s | all stations, kbit/s | collisions / attempts |"
    echo "| --- | --- | --- | --- | --- |"
    bulk "MACA, bulk TCP, 512-byte packets" 60000 1 --profile mpad --mtu 512
    bulk "MACA, bulk TCP, 1500-byte packets" 60000 1 --profile mpad --mtu 1500
    bulk "MACA, 4 stations bulk TCP at once, 512-byte packets" 30000 4 --profile mpad --mtu 512
    bulk "802.11b, 1 station, long preamble" 6000000 1 --profile dot11b
    bulk "802.11b, 1 station, short preamble" 6000000 1 --profile dot11b-short
    bulk "802.11b, 4 stations at once, short preamble" 2000000 4 --profile dot11b-short
    bulk "802.11b, 11 + 11 Mbit/s" 2000000 2 --profile dot11b-short
    bulk "802.11b, 1 + 11 Mbit/s (anomaly)" 500000 2 --profile dot11b-short --station-rate 1=1M
    echo
fi
if part dgrams; then
    echo "| run | cell options | delivered |"
    echo "| --- | --- | --- |"
    dgrams "MACA, 16-byte UDP datagrams, saturating" 400 6 --profile mpad
    dgrams "MACA, 16-byte UDP datagrams, one pad's pen at 50/s" 50 6 --profile mpad
    echo
fi
if part pens; then
    echo "| pads, pen events at 50/s each for 8 s | cell options | events arrived | latency p50 per pad, ms | p99, ms |"
    echo "| --- | --- | --- | --- | --- |"
    pens "1 pad, a datagram per event" 1 plain --profile mpad
    pens "4 pads, a datagram per event" 4 plain --profile mpad
    pens "4 pads, coalesced (one datagram in flight)" 4 coalesce --profile mpad
    echo
fi
if part streams; then
    echo "| 528 kbit/s streams from the base | cell options | received per client, kbit/s | clients served (>= 95%) |"
    echo "| --- | --- | --- | --- |"
    streams "8 clients at 11 Mbit/s" 8 --profile dot11b
    streams "8 clients, client 1 at 1 Mbit/s (bad apple)" 8 --profile dot11b --station-rate 1=1M
    streams "8 clients, client 1 at 1 Mbit/s with 10% frame loss" 8 --profile dot11b --station-rate 1=1M --station-loss 1=10%
    streams "the same, a queue per client at the access point, round robin" 8 --profile dot11b --station-rate 1=1M --station-loss 1=10% --ap-queue rr
    streams "the same, a queue per client, airtime fairness" 8 --profile dot11b --station-rate 1=1M --station-loss 1=10% --ap-queue airtime
    echo
fi
if part http; then
    echo "| HTTP/1.0 fetches for 8 s | cell options | size | requests/s, all clients | kbit/s | response p50 per client, ms |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for size in 1000 10000 100000; do http "4 clients" 4 $size --profile dot11b; done
    http "4 clients, client 1 at 1 Mbit/s" 4 10000 --profile dot11b --station-rate 1=1M
    http "4 clients, client 1 at 1 Mbit/s, airtime fairness" 4 10000 --profile dot11b --station-rate 1=1M --ap-queue airtime
    echo
fi
