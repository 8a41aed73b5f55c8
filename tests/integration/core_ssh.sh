#!/usr/bin/env bash
# core_ssh.sh -- `tincan ssh HOST COMMAND` with a stand-in ssh (tests/clients/fake-ssh) that
# runs the "remote" side here: programs show on the local Xvfb, ssh gets its options and
# the host, the command's words arrive intact, and its exit status comes back.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"
FAKE_SSH=$XL_ROOT/tests/clients/fake-ssh
export FAKE_SSH_XAUTHORITY=$XL_TMP/remote.xauth FAKE_SSH_LOG=$XL_TMP/ssh.args

xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start"; summary; exit 1; }
# tssh ARGS...: tincan ssh showing on b; stdout and stderr (the remote's output too) in ssh.out.
tssh() {
    XAUTHORITY=$b_auth timeout 60 "$TINCAN" ssh --ssh "$FAKE_SSH" --remote-tincan "$TINCAN" --display "$b_display" \
        "$@" >"$XL_TMP/ssh.out" 2>&1
}

tssh -p 2222 -o BatchMode=yes -l someone remotehost xdpyinfo
rc=$?
check "That xdpyinfo run through tincan ssh succeeds (exit status $rc)" test "$rc" = 0
check "That it talks to the app side's display, as a client of tincan" \
    bash -c "grep -q '^name of display:    :[0-9]' '$XL_TMP/ssh.out' && ! grep -qE '^    MIT-SHM' '$XL_TMP/ssh.out'"
check "That ssh is told not to forward X itself and not to allocate a terminal (-x -T)" \
    bash -c "[ \"\$(head -2 '$FAKE_SSH_LOG' | tr '\n' ' ')\" = '-x -T ' ]"
check "That ssh gets the user's ssh options and the host, in order" \
    bash -c "sed -n 3,9p '$FAKE_SSH_LOG' | tr '\n' ' ' | grep -qx -- '-p 2222 -o BatchMode=yes -l someone remotehost '"
check "That the remote command runs tincan app --stdio, under sh, once it is found there" \
    bash -c "tail -1 '$FAKE_SSH_LOG' | grep -qF -- \"sh -c 'command -v '\\\\''$TINCAN'\\\\''\" &&
             tail -1 '$FAKE_SSH_LOG' | grep -qF -- \"exec '\\\\''$TINCAN'\\\\'' app --stdio\""

tssh remotehost sh -c 'printf "%s|" "$0" "$1" > "$2"; exit 7' "it's" "two words" "$XL_TMP/words"
rc=$?
check "That the remote command's exit status comes back (7, got $rc)" test "$rc" = 7
check "That the command's words arrive intact, quotes and spaces included" \
    test "$(cat "$XL_TMP/words" 2>/dev/null)" = "it's|two words|"

tssh remotehost no-such-program-here
rc=$?
check "That a remote command that does not exist gives status 127 (got $rc)" test "$rc" = 127

# xlogo "remotely", beside the same xlogo run directly on a twin Xvfb.
xl_on a xdotool mousemove 1000 750; xl_on b xdotool mousemove 1000 750
xl_bg a xlogo -geometry 200x200+50+50; direct=$XL_LAST
xl_wait_window a '^xlogo$' && xl_dump_stable a "$XL_TMP/direct.xwd"
rm -f "$XL_TMP/xlogo.pid"
XAUTHORITY=$b_auth "$TINCAN" ssh --ssh "$FAKE_SSH" --remote-tincan "$TINCAN" --display "$b_display" --stats remotehost \
    sh -c 'xlogo -geometry 200x200+50+50 & echo $! > "$0"; wait $!' "$XL_TMP/xlogo.pid" >"$XL_TMP/xlogo.out" 2>&1 &
tssh_pid=$!; xl_track "$tssh_pid"
check "That xlogo run through tincan ssh shows its window on the local display" xl_wait_window b '^xlogo$'
check "That it looks byte for byte as xlogo run directly" \
    xl_dump_until_same b "$XL_TMP/direct.xwd" "$XL_TMP/ssh.xwd" 30
xl_wait_for 10 test -s "$XL_TMP/xlogo.pid"
kill "$(cat "$XL_TMP/xlogo.pid")"
xl_wait_exit "$tssh_pid" 20
rc=$(xl_exit_status "$tssh_pid")
check "That when the remote xlogo is killed, tincan ssh ends with the command's status (143, got $rc)" test "$rc" = 143
check "That the window is gone" xl_wait_for 10 xl_windows_are b '^xlogo$' 0
check "That --stats prints the statistics of both halves" \
    bash -c "grep -q '== tincan app side statistics' '$XL_TMP/xlogo.out' && grep -q '== tincan display side statistics' '$XL_TMP/xlogo.out'"
kill "$direct"

# No tincan on HOST: a message that says what to install, and status 125 (tincan ssh --help).
XAUTHORITY=$b_auth timeout 30 "$TINCAN" ssh --ssh "$FAKE_SSH" --remote-tincan no-tincan-here --display "$b_display" \
    remotehost xlogo >"$XL_TMP/absent.out" 2>&1
