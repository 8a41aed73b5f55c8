#!/usr/bin/env bash
# core_info.sh -- `tincan info` against a live pair with several clients: the text and the
# JSON (parsed and checked) name each client's program and pid with its bytes and round
# trips, the link, compression, memory and message classes; another user is refused (by
# the modes, and by the session itself when the modes let them through); SIGUSR1 still
# works; sockets go when their process does.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
# The runtime directory: outside XL_TMP (0700), so that the test can open it to another user.
RUN=$(mktemp -d /tmp/tincan-info-run.XXXXXX)
BIN=$(mktemp -d /tmp/tincan-info-bin.XXXXXX)
trap 'xl_cleanup; rm -rf "$RUN" "$BIN"' EXIT
export XDG_RUNTIME_DIR=$RUN
CTL=$RUN/tincan

xl_start_xvfb a || { fail "That Xvfb starts"; summary; exit 1; }
xl_start_pair p a || { fail "That the pair starts"; summary; exit 1; }
check "That each half has its control socket, mode 0600, in a 0700 directory" bash -c "
    [ \"\$(stat -c %a '$CTL')\" = 700 ] &&
    [ \"\$(stat -c %a '$CTL/app-$p_app_pid.sock')\" = 600 ] && [ \"\$(stat -c %a '$CTL/display-$p_disp_pid.sock')\" = 600 ]"

xl_bg p xlogo -geometry 100x100+0+0; logo=$XL_LAST
xl_bg p xclock -geometry 100x100+200+0 -update 1; clock=$XL_LAST
xl_bg p xeyes -geometry 100x100+400+0; eyes=$XL_LAST
check "That three clients show their windows through the pair" bash -c "
    source '$XL_ROOT/tests/xlib.sh' >/dev/null 2>&1; a_display='$a_display' a_auth='$a_auth'
    xl_wait_window a '^xlogo\$' && xl_wait_window a '^xclock\$' && xl_wait_window a '^xeyes\$'"
# A fourth whose name needs escaping in JSON (its window is named after it, as Xt does).
cp "$(command -v xlogo)" "$BIN/q\"b\\s"
xl_bg p "$BIN/q\"b\\s" -geometry 50x50+600+0; odd=$XL_LAST
sleep 2 # xclock ticks: the link is measured

"$TINCAN" info >"$XL_TMP/info.txt" 2>"$XL_TMP/info.err"
rc=$?
check "That tincan info answers (status $rc)" test "$rc" = 0
check "That it shows both halves, by pid" bash -c "
    grep -q '^tincan app side, pid $p_app_pid: session up' '$XL_TMP/info.txt' &&
    grep -q '^tincan display side, pid $p_disp_pid: session up' '$XL_TMP/info.txt'"
check "That it lists each client with its program's name and pid" bash -c "
    grep -qE ' $logo +xlogo ' '$XL_TMP/info.txt' && grep -qE ' $clock +xclock ' '$XL_TMP/info.txt' &&
    grep -qE ' $eyes +xeyes ' '$XL_TMP/info.txt'"
check "That it shows the link's round trip and the statistics table" bash -c "
    grep -q '^link: .*round trip [0-9.]* ms' '$XL_TMP/info.txt' && grep -q '^== tincan app side statistics' '$XL_TMP/info.txt'"

"$TINCAN" info --json >"$XL_TMP/info.json" 2>>"$XL_TMP/info.err"
rc=$?
check "That tincan info --json answers (status $rc)" test "$rc" = 0
python3 - "$XL_TMP/info.json" "$p_app_pid" "$p_disp_pid" "$logo" "$clock" "$eyes" "$odd" >"$XL_TMP/json.out" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
app_pid, disp_pid, logo, clock, eyes, odd = map(int, sys.argv[2:])
def ok(name, cond):
    print(("PASS: " if cond else "FAIL: ") + name)
s = {x["pid"]: x for x in doc["sessions"]}
ok("That the JSON holds the two halves of the session", sorted(s) == sorted([app_pid, disp_pid]))
app, disp = s.get(app_pid, {}), s.get(disp_pid, {})
ok("That each names its side, its state and the protocol",
   app.get("side") == "app" and disp.get("side") == "display" and app.get("state") == "up" and
   isinstance(app.get("protocol"), int))
cl = {c["program"]: c for c in app.get("clients", [])}
ok("That the app side lists xlogo, xclock and xeyes with their pids",
   cl.get("xlogo", {}).get("pid") == logo and cl.get("xclock", {}).get("pid") == clock and
   cl.get("xeyes", {}).get("pid") == eyes)
ok("That a program named q\"b\\s is escaped in the JSON, and named right", cl.get('q"b\\s', {}).get("pid") == odd)
del cl['q"b\\s']
ok("That each client has bytes both ways and round trips",
   len(cl) == 3 and all(c["link_bytes_out"] > 0 and c["link_bytes_in"] > 0 and c["round_trips"] >= 1 and
                        c["requests"] > 0 for c in cl.values()))
ok("That the clients' round trips add up to no more than the session's",
   sum(c["round_trips"] for c in cl.values()) <= app.get("round_trips", -1))
ok("That the display side lists the same four clients by channel id, without programs (the app side knows them)",
   sorted(c["id"] for c in disp.get("clients", [])) == sorted(c["id"] for c in app.get("clients", [])) and
   all(c["program"] is None and c["link_bytes_in"] > 0 for c in disp.get("clients", [])))
link = app.get("link", {})
ok("That the link's round trip is measured, and bytes crossed it",
   link.get("rtt_ms", 0) > 0 and link.get("bytes_out", 0) > 0 and link.get("bytes_in", 0) > 0)
m = app.get("memory", {})
ok("That memory is shown against the 64 MiB bound",
   m.get("bound_bytes") == 64 << 20 and 0 < m.get("held_bytes", -1) + m.get("peak_bytes", 0) and m.get("peak_bytes", 1 << 40) <= m["bound_bytes"])
c = app.get("compression", {})
ok("That compression ratios are given and below 1",
   0 < c.get("ratio_out", 0) < 1 and 0 < c.get("structured_ratio", 0) < 1)
o = app.get("outages", {})
ok("That outages are counted (none on this link)", o.get("count") == 0 and o.get("current_s") == 0)
names = {(x["kind"], x["name"]): x for x in app.get("classes", [])}
ok("That messages per class are given (CreateWindow requests, three at least)",
   names.get(("request", "CreateWindow"), {}).get("msgs_from_x", 0) >= 3)
kinds = {x["kind"]: x for x in app.get("kinds", [])}
ok("That the per-kind totals add up the classes",
   kinds.get("request", {}).get("bytes_from_x") == sum(x["bytes_from_x"] for x in app["classes"] if x["kind"] == "request"))
PY
cat "$XL_TMP/json.out"
while read -r line; do case $line in PASS:*) T_PASSED=$((T_PASSED+1)) ;; FAIL:*) T_FAILED=$((T_FAILED+1)) ;; esac; done <"$XL_TMP/json.out"
grep -qE '^(PASS|FAIL):' "$XL_TMP/json.out" || fail "That the JSON parses"

