#!/usr/bin/env python3
"""pen.py -- pen events from a pad to the server: 16 bytes each at RATE per second over UDP.
Plain: one datagram per event. Coalesced: at most one datagram in flight; events that occur
meanwhile wait and go together in the next one, sent when the server's 1-byte answer says the
last one arrived (the application's stand-in for the radio's delivery callback).
`pen.py server ADDR PORT SECS` prints events=N lat_p50_ms= lat_p99_ms= (event to arrival,
one machine's monotonic clock); `pen.py pad ADDR PORT RATE SECS plain|coalesce`."""
import socket, struct, sys, time

def server(addr, port, secs):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((addr, port)); s.settimeout(secs + 2)
    lat = []
    try:
        while True:
            b, peer = s.recvfrom(65536); now = time.monotonic(); s.settimeout(2)
            for i in range(0, len(b) - 15, 16):
                lat.append(now - struct.unpack('!d', b[i:i + 8])[0])
            s.sendto(b'k', peer)
    except socket.timeout:
        pass
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3 if lat else 0
    print("events=%d\nlat_p50_ms=%.1f\nlat_p99_ms=%.1f" % (len(lat), q(0.5), q(0.99)))

def pad(addr, port, rate, secs, mode):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect((addr, port)); s.setblocking(False)
    t0 = time.monotonic(); k = 0; pending = []; in_flight = False
    while True:
        now = time.monotonic()
        if now - t0 >= secs and not pending: break
        while now - t0 < secs and t0 + k / rate <= now:
            pending.append(struct.pack('!d', t0 + k / rate) + b'\0' * 8); k += 1
        try:
            while s.recv(16): in_flight = False
        except (BlockingIOError, ConnectionRefusedError):
            pass
        if mode == 'plain':
            for e in pending: s.send(e)
            pending = []
        elif pending and not in_flight:
            s.send(b''.join(pending)); pending = []; in_flight = True
        if now - t0 >= secs + 3: break
        time.sleep(0.001)

if __name__ == "__main__":
    if sys.argv[1] == "server": server(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else: pad(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
