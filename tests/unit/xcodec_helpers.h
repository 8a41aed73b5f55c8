/* xcodec_helpers.h -- what the structured codec's tests share: messages built by hand (of
 * every kind), real ones recorded from programs (hex), and the round trip through an
 * encoder and a decoder at any chunking of the encoded stream. Its definitions are static. */
#ifndef TINCAN_XCODEC_HELPERS_H
#define TINCAN_XCODEC_HELPERS_H

#include "xcodec_samples.h"

#include <errno.h>
#include <iconv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "test.h"
#include "common/buf.h"
#include "xcodec/xcodec.h"

#define MAXMSG 256
struct msgs { struct buf all; size_t off[MAXMSG + 1]; int n; };

static uint32_t rng_state = 12345;
static inline uint32_t rnd(void) { rng_state = rng_state * 1103515245u + 12345u; return rng_state >> 8; }

static inline void add(struct msgs *m, const uint8_t *p, size_t n)
{
    if (m->n >= MAXMSG) return;
    m->off[m->n++] = m->all.len;
    CHECK_EQ(buf_append(&m->all, p, n), 0);
    m->off[m->n] = m->all.len;
}

/* A request: opcode, byte 1, and a body of len-4 bytes from fill (NULL: a pattern). */
static inline void req(struct msgs *m, bool msb, uint8_t op, uint8_t b1, size_t len, const uint8_t *fill)
{
    uint8_t *p = calloc(1, len);
    p[0] = op; p[1] = b1;
    st16(p + 2, (uint16_t)(len / 4), msb);
    for (size_t i = 4; i < len; i++) p[i] = fill ? fill[i - 4] : (uint8_t)(i * 7 + op);
    add(m, p, len);
    free(p);
}

static inline void big_req(struct msgs *m, bool msb, uint8_t op, size_t len)
{
    uint8_t *p = calloc(1, len);
    p[0] = op; p[1] = 2;
    st32(p + 4, (uint32_t)(len / 4), msb);
    for (size_t i = 8; i < len; i++) p[i] = (uint8_t)(i / 3);
    if (len >= 28) { /* PutImage-like width, height and depth: rows of the body */
        st16(p + 16, 100, msb);
        st16(p + 18, 20, msb);
        p[25] = 24;
    }
    add(m, p, len);
    free(p);
}

static inline void event(struct msgs *m, bool msb, uint8_t code, uint16_t seq, uint32_t t, int16_t x, int16_t y)
{
    uint8_t p[32] = { code, 0 };
    st16(p + 2, seq, msb);
    st32(p + 4, t, msb);
    st32(p + 8, 0x1e7, msb);
    st32(p + 12, 0x400001, msb);
    st16(p + 20, (uint16_t)x, msb); st16(p + 22, (uint16_t)y, msb);
    st16(p + 24, (uint16_t)(x - 5), msb); st16(p + 26, (uint16_t)(y - 9), msb);
    p[30] = 1;
    add(m, p, 32);
}

static inline void reply(struct msgs *m, bool msb, uint8_t b1, uint16_t seq, size_t extra, uint8_t seed)
{
    uint8_t *p = calloc(1, 32 + extra);
    p[0] = 1; p[1] = b1;
    st16(p + 2, seq, msb);
    st32(p + 4, (uint32_t)(extra / 4), msb);
    for (size_t i = 8; i < 32 + extra; i++) p[i] = (uint8_t)(seed + i % 13);
    add(m, p, 32 + extra);
    free(p);
}

static inline void setup_reply(struct msgs *m, bool msb, uint8_t status, size_t extra)
{
    uint8_t *p = calloc(1, 8 + extra);
    p[0] = status; p[1] = 5;
    st16(p + 2, 11, msb);
    st16(p + 6, (uint16_t)(extra / 4), msb);
    for (size_t i = 8; i < 8 + extra; i++) p[i] = (uint8_t)i;
    add(m, p, 8 + extra);
    free(p);
}



/* A QueryFont-shaped reply: nprops properties and nci charinfos, mostly absent glyphs (all
 * zeros) and glyph metrics from a few hundred distinct ones (more than the coder's table). */
