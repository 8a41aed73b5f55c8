#!/usr/bin/env python3
"""report.py -- turns compare.py's results.json into a Markdown table and an HTML report.

Owns results.md and report.html; measures nothing and must not invent a number: every
cell comes from results.json or says FAILED / not run. Standard library only.
"""
import argparse
import html
import json
import math

COLORS = {"raw": "#7f7f7f", "zlib": "#1f77b4", "nx-cold": "#d62728", "nx-warm": "#ff9896",
          "tincan-cold": "#2ca02c", "tincan-warm": "#98df8a"}


def clip(text, n=140):
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."


def fmt_bytes(n):
    return "{:,}".format(n)


def fmt_s(x):
    if x is None:
        return ""
    return "%.2f" % x if x < 10 else "%.1f" % x


def index(results):
    """{(mode, workload, path): row}"""
    return {(r["mode"], r["workload"], r["path"]): r for r in results}


def cells(d, idx, wkey, pkey):
    """The table's cells for one (workload, path)."""
    c = idx.get(("count", wkey, pkey))
    s = idx.get(("slow", wkey, pkey))
    raw = idx.get(("count", wkey, "raw"))
    notes = []
    out = {"c2s": "", "s2c": "", "total": "", "ratio": "", "cpu_app": "", "cpu_disp": "",
           "client": "", "cpu_mb": "", "wall": "", "wall_slow": ""}
    if c is None:
        out["c2s"] = "not run"
    elif c["status"] != "ok":
        out["c2s"] = "**FAILED**"
        notes.append("local: " + clip(c["error"]))
    else:
        out["c2s"], out["s2c"] = fmt_bytes(c["c2s_bytes"]), fmt_bytes(c["s2c_bytes"])
        out["total"] = fmt_bytes(c["bytes"])
        if raw and raw["status"] == "ok" and raw["bytes"]:
            out["ratio"] = "%.3g %%" % (100.0 * c["bytes"] / raw["bytes"])
        if "cpu_app_s" in c:
            out["cpu_app"] = "%.3f" % c["cpu_app_s"]
        if "cpu_display_s" in c:
            out["cpu_disp"] = "%.3f" % c["cpu_display_s"]
        if c.get("client_bytes"):
            out["client"] = fmt_bytes(c["client_bytes"])
            if "cpu_app_s" in c and "cpu_display_s" in c:
                # The issue's measure: CPU of both halves per MB of the clients' own X traffic.
                out["cpu_mb"] = "%.3f" % ((c["cpu_app_s"] + c["cpu_display_s"]) / (c["client_bytes"] / 1e6))
        out["wall"] = fmt_s(c["wall_s"])
        if "motion_events" in c:
            notes.append("motion %d/%d" % (c["motion_events"], c["motion_sent"]))
        if "nx_cache_loaded" in c:
            notes.append("cache file loaded" if c["nx_cache_loaded"] else "no cache file")
        if c.get("retried"):
            notes.append("local run repeated after an outside stop of the link emulator")
    if s is None:
        out["wall_slow"] = "not run" if any(k[0] == "slow" for k in idx) else ""
    elif s["status"] != "ok":
        out["wall_slow"] = "**FAILED**"
        if not c or c.get("error") != s["error"]:
            notes.append("slow: " + clip(s["error"]))
    else:
        out["wall_slow"] = fmt_s(s["wall_s"])
        if "motion_events" in s:
            notes.append("slow motion %d/%d" % (s["motion_events"], s["motion_sent"]))
        if s.get("retried"):
            notes.append("slow run repeated after an outside stop of the link emulator")
    out["notes"] = "; ".join(n.replace("|", "/") for n in notes)
    return out