check "That tincan info PID asks only that half" bash -c "
    '$TINCAN' info --json $p_disp_pid | python3 -c 'import json, sys; d = json.load(sys.stdin); assert [s[\"pid\"] for s in d[\"sessions\"]] == [$p_disp_pid]'"

kill -USR1 "$p_app_pid"
check "That SIGUSR1 still prints the statistics" xl_wait_for 10 grep -q '== tincan app side statistics' "$p_app_log"

# An outage: the display side stopped for 6 s while xclock draws each second. The app
# side hears nothing: after about 4 s the link is lost (silent), counted from its last
# byte until a new link resumes the session.
outage_json() { "$TINCAN" info --json "$p_app_pid" | python3 -c "import json, sys; o = json.load(sys.stdin)['sessions'][0]['outages']; print(o['$1'])"; }
kill -STOP "$p_disp_pid"
sleep 5.5
"$TINCAN" info "$p_app_pid" >"$XL_TMP/out.txt" 2>&1
now=$(outage_json current_s)
kill -CONT "$p_disp_pid"
check "That while the display side is stopped, the app side reports an outage now (${now} s)" bash -c "
    grep -q 'the link is out now' '$XL_TMP/out.txt' && python3 -c 'import sys; sys.exit(not 1 <= float(\"$now\") < 8)'"
