#!/usr/bin/env bash
# after_others.sh -- what the persistent cache saves when other programs ran between two
# sessions of one: emacs's link bytes (app side to display side) cold, warm right after an
# emacs session, and warm after a session of emacs followed by 5.8 MB of noise images
# (xwud), which push emacs out of the cached dictionary's window; and x11perf's, cold and
# right after itself (the best case for the dictionary). tincan run --no-emulator, an
# embedded Xvfb per session, a fresh cache directory per case.
#
#   bench/cache/after_others.sh [TINCAN]        # about 2 minutes; TINCAN defaults to build/tincan
#
# Results: docs/BENCHMARKS.md, "Pixel bodies by index".
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TINCAN=${1:-$ROOT/build/tincan}
TMP=$(mktemp -d /tmp/tincan-after.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

python3 - "$TMP" <<'PY'
import os, struct, sys
w = h = 600
for k in range(4):  # ZPixmap xwd files of random 32-bit pixels: the row filters' case, no WebP
    name = b"noise%d\0" % k
    hdr = [100 + len(name), 7, 2, 24, w, h, 0, 0, 32, 0, 32, 32, w * 4, 4, 0xff0000, 0xff00, 0xff,
           8, 0, 0, w, h, 0, 0, 0]
    with open(os.path.join(sys.argv[1], "noise%d.xwd" % k), "wb") as f:
        f.write(struct.pack(">25I", *hdr) + name + os.urandom(w * h * 4))
PY
cat >"$TMP/emacs.sh" <<SH
#!/bin/sh
LANG=C.UTF-8 timeout 6 emacs -Q --no-site-file -geometry 80x40+0+0 --eval "(blink-cursor-mode 0)" /usr/share/common-licenses/GPL-3
if [ -n "\${NOISE:-}" ]; then for k in 0 1 2 3; do timeout 3 xwud -in $TMP/noise\$k.xwd; done; fi
SH
cat >"$TMP/x11perf.sh" <<'SH'
#!/bin/sh
x11perf -repeat 1 -reps 200 -rect10 -seg10 -ftext -copywinwin10 -putimage10 -oddtilerect10 -circle10 >/dev/null 2>&1
x11perf -repeat 1 -reps 200 -aa10text -aa24text -rgb24text -aatrap10 >/dev/null 2>&1
SH
chmod +x "$TMP/emacs.sh" "$TMP/x11perf.sh"

# session CACHE SCRIPT [ENV...]: the app side's link bytes out (the programs' requests).
session() {
    local cache=$1 script=$2; shift 2
    env XDG_CACHE_HOME="$cache" "$@" timeout 200 "$TINCAN" run --no-emulator --xvfb --session -- "$script" 2>&1 |
        sed -n 's/^link: [0-9]* bytes in ([0-9]* frames), \([0-9]*\) bytes out.*/\1/p' | tail -1 || true
}
echo "| case | cold B | warm B |"
echo "|---|--:|--:|"
c=$(session "$TMP/c1" "$TMP/emacs.sh"); w=$(session "$TMP/c1" "$TMP/emacs.sh")
echo "| emacs, then emacs | $c | $w |"
c=$(session "$TMP/c2" "$TMP/emacs.sh" NOISE=1); w=$(session "$TMP/c2" "$TMP/emacs.sh")
echo "| emacs and noise images, then emacs | $c (with the images) | $w |"
c=$(session "$TMP/c3" "$TMP/x11perf.sh"); w=$(session "$TMP/c3" "$TMP/x11perf.sh")
echo "| x11perf, then x11perf | $c | $w |"
