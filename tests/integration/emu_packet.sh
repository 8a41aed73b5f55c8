#!/usr/bin/env bash
# emu_packet.sh -- tincan-link packet mode with real kernel traffic between two namespaces:
# set-up and clean-up (also after SIGKILL), ping RTT, loss rate, drop-tail queue delay, TCP
# goodput, malformed packets, PPP+VJ on a serial profile, pcap output. Needs root; skips
# otherwise. Tolerances are loose for a busy CI machine; bench/emu/run.sh is strict.
source "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
LINK=${TINCAN_LINK:-$here/../../build/tincan-link}
if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ]; then
    echo "SKIP: packet mode needs root and /dev/net/tun"; summary; exit 0
fi
for tool in ping iperf3 nsenter python3; do
    command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; summary; exit 0; }
done
tmp=$(mktemp -d /tmp/emu_packet.XXXXXX)
LP=
cleanup() { [ -n "$LP" ] && kill "$LP" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
val() { sed -n "s/^$1=//p" "$2" | head -1; }
within() { python3 -c "import sys; v,lo,hi=map(float,sys.argv[1:]); sys.exit(0 if lo<=v<=hi else 1)" "$@"; }

# start LINK-OPTIONS...: starts packet mode; sets LP, ns_a, ns_b, dev_b.
start() {
    rm -f "$tmp/info"
    "$LINK" packet --info-file "$tmp/info" --stats-file "$tmp/stats" "$@" 2>>"$tmp/err" &
    LP=$!
    for _ in $(seq 100); do [ -s "$tmp/info" ] && break; sleep 0.05; done
    ns_a=$(val ns_a "$tmp/info"); ns_b=$(val ns_b "$tmp/info"); dev_b=$(val dev_b "$tmp/info")
    [ -n "$ns_a" ]
}
stop() { kill "$LP"; wait "$LP" 2>/dev/null; LP=; }
in_a() { nsenter --net="$ns_a" "$@"; }
in_b() { nsenter --net="$ns_b" "$@"; }
# Everything that still refers to network namespace inode $1: processes, fds, mounts.
ns_refs() { ls -l /proc/[0-9]*/ns/net /proc/[0-9]*/fd/ 2>/dev/null | grep -c "net:\[$1\]"; }
export -f ns_refs
ping_avg() { in_a ping -q -c "$1" -i "$2" -s "${3:-56}" 10.77.0.2 | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p'; }

start --delay 10ms --rate 10M
check "That packet mode starts and reports two namespaces" test -n "$ns_b"
check "That side A reaches side B through the TUN devices" in_a ping -q -c 1 -W 2 10.77.0.2 >/dev/null
avg=$(ping_avg 10 0.05)
# 2 x 10 ms + 2 x 84 bytes at 10 Mbit/s = 20.13 ms
check "That ping RTT is twice the delay plus serialisation, within 1 ms ($avg ms)" within "$avg" 20.13 21.13
ino=$(stat -L -c %i "$ns_a")
kill -9 "$LP"; wait "$LP" 2>/dev/null; LP=
sleep 0.2
check "That after SIGKILL nothing refers to its namespaces any more" bash -c "[ \$(ns_refs $ino) -eq 0 ]" 

start --host-b --delay 1ms
check "That with --host-b side B is a device of the host namespace" ip link show "$dev_b" >/dev/null
check "That the host reaches side A" ping -q -c 1 -W 2 10.77.0.1 >/dev/null
kill -9 "$LP"; wait "$LP" 2>/dev/null; LP=
sleep 0.2
check "That after SIGKILL the host-side device is gone" bash -c "! ip link show '$dev_b' 2>/dev/null"

start --loss-up 5% --seed 7
in_b timeout 30 iperf3 -s -1 -B 10.77.0.2 -p 5301 >/dev/null 2>&1 & sleep 0.5
in_a timeout 30 iperf3 -c 10.77.0.2 -p 5301 -u -b 20M -l 200 -t 1 >/dev/null 2>&1
kill -USR1 "$LP"; sleep 0.3
n=$(val up_pkts_in "$tmp/stats"); lost=$(val up_drop_loss "$tmp/stats")
check "That about 12500 UDP packets crossed ($n)" within "$n" 8000 20000
check "That 5% random loss is measured within 10% relative ($lost of $n)" \
    within "$(python3 -c "print($lost / $n)")" 0.045 0.055
stop

start --rate 1M --queue 100ms
in_b timeout 30 iperf3 -s -1 -B 10.77.0.2 -p 5302 >/dev/null 2>&1 & sleep 0.5
# 1.3 Mbit/s into 1 Mbit/s fills the queue within half a second and keeps it full while
# dropping only about a quarter of the arrivals, so most pings find a place at its tail
# (at 2 Mbit/s the queue was full nearly always, and once all 15 pings were dropped).
in_a timeout 30 iperf3 -c 10.77.0.2 -p 5302 -u -b 1.3M -l 1000 -t 3 >/dev/null 2>&1 &
sleep 1; avg=$(ping_avg 30 0.03); wait $!
# a full queue of 100 ms in front of the ping, plus 84 B at 1 Mbit/s twice (1.3 ms)
check "That a full drop-tail queue of 100 ms adds about 100 ms to ping ($avg ms)" within "$avg" 95 106
kill -USR1 "$LP"; sleep 0.2
check "That queue drops are counted" within "$(val up_drop_queue "$tmp/stats")" 1 1e9
in_b timeout 30 iperf3 -s -1 -B 10.77.0.2 -p 5303 >/dev/null 2>&1 & sleep 0.5
in_a timeout 30 iperf3 -c 10.77.0.2 -p 5303 -t 4 -J >"$tmp/iperf" 2>&1
mbps=$(python3 -c "import json; print(json.load(open('$tmp/iperf'))['end']['sum_received']['bits_per_second'] / 1e6)")
# 1448 payload bytes per 1500-byte packet (20 IP + 20 TCP + 12 timestamps): 0.965 Mbit/s at best
check "That TCP goodput through 1 Mbit/s is near 0.965 Mbit/s ($mbps Mbit/s)" within "$mbps" 0.87 0.98
stop

start --delay 1ms
cat >"$tmp/inject.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)
s.bind(("tla", 0x0800))
for junk in (b"\x45" + b"\x00" * 3, b"\x99" * 60, b"\x45\x00\x00\x14" + b"\x00" * 16, b"\x60" + b"\x00" * 10):
    s.sendto(junk, ("tla", 0x0800))
PY
in_a python3 "$tmp/inject.py"
sleep 0.2
check "That A still reaches B after junk" in_a ping -q -c 1 -W 2 10.77.0.2 >/dev/null
stop
check "That 4 malformed packets were counted and dropped" bash -c "[ '$(val up_drop_malformed "$tmp/stats")' = 4 ]"

start --profile serial38400 --vj --pcap "$tmp/line.pcap" --queue 50p
in_b python3 -c "
import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.settimeout(30); s.bind(('10.77.0.2', 7001)); s.listen(1); c, _ = s.accept(); c.settimeout(30); n = 0
while True:
    b = c.recv(4096)
    if not b: break
    n += len(b)
open('$tmp/got', 'w').write(str(n))" &
srv=$!; sleep 0.5
in_a timeout 40 python3 -c "
import socket; s = socket.create_connection(('10.77.0.2', 7001), timeout=30); s.sendall(b'x' * 30000); s.close()"
wait $srv
stop
check "That 30000 bytes cross a serial line with PPP framing and VJ compression" bash -c "[ \"\$(cat $tmp/got)\" = 30000 ]"
check "That VJ compressed most TCP headers" within "$(val up_vj_compressed "$tmp/stats")" 20 1e9
# wire = compressed packets + 8 bytes of PPP framing each + stuffing; bytes = compressed + saved header bytes
framing=$(( $(val up_wire_bytes "$tmp/stats") - $(val up_bytes "$tmp/stats") + $(val up_vj_hdr_bytes_in "$tmp/stats") - $(val up_vj_hdr_bytes_out "$tmp/stats") ))
check "That each frame on the wire carries at least 8 bytes of PPP framing ($framing B for $(val up_pkts "$tmp/stats") packets)" \
    within "$framing" "$(( 8 * $(val up_pkts "$tmp/stats") ))" 1e9
start --profile serial38400 --vj --loss 3% --queue 50p --seed 3
in_b python3 -c "
import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.settimeout(30); s.bind(('10.77.0.2', 7001)); s.listen(1); c, _ = s.accept(); c.settimeout(30); n = 0
while True:
    b = c.recv(4096)
    if not b: break
    n += len(b)
open('$tmp/got', 'w').write(str(n))" &
srv=$!; sleep 0.5
in_a timeout 40 python3 -c "
import socket; s = socket.create_connection(('10.77.0.2', 7001), timeout=30); s.sendall(b'y' * 20000); s.close()"
wait $srv
stop
check "That TCP recovers over a lossy VJ-compressed serial line (20000 bytes arrive)" bash -c "[ \"\$(cat $tmp/got)\" = 20000 ]"
check "That the VJ decompressor tossed packets after losses until resync" \
    within "$(( $(val up_vj_tossed "$tmp/stats") + $(val down_vj_tossed "$tmp/stats") ))" 1 1e9
if command -v tcpdump >/dev/null; then
    check "That tcpdump reads the pcap file and sees the TCP segments" \
        bash -c "tcpdump -nr '$tmp/line.pcap' 2>/dev/null | grep -c '10.77.0.1.* > 10.77.0.2.7001' | grep -qv '^0$'"
else
    echo "SKIP: tcpdump is not installed, pcap not checked"
fi
check "That the emulator reported no sanitizer error" bash -c "! grep -E -q 'runtime error|Sanitizer' $tmp/err"
summary
