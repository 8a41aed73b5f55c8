#!/usr/bin/env bash
# emu_vj.sh -- VJ header compression (--vj) over serial38400 with MTU 1500 must help TCP, never
# hurt it: bulk goodput with VJ at least that without, at an 8- and a 16-packet queue, with no
# decompressor desync (vj_desync). Needs root; skips otherwise. About a minute: serial rates.
source "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
LINK=${TINCAN_LINK:-$here/../../build/tincan-link}
BULK=$here/../../bench/emu/bulk.py
if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ]; then
    echo "SKIP: packet mode needs root and /dev/net/tun"; summary; exit 0
fi
for tool in nsenter python3; do
    command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; summary; exit 0; }
done
tmp=$(mktemp -d /tmp/emu_vj.XXXXXX)
LP=
cleanup() { [ -n "$LP" ] && kill "$LP" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
val() { sed -n "s/^$1=//p" "$2" | head -1; }
export -f val
BYTES=40000

# bulk NAME LINK-OPTIONS...: BYTES from A to B; leaves goodput in $tmp/NAME.out, stats in $tmp/NAME.stats
bulk() {
    local name=$1; shift
    rm -f "$tmp/info"
    "$LINK" packet --info-file "$tmp/info" --stats-file "$tmp/$name.stats" "$@" 2>>"$tmp/err" &
    LP=$!
    for _ in $(seq 100); do [ -s "$tmp/info" ] && break; sleep 0.05; done
    local ns_a ns_b
    ns_a=$(val ns_a "$tmp/info"); ns_b=$(val ns_b "$tmp/info")
    nsenter --net="$ns_b" python3 "$BULK" recv 10.77.0.2 7002 >"$tmp/$name.out" & local r=$!
    sleep 0.3
    nsenter --net="$ns_a" python3 "$BULK" send 10.77.0.2 7002 $BYTES
    wait $r
    kill "$LP"; wait "$LP" 2>/dev/null; LP=
    val goodput_Bps "$tmp/$name.out"
}
ge() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$@"; }

for q in 8p 16p; do
    plain=$(bulk plain$q --profile serial38400 --mtu 1500 --queue $q)
    vj=$(bulk vj$q --profile serial38400 --mtu 1500 --queue $q --vj)
    check "That $BYTES bytes cross serial38400 at MTU 1500, queue $q, with and without VJ" \
        bash -c "[ \"\$(val bytes $tmp/plain$q.out)\" = $BYTES ] && [ \"\$(val bytes $tmp/vj$q.out)\" = $BYTES ]" 
    check "That with a $q queue VJ goodput is at least that without ($vj >= $plain B/s)" ge "${vj:-0}" "${plain:-1}"
    check "That VJ compressed most data headers despite TCP timestamps ($(val up_vj_compressed "$tmp/vj$q.stats") of $(val up_vj_tcp_pkts "$tmp/vj$q.stats"))" \
        ge "$(val up_vj_compressed "$tmp/vj$q.stats")" "$(( $(val up_vj_tcp_pkts "$tmp/vj$q.stats") * 3 / 4 ))"
    check "That no packet came out of the decompressor different from what was sent ($q, queue drops $(val up_drop_queue "$tmp/vj$q.stats"))" \
        bash -c "[ \"$(val up_vj_desync "$tmp/vj$q.stats")\" = 0 ] && [ \"$(val down_vj_desync "$tmp/vj$q.stats")\" = 0 ]"
done
check "That the emulator reported no sanitizer error" bash -c "! grep -E -q 'runtime error|Sanitizer' $tmp/err"
summary
