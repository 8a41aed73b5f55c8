#!/bin/bash
# capture_builtin_dict.sh OUTDIR -- one tincan session on a private Xvfb running a few
# small X programs (none of bench/compare's workloads), ended cleanly so both halves save
# the session's streams in OUTDIR/cache (docs/PROTOCOL.md 2.2). tools/gen_builtin_dict.py
# turns those into src/link/dict_builtin.c. Needs Xvfb and x11-apps.
set -eu
OUT=$(realpath -m "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TB=$ROOT/build/tincan
rm -rf "$OUT"; mkdir -p "$OUT/cache"; chmod 700 "$OUT/cache"
exec 3>"$OUT/dispfd"
Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp -noreset >"$OUT/xvfb.log" 2>&1 &
XPID=$!
for _ in $(seq 50); do [ -s "$OUT/dispfd" ] && break; sleep 0.1; done
XD=$(cat "$OUT/dispfd")
SOCK=$OUT/link.sock
touch "$OUT/xauth"
XAUTHORITY=/dev/null "$TB" display --link-listen "unix:$SOCK" --display ":$XD" --link-speed modem \
    --cache-dir "$OUT/cache" 2>"$OUT/display.log" &
DPID=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
"$TB" app --link-connect "unix:$SOCK" --xauthority "$OUT/xauth" --link-speed modem \
    --cache-dir "$OUT/cache" >"$OUT/app.out" 2>"$OUT/app.log" &
APID=$!
for _ in $(seq 50); do grep -q DISPLAY= "$OUT/app.out" 2>/dev/null && break; sleep 0.1; done
export DISPLAY=$(sed -n 's/.*DISPLAY=\(:[0-9]*\).*/\1/p' "$OUT/app.out" | head -1) XAUTHORITY=$OUT/xauth
xwininfo -root >/dev/null
xprop -root >/dev/null
for prog in "xcalc" "xedit" "xbiff" "xload" "xmessage tincan"; do
    $prog & P=$!
    sleep 1.5
    kill $P; wait $P || true
done
sleep 0.5
kill $APID; wait $APID || true
sleep 0.5
kill $DPID $XPID 2>/dev/null || true
wait 2>/dev/null || true
ls -l "$OUT/cache"