static inline void font_reply(struct buf *out, bool msb, uint16_t seq, uint16_t nprops, uint32_t nci)
{
    size_t len = 60 + 8 * (size_t)nprops + 12 * (size_t)nci;
    uint8_t *p = calloc(1, len);
    p[0] = 1;
    st16(p + 2, seq, msb);
    st32(p + 4, (uint32_t)((len - 32) / 4), msb);
    st16(p + 18, 6, msb); st16(p + 20, 11, msb); st16(p + 22, 2, msb); /* max-bounds */
    st16(p + 42, (uint16_t)(nci - 1), msb);
    st16(p + 46, nprops, msb);
    st16(p + 52, 11, msb); st16(p + 54, 2, msb);
    st32(p + 56, nci, msb);
    for (size_t i = 0; i < nprops; i++) {
        st32(p + 60 + 8 * i, (uint32_t)(1 + i), msb);
        st32(p + 64 + 8 * i, (uint32_t)(i * 37), msb);
    }
    uint8_t *ci = p + 60 + 8 * (size_t)nprops;
    for (uint32_t i = 0; i < nci; i++, ci += 12) {
        if (rnd() % 3 == 0 || (i / 256) % 5 == 3)
            continue; /* absent glyphs, in blocks too */
        unsigned v = rnd() % (rnd() % 4 ? 8 : 400);
        st16(ci + 0, (uint16_t)(v % 3), msb);
        st16(ci + 2, (uint16_t)(5 + v % 2), msb);
        st16(ci + 4, 6, msb);
        st16(ci + 6, (uint16_t)(6 + v / 3 % 6), msb);
        st16(ci + 8, (uint16_t)(int16_t)((int)(v / 18 % 23) - 11), msb);
    }
    CHECK_EQ(buf_append(out, p, len), 0);
    free(p);
}

/* A GetImage-shaped reply of npx 4-byte pixels from ncolors values, in runs like text. */
static inline void image_reply(struct buf *out, bool msb, uint16_t seq, uint32_t npx, unsigned ncolors)
{
    size_t len = 32 + 4 * (size_t)npx;
    uint8_t *p = calloc(1, len);
    p[0] = 1; p[1] = 24;
    st16(p + 2, seq, msb);
    st32(p + 4, npx, msb);
    st32(p + 8, 0x21, msb);
    unsigned c = 0;
    for (uint32_t i = 0; i < npx; i++) {
        if (rnd() % 5 == 0)
            c = rnd() % ncolors;
        st32(p + 32 + 4 * i, c * 0x10101u ^ (c ? 0xff000000u : 0), msb);
    }
    CHECK_EQ(buf_append(out, p, len), 0);
    free(p);
}


/* A ListFonts reply of n names (pad: any bytes the server left after them, at most 3). */
static inline void names_reply(struct buf *out, bool msb, uint16_t seq, const char *const *names, size_t n)
{
    size_t blen = 0;
    for (size_t i = 0; i < n; i++)
        blen += 1 + strlen(names[i]);
    blen = (blen + 3) & ~(size_t)3;
    uint8_t *p = calloc(1, 32 + blen), *w = p + 32;
    p[0] = 1;
    st16(p + 2, seq, msb);
    st32(p + 4, (uint32_t)(blen / 4), msb);
    st16(p + 8, (uint16_t)n, msb);
    for (size_t i = 0; i < n; i++) {
        *w = (uint8_t)strlen(names[i]);
        memcpy(w + 1, names[i], *w);
        w += 1 + *w;
    }
    CHECK_EQ(buf_append(out, p, 32 + blen), 0);
    free(p);
}

/* A font directory's listing: families x weights x slants x sizes x encodings, sorted. */
static inline size_t synth_font_names(char ***out)
{
    static const char *const fam[] = { "misc-fixed", "adobe-courier", "b&h-lucida", "bitstream-charter" };
    static const char *const wt[] = { "bold", "medium" };
    static const char *const sl[] = { "i", "o", "r" };
    static const unsigned px[] = { 8, 10, 12, 14, 18, 24 };
    static const char *const enc[] = { "iso10646-1", "iso8859-1", "iso8859-10", "iso8859-15", "iso8859-2", "koi8-r" };
    size_t n = 0, cap = 4 * 2 * 3 * 6 * 6;
    char **v = calloc(cap, sizeof *v);
    for (size_t a = 0; a < 4; a++) for (size_t b = 0; b < 2; b++) for (size_t c = 0; c < 3; c++)
        for (size_t d = 0; d < 6; d++) for (size_t e = 0; e < 6; e++) {
            v[n] = malloc(128);
            snprintf(v[n++], 128, "-%s-%s-%s-normal--%u-%u-75-75-%c-%u-%s", fam[a], wt[b], sl[c], px[d],
                     px[d] * 10, a < 2 ? 'c' : 'p', px[d] * 6 + (unsigned)b * 7, enc[e]);
        }
    *out = v;
    return n;
}

