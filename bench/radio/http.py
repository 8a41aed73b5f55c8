#!/usr/bin/env python3
"""http.py -- HTTP/1.0 transfers across a cell: a server that answers every GET /N with N bytes
(a new TCP connection per request, as browsers of 2003 often did), and a client that fetches
/SIZE over and over for SECS seconds. `http.py serve ADDR PORT`; `http.py fetch ADDR PORT SIZE
SECS` prints requests=N bytes=N secs=S and the p50 response time."""
import socket, sys, threading, time

def handle(c):
    try:
        req = b""
        while b"\r\n\r\n" not in req:
            b = c.recv(4096)
            if not b: return
            req += b
        n = int(req.split(b" ")[1][1:])
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % n + b"h" * n)
    except (OSError, ValueError, IndexError):
        pass
    finally:
        c.close()

def serve(addr, port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()

def fetch(addr, port, size, secs):
    t0 = time.monotonic(); n = 0; got = 0; rt = []
    while time.monotonic() - t0 < secs:
        t = time.monotonic()
        try:
            s = socket.create_connection((addr, port), timeout=30)
            s.sendall(b"GET /%d HTTP/1.0\r\n\r\n" % size)
            k = 0
            while True:
                b = s.recv(65536)
                if not b: break
                k += len(b)
            s.close()
        except OSError:
            continue
        n += 1; got += k; rt.append(time.monotonic() - t)
    rt.sort()
    print("requests=%d\nbytes=%d\nsecs=%.2f\nresp_p50_ms=%.1f" % (n, got, time.monotonic() - t0,
          rt[len(rt) // 2] * 1e3 if rt else 0))

if __name__ == "__main__":
    if sys.argv[1] == "serve": serve(sys.argv[2], int(sys.argv[3]))
    else: fetch(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
