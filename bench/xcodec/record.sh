#!/bin/sh
# record.sh -- records the bench/compare workloads through capture.py into
# build/xcodec/captures/NAME.cap. Uses its own Xvfb :61 and relay display :62.
set -eu
cd "$(dirname "$0")/../.."
REAL=${XC_REAL:-61}
RELAY=${XC_RELAY:-62}
OUT=build/xcodec/captures
mkdir -p "$OUT"
PEN=build/compare/pen
[ -x "$PEN" ] || cc -O2 -o "$PEN" bench/compare/pen.c -lxcb
Xvfb :$REAL -screen 0 1024x768x24 -nolisten tcp -noreset -extension GLX -extension MIT-SHM >/dev/null 2>&1 &
XPID=$!
trap 'kill $XPID 2>/dev/null' EXIT
sleep 1
GPL3=/usr/share/common-licenses/GPL-3

run() { # name, command...
    name=$1; shift
    python3 bench/xcodec/capture.py $RELAY $REAL "$OUT/$name.cap" > "$OUT/$name.log" 2>&1 &
    CP=$!
    sleep 0.5
    DISPLAY=:$RELAY; export DISPLAY
    "$@" >/dev/null 2>&1 || true
    unset DISPLAY
    sleep 0.5
    kill $CP; wait $CP 2>/dev/null || true
    echo "$name: $(stat -c %s "$OUT/$name.cap") bytes"
}
until_mapped() { "$@" & p=$!; sleep 2; kill $p; wait $p 2>/dev/null || true; }
pen() {
    $PEN 600 400 > /tmp/xc-pen.out 2>&1 & p=$!
    sleep 1
    cmd="mousemove 100 100 mousedown 1"
    i=0; while [ $i -lt 300 ]; do cmd="$cmd sleep 0.01 mousemove $((100 + i)) $((100 + (i * 7) % 200))"; i=$((i+1)); done
    DISPLAY=:$REAL xdotool $cmd sleep 0.01 mouseup 1
    wait $p || true
}
run x11perf x11perf -repeat 1 -reps 200 -rect10 -seg10 -ftext -copywinwin10 -putimage10 -oddtilerect10 -circle10
run render x11perf -repeat 1 -reps 200 -aa10text -aa24text -rgb24text -aatrap10
run xterm-text env LANG=C xterm +j -geometry 80x24+0+0 -e bash -c "cat $GPL3; IFS= read -rs -d R -p \$'\\e[6n' _"
run xterm-start env LANG=C xterm -e true
run xlogo until_mapped xlogo
run xclock until_mapped xclock
run pen pen
