#!/usr/bin/env python3
"""extract.py -- the PutImage requests of capture files (bench/xcodec/capture.py) as image
files for imgbench: every distinct body of at least MIN bytes (default 16 KiB, where the
pixel coder stops), depth 24 ZPixmap of 32-bit pixels (what toolkits draw), with how often
it was sent.

usage: extract.py OUTDIR CAP...   writes OUTDIR/<capture>-<n>.img and OUTDIR/index.tsv
.img: magic "TCIMG1\\n\\0", w:u32le h:u32le depth:u32le count:u32le, then 4*w*h bytes (LSB)."""
import hashlib, os, struct, sys

MIN = int(os.environ.get("IMG_MIN", 16384))


def requests(cap):
    """yields (conn, request bytes) of each client's stream after its setup request."""
    with open(cap, "rb") as f:
        data = f.read()
    assert data[:8] == b"TCXCAP1\n", cap
    streams, pos = {}, 8
    while pos + 17 <= len(data):
        cid, d, _t, n = struct.unpack_from("<IBQI", data, pos)
        pos += 17
        if d == 0:
            streams.setdefault(cid, bytearray()).extend(data[pos:pos + n])
        pos += n
    for cid, s in streams.items():
        if len(s) < 12:
            continue
        msb = s[0] == 0x42
        e = ">" if msb else "<"
        na, nd = struct.unpack_from(e + "HH", s, 6)
        p = 12 + (na + 3) // 4 * 4 + (nd + 3) // 4 * 4
        while p + 4 <= len(s):
            ln = struct.unpack_from(e + "H", s, p + 2)[0] * 4
            if ln == 0:
                if p + 8 > len(s):
                    break
                ln = struct.unpack_from(e + "I", s, p + 4)[0] * 4
                if ln < 8 or p + ln > len(s):
                    break
                yield cid, msb, bytes(s[p:p + 4]) + bytes(s[p + 8:p + ln])  # as without BIG-REQUESTS
            else:
                if p + ln > len(s):
                    break
                yield cid, msb, bytes(s[p:p + ln])
            p += ln


def main():
    out, caps = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    index = open(os.path.join(out, "index.tsv"), "w")
    index.write("file\tcapture\tw\th\tcount\n")
    for cap in caps:
        name = os.path.basename(cap).rsplit(".", 1)[0]
        seen, order = {}, []
        for _cid, msb, r in requests(cap):
            if r[0] != 72 or len(r) < 24 or msb:
                continue
            fmt, w, h, depth = r[1], *struct.unpack_from("<HH", r, 12), r[21]
            body = r[24:]
            if fmt != 2 or depth != 24 or r[20] != 0 or len(body) != 4 * w * h or len(body) < MIN:
                continue
            k = hashlib.sha1(body).digest()
            if k not in seen:
                seen[k] = [w, h, 0, body]
                order.append(k)
            seen[k][2] += 1
        for i, k in enumerate(order):
            w, h, c, body = seen[k]
            fn = "%s-%03d.img" % (name, i)
            with open(os.path.join(out, fn), "wb") as f:
                f.write(b"TCIMG1\n\0" + struct.pack("<IIII", w, h, 24, c) + body)
            index.write("%s\t%s\t%d\t%d\t%d\n" % (fn, name, w, h, c))
        print("%s: %d distinct images of %d bytes or more" % (name, len(order), MIN), file=sys.stderr)


if __name__ == "__main__":
    main()
