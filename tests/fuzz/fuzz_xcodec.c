/* fuzz_xcodec.c -- libFuzzer target for the structured X codec. First byte: bit 0 picks
 * the test, bit 1 the direction, bit 2 the byte order, bit 3 gives both ends a set of a
 * last session's pixel bodies and codes (pixcache.c) and tiles (tilecache.c). Test 0 feeds the rest to the
 * decoder as a hostile encoded stream (whole, then in 3-byte steps); test 1 cuts the rest
 * into X messages (2-byte sizes, length fields set so most are well formed; a flag makes
 * one a PutImage of over 16 KiB, its pixels the message's bytes repeated, for bigimg.c)
 * and traps unless decode(encode(x)) == x; bits 4-6 pick the encoder's link rate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec.h"

/* A set of three bodies (32 zero bytes, 48 counting, 64 of 0xff), each with a code of
 * PutImage's filter 4 in its small form (a size, then that many bytes), as saved: 4 bytes
 * for the first two (sent again as their codes), 50 for the last (sent by its index, as
 * codes of XC_PIXCACHE_REF_MIN bytes or more are); NULL without. */
static struct xc_pixcache *pix_set(bool with)
{
    struct xc_pixcache *c;
    if (!with || xc_pixcache_new(&c, XC_PIXCACHE_BYTES) < 0)
        return NULL;
    _Static_assert(50 >= XC_PIXCACHE_REF_MIN, "the last code is sent by its index");
    uint8_t file[4 + 3 * (4 + 4) + 32 + 48 + 64 + 4 + 4 + 50] = { 3 }, *p = file + 4;
    for (unsigned len = 32; len <= 64; len += 16) {
        unsigned code_len = len == 64 ? 50 : 4;
        *p = (uint8_t)len;
        p += 4;
        for (unsigned i = 0; i < len; i++)
            *p++ = len == 32 ? 0 : len == 48 ? (uint8_t)i : 0xff;
        *p = (uint8_t)code_len;
        p += 4;
        *p++ = 4, *p++ = (uint8_t)(code_len - 2), *p++ = 0xaa;
        for (unsigned i = 3; i < code_len; i++)
            *p++ = (uint8_t)(len + i - 3);
    }
    if (xc_pixcache_load(c, file, sizeof file) < 0)
        __builtin_trap();
    return c;
}

/* Three tiles of earlier sessions (pixel i of tile t: t, i, i + t, 0), as saved (ascending
 * by key: the order that loads); NULL without. */
static struct xc_tilecache *tile_set(bool with)
{
    struct xc_tilecache *c;
    if (!with || xc_tilecache_new(&c, 8u << 20) < 0)
        return NULL;
    static const uint8_t orders[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
    static uint8_t file[4 + 3 * 1024] = { 3 };
    for (int k = 0; k < 6; k++) {
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 256; i++) {
                uint8_t *px = file + 4 + 1024 * j + 4 * i, t = orders[k][j];
                px[0] = t, px[1] = (uint8_t)i, px[2] = (uint8_t)(i + t), px[3] = 0;
            }
        if (xc_tilecache_load(c, file, sizeof file) == 0)
            return c;
    }
    __builtin_trap();
}

static void hostile(enum xc_dir dir, bool msb, bool pix, const uint8_t *p, size_t n)
{
    struct xdec *d;
    struct buf out = { 0 }, pend = { 0 };
    struct xc_pixcache *c = pix_set(pix);
    struct xc_tilecache *t = tile_set(pix);
    if (xdec_new(&d, dir, msb) < 0)
        return;
    xdec_set_pixcache(d, c);
    xdec_set_tilecache(d, t);
    (void)xdec_feed(d, p, n, &out);
    xdec_free(d);
    if (xdec_new(&d, dir, msb) < 0)
        return;
    xdec_set_pixcache(d, c);
    xdec_set_tilecache(d, t);
    for (size_t at = 0; at < n; at += 3) {
        if (buf_append(&pend, p + at, n - at < 3 ? n - at : 3) < 0)
            abort(); /* out of memory: not what is fuzzed */
        long used = xdec_feed(d, buf_head(&pend), pend.len, &out);
        if (used < 0)
            break;
        if ((size_t)used > pend.len)
            __builtin_trap();
        buf_consume(&pend, (size_t)used);
        buf_clear(&out);
    }
    xdec_free(d);
    xc_pixcache_free(c);
    xc_tilecache_free(t);
    buf_free(&out);
    buf_free(&pend);
}

/* A PutImage (ZPixmap, depth 24, or 32 with deep) of over 16 KiB in m (room for it: at
 * least big_image_len), its pixels the first k bytes of m repeated with a drift. Its length. */