outage_over() { [ "$(outage_json current_s 2>/dev/null)" = 0.0 ]; }
xl_wait_for 10 outage_over
check "That once it runs again, the outage is over and counted once, at least 3 s long" bash -c "
    c=\$('$TINCAN' info --json $p_app_pid | python3 -c \"import json, sys; o = json.load(sys.stdin)['sessions'][0]['outages']; print(o['count'], o['current_s'], o['longest_s'] >= 3)\")
    [ \"\$c\" = '1 0.0 True' ] || { echo \"outages: \$c\"; false; }"

# Another user. The program must be where they may run it.
cp "$TINCAN" "$BIN/tincan"; chmod 755 "$BIN" "$BIN/tincan"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env XDG_RUNTIME_DIR=/nonexistent "$@"; }
as_nobody "$BIN/tincan" info --socket "$CTL/app-$p_app_pid.sock" >"$XL_TMP/nobody.out" 2>&1
rc=$?
check "That another user's tincan info is refused (status $rc)" \
    bash -c "[ $rc = 1 ] && grep -q 'refused: permission denied' '$XL_TMP/nobody.out' && ! grep -q xlogo '$XL_TMP/nobody.out'"
# Even with the directory and the socket opened to them, the session itself refuses.
chmod 711 "$RUN" "$CTL"; chmod 666 "$CTL/app-$p_app_pid.sock"
as_nobody "$BIN/tincan" info --json --socket "$CTL/app-$p_app_pid.sock" >"$XL_TMP/nobody2.out" 2>&1
rc=$?
check "That with the modes opened, the session refuses them by their uid (status $rc)" \
    bash -c "[ $rc = 1 ] && grep -q 'refused: this session belongs to another user' '$XL_TMP/nobody2.out' && ! grep -q xlogo '$XL_TMP/nobody2.out'"
check "That the session logs the refusal" grep -q 'refused `tincan info` from uid 65534' "$p_app_log"
check "That a directory others may enter is not used" bash -c "! '$TINCAN' info 2>&1 | grep -q xlogo && '$TINCAN' info 2>&1 | grep -q 'is not private'"
chmod 700 "$RUN" "$CTL"

# A socket whose process is gone is removed.
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$CTL/app-999999.sock"
"$TINCAN" info >/dev/null 2>&1
check "That a stale socket is removed by tincan info" test ! -e "$CTL/app-999999.sock"

kill "$logo" "$clock" "$eyes" "$odd"
xl_stop_pair p
check "That both halves end cleanly (app $p_app_rc, display $p_disp_rc)" test "$p_app_rc" = 0 -a "$p_disp_rc" = 0
check "That their control sockets are gone" test -z "$(ls "$CTL")"
"$TINCAN" info >"$XL_TMP/none.out" 2>&1
rc=$?
check "That with no session, tincan info says so and exits 1 (got $rc)" \
    bash -c "[ $rc = 1 ] && grep -q 'no tincan session is running' '$XL_TMP/none.out'"
check "That no process reported a sanitizer error" xl_sanitizer_clean "$p_app_log" "$p_disp_log" "$XL_TMP"/*.out "$XL_TMP/info.err"
summary
