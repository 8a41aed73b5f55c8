#!/usr/bin/env python3
"""streamprobe.py -- measures a stream relay with plain sockets: bulk goodput per direction,
request/response round-trip time, half-close forwarding. Used by tests/integration/emu_stream.sh
and bench/emu/run.sh; prints key=value lines."""
import argparse, os, socket, sys, threading, time

def parse(addr):
    if addr.startswith("unix:"):
        return socket.AF_UNIX, addr[5:]
    host, port = addr.rsplit(":", 1)
    return socket.AF_INET, (host, int(port))

def connect(addr):
    fam, a = parse(addr)
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.connect(a)
    if fam == socket.AF_INET:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

def listen(addr):
    fam, a = parse(addr)
    if fam == socket.AF_UNIX and os.path.exists(a):
        os.unlink(a)
    s = socket.socket(fam, socket.SOCK_STREAM)
    if fam == socket.AF_INET:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(a)
    s.listen(8)
    return s

def recv_all(s, limit=None):
    """Reads until EOF; returns (bytes, time of first byte, time of last byte)."""
    n, t_first, t_last = 0, None, None
    while True:
        b = s.recv(65536)
        if not b:
            return n, t_first, t_last
        now = time.monotonic()
        t_first = t_first or now
        t_last = now
        n += len(b)

def bulk(args):
    """Sends --bytes through the relay in direction up (client->server) or down."""
    srv = listen(args.server)
    result = {}
    def serve():
        c, _ = srv.accept()
        if args.direction == "up":
            result["n"], result["t_first"], result["t_last"] = recv_all(c)
            c.close()
        else:
            send_bytes(c, args.bytes)
            c.shutdown(socket.SHUT_WR)
            c.recv(1)
            c.close()
    th = threading.Thread(target=serve); th.start()
    cl = connect(args.relay)
    t0 = time.monotonic()
    if args.direction == "up":
        send_bytes(cl, args.bytes)
        cl.shutdown(socket.SHUT_WR)
        cl.recv(1)
        th.join()
    else:
        result["n"], result["t_first"], result["t_last"] = recv_all(cl)
        cl.close()
        th.join()
    n, tf, tl = result["n"], result["t_first"], result["t_last"]
    print(f"bytes={n}")
    print(f"first_byte_s={tf - t0:.6f}")
    print(f"last_byte_s={tl - t0:.6f}")
    if tl > tf:
        print(f"goodput_bps={(n * 8) / (tl - tf):.0f}")

def send_bytes(s, n):
    block = b"x" * 65536
    while n > 0:
        k = s.send(block[:min(n, len(block))])
        n -= k

def rtt(args):
    """Echo server behind the relay; times --count small round trips."""
    srv = listen(args.server)
    def serve():
        c, _ = srv.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1) if c.family == socket.AF_INET else None
        while True:
            b = c.recv(4096)
            if not b:
                break
            c.sendall(b)
        c.close()
    th = threading.Thread(target=serve); th.start()
    cl = connect(args.relay)
    samples = []
    for _ in range(args.count):
        t0 = time.monotonic()
        cl.sendall(b"p" * args.size)
        got = 0
        while got < args.size:
            got += len(cl.recv(4096))
        samples.append(time.monotonic() - t0)
        time.sleep(args.gap)
    cl.shutdown(socket.SHUT_WR)
    eof = cl.recv(1)
    cl.close(); th.join()
    samples.sort()
    print(f"rtt_min_ms={samples[0]*1e3:.3f}")
    print(f"rtt_median_ms={samples[len(samples)//2]*1e3:.3f}")
    print(f"rtt_max_ms={samples[-1]*1e3:.3f}")
    print(f"eof_forwarded={1 if eof == b'' else 0}")

def halfclose(args):
    """Client sends a request then half-closes; server answers after reading EOF.
    Succeeds only if EOF travels through the relay in both directions, in order."""
    srv = listen(args.server)
    ok = {}
    def serve():
        c, _ = srv.accept()
        n, _, _ = recv_all(c)           # returns only when the client's FIN arrived
        c.sendall(b"got %d" % n)
        c.shutdown(socket.SHUT_WR)
        ok["server_eof"] = c.recv(1) == b""
        c.close()
    th = threading.Thread(target=serve); th.start()
    cl = connect(args.relay)
    cl.sendall(b"q" * 1000)
    cl.shutdown(socket.SHUT_WR)
    reply = b""
    while True:
        b = cl.recv(100)
        if not b:
            break
        reply += b
    cl.close(); th.join()
    print(f"reply={reply.decode()}")
    print(f"halfclose_ok={1 if reply == b'got 1000' else 0}")

def backpressure(args):
    """The server never reads; the client writes for --seconds. Prints how much the client
    got rid of; the relay's own counters tell how much it took in."""
    srv = listen(args.server)
    held = []
    def serve():
        c, _ = srv.accept()
        held.append(c)
    th = threading.Thread(target=serve); th.start()
    cl = connect(args.relay)
    cl.setblocking(False)
    sent, t_end = 0, time.monotonic() + args.seconds
    block = b"b" * 4096
    while time.monotonic() < t_end:
        try:
            sent += cl.send(block)
        except BlockingIOError:
            time.sleep(0.01)
    th.join()
    print(f"client_sent={sent}")
    cl.close()
    for c in held:
        c.close()

p = argparse.ArgumentParser()
p.add_argument("what", choices=["bulk", "rtt", "halfclose", "backpressure"])
p.add_argument("--seconds", type=float, default=2.0)
p.add_argument("--relay", required=True)
p.add_argument("--server", required=True)
p.add_argument("--bytes", type=int, default=1000000)
p.add_argument("--direction", choices=["up", "down"], default="up")
p.add_argument("--count", type=int, default=20)
p.add_argument("--size", type=int, default=32)
p.add_argument("--gap", type=float, default=0.01)
args = p.parse_args()
{"bulk": bulk, "rtt": rtt, "halfclose": halfclose, "backpressure": backpressure}[args.what](args)
