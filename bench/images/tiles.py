#!/usr/bin/env python3
"""tiles.py -- how much of a capture's large images (the PutImage bodies filter 9 codes: depth
24 or 32 ZPixmap, over 16 KiB) is made of tiles, aligned to the drawable's coordinates, that
earlier captures (an earlier session) or earlier images of the same capture already drew.

usage: tiles.py FIRST.cap SECOND.cap [T...]   (T: tile sides, default 16 32 64)
Counts pixels: of every image, of its whole tiles, of those not of one colour, and of those
found (by content hash) in the first capture, or in it and earlier images of the second."""
import hashlib, os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extract import requests  # noqa: E402


def images(cap):
    for _cid, msb, r in requests(cap):
        if r[0] != 72 or len(r) < 24 or msb:
            continue
        fmt, w, h, x, y = r[1], *struct.unpack_from("<HHhh", r, 12)
        depth, body = r[21], r[24:]
        if fmt == 2 and depth in (24, 32) and r[20] == 0 and len(body) == 4 * w * h and len(body) > 16384:
            yield x, y, w, h, body


def tiles(x, y, w, h, body, t):
    """(hash, uniform) of each whole tile of side t on the drawable's grid inside the image."""
    cx0, cy0 = -(-x // t), -(-y // t)
    for cy in range(cy0, (y + h) // t):
        for cx in range(cx0, (x + w) // t):
            ox, oy = cx * t - x, cy * t - y
            rows = [body[4 * ((oy + j) * w + ox):4 * ((oy + j) * w + ox + t)] for j in range(t)]
            tile = b"".join(rows)
            yield hashlib.blake2b(tile, digest_size=16).digest(), tile == tile[:4] * (t * t)


def main():
    first, second = sys.argv[1], sys.argv[2]
    sides = [int(a) for a in sys.argv[3:]] or [16, 32, 64]
    imgs1, imgs2 = list(images(first)), list(images(second))
    px2 = sum(i[2] * i[3] for i in imgs2)
    print("second: %d images, %d pixels (%.1f MB); first: %d images" % (len(imgs2), px2, px2 * 4 / 1e6, len(imgs1)))
    print("T\twhole-tile px %\tnot-uniform %\tfound in first %\tfound in first or earlier %\tfirst alone: earlier %")
    for t in sides:
        seen1 = set()
        rep1 = nu1 = 0
        for im in imgs1:
            for hsh, uni in tiles(*im, t):
                if not uni:
                    nu1 += 1
                    rep1 += hsh in seen1
                    seen1.add(hsh)
        whole = nonuni = found1 = found = 0
        seen2 = set()
        for im in imgs2:
            for hsh, uni in tiles(*im, t):
                whole += 1
                if uni:
                    continue
                nonuni += 1
                found1 += hsh in seen1
                found += hsh in seen1 or hsh in seen2
                seen2.add(hsh)
        px = t * t
        print("%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f" % (t, 100 * whole * px / px2, 100 * nonuni * px / px2,
              100 * found1 * px / px2, 100 * found * px / px2, 100 * rep1 / max(nu1, 1)))


if __name__ == "__main__":
    main()
