#!/usr/bin/env python3
"""classroom_report.py -- classroom.py's JSON lines -> Markdown tables and gnuplot data.

usage: classroom_report.py [--base-tag TAG] [--per-student] JSONL [PLOTDIR]
Prints two tables: the class by size (tag "base"), and the bad apple (every other tag: the
others' p99 against the same path and size without it). With PLOTDIR, writes
classroom_{size,apple}.dat there for plots.gp. Standard library only."""
import json, statistics, sys


def load(path):
    runs = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            runs.append(json.loads(line))
    return runs


def students(r):
    return [r["students"][k] for k in sorted(r["students"], key=int)]


def fmt(v, f="%.1f"):
    return "-" if v is None else f % v


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def mx(v):
    v = [x for x in v if x is not None]
    return max(v) if v else None


def apq(r):
    """The access point's queueing of a run, from its cell options."""
    e = r.get("extra", "").split()
    return e[e.index("--ap-queue") + 1] if "--ap-queue" in e else "fifo"


def main():
    args = sys.argv[1:]
    btag = "base"
    if args[:1] == ["--base-tag"]:
        btag, args = args[1], args[2:]
    if args[:1] == ["--per-student"]:
        for r in load(args[1]):
            if "error" in r:
                continue
            print("%s, %d students, %s%s: per student, ink p50 / p99 ms, xterm start s, xcalc start s\n" % (
                r["path"], r["n"], r["tag"], ", `%s`" % r["extra"] if r["extra"] else ""))
            print("| student | " + " | ".join(sorted(r["students"], key=int)) + " |")
            print("| --- " * (len(r["students"]) + 1) + "|")
            st = students(r)
            print("| ink p50 | " + " | ".join(fmt(x["p50_ms"]) for x in st) + " |")
            print("| ink p99 | " + " | ".join(fmt(x["p99_ms"]) for x in st) + " |")
            print("| xterm | " + " | ".join(fmt(x["xterm_s"], "%.2f") for x in st) + " |")
            print("| xcalc | " + " | ".join(fmt(x["program_s"], "%.2f") for x in st) + " |\n")
        return
    runs = load(args[0])
    plotdir = args[1] if len(args) > 1 else None
    base = {}
    for r in runs:
        if r.get("tag") == btag and "error" not in r:
            base[(r["path"], r["n"], apq(r))] = r      # the last run of each kind counts
    print("| path | AP queue | students | ink p50, ms: median of students | ink p99, ms: median / worst student | inked / sent |"
          " xterm start, s: median / worst | xcalc start during the pen, s: median / worst |"
          " CPU busy (2 cores): all / ours | run queue | packets/s on the cell | medium busy |"
          " emulator one-way p99 down, ms: worst | emulator lateness p99, ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for (path, n, q) in sorted(base, key=lambda k: (k[2] != "fifo", k[2], k[1], k[0])):
        r = base[(path, n, q)]
        s = students(r)
        p50 = med([x["p50_ms"] for x in s])
        p99m, p99w = med([x["p99_ms"] for x in s]), mx([x["p99_ms"] for x in s])
        inked, sent = sum(x["inked"] for x in s), sum(x["sent"] for x in s)
        xs = [x["xterm_s"] for x in s]
        ps = [x["program_s"] for x in s]
        nm = lambda v: "%d of %d never" % (v.count(None), len(v)) if None in v else ""
        print("| %s | %s | %d | %s | %s / %s | %d / %d | %s / %s %s | %s / %s %s | %.0f%% / %.0f%% | %.1f | %.0f | %.0f%% | %s | %s |" % (
            path, q, n, fmt(p50), fmt(p99m), fmt(p99w), inked, sent, fmt(med(xs), "%.2f"), fmt(mx(xs), "%.2f"), nm(xs),
            fmt(med(ps), "%.2f"), fmt(mx(ps), "%.2f"), nm(ps), 100 * r["cpu_busy"], 100 * r.get("ours_cpu", 0),
            r["runq_mean"], r.get("phase_pkts", 0) / r["phase_s"], 100 * r["medium_busy"],
            fmt(mx([x["down_one_way_p99_ms"] for x in s])), fmt(r.get("lateness_p99_ms"))))
        if q == "fifo":
            rows.append((n, path, p50, p99m, p99w, med(xs), med(ps), r["cpu_busy"], r["medium_busy"],
                         r.get("ours_cpu")))
    for r in runs:
        if "error" in r:
            print("\nFAILED: %s, %d students, %s: %s" % (r["path"], r["n"], r.get("tag"), r["error"]))
    print()
    print("| path | cell options | students | bad station's ink p99, ms | others' p99, ms: median / worst |"
          " the same without the bad apple | rise of the others' p99: median / worst | others' xcalc start, s: median |"
          " CPU busy | medium busy | packets dropped in the cell: the bad one's / the others' |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    apple = []
    for r in runs:
        if r.get("tag") == btag or "error" in r:
            continue
        b = base.get((r["path"], r["n"], apq(r)))
        s = students(r)
        bad, others = s[0], s[1:]
        op = [x["p99_ms"] for x in others]
        if b:
            bo = [x["p99_ms"] for x in students(b)[1:]]
            ref = "%s / %s" % (fmt(med(bo)), fmt(mx(bo)))
            rise = "%+.0f%% / %+.0f%%" % (100 * (med(op) / med(bo) - 1), 100 * (mx(op) / mx(bo) - 1)) \
                if mx(op) and mx(bo) else "-"
        else:
            ref, rise = "(no run)", "-"
        print("| %s | `%s` | %d | %s | %s / %s | %s | %s | %s | %.0f%% | %.0f%% | %d / %d |" % (
            r["path"], r["extra"], r["n"], fmt(bad["p99_ms"]), fmt(med(op)), fmt(mx(op)), ref, rise,
            fmt(med([x["program_s"] for x in others]), "%.2f"), 100 * r["cpu_busy"], 100 * r["medium_busy"],
            bad["drops"], sum(x["drops"] for x in others)))
        apple.append((r["path"], r["n"], r["extra"], med(op), mx(op), bad["p99_ms"],
                      med([x["p99_ms"] for x in students(b)[1:]]) if b else None))
    if plotdir:
        with open(plotdir + "/classroom_size.dat", "w") as f:
            f.write("# n path p50 p99_median p99_worst xterm_s xcalc_s cpu_busy medium_busy ours_cpu\n")
            for row in rows:
                f.write(" ".join("%s" % ("nan" if v is None else v) for v in row) + "\n")
        with open(plotdir + "/classroom_apple.dat", "w") as f:
            f.write("# label others_p99_median others_p99_worst bad_p99 others_p99_median_without\n")
            for p, n, e, m, w, bp, ref in sorted(apple, key=lambda a: (a[1], "airtime" in a[2], a[0])):
                q = "airtime" if "airtime" in e else "rr" if "rr" in e.split() else "FIFO"
                f.write('"%s, %d, %s" %s %s %s %s\n' % (p, n, q, m, w, bp, "nan" if ref is None else ref))


if __name__ == "__main__":
    main()
