#!/usr/bin/env bash
# overhead.sh -- what plain pass-through through the tincan pair costs against a direct X
# connection, on one machine: throughput (PutImage, GetImage) as a ratio, and the latency
# one round trip adds, in microseconds. Builds what it needs; prints a Markdown table.
#
#   bench/core/overhead.sh                            # about 5 minutes on 2 cores
#   ROUNDS=3 X11PERF_ROUNDS=0 bench/core/overhead.sh  # about 1 minute, no x11perf
#
# Results and method: docs/BENCHMARKS.md, "Pass-through overhead (tincan core)".
#
# Each round runs every workload direct, then through each tincan pair, so that a noisy
# machine shifts all of them alike; the tables give medians over rounds, and each ratio is
# the median of the per-round ratios (tincan / direct of the same round).
#
# Environment (defaults in brackets):
#   ROUNDS [5]            interleaved rounds of the xbench workloads
#   PUT_SIDE [512]        PutImage/GetImage are SIDE x SIDE, 32 bpp (1 MiB + header)
#   PUT_REPS [400]        images per put run;   GET_REPS [400] images per get run
#   GET_DEPTH [8]         GetImage requests kept in flight
#   RTT_N [20000]         GetInputFocus round trips per latency run
#   PAR_REPS [16]         images per client in the two-clients-at-once put run; 0 skips it
#   X11PERF_ROUNDS [3]    interleaved x11perf rounds (-putimage500 -getimage500 -copywinwin500); 0 skips
#   VARIANTS ["tcp unix tcp-zstd"]  tincan pairs to measure: link over 127.0.0.1 TCP or a unix
#                         socket with --compress 0 (pure pass-through), and over TCP with the
#                         default --compress (zstd 3)
#   XB_TIMEOUT [120]      seconds before one xbench run counts as hung
#   TINCAN [build/tincan, built]  the tincan binary of the pairs (set: used as it is, not built)
#   BASE_TINCAN [unset]   a second binary (e.g. a build of main): every variant V also runs as
#                         V-base with it, in the same rounds, for a before/after in one run
#   KEEP=1                keep the work directory (logs, raw results) and print its path
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-5}
PUT_SIDE=${PUT_SIDE:-512}
PUT_REPS=${PUT_REPS:-400}
GET_REPS=${GET_REPS:-400}
GET_DEPTH=${GET_DEPTH:-8}
RTT_N=${RTT_N:-20000}
PAR_REPS=${PAR_REPS:-16}
X11PERF_ROUNDS=${X11PERF_ROUNDS:-3}
VARIANTS=${VARIANTS:-tcp unix tcp-zstd}
XB_TIMEOUT=${XB_TIMEOUT:-120}

die() { echo "overhead.sh: $*" >&2; exit 1; }
for tool in Xvfb xauth python3 cc timeout; do command -v $tool >/dev/null || die "needs $tool"; done

# --- build: the plain -O2 tincan (never the sanitized one) and the xbench client ---
if [ -z "${TINCAN:-}" ]; then
    make -C "$ROOT" --no-print-directory build/tincan >&2
    TINCAN=$ROOT/build/tincan
fi
[ -x "$TINCAN" ] || die "no tincan binary at $TINCAN"
BASE_TINCAN=${BASE_TINCAN:-}
[ -z "$BASE_TINCAN" ] || [ -x "$BASE_TINCAN" ] || die "no tincan binary at BASE_TINCAN=$BASE_TINCAN"
XBENCH_DIR=$ROOT/build/bench-core
mkdir -p "$XBENCH_DIR"
XBENCH=$XBENCH_DIR/xbench
if [ ! -x "$XBENCH" ] || [ "$ROOT/bench/core/xbench.c" -nt "$XBENCH" ]; then
    cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$XBENCH" "$ROOT/bench/core/xbench.c" -lxcb
fi

W=$(mktemp -d /tmp/tincan-overhead.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cookie() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }
wait_for() { # wait_for SECONDS COMMAND...: polls COMMAND every 50 ms
    local end=$((SECONDS + $1)); shift
    until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.05; done
}

