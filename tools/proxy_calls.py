#!/usr/bin/env python3
"""proxy_calls.py -- which files of a source directory call functions defined in which
others: a file-level call graph, from the C text (function definitions found by their
shape, calls by name). Prints `FILE -> FILE, FILE...` per file, then the cycles found
among the files named with --acyclic (every pair of them that call each other, directly
or through others in the set), and exits 1 if there are any.

    tools/proxy_calls.py src/proxy [--acyclic observer,learnt,fontset,statewatch,spare]

A file's module is its name without .c and without a role suffix after the first `_`
(observer_probe.c and observer_windows.c are the observer)."""
import os
import re
import sys

DEF = re.compile(r'^(?!static)[a-z][a-z0-9_ \*]*?\b([a-z_][a-z0-9_]*)\(([^;]*)$', re.M)


def module(path):
    base = os.path.basename(path)[:-2]
    return base.split('_')[0]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    root = args[0]
    acyclic = []
    if '--acyclic' in args:
        acyclic = args[args.index('--acyclic') + 1].split(',')
    files = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith('.c'))
    text = {f: re.sub(r'/\*.*?\*/', '', open(f).read(), flags=re.S) for f in files}
    defined = {}
    for f in files:
        for m in DEF.finditer(text[f]):
            defined.setdefault(m.group(1), module(f))
    calls = {}
    for f in files:
        mod = module(f)
        body = text[f]
        for name, where in defined.items():
            if where != mod and re.search(r'\b' + name + r'\(', body):
                calls.setdefault(mod, set()).add(where)
    for mod in sorted(calls):
        print('%s -> %s' % (mod, ', '.join(sorted(calls[mod]))))
    if not acyclic:
        return 0
    # reachability within the set
    def reach(a):
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            for y in calls.get(x, ()):
                if y in acyclic and y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen
    cycles = sorted({tuple(sorted((a, b))) for a in acyclic for b in reach(a) if a != b and a in reach(b)})
    for a, b in cycles:
        print('cycle: %s <-> %s' % (a, b))
    return 1 if cycles else 0


if __name__ == '__main__':
    sys.exit(main())
