#!/usr/bin/env bash
# core_outage_resume_cut.sh -- a new link lost between the two halves' RESUMEs: a relay that
# passes one half's handshake only up to its RESUME (that half reads the other's RESUME and
# takes the link; the other never can), then dies. The halves then count one link apart; the next
# link must still resume the session (before the fix each refused the other's as stale on
# every redial until the grace period ended it). Once with the display side ahead, once
# with the app side ahead; a client making round trips lives through both.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

# cut_relay HOLD: a one-connection relay from l.sock to d.sock that stops passing the HOLD
# half's bytes (app or display) at the first RESUME frame of its handshake, and passes the
# other half's; it ends when either end closes or when killed.
cut_relay() {
    rm -f "$XL_TMP/l.sock"
    python3 - "$XL_TMP/l.sock" "$XL_TMP/d.sock" "$1" <<'PY' 2>>"$XL_TMP/cut_relay.log" &
import os, selectors, socket, sys
listen_path, connect_path, hold = sys.argv[1], sys.argv[2], sys.argv[3]
ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ls.bind(listen_path)
ls.listen(1)
app, _ = ls.accept()
disp = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
disp.connect(connect_path)

class Direction:
    """One way's bytes; the held one is parsed (banner line, then type, channel varint,
    length varint, payload) until its RESUME (0x05) or DICT_OFFER (0x03: a first link)."""
    def __init__(self, src, dst, parse):
        self.src, self.dst, self.parse = src, dst, parse
        self.buf, self.banner, self.held = b"", False, False
    def varint(self, at):
        v = shift = 0
        while at < len(self.buf):
            b = self.buf[at]; at += 1
            v |= (b & 0x7f) << shift; shift += 7
            if not b & 0x80:
                return v, at
        return None, at
    def passable(self):
        """How many bytes of buf may go on now."""
        if not self.parse:
            return len(self.buf)
        at = 0
        if not self.banner:
            nl = self.buf.find(b"\n")
            if nl < 0:
                return 0
            self.banner, at = True, nl + 1
        while at < len(self.buf):
            kind = self.buf[at]
            if kind == 0x05:
                self.held = True
                print("holding the %s side's RESUME" % hold, file=sys.stderr, flush=True)
                return at
            if kind == 0x03:
                self.parse = False
                return len(self.buf)
            _, p = self.varint(at + 1)
            n, p = self.varint(p) if p < len(self.buf) else (None, p)
            if n is None or p + n > len(self.buf):
                return at
            at = p + n
        return at
    def move(self):
        data = self.src.recv(65536)
        if not data:
            return False
        if self.held:
            return True
        self.buf += data
        n = self.passable()
        self.dst.sendall(self.buf[:n])
        # Parsed bytes are gone; the rest (an incomplete frame) stays for the next read.
        self.buf = self.buf[n:]
        return True

ways = {app: Direction(app, disp, hold == "app"), disp: Direction(disp, app, hold == "display")}
sel = selectors.DefaultSelector()
for s in ways:
    sel.register(s, selectors.EVENT_READ)
while all(ways[k.fileobj].move() for k, _ in sel.select()):
    pass
PY
    XL_RELAY=$!; xl_track "$XL_RELAY"
    xl_wait_for 10 test -S "$XL_TMP/l.sock"
}

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
xl_start_xvfb b || { fail "That an Xvfb starts"; summary; exit 1; }
XL_RELAY_OPTS="--rate 4M --delay 5ms"
xl_start_relayed_pair b "" --grace 60 --log-level debug ||
    { fail "That the pair starts"; cat "$XL_TMP"/*.log; summary; exit 1; }
rm -f "$XL_TMP/rt.out"
xl_bg p "$XL_BIN/xrtloop" 1000000 50 >"$XL_TMP/rt.out"; rt=$XL_LAST
session_up() { xl_on p timeout 20 xdpyinfo -queryExtensions >/dev/null 2>&1; }
check "That the session is up through the relay" xl_wait_for 20 session_up
backs() { grep -c 'link back' "$XL_TMP/$1.log"; }

round=0
for ahead in display app; do
    round=$((round + 1))
    behind=$([ "$ahead" = app ] && echo display || echo app)
    app0=$(backs app) disp0=$(backs display)
    kill -KILL "$XL_RELAY"; wait "$XL_RELAY" 2>/dev/null
    # The half ahead is the one whose RESUME is held: it reads the other's and takes the link.
    cut_relay "$ahead"
    ahead0=$([ "$ahead" = app ] && echo "$app0" || echo "$disp0")
    check "That the $ahead side took the link whose other RESUME was held (round $round)" \
        xl_wait_for 20 bash -c "[ \$(grep -c 'link back' '$XL_TMP/$ahead.log') -gt $ahead0 ]"
    sleep 0.5
    behind0=$([ "$behind" = app ] && echo "$app0" || echo "$disp0")
    check "That the $behind side did not (round $round)" [ "$(backs "$behind")" = "$behind0" ]
    kill -KILL "$XL_RELAY"; wait "$XL_RELAY" 2>/dev/null
    xl_relay_start
    # Both take it: the half ahead has counted two links more than before the round, the other one.
    want_app=$((app0 + $([ "$ahead" = app ] && echo 2 || echo 1)))
    want_disp=$((disp0 + $([ "$ahead" = display ] && echo 2 || echo 1)))
    check "That the next link resumes the session on both sides (round $round)" \
        xl_wait_for 30 bash -c "[ \$(grep -c 'link back' '$XL_TMP/app.log') -ge $want_app ] &&
            [ \$(grep -c 'link back' '$XL_TMP/display.log') -ge $want_disp ]"
    check "That clients get answers after it (round $round)" xl_wait_for 30 session_up
done
echo "    app side: $(grep -c 'link lost' "$XL_TMP/app.log") links lost, $(backs app) resumed; display side: $(backs display) resumed"
grep -hE 'refused|stale' "$XL_TMP/app.log" "$XL_TMP/display.log" | sort | uniq -c | sed 's/^/    /'
check "That the round-trip client is alive and was never given a wrong answer" kill -0 "$rt"
kill "$rt"
check "That no half ended or reported an error" bash -c "kill -0 $app $disp && ! grep -qE 'error:|corrupt' '$XL_TMP/app.log' '$XL_TMP/display.log'"
kill -TERM "$app"
check "That the app side exits 0" bash -c "for i in \$(seq 1 150); do kill -0 $app 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
check "That the display side ends with it" xl_wait_exit "$disp" 20
check "That no sanitizer error or tincan report appeared" xl_sanitizer_clean "$XL_TMP/app.log" "$XL_TMP/display.log"
summary
