#!/usr/bin/env python3
"""linkbytes.py -- where a tincan side's link bytes went: sums its `--log-level debug`
lines "link write: N frame bytes -> M: TYPE:CHANNEL:LEN ..." by the kinds of frame in
each write (before and after the link's compression), optionally from a marker line on.

usage: bench/compare/linkbytes.py [--from TEXT] LOG...
"""
import argparse
import collections
import re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="start", help="count only after the first line containing this")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    for path in args.logs:
        link, frames, writes = collections.Counter(), collections.Counter(), collections.Counter()
        on = args.start is None
        with open(path, errors="replace") as f:
            for line in f:
                if not on:
                    on = args.start in line
                    continue
                m = re.search(r"link write: (\d+) frame bytes -> (\d+):(.*)", line)
                if not m:
                    continue
                kind = "+".join(sorted({x.split(":")[0] for x in m.group(3).split()}))
                frames[kind] += int(m.group(1))
                link[kind] += int(m.group(2))
                writes[kind] += 1
        print("%s: %d link bytes in %d writes" % (path, sum(link.values()), sum(writes.values())))
        for kind, n in link.most_common():
            print("  %-24s %6d writes %9d frame bytes -> %7d link bytes" % (kind, writes[kind], frames[kind], n))


main()
