#!/usr/bin/env python3
"""pentail.py -- what crosses the link after the pen stops: bench/compare's pen workload
(300 motions at 100 Hz by xdotool, the button down) through tincan over `tincan-link
stream --rate 256k --delay 20ms`, both halves at --log-level debug, every stderr line
stamped with CLOCK_MONOTONIC here; prints each link write from --from seconds before the
button's release on, with its frames. Run after bench/compare/run.sh has built the pen.

usage: bench/compare/pentail.py [--tincan-bin DIR] [--cache DIR] [--from S]
  --cache DIR: the compression cache (a second run with the same DIR is a warm session)
"""
import argparse
import math
import os
import signal
import subprocess
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tincan-bin", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cache", default=None)
    ap.add_argument("--from", dest="start", type=float, default=0.08)
    ap.add_argument("--display", type=int, default=71, help="Xvfb's; tincan's is the next")
    args = ap.parse_args()
    b, tmp = args.tincan_bin, tempfile.mkdtemp(prefix="pentail-")
    cache = args.cache or os.path.join(tmp, "cache")
    os.makedirs(cache, exist_ok=True)
    xd, td = args.display, args.display + 1
    dport, lport = 9000 + td, 8000 + td
    procs, lines = [], []

    def start(argv, env=None, **kw):
        p = subprocess.Popen(argv, env=env, **kw)
        procs.append(p)
        return p

    def stamp(p, who):
        for line in iter(p.stderr.readline, b""):
            lines.append((time.monotonic(), who, line.decode(errors="replace").rstrip()))

    try:
        start(["Xvfb", ":%d" % xd, "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-noreset",
               "-extension", "GLX", "-extension", "MIT-SHM"], stderr=subprocess.DEVNULL)
        time.sleep(1)
        secret = os.path.join(tmp, "secret")
        subprocess.run([b + "/tincan", "secret", secret], check=True)
        common = ["--link-speed", "modem", "--cache-dir", cache, "--secret-file", secret, "--log-level", "debug"]
        empty = os.path.join(tmp, "empty.xauth")
        open(empty, "w").close()
        d = start([b + "/tincan", "display", "--link-listen", "127.0.0.1:%d" % dport, "--display", ":%d" % xd] + common,
                  env=dict(os.environ, XAUTHORITY=empty), stderr=subprocess.PIPE)
        threading.Thread(target=stamp, args=(d, "display"), daemon=True).start()
        time.sleep(0.5)
        start([b + "/tincan-link", "stream", "--listen", "127.0.0.1:%d" % lport, "--connect", "127.0.0.1:%d" % dport,
               "--rate", "256k", "--delay", "20ms"], stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        xauth = os.path.join(tmp, "tincan.xauth")
        open(xauth, "w").close()
        a = start([b + "/tincan", "app", "--link-connect", "127.0.0.1:%d" % lport, "--display-number", str(td),
                   "--xauthority", xauth] + common, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        threading.Thread(target=stamp, args=(a, "app"), daemon=True).start()
        time.sleep(2)
        real = dict(os.environ, DISPLAY=":%d" % xd)
        subprocess.run(["xdotool", "mousemove", "20", "20"], env=real)
        pen = start([ROOT + "/build/compare/pen", "600", "400"],
                    env=dict(os.environ, DISPLAY=":%d" % td, XAUTHORITY=xauth), stdout=subprocess.PIPE)
        while b"ready" not in pen.stdout.readline():
            pass
        time.sleep(2)
        pts = [(40 + int(i * 1.7), 200 + int(120 * math.sin(i / 18.0))) for i in range(301)]
        cmd = ["xdotool", "mousemove", str(pts[0][0]), str(pts[0][1]), "mousedown", "1"]
        for x, y in pts[1:]:
            cmd += ["sleep", "0.01", "mousemove", str(x), str(y)]
        cmd += ["sleep", "0.01", "mouseup", "1"]
        subprocess.run(cmd, env=real, check=True)
        t_release = time.monotonic()
        pen.wait(30)
        time.sleep(3)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        time.sleep(1)
        for p in procs:
            if p.poll() is None:
                p.kill()
    for t, who, line in lines:
        if t >= t_release - args.start and "link write" in line:
            print("%+.3f %-7s %s" % (t - t_release, who, line[line.find("link write"):]))


main()