static inline size_t zstd_size(const struct buf *b)
{
    size_t cap = ZSTD_compressBound(b->len);
    void *z = malloc(cap);
    size_t n = ZSTD_compress(z, cap, buf_head(b), b->len, 3);
    free(z);
    return ZSTD_isError(n) ? b->len : n;
}

/* Encodes a setup reply and the server messages in all (each whole: its length field). */
static inline void encode_server(bool msb, const struct buf *all, struct buf *enc)
{
    struct xenc *e;
    uint8_t setup[8] = { 1, 0, 11, 0, 0, 0, 0, 0 };
    xenc_new(&e, XC_SERVER, msb);
    xenc_message(e, setup, sizeof setup, enc);
    for (size_t at = 0; at < all->len;) {
        const uint8_t *m = buf_head(all) + at;
        size_t len = 32 + 4 * (size_t)ld32(m + 4, msb);
        CHECK_EQ(xenc_message(e, m, len, enc), 0);
        at += len;
    }
    xenc_free(e);
}

/* Decodes enc in chunks (0: whole); whether it gives the setup reply and then all. */
static inline bool decode_server(bool msb, const struct buf *enc, size_t chunk, const struct buf *all)
{
    struct xdec *d;
    struct buf dec = { 0 }, pend = { 0 };
    bool ok = xdec_new(&d, XC_SERVER, msb) == 0;
    for (size_t at = 0; ok && at < enc->len;) {
        size_t n = chunk && chunk < enc->len - at ? chunk : enc->len - at;
        CHECK_EQ(buf_append(&pend, buf_head(enc) + at, n), 0);
        at += n;
        long used = xdec_feed(d, buf_head(&pend), pend.len, &dec);
        if (used < 0) ok = false;
        else buf_consume(&pend, (size_t)used);
    }
    ok = ok && pend.len == 0 && dec.len == all->len + 8 && memcmp(buf_head(&dec) + 8, buf_head(all), all->len) == 0;
    xdec_free(d);
    buf_free(&dec); buf_free(&pend);
    return ok;
}

static inline long decode_server_result(bool msb, const uint8_t *p, size_t n)
{
    struct xdec *d;
    struct buf dec = { 0 };
    xdec_new(&d, XC_SERVER, msb);
    long rc = xdec_feed(d, p, n, &dec);
    xdec_free(d);
    buf_free(&dec);
    return rc;
}



static inline void add_hex(struct msgs *m, const char *hex)
{
    struct buf b = { 0 };
    for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) {
        unsigned v;
        sscanf(hex + i, "%2x", &v);
        uint8_t c = (uint8_t)v;
        CHECK_EQ(buf_append(&b, &c, 1), 0);
    }
    add(m, buf_head(&b), b.len);
    buf_free(&b);
}

/* AddGlyphs of n glyphs of w x h pixels of psz bytes (A8 rows padded to 4); 32-bit pixels
 * have alpha = green, as subpixel glyphs do. */
static inline void add_glyphs(struct msgs *m, bool msb, uint32_t first, uint32_t n, uint16_t w, uint16_t h, unsigned psz)
{
    size_t stride = psz == 4 ? 4u * w : (w + 3u) & ~3u, len = 12 + 16 * (size_t)n + stride * h * n;
    uint8_t *p = calloc(1, len);
    p[0] = 138; p[1] = 20;
    st16(p + 2, (uint16_t)(len / 4), msb);
    st32(p + 4, 0x200012, msb);
    st32(p + 8, n, msb);
    for (uint32_t g = 0; g < n; g++) {
        st32(p + 12 + 4 * g, first + g, msb);
        uint8_t *info = p + 12 + 4 * n + 12 * g;
        st16(info, w, msb); st16(info + 2, h, msb);
        st16(info + 4, 1, msb); st16(info + 6, (uint16_t)(h - 2), msb); st16(info + 8, w, msb);
    }
    uint8_t *img = p + 12 + 16 * (size_t)n;
    for (size_t k = 0; k + psz <= stride * h * n; k += psz) {
        uint8_t g = (uint8_t)(rnd() % 3 ? 0 : rnd());
        if (psz == 4) st32(img + k, (uint32_t)g << 24 | (uint32_t)(g / 2) << 16 | (uint32_t)g << 8 | (uint8_t)(g * 3), msb);
        else img[k] = g;
    }
    add(m, p, len);
    free(p);
}

