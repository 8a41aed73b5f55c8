#!/usr/bin/env python3
"""putimages.py -- the large PutImage requests of a capture (bench/xcodec/capture.py), in the
order they were sent, repeats included, for tilebench: what filter 9 codes (ZPixmap, depth 24
or 32, 32-bit pixels, over 16 KiB), each as len:u32le and the request (LSB clients only, in
the form without BIG-REQUESTS).

usage: putimages.py CAP OUT"""
import os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extract import requests  # noqa: E402

with open(sys.argv[2], "wb") as out:
    n = 0
    for _cid, msb, r in requests(sys.argv[1]):
        if r[0] != 72 or len(r) < 24 or msb:
            continue
        w, h = struct.unpack_from("<HH", r, 12)
        body = r[24:]
        if r[1] == 2 and r[21] in (24, 32) and r[20] == 0 and len(body) == 4 * w * h and len(body) > 16384:
            out.write(struct.pack("<I", len(r)) + r)
            n += 1
    print("%s: %d large PutImage requests" % (sys.argv[2], n), file=sys.stderr)
