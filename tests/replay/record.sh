#!/usr/bin/env bash
# record.sh -- records a real session through tincan for test_replay: an Xvfb, the display
# side connected to it through a recording relay (bench/xcodec/capture.py), the app side,
# and the programs connected to it through a second recording relay. Writes
# tests/replay/NAME.client.cap.zst (the programs' side) and NAME.server.cap.zst (the server's side,
# every connection the display side opened: the observer's, spares', the clients').
# Then run `build/tests/test_replay --bless NAME` to write the link streams' digest (NAME.links).
# A tool for developers; the tests only read its output.
set -euo pipefail
cd "$(dirname "$0")/../.."
NAME=${1:-desktop}
OUT=tests/replay
TINCAN=${TINCAN:-build/tincan}
TMP=$(mktemp -d /tmp/tincan-record.XXXXXX)
export CAPTURE_T0_FILE=$TMP/t0   # both relays on one time base (the replay plays records at their times)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
free_display() { local n=$1; while [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ]; do n=$((n + 1)); done; echo "$n"; }

REAL=$(free_display 71)
Xvfb :$REAL -screen 0 800x600x24 -nolisten tcp -noreset -extension GLX >"$TMP/xvfb.log" 2>&1 & PIDS+=($!)
for _ in $(seq 50); do [ -e /tmp/.X11-unix/X$REAL ] && break; sleep 0.1; done
UP=$(free_display $((REAL + 1)))
python3 bench/xcodec/capture.py "$UP" "$REAL" "$TMP/server.cap" >"$TMP/cap-up.log" 2>&1 & PIDS+=($!)
for _ in $(seq 50); do [ -e /tmp/.X11-unix/X$UP ] && break; sleep 0.1; done

"$TINCAN" display --link-listen "unix:$TMP/link" --display ":$UP" --no-cache --compress 3 ${RECORD_OPTS:-} 2>"$TMP/display.log" & PIDS+=($!)
for _ in $(seq 100); do grep -q 'waiting for the app side' "$TMP/display.log" && break; sleep 0.1; done
"$TINCAN" app --link-connect "unix:$TMP/link" --xauthority "$TMP/app.xauth" --no-cache --compress 3 ${RECORD_OPTS:-} \
    >"$TMP/app.out" 2>"$TMP/app.log" & PIDS+=($!)
for _ in $(seq 100); do grep -q '^DISPLAY=' "$TMP/app.out" && break; sleep 0.1; done
APP=$(sed -n 's/^DISPLAY=:\([0-9]*\).*/\1/p' "$TMP/app.out")
CL=$(free_display $((UP + 1)))
python3 bench/xcodec/capture.py "$CL" "$APP" "$TMP/client.cap" >"$TMP/cap-cl.log" 2>&1 & PIDS+=($!)
for _ in $(seq 50); do [ -e /tmp/.X11-unix/X$CL ] && break; sleep 0.1; done
cookie=$(xauth -f "$TMP/app.xauth" list | awk '{print $3; exit}')
touch "$TMP/cl.xauth"; xauth -q -f "$TMP/cl.xauth" add ":$CL" . "$cookie"

export LANG=C LC_ALL=C XAUTHORITY=$TMP/cl.xauth DISPLAY=:$CL
twm & PIDS+=($!)
sleep 1
xterm -geometry 80x24+10+10 -e sh -c 'head -c 3000 /usr/share/common-licenses/GPL-3; sleep 30' & PIDS+=($!)
sleep 2
xlogo -geometry 200x200+500+50 & PIDS+=($!)
xcalc -geometry +500+300 & PIDS+=($!)
sleep 2
DISPLAY=:$REAL xdotool mousemove 100 100 sleep 0.2 click 1 sleep 0.2 type 'hello'
sleep 1
xdpyinfo >/dev/null
sleep 1
for p in "${PIDS[@]:5}"; do kill "$p" 2>/dev/null || true; done
sleep 2
kill "${PIDS[4]}"; kill "${PIDS[1]}"; sleep 0.5
zstd -q -19 -f "$TMP/client.cap" -o "$OUT/$NAME.client.cap.zst"
zstd -q -19 -f "$TMP/server.cap" -o "$OUT/$NAME.server.cap.zst"
ls -l "$OUT/$NAME".*.cap.zst
