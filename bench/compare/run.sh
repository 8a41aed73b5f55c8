#!/bin/sh
# run.sh -- builds the benchmark's helpers and compares raw X, zlib (ssh -C), nxproxy and
# tincan on the same workloads; writes results.{json,csv,md} and report.html.
# usage: bench/compare/run.sh [--quick] [--link 256k/20ms] [--modes count,slow] [...]
# A full run writes into bench/compare/ (the numbers docs/BENCHMARKS.md quotes);
# --quick writes into build/compare/quick/. See bench/compare/README.md.
set -e
cd "$(dirname "$0")/../.."
HERE=bench/compare
BIN=build/compare
OUT=$HERE
prev=
GIVEN=
for a in "$@"; do
    [ "$a" = "--quick" ] && OUT=$BIN/quick
    [ "$prev" = "--out" ] && OUT=$a GIVEN=1
    case $a in --out=*) OUT=${a#--out=} GIVEN=1 ;; esac
    prev=$a
done
mkdir -p "$BIN" "$OUT"
if [ ! -x build/tincan ] || [ ! -x build/tincan-link ]; then make build/tincan build/tincan-link; fi
CFLAGS="-std=c11 -O2 -Wall -Wextra"
XCB="$(pkg-config --cflags --libs xcb)"
for h in zrelay pen mapwait; do
    if [ ! -x "$BIN/$h" ] || [ "$HERE/$h.c" -nt "$BIN/$h" ]; then
        case $h in zrelay) LIBS=-lz ;; *) LIBS=$XCB ;; esac
        cc $CFLAGS -o "$BIN/$h" "$HERE/$h.c" $LIBS
    fi
done
status=0
if [ -n "$GIVEN" ]; then set -- "$@"; else set -- "$@" --out "$OUT"; fi
python3 "$HERE/compare.py" "$@" || status=$?
[ -s "$OUT/results.json" ] || exit $status
python3 "$HERE/report.py" --in "$OUT/results.json" --md "$OUT/results.md" --html "$OUT/report.html"
exit $status
