#!/usr/bin/env bash
# emu_cell.sh -- tincan-link cell mode with real kernel traffic: namespaces of a base and
# stations, ping through the medium, station to station through the base, clean-up after
# SIGKILL, 802.11b TCP goodput of one 11 Mbit/s station, the performance anomaly of a
# 1 + 11 Mbit/s pair, the access point's FIFO against airtime fairness with a bad apple,
# hidden stations (MACA), bulk TCP over the MACA radio. Needs root; skips otherwise.
source "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
LINK=${TINCAN_LINK:-$here/../../build/tincan-link}
BULK=$here/../../bench/emu/bulk.py
if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ]; then
    echo "SKIP: cell mode needs root and /dev/net/tun"; summary; exit 0
fi
for tool in ping nsenter python3; do
    command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; summary; exit 0; }
done
tmp=$(mktemp -d /tmp/emu_cell.XXXXXX)
LP=
cleanup() { [ -n "$LP" ] && kill "$LP" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
val() { sed -n "s/^$1=//p" "$2" | head -1; }
export -f val
within() { python3 -c "import sys; v,lo,hi=map(float,sys.argv[1:]); sys.exit(0 if lo<=v<=hi else 1)" "$@"; }
start() {
    rm -f "$tmp/info"
    "$LINK" cell --info-file "$tmp/info" --stats-file "$tmp/stats" "$@" 2>>"$tmp/err" &
    LP=$!
    for _ in $(seq 100); do [ -s "$tmp/info" ] && break; sleep 0.05; done
    [ -s "$tmp/info" ]
}
stop() { kill "$LP"; wait "$LP" 2>/dev/null; LP=; }
ns() { val "ns_$1" "$tmp/info"; }
in_ns() { local n; n=$(ns "$1"); shift; nsenter --net="$n" "$@"; }
# bulk_start FROM BYTES PORT OUT: FROM sends BYTES to the base; goodput lines in OUT.
# bulk_wait waits for the receivers started so far (not for the emulator).
RECV=
bulk_start() {
    in_ns base python3 "$BULK" recv 10.78.0.1 "$3" >"$4" &
    RECV="$RECV $!"
    sleep 0.3
    in_ns "$1" timeout 120 python3 "$BULK" send 10.78.0.1 "$3" "$2" &
}
bulk_wait() { wait $RECV; RECV=; }
ping_ok() { in_ns "$1" ping -q -c 2 -i 0.2 -W 2 "$2" >/dev/null; }
mbps() { python3 -c "print(round($(val goodput_Bps "$1") * 8 / 1e6, 3))"; }

start --profile dot11b --stations 2
check "That cell mode starts and reports a base and two stations" test -n "$(ns 2)"
check "That station 1 reaches the base through the medium" ping_ok 1 10.78.0.1
check "That station 1 reaches station 2 through the base" ping_ok 1 10.78.0.3
ino=$(stat -L -c %i "$(ns 1)")
stop

start --profile dot11b --stations 2 --leave 2@1s --join 2@2500ms
check "That a station that has left cannot reach the base" bash -c "sleep 1.2; ! nsenter --net='$(ns 2)' ping -q -c 1 -W 1 10.78.0.1 >/dev/null"
check "That it reaches the base again once it has rejoined" bash -c "sleep 0.6; nsenter --net='$(ns 2)' ping -q -c 2 -i 0.2 -W 2 10.78.0.1 >/dev/null"
check "That the other station never noticed" ping_ok 1 10.78.0.1
stop
start --profile dot11b --stations 1
ino=$(stat -L -c %i "$(ns 1)")
kill -9 "$LP"; wait "$LP" 2>/dev/null; LP=
sleep 0.2
check "That after SIGKILL nothing refers to a station's namespace" \
    bash -c "[ \$(ls -l /proc/[0-9]*/ns/net /proc/[0-9]*/fd/ 2>/dev/null | grep -c 'net:\[$ino\]') -eq 0 ]"

# One 11 Mbit/s station, short preamble: 5.65 Mbit/s is the published TCP goodput.
start --profile dot11b-short --stations 1
bulk_start 1 6000000 7101 "$tmp/one"; bulk_wait
stop
g=$(mbps "$tmp/one")
check "That one 11 Mbit/s 802.11b station gets TCP goodput within 5% of 5.65 Mbit/s ($g Mbit/s)" within "$g" 5.37 5.93
check "That the station's MAC retransmitted nothing without noise ($(val sta1_drop_retry "$tmp/stats") retry drops)" \
    bash -c "[ '$(val sta1_drop_retry "$tmp/stats")' = 0 ]"

# A 1 Mbit/s station beside an 11 Mbit/s one: both get about the slow one's share.
start --profile dot11b-short --stations 2 --station-rate 1=1M
bulk_start 1 500000 7102 "$tmp/slow"
bulk_start 2 500000 7103 "$tmp/fast"
bulk_wait
stop
s=$(mbps "$tmp/slow"); f=$(mbps "$tmp/fast")
check "That an 11 Mbit/s station beside a 1 Mbit/s one is dragged below 1.5 Mbit/s ($f Mbit/s; the slow one $s)" \
    within "$f" 0 1.5

# The bad apple downstream: the base floods UDP (1400-byte datagrams, 4 Mbit/s each) to a
# 1 Mbit/s station with 20% frame loss and to an 11 Mbit/s one for 4 s. One FIFO at the
# access point serves them frame by frame in arrival order, so the fast station gets about
# the slow one's rate; airtime fairness gives the fast one half the airtime.
# udp_down TO PORT OUT: station TO counts what arrives in 4 s; the base sends to it.
udp_down() {
    in_ns "$1" timeout 10 python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.78.0.$((1 + $1))', $2)); s.settimeout(1)
n = 0; t_end = time.monotonic() + 4.5
while time.monotonic() < t_end:
    try: n += len(s.recv(2000))
    except socket.timeout: pass
print('goodput_Bps=%.1f' % (n / 4.0))" >"$3" &
    RECV="$RECV $!"
    in_ns base timeout 10 python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b = bytes(1400); t0 = time.monotonic(); k = 0
while time.monotonic() - t0 < 4:
    k += 1; time.sleep(max(0, t0 + k * 1400 * 8 / 4e6 - time.monotonic()))
    try: s.sendto(b, ('10.78.0.$((1 + $1))', $2))
    except OSError: pass" &
}
for q in fifo airtime; do
    start --profile dot11b-short --stations 2 --station-rate 1=1M --station-loss 1=20% --ap-queue $q
    sleep 0.3
    udp_down 1 7110 "$tmp/apple_slow_$q"
    udp_down 2 7111 "$tmp/apple_fast_$q"
    bulk_wait
    stop
done
ff=$(mbps "$tmp/apple_fast_fifo"); fa=$(mbps "$tmp/apple_fast_airtime")
sf=$(mbps "$tmp/apple_slow_fifo"); sa=$(mbps "$tmp/apple_slow_airtime")
check "That with --ap-queue airtime the fast station gets at least twice its rate under one FIFO ($fa against $ff Mbit/s; the slow one $sa and $sf)" \
    python3 -c "import sys; sys.exit(0 if $fa >= 2 * $ff else 1)"
check "That --ap-queue and --hidden refuse the model they do not fit" \
    bash -c "! '$LINK' cell --profile mpad --ap-queue rr 2>/dev/null && ! '$LINK' cell --profile dot11b --stations 2 --hidden 1-2 2>/dev/null"

# Hidden stations over MACA: 1 and 2 cannot hear each other; both still reach the base.
start --profile mpad --stations 2 --hidden 1-2
both_reach() { ping_ok 1 10.78.0.1 && ping_ok 2 10.78.0.1; }
check "That two MACA stations hidden from each other both reach the base" both_reach
stop

# MACA at 256 kbit/s with 512-byte packets: paced by the 4-way exchanges.
start --profile mpad --stations 1 --mtu 576
bulk_start 1 60000 7104 "$tmp/maca"; bulk_wait
stop
k=$(python3 -c "print(round($(val goodput_Bps "$tmp/maca") * 8 / 1e3, 1))")
check "That bulk TCP over the MACA radio stays well under 256 kbit/s ($k kbit/s of payload)" within "$k" 40 160
check "That every MACA data packet went through RTS/CTS or unsolicited DATA ($(val maca_rts "$tmp/stats") RTS)" \
    within "$(val maca_rts "$tmp/stats")" 20 1e9

# VJ per station over MACA: the compressor forgets on a MAC drop, so no desync ever.
start --profile mpad --stations 2 --mtu 512 --vj
bulk_start 1 30000 7105 "$tmp/vj1"
bulk_start 2 30000 7106 "$tmp/vj2"
bulk_wait
stop
check "That VJ over a contended MACA cell compressed the headers ($(val sta1_up_vj_compressed "$tmp/stats") compressed)" \
    within "$(val sta1_up_vj_compressed "$tmp/stats")" 20 1e9
check "That 30000 bytes arrived from each station with VJ" \
    bash -c "[ \"\$(val bytes $tmp/vj1)\" = 30000 ] && [ \"\$(val bytes $tmp/vj2)\" = 30000 ]"
d=0; for k in sta1_up sta1_down sta2_up sta2_down; do d=$((d + $(val ${k}_vj_desync "$tmp/stats"))); done
check "That no packet came out of a decompressor different from what was sent ($d)" test "$d" = 0
check "That the emulator reported no sanitizer error" bash -c "! grep -E -q 'runtime error|Sanitizer' $tmp/err"
summary
