#!/usr/bin/env bash
# core_lossy.sh -- lossy images, only when asked: with `tincan app --lossy-images Q` a photo
# (xwud showing a 256x192 picture) crosses as WebP, so the screen is close to the one the
# program draws directly but not equal, for a fraction of the exact session's link bytes;
# without the option the screen is identical; bad qualities are refused.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

PHOTO=$XL_TMP/photo.xwd
# A 24-bit TrueColor XWD (LSB, 32 bits a pixel): smooth shading, an edge and grain.
python3 - >"$PHOTO" <<'EOF'
import math, random, struct, sys
w, h, name = 256, 192, b"photo\0"
fields = [100 + len(name), 7, 2, 24, w, h, 0, 0, 32, 0, 32, 32, 4 * w, 4, 0xff0000, 0xff00, 0xff, 8, 256, 0,
          w, h, 0, 0, 0]
rnd, px = random.Random(7), bytearray()
c = lambda t: max(0, min(255, int(t)))
for y in range(h):
    for x in range(w):
        u, v, g = x / w, y / h, rnd.randint(-4, 4)
        px += bytes((c(60 + 150 * (1 - v) + g), c(120 + 80 * (1 if u * v > 0.2 else -1) * v + g),
                     c(200 * u + 40 * math.sin(7 * v) + g), 0))
sys.stdout.buffer.write(struct.pack(">25I", *fields) + name + bytes(px))
EOF

for q in 0 101 abc; do
    "$TINCAN" app --lossy-images "$q" --link-connect unix:/nonexistent >"$XL_TMP/bad.out" 2>&1
    check "That --lossy-images $q is refused with a clear message (status 2)" \
        bash -c "[ $? -eq 2 ] && grep -q 'takes a quality from 1 to 100' '$XL_TMP/bad.out'"
done
check "That --help tells of --lossy-images" bash -c "'$TINCAN' app --help | grep -q -- '--lossy-images Q'"

xl_start_xvfb b || { fail "That an Xvfb starts"; summary; exit 1; }
direct=$XL_TMP/direct.xwd
xl_bg b xwud -in "$PHOTO"
xl_wait_window b '^xwud: photo$' && xl_dump_stable b "$direct" 20 || fail "That xwud shows the photo directly"
kill "$XL_LAST"; xl_wait_exit "$XL_LAST" 10

# show NAME [APP OPTIONS]: xwud through a pair; its screen in NAME.xwd, the app side's link
# bytes (in + out) in BYTES.
show() {
    local name=$1
    XL_APP_OPTS=${2:-} xl_start_pair "$name" b || { fail "That the $name pair starts"; return 1; }
    xl_bg "$name" xwud -in "$PHOTO"
    local pid=$XL_LAST
    xl_wait_window b '^xwud: photo$' && xl_dump_stable b "$XL_TMP/$name.xwd" 20 || fail "That xwud shows the photo through $name"
    kill "$pid"; xl_wait_exit "$pid" 10
    xl_stop_pair "$name"
    local log="${name}_app_log"
    BYTES=$(sed -n 's/.*link: \([0-9]*\) bytes in .*, \([0-9]*\) bytes out .*/\1 \2/p' "${!log}" | awk '{ print $1 + $2 }' | tail -1)
}

# psnr A B: the peak signal-to-noise ratio of two screen dumps of one size, in dB (99: equal).
psnr() {
    python3 - "$1" "$2" <<'EOF'
import math, struct, sys
def pixels(path):
    d = open(path, "rb").read()
    f = struct.unpack(">25I", d[:100])
    return d[f[0] + 12 * f[19]:]
a, b = pixels(sys.argv[1]), pixels(sys.argv[2])
se = sum((x - y) ** 2 for x, y in zip(a, b) if x != y) if len(a) == len(b) else 1 << 62
print(99 if se == 0 else int(10 * math.log10(255 * 255 * len(a) / se)))
EOF
}

show exact
exact=$BYTES
check "That without the option the photo crosses exactly ($exact bytes)" cmp -s "$direct" "$XL_TMP/exact.xwd"
show lossy "--lossy-images 60"
q=$(psnr "$direct" "$XL_TMP/lossy.xwd")
check "That with --lossy-images 60 the screen differs from the direct one, but little ($q dB)" \
    test "$q" -lt 99 -a "$q" -ge 35
check "That the lossy session sends under a third of the exact one's bytes ($BYTES vs $exact)" \
    test "$((BYTES * 3))" -lt "$exact"

check "That no sanitizer or tincan report appeared" xl_sanitizer_clean "$XL_TMP"/*.log
summary
