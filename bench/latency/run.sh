#!/bin/sh
# run.sh -- the latency benchmarks of tincan (bench/latency/README.md): builds the C helpers
# into build/latency/, runs latency.py, prints a Markdown table and writes
# build/latency/results.{json,md}.
# usage: bench/latency/run.sh [--benchmarks timed,roundtrips,input,memory] [--tincan-bin DIR] [...]
#        bench/latency/run.sh --help
set -e
cd "$(dirname "$0")/../.."
HERE=bench/latency
BIN=build/latency
mkdir -p "$BIN"
for a in "$@"; do
    case $a in -h|--help) exec python3 "$HERE/latency.py" --help ;; esac
done
XCB="$(pkg-config --cflags --libs xcb)" || { echo "run.sh: needs libxcb1-dev and pkg-config" >&2; exit 2; }
# mapwait is bench/compare's (the same job: see a top-level window map at the real server).
for h in ink inkwatch upload ../compare/mapwait; do
    out="$BIN/$(basename "$h")"
    if [ ! -x "$out" ] || [ "$HERE/$h.c" -nt "$out" ]; then
        cc -std=c11 -O2 -Wall -Wextra -o "$out" "$HERE/$h.c" $XCB
    fi
done
TB=build
prev=
for a in "$@"; do
    [ "$prev" = "--tincan-bin" ] && TB=$a
    case $a in --tincan-bin=*) TB=${a#--tincan-bin=} ;; esac
    prev=$a
done
if [ "$TB" = build ] && { [ ! -x build/tincan ] || [ ! -x build/tincan-link ]; }; then
    make build/tincan build/tincan-link
fi
exec nice python3 "$HERE/latency.py" --helpers "$BIN" --out "$BIN" "$@"
