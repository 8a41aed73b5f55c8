#!/usr/bin/env python3
"""latency.py -- the latency benchmarks of tincan: raw X across an emulated link against tincan.

Benchmarks (select with --benchmarks):
  timed       xterm text and the start-up series over 256 kbit/s, 20 ms one way, with
              output checks (xlsfonts output, xwd of the xterm window) against a direct run
  roundtrips  link round trips until xterm, xlogo, xcalc, gtk3-widget-factory map, and
              their time to map over a 300 ms round-trip link
  input       input-to-ink latency (XTest motion at 50/s) with and without a 2 MB upload
  memory      tincan's resident memory while a client floods PutImage at a 64 kbit/s link
  wm          a window manager (--wm, default twm) and then an xterm over 256 kbit/s, 20 ms
              one way: link round trips waited and seconds until the xterm maps

Owns the processes of one run (Xvfb, link emulators, tincan halves, X clients), all
stopped by pid. Standard library only. Run it via run.sh, which builds the helpers.
See bench/latency/README.md for what each number means.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
GPL3 = "/usr/share/common-licenses/GPL-3"
QUIET_S = 0.5
NO_A11Y = {"NO_AT_BRIDGE": "1", "GTK_A11Y": "none", "GDK_BACKEND": "x11"}
XTERM_TEXT = "cat %s; IFS= read -rs -d R -p $'\\e[6n' _" % GPL3


class Failed(Exception):
    pass

# --------------------------------------------------------------------------- processes


class Proc:
    """A child process with its log; stopped by its own pid or process group, never by name."""
    all = []

    def __init__(self, ctx, name, argv, env, stdout=None, stdin=None, group=True):
        self.name = name
        self.log_path = os.path.join(ctx.logdir, name + ".log")
        self.log = open(self.log_path, "ab")
        self.group = group
        self.p = subprocess.Popen(argv, env=env, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                  stdout=stdout if stdout is not None else self.log, stderr=self.log,
                                  start_new_session=group)
        self.pid = self.p.pid
        Proc.all.append(self)

    def alive(self):
        return self.p.poll() is None

    def send(self, sig):
        if self.alive():
            try:
                if self.group:
                    os.killpg(self.pid, sig)
                else:
                    os.kill(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def stop(self, sig=signal.SIGTERM, wait_s=5.0):
        self.send(sig)
        try:
            self.p.wait(wait_s)
        except subprocess.TimeoutExpired:
            self.send(signal.SIGKILL)
            self.p.wait(5)
        if self.group:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not self.log.closed:
            self.log.close()
        if self in Proc.all:
            Proc.all.remove(self)
        return self.p.returncode

    def text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def tail(self, n=4):
        return " | ".join(l.strip() for l in self.text().strip().splitlines()[-n:])


def stop_all():
    for p in reversed(list(Proc.all)):
        try:
            p.stop(signal.SIGTERM, 2.0)
        except Exception:
            pass


def wait_for(pred, timeout_s, step_s=0.02):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step_s)
    return pred()


def display_free(n):
    return not os.path.exists("/tmp/.X%d-lock" % n) and not os.path.exists("/tmp/.X11-unix/X%d" % n)


def port_free(port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port():
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


LOCKS = set()


def take_lock(n):
    path = "/tmp/.X%d-lock" % n
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    os.write(fd, b"%10d\n" % os.getpid())
    os.close(fd)
    LOCKS.add(path)
    return path


def drop_lock(path):
    try:
        os.unlink(path)
    except OSError:
        pass
    LOCKS.discard(path)


def pick_displays(count):
    base = 80 + (os.getpid() % 12) * 5
    for start in list(range(base, 140, 5)) + list(range(80, base, 5)):
        if all(display_free(start + i) for i in range(count)):
            return start
    raise SystemExit("latency: no free block of %d display numbers in 80-139" % count)


def pct(values, q):
    """The q-quantile (0..1) by the nearest-rank method: an observed value, never interpolated."""
    v = sorted(values)
    if not v:
        return None
    k = max(1, -(-int(round(q * 1e6)) * len(v) // 1000000))   # ceil(q * n)
    return v[min(k, len(v)) - 1]

# --------------------------------------------------------------------------- the link and paths


class Emulator:
    """tincan-link stream between the two ends; its counters tell when the link is quiet."""

    def __init__(self, ctx, name, listen, connect, link_args):
        """listen None: packet mode (two namespaces, ns_a and ns_b, 10.77.0.1 -> 10.77.0.2)."""
        self.stats_file = os.path.join(ctx.tmp, name + ".stats")
        ready = os.path.join(ctx.tmp, name + ".ready")
        for f in (self.stats_file, ready):
            if os.path.exists(f):
                os.unlink(f)
        if listen is None:
            argv = [ctx.link_bin, "packet", "--info-file", ready, "--stats-file", self.stats_file]
        else:
            argv = [ctx.link_bin, "stream", "--listen", listen, "--connect", connect,
                    "--stats-file", self.stats_file, "--ready-file", ready]
        self.proc = Proc(ctx, name, argv + link_args, ctx.env, group=False)
        if not wait_for(lambda: os.path.exists(ready) and os.path.getsize(ready) > 0, 10):
            raise Failed("tincan-link did not start: " + self.proc.tail())
        kv = dict(l.strip().partition("=")[::2] for l in open(ready) if "=" in l)
        self.ns_a, self.ns_b = kv.get("ns_a"), kv.get("ns_b")

    def snapshot(self):
        if os.path.exists(self.stats_file):
            os.unlink(self.stats_file)
        self.proc.send(signal.SIGUSR1)
        if not wait_for(lambda: os.path.exists(self.stats_file), 5, 0.003):
            raise Failed("tincan-link wrote no stats (alive: %s)" % self.proc.alive())
        kv = {}
        with open(self.stats_file) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                kv[k] = v
        return int(kv["up_bytes"]), int(kv["down_bytes"])

    def wait_quiet(self, max_s, quiet_s=QUIET_S):
        last = self.snapshot()
        since = time.monotonic()
        end = since + max_s
        while time.monotonic() < end:
            time.sleep(0.1)
            now = self.snapshot()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return True
        return False


class Path:
    """raw: X clients -> tincan-link (unix socket :N+1) -> Xvfb :N.
    tincan / tincan-direct: X clients -> tincan app (:N+2) -> tincan-link (unix socket) ->
    tincan display -> Xvfb :N; tincan-direct adds --no-local-answers."""

    LABELS = {"raw": "raw X", "tincan": "tincan",
              "tincan-direct": "tincan --no-local-answers"}

    def __init__(self, ctx, key, link_args, cache_dir=None):
        self.ctx, self.key, self.link_args = ctx, key, link_args
        self.cache_dir = cache_dir  # XDG_CACHE_HOME of both halves; None: a fresh, empty one
        self.label = self.LABELS[key]
        self.procs, self.locks, self.emu, self.app, self.disp = [], [], None, None, None
        self.prefix = []  # before a client's argv: packet mode runs raw X's clients in namespace A

    def cmd(self, argv):
        return self.prefix + argv

    def start(self):
        ctx = self.ctx
        tag = "%s-%d" % (self.key, ctx.counter())
        if ctx.args.link_mode == "packet":
            self.start_packet(tag)
        elif self.key == "raw":
            n = ctx.base + 1
            self.locks.append(take_lock(n))
            self.emu = Emulator(ctx, tag + "-link", "unix:/tmp/.X11-unix/X%d" % n,
                                "unix:/tmp/.X11-unix/X%d" % ctx.base, self.link_args)
            self.sock = "/tmp/.X11-unix/X%d" % n
            self.env = dict(ctx.env, DISPLAY=":%d" % n, XAUTHORITY=ctx.empty_xauth)
        else:
            n = ctx.base + 2
            # The link is TCP on loopback, as between two machines (TCP_NOTSENT_LOWAT and
            # TCP_INFO work only there), with a secret; ports picked free by the kernel.
            dport, lport = free_port(), free_port()
            daddr, laddr = "127.0.0.1:%d" % dport, "127.0.0.1:%d" % lport
            xauth = os.path.join(ctx.tmp, tag + ".xauth")
            open(xauth, "w").close()
            # Every session starts cold: a compression cache of its own (tincan keeps one in
            # $XDG_CACHE_HOME/tincan since 131bc22), empty, for both halves.
            # The warm runs give a cache directory that an earlier session filled.
            tenv = dict(ctx.env, XDG_CACHE_HOME=self.cache_dir or os.path.join(ctx.tmp, tag + "-cache"))
            self.disp = Proc(ctx, tag + "-display", [ctx.tincan_bin, "display", "--link-listen", daddr,
                                                     "--display", ":%d" % ctx.base, "--stats",
                                                     "--secret-file", ctx.secret],
                             dict(tenv, XAUTHORITY=ctx.empty_xauth), group=False)
            self.procs.append(self.disp)
            if not wait_for(lambda: not port_free(dport) or not self.disp.alive(), 10) or not self.disp.alive():
                raise Failed("tincan display did not listen: " + self.disp.tail())
            self.emu = Emulator(ctx, tag + "-link", laddr, daddr, self.link_args)
            self.app_out = os.path.join(ctx.logdir, tag + "-app.out")
            with open(self.app_out, "wb") as outf:
                argv = [ctx.tincan_bin, "app", "--link-connect", laddr, "--display-number", str(n),
                        "--xauthority", xauth, "--stats", "--secret-file", ctx.secret]
                if self.key == "tincan-direct":
                    argv.append("--no-local-answers")
                self.app = Proc(ctx, tag + "-app", argv, tenv, stdout=outf, group=False)
            self.procs.insert(0, self.app)

            def announced():
                with open(self.app_out, "rb") as f:
                    return b"DISPLAY=" in f.read() or not self.app.alive()
            if not wait_for(announced, 20) or not self.app.alive():
                raise Failed("tincan app did not start: " + self.app.tail())
            self.sock = None
            self.env = dict(ctx.env, DISPLAY=":%d" % n, XAUTHORITY=xauth)
        # One client through the path, not measured, then a quiet link.
        ok = wait_for(lambda: subprocess.run(self.cmd(["xwininfo", "-root"]), env=self.env, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, timeout=60).returncode == 0, 60, 0.3)
        if not ok:
            raise Failed("no client got through %s: %s" % (self.label, self.why_dead()))
        self.emu.wait_quiet(10)
        return self

    def start_packet(self, tag):
        """Packet mode: real kernel TCP between namespace A (clients' side) and B (the X
        server's side). raw X: clients in A -> TCP 10.77.0.2:6000+N+1 -> a relay in B (an
        unlimited tincan-link stream) -> Xvfb's socket. tincan: clients -> tincan app in A
        -> TCP 10.77.0.2:7100 -> tincan display in B -> Xvfb. X's unix sockets are files,
        reachable from every namespace."""
        ctx = self.ctx
        self.emu = Emulator(ctx, tag + "-link", None, None, self.link_args)
        in_a, in_b = ["nsenter", "--net=" + self.emu.ns_a], ["nsenter", "--net=" + self.emu.ns_b]
        if self.key == "raw":
            n = ctx.base + 1
            relay = Proc(ctx, tag + "-relay", in_b + [ctx.link_bin, "stream", "--listen", "10.77.0.2:%d" % (6000 + n),
                                                      "--connect", "unix:/tmp/.X11-unix/X%d" % ctx.base,
                                                      "--no-handshake-delay"], ctx.env, group=False)
            self.procs.append(relay)
            self.prefix = in_a
            self.sock = None
            self.env = dict(ctx.env, DISPLAY="10.77.0.2:%d" % n, XAUTHORITY=ctx.empty_xauth)
            return
        n = ctx.base + 2
        xauth = os.path.join(ctx.tmp, tag + ".xauth")
        open(xauth, "w").close()
        tenv = dict(ctx.env, XDG_CACHE_HOME=self.cache_dir or os.path.join(ctx.tmp, tag + "-cache"))
        self.disp = Proc(ctx, tag + "-display", in_b + [ctx.tincan_bin, "display", "--link-listen", "10.77.0.2:7100",
                                                        "--display", ":%d" % ctx.base, "--stats",
                                                        "--secret-file", ctx.secret],
                         dict(tenv, XAUTHORITY=ctx.empty_xauth), group=False)
        self.procs.append(self.disp)
        if not wait_for(lambda: "waiting for the app side" in self.disp.text() or not self.disp.alive(), 10) or \
                not self.disp.alive():
            raise Failed("tincan display did not listen: " + self.disp.tail())
        self.app_out = os.path.join(ctx.logdir, tag + "-app.out")
        with open(self.app_out, "wb") as outf:
            argv = in_a + [ctx.tincan_bin, "app", "--link-connect", "10.77.0.2:7100", "--display-number", str(n),
                           "--xauthority", xauth, "--stats", "--secret-file", ctx.secret]
            if self.key == "tincan-direct":
                argv.append("--no-local-answers")
            self.app = Proc(ctx, tag + "-app", argv, tenv, stdout=outf, group=False)
        self.procs.insert(0, self.app)

        def announced():
            with open(self.app_out, "rb") as f:
                return b"DISPLAY=" in f.read() or not self.app.alive()
        if not wait_for(announced, 20) or not self.app.alive():
            raise Failed("tincan app did not start: " + self.app.tail())
        self.sock = None
        self.env = dict(ctx.env, DISPLAY=":%d" % n, XAUTHORITY=xauth)

    def alive(self):
        return all(p.alive() for p in self.procs) and self.emu.proc.alive()

    def why_dead(self):
        out = []
        for p in self.procs + ([self.emu.proc] if self.emu else []):
            if not p.alive():
                out.append("%s exited %s: %s" % (p.name, p.p.returncode, p.tail(3)))
        return "; ".join(out) or "all alive"

    def check_alive(self, what):
        if not self.alive():
            raise Failed("%s: the path died: %s" % (what, self.why_dead()))

    def stats(self):
        """(round trips, answered locally) of the app side now, via SIGUSR1."""
        before = self.app.text().count("== tincan")
        self.app.send(signal.SIGUSR1)
        if not wait_for(lambda: self.app.text().count("== tincan") > before and
                        "\nkind " in self.app.text().rsplit("== tincan", 1)[1], 5, 0.002):
            raise Failed("tincan app printed no statistics")
        block = self.app.text().rsplit("== tincan", 1)[1]
        m = re.search(r"round trips: (\d+) answers.*?; (\d+) requests answered here", block)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)

    def pids(self):
        return {"app": self.app.pid, "display": self.disp.pid} if self.app else {}

    def stop(self):
        for p in self.procs:
            p.stop()
        if self.emu:
            self.emu.proc.stop()
        if self.sock and os.path.exists(self.sock):
            try:
                os.unlink(self.sock)
            except OSError:
                pass
        for l in self.locks:
            drop_lock(l)
        self.locks = []

# --------------------------------------------------------------------------- helpers for clients


def start_mapwait(ctx, timeout_s):
    mw = subprocess.Popen([ctx.bin("mapwait"), str(int(timeout_s * 1000))], env=ctx.real_env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if mw.stdout.readline().strip() != b"ready":
        mw.kill()
        mw.wait()
        raise Failed("mapwait did not start")
    return mw


def until_mapped(ctx, env, argv, name, timeout_s, on_map=None):
    """Starts argv; returns (seconds to the first top-level map at the real server, Proc,
    window id, on_map's result). on_map runs the moment the map is seen."""
    mw = start_mapwait(ctx, timeout_s)
    t0 = time.monotonic()
    p = Proc(ctx, name, argv, env)
    line = mw.stdout.readline()
    t = time.monotonic() - t0
    extra = on_map() if on_map and line.startswith(b"mapped") else None
    mw.wait()
    if not line.startswith(b"mapped"):
        p.stop(signal.SIGKILL)
        raise Failed("%s mapped no window in %d s: %s" % (argv[0], timeout_s, p.tail(3)))
    return t, p, line.split()[1].decode(), extra


def run_to_exit(ctx, env, argv, name, timeout_s, stdout=None):
    t0 = time.monotonic()
    p = Proc(ctx, name, argv, env, stdout=stdout)
    try:
        p.p.wait(timeout_s)
    except subprocess.TimeoutExpired:
        p.stop(signal.SIGKILL)
        raise Failed("%s did not finish in %d s" % (argv[0], timeout_s))
    t = time.monotonic() - t0
    rc = p.stop()
    if rc != 0:
        raise Failed("%s exited %s: %s" % (argv[0], rc, p.tail(3)))
    return t


def xwd_pixels(ctx, win):
    """sha256 of the pixels of window win on the real display (xwd, header and colours skipped)."""
    r = subprocess.run(["xwd", "-silent", "-id", win], env=ctx.real_env, capture_output=True, timeout=30)
    if r.returncode != 0:
        raise Failed("xwd failed: " + r.stderr.decode(errors="replace").strip())
    d = r.stdout
    hsize, w, h, ncolors = struct.unpack(">I", d[0:4])[0], struct.unpack(">I", d[16:20])[0], \
        struct.unpack(">I", d[20:24])[0], struct.unpack(">I", d[76:80])[0]
    pix = d[hsize + 12 * ncolors:]
    return "%dx%d sha256 %s" % (w, h, hashlib.sha256(pix).hexdigest()[:16])


def lc(env):
    e = dict(env, LANG="C")
    e.pop("LC_ALL", None)
    return e

# --------------------------------------------------------------------------- 1. timed workloads


def xterm_text_screen(ctx, env, name, quiet=None):
    """The xterm text, ended not by bash exiting but by waiting: the window's pixels once
    xterm has answered the cursor query and the link is quiet. For the output check."""
    flag = os.path.join(ctx.tmp, name + ".done")
    if os.path.exists(flag):
        os.unlink(flag)
    script = XTERM_TEXT + "; : > %s; exec sleep 600" % flag
    t, p, win, _ = until_mapped(ctx, lc(env), ["xterm", "+j", "-geometry", "80x24+0+0", "-e", "bash", "-c", script],
                                name, 120)
    if not wait_for(lambda: os.path.exists(flag) or not p.alive(), ctx.args.timeout, 0.05):
        p.stop(signal.SIGKILL)
        raise Failed("xterm text did not finish")
    if quiet:
        quiet()
    # Stable: the same pixels twice, 0.5 s apart.
    a = xwd_pixels(ctx, win)
    for _ in range(20):
        time.sleep(0.5)
        b = xwd_pixels(ctx, win)
        if a == b:
            break
        a = b
    p.stop()
    return a


def bench_timed(ctx, res):
    link = ["--rate", ctx.rate, "--delay", ctx.delay]
    out = {"link": "%s/%s" % (ctx.rate, ctx.delay), "paths": {}}
    res["timed"] = out
    # Direct runs (Xvfb itself): the reference output.
    ref_fonts = subprocess.run(["sh", "-c", "xlsfonts | head"], env=ctx.real_env, capture_output=True,
                               timeout=60).stdout
    ref_xwd = xterm_text_screen(ctx, ctx.real_env, "direct-xterm-verify", lambda: time.sleep(0.3)) \
        if ctx.args.verify else None
    out["direct_xwd"] = ref_xwd
    for key in ctx.paths("raw", "tincan"):
        row = out["paths"][key] = {"label": Path.LABELS[key]}
        log(ctx, "timed: %s over %s/%s" % (Path.LABELS[key], ctx.rate, ctx.delay))
        path = None
        try:
            path = Path(ctx, key, link).start()
            env = path.env
            row["xterm_text_s"] = round(run_to_exit(ctx, lc(env), ["xterm", "+j", "-geometry", "80x24+0+0", "-e",
                                                                   "bash", "-c", XTERM_TEXT], key + "-xterm-text",
                                                    ctx.args.timeout), 3)
            log(ctx, "  xterm text %.2f s" % row["xterm_text_s"])
            path.check_alive("xterm text")
            path.emu.wait_quiet(20)
            series = {}
            series["xterm -e true"] = run_to_exit(ctx, lc(env), ["xterm", "-e", "true"], key + "-xterm-true",
                                                  ctx.args.timeout)
            path.emu.wait_quiet(20)
            for prog in ("xlogo", "xclock", "xeyes"):
                t, p, _, _ = until_mapped(ctx, lc(env), [prog], key + "-" + prog, ctx.args.timeout)
                series[prog] = t
                if not p.alive():
                    raise Failed("%s exited after mapping: %s" % (prog, p.tail(2)))
                p.stop()
                path.emu.wait_quiet(20)
            fonts_out = os.path.join(ctx.logdir, key + "-xlsfonts.out")
            with open(fonts_out, "wb") as f:
                series["xlsfonts | head"] = run_to_exit(ctx, lc(env), ["sh", "-c", "xlsfonts | head"],
                                                        key + "-xlsfonts", ctx.args.timeout, stdout=f)
            with open(fonts_out, "rb") as f:
                fonts = f.read()
            row["series_s"] = {k: round(v, 3) for k, v in series.items()}
            row["series_total_s"] = round(sum(series.values()), 3)
            row["xlsfonts_identical"] = fonts == ref_fonts and len(fonts.splitlines()) == 10
            log(ctx, "  start-up series %.2f s (%s); xlsfonts output %s" % (
                row["series_total_s"], ", ".join("%s %.2f" % kv for kv in series.items()),
                "identical" if row["xlsfonts_identical"] else "DIFFERS"))
            path.check_alive("start-up series")
        except (Failed, OSError, subprocess.SubprocessError) as e:
            row["error"] = str(e)
            log(ctx, "  FAILED: %s" % e)
        finally:
            if path:
                path.stop()
        if ctx.args.verify and key != "raw":
            # The xterm window check runs on a path of its own with an unlimited link (the
            # same tincan, no rate or delay), so it costs 0.3 s, not another slow text run.
            path = None
            try:
                path = Path(ctx, key, []).start()
                row["xwd"] = xterm_text_screen(ctx, path.env, key + "-xterm-verify", lambda: path.emu.wait_quiet(30))
                row["xwd_identical"] = row["xwd"] == ref_xwd
                path.check_alive("xterm window check")
                log(ctx, "  xterm window at the end of the text (unlimited link): %s" %
                    ("identical to direct" if row["xwd_identical"] else "DIFFERS: %s vs %s" % (row["xwd"], ref_xwd)))
            except (Failed, OSError, subprocess.SubprocessError) as e:
                row["xwd_error"] = str(e)
                log(ctx, "  xterm window check FAILED: %s" % e)
            finally:
                if path:
                    path.stop()
        save(ctx, res)

# --------------------------------------------------------------------------- 2. round trips, time to map


ROUNDTRIP_APPS = [("xterm", ["xterm"], {"LANG": "C"}), ("xlogo", ["xlogo"], {}), ("xcalc", ["xcalc"], {}),
                  ("gtk3-widget-factory", ["gtk3-widget-factory"], NO_A11Y)]


def startups(ctx, key, link, with_stats, apps=ROUNDTRIP_APPS, cache_dir=None):
    """Each app until mapped through one path; with_stats: the app side's round trips at the map."""
    rows = {}
    path = None
    try:
        path = Path(ctx, key, link, cache_dir).start()
        for name, argv, extra in apps:
            row = rows[name] = {}
            try:
                path.check_alive(name)
                path.emu.wait_quiet(20)
                s0 = path.stats() if with_stats else None
                t_seen = [0.0]

                def at_map():
                    t_seen[0] = time.monotonic()
                    return path.stats() if with_stats else None
                env = dict(path.env, **extra)
                if "LANG" in extra:
                    env = lc(env)
                t, p, _, s1 = until_mapped(ctx, env, argv, "%s-%s" % (key, name), ctx.args.timeout, at_map)
                row["map_s"] = round(t, 3)
                if with_stats:
                    row["round_trips"] = s1[0] - s0[0]
                    row["answered_locally"] = s1[1] - s0[1]
                alive = p.alive()
                p.stop()
                if not alive:
                    raise Failed("%s exited after mapping: %s" % (name, p.tail(2)))
                log(ctx, "  %-26s %-20s mapped after %6.2f s%s" % (
                    Path.LABELS[key], name, t, "" if not with_stats else
                    ", %d round trips, %d answered locally" % (row["round_trips"], row["answered_locally"])))
            except (Failed, OSError, subprocess.SubprocessError) as e:
                row["error"] = str(e)
                log(ctx, "  %-26s %-20s FAILED: %s" % (Path.LABELS[key], name, e))
                if not path.alive():
                    path.stop()
                    path = Path(ctx, key, link, cache_dir).start()
    except (Failed, OSError, subprocess.SubprocessError) as e:
        rows["error"] = str(e)
        log(ctx, "  %s FAILED: %s" % (key, e))
    finally:
        if path:
            path.stop()
    return rows


def warm_startups(ctx, link, with_stats):
    """Each app alone in two tincan sessions, one after the other, sharing one cache directory
    (the compression cache, and the questions the display side remembers): "first" is the app
    alone in a session with an empty cache, "second" the next session, warm."""
    rows = {}
    for name, argv, extra in ROUNDTRIP_APPS:
        cache = os.path.join(ctx.tmp, "warm-%s-%d-cache" % (name, ctx.counter()))
        row = rows[name] = {}
        for phase in ("first", "second"):
            r = startups(ctx, "tincan", link, with_stats, [(name, argv, extra)], cache)
            r = r if "error" in r else r.get(name, {})
            if "error" in r:
                row["error"] = "%s session: %s" % (phase, r["error"])
                break
            for f in ("round_trips", "answered_locally", "map_s"):
                if f in r:
                    row["%s_%s" % (phase, f)] = r[f]
        log(ctx, "  %-26s %-20s warm: %s" % ("tincan, second session", name, row))
    return rows


def bench_roundtrips(ctx, res):
    out = res["roundtrips"] = {"count_link": "delay %s" % ctx.args.count_delay,
                               "rtt_link": "delay %s" % ctx.args.rtt_delay, "count": {}, "map": {}}
    log(ctx, "roundtrips: counting at the app side, link --delay %s" % ctx.args.count_delay)
    for key in ctx.paths("tincan-direct", "tincan"):
        out["count"][key] = startups(ctx, key, ["--delay", ctx.args.count_delay], True)
        save(ctx, res)
    if "tincan" in ctx.paths("tincan"):
        log(ctx, "roundtrips: each program alone, then again in a second session with the first's cache directory")
        out["count"]["tincan-warm"] = warm_startups(ctx, ["--delay", ctx.args.count_delay], True)
        save(ctx, res)
    log(ctx, "roundtrips: time to map, link --delay %s" % ctx.args.rtt_delay)
    for key in ctx.paths("raw", "tincan"):
        out["map"][key] = startups(ctx, key, ["--delay", ctx.args.rtt_delay], key != "raw")
        save(ctx, res)
    if "tincan" in ctx.paths("tincan"):
        out["map"]["tincan-warm"] = warm_startups(ctx, ["--delay", ctx.args.rtt_delay], True)
        save(ctx, res)

# --------------------------------------------------------------------------- 2b. a window manager and an xterm


def wm_ready(ctx):
    """The window manager has selected SubstructureRedirect on the root of the real server."""
    r = subprocess.run(["xwininfo", "-root", "-all"], env=ctx.real_env, capture_output=True, text=True, timeout=10)
    return "SubstructureRedirect" in r.stdout


def wm_startup(ctx, key, link, wm):
    """One session: the window manager, then (once it manages the root) xterm, each through the
    path; seconds from the manager's start to the xterm's frame mapping at the real server,
    and the app side's round trips over that time (not for raw X: see tincan-direct)."""
    row = {}
    path = None
    procs = []
    try:
        path = Path(ctx, key, link).start()
        with_stats = key != "raw"
        s0 = path.stats() if with_stats else None
        t0 = time.monotonic()
        procs.append(Proc(ctx, "%s-%s" % (key, wm), [wm], path.env))
        if not wait_for(lambda: wm_ready(ctx) or not procs[0].alive(), ctx.args.timeout, 0.02) or not procs[0].alive():
            raise Failed("%s did not manage the screen: %s" % (wm, procs[0].tail(3)))
        row["wm_ready_s"] = round(time.monotonic() - t0, 3)
        t1 = time.monotonic()
        t, p, _, s1 = until_mapped(ctx, lc(dict(path.env, LANG="C")), ["xterm"], "%s-%s-xterm" % (key, wm),
                                   ctx.args.timeout, (lambda: path.stats()) if with_stats else None)
        procs.append(p)
        row["xterm_map_s"] = round(t, 3)
        row["map_s"] = round(t1 - t0 + t, 3)
        if with_stats:
            row["round_trips"] = s1[0] - s0[0]
            row["answered_locally"] = s1[1] - s0[1]
        for q in procs:
            if not q.alive():
                raise Failed("%s exited: %s" % (q.name, q.tail(2)))
        log(ctx, "  %-26s %-8s managing after %6.2f s, xterm mapped %6.2f s after the start%s" % (
            Path.LABELS[key], wm, row["wm_ready_s"], row["map_s"], "" if not with_stats else
            ", %d round trips, %d answered locally" % (row["round_trips"], row["answered_locally"])))
    except (Failed, OSError, subprocess.SubprocessError) as e:
        row["error"] = str(e)
        log(ctx, "  %-26s %-8s FAILED: %s" % (Path.LABELS[key], wm, e))
    finally:
        for q in reversed(procs):
            q.stop()
        if path:
            path.stop()
    return row


def bench_wm(ctx, res):
    link = ["--rate", ctx.rate, "--delay", ctx.delay]
    out = res["wm"] = {"link": "%s/%s" % (ctx.rate, ctx.delay), "wms": {}}
    for wm in ctx.args.wm.split(","):
        if not shutil.which(wm):
            out["wms"][wm] = {"error": "not installed"}
            continue
        log(ctx, "wm: %s, then xterm, link %s" % (wm, out["link"]))
        out["wms"][wm] = {key: wm_startup(ctx, key, link, wm) for key in ctx.paths("raw", "tincan-direct", "tincan")}
        save(ctx, res)

# --------------------------------------------------------------------------- 3. input under load


def ink_phase(ctx, path, load):
    """One phase: ink through the path, inkwatch on the real display; with load, an upload
    of ctx.args.upload_bytes runs through the same path during the whole injection."""
    size = 400  # 10,000 cells: 200 s of events at 50/s (a slow download outlasted 320's 6,400); left of upload's window at 400,0
    iw_out = os.path.join(ctx.logdir, "%s-inkwatch-%s.out" % (path.key, load or "idle"))
    outf = open(iw_out, "wb")
    iw = Proc(ctx, "%s-inkwatch-%s" % (path.key, load or "idle"),
              [ctx.bin("inkwatch"), str(ctx.args.input_interval_ms), str(size), "5000"], ctx.real_env,
              stdout=outf, stdin=subprocess.PIPE)
    outf.close()

    def iw_text():
        with open(iw_out, "rb") as f:
            return f.read().decode()
    ink = up = filler = None
    try:
        if not wait_for(lambda: "ready" in iw_text() or not iw.alive(), 10):
            raise Failed("inkwatch did not start: " + iw.tail())
        ink_out = os.path.join(ctx.logdir, "%s-ink.out" % path.key)
        with open(ink_out, "wb") as f:
            ink = Proc(ctx, "%s-ink-%s" % (path.key, load or "idle"), path.cmd([ctx.bin("ink"), str(size)]),
                       path.env, stdout=f)
        if not wait_for(lambda: "watching" in iw_text() or not iw.alive(), 60):
            raise Failed("inkwatch saw no window: " + iw.tail())
        if not wait_for(lambda: b"ready" in open(ink_out, "rb").read() or not ink.alive(), 60):
            raise Failed("ink was not exposed: " + ink.tail())
        path.emu.wait_quiet(20)
        # Park the pointer away from the window, so the first event is a move into it.
        subprocess.run(["xdotool", "mousemove", "1000", "700"], env=ctx.real_env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        extra = {}
        if load:
            up_out = os.path.join(ctx.logdir, "%s-%s.out" % (path.key, load))
            if load == "download":
                # The pixels to fetch: a pixmap on the real display, filled there (not across the link).
                fill_out = os.path.join(ctx.logdir, "%s-fill.out" % path.key)
                with open(fill_out, "wb") as f:
                    filler = Proc(ctx, "%s-fill" % path.key, [ctx.bin("upload"), "fill"], ctx.real_env, stdout=f,
                                  stdin=subprocess.PIPE)
                if not wait_for(lambda: b"pixmap " in open(fill_out, "rb").read() or not filler.alive(), 30):
                    raise Failed("upload fill did not start: " + filler.tail())
                pm = open(fill_out).read().split()[1]
                argv = [ctx.bin("upload"), "get", str(ctx.args.upload_bytes), "128", pm]
            else:
                argv = [ctx.bin("upload"), "total", str(ctx.args.upload_bytes), "128"]
            with open(up_out, "wb") as f:
                up = Proc(ctx, "%s-%s" % (path.key, load), path.cmd(argv), path.env, stdout=f)

            def up_text():
                with open(up_out, "rb") as f:
                    return f.read().decode()
            if not wait_for(lambda: "put 1 " in up_text() or not up.alive(), 60):
                raise Failed("upload did not start: " + up.tail())
            t_go = time.monotonic()
            iw.p.stdin.write(b"go\n")
            iw.p.stdin.flush()
            if not wait_for(lambda: "done" in up_text() or not up.alive(), ctx.args.timeout, 0.05):
                raise Failed("upload did not finish in %d s" % ctx.args.timeout)
            t_inject = time.monotonic() - t_go
            if "done" not in up_text():
                raise Failed("upload failed: " + up.tail())
            m = re.search(r"done images=(\d+) bytes=(\d+) seconds=([\d.]+)", up_text())
            extra = {"upload_bytes": int(m.group(2)), "upload_s": float(m.group(3))}
        else:
            iw.p.stdin.write(b"go\n")
            iw.p.stdin.flush()
            time.sleep(ctx.args.input_idle_s)
            t_inject = ctx.args.input_idle_s
        try:
            iw.p.stdin.write(b"stop\n")
            iw.p.stdin.close()
        except BrokenPipeError:  # it stopped by itself: every cell was used
            extra["cells_ran_out"] = True
        iw.p.wait(30)
        text = iw_text()
        m = re.search(r"summary sent=(\d+) inked=(\d+) late_injections=(\d+)", text)
        if not m:
            raise Failed("inkwatch gave no summary: " + iw.tail())
        lats = [int(l.split()[3]) / 1e6 for l in text.splitlines() if l.startswith("ev ") and int(l.split()[3]) >= 0]
        row = {"sent": int(m.group(1)), "inked": len(lats), "late_injections": int(m.group(3)),
               "injecting_s": round(t_inject, 2),
               "p50_ms": round(pct(lats, 0.5), 1) if lats else None,
               "p99_ms": round(pct(lats, 0.99), 1) if lats else None,
               "max_ms": round(max(lats), 1) if lats else None,
               "min_ms": round(min(lats), 1) if lats else None}
        row.update(extra)
        return row
    finally:
        for p in (up, filler, ink, iw):
            if p:
                p.stop()


def input_link(ctx):
    """The link options of input: --link RATE/DELAY (unless "none"), then --link-extra."""
    link = [] if ctx.args.link == "none" else ["--rate", ctx.rate, "--delay", ctx.delay]
    return link + ctx.args.link_extra.split()


def bench_input(ctx, res):
    link = input_link(ctx)
    out = res["input"] = {"link": "%s %s" % (ctx.args.link_mode, " ".join(link)), "rate_hz": 1000 / ctx.args.input_interval_ms,
                          "upload_bytes": ctx.args.upload_bytes, "paths": {}}
    loads = [None] + ctx.args.loads.split(",")
    for key in ctx.paths("raw", "tincan"):
        rows = out["paths"][key] = {}
        for load in loads:
            ph = {None: "idle", "upload": "load"}.get(load, load)
            path = None
            try:
                path = Path(ctx, key, link).start()
                rows[ph] = ink_phase(ctx, path, load)
                path.check_alive("input " + ph)
                r = rows[ph]
                log(ctx, "input: %-8s %-8s %4d/%4d inked  p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms%s" % (
                    Path.LABELS[key], load or "idle", r["inked"], r["sent"], r["p50_ms"] or -1, r["p99_ms"] or -1,
                    r["max_ms"] or -1, "  (%s %.1f s)" % (load, r["upload_s"]) if load else ""))
            except (Failed, OSError, subprocess.SubprocessError) as e:
                rows[ph] = {"error": str(e)}
                log(ctx, "input: %s %s FAILED: %s" % (key, ph, e))
            finally:
                if path:
                    path.stop()
            save(ctx, res)

# --------------------------------------------------------------------------- 4. memory


def vm(pid):
    kv = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    k, v = line.split(":")
                    kv[k] = int(v.split()[0])     # kB
    except OSError:
        pass
    return kv


def bench_memory(ctx, res):
    rate = ctx.args.memory_rate
    link = ["--rate", rate, "--delay", ctx.delay]
    out = res["memory"] = {"link": "%s/%s" % (rate, ctx.delay), "seconds": ctx.args.memory_seconds}
    log(ctx, "memory: PutImage flood through tincan over %s/%s for %d s" % (rate, ctx.delay, ctx.args.memory_seconds))
    path = fl = None
    try:
        path = Path(ctx, "tincan", link).start()
        pids = path.pids()
        base = {k: vm(p) for k, p in pids.items()}
        fl_out = os.path.join(ctx.logdir, "flood.out")
        with open(fl_out, "wb") as f:
            fl = Proc(ctx, "flood", [ctx.bin("upload"), "flood", "100000", "64"], path.env, stdout=f)
        t0 = time.monotonic()
        samples = []
        while time.monotonic() - t0 < ctx.args.memory_seconds:
            s = {"t": round(time.monotonic() - t0, 2)}
            for k, p in pids.items():
                v = vm(p)
                s[k + "_rss_kb"], s[k + "_hwm_kb"] = v.get("VmRSS"), v.get("VmHWM")
            samples.append(s)
            if not path.alive():
                raise Failed("tincan died during the flood: " + path.why_dead())
            time.sleep(0.5)
        flood_alive = fl.alive()
        with open(fl_out) as f:
            puts = [l.split() for l in f if l.startswith("put ")]
        final = {k: vm(p) for k, p in pids.items()}
        fl.stop()
        # The client first runs free while the buffers in front of the link fill (its
        # socket, tincan's queues, the link's socket buffers): everything written in the
        # first second is that burst. Its rate afterwards: bytes written after the burst
        # over the time from the burst to the end of the flood. Requests complete in steps
        # of tincan's reads, so over 40 s this is within about 64 KiB / 39 s of the truth.
        burst = max([int(x[2]) for x in puts if float(x[3]) < 1.0] or [0])
        t_burst = max([float(x[3]) for x in puts if float(x[3]) < 1.0] or [0.0])
        flood_s = ctx.args.memory_seconds
        cl_rate = (int(puts[-1][2]) - burst) / (flood_s - t_burst) if puts else None
        out.update({
            "baseline_kb": base, "final_kb": final,
            "peak_rss_kb": {k: max((s[k + "_rss_kb"] or 0) for s in samples) for k in pids},
            "peak_hwm_kb": {k: final[k].get("VmHWM") for k in pids},
            "flood_alive": flood_alive, "flood_images": len(puts),
            "flood_bytes": int(puts[-1][2]) if puts else 0,
            "flood_burst_bytes": burst, "flood_rate_Bps_after_burst": round(cl_rate) if cl_rate is not None else None,
            "link_rate_Bps": parse_rate(rate) / 8, "samples": samples})
        # Afterwards: the path still serves a new client (the flood's backlog dropped with it).
        t1 = time.monotonic()
        try:
            r = subprocess.run(["xwininfo", "-root"], env=path.env, capture_output=True, timeout=ctx.args.after_flood_s)
            out["after_flood_client_s"] = round(time.monotonic() - t1, 2) if r.returncode == 0 else None
            out["after_flood_client"] = "answered in %.2f s" % (time.monotonic() - t1) if r.returncode == 0 else \
                "FAILED: xwininfo exited %d" % r.returncode
        except subprocess.TimeoutExpired:
            out["after_flood_client_s"] = None
            out["after_flood_client"] = "no answer within %d s" % ctx.args.after_flood_s
        path.check_alive("after the flood")
        log(ctx, "memory: peak RSS app %d KiB, display %d KiB (HWM %d / %d KiB); flood client %s, %d images, "
            "%d B at once, then %s B/s (link %d B/s); a new client after the flood: %s" % (
                out["peak_rss_kb"]["app"], out["peak_rss_kb"]["display"], out["peak_hwm_kb"]["app"] or -1,
                out["peak_hwm_kb"]["display"] or -1, "alive" if flood_alive else "DEAD", len(puts),
                burst, out["flood_rate_Bps_after_burst"], out["link_rate_Bps"], out["after_flood_client"]))
    except (Failed, OSError, subprocess.SubprocessError) as e:
        out["error"] = str(e)
        log(ctx, "memory: FAILED: %s" % e)
    finally:
        if fl:
            fl.stop()
        if path:
            path.stop()
    save(ctx, res)


def parse_rate(r):
    m = re.fullmatch(r"([\d.]+)([kKmM]?)", r)
    return float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6}[m.group(2)]

# --------------------------------------------------------------------------- output


def log(ctx, msg):
    print(msg, flush=True, file=sys.stderr)
    with open(os.path.join(ctx.logdir, "latency.log"), "a") as f:
        f.write(msg + "\n")


def save(ctx, res):
    res["meta"]["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    tmp = ctx.out_json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, ctx.out_json)


def fmt(v, f="%.2f"):
    return "" if v is None else f % v


def markdown(res):
    L = []
    m = res["meta"]
    L.append("Machine: %s. tincan %s (%s). Xvfb: %s." % (m["machine"], m["tincan_commit"], m["tincan_binary"], m["xvfb"]))
    L.append("")
    t = res.get("timed")
    if t:
        L.append("Timed workloads over %s (rate/one-way delay), seconds:" % t["link"])
        L.append("")
        L.append("| path | xterm text | start-up series | xterm -e true | xlogo | xclock | xeyes | xlsfonts \\| head "
                 "| xlsfonts output | xterm window |")
        L.append("|---|--:|--:|--:|--:|--:|--:|--:|---|---|")
        for k, r in t["paths"].items():
            if "error" in r and "series_s" not in r:
                L.append("| %s | FAILED: %s |" % (r["label"], r["error"].replace("|", "/")))
                continue
            s = r.get("series_s", {})
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["label"], fmt(r.get("xterm_text_s")), fmt(r.get("series_total_s")),
                *(fmt(s.get(x)) for x in ("xterm -e true", "xlogo", "xclock", "xeyes", "xlsfonts | head")),
                "identical" if r.get("xlsfonts_identical") else "DIFFERS",
                "pass-through (not checked)" if k == "raw" else
                ("identical" if r.get("xwd_identical") else "DIFFERS" if "xwd" in r else "not checked")))
        L.append("")
    rt = res.get("roundtrips")
    if rt:
        L.append("Start-up until the first top-level window maps: link round trips the app side waited on "
                 "(link %s), and time to map over %s:" % (rt["count_link"], rt["rtt_link"]))
        L.append("")
        L.append("| program | round trips, direct (`--no-local-answers`) | round trips, tincan | answered locally, "
                 "tincan | map s, raw X | map s, tincan | round trips, tincan, at %s |" % rt["rtt_link"])
        L.append("|---|--:|--:|--:|--:|--:|--:|")
        c, mp = rt["count"], rt["map"]

        def g(d, key, app, f):
            r = d.get(key, {}).get(app, {})
            return "FAILED" if "error" in r else ("" if f not in r else str(r[f]))
        for app, _, _ in ROUNDTRIP_APPS:
            L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                app, g(c, "tincan-direct", app, "round_trips"), g(c, "tincan", app, "round_trips"),
                g(c, "tincan", app, "answered_locally"), g(mp, "raw", app, "map_s"), g(mp, "tincan", app, "map_s"),
                g(mp, "tincan", app, "round_trips")))
        L.append("")
        if "tincan-warm" in c or "tincan-warm" in mp:
            L.append("The same through tincan, each program alone: cold = its own first session, empty cache "
                     "directory; warm = a second session reusing the cache directory of that first session "
                     "(compression dictionaries, and the questions the display side remembers and asks again):")
            L.append("")
            L.append("| program | round trips, cold | round trips, warm | answered locally, cold | answered locally, "
                     "warm | map s, cold, at %s | map s, warm, at %s |" % (rt["rtt_link"], rt["rtt_link"]))
            L.append("|---|--:|--:|--:|--:|--:|--:|")
            for app, _, _ in ROUNDTRIP_APPS:
                L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                    app, g(c, "tincan-warm", app, "first_round_trips"), g(c, "tincan-warm", app, "second_round_trips"),
                    g(c, "tincan-warm", app, "first_answered_locally"),
                    g(c, "tincan-warm", app, "second_answered_locally"),
                    g(mp, "tincan-warm", app, "first_map_s"), g(mp, "tincan-warm", app, "second_map_s")))
            L.append("")
    inp = res.get("input")
    if inp:
        L.append("Input to ink over `%s`, %g events/s, idle and under a transfer of %d bytes (ms; bulk s: the "
                 "transfer's time):" % (inp["link"], inp["rate_hz"], inp["upload_bytes"]))
        L.append("")
        L.append("| path | load | idle p50 | idle p99 | idle max | load p50 | load p99 | load max | p99 load - idle "
                 "| events inked idle / load | bulk s |")
        L.append("|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|")
        for k, r in inp["paths"].items():
            i = r.get("idle", {})
            for ph, name in (("load", "upload"), ("download", "download")):
                if ph not in r:
                    continue
                l = r[ph]
                if "error" in i or "error" in l:
                    L.append("| %s | %s | FAILED: %s |" % (Path.LABELS[k], name,
                                                          (i.get("error") or l.get("error")).replace("|", "/")))
                    continue
                d = l["p99_ms"] - i["p99_ms"] if i.get("p99_ms") is not None and l.get("p99_ms") is not None else None
                L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d, %d/%d | %s |" % (
                    Path.LABELS[k], name, fmt(i["p50_ms"], "%.1f"), fmt(i["p99_ms"], "%.1f"), fmt(i["max_ms"], "%.1f"),
                    fmt(l["p50_ms"], "%.1f"), fmt(l["p99_ms"], "%.1f"), fmt(l["max_ms"], "%.1f"), fmt(d, "%+.1f"),
                    i["inked"], i["sent"], l["inked"], l["sent"], fmt(l.get("upload_s"), "%.1f")))
        L.append("")
    w = res.get("wm")
    if w:
        L.append("A window manager, then an xterm once it manages the screen, over %s (rate/one-way delay): link "
                 "round trips waited until the xterm's frame maps at the real server (direct = tincan "
                 "`--no-local-answers`, whose app side waits when its clients wait), and seconds from the "
                 "manager's start to that map:" % w["link"])
        L.append("")
        L.append("| window manager | round trips, direct | round trips, tincan | map s, raw X | map s, tincan "
                 "| manager ready s, raw X / tincan |")
        L.append("|---|--:|--:|--:|--:|---|")
        for wm, r in w["wms"].items():
            def g(key, f):
                x = r.get(key, {})
                return "FAILED" if "error" in x else str(x.get(f, ""))
            L.append("| %s | %s | %s | %s | %s | %s / %s |" % (wm, g("tincan-direct", "round_trips"), g("tincan", "round_trips"),
                                                           g("raw", "map_s"), g("tincan", "map_s"),
                                                           g("raw", "wm_ready_s"), g("tincan", "wm_ready_s")))
        L.append("")
    mem = res.get("memory")
    if mem:
        if "error" in mem and "peak_rss_kb" not in mem:
            L.append("Memory: FAILED: %s" % mem["error"])
        else:
            L.append("Memory while a client floods PutImage (64x64, incompressible) through tincan over %s for %d s:" % (
                mem["link"], mem["seconds"]))
            L.append("")
            L.append("| half | RSS before KiB | peak RSS KiB | VmHWM KiB | bound KiB |")
            L.append("|---|--:|--:|--:|--:|")
            for k in ("app", "display"):
                L.append("| %s | %s | %s | %s | 65536 |" % (k, mem["baseline_kb"][k].get("VmRSS"),
                                                            mem["peak_rss_kb"][k], mem["peak_hwm_kb"][k]))
            L.append("")
            L.append("Flooding client: %s at the end; %d images (%d bytes of requests) written in %d s: %d bytes in "
                     "its first second (filling the buffers in front of the link), then %s B/s, against a link of "
                     "%d B/s. A new client after the flood: %s." % (
                         "alive" if mem["flood_alive"] else "DEAD", mem["flood_images"], mem["flood_bytes"],
                         mem["seconds"], mem["flood_burst_bytes"], mem["flood_rate_Bps_after_burst"], mem["link_rate_Bps"],
                         mem.get("after_flood_client", "?")))
        L.append("")
    return "\n".join(L)

