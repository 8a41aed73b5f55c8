#!/usr/bin/env python3
"""tracebulk.py -- bulk TCP across a trace-driven link, and whether its goodput followed the
trace (tests/integration/emu_trace.sh). Standard library only; times are CLOCK_MONOTONIC,
one clock for every network namespace.
  tracebulk.py recv ADDR PORT SECONDS > LOG   accept one connection, log "t_ns bytes" per 20 ms
  tracebulk.py send ADDR PORT SECONDS [CC]    send as fast as TCP takes it (CC: congestion control)
  tracebulk.py check LOG EPOCH_NS TRACE_SPEC SCALE TOLERANCE
      TRACE_SPEC "2M@0,400k@2000,loop@4000": the rates of the trace and their start (ms);
      for each phase of each period the goodput (skipping the first 600 ms of a phase, where
      TCP and the queue catch up, and its last 100 ms, as the log is read in lumps) must be within TOLERANCE (0.15) of rate x SCALE
      (payload per wire byte). Prints one line per phase; exits 1 if any is off."""
import socket, sys, time

def recv(addr, port, secs):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(1); s.settimeout(60)
    c, _ = s.accept(); c.settimeout(5)
    end = time.monotonic() + secs; n = 0; last = 0
    while time.monotonic() < end:
        try:
            b = c.recv(65536)
        except socket.timeout:
            continue
        if not b: break
        n += len(b)
        t = time.monotonic_ns()
        if t - last >= 20000000:
            print(t, n, flush=True); last = t
    print(time.monotonic_ns(), n, flush=True)

def send(addr, port, secs, cc=None):
    s = socket.socket()
    if cc:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.settimeout(60)
    s.connect((addr, port))
    buf = bytes(range(256)) * 256
    end = time.monotonic() + secs
    try:
        while time.monotonic() < end:
            s.send(buf)
    except OSError:          # the receiver stopped first
        pass
    s.close()

def rate(v):
    m = {"k": 1e3, "M": 1e6}
    return float(v[:-1]) * m[v[-1]] if v[-1] in m else float(v)

def check(log, epoch_ns, spec, scale, tol):
    pts = [tuple(map(int, l.split())) for l in open(log) if l.strip()]
    phases = [(p.split("@")[0], int(p.split("@")[1])) for p in spec.split(",")]
    period = [ms for r, ms in phases if r == "loop"][0]
    phases = [(rate(r), ms) for r, ms in phases if r != "loop"]
    def bytes_at(t):             # received by monotonic time t (linear between log lines)
        prev = (pts[0][0], 0)
        for tt, n in pts:
            if tt >= t:
                if tt == prev[0]: return n
                return prev[1] + (n - prev[1]) * (t - prev[0]) / (tt - prev[0])
            prev = (tt, n)
        return None
    bad = 0; seen = 0
    k = 0
    while True:
        for i, (r, ms) in enumerate(phases):
            end_ms = phases[i + 1][1] if i + 1 < len(phases) else period
            a = epoch_ns + (k * period + ms + 600) * 1000000
            b = epoch_ns + (k * period + end_ms - 100) * 1000000
            if a < pts[0][0]: continue
            na, nb = bytes_at(a), bytes_at(b)
            if na is None or nb is None:
                print("phases seen: %d, off: %d" % (seen, bad))
                sys.exit(1 if bad or seen < 2 else 0)
            got = (nb - na) * 8 / ((b - a) / 1e9); want = r * scale
            ok = abs(got - want) <= tol * want
            seen += 1; bad += not ok
            print("period %d phase %d (%.0f bit/s): goodput %.0f bit/s, %.2f of the trace's %s" % (
                k, i, r, got, got / want, "ok" if ok else "OFF"))
        k += 1

if __name__ == "__main__":
    a = sys.argv
    if a[1] == "recv": recv(a[2], int(a[3]), float(a[4]))
    elif a[1] == "send": send(a[2], int(a[3]), float(a[4]), a[5] if len(a) > 5 else None)
    else: check(a[2], int(a[3]), a[4], float(a[5]), float(a[6]))