/* Trapezoids requests of m (LSB) again in MSB order into b: the length swapped (bytes 4-7
 * are the opcode and padding), then every 32-bit value (ids, then FIXED values; src x, y:
 * any bytes do). m's bytes are changed. */
static inline void traps_to_msb(struct msgs *m, struct msgs *b)
{
    for (int i = 0; i < m->n; i++) {
        uint8_t *p = (uint8_t *)buf_head(&m->all) + m->off[i];
        size_t len = m->off[i + 1] - m->off[i];
        uint8_t t = p[2]; p[2] = p[3]; p[3] = t;
        for (size_t k = 8; k + 4 <= len; k += 4)
            st32(p + k, ld32(p + k, false), true);
        add(b, p, len);
    }
}

/* A request stream cut anywhere short: the decoder waits for the rest and gives nothing. */
static inline void cut_short_waits(const uint8_t *rec, size_t n)
{
    struct buf out = { 0 };
    for (size_t cut = 0; cut < n; cut++) {
        struct xdec *d;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec, cut, &out), 0);
        CHECK_EQ(out.len, 0);
        xdec_free(d);
    }
    buf_free(&out);
}

/* A byte of a record set to another value. */
struct flip { size_t at; uint8_t v; };

/* rec with each flip alone: a fresh decoder refuses it (and, with nothing, gives nothing). */
static inline void refused_each(const uint8_t *rec, size_t n, const struct flip *bad, size_t nbad, bool nothing)
{
    struct buf out = { 0 };
    uint8_t *c = malloc(n);
    for (size_t i = 0; i < nbad; i++) {
        struct xdec *d;
        memcpy(c, rec, n);
        c[bad[i].at] = bad[i].v;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, c, n, &out), -EBADMSG);
        if (nothing)
            CHECK_EQ(out.len, 0);
        xdec_free(d);
    }
    free(c);
    buf_free(&out);
}

static size_t rt_store = XC_STORE_MAX; /* the reference store round_trip gives both ends */

/* Encodes every message with the encoder told a link rate (0: unknown), decodes the stream
 * in chunks of `chunk` bytes (0: all at once); returns whether the decoded bytes equal the
 * messages, and (when asked) the encoding's size, and its size through zstd. */
static inline bool round_trip_at(enum xc_dir dir, bool msb, const struct msgs *m, size_t chunk, uint64_t rate,
                                 size_t *enc_size, size_t *zstd_enc_size)
{
    struct xenc *e; struct xdec *d;
    struct buf enc = { 0 }, dec = { 0 }, pend = { 0 };
    bool ok = xenc_new(&e, dir, msb) == 0 && xdec_new(&d, dir, msb) == 0;
    if (ok) {
        xenc_set_store(e, rt_store);
        xdec_set_store(d, rt_store);
        xenc_set_link_rate(e, rate);
    }
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e, buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc) == 0;
    if (enc_size) *enc_size = enc.len;
    for (size_t at = 0; ok && at < enc.len;) {
        size_t n = chunk && chunk < enc.len - at ? chunk : enc.len - at;
        CHECK_EQ(buf_append(&pend, buf_head(&enc) + at, n), 0);
        at += n;
        long used = xdec_feed(d, buf_head(&pend), pend.len, &dec);
        if (used < 0) ok = false;
        else buf_consume(&pend, (size_t)used);
    }
    ok = ok && pend.len == 0 && dec.len == m->all.len && memcmp(buf_head(&dec), buf_head(&m->all), dec.len) == 0;
    if (zstd_enc_size)
        *zstd_enc_size = ok ? zstd_size(&enc) : 0;
    xenc_free(e); xdec_free(d);
    buf_free(&enc); buf_free(&dec); buf_free(&pend);
    return ok;
}

static inline bool round_trip(enum xc_dir dir, bool msb, const struct msgs *m, size_t chunk, size_t *enc_size)
{
    return round_trip_at(dir, msb, m, chunk, 0, enc_size, NULL);
}

