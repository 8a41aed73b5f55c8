#!/usr/bin/env python3
"""capture.py -- a recording X relay: listens as display :N on a unix socket, forwards each
client to the real display's socket, and writes every read (direction, connection,
timestamp, bytes) to a capture file for eval_xcodec. Test tool only: no auth handling."""
import os, selectors, socket, struct, sys, time, signal

MAGIC = b"TCXCAP1\n"
# record: conn:u32le dir:u8 (0 client->server, 1 server->client, 2 close) t_ns:u64le len:u32le bytes

def main():
    if len(sys.argv) != 4:
        sys.exit("usage: capture.py LISTEN_DISPLAY_NUM REAL_DISPLAY_NUM OUT_FILE")
    listen_n, real_n, out_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    path = "/tmp/.X11-unix/X%d" % listen_n
    if os.path.exists(path):
        os.unlink(path)
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    ls.listen(16)
    out = open(out_path, "wb")
    out.write(MAGIC)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    # Two relays recording one session share a time base: the first writes its start
    # (CLOCK_MONOTONIC ns) to $CAPTURE_T0_FILE, the others read it (tests/replay/record.sh).
    t0 = time.monotonic_ns()
    t0_file = os.environ.get("CAPTURE_T0_FILE")
    if t0_file:
        try:
            t0 = int(open(t0_file).read())
        except (OSError, ValueError):
            with open(t0_file, "w") as f:
                f.write(str(t0))
    peers = {}  # socket -> (peer socket, conn id, dir)
    next_id = [1]
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
    signal.signal(signal.SIGINT, lambda *a: stop.__setitem__(0, True))

    def rec(cid, d, data):
        out.write(struct.pack("<IBQI", cid, d, time.monotonic_ns() - t0, len(data)) + data)

    def close(s):
        if s not in peers:
            return
        other, cid, _ = peers.pop(s)
        peers.pop(other, None)
        for x in (s, other):
            try:
                sel.unregister(x)
            except Exception:
                pass
            x.close()
        rec(cid, 2, b"")
        out.flush()

    print("ready", flush=True)
    while not stop[0]:
        for key, _ in sel.select(0.2):
            s = key.fileobj
            if s is ls:
                c, _ = ls.accept()
                u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                u.connect("/tmp/.X11-unix/X%d" % real_n)
                cid = next_id[0]
                next_id[0] += 1
                peers[c] = (u, cid, 0)
                peers[u] = (c, cid, 1)
                sel.register(c, selectors.EVENT_READ, None)
                sel.register(u, selectors.EVENT_READ, None)
                continue
            if s not in peers:
                continue
            other, cid, d = peers[s]
            try:
                data = s.recv(262144)
            except OSError:
                data = b""
            if not data:
                close(s)
                continue
            rec(cid, d, data)
            other.sendall(data)  # blocking is fine for a test relay
    for s in list(peers):
        close(s)
    out.close()
    os.unlink(path)

if __name__ == "__main__":
    main()