rc=$?
check "That with no tincan on HOST, tincan ssh exits with the documented status 125 (got $rc)" test "$rc" = 125
check "That it says tincan is not installed on HOST, and what to install" \
    bash -c "grep -q 'tincan is not installed on remotehost' '$XL_TMP/absent.out' &&
             grep -q \"Install tincan $("$TINCAN" version --porcelain | sed -n 's/^version //p') (link protocol [0-9]*) on remotehost\" '$XL_TMP/absent.out'"
check "That the documented status is in tincan ssh --help" bash -c "'$TINCAN' ssh --help | grep -q '125 if tincan is missing on HOST'"

# A tincan on HOST of another protocol version (a stand-in that sends an older banner).
printf '#!/bin/sh\nprintf "TINCAN 5 app 0 none 24\\n"; exec cat >/dev/null\n' >"$XL_TMP/old-tincan"; chmod +x "$XL_TMP/old-tincan"
XAUTHORITY=$b_auth timeout 30 "$TINCAN" ssh --ssh "$FAKE_SSH" --remote-tincan "$XL_TMP/old-tincan" --display "$b_display" \
    remotehost xlogo >"$XL_TMP/old.out" 2>&1
rc=$?
check "That with tincan of protocol 5 on HOST, tincan ssh exits with status 125 (got $rc)" test "$rc" = 125
check "That it names both protocol versions" \
    bash -c "grep -q 'tincan on remotehost speaks link protocol 5; this tincan (.*) speaks [0-9]' '$XL_TMP/old.out'"
check "That tincan version --porcelain prints the protocol version" \
    bash -c "'$TINCAN' version --porcelain | grep -qx 'protocol [0-9][0-9]*' && '$TINCAN' version | grep -q 'link protocol [0-9]'"

XAUTHORITY=$b_auth timeout 30 "$TINCAN" ssh --ssh false --display "$b_display" remotehost xlogo >"$XL_TMP/false.out" 2>&1
rc=$?
check "That a failing ssh makes tincan ssh fail promptly (status $rc)" test "$rc" != 0 -a "$rc" != 124
# ssh dies in the middle of a session (a connection timed out, a laptop roamed): the
# "remote" app side lives on (fake-ssh runs it apart, as sshd does), tincan ssh runs ssh
# again with `tincan attach` there, and the programs carry on where they stopped: text typed
# into an xterm before and after looks as typed into a direct one; the command's exit
# status still comes back.
type_into() { xl_on "$1" xdotool search --name '^typed2$' windowfocus --sync type --delay 20 "$2"; }
xl_bg a xterm -title typed2 -geometry 30x5+300+300 -e cat; direct=$XL_LAST
xl_wait_window a '^typed2$'
type_into a "before ssh dies, "
type_into a "and after"
export FAKE_SSH_RELAY=1 FAKE_SSH_PIDS=$XL_TMP/ssh.pids
rm -f "$FAKE_SSH_PIDS"
XAUTHORITY=$b_auth "$TINCAN" ssh --ssh "$FAKE_SSH" --remote-tincan "$TINCAN" --display "$b_display" remotehost \
    sh -c 'xterm -title typed2 -geometry 30x5+300+300 -e cat; exit 9' >"$XL_TMP/reattach.out" 2>&1 &
tssh_pid=$!; xl_track "$tssh_pid"
xl_wait_window b '^typed2$'
type_into b "before ssh dies, "
sleep 0.5
kill -KILL "$(head -1 "$FAKE_SSH_PIDS")"
ssh_again() { [ "$(wc -l <"$FAKE_SSH_PIDS")" -ge 2 ]; }
check "That when ssh is killed, tincan ssh runs ssh again" xl_wait_for 20 ssh_again
check "That the session comes back over the new ssh (tincan attach)" \
    xl_wait_for 20 bash -c "[ \$(grep -c 'link back' '$XL_TMP/reattach.out') -ge 2 ]"
type_into b "and after"
sleep 1
check "That the xterm looks as one typed into directly" \
    bash -c "xl_dump() { DISPLAY=\$1 XAUTHORITY=\$2 xwd -silent -id \$(DISPLAY=\$1 XAUTHORITY=\$2 xdotool search --name '^typed2\$' | head -1); };
             for i in \$(seq 1 30); do xl_dump $a_display $a_auth >'$XL_TMP/t.a'; xl_dump $b_display $b_auth >'$XL_TMP/t.b';
             cmp -s '$XL_TMP/t.a' '$XL_TMP/t.b' && exit 0; sleep 0.3; done; exit 1"
xl_on b xdotool search --name '^typed2$' windowkill
xl_wait_exit "$tssh_pid" 30
rc=$(xl_exit_status "$tssh_pid")
check "That after the reattach, tincan ssh still ends with the remote command's status (9, got $rc)" test "$rc" = 9
unset FAKE_SSH_RELAY
kill "$direct"

check "That no process reported a sanitizer error" xl_sanitizer_clean "$XL_TMP"/*.out
summary