static inline void requests_of_every_kind(struct msgs *m, bool msb)
{
    uint8_t text[64];
    for (int i = 0; i < 64; i++) text[i] = (uint8_t)('a' + i % 26);
    req(m, msb, 43, 0, 4, NULL);               /* GetInputFocus */
    req(m, msb, 43, 0, 4, NULL);               /* an exact repeat */
    req(m, msb, 62, 0, 28, NULL);              /* CopyArea */
    req(m, msb, 65, 0, 12 + 4 * 9, NULL);      /* PolyLine */
    req(m, msb, 64, 1, 12 + 4 * 3, NULL);      /* PolyPoint, previous mode */
    req(m, msb, 66, 0, 12 + 8 * 5, NULL);      /* PolySegment */
    req(m, msb, 70, 0, 12 + 8 * 40, NULL);     /* PolyFillRectangle, a large body */
    req(m, msb, 68, 0, 12 + 12 * 2, NULL);     /* PolyArc */
    req(m, msb, 69, 0, 16 + 4 * 5, NULL);      /* FillPoly */
    req(m, msb, 59, 0, 12 + 8 * 2, NULL);      /* SetClipRectangles */
    req(m, msb, 56, 0, 12 + 4 * 3, NULL);      /* ChangeGC */
    uint8_t it[16 + 12] = { 0 };
    memcpy(it + 12, text, 11);                 /* ImageText8 with zero padding */
    req(m, msb, 76, 11, 28, it);
    it[12 + 11] = 0x5a;                        /* and non-zero padding */
    req(m, msb, 76, 11, 28, it);
    uint8_t pi[20 + 400];
    memset(pi, 0, sizeof pi);
    st16(pi + 8, 10, msb); st16(pi + 10, 10, msb); pi[17] = 24;
    for (int i = 0; i < 400; i++) pi[20 + i] = (uint8_t)(i % 40 * 3);
    req(m, msb, 72, 2, 24 + 400, pi);          /* PutImage ZPixmap 24 */
    st16(pi + 8, 7, msb); pi[17] = 8;
    req(m, msb, 72, 2, 24 + 400, pi);          /* rows that do not divide the body */
    pi[17] = 1;
    req(m, msb, 72, 0, 24 + 400, pi);          /* a bitmap */
    req(m, msb, 139, 23, 28 + 16, NULL);       /* an extension request */
    req(m, msb, 139, 20, 28 + 300, NULL);
    req(m, msb, 139, 23, 28 + 16, NULL);
    req(m, msb, 139, 10, 24 + 40 * 3, NULL);   /* RENDER Trapezoids (minor 10) */
    req(m, msb, 139, 10, 24 + 40 * 3 + 4, NULL); /* minor 10 not of trapezoids */
    req(m, msb, 74, 0, 16 + 20, text);         /* PolyText8 */
    req(m, msb, 0, 0, 4, NULL);                /* opcode 0 (no such request) */
}





/* Messages from hex, LSB first, split by their length fields. */
static inline void add_hex_msgs(struct msgs *m, const char *hex)
{
    struct msgs all = { 0 };
    add_hex(&all, hex);
    const uint8_t *p = buf_head(&all.all);
    for (size_t at = 0; at + 4 <= all.all.len;) {
        size_t len = 4u * ld16(p + at + 2, false);
        add(m, p + at, len);
        at += len;
    }
    buf_free(&all.all);
}

/* Size of a message list's encoding. */
static inline size_t encoded_size(enum xc_dir dir, bool msb, const struct msgs *m)
{
    size_t size = 0;
    return round_trip(dir, msb, m, 0, &size) ? size : (size_t)-1;
}

/* A 32-bit image w x h with more than 16 colours (a gradient, seeded), drawn at (x, 0). */
static inline void gradient_image(struct msgs *m, bool msb, uint16_t w, uint16_t h, unsigned seed, uint16_t x)
{
    size_t blen = 4u * w * h;
    uint8_t *t = calloc(1, 20 + blen);
    st16(t + 8, w, msb); st16(t + 10, h, msb); st16(t + 12, x, msb); t[17] = 32;
    for (size_t i = 0; i < (size_t)w * h; i++)
        st32(t + 20 + 4 * i, 0xff000000u | (uint32_t)((i % w) * 7 + seed) << 16 | (uint32_t)((i / w) * 5 + seed * 3) << 8 | (seed & 0xff), msb);
    req(m, msb, 72, 2, 24 + blen, t);
    free(t);
}

