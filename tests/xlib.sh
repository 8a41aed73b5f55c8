# xlib.sh -- shared helpers for the X integration tests (sourced after lib.sh): a temp
# directory cleaned up on exit, fresh Xvfbs with their own cookies, tincan pairs, waiting
# for windows and screens instead of sleeping, and screen dumps.
#
# Names: `xl_start_xvfb a` and `xl_start_pair p ...` set shell variables a_display,
# a_auth, a_pid (and p_app_pid, p_disp_pid, p_app_log, p_disp_log); `xl_on a CMD...` runs
# CMD as a client of that display.

XL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TINCAN=${TINCAN:-$XL_ROOT/build/san/tincan}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LANG=C LC_ALL=C
XL_TMP=$(mktemp -d /tmp/tincan-core.XXXXXX)
export XDG_CACHE_HOME=$XL_TMP/xdg-cache   # tincan's compression cache: per test run, not the user's
XL_PIDS=()
XL_SCREEN=${XL_SCREEN:-1024x768x24}

# Every process a test starts goes through xl_track, so that cleanup ends it (by pid).
xl_track() { XL_PIDS+=("$@"); }

xl_cleanup() {
    local i p
    for ((i = ${#XL_PIDS[@]} - 1; i >= 0; i--)); do
        p=${XL_PIDS[i]}
        kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
    done
    for p in "${XL_PIDS[@]}"; do xl_wait_exit "$p" 3 || kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${XL_KEEP:-}" ] || rm -rf "$XL_TMP"
}
trap xl_cleanup EXIT

# xl_wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds; 1 on timeout.
xl_wait_for() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

# xl_wait_exit PID SECONDS: waits until PID has exited; 1 if it is still running.
xl_gone() { ! kill -0 "$1" 2>/dev/null; }
xl_wait_exit() { xl_wait_for "$2" xl_gone "$1"; }

# xl_exit_status PID: the exit status of a finished child (call after xl_wait_exit).
xl_exit_status() { wait "$1" 2>/dev/null; echo $?; }

# xl_on NAME CMD...: runs CMD as a client of the display called NAME.
xl_on() {
    local d="${1}_display" a="${1}_auth"; shift
    DISPLAY=${!d} XAUTHORITY=${!a} "$@"
}

# xl_bg NAME CMD...: starts CMD in the background as a client of NAME; its pid in XL_LAST.
# (Remove a file before redirecting a background job's output to it and polling it.)
xl_bg() {
    local d="${1}_display" a="${1}_auth"; shift
    DISPLAY=${!d} XAUTHORITY=${!a} "$@" &
    XL_LAST=$!
    xl_track "$XL_LAST"
}

# xl_bg_connected TARGET SCREEN CMD...: as xl_bg, then waits until the Xvfb SCREEN has
# accepted one more connection (directly, or from tincan's display side). Pollers started
# after that cannot take the client's slot, so resource ids come out the same in every run.
# Through a pair the client may take the display side's spare connection while the spare's
# replacement takes the place of an older one (replaced when the root changed: a window
# manager's masks): the server then keeps its count, and the app side has one more client.
xl_bg_connected() {
    local target=$1 screen="${2}_pid" app="${1}_app_pid" before app_before=""; shift 2
    before=$(xl_socket_count "${!screen}")
    [ -n "${!app:-}" ] && app_before=$(xl_socket_count "${!app}")
    xl_bg "$target" "$@"
    xl_wait_for 5 xl_sockets_above "${!screen}" "$before" && return 0
    [ -n "$app_before" ] && xl_wait_for 15 xl_sockets_above "${!app}" "$app_before"
}

# xl_whole_line FILE: FILE holds something and ends with a newline.
xl_whole_line() { [ -s "$1" ] && [ -z "$(tail -c 1 "$1")" ]; }

# xl_start_xvfb NAME: a fresh Xvfb on a free display, requiring its own cookie.
# Always the same settings, so two of them dump byte-identical screens for the same drawing.
xl_start_xvfb() {
    local name=$1 auth=$XL_TMP/$1.xauth cookie n pid
    cookie=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    xauth -q -f "$auth" add :0 . "$cookie" 2>/dev/null # the server takes every cookie in its -auth file
    rm -f "$XL_TMP/$name.dnum"
    Xvfb -displayfd 3 -screen 0 "$XL_SCREEN" -nolisten tcp -noreset -extension GLX -auth "$auth" \
        3>"$XL_TMP/$name.dnum" 2>"$XL_TMP/$name.xvfb.log" &
    pid=$!; xl_track "$pid"
    if ! xl_wait_for 15 xl_whole_line "$XL_TMP/$name.dnum"; then
        echo "xlib: Xvfb $name did not start:"; cat "$XL_TMP/$name.xvfb.log"; return 1
    fi
    n=$(tr -d '\n' <"$XL_TMP/$name.dnum")
    xauth -q -f "$auth" add ":$n" . "$cookie"
    printf -v "${name}_display" ':%s' "$n"
    printf -v "${name}_auth" '%s' "$auth"
    printf -v "${name}_pid" '%s' "$pid"
}

# xl_start_pair NAME XVFB [OPTIONS...]: tincan display beside Xvfb XVFB (a name given to
# xl_start_xvfb) and tincan app joined to it, both given OPTIONS (--secret-file F,
# --compress N, ...). The link is a unix socket, or $XL_LINK if set (127.0.0.1:PORT needs a
# secret); $XL_APP_OPTS, if set, go to the app side only. NAME then names the app side's
# display: xl_on NAME CMD runs CMD through tincan.
xl_start_pair() {
    local name=$1 x=$2; shift 2
    local xd="${x}_display" xa="${x}_auth" link=${XL_LINK:-unix:$XL_TMP/$name.link} pid
    # Old files of the same name must go first: a background job's redirection truncates
    # its file only once the job runs, and a poll could read the previous contents.
    rm -f "$XL_TMP/$name".{display.log,app.log,app.out,app.xauth,link}
    printf -v "${name}_disp_log" '%s' "$XL_TMP/$name.display.log"
    printf -v "${name}_app_log" '%s' "$XL_TMP/$name.app.log"
    XAUTHORITY=${!xa} "$TINCAN" display --link-listen "$link" --display "${!xd}" --stats "$@" \
        2>"$XL_TMP/$name.display.log" &
    pid=$!; xl_track "$pid"; printf -v "${name}_disp_pid" '%s' "$pid"
    if ! xl_wait_for 20 grep -q 'waiting for the app side' "$XL_TMP/$name.display.log"; then
        echo "xlib: the display side of $name did not listen:"; cat "$XL_TMP/$name.display.log"; return 1
    fi
    # shellcheck disable=SC2086 # XL_APP_OPTS: options of the app side only, split on spaces
    "$TINCAN" app --link-connect "$link" --xauthority "$XL_TMP/$name.app.xauth" --stats "$@" ${XL_APP_OPTS:-} \
        >"$XL_TMP/$name.app.out" 2>"$XL_TMP/$name.app.log" &
    pid=$!; xl_track "$pid"; printf -v "${name}_app_pid" '%s' "$pid"
    if ! xl_wait_for 20 grep -q '^DISPLAY=' "$XL_TMP/$name.app.out"; then
        echo "xlib: the app side of $name did not start:"; cat "$XL_TMP/$name.app.log"; return 1
    fi
    printf -v "${name}_display" '%s' "$(sed -n 's/^DISPLAY=//p' "$XL_TMP/$name.app.out")"
    printf -v "${name}_auth" '%s' "$XL_TMP/$name.app.xauth"
}

# xl_relay_start: (re)starts a tincan-link stream relay from $XL_TMP/l.sock to $XL_TMP/d.sock,
# with $XL_RELAY_OPTS (default --rate 2M --delay 20ms); its pid in XL_RELAY.
xl_relay_start() {
    # shellcheck disable=SC2086 # XL_RELAY_OPTS: options, split on spaces
    "${TINCAN_LINK:-$XL_ROOT/build/tincan-link}" stream --listen "unix:$XL_TMP/l.sock" --connect "unix:$XL_TMP/d.sock" \
        ${XL_RELAY_OPTS:---rate 2M --delay 20ms} 2>>"$XL_TMP/relay.log" &
    XL_RELAY=$!; xl_track "$XL_RELAY"
    xl_wait_for 10 test -S "$XL_TMP/l.sock"
}

# xl_start_relayed_pair XVFB SUFFIX OPTIONS...: tincan display beside the Xvfb XVFB, listening
# on $XL_TMP/d.sock; a relay in front of it (xl_relay_start); tincan app through the relay;
# both halves given OPTIONS. Logs in $XL_TMP/displaySUFFIX.log and appSUFFIX.log. Sets disp
# and app (their pids), p_display and p_auth (the app side's display); 1 if it does not start.
xl_start_relayed_pair() {
    local x=$1 sfx=$2; shift 2
    local xd="${x}_display" xa="${x}_auth"
    rm -f "$XL_TMP/d.sock" "$XL_TMP/l.sock" "$XL_TMP/app$sfx.out"
    XAUTHORITY=${!xa} "$TINCAN" display --link-listen "unix:$XL_TMP/d.sock" --display "${!xd}" "$@" \
        2>"$XL_TMP/display$sfx.log" &
    disp=$!; xl_track "$disp"
    xl_wait_for 20 grep -q 'waiting for the app side' "$XL_TMP/display$sfx.log" || return 1
    xl_relay_start || return 1
    "$TINCAN" app --link-connect "unix:$XL_TMP/l.sock" --xauthority "$XL_TMP/app$sfx.xauth" "$@" \
        >"$XL_TMP/app$sfx.out" 2>"$XL_TMP/app$sfx.log" &
    app=$!; xl_track "$app"
    xl_wait_for 20 grep -q '^DISPLAY=' "$XL_TMP/app$sfx.out" || return 1
    p_display=$(sed -n 's/^DISPLAY=//p' "$XL_TMP/app$sfx.out") p_auth=$XL_TMP/app$sfx.xauth
}

# xl_stop_pair NAME: SIGTERM to the app side; both halves should then end by themselves.
# Sets NAME_app_rc and NAME_disp_rc (-1: had to be killed).
xl_stop_pair() {
    local name=$1 a="${1}_app_pid" d="${1}_disp_pid" rc
    kill -TERM "${!a}" 2>/dev/null
    for v in app disp; do
        local p="${name}_${v}_pid"
        if xl_wait_exit "${!p}" 15; then rc=$(xl_exit_status "${!p}"); else kill -KILL "${!p}"; rc=-1; fi
        printf -v "${name}_${v}_rc" '%s' "$rc"
    done
}

# xl_sanitizer_clean LOG...: no ASan, LSan or UBSan report in any of the logs, and no
# internal inconsistency tincan reports ("please report this": e.g. a local answer that
# differs from the server's).
xl_sanitizer_clean() {
    ! grep -lE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|please report this' "$@" 2>/dev/null | grep -q .
}

# xl_build_clients: compiles tests/clients/*.c into $XL_BIN.
XL_BIN=$XL_TMP/bin
xl_build_clients() {
    mkdir -p "$XL_BIN"
    local c
    for c in "$XL_ROOT"/tests/clients/*.c; do
        cc -std=c11 -D_GNU_SOURCE -O1 -Wall -o "$XL_BIN/$(basename "$c" .c)" "$c" -lxcb-render -lxcb -lX11 || return 1
    done
}

# xl_window NAME PATTERN: the id of a visible window whose name matches PATTERN, or nothing.
# (Every helper that asks a server has a timeout: a frozen server fails a test, not CI.)
xl_window() { xl_on "$1" timeout 10 xdotool search --onlyvisible --name "$2" 2>/dev/null | head -1; }
xl_has_window() { [ -n "$(xl_window "$1" "$2")" ]; }
# xl_window_soon NAME PATTERN [SECONDS]: the id of such a window once there is one (a
# manager may unmap a program's window for a moment while it reparents or restacks it,
# even directly); 1 if none shows within SECONDS (default 10).
xl_window_soon() {
    local deadline=$((SECONDS + ${3:-10})) w
    while :; do
        w=$(xl_window "$1" "$2")
        [ -n "$w" ] && { echo "$w"; return 0; }
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}
# xl_wait_window NAME PATTERN [SECONDS]
xl_wait_window() { xl_wait_for "${3:-30}" xl_has_window "$1" "$2"; }
# xl_count_windows NAME PATTERN: how many visible windows have names matching PATTERN.
xl_count_windows() { xl_on "$1" timeout 10 xdotool search --onlyvisible --name "$2" 2>/dev/null | wc -l; }
# xl_windows_are NAME PATTERN N: exactly N such windows.
xl_windows_are() { [ "$(xl_count_windows "$1" "$2")" -eq "$3" ]; }

# xl_dump NAME FILE: the whole screen, in xwd format.
xl_dump() { xl_on "$1" timeout 20 xwd -root -silent -out "$2"; }

# xl_dump_stable NAME FILE [SECONDS]: dumps until three dumps in a row, 0.3 s apart, are
# identical: the drawing has settled. 1 if it never settles.
xl_dump_stable() {
    local name=$1 out=$2 deadline=$((SECONDS + ${3:-30})) same=0
    xl_dump "$name" "$out.prev" || return 1
    while [ "$SECONDS" -lt "$deadline" ]; do
        sleep 0.3
        xl_dump "$name" "$out" || return 1
        if cmp -s "$out" "$out.prev"; then
            same=$((same + 1))
            [ "$same" -ge 2 ] && { rm -f "$out.prev"; return 0; }
        else
            same=0
            cp "$out" "$out.prev"
        fi
    done
    return 1
}

# xl_same_colours A B: two xwd dumps of a 32-bit screen are the same but for the unused
# fourth byte of each pixel (for a program that leaves its own buffers' bytes there, which
# differ from run to run).
xl_same_colours() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
a, b = (open(f, "rb").read() for f in sys.argv[1:3])
head, ncolors, bpp = struct.unpack(">I", a[:4])[0], struct.unpack(">I", a[76:80])[0], struct.unpack(">I", a[44:48])[0]
at = head + 12 * ncolors
ok = len(a) == len(b) and bpp == 32 and a[:at] == b[:at]
for k in range(3):
    ok = ok and a[at + k::4] == b[at + k::4]
sys.exit(0 if ok else 1)
PY
}

# xl_dump_until_same NAME REF FILE [SECONDS]: dumps until the screen is byte-identical to
# REF (a dump from the direct run; with XL_SAME=xl_same_colours, but for the unused fourth
# bytes). 1 on timeout, with the last dump in FILE.
xl_dump_until_same() {
    local name=$1 ref=$2 out=$3 deadline=$((SECONDS + ${4:-30}))
    while :; do
        xl_dump "$name" "$out" && ${XL_SAME:-cmp -s} "$ref" "$out" && return 0
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.3
    done
}

# xl_describe_diff REF OUT: what differs between two screen dumps, for a failure message.
xl_describe_diff() {
    local n
    n=$(cmp -l "$1" "$2" 2>/dev/null | wc -l)
    echo "    $(cmp "$1" "$2" 2>&1 | head -1); $n bytes differ; sizes $(stat -c %s "$1") and $(stat -c %s "$2")"
}

# xl_socket_count PID: how many sockets the process holds open.
xl_socket_count() { find "/proc/$1/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
xl_sockets_above() { [ "$(xl_socket_count "$1")" -gt "$2" ]; }
xl_sockets_are() { [ "$(xl_socket_count "$1")" -eq "$2" ]; }

# xl_free_port: a TCP port on 127.0.0.1 that was free a moment ago.
xl_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# xl_now_ms: the wall clock in ms, as tests/clients/xprobe.c prints it.
xl_now_ms() { date +%s%3N; }

# xl_start_probe SCREEN: tests/clients/xprobe (built by xl_build_clients) as a direct
# client of the Xvfb SCREEN, a GetInputFocus round trip every 0.25 s, into $XL_TMP/SCREEN.probe.
xl_start_probe() {
    rm -f "$XL_TMP/$1.probe"
    xl_bg "$1" "$XL_BIN/xprobe" 250 >"$XL_TMP/$1.probe"
    printf -v "${1}_probe_pid" '%s' "$XL_LAST"
    xl_wait_for 10 grep -q '^ready' "$XL_TMP/$1.probe"
}

# xl_probe_ok SCREEN [FROM_MS TO_MS]: every round trip of SCREEN's probe so far was answered
# within 1 s, and one was answered in the last 1.5 s (the server is not stuck now). Between
# FROM_MS and TO_MS a client of the test held the server grabbed on purpose: a round trip
# waiting then counts from TO_MS. On failure, says what was slow in XL_PROBE_WHY.
xl_probe_ok() {
    XL_PROBE_WHY=$(awk -v from="${2:-0}" -v to="${3:-0}" -v now="$(xl_now_ms)" '
        NF == 2 && $1 ~ /^[0-9]+$/ {
            n++; s = $1; e = $2; last = e
            if (e > from && s < to) s = (s > to ? s : to)
            d = e - s; if (d > max) max = d
            if (d > 1000) { slow++; if (!first) first = $1 }
        }
        END {
            if (!n) { print "no probe answered"; exit }
            if (now - last > 1500) printf "no answer for the last %d ms; ", now - last
            if (slow) printf "%d of %d probes over 1 s (the first started at %s, the slowest %d ms)", slow, n, first, max
            else if (now - last > 1500) printf "%d probes answered before", n
        }' "$XL_TMP/$1.probe")
    [ -z "$XL_PROBE_WHY" ]
}

# xl_probe_stuck SCREEN: SCREEN's probe has had no answer for over 3 s (the server is frozen).
xl_probe_stuck() {
    local last
    last=$(awk 'NF == 2 && $1 ~ /^[0-9]+$/ { e = $2 } END { printf "%.0f\n", e }' "$XL_TMP/$1.probe" 2>/dev/null)
    [ "${last:-0}" -gt 0 ] && [ $(($(xl_now_ms) - last)) -gt 3000 ]
}

# xl_wait_alive SCREEN SECONDS CMD...: as xl_wait_for, but gives up early (1) once SCREEN's
# probe says the server is frozen, so a freeze fails a test in seconds.
xl_wait_alive() {
    local s=$1 deadline=$((SECONDS + $2)); shift 2
    until "$@"; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        xl_probe_stuck "$s" && return 1
        sleep 0.1
    done
}
