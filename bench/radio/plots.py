#!/usr/bin/env python3
"""plots.py -- the radio benchmark's plots: the tables run.sh wrote (results.md) and the
classroom's JSON lines (bench/radio/classroom.jsonl: the runs docs/EMULATOR.md quotes, copied
from build/radio/) -> gnuplot data -> SVG files in docs/plots/.

usage: plots.py [RESULTS_MD [CLASSROOM_JSONL [OUTDIR]]]
Draws only what was measured: every number comes from those two files. Needs gnuplot
(gnuplot-nox). Standard library otherwise."""
import os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results.md")
jsonl = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "classroom.jsonl")
out = sys.argv[3] if len(sys.argv) > 3 else os.path.join(root, "docs/plots")
os.makedirs(out, exist_ok=True)
work = os.path.join(root, "build/radio/plots")
os.makedirs(work, exist_ok=True)


def tables(path):
    """Every Markdown table of the file: (header cells, [row cells]); a header is a row
    followed by a separator row."""
    lines = [l.strip() for l in open(path)]
    cells = lambda l: [c.strip() for c in l.strip("|").split("|")]
    sep = lambda l: l.startswith("|") and set(l) <= set("|- ")
    t, cur = [], None
    for k, line in enumerate(lines):
        if not line.startswith("|") or sep(line):
            if not line.startswith("|"):
                cur = None
            continue
        if k + 1 < len(lines) and sep(lines[k + 1]):
            cur = (cells(line), [])
            t.append(cur)
        elif cur is not None and len(cells(line)) == len(cur[0]):
            cur[1].append(cells(line))
    return [x for x in t if x[1]]


def nums(s):
    return [float(x) for x in re.findall(r"[-+]?\d+(?:\.\d+)?", s)]


def short(opts):
    """A short label from a row's cell options: what differs from the profile."""
    o = opts.strip("`").split()
    out, k = [], 0
    while k < len(o):
        name, v = o[k], o[k + 1] if k + 1 < len(o) else ""
        if name == "--station-rate": out.append("station %s" % v.replace("=", " at "))
        elif name == "--station-loss": out.append("%s loss" % v.split("=")[1])
        elif name == "--ap-queue": out.append("AP %s" % v)
        elif name == "--profile": out.insert(0, v)
        k += 2
    return ", ".join(out)


def q(s):
    return '"%s"' % s.replace('"', "'")


T = tables(results)
gp = ['set terminal svg size 900,560 dynamic font "sans,12"', "set style data histograms",
      "set style histogram clustered gap 1", "set style fill solid 0.8 border -1", "set grid ytics",
      "set key top right", "set xtics rotate by -25 left noenhanced", "set yrange [0:*]"]
made = []
for head, rows in T:
    h = " ".join(head)
    if head[0] == "run" and "goodput per station" in h:
        f = os.path.join(work, "goodput.dat")
        with open(f, "w") as fh:
            for r in rows:
                fh.write("%s %s\n" % (q(r[0]), nums(r[3])[0]))
        gp += ["set output '%s/radio_goodput.svg'" % out, "set title 'Bulk TCP over the emulated cells (bench/radio/run.sh)'",
               "set ylabel 'kbit/s, all stations (log)'", "set logscale y", "set yrange [10:*]",
               "plot '%s' using 2:xtic(1) title 'goodput' lc rgb '#4477aa'" % f, "unset logscale y", "set yrange [0:*]"]
        made.append("radio_goodput.svg")
    elif head[0].startswith("pads, pen events"):
        f = os.path.join(work, "pen.dat")
        with open(f, "w") as fh:
            for r in rows:
                p50, p99 = nums(r[3]), nums(r[4])
                fh.write("%s %s %s\n" % (q(r[0]), max(p50), max(p99)))
        gp += ["set output '%s/radio_pen.svg'" % out, "set title 'MACA: pen events at 50/s per pad (worst pad)'",
               "set ylabel 'ms (log)'", "set logscale y", "set yrange [1:*]",
               "plot '%s' using 2:xtic(1) title 'latency p50' lc rgb '#4477aa', '' using 3 title 'p99' lc rgb '#ee6677'" % f,
               "unset logscale y", "set yrange [0:*]"]
        made.append("radio_pen.svg")
    elif head[0].startswith("528 kbit/s streams"):
        f = os.path.join(work, "streams.dat")
        with open(f, "w") as fh:
            for r in rows:
                v = r[2].split()              # "failed": a client without its stream
                fh.write("%s %s\n" % (q(short(r[1])), " ".join(x if re.match(r"^[\d.]+$", x) else "nan" for x in v)))
        n = max(len(r[2].split()) for r in rows)
        gp += ["set output '%s/radio_streams.svg'" % out, "set key outside below horizontal", "set title '802.11b: 528 kbit/s streams, received per client'",
               "set ylabel 'kbit/s'", "plot " + ", ".join("'%s' using %d%s title 'client %d'" % (
                   f, k + 2, ":xtic(1)" if k == 0 else "", k + 1) for k in range(n)), "set key inside top right"]
        made.append("radio_streams.svg")
    elif head[0].startswith("HTTP/1.0 fetches"):
        f = os.path.join(work, "http.dat")
        with open(f, "w") as fh:
            for r in rows:
                fh.write("%s %s %s\n" % (q(short(r[1]) + ", " + r[2]), nums(r[3])[0], nums(r[4])[0]))
        gp += ["set output '%s/radio_http.svg'" % out, "set title '802.11b: HTTP/1.0 fetches, 4 clients'",
               "set ylabel 'requests/s'", "set y2label 'kbit/s'", "set y2tics", "set y2range [0:*]",
               "plot '%s' using 2:xtic(1) title 'requests/s' lc rgb '#4477aa', '' using 3 axes x1y2 title 'kbit/s' lc rgb '#228833'" % f,
               "unset y2tics", "unset y2label"]
        made.append("radio_http.svg")