/* CompositeGlyphs (minor 23 + k) of the given items (already laid out) after the 24 bytes of
 * op, pictures, format, glyphset and source. */
static inline void composite_glyphs(struct msgs *m, bool msb, unsigned k, const uint8_t *items, size_t n)
{
    uint8_t *t = calloc(1, 24 + n);
    t[0] = 3;
    st32(t + 4, 0x200004, msb); st32(t + 8, 0x200005, msb); st32(t + 16, 0x200012, msb);
    memcpy(t + 24, items, n);
    req(m, msb, 138, (uint8_t)(23 + k), 28 + n, t);
    free(t);
}

/* Whether value i of a Trapezoids body (32-bit values, 10 a trapezoid) is a y. */
static inline bool trap_is_y(size_t i) { return i % 10 < 2 || i % 10 % 2 == 1; }

/* An ellipse (centre cx, cy; radii a, b) cut in n slices of equal angle, as trapezoids of
 * 16.16 values, as xeyes draws its eyes; skewed by x += skew * (y - cy). */
static inline void ellipse_traps(int32_t *v, int n, double cx, double cy, double a, double b, double skew)
{
    for (int i = 0; i < n; i++) {
        double t0 = 3.141592653589793 * i / n, t1 = 3.141592653589793 * (i + 1) / n;
        double y0 = cy - b * cos(t0), y1 = cy - b * cos(t1);
        double l0 = cx - a * sin(t0), l1 = cx - a * sin(t1), r0 = cx + a * sin(t0), r1 = cx + a * sin(t1);
        double s0 = skew * (y0 - cy), s1 = skew * (y1 - cy);
        double t[10] = { y0, y1, l0 + s0, y0, l1 + s1, y1, r0 + s0, y0, r1 + s1, y1 };
        for (int j = 0; j < 10; j++)
            v[10 * i + j] = (int32_t)lround(t[j] * 65536);
    }
}

/* w: the n trapezoids of v mirrored in x (how 1, about x = 200: left and right edges swap)
 * or in y (2, about y = 100: the trapezoids in reverse order, each upside down). */
static inline void mirror_traps(int32_t *w, const int32_t *v, int n, int how)
{
    static const int fx[10] = { 0, 1, 6, 7, 8, 9, 2, 3, 4, 5 }, fy[10] = { 1, 0, 4, 5, 2, 3, 8, 9, 6, 7 };
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 10; j++) {
            int src = how == 1 ? 10 * i + fx[j] : 10 * (n - 1 - i) + fy[j];
            bool flip = how == 1 ? !trap_is_y((size_t)j) : trap_is_y((size_t)j);
            w[10 * i + j] = flip ? (how == 1 ? 400 : 200) * 65536 - v[src] : v[src];
        }
}

/* A Trapezoids request (RENDER's opcode taken as 138) of n values. */
static inline void traps_req(struct msgs *m, bool msb, const int32_t *v, size_t n)
{
    uint8_t *t = calloc(1, 20 + 4 * n);
    t[0] = 3;
    st32(t + 4, 0x20000e, msb); st32(t + 8, 0x20000d, msb); st32(t + 12, 0x24, msb);
    for (size_t i = 0; i < n; i++)
        st32(t + 20 + 4 * i, (uint32_t)v[i], msb);
    req(m, msb, 138, 10, 24 + 4 * n, t);
    free(t);
}

/* Encodes m's messages with e into enc, then checks that a fresh decoder gives them back. */
static inline bool encode_decode(struct xenc *e, const struct msgs *m, size_t *size)
{
    struct xdec *d;
    struct buf enc = { 0 }, dec = { 0 };
    bool ok = xdec_new(&d, XC_REQUESTS, false) == 0;
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e, buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc) == 0;
    long used = ok ? xdec_feed(d, buf_head(&enc), enc.len, &dec) : -1;
    ok = ok && used == (long)enc.len && dec.len == m->all.len && !memcmp(buf_head(&dec), buf_head(&m->all), dec.len);
    *size = enc.len;
    xdec_free(d);
    buf_free(&enc);
    buf_free(&dec);
    return ok;
}


#endif
