#!/usr/bin/env bash
# core_memory.sh -- memory stays bounded under a flood: 20 clients send 1 MiB PutImages and
# one sends 16 MB ones (BIG-REQUESTS) as fast as they can, through a pair joined by a
# 64 kbit/s link (tincan-link stream). For 20 s, the resident memory of both halves
# (VmRSS, and the peak VmHWM) stays under --max-memory 64M; the flooding clients are
# slowed (blocked, as on a slow X server), not killed. Measured on the plain build
# (TINCAN_PLAIN): a sanitizer's own memory would hide tincan's.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
T=${TINCAN_PLAIN:-$TINCAN}
LINK=${TINCAN_LINK:-$XL_ROOT/build/tincan-link}
BOUND_MB=64
SECONDS_FLOOD=${MEMORY_FLOOD_SECONDS:-20}

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb x || { fail "That an Xvfb starts"; summary; exit 1; }

# How fast a flooding client goes straight to the X server, for "slowed" below.
rm -f "$XL_TMP/direct.out"
xl_bg x "$XL_BIN/xflood" 512 512 >"$XL_TMP/direct.out"
sleep 2
kill "$XL_LAST" 2>/dev/null
direct=$(grep -c sent "$XL_TMP/direct.out")

XAUTHORITY=$x_auth "$T" display --link-listen "unix:$XL_TMP/d.sock" --display "$x_display" --stats \
    --max-memory ${BOUND_MB}M --link-speed modem 2>"$XL_TMP/display.log" &
disp=$!; xl_track "$disp"
xl_wait_for 20 grep -q 'waiting for the app side' "$XL_TMP/display.log"
"$LINK" stream --listen "unix:$XL_TMP/l.sock" --connect "unix:$XL_TMP/d.sock" --rate 64k --delay 20ms \
    2>"$XL_TMP/link.log" &
xl_track $!
xl_wait_for 10 test -S "$XL_TMP/l.sock"
"$T" app --link-connect "unix:$XL_TMP/l.sock" --xauthority "$XL_TMP/app.xauth" --stats \
    --max-memory ${BOUND_MB}M --link-speed modem >"$XL_TMP/app.out" 2>"$XL_TMP/app.log" &
app=$!; xl_track "$app"
xl_wait_for 20 grep -q '^DISPLAY=' "$XL_TMP/app.out" || { fail "That the pair starts"; cat "$XL_TMP"/*.log; summary; exit 1; }
p_display=$(sed -n 's/^DISPLAY=//p' "$XL_TMP/app.out") p_auth=$XL_TMP/app.xauth

FLOODS=()
for i in $(seq 1 20); do
    xl_bg p "$XL_BIN/xflood" 512 512 >"$XL_TMP/flood$i.out"; FLOODS+=("$XL_LAST")
done
xl_bg p "$XL_BIN/xflood" 2000 2000 >"$XL_TMP/flood-big.out"; FLOODS+=("$XL_LAST")

# kib PID FIELD: a /proc/PID/status field in KiB (0 once the process is gone).
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
max_app=0 max_disp=0
for ((t = 0; t < SECONDS_FLOOD * 4; t++)); do
    a=$(kib "$app" VmRSS) d=$(kib "$disp" VmRSS)
    [ "${a:-0}" -gt "$max_app" ] && max_app=$a
    [ "${d:-0}" -gt "$max_disp" ] && max_disp=$d
    sleep 0.25
done
hwm_app=$(kib "$app" VmHWM) hwm_disp=$(kib "$disp" VmHWM)
echo "peak resident memory: app side ${max_app} KiB (VmHWM ${hwm_app}), display side ${max_disp} KiB (VmHWM ${hwm_disp}); bound $((BOUND_MB * 1024)) KiB"
check "That the app side stays under the bound (VmHWM ${hwm_app} KiB)" test "${hwm_app:-0}" -gt 0 -a "${hwm_app:-0}" -lt $((BOUND_MB * 1024))
check "That the display side stays under the bound (VmHWM ${hwm_disp} KiB)" test "${hwm_disp:-0}" -gt 0 -a "${hwm_disp:-0}" -lt $((BOUND_MB * 1024))

alive=0 sent=0
for p in "${FLOODS[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
for i in $(seq 1 20); do sent=$((sent + $(grep -c sent "$XL_TMP/flood$i.out"))); done
per_client=$((sent * 2 / (20 * SECONDS_FLOOD)))   # per client per 2 s, as the direct run
echo "1 MiB images: $direct in 2 s straight to the server; through tincan $sent in ${SECONDS_FLOOD} s by 20 clients"
check "That every flooding client is still connected and running ($alive of ${#FLOODS[@]})" test "$alive" = "${#FLOODS[@]}"
check "That the flooding clients are slowed ($per_client per client per 2 s, against $direct straight)" \
    test "$per_client" -lt $(((direct + 3) / 4))
check "That the app side paused reading to stay under the bound" bash -c "kill -USR1 $app; sleep 0.5; grep -q 'reading paused [1-9]' '$XL_TMP/app.log'"

for p in "${FLOODS[@]}"; do kill "$p" 2>/dev/null; done
kill -TERM "$app"
xl_wait_exit "$app" 15
t_end=$SECONDS; xl_wait_exit "$disp" 60; echo "display side ended $((SECONDS - t_end)) s after the app side was told to stop"
check "That both halves end cleanly" xl_gone "$disp"
grep -h '^memory:' "$XL_TMP/app.log" "$XL_TMP/display.log" | tail -2
summary