if os.path.exists(jsonl):
    subprocess.run([sys.executable, os.path.join(here, "classroom_report.py"), jsonl, work],
                   stdout=subprocess.DEVNULL, check=True)
    f = os.path.join(work, "classroom_size.dat")
    gp += ["set output '%s/classroom_latency.svg'" % out, "unset style", "set style data linespoints",
           "set title 'Classroom over one 802.11b cell: pen input-to-ink p99 (median student)'",
           "set xlabel 'students'", "set ylabel 'ms (log)'", "set logscale y", "set yrange [1:*]", "set xtics (4, 8, 14) norotate",
           "set arrow from graph 0, first 150 to graph 1, first 150 nohead dt 2 lc rgb '#888888'",
           "set label 'target: 150 ms' at graph 0.02, first 170 tc rgb '#888888'",
           "plot '< grep \" raw \" %s' using 1:4 title 'raw X (zlib), median student' lw 2 lc rgb '#ee6677', "
           "'< grep \" tincan \" %s' using 1:4 title 'tincan, median student' lw 2 lc rgb '#4477aa', "
           "'< grep \" raw \" %s' using 1:5 title 'raw X, worst student' dt 2 lc rgb '#ee6677', "
           "'< grep \" tincan \" %s' using 1:5 title 'tincan, worst student' dt 2 lc rgb '#4477aa'" % (f, f, f, f),
           "unset arrow", "unset label", "unset logscale y", "set yrange [0:1]", "set ylabel 'fraction busy'",
           "set output '%s/classroom_cpu_medium.svg'" % out,
           "set title 'Classroom: CPU (share of 2 cores) and airtime of the medium during the pen phase'", "set key top left",
           "plot '< grep \" raw \" %s' using 1:10 title 'CPU of the class, raw X' lw 2 lc rgb '#ee6677', "
           "'< grep \" tincan \" %s' using 1:10 title 'CPU of the class, tincan' lw 2 lc rgb '#4477aa', "
           "'< grep \" raw \" %s' using 1:8 title 'whole machine, raw X run' dt 3 lc rgb '#ee6677', "
           "'< grep \" tincan \" %s' using 1:8 title 'whole machine, tincan run' dt 3 lc rgb '#4477aa', "
           "'< grep \" raw \" %s' using 1:9 title 'medium airtime, raw X' dt 2 lc rgb '#ee6677', "
           "'< grep \" tincan \" %s' using 1:9 title 'medium airtime, tincan' dt 2 lc rgb '#4477aa'" % (f, f, f, f, f, f)]
    made += ["classroom_latency.svg", "classroom_cpu_medium.svg"]
    fa = os.path.join(work, "classroom_apple.dat")
    if os.path.getsize(fa) > 60:
        gp += ["set output '%s/classroom_apple.svg'" % out, "set style data histograms", "set style histogram clustered gap 1",
               "set style fill solid 0.8 border -1", "unset xlabel", "set yrange [0:*]", "set ylabel 'ms'",
               "set xtics auto rotate by -25 left noenhanced", "set key outside below",
               "set title 'Bad apple (station 1 at 1 Mbit/s, 10% loss): ink p99 by path, students, AP queue'",
               "set ylabel 'ms (log)'", "set logscale y", "set yrange [10:*]",
               "plot '%s' using 5:xtic(1) title 'others, median, without the bad apple' lc rgb '#88ccee', "
               "'' using 2 title 'others, median' lc rgb '#4477aa', '' using 3 title 'others, worst' "
               "lc rgb '#ee6677', '' using 4 title 'the bad apple' lc rgb '#bbbbbb'" % fa, "unset logscale y"]
        made.append("classroom_apple.svg")
g = os.path.join(work, "plots.gp")
open(g, "w").write("\n".join(gp) + "\n")
subprocess.run(["gnuplot", g], check=True)
for m in made:
    print(os.path.join(out, m))