def markdown(d):
    idx = index(d["results"])
    m = d["meta"]
    paths = {p["key"]: p["desc"] for p in d["paths"]}
    lines = []
    lines.append("Command: `%s`  " % m["command"])
    lines.append("Run: %s to %s  " % (m["started"], m.get("finished", "?")))
    lines.append("Machine: %s  " % m["machine"])
    lines.append("Versions: " + ", ".join("%s %s" % kv for kv in sorted(m["versions"].items())) + "  ")
    if "tincan_binary" in m:
        lines.append("tincan binary: %s; links between the halves: %s  " %
                     (m["tincan_binary"], m.get("link_transport", "unix")))
    lines.append("Server: %s; slow link: tincan-link stream `--rate %s --delay %s` each way" %
                 ((m["xvfb"],) + tuple(m["link"].split("/"))))
    lines.append("")
    lines.append("| workload | path | app→display B | display→app B | total B | vs raw | "
                 "CPU app s | CPU display s | client X B | CPU s per MB client X | wall s (local) | wall s (%s) | notes |" % m["link"])
    lines.append("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    for w in d["workloads"]:
        for pk in paths:
            c = cells(d, idx, w["key"], pk)
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                w["key"], paths[pk], c["c2s"], c["s2c"], c["total"], c["ratio"], c["cpu_app"],
                c["cpu_disp"], c["client"], c["cpu_mb"], c["wall"], c["wall_slow"], c["notes"]))
    totals = []
    for pk in paths:
        rows = [idx.get(("count", w["key"], pk)) for w in d["workloads"]]
        rows = [r for r in rows if r and r["status"] == "ok" and r.get("client_bytes")
                and "cpu_app_s" in r and "cpu_display_s" in r]
        if rows:
            cpu = sum(r["cpu_app_s"] + r["cpu_display_s"] for r in rows)
            mb = sum(r["client_bytes"] for r in rows) / 1e6
            totals.append("%s %.3f (%.2f s over %.2f MB, %d workloads)" % (paths[pk], cpu / mb, cpu, mb, len(rows)))
    if totals:
        lines.append("")
        lines.append("CPU s per MB of client X traffic over the workloads each path completed: " +
                     "; ".join(totals) + ".")
    lines.append("")
    lines.append("Workloads:")
    for w in d["workloads"]:
        lines.append("- `%s`: %s" % (w["key"], w["desc"]))
    return "\n".join(lines) + "\n"

# --------------------------------------------------------------------------- SVG


def bar_chart(d, title, value_of, unit_fmt, log=True, note=""):
    """Grouped horizontal bars: a group per workload, a bar per path."""
    idx = index(d["results"])
    paths = [p["key"] for p in d["paths"]]
    vals = {}
    for w in d["workloads"]:
        for p in paths:
            vals[(w["key"], p)] = value_of(idx, w["key"], p)
    nums = [v for v in vals.values() if isinstance(v, (int, float)) and v > 0]
    if not nums:
        return "<p>%s: no data</p>" % html.escape(title)
    lo, hi = min(nums), max(nums)
    if log:
        lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        if hi_e == lo_e:
            hi_e += 1

        def x_of(v):
            return (math.log10(v) - lo_e) / (hi_e - lo_e)
        ticks = [10 ** e for e in range(lo_e, hi_e + 1)]
    else:
        top = hi * 1.05

        def x_of(v):
            return v / top
        step = 10 ** math.floor(math.log10(top))
        ticks = [i * step for i in range(0, int(top / step) + 1)]
    left, width, bar_h, gap = 110, 640, 11, 10
    group_h = len(paths) * bar_h + gap
    top_pad = 40
    height = top_pad + len(d["workloads"]) * group_h + 50
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="10">' % (left + width + 120, height)]
    out.append('<text x="4" y="14" font-size="13" font-weight="bold">%s</text>' % html.escape(title))
    if note:
        out.append('<text x="4" y="28" fill="#555">%s</text>' % html.escape(note))
    axis_y = height - 40
    for t in ticks:
        x = left + x_of(t) * width if (not log or t > 0) else left
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x, top_pad - 4, x, axis_y))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>' %
                   (x, axis_y + 12, html.escape(unit_fmt(t))))
    for gi, w in enumerate(d["workloads"]):
        y0 = top_pad + gi * group_h
        out.append('<text x="%d" y="%.1f" text-anchor="end" font-weight="bold">%s</text>' %
                   (left - 6, y0 + len(paths) * bar_h / 2 + 3, html.escape(w["key"])))
        for pi, p in enumerate(paths):
            y = y0 + pi * bar_h
            v = vals[(w["key"], p)]
            if isinstance(v, (int, float)) and v > 0:
                x = max(2.0, x_of(v) * width)
                out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %s</title></rect>' %
                           (left, y, x, bar_h - 2, COLORS.get(p, "#999"), html.escape(w["key"]),
                            html.escape(p), html.escape(unit_fmt(v))))
                out.append('<text x="%.1f" y="%d">%s</text>' % (left + x + 3, y + bar_h - 3, html.escape(unit_fmt(v))))
            else:
                out.append('<text x="%d" y="%d" fill="%s">%s</text>' %
                           (left + 3, y + bar_h - 3, "#c00" if v == "FAILED" else "#888",
                            html.escape("%s: %s" % (p, v or "not run"))))
    lx = 4
    for p in paths:
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (lx, height - 16, COLORS.get(p, "#999")))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 13, height - 7, html.escape(p)))
        lx += 20 + 7 * len(p)
    out.append("</svg>")
    return "\n".join(out)