# --------------------------------------------------------------------------- main


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    osr = ""
    if os.path.exists("/etc/debian_version"):
        osr = "Debian " + open("/etc/debian_version").read().strip() + ", "
    return "%s, %d CPUs, %.0f GiB, %sLinux %s" % (cpu, os.cpu_count(), mem, osr, platform.release())


class Ctx:
    n = 0

    def counter(self):
        self.n += 1
        return self.n

    def bin(self, name):
        return os.path.join(self.helpers, name)

    def paths(self, *keys):
        return [k for k in keys if k in self.args.paths.split(",")]


BENCHMARKS = [("timed", bench_timed), ("roundtrips", bench_roundtrips), ("input", bench_input),
              ("memory", bench_memory), ("wm", bench_wm)]


def main():
    ap = argparse.ArgumentParser(description="tincan latency benchmarks (see bench/latency/README.md)")
    ap.add_argument("--benchmarks", default="timed,roundtrips,input,memory,wm",
                    help="comma list of: timed, roundtrips, input, memory, wm (default: all)")
    ap.add_argument("--wm", default="twm", help="comma list of window managers for wm (default twm)")
    ap.add_argument("--paths", default="raw,tincan,tincan-direct",
                    help="comma list of raw, tincan, tincan-direct (tincan --no-local-answers, only in roundtrips)")
    ap.add_argument("--tincan-bin", default=os.path.join(ROOT, "build"), help="directory with tincan and tincan-link")
    ap.add_argument("--helpers", default=os.path.join(ROOT, "build", "latency"), help="directory of the C helpers")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "latency"), help="for results.json and results.md")
    ap.add_argument("--link", default="256k/20ms", help="RATE/ONE_WAY_DELAY of timed and input (default 256k/20ms; "
                    "none: no --rate or --delay, for --link-extra)")
    ap.add_argument("--link-mode", choices=("stream", "packet"), default="stream",
                    help="input: tincan-link stream (default) or packet (root: real kernel TCP between namespaces)")
    ap.add_argument("--link-extra", default="", help='input: more link options, e.g. "--queue 1500ms", '
                    '"--trace emu/traces/cellular.trace --delay 30ms" (with --link none), "--profile satellite"')
    ap.add_argument("--loads", default="upload", help="input: comma list of upload (PutImage from the app side), "
                    "download (GetImage towards it) (default upload)")
    ap.add_argument("--rtt-delay", default="150ms", help="one-way delay of the time-to-map runs (default 150ms)")
    ap.add_argument("--count-delay", default="20ms", help="one-way delay of the round-trip counting runs (default 20ms)")
    ap.add_argument("--input-idle-s", type=float, default=10, help="seconds of input without load (default 10)")
    ap.add_argument("--input-interval-ms", type=int, default=20, help="between injected events (default 20: 50/s)")
    ap.add_argument("--upload-bytes", type=int, default=2 * 1024 * 1024, help="pixels uploaded under load (default 2 MiB)")
    ap.add_argument("--memory-rate", default="64k", help="link rate of the memory benchmark (default 64k)")
    ap.add_argument("--memory-seconds", type=int, default=30, help="length of the flood (default 30)")
    ap.add_argument("--after-flood-s", type=int, default=20,
                    help="how long a new client may wait after the flood (default 20)")
    ap.add_argument("--no-verify", dest="verify", action="store_false",
                    help="skip the xterm window check (an extra xterm text run, direct and through tincan)")
    ap.add_argument("--timeout", type=int, default=240, help="per program, seconds (default 240)")
    ap.add_argument("--keep-logs", action="store_true")
    args = ap.parse_args()
    chosen = args.benchmarks.split(",")
    unknown = [b for b in chosen if b not in dict(BENCHMARKS)]
    if unknown:
        ap.error("unknown benchmark(s): " + ", ".join(unknown))

    ctx = Ctx()
    ctx.args = args
    ctx.rate, _, ctx.delay = args.link.partition("/")
    ctx.helpers = args.helpers
    for b in ("ink", "inkwatch", "upload", "mapwait"):
        if not os.access(ctx.bin(b), os.X_OK):
            raise SystemExit("latency: missing %s (run bench/latency/run.sh)" % ctx.bin(b))
    for b in ("tincan", "tincan-link"):
        if not os.access(os.path.join(args.tincan_bin, b), os.X_OK):
            raise SystemExit("latency: missing %s (build it, or give --tincan-bin DIR)" %
                             os.path.join(args.tincan_bin, b))
    for prog in ("Xvfb", "xterm", "xlogo", "xclock", "xeyes", "xcalc", "xlsfonts", "xwd", "xwininfo", "xdotool",
                 "gtk3-widget-factory"):
        if not shutil.which(prog):
            raise SystemExit("latency: %s is not installed (see .ci/run for the packages)" % prog)
    ctx.tmp = tempfile.mkdtemp(prefix="tincan-latency.")
    ctx.logdir = os.path.join(ctx.tmp, "logs")
    os.makedirs(ctx.logdir)
    os.makedirs(args.out, exist_ok=True)
    ctx.out_json = os.path.join(args.out, "results.json")
    ctx.empty_xauth = os.path.join(ctx.tmp, "empty.xauth")
    open(ctx.empty_xauth, "w").close()
    home = os.path.join(ctx.tmp, "home")
    os.makedirs(home)
    ctx.env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY", "LC_ALL")}
    ctx.env.update(HOME=home, LANG="C.UTF-8", XDG_RUNTIME_DIR=ctx.tmp, XDG_CACHE_HOME=os.path.join(home, ".cache"))
    # One version of tincan for the whole run, even if its tree is rebuilt meanwhile.
    h = hashlib.sha256(open(os.path.join(args.tincan_bin, "tincan"), "rb").read()).hexdigest()[:12]
    for b in ("tincan", "tincan-link"):
        shutil.copy2(os.path.join(args.tincan_bin, b), os.path.join(ctx.tmp, b))
    ctx.tincan_bin, ctx.link_bin = os.path.join(ctx.tmp, "tincan"), os.path.join(ctx.tmp, "tincan-link")
    ctx.secret = os.path.join(ctx.tmp, "tincan.secret")
    subprocess.run([ctx.tincan_bin, "secret", ctx.secret], check=True, env=ctx.env, stdout=subprocess.DEVNULL)
    src = os.path.abspath(os.path.join(args.tincan_bin, ".."))
    commit = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "src"], capture_output=True, text=True).stdout.strip()
    ctx.base = pick_displays(3)
    ctx.real_env = dict(ctx.env, DISPLAY=":%d" % ctx.base, XAUTHORITY=ctx.empty_xauth)
    res = {"meta": {"started": datetime.datetime.now().isoformat(timespec="seconds"),
                    "command": " ".join(["bench/latency/run.sh"] + sys.argv[1:]), "machine": machine(),
                    "tincan_commit": (commit or "?") + (" (src/ modified)" if dirty else ""),
                    "tincan_binary": "sha256 " + h, "tincan_tree": src,
                    "xvfb": "Xvfb -screen 0 1024x768x24 -nolisten tcp -noreset -extension GLX -extension MIT-SHM",
                    "display": ctx.base, "load_before": os.getloadavg()[0]}}

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    ok = False
    try:
        xvfb = Proc(ctx, "xvfb", ["Xvfb", ":%d" % ctx.base, "-screen", "0", "1024x768x24", "-nolisten", "tcp",
                                  "-noreset", "-extension", "GLX", "-extension", "MIT-SHM"], ctx.env, group=False)
        if not wait_for(lambda: os.path.exists("/tmp/.X11-unix/X%d" % ctx.base) or not xvfb.alive(), 10) or \
                not xvfb.alive():
            raise SystemExit("latency: Xvfb :%d did not start: %s" % (ctx.base, xvfb.tail()))
        time.sleep(0.3)
        log(ctx, "latency: Xvfb :%d, raw X on :%d, tincan on :%d, logs in %s" % (
            ctx.base, ctx.base + 1, ctx.base + 2, ctx.logdir))
        for name, fn in BENCHMARKS:
            if name in chosen:
                fn(ctx, res)
        ok = True
    except KeyboardInterrupt:
        log(ctx, "latency: interrupted")
    finally:
        stop_all()
        for l in list(LOCKS):
            drop_lock(l)
        res["meta"]["load_after"] = os.getloadavg()[0]
        save(ctx, res)
        md = markdown(res)
        with open(os.path.join(args.out, "results.md"), "w") as f:
            f.write(md + "\n")
        print(md)
        failed = "FAILED" in md or "DIFFERS" in md
        if args.keep_logs or failed or not ok:
            log(ctx, "latency: logs kept in %s" % ctx.logdir)
        else:
            shutil.rmtree(ctx.tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