#define BIG_W_MAX 135
#define BIG_H_MAX 95
static size_t big_image_len(void) { return 24 + 4 * BIG_W_MAX * BIG_H_MAX; }
static size_t big_image(uint8_t *m, size_t k, bool msb, bool deep)
{
    uint16_t w = (uint16_t)(72 + m[4] % 64), h = (uint16_t)(64 + m[5] % 32);
    size_t blen = 4u * w * h;
    uint8_t tile[256];
    k = k < 24 ? 0 : k - 24 > sizeof tile ? sizeof tile : k - 24;
    memcpy(tile, m + 24, k);
    m[0] = 72, m[1] = 2;
    st16(m + 2, (uint16_t)((24 + blen) / 4), msb);
    st16(m + 12, w, msb), st16(m + 14, h, msb);
    m[20] = 0, m[21] = deep ? 32 : 24;
    for (size_t i = 0; i < blen; i++)
        m[24 + i] = k ? (uint8_t)(tile[i % k] + (deep || i % 4 != 3 ? i / 4 / (k + 1) : 0)) : (uint8_t)(i / 97);
    return 24 + blen;
}

static void round_trip(enum xc_dir dir, bool msb, bool pix, uint64_t rate, const uint8_t *p, size_t n)
{
    struct xenc *e;
    struct xdec *d;
    struct buf msgs = { 0 }, enc = { 0 }, dec = { 0 };
    if (xenc_new(&e, dir, msb) < 0)
        return;
    if (xdec_new(&d, dir, msb) < 0) {
        xenc_free(e);
        return;
    }
    struct xc_pixcache *ce = pix_set(pix), *cd = pix_set(pix);
    xenc_set_pixcache(e, ce);
    xdec_set_pixcache(d, cd);
    struct xc_tilecache *te = tile_set(pix), *td = tile_set(pix);
    xenc_set_tilecache(e, te);
    xdec_set_tilecache(d, td);
    xenc_set_link_rate(e, rate);
    size_t at = 0;
    bool first = true;
    while (at + 2 <= n) {
        size_t len = (size_t)p[at] | (size_t)(p[at + 1] & 0x0f) << 8, flags = p[at + 1] >> 4;
        at += 2;
        if (len == 0)
            len = 1;
        uint8_t *m = calloc(1, (len > big_image_len() ? len : big_image_len()) + 40);
        if (!m)
            break;
        size_t take = n - at < len ? n - at : len;
        memcpy(m, p + at, take);
        at += take;
        if (!(flags & 1)) { /* make it well formed */
            len = (len + 3) & ~(size_t)3;
            if (dir == XC_REQUESTS && (flags & 4) && !first)
                len = big_image(m, take, msb, flags & 8);
            else if (dir == XC_REQUESTS) {
                if (flags & 2) { len += 4; st16(m + 2, 0, msb); st32(m + 4, (uint32_t)(len / 4), msb); }
                else st16(m + 2, (uint16_t)(len / 4), msb);
            } else if (first) {
                len = 8 + 4 * (len / 4); st16(m + 6, (uint16_t)((len - 8) / 4), msb);
            } else if (m[0] == 1 || (m[0] & 0x7f) == 35) {
                len = 32 + len; st32(m + 4, (uint32_t)((len - 32) / 4), msb);
            } else
                len = 32;
        }
        first = false;
        if (buf_append(&msgs, m, len) < 0)
            abort(); /* out of memory: not what is fuzzed */
        int rc = xenc_message(e, m, len, &enc);
        free(m);
        if (rc < 0)
            __builtin_trap(); /* any bytes of an allowed size must encode */
    }
    long used = xdec_feed(d, buf_head(&enc), enc.len, &dec);
    if (used != (long)enc.len || dec.len != msgs.len || (msgs.len && memcmp(buf_head(&dec), buf_head(&msgs), msgs.len)))
        __builtin_trap();
    /* Both ends keep the same bodies for the next session. */
    struct buf se = { 0 }, sd = { 0 };
    if (ce && (xc_pixcache_save(ce, &se) < 0 || xc_pixcache_save(cd, &sd) < 0 || se.len != sd.len ||
               memcmp(buf_head(&se), buf_head(&sd), se.len)))
        __builtin_trap();
    buf_free(&se);
    buf_free(&sd);
    xc_pixcache_free(ce);
    xc_pixcache_free(cd);
    xc_tilecache_free(te);
    xc_tilecache_free(td);
    xenc_free(e);
    xdec_free(d);
    buf_free(&msgs);
    buf_free(&enc);
    buf_free(&dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    enum xc_dir dir = data[0] & 2 ? XC_SERVER : XC_REQUESTS;
    bool msb = data[0] & 4, pix = data[0] & 8;
    static const uint64_t rates[8] = { 0, 1200, 4000, 32000, 200000, 2000000, 50000000, 1000000000 };
    if (data[0] & 1)
        round_trip(dir, msb, pix, rates[data[0] >> 4 & 7], data + 1, size - 1);
    else
        hostile(dir, msb, pix, data + 1, size - 1);
    return 0;
}
