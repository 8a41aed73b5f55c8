#!/usr/bin/env python3
"""compare.py -- runs the X workloads through raw X, zlib (ssh -C), nxproxy and tincan.

Owns the processes of one benchmark run (Xvfb, relays, proxies, clients) and the raw
results (results.json, results.csv). Must not need anything beyond python3's standard
library; report.py turns the results into Markdown and HTML. Run it via run.sh.
"""
import argparse
import csv
import datetime
import gzip
import hashlib
import json
import math
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CLK_TCK = os.sysconf("SC_CLK_TCK")

QUIET_S = 0.5            # the link counts as quiet after this long without a byte
POLL_S = 0.1             # how often the byte counters are read while waiting
TAIL_POLL_S = 0.005      # ... after the pen's release, for the time of the link's last byte
TAIL_QUIET_S = 1.0       # ... until it has been quiet this long (a keepalive PING comes after 2 s)
GPL3 = "/usr/share/common-licenses/GPL-3"

# --------------------------------------------------------------------------- processes


class Proc:
    """One child process with its log file; stopped by its own pid (or process group)."""

    all = []

    def __init__(self, name, argv, env, logdir, stdout=None, group=False, cwd=None):
        self.name = name
        self.log_path = os.path.join(logdir, name + ".log")
        self.log = open(self.log_path, "ab")
        self.group = group
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                  stdout=stdout if stdout is not None else self.log,
                                  stderr=self.log, start_new_session=group, cwd=cwd)
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
            except ProcessLookupError:
                pass

    def stop(self, sig=signal.SIGTERM, wait_s=5.0):
        self.send(sig)
        try:
            self.p.wait(wait_s)
        except subprocess.TimeoutExpired:
            self.send(signal.SIGKILL)
            self.p.wait(5)
        if self.group:  # leftovers of the group (children of a shell)
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.log.close()
        if self in Proc.all:
            Proc.all.remove(self)
        return self.p.returncode

    def log_tail(self, n=6):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").strip().splitlines()
            return " | ".join(l.strip() for l in lines[-n:])
        except OSError:
            return ""


def stop_all():
    for p in list(Proc.all):
        try:
            p.stop(signal.SIGTERM, 2.0)
        except Exception:
            pass