# --- the real X server: Xvfb on the first free display from :70, with its own cookie ---
XVFB_AUTH=$W/xvfb.auth
: >"$XVFB_AUTH"
XCOOKIE=$(cookie)
XN=
for n in $(seq 70 99); do
    [ -e /tmp/.X$n-lock ] || [ -e /tmp/.X11-unix/X$n ] && continue
    xauth -q -f "$XVFB_AUTH" add ":$n" . "$XCOOKIE"
    Xvfb ":$n" -screen 0 1024x768x24 -nolisten tcp -noreset -extension GLX -auth "$XVFB_AUTH" \
        >"$W/xvfb.log" 2>&1 &
    pid=$!
    if wait_for 10 test -S /tmp/.X11-unix/X$n && kill -0 $pid 2>/dev/null; then
        PIDS+=($pid); XN=$n; break
    fi
    kill $pid 2>/dev/null || true
done
[ -n "$XN" ] || die "could not start Xvfb on any display from :70 to :99 (see $W/xvfb.log)"
wait_for 10 env DISPLAY=:$XN XAUTHORITY="$XVFB_AUTH" "$XBENCH" rtt -n 1 -w 0 >/dev/null ||
    die "Xvfb :$XN does not answer"

# --- one tincan pair per variant; each app side is a display :M of its own ---
"$TINCAN" secret "$W/secret" >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A VDISPLAY VAUTH
start_pair() { # start_pair VARIANT: V or V-base (BASE_TINCAN's binary)
    local v=$1 addr compress=(--compress 0) secret=() bin=$TINCAN
    case $v in *-base) bin=$BASE_TINCAN ;; esac
    case ${v%-base} in
    tcp) addr=127.0.0.1:$(free_port); secret=(--secret-file "$W/secret") ;;
    unix) addr=unix:$W/link-$v.sock ;;
    tcp-zstd) addr=127.0.0.1:$(free_port); secret=(--secret-file "$W/secret"); compress=() ;;
    *) die "unknown variant $v (tcp, unix, tcp-zstd)" ;;
    esac
    DISPLAY=:$XN XAUTHORITY="$XVFB_AUTH" "$bin" display --link-listen "$addr" --display ":$XN" \
        "${secret[@]}" "${compress[@]}" --log-level warn 2>"$W/display-$v.log" &
    PIDS+=($!)
    # No probe of the listener: a stray connection would count as a failed link
    # handshake. `tincan app` retries refused connections for 10 s by itself.
    : >"$W/app-$v.auth"
    "$bin" app --link-connect "$addr" "${secret[@]}" "${compress[@]}" --xauthority "$W/app-$v.auth" \
        --log-level warn >"$W/app-$v.out" 2>"$W/app-$v.log" &
    PIDS+=($!)
    wait_for 15 grep -q '^DISPLAY=' "$W/app-$v.out" || die "tincan app ($v) did not start: $(cat "$W/app-$v.log")"
    VDISPLAY[$v]=$(sed -n 's/^DISPLAY=//p' "$W/app-$v.out")
    VAUTH[$v]=$W/app-$v.auth
    wait_for 15 env DISPLAY="${VDISPLAY[$v]}" XAUTHORITY="${VAUTH[$v]}" "$XBENCH" rtt -n 1 -w 0 >/dev/null ||
        die "no X service through the $v pair: $(cat "$W/app-$v.log" "$W/display-$v.log")"
}
VDISPLAY[direct]=:$XN
VAUTH[direct]=$XVFB_AUTH
if [ -n "$BASE_TINCAN" ]; then
    both=
    for v in $VARIANTS; do both="$both $v-base $v"; done
    VARIANTS=${both# }
fi
for v in $VARIANTS; do start_pair "$v"; done
ALL="direct $VARIANTS"

# --- the interleaved runs; raw results go to $W/results, one line per run ---
R=$W/results
xb() { # xb ROUND VARIANT TEST ARGS...
    local r=$1 v=$2; shift 2
    local out
    out=$(DISPLAY=${VDISPLAY[$v]} XAUTHORITY=${VAUTH[$v]} timeout "$XB_TIMEOUT" "$XBENCH" "$@") ||
        die "xbench $* failed through $v"
    echo "round=$r variant=$v $out" >>"$R"
}
par() { # two put clients at once: MB/s of both together
    local r=$1 v=$2 t0 t1 a b
    t0=$(date +%s.%N)
    DISPLAY=${VDISPLAY[$v]} XAUTHORITY=${VAUTH[$v]} timeout "$XB_TIMEOUT" "$XBENCH" put -s "$PUT_SIDE" -n "$PAR_REPS" -w 0 >"$W/par.a" &
    a=$!
    DISPLAY=${VDISPLAY[$v]} XAUTHORITY=${VAUTH[$v]} timeout "$XB_TIMEOUT" "$XBENCH" put -s "$PUT_SIDE" -n "$PAR_REPS" -w 0 >"$W/par.b" &
    b=$!
    wait $a && wait $b || die "two-client put failed through $v"
    t1=$(date +%s.%N)
    local bytes
    bytes=$(cat "$W/par.a" "$W/par.b" | sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' | awk '{s += $1} END {print s}')
    awk -v r="$r" -v v="$v" -v b="$bytes" -v t0="$t0" -v t1="$t1" \
        'BEGIN {printf "round=%s variant=%s test=put2 bytes=%d secs=%.6f MBps=%.2f\n", r, v, b, t1 - t0, b / (t1 - t0) / 1e6}' >>"$R"
}
{
    echo "# machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
    echo "# tincan $TINCAN: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (src modified)')"
    [ -z "$BASE_TINCAN" ] || echo "# base (variants *-base): $BASE_TINCAN"
    echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$W/header"
: >"$R"
for r in $(seq 1 "$ROUNDS"); do
    echo "round $r/$ROUNDS ..." >&2
    for v in $ALL; do
        xb "$r" "$v" put -s "$PUT_SIDE" -n "$PUT_REPS"
        xb "$r" "$v" get -s "$PUT_SIDE" -n "$GET_REPS" -d "$GET_DEPTH"
        xb "$r" "$v" rtt -n "$RTT_N"
        if [ "$PAR_REPS" -gt 0 ]; then par "$r" "$v"; fi
    done
done
if [ "$X11PERF_ROUNDS" -gt 0 ] && command -v x11perf >/dev/null; then
    for r in $(seq 1 "$X11PERF_ROUNDS"); do
        echo "x11perf round $r/$X11PERF_ROUNDS ..." >&2
        for v in $ALL; do
            DISPLAY=${VDISPLAY[$v]} XAUTHORITY=${VAUTH[$v]} timeout 300 x11perf -repeat 1 -time 1 \
                -putimage500 -getimage500 -copywinwin500 2>&1 |
                sed -n 's/.*(\s*\([0-9.]*\)\/sec): \(.*\)$/\1 \2/p' |
                while read -r rate name; do
                    echo "round=$r variant=$v test=x11perf name=\"$name\" ops=$rate" >>"$R"
                done
        done
    done
fi
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$W/header"
cp "$R" "$XBENCH_DIR/overhead-last.txt"
cat "$W/header" >>"$XBENCH_DIR/overhead-last.txt"

# --- medians and the Markdown tables ---
python3 - "$R" "$W/header" "$ALL" <<'EOF'
import re, statistics as st, sys
from collections import defaultdict
results, header, variants = sys.argv[1], sys.argv[2], sys.argv[3].split()
runs = []
for line in open(results):
    d = dict(m.group(1, 2) if m.group(2) is not None else (m.group(1), m.group(3))
             for m in re.finditer(r'(\w+)=(?:"([^"]*)"|(\S+))', line))
    runs.append(d)
by = defaultdict(dict)  # (test, name) -> variant -> round -> run
for d in runs:
    by[(d['test'], d.get('name', ''))].setdefault(d['variant'], {})[d['round']] = d
tincans = [v for v in variants if v != 'direct']
label = {'direct': 'direct', 'tcp': 'tincan, TCP link', 'unix': 'tincan, unix link',
         'tcp-zstd': 'tincan, TCP link, zstd 3'}
for v in list(label):
    if v != 'direct':
        label[v + '-base'] = label[v] + ' (base)'
med = lambda xs: st.median(xs) if xs else float('nan')
def col(test, name, v, key):
    return [float(d[key]) for d in by[(test, name)].get(v, {}).values()]
def ratio(test, name, v, key):
    dv, tv = by[(test, name)].get('direct', {}), by[(test, name)].get(v, {})
    return med([float(tv[r][key]) / float(dv[r][key]) for r in tv if r in dv and float(dv[r][key])])
def diff(test, v, key):
    dv, tv = by[(test, '')].get('direct', {}), by[(test, '')].get(v, {})
    return med([float(tv[r][key]) - float(dv[r][key]) for r in tv if r in dv])
for l in open(header):
    print(l.rstrip())
n_rounds = len(by[('put', '')].get('direct', {}))
print(f"\n### Throughput (median of {n_rounds} interleaved rounds; MB = 10^6 bytes)\n")
print("| workload | " + " | ".join(f"{label.get(v, v)} MB/s" for v in variants) + " | " +
      " | ".join(f"ratio {label.get(v, v).replace('tincan, ', '')}" for v in tincans) + " |")
print("|---" * (len(variants) + len(tincans) + 1) + "|")
some = next(iter(by[('put', '')].get('direct', {}).values()), {})
side = some.get('side', '?')
names = {'put': f"PutImage {side}x{side} (request bytes)", 'get': f"GetImage {side}x{side}, pipelined (reply bytes)",
         'put2': f"PutImage {side}x{side}, two clients at once"}
for t in ('put', 'get', 'put2'):
    if not by[(t, '')]:
        continue
    print(f"| {names[t]} | " + " | ".join(f"{med(col(t, '', v, 'MBps')):.0f}" for v in variants) + " | " +
          " | ".join(f"{ratio(t, '', v, 'MBps'):.3f}" for v in tincans) + " |")
if by[('rtt', '')]:
    n = next(iter(by[('rtt', '')]['direct'].values()))['count']
    print(f"\n### Round-trip latency: {n} sequential GetInputFocus (µs; median over rounds)\n")
    print("| path | mean | p50 | p99 | added mean | added p50 | added p99 |")
    print("|---|---|---|---|---|---|---|")
    for v in variants:
        row = [med(col('rtt', '', v, k)) for k in ('mean_us', 'p50_us', 'p99_us')]
        add = ["-"] * 3 if v == 'direct' else [f"{diff('rtt', v, k):+.1f}" for k in ('mean_us', 'p50_us', 'p99_us')]
        print(f"| {label.get(v, v)} | " + " | ".join(f"{x:.1f}" for x in row) + " | " + " | ".join(add) + " |")
x = sorted({k[1] for k in by if k[0] == 'x11perf'})
if x:
    nr = len(by[('x11perf', x[0])].get('direct', {}))
    print(f"\n### x11perf -repeat 1 -time 1 (ops/s; median of {nr} interleaved rounds)\n")
    print("| test | " + " | ".join(label.get(v, v) for v in variants) + " | " +
          " | ".join(f"ratio {label.get(v, v).replace('tincan, ', '')}" for v in tincans) + " |")
    print("|---" * (len(variants) + len(tincans) + 1) + "|")
    for name in x:
        print(f"| {name} | " + " | ".join(f"{med(col('x11perf', name, v, 'ops')):.0f}" for v in variants) + " | " +
              " | ".join(f"{ratio('x11perf', name, v, 'ops'):.3f}" for v in tincans) + " |")
EOF
