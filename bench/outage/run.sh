#!/usr/bin/env bash
# run.sh -- how tincan lives through outages (issue 13, docs/BENCHMARKS.md "Outages"): over a
# tincan-link stream relay (256 kbit/s with 20 ms one way, and the satellite profile), with
# a client making a GetImage round trip every 100 ms, an xclock ticking and a client
# drawing, it measures:
#   notice_s     a silent link (the relay frozen with SIGSTOP): from the freeze to the app
#                side's "link lost" line;
#   restore_s    the relay killed, restarted after OUTAGE_S: from the restart to the next
#                round trip the client completes (redial backoff + handshake + a round trip);
#   replayed     stream bytes sent again at the resume, both sides together, per outage.
# usage: bench/outage/run.sh [--tincan-bin DIR] [--runs N] [--outage SECONDS] [--out DIR]
set -u
cd "$(dirname "$0")/../.."
TB=build RUNS=3 OUTAGE_S=3 OUT=build/outage
while [ $# -gt 0 ]; do
    case $1 in
    --tincan-bin) TB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --outage) OUTAGE_S=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--tincan-bin DIR] [--runs N] [--outage SECONDS] [--out DIR]" >&2; exit 2 ;;
    esac
done
[ -x "$TB/tincan" ] && [ -x "$TB/tincan-link" ] || make build/tincan build/tincan-link >/dev/null
mkdir -p "$OUT"
cc -O2 -o "$OUT/xrtloop" tests/clients/xrtloop.c -lxcb || exit 1
cc -O2 -o "$OUT/xflood" tests/clients/xflood.c -lxcb || exit 1
T=$(mktemp -d /tmp/tincan-outage.XXXXXX)
PIDS=()
cleanup() { kill "${PIDS[@]}" 2>/dev/null; kill -CONT "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
now() { date +%s.%N; }
wait_for() { local d=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $d ] && return 1; sleep 0.02; done; }
count() { grep -c "$1" "$2" 2>/dev/null || true; }

Xvfb :77 -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 & PIDS+=($!)
sleep 1
results=$OUT/results.md
printf '| link | run | notice a silent link, s | restore, s | bytes sent again (both sides) |\n|---|--:|--:|--:|--:|\n' >"$results"
for link in "256k-20ms:--rate 256k --delay 20ms" "satellite:--profile satellite"; do
    name=${link%%:*} opts=${link#*:}
    for run in $(seq 1 "$RUNS"); do
        rm -f "$T"/*.sock "$T"/*.log "$T"/rt.out
        relay() { # shellcheck disable=SC2086
            "$TB/tincan-link" stream --listen "unix:$T/l.sock" --connect "unix:$T/d.sock" $opts 2>>"$T/relay.log" &
            RELAY=$!; PIDS+=($RELAY); wait_for 10 test -S "$T/l.sock"; }
        DISPLAY=:77 "$TB/tincan" display --link-listen "unix:$T/d.sock" --stats --no-cache 2>"$T/disp.log" & D=$!; PIDS+=($D)
        wait_for 10 grep -q 'waiting for the app side' "$T/disp.log"
        relay
        "$TB/tincan" app --link-connect "unix:$T/l.sock" --display-number 78 --xauthority "$T/xa" --stats --no-cache \
            >/dev/null 2>"$T/app.log" & A=$!; PIDS+=($A)
        wait_for 10 grep -q 'link up' "$T/app.log"
        DISPLAY=:78 XAUTHORITY=$T/xa xclock -update 1 & PIDS+=($!)
        DISPLAY=:78 XAUTHORITY=$T/xa "$OUT/xflood" 64 64 >/dev/null & FL=$!; PIDS+=($FL)
        DISPLAY=:78 XAUTHORITY=$T/xa "$OUT/xrtloop" 100000 100 -t >"$T/rt.out" & RT=$!; PIDS+=($RT)
        sleep 3
        # A silent link: frozen relay.
        t0=$(now); kill -STOP "$RELAY"
        wait_for 30 test "$(count 'link lost' "$T/app.log")" -ge 1
        notice=$(echo "$(now) - $t0" | bc)
        old=$RELAY
        relay # a new route; the frozen one thaws later
        wait_for 60 test "$(count 'link back' "$T/app.log")" -ge 1
        kill -CONT "$old"; kill "$old"
        sleep 3
        # A closed link, back after OUTAGE_S.
        kill -KILL "$RELAY"
        wait_for 30 test "$(count 'link lost' "$T/app.log")" -ge 2
        sleep "$OUTAGE_S"
        t1=$(now); relay
        last=$(tail -1 "$T/rt.out" | cut -d' ' -f1)
        wait_for 60 bash -c "[ \"\$(tail -1 '$T/rt.out' | cut -d' ' -f1)\" -gt $last ]"
        first=$(awk -v t="$t1" '$2 > t { print $2; exit }' "$T/rt.out")
        restore=$(echo "${first:-0} - $t1" | bc)
        sleep 2
        kill -USR1 "$A" "$D"; sleep 0.5
        rep=$(grep -h 'link outages:' "$T/app.log" "$T/disp.log" | tail -2 |
              sed -n 's/.*, \([0-9]*\) stream bytes sent again/\1/p' | paste -sd+ | bc)
        printf '| %s | %d | %.2f | %.2f | %s (2 outages) |\n' "$name" "$run" "$notice" "$restore" "${rep:-?}" | tee -a "$results"
        kill "$RT" "$FL" 2>/dev/null; kill "$A"; wait "$A" 2>/dev/null; kill "$D" "$RELAY" 2>/dev/null; wait "$D" 2>/dev/null
    done
done
echo "results in $results"
