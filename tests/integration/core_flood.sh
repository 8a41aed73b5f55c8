#!/usr/bin/env bash
# core_flood.sh -- a hostile client that asks for the whole root's pixels (GetImage) as fast
# as it can and never reads a reply is cut off alone, and the X server lives: it never holds
# more than the display side's bound of replies for it (SERVER_OWED_MAX), and every other
# client carries on. Run on a busy machine (two spinning processes on the two cores), where
# an X server made to hold GBs for one client has crashed. A probe made directly on the X
# server must answer within 1 s throughout.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
FLOOD_SECONDS=${FLOOD_SECONDS:-10}

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb x && xl_start_pair p x || { fail "That an Xvfb and a tincan pair start"; summary; exit 1; }

rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
base_kb=$(rss_kb "$x_pid")

xl_bg p xlogo -geometry 100x100+10+10
logo=$XL_LAST
xl_wait_window x '^xlogo$' || fail "That xlogo maps through tincan before the flood"

# Busy cores: the crash came on a loaded machine.
for i in 1 2; do (while :; do :; done) & xl_track $!; done
rm -f "$XL_TMP/flood.out"
xl_bg p "$XL_BIN/xgetflood" >"$XL_TMP/flood.out"
flood=$XL_LAST

slow=0 probes=0 peak_kb=$base_kb
deadline=$((SECONDS + FLOOD_SECONDS))
while [ "$SECONDS" -lt "$deadline" ]; do
    probes=$((probes + 1))
    xl_on x timeout 1 xdpyinfo -queryExtensions >/dev/null 2>&1 || slow=$((slow + 1))
    r=$(rss_kb "$x_pid"); [ -n "$r" ] && [ "$r" -gt "$peak_kb" ] && peak_kb=$r
    sleep 0.2
done

check "That the X server is alive after the flood" kill -0 "$x_pid"
check "That the X server answered every direct probe within 1 s ($slow of $probes did not)" test "$slow" -eq 0
growth_mb=$(( (peak_kb - base_kb) / 1024 ))
# The bound is 16 MiB of replies; the server's own copies and buffers add to that.
check "That the X server held at most 64 MiB more for the flood (${growth_mb} MiB)" test "$growth_mb" -le 64
check "That the flooding client was cut off" xl_wait_exit "$flood" 10
check "That the app side said why it cut the client off" \
    grep -q 'client asked for more replies than it reads' "$p_app_log"
check "That xlogo is still alive" kill -0 "$logo"
new_client() { xl_on p timeout 10 xdpyinfo -queryExtensions >/dev/null; }
check "That a new client is served through tincan after the flood" new_client
check "That xlogo's window is still on the screen" xl_has_window x '^xlogo$'
kill "$logo"
xl_stop_pair p
check "That the app side exits 0" test "$p_app_rc" = 0
check "That the display side exits 0" test "$p_disp_rc" = 0
check "That neither half reported a sanitizer error" xl_sanitizer_clean "$p_app_log" "$p_disp_log"
summary
