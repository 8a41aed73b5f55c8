#!/usr/bin/env bash
# bench/radio/classroom.sh -- a classroom over one 802.11b cell: the cell's base is the
# teacher's server and runs a tincan app side per student; each student's display (its own
# namespace, tincan display, Xvfb) is a station. All N students start the same program at
# once; prints per N the time until its window maps on each student's screen and what the
# cell carried. Needs root, Xvfb, xterm. Usage: classroom.sh [LINK [TINCAN [N...]]]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
LINK=${1:-$root/build/tincan-link}
TINCAN=${2:-$root/build/tincan}
shift 2 2>/dev/null
SIZES=${*:-4 8 14}
PROFILE=${CLASSROOM_PROFILE:-dot11b-short}
EXTRA=${CLASSROOM_OPTS:-}             # more cell options, e.g. --station-rate 1=1M (a bad apple)
MAPWAIT=$root/build/compare/mapwait
[ -x "$MAPWAIT" ] || { mkdir -p "$root/build/compare"; cc -std=c11 -O2 -o "$MAPWAIT" "$root/bench/compare/mapwait.c" $(pkg-config --cflags --libs xcb) || exit 1; }
tmp=$(mktemp -d /tmp/classroom.XXXXXX)
PIDS=
LP=
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; [ -n "$LP" ] && kill "$LP" 2>/dev/null; wait 2>/dev/null; [ -n "${CLASSROOM_KEEP:-}" ] && echo "logs in $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
val() { sed -n "s/^$1=//p" "$2" | head -1; }
in_ns() { local n; n=$(val "ns_$1" "$tmp/info"); shift; nsenter --net="$n" "$@"; }
# bg_ns NS COMMAND...: in the background, nsenter a direct child (it execs COMMAND), so the
# pid kept in PIDS is the program's own and killing it kills the program
bg_ns() { local n; n=$(val "ns_$1" "$tmp/info"); shift; nsenter --net="$n" "$@" & PIDS="$PIDS $!"; }
"$TINCAN" secret "$tmp/secret" >/dev/null

# one N: prints a table row
RUN=0
run() {
    local n=$1 i
    RUN=$((RUN + 1))
    local X=$((380 + 20 * RUN))              # displays of this run: Xvfb :X+i, tincan app :X+100+i
    rm -f "$tmp/info" "$tmp"/map* "$tmp"/xa*
    "$LINK" cell --profile "$PROFILE" --stations "$n" --queue 100 $EXTRA --info-file "$tmp/info" --stats-file "$tmp/stats" 2>"$tmp/link.err" &
    LP=$!
    for _ in $(seq 100); do [ -s "$tmp/info" ] && break; sleep 0.05; done
    for i in $(seq "$n"); do
        bg_ns "$i" Xvfb :$((X + i)) -screen 0 1024x768x24 -nolisten tcp -noreset >"$tmp/xvfb$i.log" 2>&1
    done
    for i in $(seq "$n"); do
        for _ in $(seq 100); do [ -S /tmp/.X11-unix/X$((X + i)) ] && [ -e /tmp/.X$((X + i))-lock ] && break; sleep 0.05; done
        bg_ns "$i" env DISPLAY=:$((X + i)) "$TINCAN" display --link-listen 10.78.0.$((1 + i)):7600 \
            --secret-file "$tmp/secret" --no-cache >"$tmp/disp$i.log" 2>&1
        in_ns "$i" env DISPLAY=:$((X + i)) "$MAPWAIT" 90000 | while read -r l; do echo "$l $(date +%s.%N)"; done >"$tmp/map$i" &
        PIDS="$PIDS $!"
    done
    for i in $(seq "$n"); do for _ in $(seq 100); do grep -q ready "$tmp/map$i" 2>/dev/null && break; sleep 0.05; done; done
    local t0; t0=$(date +%s.%N)
    for i in $(seq "$n"); do
        bg_ns base env XAUTHORITY="$tmp/xa$i" "$TINCAN" app --link-connect 10.78.0.$((1 + i)):7600 --secret-file "$tmp/secret" \
            --display-number $((X + 100 + i)) --no-cache --xauthority "$tmp/xa$i" -- \
            xterm -geometry 100x40 -e sh -c 'ls -l /usr/bin | head -300; sleep 60' >"$tmp/app$i.log" 2>&1
    done
    for _ in $(seq 900); do
        local done_n=0
        for i in $(seq "$n"); do grep -q mapped "$tmp/map$i" 2>/dev/null && done_n=$((done_n + 1)); done
        [ "$done_n" = "$n" ] && break
        sleep 0.1
    done
    sleep 3                                   # the listing's output crosses after the map
    kill -USR1 "$LP"; sleep 0.3
    local times="" down=0 up=0 air=0 coll=0
    for i in $(seq "$n"); do
        local t; t=$(sed -n 's/^mapped [^ ]* //p' "$tmp/map$i")
        times="$times $([ -n "$t" ] && python3 -c "print('%.2f' % ($t - $t0))" || echo never)"
        down=$((down + $(val sta${i}_down_bytes "$tmp/stats"))); up=$((up + $(val sta${i}_up_bytes "$tmp/stats")))
        coll=$((coll + $(val sta${i}_collisions "$tmp/stats")))
    done
    air=$(( ($(val base_airtime_us "$tmp/stats") ) / 1000 ))
    local st; st=$(python3 -c "
import sys; v = sorted(float(x) for x in sys.argv[1:] if x != 'never')
print('%.2f / %.2f / %d of %d' % (v[len(v)//2], v[-1], len(v), len(sys.argv) - 1) if v else 'none')" $times)
    printf '| %d | %s | %s | %.1f | %.1f | %d ms | %d |\n' "$n" "$st" "${times# }" \
        "$(python3 -c "print($down / 1e3)")" "$(python3 -c "print($up / 1e3)")" "$air" "$coll"
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    kill "$LP"; wait 2>/dev/null; LP=; PIDS=
}

echo "# classroom over cell --profile $PROFILE $EXTRA, $(date -u +%F), $(nproc) cores: xterm listing /usr/bin per student"
echo
echo "| students | map time p50 / max s, mapped | per student, s | down KB | up KB | base airtime | station collisions |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for n in $SIZES; do run "$n"; done
