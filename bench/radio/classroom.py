#!/usr/bin/env python3
"""classroom.py -- a classroom over one radio cell, raw X (zlib) against tincan.

Benchmark driver only (bench/radio/classroom.sh runs it as root). The cell's base is the
teacher's server; each student is a station whose namespace holds an Xvfb and either a
`tincan display` or the display half of a zlib relay (bench/compare/zrelay.c, what `ssh -C`
does). In the base, per student, a `tincan app` or the app half of the relay. Per student,
through its path: ink (bench/latency/ink.c) and an xterm running cat; on the student's Xvfb:
inkwatch (injects motion with XTEST at 50/s, times each square's DAMAGE), xdotool typing
into the xterm, and mapwait for start-up times. Besides the latencies it records what tells
the CPU from the medium apart: the machine's CPU busy fraction and run queue over the pen
phase, the cell's airtime in that phase and the emulator's one-way delay per station.
Prints one JSON object per run on stdout (classroom.sh turns them into tables)."""
import argparse, json, os, re, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def now():
    return time.monotonic()


def pct(v, q):
    """Nearest-rank percentile of a sorted list."""
    if not v:
        return None
    k = max(0, min(len(v) - 1, int(-(-q * len(v) // 1)) - 1))
    return v[k]


def cpu_sample():
    with open("/proc/stat") as f:
        a = [int(x) for x in f.readline().split()[1:]]
    idle = a[3] + a[4]
    return sum(a), idle


def runq():
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[0])


def proc_cpu_s(pids):
    """utime + stime of these processes, in seconds (those gone count 0)."""
    tck, t = os.sysconf("SC_CLK_TCK"), 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                v = f.read().rsplit(")", 1)[1].split()
            t += int(v[11]) + int(v[12])
        except (OSError, IndexError, ValueError):
            pass
    return t / tck


def read_kv(path):
    d = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                d[k] = v
    except OSError:
        pass
    return d


class Run:
    def __init__(self, a, path, n, extra, tag):
        self.a, self.path, self.n, self.extra, self.tag = a, path, n, extra, tag
        self.tmp = tempfile.mkdtemp(prefix="classroom.")
        self.procs = []
        self.base_disp = a.display_base

    def spawn(self, ns, argv, log, stdin=None, env=None, keep=True):
        e = dict(os.environ)
        e.update(env or {})
        cmd = ["nsenter", "--net=" + self.info["ns_" + ns]] + argv if ns else argv
        p = subprocess.Popen(cmd, stdin=stdin, stdout=open(os.path.join(self.tmp, log), "w"),
                             stderr=subprocess.STDOUT, env=e, start_new_session=True)
        if keep:
            self.procs.append(p)
        return p

    def wait_file(self, f, pattern, timeout):
        t_end = now() + timeout
        while now() < t_end:
            try:
                with open(os.path.join(self.tmp, f)) as fh:
                    m = re.search(pattern, fh.read(), re.M)
                    if m:
                        return m
            except OSError:
                pass
            time.sleep(0.05)
        return None

    def stats(self):
        st = os.path.join(self.tmp, "stats")
        try:
            os.unlink(st)
        except OSError:
            pass
        self.link.send_signal(signal.SIGUSR1)
        for _ in range(100):
            if os.path.exists(st):
                break
            time.sleep(0.02)
        time.sleep(0.05)
        return read_kv(st)

    def airtime_us(self, s):
        return sum(int(s.get("%s_airtime_us" % ("base" if i == 0 else "sta%d" % i), 0)) for i in range(self.n + 1))

    def go(self):
        a, n, t = self.a, self.n, self.tmp
        secret = os.path.join(t, "secret")
        subprocess.run([a.tincan, "secret", secret], stdout=subprocess.DEVNULL, check=True)
        info = os.path.join(t, "info")
        cmd = [a.link, "cell", "--profile", a.profile, "--stations", str(n), "--queue", str(a.queue)] + \
            self.extra + ["--info-file", info, "--stats-file", os.path.join(t, "stats")]
        self.link = subprocess.Popen(cmd, stderr=open(os.path.join(t, "link.err"), "w"), start_new_session=True)
        for _ in range(200):
            if os.path.exists(info) and "ns_%d=" % n in open(info).read():
                break
            time.sleep(0.05)
        self.info = read_kv(info)
        if "ns_base" not in self.info:
            raise RuntimeError("cell did not start: " + open(os.path.join(t, "link.err")).read())
        X = self.base_disp
        disp = lambda i: X + i                 # the student's Xvfb
        adisp = lambda i: X + 40 + i           # its display in the base (tincan app or relay)
        addr = lambda i: "10.78.0.%d" % (1 + i)
        for i in range(1, n + 1):
            self.spawn(str(i), ["Xvfb", ":%d" % disp(i), "-screen", "0", "1024x768x24", "-nolisten", "tcp",
                                "-noreset", "-extension", "GLX", "-extension", "MIT-SHM"], "xvfb%d.log" % i)
        for i in range(1, n + 1):
            for _ in range(200):
                if os.path.exists("/tmp/.X11-unix/X%d" % disp(i)):
                    break
                time.sleep(0.05)
        env = {}
        for i in range(1, n + 1):
            de = {"DISPLAY": ":%d" % disp(i)}
            if self.path == "tincan":
                self.spawn(str(i), [a.tincan, "display", "--link-listen", addr(i) + ":7600", "--secret-file", secret,
                                    "--no-cache"], "disp%d.log" % i, env=de)
            else:
                self.spawn(str(i), [a.zrelay, "--listen", addr(i) + ":7700", "--zside", "listen", "--level", "6",
                                    "--connect", "unix:/tmp/.X11-unix/X%d" % disp(i)], "disp%d.log" % i)
        time.sleep(0.5)
        for i in range(1, n + 1):
            xa = os.path.join(t, "xa%d" % i)
            if self.path == "tincan":
                self.spawn("base", [a.tincan, "app", "--link-connect", addr(i) + ":7600", "--secret-file", secret,
                                    "--display-number", str(adisp(i)), "--no-cache", "--xauthority", xa],
                           "app%d.log" % i, env={"XAUTHORITY": xa})
            else:
                open(xa, "w").close()
                self.spawn("base", [a.zrelay, "--listen", "unix:/tmp/.X11-unix/X%d" % adisp(i), "--zside", "connect",
                                    "--level", "6", "--connect", addr(i) + ":7700"], "app%d.log" % i)
        for i in range(1, n + 1):
            if not (self.wait_file("app%d.log" % i, r"DISPLAY=", 30) if self.path == "tincan" else
                    self.wait_for_socket("/tmp/.X11-unix/X%d" % adisp(i), 10)):
                raise RuntimeError("student %d: app side did not start" % i)
        cenv = lambda i: {"DISPLAY": ":%d" % adisp(i), "XAUTHORITY": os.path.join(t, "xa%d" % i), "LANG": "C"}
        xenv = lambda i: {"DISPLAY": ":%d" % disp(i)}
        # 1. the pen's window: inkwatch watches, ink maps through the path
        watch = {}
        for i in range(1, n + 1):
            watch[i] = self.spawn(str(i), [a.inkwatch, "20", "320", "5000", str(a.events)], "watch%d" % i,
                                  stdin=subprocess.PIPE, env=xenv(i))
        for i in range(1, n + 1):
            if not self.wait_file("watch%d" % i, r"^ready", 20):
                raise RuntimeError("student %d: inkwatch not ready" % i)
            self.spawn("base", [a.ink, "320"], "ink%d" % i, env=cenv(i))
        for i in range(1, n + 1):
            if not self.wait_file("watch%d" % i, r"^watching", 90):
                raise RuntimeError("student %d: ink never mapped" % i)
        # 2. the class starts xterm at once: start-up time until it maps on each screen
        res = {"path": self.path, "n": n, "extra": " ".join(self.extra), "tag": self.tag, "students": {}}
        xterm_map = self.start_all("xterm", lambda i: ["xterm", "-geometry", "80x24+330+0", "-e", "cat"], cenv, xenv, 90)
        time.sleep(1.0)
        # 3. pen phase: 50 events/s each, typing into the xterm, a program started meanwhile
        s0 = self.stats()
        ours = [p.pid for p in self.procs] + [self.link.pid]
        c0, p0, l0 = cpu_sample(), proc_cpu_s(ours), proc_cpu_s([self.link.pid])
        t_go = now()
        typists = {}
        for i in range(1, n + 1):
            watch[i].stdin.write(b"go\n")
            watch[i].stdin.flush()
            typists[i] = self.spawn(str(i), ["xdotool", "search", "--sync", "--class", "xterm", "windowfocus", "--sync",
                                             "type", "--delay", "100", a.text], "type%d" % i, env=xenv(i))
        rq = []
        prog_map = None
        while now() < t_go + a.events * 0.02 + 0.5:
            rq.append(runq())
            if prog_map is None and now() >= t_go + a.program_at:
                prog_map = self.start_all(a.program, lambda i: [a.program, "-geometry", "+600+400"], cenv, xenv, 0)
            time.sleep(0.25)
        c1, p1, l1 = cpu_sample(), proc_cpu_s(ours), proc_cpu_s([self.link.pid])
        s1 = self.stats()
        phase_s = now() - t_go
        prog = self.finish_maps(prog_map, 60) if prog_map else {}
        for i in range(1, n + 1):
            watch[i].stdin.close()
        for i in range(1, n + 1):
            try:
                watch[i].wait(timeout=30)
            except subprocess.TimeoutExpired:
                watch[i].kill()
        s2 = self.stats()
        for i in range(1, n + 1):
            lat, sent = [], 0
            for line in open(os.path.join(t, "watch%d" % i)):
                f = line.split()
                if f and f[0] == "ev":
                    sent += 1
                    if int(f[3]) >= 0:
                        lat.append(int(f[3]) / 1e6)
            lat.sort()
            res["students"][i] = {
                "sent": sent, "inked": len(lat), "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
                "xterm_s": xterm_map.get(i), "program_s": prog.get(i), "typed": typists[i].poll() == 0,
                "down_one_way_p99_ms": int(s2.get("sta%d_down_one_way_p99_us" % i, 0)) / 1e3,
                "up_one_way_p99_ms": int(s2.get("sta%d_up_one_way_p99_us" % i, 0)) / 1e3,
                "down_bytes": int(s2.get("sta%d_down_bytes" % i, 0)), "up_bytes": int(s2.get("sta%d_up_bytes" % i, 0)),
                "down_pkts": int(s2.get("sta%d_down_pkts" % i, 0)), "up_pkts": int(s2.get("sta%d_up_pkts" % i, 0)),
                "drops": int(s2.get("sta%d_down_drops" % i, 0)) + int(s2.get("sta%d_up_drops" % i, 0)),
            }
        tot, idle = c1[0] - c0[0], c1[1] - c0[1]
        res.update({
            "phase_s": phase_s, "cpu_busy": 1 - idle / tot if tot else None, "ncpu": os.cpu_count(),
            "runq_mean": sum(rq) / len(rq) if rq else None,
            "ours_cpu": (p1 - p0) / phase_s / (os.cpu_count() or 1), "link_cpu": (l1 - l0) / phase_s,
            "lateness_p99_ms": int(s2.get("lateness_p99_us", 0)) / 1e3,
            "phase_pkts": sum(int(s1.get("sta%d_%s_pkts" % (i, d), 0)) - int(s0.get("sta%d_%s_pkts" % (i, d), 0))
                              for i in range(1, n + 1) for d in ("up", "down")),
            "medium_busy": (self.airtime_us(s1) - self.airtime_us(s0)) / 1e6 / phase_s,
            "base_airtime_ms": (int(s1.get("base_airtime_us", 0)) - int(s0.get("base_airtime_us", 0))) / 1e3,
            "collisions": sum(int(s2.get("sta%d_collisions" % i, 0)) for i in range(n + 1)) +
            int(s2.get("base_collisions", 0)),
            "base_drop_queue": int(s2.get("base_drop_queue", 0)), "base_drop_retry": int(s2.get("base_drop_retry", 0)),
        })
        return res

    def wait_for_socket(self, p, timeout):
        t_end = now() + timeout
        while now() < t_end:
            if os.path.exists(p):
                return True
            time.sleep(0.05)
        return False

    def start_all(self, name, argv, cenv, xenv, wait_s):
        """mapwait on every student's screen, then the program through every path at once.
        Returns {i: seconds} once all mapped (wait_s > 0), else the pending state."""
        for i in range(1, self.n + 1):
            log = "map_%s_%d" % (name, i)
            self.spawn(str(i), [self.a.mapwait, "120000"], log, env=xenv(i))
        for i in range(1, self.n + 1):
            self.wait_file("map_%s_%d" % (name, i), r"^ready", 20)
        t0 = now()
        marks = {}
        for i in range(1, self.n + 1):
            self.spawn("base", argv(i), "%s%d.log" % (name, i), env=cenv(i))
        pend = (name, t0, marks)
        return self.finish_maps(pend, wait_s) if wait_s else pend

    def finish_maps(self, pend, wait_s):
        name, t0, marks = pend
        t_end = now() + wait_s
        while now() < t_end and len(marks) < self.n:
            for i in range(1, self.n + 1):
                if i not in marks:
                    f = os.path.join(self.tmp, "map_%s_%d" % (name, i))
                    if os.path.exists(f) and "mapped" in open(f).read():
                        marks[i] = os.stat(f).st_mtime
            time.sleep(0.02)
        # mtime is wall-clock; t0 is monotonic: convert t0 once
        wall0 = time.time() - (now() - t0)
        return {i: marks[i] - wall0 for i in marks}

    def close(self):
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        if getattr(self, "link", None):
            self.link.terminate()
            self.link.wait()
        if self.a.keep:
            sys.stderr.write("logs in %s\n" % self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--link", default=os.path.join(ROOT, "build/tincan-link"))
    ap.add_argument("--tincan", default=os.path.join(ROOT, "build/tincan"))
    ap.add_argument("--helpers", default=os.path.join(ROOT, "build/radio"))
    ap.add_argument("--profile", default="dot11b-short")
    ap.add_argument("--queue", type=int, default=100)
    ap.add_argument("--paths", default="raw,tincan")
    ap.add_argument("--sizes", default="4,8,14")
    ap.add_argument("--opts", default="", help="more cell options, e.g. '--station-rate 1=1M'")
    ap.add_argument("--tag", default="")
    ap.add_argument("--events", type=int, default=400, help="pen events per student (50/s)")
    ap.add_argument("--program", default="xcalc")
    ap.add_argument("--program-at", type=float, default=2.0, help="s into the pen phase")
    ap.add_argument("--text", default="the quick brown fox jumps over the lazy dog 0123456789")
    ap.add_argument("--display-base", type=int, default=400)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    for h in ("ink", "inkwatch", "mapwait", "zrelay"):
        setattr(a, h, os.path.join(a.helpers, h))
    for n in [int(x) for x in a.sizes.split(",")]:
        for path in a.paths.split(","):
            r = Run(a, path, n, a.opts.split(), a.tag)
            try:
                out = r.go()
            except Exception as e:  # one failed run is reported, the others still run
                out = {"path": path, "n": n, "extra": a.opts, "tag": a.tag, "error": str(e)}
                a.keep = True
            finally:
                r.close()
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
