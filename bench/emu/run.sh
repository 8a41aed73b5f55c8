#!/usr/bin/env bash
# bench/emu/run.sh -- fidelity and speed of tincan-link measured with ordinary tools (ping,
# iperf3 TCP and UDP) across the emulated link; prints one line per measurement with the
# configured value, the measured value and the judged tolerance. Needs root for packet mode.
# Usage: bench/emu/run.sh [path/to/tincan-link] [quick]   (results: docs/EMULATOR.md)
set -u
here=$(cd "$(dirname "$0")" && pwd)
LINK=${1:-$here/../../build/tincan-link}
QUICK=${2:-}
T=$([ -n "$QUICK" ] && echo 4 || echo 10)        # seconds per TCP run
tmp=$(mktemp -d /tmp/emu_bench.XXXXXX)
LP=
cleanup() { [ -n "$LP" ] && kill "$LP" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
val() { sed -n "s/^$1=//p" "$2" | head -1; }
py() { python3 -c "$@"; }
verdict() { py "import sys; m,e,tol,kind=float(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]),sys.argv[4]
ok = abs(m-e) <= (tol if kind=='abs' else tol*e)
print('ok' if ok else 'OUT')" "$@"; }
start() {
    rm -f "$tmp/info"
    "$LINK" packet --info-file "$tmp/info" --stats-file "$tmp/stats" "$@" 2>"$tmp/err" &
    LP=$!
    for _ in $(seq 100); do [ -s "$tmp/info" ] && break; sleep 0.05; done
    ns_a=$(val ns_a "$tmp/info"); ns_b=$(val ns_b "$tmp/info")
}
stop() { kill "$LP"; wait "$LP" 2>/dev/null; LP=; }
stats() { kill -USR1 "$LP"; sleep 0.3; }
in_a() { nsenter --net="$ns_a" "$@"; }
in_b() { nsenter --net="$ns_b" "$@"; }
port=5400
iperf_srv() { port=$((port + 1)); in_b timeout 60 iperf3 -s -1 -B 10.77.0.2 -p $port >/dev/null 2>&1 & sleep 0.5; }

# ping_rtt DESC EXPECTED_MS COUNT LINK-OPTIONS...: average RTT of COUNT pings (56-byte payload)
ping_rtt() {
    local desc=$1 exp=$2 count=$3; shift 3
    start "$@"
    in_a ping -q -c 2 -i 0.3 10.77.0.2 >/dev/null          # warm up (neighbour-less p2p: nothing to learn)
    local avg
    avg=$(in_a ping -q -c "$count" -i 0.2 10.77.0.2 | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p')
    stats; stop
    printf 'ping  %-44s expected %8.3f ms  measured %8.3f ms  (+-1 ms) %s\n' "$desc" "$exp" "$avg" "$(verdict "$avg" "$exp" 1 abs)"
}

# tcp_goodput DESC EXPECTED_BPS LINK-OPTIONS...
tcp_goodput() {
    local desc=$1 exp=$2; shift 2
    start "$@"
    iperf_srv
    in_a iperf3 -c 10.77.0.2 -p $port -t "$T" -O 2 -J >"$tmp/iperf" 2>&1
    stats; stop
    local got
    got=$(py "import json; print(json.load(open('$tmp/iperf'))['end']['sum_received']['bits_per_second'])")
    printf 'tcp   %-44s expected %10.0f b/s measured %10.0f b/s (+-5%%) %s\n' "$desc" "$exp" "$got" "$(verdict "$got" "$exp" 0.05 rel)"
}

# udp_loss DESC EXPECTED_FRACTION LINK-OPTIONS...: 20000+ datagrams of 100 bytes
udp_loss() {
    local desc=$1 exp=$2; shift 2
    start "$@"
    iperf_srv
    in_a iperf3 -c 10.77.0.2 -p $port -u -b 16M -l 100 -t 2 -J >"$tmp/iperf" 2>&1
    stats; stop
    local n lost
    n=$(val up_pkts_in "$tmp/stats"); lost=$(( $(val up_drop_loss "$tmp/stats") ))
    local f
    f=$(py "print($lost / $n)")
    printf 'loss  %-44s expected %7.4f  measured %7.4f over %d packets (+-10%% rel) %s\n' "$desc" "$exp" "$f" "$n" "$(verdict "$f" "$exp" 0.10 rel)"
}

# queue_delay DESC EXPECTED_MS FLOOD_RATE LINK-OPTIONS...: ping behind a UDP flood (of small
# datagrams, 20% above the link rate) that keeps the drop-tail queue full.
queue_delay() {
    local desc=$1 exp=$2 flood=$3; shift 3
    start "$@"
    iperf_srv
    in_a iperf3 -c 10.77.0.2 -p $port -u -b "$flood" -l 200 -t 6 >/dev/null 2>&1 &
    sleep 1.5
    local avg
    avg=$(in_a ping -q -c 20 -i 0.2 10.77.0.2 | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p')
    wait $!
    stats; stop
    printf 'queue %-44s expected %8.1f ms  measured %8.1f ms  (+-2%%) %s\n' "$desc" "$exp" "$avg" "$(verdict "$avg" "$exp" 0.02 rel)"
}

echo "# tincan-link fidelity, $(date -u +%Y-%m-%d), $(nproc) cores, kernel $(uname -r)"
# Serialisation of a 84-byte ping packet: 84*8/rate; serial: PPP frame of 84 bytes
# (+8 framing, + stuffed bytes: ping payload 0x10..0x37 has 16 control bytes, header a few) at 10 bits/byte.
ping_rtt "delay 10ms, 10 Mbit/s"      "$(py 'print(20 + 2*84*8/10e6*1e3)')" 50 --delay 10ms --rate 10M
ping_rtt "delay 50ms, 1 Mbit/s"       "$(py 'print(100 + 2*84*8/1e6*1e3)')" 30 --delay 50ms --rate 1M
ping_rtt "satellite profile (300 ms each way)" "$(py 'print(600 + 84*8/256e3*1e3 + 84*8/1e6*1e3)')" 10 --profile satellite --loss 0
ping_rtt "no delay, no rate (emulator's own latency)" 0 50
# serial9600: stuffing makes each frame's size depend on its bytes (ping's payload holds a
# timestamp), so the expected RTT uses the frame sizes the emulator counted in that same run.
start --profile serial9600
in_a ping -q -c 2 -i 0.5 10.77.0.2 >/dev/null; stats
u0=$(val up_wire_bytes "$tmp/stats"); d0=$(val down_wire_bytes "$tmp/stats")
avg=$(in_a ping -q -c 10 -i 0.5 10.77.0.2 | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p'); stats; stop
u1=$(val up_wire_bytes "$tmp/stats"); d1=$(val down_wire_bytes "$tmp/stats")
exp=$(py "print(2 + (($u1 - $u0) + ($d1 - $d0)) / 10 * 10 / 9600 * 1e3)")
printf 'ping  %-44s expected %8.3f ms  measured %8.3f ms  (+-1 ms) %s\n' "serial9600 ($(( (u1 - u0) / 10 )) B frames, 10 bit/B)" "$exp" "$avg" "$(verdict "$avg" "$exp" 1 abs)"

tcp_goodput "1 Mbit/s (1448 B payload per 1500 B)"   "$(py 'print(1e6*1448/1500)')" --rate 1M
tcp_goodput "10 Mbit/s, delay 20 ms"                 "$(py 'print(10e6*1448/1500)')" --rate 10M --delay 20ms --queue 200p
tcp_goodput "256 kbit/s, delay 5 ms"                 "$(py 'print(256e3*1448/1500)')" --rate 256k --delay 5ms
# PPP on async serial: 576-byte packets (524 B payload) + 8 framing bytes + stuffing of
# iperf3's random payload (34 of 256 byte values escaped: 13.3%), 10 bits per byte.
tcp_goodput "serial38400 profile (PPP, async)"       "$(py 'print(38400/10*8*524/(576+8+576*34/256))')" --profile serial38400 --queue 20p

udp_loss "random 1%"                 0.01  --loss-up 1% --seed 11
udp_loss "random 5%"                 0.05  --loss-up 5% --seed 12
udp_loss "Gilbert-Elliott p=1% r=30% (mean 3.23%)" "$(py 'print(0.01/(0.01+0.30))')" --loss-ge-up 1%,30% --seed 13

# Expected: the queue's size in time, plus the ping's own serialisation both ways.
queue_delay "1 Mbit/s, queue 100ms"  "$(py 'print(100 + 84*8/1e6*1e3*2)')" 1.2M --rate 1M --queue-up 100ms
queue_delay "1 Mbit/s, queue 30000B" "$(py 'print(30000*8/1e6*1e3 + 84*8/1e6*1e3*2)')" 1.2M --rate 1M --queue-up 30000B
queue_delay "2 Mbit/s, queue 200p of 228 B" "$(py 'print(200*228*8/2e6*1e3 + 84*8/2e6*1e3*2)')" 2.4M --rate 2M --queue-up 200p

# Speed with no limits: TCP through the emulator, MTU 1500 and 9000; its own added latency.
for mtu in 1500 9000; do
    start --mtu $mtu
    iperf_srv
    in_a iperf3 -c 10.77.0.2 -p $port -t "$T" -O 2 -J >"$tmp/iperf" 2>&1
    stats; stop
    got=$(py "import json; print(json.load(open('$tmp/iperf'))['end']['sum_received']['bits_per_second']/1e9)")
    printf 'speed no limits, MTU %-5s TCP %.2f Gbit/s; emulator lateness p50 %s us, p99 %s us\n' "$mtu" "$got" \
        "$(val up_lateness_p50_us "$tmp/stats")" "$(val up_lateness_p99_us "$tmp/stats")"
done

# Stream mode (no root): goodput and RTT through the relay.
for r in 256k 1M 10M; do
    "$LINK" stream --listen 127.0.0.1:0 --connect "unix:$tmp/srv.sock" --rate $r --ready-file "$tmp/ready" 2>/dev/null &
    SP=$!; for _ in $(seq 100); do [ -s "$tmp/ready" ] && break; sleep 0.05; done
    relay=$(val listen "$tmp/ready")
    bps=$(py "print(int(float('${r%[kM]}') * {'k':1e3,'M':1e6}['${r: -1}']))")
    bytes=$(py "print(int($bps/8*4))")
    got=$(python3 "$here/streamprobe.py" bulk --relay "$relay" --server "unix:$tmp/srv.sock" --bytes "$bytes" | sed -n 's/goodput_bps=//p')
    kill $SP; wait $SP 2>/dev/null; rm -f "$tmp/ready"
    printf 'stream goodput %-5s expected %10d b/s measured %10s b/s (+-5%%) %s\n' "$r" "$bps" "$got" "$(verdict "$got" "$bps" 0.05 rel)"
done
"$LINK" stream --listen 127.0.0.1:0 --connect "unix:$tmp/srv.sock" --delay 20ms --rate 10M --ready-file "$tmp/ready" 2>/dev/null &
SP=$!; for _ in $(seq 100); do [ -s "$tmp/ready" ] && break; sleep 0.05; done
rtt=$(python3 "$here/streamprobe.py" rtt --relay "$(val listen "$tmp/ready")" --server "unix:$tmp/srv.sock" --count 50 | sed -n 's/rtt_median_ms=//p')
kill $SP; wait $SP 2>/dev/null
printf 'stream rtt delay 20ms, 10M: expected %.3f ms measured %s ms (+-1 ms) %s\n' 40.05 "$rtt" "$(verdict "$rtt" 40.05 1 abs)"