def task_runtime_s(pid):
    """CPU time of all threads of live process pid, from the scheduler's nanosecond
    counters (/proc/PID/task/TID/schedstat), or None where the kernel has none. The
    utime/stime of /proc/PID/stat count whole 10 ms ticks, too coarse for workloads
    that cost a few ms."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


def cpu_seconds(pid):
    """CPU seconds of pid and its live descendants (scheduler runtime where the kernel
    has it, else utime+stime), plus the ticks of children they have already reaped."""
    stats = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rindex(")") + 2:].split()
        stats[int(d)] = (int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14]))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        if p in stats:
            _, own_ticks, reaped_ticks = stats[p]
            precise = task_runtime_s(p)
            total += (precise if precise is not None else own_ticks / CLK_TCK) + reaped_ticks / CLK_TCK
            todo.extend(c for c, (pp, _, _) in stats.items() if pp == p)
    return total


def clip(text, n):
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."


def wait_for(pred, timeout_s, step_s=0.02):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step_s)
    return pred()


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


def display_free(n):
    return (not os.path.exists("/tmp/.X%d-lock" % n) and
            not os.path.exists("/tmp/.X11-unix/X%d" % n) and
            all(port_free(b + n) for b in (4000, 6000, 7000, 8000, 9000)))


def pick_displays(count):
    """count consecutive free display numbers (also free ports 4000/6000/7000+N)."""
    base = 140 + (os.getpid() % 20) * 5
    for start in list(range(base, 300, 5)) + list(range(140, base, 5)):
        if all(display_free(start + i) for i in range(count)):
            return start
    raise SystemExit("compare: no free block of %d display numbers" % count)


LOCKS = set()      # lock files this run holds, removed at exit whatever happens


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

# --------------------------------------------------------------------------- the link


class Emulator:
    """tincan-link stream: the byte counter, or the slow link, between the two ends."""

    def __init__(self, ctx, name, listen, connect, link_args):
        self.stats_file = os.path.join(ctx.tmp, name + ".stats")
        ready = os.path.join(ctx.tmp, name + ".ready")
        for f in (self.stats_file, ready):
            if os.path.exists(f):
                os.unlink(f)
        self.proc = Proc(name, [ctx.link_bin, "stream", "--listen", listen, "--connect", connect,
                                "--stats-file", self.stats_file, "--ready-file", ready] + link_args,
                         ctx.base_env, ctx.logdir)
        if not wait_for(lambda: os.path.exists(ready), 10):
            raise RuntimeError("tincan-link did not start: " + self.proc.log_tail())

    def snapshot(self):
        """(up_bytes, down_bytes) now: SIGUSR1 makes the emulator rewrite its stats file."""
        if os.path.exists(self.stats_file):
            os.unlink(self.stats_file)
        self.proc.send(signal.SIGUSR1)
        if not wait_for(lambda: os.path.exists(self.stats_file), 5, 0.003):
            raise RuntimeError("tincan-link wrote no stats")
        kv = {}
        with open(self.stats_file) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                kv[k] = v
        return int(kv["up_bytes"]), int(kv["down_bytes"])

    def wait_quiet(self, max_s, quiet_s=QUIET_S):
        """Waits until no byte moved for quiet_s (or max_s passed); returns the counters
        and whether the link went quiet."""
        last = self.snapshot()
        since = time.monotonic()
        end = since + max_s
        while time.monotonic() < end:
            time.sleep(POLL_S)
            now = self.snapshot()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return now, True
        return last, False

# --------------------------------------------------------------------------- the paths


class Path:
    """One way for X clients to reach Xvfb. Subclasses start their processes in start()."""

    label = "?"
    c2s_is_up = True         # is the app->display direction the emulator's "up"?

    def __init__(self, ctx, key, display, link_args):
        self.ctx, self.key, self.display, self.link_args = ctx, key, display, link_args
        self.emu = None
        self.counter = None      # count mode: the clients' own byte counter
        self.procs = []          # [(role, Proc)] whose CPU is measured: role "app"/"display"
        self.others = []         # processes that are not measured
        self.locks = []
        self.client_env = dict(ctx.base_env, DISPLAY=":%d" % display,
                               XAUTHORITY=ctx.empty_xauth)

    def name(self, what):
        return "%s-%s-%s" % (self.ctx.mode, self.key, what)

    def alive(self):
        return all(p.alive() for _, p in self.procs) and all(p.alive() for p in self.others) \
            and self.emu is not None and self.emu.proc.alive()

    def why_dead(self):
        dead = [(r, p) for r, p in self.procs if not p.alive()] + \
               [("other", p) for p in self.others if not p.alive()]
        if self.emu and not self.emu.proc.alive():
            dead.append(("link", self.emu.proc))
        return "; ".join("%s (%s) exited %s: %s" % (p.name, r, p.p.returncode, clip(p.log_tail(3), 300))
                         for r, p in dead) or "?"

    def diagnose(self):
        """Log lines of the proxies that explain a failure (PANIC, error, warning)."""
        found = []
        files = [p.log_path for _, p in self.procs] + self.extra_logs()
        for path in files:
            try:
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                continue
            for line in text.splitlines():
                l = line.lower()
                if ("panic" in l or "error" in l or "fatal" in l) and "nxdialog" not in l \
                        and "nxclient" not in l and line.strip() not in found:
                    found.append(line.strip())
        # The first cause first: a PANIC line explains more than what followed it.
        found.sort(key=lambda l: 0 if "decode" in l.lower() or "assert" in l.lower() else
                   1 if "panic" in l.lower() else 2)
        return found[:4]

    def extra_logs(self):
        return []

    def cpu(self):
        return {r: cpu_seconds(p.pid) for r, p in self.procs if p.alive()}

    def bytes(self):
        up, down = self.emu.snapshot()
        return (up, down) if self.c2s_is_up else (down, up)

    def ready_probe(self):
        """A small client through the path, not measured, until it answers."""
        def ok():
            r = subprocess.run(["xwininfo", "-root"], env=self.client_env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
            return r.returncode == 0
        return wait_for(ok, 30, 0.2)

    def start_client_counter(self):
        """Count mode: clients reach the path through a byte counter of their own (display
        ctx.counter_display), so that each path's raw X traffic is measured, not assumed:
        nxproxy delivers fewer pen motions, and its clients then draw fewer lines."""
        cd = self.ctx.counter_display
        sock = "/tmp/.X11-unix/X%d" % cd
        self.counter = Emulator(self.ctx, self.name("client-count"), "unix:" + sock,
                                "unix:/tmp/.X11-unix/X%d" % self.display, [])
        xauth = self.client_env.get("XAUTHORITY")
        if xauth and os.path.getsize(xauth):
            # The path's cookie, again for the counter's display number.
            listed = subprocess.run(["xauth", "-f", xauth, "list"], capture_output=True, text=True,
                                    env=self.ctx.base_env).stdout.split()
            if len(listed) >= 3:
                subprocess.run(["xauth", "-f", xauth, "add", ":%d" % cd, listed[1], listed[2]],
                               check=True, env=self.ctx.base_env)
        self.client_env["DISPLAY"] = ":%d" % cd

    def raw_bytes(self):
        """Bytes between the clients and the path so far (count mode), else None."""
        if not self.counter:
            return None
        up, down = self.counter.snapshot()
        return up + down

    def stop(self):
        for _, p in reversed(self.procs):
            p.stop()
        for p in reversed(self.others):
            p.stop()
        if self.emu:
            self.emu.proc.stop()
        if self.counter:
            self.counter.proc.stop()
            self.counter = None
        for l in self.locks:
            drop_lock(l)
        self.locks = []


class RawPath(Path):
    label = "raw X"

    def start(self):
        self.locks.append(take_lock(self.display))
        sock = "/tmp/.X11-unix/X%d" % self.display
        self.emu = Emulator(self.ctx, self.name("link"), "unix:" + sock,
                            "unix:/tmp/.X11-unix/X%d" % self.ctx.xvfb_display, self.link_args)
        self.cleanup_paths = [sock]


class ZlibPath(Path):
    label = "zlib-6 (ssh -C)"

    def start(self):
        self.locks.append(take_lock(self.display))
        t = self.ctx.tmp
        sock = "/tmp/.X11-unix/X%d" % self.display
        if self.ctx.args.link_transport == "tcp":
            zb, lk = "127.0.0.1:%d" % (9000 + self.display), "127.0.0.1:%d" % (8000 + self.display)
        else:
            zb, lk = "unix:" + os.path.join(t, "zB.sock"), "unix:" + os.path.join(t, "zlink.sock")
            for f in (zb[5:], lk[5:]):
                if os.path.exists(f):
                    os.unlink(f)
        zrelay = self.ctx.zrelay_bin
        rb, ra = os.path.join(t, "zB.ready"), os.path.join(t, "zA.ready")
        for f in (ra, rb):
            if os.path.exists(f):
                os.unlink(f)
        disp = Proc(self.name("zrelay-display"),
                    [zrelay, "--listen", zb, "--zside", "listen", "--level", "6",
                     "--connect", "unix:/tmp/.X11-unix/X%d" % self.ctx.xvfb_display,
                     "--ready-file", rb], self.ctx.base_env, self.ctx.logdir)
        self.procs.append(("display", disp))
        wait_for(lambda: os.path.exists(rb), 5)
        self.emu = Emulator(self.ctx, self.name("link"), lk, zb, self.link_args)
        app = Proc(self.name("zrelay-app"),
                   [zrelay, "--listen", "unix:" + sock, "--zside", "connect", "--level", "6",
                    "--connect", lk, "--ready-file", ra], self.ctx.base_env, self.ctx.logdir)
        self.procs.insert(0, ("app", app))
        if not wait_for(lambda: os.path.exists(ra), 5):
            raise RuntimeError("zrelay did not start: " + app.log_tail())
        self.cleanup_paths = [sock]


class NxPath(Path):
    label = "nxproxy"
    c2s_is_up = False        # nxproxy -S dials the -C side: the emulator's up is display->app

    def __init__(self, ctx, key, display, link_args, homes):
        super().__init__(ctx, key, display, link_args)
        self.homes = homes

    def start(self):
        m = self.display
        hc, hs = self.homes
        for h in (hc, hs):
            os.makedirs(h, exist_ok=True)
        envc = dict(self.ctx.base_env, HOME=hc)
        envs = dict(self.ctx.base_env, HOME=hs, DISPLAY=":%d" % self.ctx.xvfb_display,
                    XAUTHORITY=self.ctx.empty_xauth)
        c = Proc(self.name("nxproxy-C"), ["nxproxy", "-C", "loopback=1", "listen=%d" % (7000 + m),
                                          "link=modem", ":%d" % m], envc, self.ctx.logdir)
        self.procs.append(("app", c))
        if not wait_for(lambda: not port_free(7000 + m), 10):
            raise RuntimeError("nxproxy -C did not listen: " + c.log_tail())
        self.emu = Emulator(self.ctx, self.name("link"), "127.0.0.1:%d" % (4000 + m),
                            "127.0.0.1:%d" % (7000 + m), self.link_args)
        s = Proc(self.name("nxproxy-S"), ["nxproxy", "-S", "127.0.0.1:%d" % m], envs,
                 self.ctx.logdir)
        self.procs.append(("display", s))

        def started():
            try:
                with open(c.log_path, "rb") as f:
                    return b"Session started" in f.read()
            except OSError:
                return False
        if not wait_for(started, 30, 0.05):
            raise RuntimeError("nxproxy session did not start: " + c.log_tail() + " / " + s.log_tail())
        with open(c.log_path, "rb") as f:
            self.cache_loaded = b"Using cache file" in f.read()
        # A fresh session stalls 3.5-5 s before serving its first client; any signal ends
        # the stall and SIGUSR1 only writes statistics.
        time.sleep(0.2)
        c.send(signal.SIGUSR1)
        s.send(signal.SIGUSR1)
        self.cleanup_paths = ["/tmp/.X11-unix/X%d" % m]

    def extra_logs(self):
        # nxproxy writes its reasons to $HOME/.nx/[CS]-N/errors, not to stderr.
        return [os.path.join(h, ".nx", "%s-%d" % (side, self.display), "errors")
                for h, side in zip(self.homes, "CS")]

    def stop(self):
        # SIGTERM to -C first lets both sides save their caches.
        c = self.procs[0][1]
        c.send(signal.SIGTERM)
        wait_for(lambda: not c.alive(), 15, 0.1)
        super().stop()


class TincanPath(Path):
    label = "tincan"

    def start(self):
        t = self.ctx.tmp
        xauth = os.path.join(t, "tincan.xauth")
        tb = self.ctx.tincan_bin
        # As nxproxy gets link=modem: the same preset (level, write aggregation).
        extra = ["--compress", str(self.ctx.args.tincan_compress)] \
            if self.ctx.args.tincan_compress is not None else ["--link-speed", "modem"]
        # One compression cache per mode, shared by both halves and by tincan-cold and
        # tincan-warm (as the nxproxy HOMEs are): warm starts from what cold saved.
        extra += ["--cache-dir", os.path.join(t, self.ctx.mode + "-tincan-cache")]
        extra += self.ctx.args.tincan_extra.split()
        if self.ctx.args.link_transport == "tcp":
            dport, lport = 9000 + self.display, 8000 + self.display
            disp_addr, link_addr = "127.0.0.1:%d" % dport, "127.0.0.1:%d" % lport
            secret = os.path.join(t, "tincan.secret")
            if not os.path.exists(secret):
                subprocess.run([tb, "secret", secret], check=True, env=self.ctx.base_env)
            extra += ["--secret-file", secret]
            listening = lambda: not port_free(dport)
        else:
            dsock, lk = os.path.join(t, "tdisp.sock"), os.path.join(t, "tlink.sock")
            for f in (dsock, lk):
                if os.path.exists(f):
                    os.unlink(f)
            disp_addr, link_addr = "unix:" + dsock, "unix:" + lk
            listening = lambda: os.path.exists(dsock)
        if os.path.exists(xauth):
            os.unlink(xauth)
        open(xauth, "w").close()
        d = Proc(self.name("tincan-display"),
                 [tb, "display", "--link-listen", disp_addr, "--display",
                  ":%d" % self.ctx.xvfb_display, "--stats"] + extra,
                 dict(self.ctx.base_env, XAUTHORITY=self.ctx.empty_xauth), self.ctx.logdir)
        self.procs.append(("display", d))
        if not wait_for(listening, 10):
            raise RuntimeError("tincan display did not listen: " + d.log_tail())
        self.emu = Emulator(self.ctx, self.name("link"), link_addr, disp_addr, self.link_args)
        out = os.path.join(self.ctx.logdir, self.name("tincan-app") + ".out")
        outf = open(out, "wb")
        a = Proc(self.name("tincan-app"),
                 [tb, "app", "--link-connect", link_addr, "--display-number", str(self.display),
                  "--xauthority", xauth, "--stats"] + extra, self.ctx.base_env, self.ctx.logdir,
                 stdout=outf)
        outf.close()
        self.procs.insert(0, ("app", a))

        def announced():
            with open(out, "rb") as f:
                return b"DISPLAY=" in f.read()
        if not wait_for(announced, 15, 0.02):
            raise RuntimeError("tincan app did not start: " + a.log_tail())
        self.client_env["XAUTHORITY"] = xauth
        self.cleanup_paths = []

    def stop(self):
        # The app side first, as a user would end a session; both print --stats at exit.
        self.procs[0][1].stop()
        super().stop()

# --------------------------------------------------------------------------- workloads


class Failed(Exception):
    pass


def client(ctx, path, argv, name, env=None, stdout=None):
    return Proc(name, argv, env or path.client_env, ctx.logdir, stdout=stdout, group=True)


def run_to_end(ctx, path, argv, name, timeout_s, env=None):
    p = client(ctx, path, argv, name, env)
    try:
        p.p.wait(timeout_s)
    except subprocess.TimeoutExpired:
        p.stop(signal.SIGKILL)
        raise Failed("%s did not finish in %d s" % (argv[0], timeout_s))
    rc = p.stop()
    if rc != 0:
        raise Failed("%s exited %s: %s" % (argv[0], rc, p.log_tail(3)))
    return p


def w_x11perf(args):
    def run(ctx, path, timeout_s):
        t0 = time.monotonic()
        run_to_end(ctx, path, ["x11perf", "-repeat", "1", "-reps", "200"] + args,
                   path.name("x11perf"), timeout_s)
        return {"wall_s": time.monotonic() - t0}
    return run


def w_xterm_text(ctx, path, timeout_s):
    script = "cat %s; IFS= read -rs -d R -p $'\\e[6n' _" % GPL3
    env = dict(path.client_env, LANG="C")
    env.pop("LC_ALL", None)
    t0 = time.monotonic()
    p = Proc(path.name("xterm-text"), ["xterm", "+j", "-geometry", "80x24+0+0", "-e", "bash", "-c",
                                       script], env, ctx.logdir, group=True)
    try:
        p.p.wait(timeout_s)
    except subprocess.TimeoutExpired:
        p.stop(signal.SIGKILL)
        raise Failed("xterm did not finish in %d s" % timeout_s)
    wall = time.monotonic() - t0
    rc = p.stop()
    if rc != 0:
        raise Failed("xterm exited %s: %s" % (rc, p.log_tail(3)))
    return {"wall_s": wall}


def w_cmd(argv, env_extra=None):
    def run(ctx, path, timeout_s):
        t0 = time.monotonic()
        run_to_end(ctx, path, argv, path.name(argv[0]), timeout_s,
                   dict(path.client_env, **env_extra) if env_extra else None)
        return {"wall_s": time.monotonic() - t0}
    return run


def w_xlsfonts(ctx, path, timeout_s):
    out = os.path.join(ctx.logdir, path.name("xlsfonts") + ".out")
    t0 = time.monotonic()
    with open(out, "wb") as f:
        p = client(ctx, path, ["sh", "-c", "xlsfonts | head"], path.name("xlsfonts"), stdout=f)
        try:
            p.p.wait(timeout_s)
        except subprocess.TimeoutExpired:
            p.stop(signal.SIGKILL)
            raise Failed("xlsfonts did not finish in %d s" % timeout_s)
    wall = time.monotonic() - t0
    p.stop()
    with open(out, "rb") as f:
        lines = f.read().splitlines()
    if len(lines) != 10:
        raise Failed("xlsfonts | head printed %d lines: %s" % (len(lines), p.log_tail(3)))
    return {"wall_s": wall}


def start_mapwait(ctx, timeout_s):
    """mapwait on the real display; returns the Proc once it watches the root window."""
    mw = subprocess.Popen([ctx.mapwait_bin, str(int(timeout_s * 1000))], env=ctx.real_env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = mw.stdout.readline()
    if line.strip() != b"ready":
        mw.kill()
        raise Failed("mapwait did not start")
    return mw


def w_until_mapped(argv, env_extra=None):
    """Start-up: time from exec to the first top-level map seen at the real X server; the
    program then runs until the link is quiet (it has drawn), and is killed."""
    def run(ctx, path, timeout_s):
        mw = start_mapwait(ctx, timeout_s)
        env = dict(path.client_env, **(env_extra or {}))
        t0 = time.monotonic()
        p = Proc(path.name(os.path.basename(argv[0])), argv, env, ctx.logdir, group=True)
        line = mw.stdout.readline()
        t_map = time.monotonic() - t0
        mw.wait()
        if not line.startswith(b"mapped"):
            p.stop(signal.SIGKILL)
            raise Failed("%s mapped no window in %d s: %s" % (argv[0], timeout_s, p.log_tail(3)))
        if not p.alive():
            raise Failed("%s exited %s: %s" % (argv[0], p.p.returncode, p.log_tail(3)))
        _, quiet = path.emu.wait_quiet(ctx.settle_max_s)
        t_settle = time.monotonic() - t0 - (QUIET_S if quiet else 0)
        alive = p.alive()
        p.stop(signal.SIGTERM)
        if not alive:
            raise Failed("%s died after mapping: %s" % (argv[0], p.log_tail(3)))
        return {"wall_s": t_map, "settle_s": t_settle, "settled": quiet}
    return run


def pen_points(n=301):
    pts, prev = [], None
    for i in range(n):
        x = 40 + int(i * 1.7)
        y = 200 + int(120 * math.sin(i / 18.0))
        if (x, y) == prev:
            y += 1
        pts.append((x, y))
        prev = (x, y)
    return pts


def w_pen(ctx, path, timeout_s):
    out = os.path.join(ctx.logdir, path.name("pen") + ".out")
    outf = open(out, "wb")
    subprocess.run(["xdotool", "mousemove", "20", "20"], env=ctx.real_env, check=False)
    p = Proc(path.name("pen"), [ctx.pen_bin, "600", "400"], path.client_env, ctx.logdir,
             stdout=outf, group=True)
    outf.close()

    def read_out():
        with open(out, "rb") as f:
            return f.read().decode()
    if not wait_for(lambda: "ready" in read_out() or not p.alive(), timeout_s, 0.02):
        p.stop(signal.SIGKILL)
        raise Failed("pen window not exposed in %d s" % timeout_s)
    if not p.alive():
        raise Failed("pen exited %s: %s" % (p.p.returncode, p.log_tail(3)))
    pts = pen_points()
    cmd = ["xdotool", "mousemove", str(pts[0][0]), str(pts[0][1]), "mousedown", "1"]
    for x, y in pts[1:]:
        cmd += ["sleep", "0.01", "mousemove", str(x), str(y)]
    cmd += ["sleep", "0.01", "mouseup", "1"]
    t0 = time.monotonic()
    subprocess.run(cmd, env=ctx.real_env, check=True, timeout=60)
    t_release = time.monotonic()
    t_input = t_release - t0
    # The tail: when the link's last byte of the pen's stroke came (the emulator's counters
    # of delivered bytes, read every TAIL_POLL_S), after the button's release, until the
    # pen has exited and the link has been quiet for TAIL_QUIET_S.
    last, t_last, wall = path.emu.snapshot(), t_release, None
    while True:
        now = time.monotonic()
        if wall is None and p.p.poll() is not None:
            wall = now - t0
        if wall is not None and now - t_last >= TAIL_QUIET_S:
            break
        if now - t_release > timeout_s:
            p.stop(signal.SIGKILL)
            raise Failed("pen did not see the button release in %d s (%s)" % (timeout_s, read_out().strip()))
        time.sleep(TAIL_POLL_S)
        cur = path.emu.snapshot()
        if cur != last:
            last, t_last = cur, time.monotonic()
    rc = p.stop()
    res = dict(kv.split("=") for kv in read_out().split() if "=" in kv)
    if rc != 0 or "motion" not in res:
        raise Failed("pen exited %s: %s" % (rc, p.log_tail(3)))
    subprocess.run(["xdotool", "mousemove", "1000", "750"], env=ctx.real_env, check=False)
    return {"wall_s": wall, "input_s": t_input, "tail_s": round(t_last - t_release, 3),
            "motion_events": int(res["motion"]),
            "motion_sent": len(pts) - 1, "lines": int(res["lines"])}



# --------------------------------------------------------------------------- real programs
# A browser, an editor and a PDF viewer, driven by keys sent on the real display (no window
# manager: the keyboard goes to the window under the pointer). Ready: the link quiet after
# the program's window mapped and after each step. Their documents are made or copied once
# per run into ctx.tmp/apps (bench/images/page.html and Debian packages' docs).

APP_PDFS = ["/usr/share/doc/valgrind/valgrind_manual.pdf.gz", "/usr/share/doc/bzip2/manual.pdf.gz",
            "/usr/share/doc/zlib1g-dev/crc-doc.1.0.pdf.gz", "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"]
APP_PHOTOS = ["/usr/share/images/fluxbox/debian-squared.jpg", "/usr/share/icewm/themes/NanoBlue/eos.jpg"]
# What the image viewer shows, besides APP_PHOTOS: artwork of Debian packages (a photograph
# of wood, renders, a logo), those present.
VIEWER_IMAGES = ["/usr/share/backgrounds/gnome/wood-l.webp", "/usr/share/images/fluxbox/debian-dark.png",
                 "/usr/share/backgrounds/gnome/licorice-d.webp", "/usr/share/backgrounds/gnome/truchet-l.webp"]
FF_PREFS = """user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.aboutwelcome.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.auto", false);
user_pref("browser.tabs.warnOnClose", false);
user_pref("general.smoothScroll", false);
"""


def app_docs(ctx):
    d = os.path.join(ctx.tmp, "apps")
    if os.path.isdir(d):
        return d
    os.makedirs(d)
    for f in APP_PDFS:
        if os.path.exists(f):
            out = os.path.join(d, os.path.basename(f).replace(".gz", ""))
            with open(out, "wb") as o:
                o.write(gzip.open(f).read() if f.endswith(".gz") else open(f, "rb").read())
    for f in APP_PHOTOS + [os.path.join(HERE, "..", "images", "page.html"), os.path.join(HERE, "article.html")]:
        if os.path.exists(f):
            shutil.copy(f, d)
    return d


def xkeys(ctx, *args):
    subprocess.run(["xdotool", "mousemove", "400", "300"] + list(args), env=ctx.real_env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)


def w_app(make_runs):
    """make_runs(ctx) -> [(argv, env_extra, [step...])]: each program in turn, until mapped,
    then each step (xdotool arguments), waiting for the link to be quiet after each; the
    program is then ended. wall_s: the first map; load_s: the link quiet after it (the first
    program drawn); settle_s: ready after the last step."""
    def run(ctx, path, timeout_s):
        t0 = time.monotonic()
        t_first_map, settled = None, True
        for argv, env_extra, steps in make_runs(ctx):
            mw = start_mapwait(ctx, timeout_s)
            env = {k: v for k, v in dict(path.client_env, **(env_extra or {})).items() if v is not None}
            p = Proc(path.name(os.path.basename(argv[0])), argv, env, ctx.logdir, group=True)
            line = mw.stdout.readline()
            mw.wait()
            if not line.startswith(b"mapped"):
                p.stop(signal.SIGKILL)
                raise Failed("%s mapped no window in %d s: %s" % (argv[0], timeout_s, p.log_tail(3)))
            first = t_first_map is None
            if first:
                t_first_map = time.monotonic() - t0
            _, quiet = path.emu.wait_quiet(ctx.tail_max_s)
            settled = settled and quiet
            if first:  # the first program drawn (a page loaded), before any step
                t_load = time.monotonic() - t0 - (QUIET_S if quiet else 0)
            for step in steps:
                xkeys(ctx, *step)
                _, quiet = path.emu.wait_quiet(ctx.tail_max_s)
                settled = settled and quiet
            alive = p.alive()
            p.stop(signal.SIGTERM)
            if not alive:
                raise Failed("%s died: %s" % (argv[0], p.log_tail(3)))
        t_ready = time.monotonic() - t0 - (QUIET_S if settled else 0)
        return {"wall_s": t_first_map, "load_s": t_load, "settle_s": t_ready, "settled": settled}
    return run


def runs_firefox(ctx, page="page.html", steps=(("key", "Next"), ("key", "Next"), ("key", "Next"))):
    d = app_docs(ctx)
    prof = tempfile.mkdtemp(prefix="ff-", dir=ctx.tmp)  # a fresh profile every time
    with open(os.path.join(prof, "user.js"), "w") as f:
        f.write(FF_PREFS)
    argv = ["firefox-esr", "--no-remote", "--profile", prof, "-width", "900", "-height", "700",
            "file://" + os.path.join(d, page)]
    env = {"MOZ_HEADLESS": None}
    return [(argv, env, [list(s) for s in steps])]


def runs_firefox_text(ctx):
    # A page of text alone (a table, a list, a search field; no images): what the browser
    # itself costs, its window and the text it renders, apart from photographs.
    return runs_firefox(ctx, "article.html", (("key", "Next"),))


def runs_emacs(ctx):
    argv = ["emacs", "-Q", "--no-site-file", "-geometry", "80x40+0+0", "--eval", "(blink-cursor-mode 0)",
            "/usr/share/common-licenses/GPL-3"]
    return [(argv, {"LANG": "C.UTF-8"}, [["key", "Next"], ["key", "Next"], ["key", "Next"],
                                         ["type", "--delay", "30", "Typed through the link. "]])]


def runs_feh(ctx):
    """feh, an image viewer (imlib2, PutImage of whole windows): photographs and artwork
    scaled into an 800x600 window, the next image at each step."""
    d = app_docs(ctx)
    imgs = [os.path.join(d, os.path.basename(f)) for f in APP_PHOTOS] + [f for f in VIEWER_IMAGES if os.path.exists(f)]
    imgs = [f for f in imgs if os.path.exists(f)]
    if len(imgs) < 2:
        raise Failed("fewer than two images found for feh (" + ", ".join(APP_PHOTOS + VIEWER_IMAGES) + ")")
    argv = ["feh", "-g", "800x600+0+0", "--scale-down", "--zoom", "max", "-N"] + imgs
    return [(argv, None, [["key", "space"]] * (len(imgs) - 1))]


def spreadsheet(path):
    """A sheet of figures and words, the same every run (a seeded generator)."""
    import random
    rnd = random.Random(18)
    words = ["north", "south", "east", "west", "radio", "serial", "cell", "link", "queue", "rate"]
    with open(path, "w") as f:
        f.write("id,site,kind,rate kbit/s,delay ms,loss %,bytes,notes\n")
        for i in range(1, 301):
            f.write("%d,%s-%d,%s,%d,%d,%.2f,%d,%s %s\n" % (
                i, rnd.choice(words), rnd.randint(1, 40), rnd.choice(words), rnd.choice((9, 64, 256, 1024, 54000)),
                rnd.randint(1, 600), rnd.random() * 3, rnd.randint(100, 10 ** 7), rnd.choice(words), rnd.choice(words)))


def runs_gnumeric(ctx):
    """gnumeric, a large GTK 3 program: a 300-row sheet, 3 pages down, figures typed in."""
    d = app_docs(ctx)
    sheet = os.path.join(d, "sites.csv")
    if not os.path.exists(sheet):
        spreadsheet(sheet)
    argv = ["gnumeric", "--no-splash", "--geometry", "900x700+0+0", sheet]
    return [(argv, dict(NO_A11Y, LANG="C.UTF-8"),
             [["key", "Next"], ["key", "Next"], ["key", "Next"], ["type", "--delay", "30", "42.5"], ["key", "Return"]])]


def runs_pdf(viewer):
    def make(ctx):
        d = app_docs(ctx)
        docs = [os.path.join(d, n) for n in ("valgrind_manual.pdf", "crc-doc.1.0.pdf", "shared-mime-info-spec.pdf")]
        out = []
        for doc in docs:
            if not os.path.exists(doc):
                continue
            argv = ["mupdf", "-r", "72", doc] if viewer == "mupdf" else \
                ["xpdf", "-geometry", "800x700+0+0", doc]
            out.append((argv, None, [["key", "Next"], ["key", "Next"]]))
        if not out:
            raise Failed("no PDF documents found (" + ", ".join(APP_PDFS) + ")")
        return out
    return make

NO_A11Y = {"NO_AT_BRIDGE": "1", "GTK_A11Y": "none", "GDK_BACKEND": "x11"}

WORKLOADS = [
    # key, description, function, in --quick
    ("x11perf", "x11perf mix (-rect10 -seg10 -ftext -copywinwin10 -putimage10 -oddtilerect10 "
     "-circle10, 200 reps)", w_x11perf(["-rect10", "-seg10", "-ftext", "-copywinwin10",
                                         "-putimage10", "-oddtilerect10", "-circle10"]), False),
    ("render", "x11perf RENDER text and traps (-aa10text -aa24text -rgb24text -aatrap10, 200 reps)",
     w_x11perf(["-aa10text", "-aa24text", "-rgb24text", "-aatrap10"]), False),
    ("xterm-text", "xterm +j prints GPL-3 (651 scrolls), LANG=C", w_xterm_text, False),
    ("xterm-start", "xterm -e true, to exit, LANG=C", w_cmd(["xterm", "-e", "true"], {"LANG": "C"}),
     True),
    ("xterm-utf8", "xterm -e true, to exit, LANG=C.UTF-8 (core-font metrics)",
     w_cmd(["xterm", "-e", "true"], {"LANG": "C.UTF-8"}), False),
    ("xlogo", "xlogo until mapped", w_until_mapped(["xlogo"]), True),
    ("xclock", "xclock until mapped", w_until_mapped(["xclock"]), False),
    ("xeyes", "xeyes until mapped", w_until_mapped(["xeyes"]), False),
    ("xcalc", "xcalc until mapped (C.UTF-8: Xlib builds a font set)", w_until_mapped(["xcalc"]), False),
    ("xlsfonts", "xlsfonts | head", w_xlsfonts, False),
    ("gtk3", "gtk3-widget-factory until mapped", w_until_mapped(["gtk3-widget-factory"], NO_A11Y),
     True),
    ("pen", "pen: a line per MotionNotify, 300 motions at 100 Hz by xdotool", w_pen, True),
    ("firefox", "firefox-esr, fresh profile, a local page (text, two photographs, a form), 3 pages down",
     w_app(runs_firefox), False),
    ("firefox-text", "firefox-esr, fresh profile, a local page of text alone (a table, a list, a field), 1 page down",
     w_app(runs_firefox_text), False),
    ("emacs", "emacs -Q (Lucid) on GPL-3: 3 pages down, a line typed", w_app(runs_emacs), False),
    ("mupdf", "mupdf -r 72 on 3 PDFs (valgrind manual, crc-doc, shared-mime-info spec), 2 pages down each",
     w_app(runs_pdf("mupdf")), False),
    ("xpdf", "xpdf on the same 3 PDFs, 2 pages down each", w_app(runs_pdf("xpdf")), False),
    ("feh", "feh on photographs and artwork (JPEG, PNG, WebP), scaled into 800x600, the next at each step",
     w_app(runs_feh), False),
    ("gnumeric", "gnumeric (GTK 3) on a 300-row sheet: 3 pages down, a figure typed",
     w_app(runs_gnumeric), False),
    ("xdpyinfo", "xdpyinfo, to exit (ListExtensions and every extension's version)",
     w_cmd(["xdpyinfo"]), False),
]

# --------------------------------------------------------------------------- the run


class Ctx:
    pass


def make_path(ctx, key, base, link_args):
    if key == "raw":
        return RawPath(ctx, key, base + 1, link_args)
    if key == "zlib":
        return ZlibPath(ctx, key, base + 2, link_args)
    if key.startswith("nx"):
        return NxPath(ctx, key, base + 3, link_args, ctx.nx_homes)
    if key.startswith("tincan"):
        return TincanPath(ctx, key, base + 4, link_args)
    raise ValueError(key)


PATHS = [("raw", "raw X"), ("zlib", "zlib-6 (ssh -C)"), ("nx-cold", "nxproxy modem, cold"),
         ("nx-warm", "nxproxy modem, warm"), ("tincan-cold", "tincan, cold"),
         ("tincan-warm", "tincan, warm")]


def reset_pointer(ctx):
    subprocess.run(["xdotool", "mousemove", "1000", "750"], env=ctx.real_env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def measure(ctx, path, wkey, fn, timeout_s):
    row = {"mode": ctx.mode, "path": path.key, "workload": wkey, "status": "ok", "error": ""}
    quiet_before, ctx.last_quiet = ctx.last_quiet, False
    try:
        if not path.alive():
            raise Failed("path was down before the workload: " + path.why_dead())
        reset_pointer(ctx)
        if not quiet_before:
            path.emu.wait_quiet(10)
        c2s0, s2c0 = path.bytes()
        raw0 = path.raw_bytes()
        cpu0 = path.cpu()
        extra = fn(ctx, path, timeout_s)
        _, quiet = path.emu.wait_quiet(ctx.tail_max_s)
        ctx.last_quiet = quiet
        if not path.alive():
            raise Failed("proxy died: " + path.why_dead())
        c2s1, s2c1 = path.bytes()
        raw1 = path.raw_bytes()
        cpu1 = path.cpu()
        row.update(extra)
        row["c2s_bytes"], row["s2c_bytes"] = c2s1 - c2s0, s2c1 - s2c0
        row["bytes"] = row["c2s_bytes"] + row["s2c_bytes"]
        row["link_quiet_after"] = quiet
        if raw0 is not None and raw1 is not None:
            row["client_bytes"] = raw1 - raw0
        if hasattr(path, "cache_loaded"):
            row["nx_cache_loaded"] = path.cache_loaded
        for r in ("app", "display"):
            if r in cpu0 and r in cpu1:
                row["cpu_%s_s" % r] = round(cpu1[r] - cpu0[r], 3)
    except (Failed, RuntimeError, subprocess.SubprocessError, OSError) as e:
        row["status"] = "FAILED"
        msg = str(e)
        wait_for(lambda: not path.alive(), 1.0, 0.05)   # a crashing proxy takes a moment
        detail = []
        if not path.alive() and "proxy died" not in msg and "path was down" not in msg:
            msg = clip(msg, 100) + "; the proxy then exited"
            detail.append("proxy exited: " + path.why_dead())
        diag = path.diagnose()
        if diag:
            msg = clip(msg, 160) + "; log: " + clip(diag[0], 120)
            detail.append("logs: " + " / ".join(diag))
        row["error"] = msg
        row["error_detail"] = " ".join(detail)
    return row


# Each runs in a session of its own, after the main one has ended cleanly: xdpyinfo
# crashes nxproxy, and a crashed nxproxy saves no cache for the warm session.
ISOLATED = {"xdpyinfo"}


def run_session(ctx, pkey, workloads, results):
    main = [w for w in workloads if w[0] not in ISOLATED]
    run_one_session(ctx, pkey, main, results)
    for w in workloads:
        if w[0] in ISOLATED:
            run_one_session(ctx, pkey, [w], results)


def run_one_session(ctx, pkey, workloads, results):
    """One session of a path: every workload in order; a dead path is restarted."""
    path = None
    for wkey, _, fn, _ in workloads:
        if path is None or not path.alive():
            if path is not None:
                path.stop()
            path = make_path(ctx, pkey, ctx.base, ctx.link_args)
            ctx.last_quiet = False
            try:
                path.start()
                if ctx.mode == "count":
                    path.start_client_counter()
                if not path.ready_probe():
                    raise RuntimeError("no client got through: " + path.why_dead())
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                results.append({"mode": ctx.mode, "path": pkey, "workload": wkey,
                                "status": "FAILED", "error": "path did not start: %s" % e})
                log(ctx, "  %-12s %-12s FAILED (start: %s)" % (pkey, wkey, e))
                path.stop()
                path = None
                continue
        row = measure(ctx, path, wkey, fn, ctx.timeout_s)
        if row["status"] != "ok" and path.emu and not path.emu.proc.alive() \
                and path.emu.proc.p.returncode == 0:
            # The emulator only exits on a signal: someone outside stopped it. Once more.
            log(ctx, "  %-12s %-12s link emulator stopped from outside; running it again" % (pkey, wkey))
            path.stop()
            path = make_path(ctx, pkey, ctx.base, ctx.link_args)
            ctx.last_quiet = False
            try:
                path.start()
                if ctx.mode == "count":
                    path.start_client_counter()
                path.ready_probe()
                row = measure(ctx, path, wkey, fn, ctx.timeout_s)
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                row["error"] += " (retry could not start: %s)" % e
            row["retried"] = True
        results.append(row)
        if row["status"] == "ok":
            extra = " motion %d/%d" % (row["motion_events"], row["motion_sent"]) \
                if "motion_events" in row else ""
            log(ctx, "  %-12s %-12s %9d B up %9d B down  %6.2f s%s" %
                (pkey, wkey, row["c2s_bytes"], row["s2c_bytes"], row["wall_s"], extra))
        else:
            log(ctx, "  %-12s %-12s FAILED: %s" % (pkey, wkey, row["error"]))
        save(ctx, results)
    if path is not None:
        path.stop()


def log(ctx, msg):
    print(msg, flush=True)
    with open(os.path.join(ctx.logdir, "compare.log"), "a") as f:
        f.write(msg + "\n")


def save(ctx, results):
    meta = dict(ctx.meta, finished=datetime.datetime.now().isoformat(timespec="seconds"))
    tmp = ctx.out_json + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"meta": meta, "workloads": [{"key": k, "desc": d} for k, d, _, _ in ctx.workloads],
                   "paths": [{"key": k, "desc": d} for k, d in PATHS if k in ctx.paths],
                   "results": results}, f, indent=1)
    os.replace(tmp, ctx.out_json)
    cols = ["mode", "path", "workload", "status", "c2s_bytes", "s2c_bytes", "bytes", "client_bytes", "cpu_app_s",
            "cpu_display_s", "wall_s", "settle_s", "motion_events", "motion_sent", "error"]
    with open(ctx.out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in results:
            w.writerow(r)


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    osr = ""
    try:
        with open("/etc/debian_version") as f:
            osr = "Debian " + f.read().strip()
    except OSError:
        pass
    return "%s, %d CPUs, %.0f GiB, %s, Linux %s" % (cpu, os.cpu_count(), mem, osr, platform.release())


def versions():
    v = {}
    for pkg in ("nxproxy", "xvfb", "xterm", "x11-apps", "libgtk-3-0", "zlib1g", "libzstd1"):
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
        v[pkg] = r.stdout.strip() or "?"
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    st = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "src"], capture_output=True, text=True)
    v["tincan"] = (r.stdout.strip() or "?") + (" (src/ modified)" if st.stdout.strip() else "")
    return v


def binary_id(path):
    """sha256 prefix and build time of a binary, since the tree may hold uncommitted work."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    mtime = datetime.datetime.fromtimestamp(os.stat(path).st_mtime).isoformat(timespec="seconds")
    return "sha256 %s, built %s" % (h.hexdigest()[:12], mtime)


