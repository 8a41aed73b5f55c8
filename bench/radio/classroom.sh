#!/usr/bin/env bash
# bench/radio/classroom.sh -- a classroom over one 802.11b cell, raw X (zlib) against tincan:
# builds the helpers into build/radio/, runs classroom.py (root: namespaces) and appends its
# JSON lines to OUT (default build/radio/classroom.jsonl); classroom_report.py makes the tables
# and plots. Wrap every run in `flock /tmp/tincan-bench.lock` on a shared machine.
# Usage: classroom.sh [--out FILE] [classroom.py options: --sizes 4,8,14 --paths raw,tincan
#        --opts "--station-rate 1=1M --station-loss 1=20%" --tag badapple ...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/radio/classroom.jsonl
if [ "${1:-}" = --out ]; then out=$2; shift 2; fi
h=$root/build/radio
mkdir -p "$h"
xcb=$(pkg-config --cflags --libs xcb)
build() { [ "$h/$1" -nt "$2" ] || cc -std=c11 -O2 -o "$h/$1" "$2" $xcb ${3:-}; }
build ink "$root/bench/latency/ink.c"
build inkwatch "$root/bench/latency/inkwatch.c"
build mapwait "$root/bench/compare/mapwait.c"
build zrelay "$root/bench/compare/zrelay.c" -lz
[ -x "$root/build/tincan" ] && [ -x "$root/build/tincan-link" ] || make -C "$root" -j2 >/dev/null
nice -n 0 python3 "$here/classroom.py" "$@" | tee -a "$out"