def value(mode, field):
    def get(idx, w, p):
        r = idx.get((mode, w, p))
        if r is None:
            return None
        if r["status"] != "ok":
            return "FAILED"
        return r.get(field)
    return get


def si_bytes(v):
    for unit, div in (("MB", 1e6), ("KB", 1e3)):
        if v >= div:
            return "%.3g %s" % (v / div, unit)
    return "%d B" % v


def secs(v):
    return "%.3g s" % v


def html_report(d, md):
    m = d["meta"]
    charts = [
        bar_chart(d, "Bytes on the link, both directions (log scale)", value("count", "bytes"), si_bytes,
                  note="between snapshots before each workload and after the link was quiet"),
        bar_chart(d, "Wall time over %s (log scale)" % m["link"], value("slow", "wall_s"), secs,
                  note="start-up rows: until the window mapped at the X server; others: until the program ended"),
        bar_chart(d, "Wall time, local (counting relay only, log scale)", value("count", "wall_s"), secs),
        bar_chart(d, "CPU of the app-side proxy process (s, log scale)", value("count", "cpu_app_s"), secs),
        bar_chart(d, "CPU of the display-side proxy process (s, log scale)", value("count", "cpu_display_s"), secs),
    ]
    body = []
    body.append("<h1>tincan compared with raw X, ssh -C (zlib-6) and nxproxy</h1>")
    body.append("<p>%s</p>" % html.escape("%s; %s" % (m["command"], m["machine"])))
    for c in charts:
        body.append("<div>%s</div>" % c)
    rows = [l for l in md.splitlines() if l.startswith("|")]
    body.append("<h2>Table</h2><table>")
    for i, l in enumerate(rows):
        if i == 1:
            continue
        tag = "th" if i == 0 else "td"
        cs = [c.strip().replace("**", "") for c in l.strip("|").split("|")]
        body.append("<tr>" + "".join('<%s%s>%s</%s>' % (tag, ' class="bad"' if c == "FAILED" else "",
                                                       html.escape(c), tag) for c in cs) + "</tr>")
    body.append("</table>")
    body.append("<h2>Workloads</h2><ul>")
    for w in d["workloads"]:
        body.append("<li><code>%s</code>: %s</li>" % (html.escape(w["key"]), html.escape(w["desc"])))
    body.append("</ul>")
    style = ("body{font-family:sans-serif;max-width:1100px;margin:1em auto}table{border-collapse:collapse;"
             "font-size:12px}td,th{border:1px solid #ccc;padding:2px 5px;text-align:right}"
             "td:nth-child(1),td:nth-child(2),td:last-child{text-align:left}.bad{color:#c00;font-weight:bold}")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tincan comparison</title>"
            "<style>%s</style></head><body>\n%s\n</body></html>\n" % (style, "\n".join(body)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--html", required=True)
    a = ap.parse_args()
    with open(a.inp) as f:
        d = json.load(f)
    md = markdown(d)
    with open(a.md, "w") as f:
        f.write(md)
    with open(a.html, "w") as f:
        f.write(html_report(d, md))
    print(md)


if __name__ == "__main__":
    main()