def main():
    ap = argparse.ArgumentParser(description="X over raw, zlib (ssh -C), nxproxy and tincan")
    ap.add_argument("--quick", action="store_true", help="a subset, for a smoke test")
    ap.add_argument("--link", default="256k/20ms", help="the slow link: RATE/ONE_WAY_DELAY")
    ap.add_argument("--modes", default="count,slow", help="count (bytes, CPU, local wall) and/or slow")
    ap.add_argument("--paths", default=None, help="comma list of: " + ",".join(k for k, _ in PATHS))
    ap.add_argument("--workloads", default=None, help="comma list of workload keys")
    ap.add_argument("--tincan-compress", type=int, default=None, help="tincan's --compress (default: its own)")
    ap.add_argument("--link-transport", choices=("tcp", "unix"), default="tcp",
                    help="the link between the halves of zlib and tincan (nxproxy: always tcp)")
    ap.add_argument("--tincan-bin", default=None,
                    help="directory with tincan and tincan-link (default build/), e.g. a clean "
                    "build of one commit")
    ap.add_argument("--out", default=HERE, help="directory for results.json and results.csv")
    ap.add_argument("--keep-logs", action="store_true")
    ap.add_argument("--tincan-extra", default="",
                    help="more options for both tincan halves, split at spaces (e.g. '--log-level debug'"
                         " with --keep-logs: a timeline of each start in the logs)")
    args = ap.parse_args()

    ctx = Ctx()
    ctx.args = args
    bindir = args.tincan_bin or os.path.join(ROOT, "build")
    ctx.link_bin = os.path.join(bindir, "tincan-link")
    ctx.tincan_bin = os.path.join(bindir, "tincan")
    hb = os.path.join(ROOT, "build", "compare")
    ctx.zrelay_bin, ctx.pen_bin, ctx.mapwait_bin = (os.path.join(hb, n) for n in ("zrelay", "pen", "mapwait"))
    for b in (ctx.link_bin, ctx.tincan_bin, ctx.zrelay_bin, ctx.pen_bin, ctx.mapwait_bin):
        if not os.access(b, os.X_OK):
            raise SystemExit("compare: missing %s (run bench/compare/run.sh)" % b)
    ctx.workloads = [w for w in WORKLOADS if (w[3] or not args.quick)]
    if args.workloads:
        keep = args.workloads.split(",")
        ctx.workloads = [w for w in WORKLOADS if w[0] in keep]
    ctx.paths = args.paths.split(",") if args.paths else \
        [k for k, _ in PATHS if not (args.quick and k.endswith("-warm"))]
    rate, _, delay = args.link.partition("/")
    modes = args.modes.split(",")

    ctx.tmp = tempfile.mkdtemp(prefix="tincan-compare.")
    ctx.logdir = os.path.join(ctx.tmp, "logs")
    os.makedirs(ctx.logdir)
    os.makedirs(args.out, exist_ok=True)
    ctx.out_json = os.path.join(args.out, "results.json")
    ctx.out_csv = os.path.join(args.out, "results.csv")
    ctx.empty_xauth = os.path.join(ctx.tmp, "empty.xauth")
    open(ctx.empty_xauth, "w").close()
    home = os.path.join(ctx.tmp, "home")
    os.makedirs(home)
    ctx.base_env = {k: v for k, v in os.environ.items()
                    if k not in ("DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY", "LC_ALL")}
    ctx.base_env.update(HOME=home, LANG="C.UTF-8", XDG_RUNTIME_DIR=ctx.tmp,
                        XDG_CACHE_HOME=os.path.join(home, ".cache"))
    tincan_id = binary_id(ctx.tincan_bin)
    # One version of tincan for the whole run, even if the tree is rebuilt meanwhile.
    for attr in ("link_bin", "tincan_bin"):
        copy = os.path.join(ctx.tmp, os.path.basename(getattr(ctx, attr)))
        shutil.copy2(getattr(ctx, attr), copy)
        setattr(ctx, attr, copy)
    ctx.base = pick_displays(6)
    ctx.xvfb_display = ctx.base
    ctx.counter_display = ctx.base + 5
    take_lock(ctx.counter_display)
    ctx.real_env = dict(ctx.base_env, DISPLAY=":%d" % ctx.base, XAUTHORITY=ctx.empty_xauth)
    ctx.meta = {"started": datetime.datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(["bench/compare/run.sh"] + sys.argv[1:]),
                "machine": machine(), "versions": versions(), "tincan_binary": tincan_id, "link": args.link,
                "quick": args.quick, "link_transport": args.link_transport, "xvfb": "Xvfb -screen 0 1024x768x24 -nolisten tcp -noreset "
                "-extension GLX -extension MIT-SHM (no -auth)", "quiet_s": QUIET_S}

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    results = []
    ctx.last_quiet = False
    ok = False
    xvfb = None
    try:
        xvfb = Proc("xvfb", ["Xvfb", ":%d" % ctx.base, "-screen", "0", "1024x768x24", "-nolisten",
                             "tcp", "-noreset", "-extension", "GLX", "-extension", "MIT-SHM"],
                    ctx.base_env, ctx.logdir)
        if not wait_for(lambda: os.path.exists("/tmp/.X11-unix/X%d" % ctx.base), 10):
            raise SystemExit("compare: Xvfb did not start: " + xvfb.log_tail())
        time.sleep(0.3)
        log(ctx, "compare: Xvfb :%d, proxies on :%d-:%d, logs in %s" %
            (ctx.base, ctx.base + 1, ctx.base + 4, ctx.logdir))
        for mode in modes:
            ctx.mode = mode
            if mode == "count":
                ctx.link_args, ctx.timeout_s, ctx.settle_max_s, ctx.tail_max_s = [], 120, 3, 20
            else:
                ctx.link_args = ["--rate", rate, "--delay", delay]
                ctx.timeout_s, ctx.settle_max_s, ctx.tail_max_s = 400, 2 if args.quick else 5, 60
            # Fresh nxproxy caches for each mode: cold, then warm with the same HOMEs.
            ctx.nx_homes = (os.path.join(ctx.tmp, mode + "-nxhome-C"), os.path.join(ctx.tmp, mode + "-nxhome-S"))
            log(ctx, "mode %s%s" % (mode, "" if mode == "count" else " (link %s)" % args.link))
            for pkey, _ in PATHS:
                if pkey in ctx.paths:
                    run_session(ctx, pkey, ctx.workloads, results)
            cache = subprocess.run(["du", "-sk", ctx.nx_homes[0], ctx.nx_homes[1]], capture_output=True, text=True)
            ctx.meta["nx_cache_%s" % mode] = cache.stdout.strip().replace("\n", "; ").replace("\t", " ")
            log(ctx, "  nxproxy HOMEs after the %s sessions: %s" % (mode, ctx.meta["nx_cache_%s" % mode]))
        ok = True
    except KeyboardInterrupt:
        log(ctx, "compare: interrupted")
    finally:
        stop_all()
        for l in list(LOCKS):
            drop_lock(l)
        for n in list(range(ctx.base + 1, ctx.base + 4)) + [ctx.counter_display]:   # relays that leave their socket
            f = "/tmp/.X11-unix/X%d" % n
            if os.path.exists(f) and not os.path.exists("/tmp/.X%d-lock" % n):
                try:
                    os.unlink(f)
                except OSError:
                    pass
        save(ctx, results)
        keep = args.keep_logs or any(r["status"] != "ok" for r in results) or not ok
        if keep:
            log(ctx, "compare: logs kept in %s" % ctx.logdir)
        else:
            shutil.rmtree(ctx.tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
