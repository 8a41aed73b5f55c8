#!/usr/bin/env python3
"""bulk.py -- bulk TCP goodput across an emulated link: a fixed number of bytes, timed at the
receiver from accept to EOF (a window in the middle of a transfer over a lossy link would
count out-of-order data released in bursts). Used by tests/integration/emu_vj.sh.
`bulk.py recv ADDR PORT` prints goodput_Bps=N, bytes=N, secs=S (lines); `bulk.py send ADDR PORT BYTES`."""
import socket, sys, time

def recv(addr, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(1); s.settimeout(120)
    c, _ = s.accept(); c.settimeout(120)
    t0 = time.monotonic(); n = 0
    while True:
        b = c.recv(65536)
        if not b: break
        n += len(b)
    t = time.monotonic() - t0
    print("goodput_Bps=%.1f\nbytes=%d\nsecs=%.3f" % (n / t, n, t))

def send(addr, port, nbytes):
    s = socket.create_connection((addr, port), timeout=120)
    buf = bytes(range(256)) * 64                  # mixed bytes: some need PPP stuffing
    left = nbytes
    while left > 0:
        k = s.send(buf[:min(left, len(buf))]); left -= k
    s.close()

if __name__ == "__main__":
    if sys.argv[1] == "recv": recv(sys.argv[2], int(sys.argv[3]))
    else: send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
