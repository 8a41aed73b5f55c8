/* body.c -- models of message bodies: lists of 16-bit fields coded as deltas (points,
 * segments, rectangles, arcs) and image rows under PNG-style filters (PutImage).
 * Both directions here, side by side, so they stay mirror images. Hot on drawing traffic. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/encode.h>

#include "xcodec/xcodec_private.h"

/* Image geometry from PutImage's fixed part (offsets as without BIG-REQUESTS):
 * rows of equal stride when the body divides by the height, else one row. */
static void image_geom(const uint8_t *fixed, uint32_t blen, bool msb, uint32_t *rows, uint32_t *stride,
                       unsigned *psz)
{
    uint16_t h = ld16(fixed + 14, msb);
    uint8_t depth = fixed[21];
    *psz = depth > 16 ? 4 : depth > 8 ? 2 : 1;
    *rows = h && blen % h == 0 ? h : 1;
    *stride = blen / *rows;
}

static bool glyphs_argb(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, uint32_t *nglyphs);

bool xc_body_fits(const struct xc_body_model *bm, const uint8_t *fixed, uint32_t blen, bool msb)
{
    if (bm->kind == XC_BM_ELEMS || bm->kind == XC_BM_TRAPS)
        return blen % (2u * bm->words) == 0;
    if (bm->kind == XC_BM_REPLY)
        return blen > XC_BIG_BODY; /* always with its code's size */
    if (bm->kind == XC_BM_ITEMS)
        return blen % 4 == 0;
    if (bm->kind == XC_BM_GLYPHS) {
        uint32_t n;
        return glyphs_argb(fixed, NULL, blen, msb, &n);
    }
    return bm->kind == XC_BM_IMAGE && blen > 0;
}

uint32_t xc_body_min_code(const struct xc_body_model *bm, uint32_t blen)
{
    /* Bounds what a decoder allocates per byte of input: an element or pixel row takes at
     * least a byte per 12 of output, a 1-bit palette image one per 32 (rows padded to a byte);
     * runs of glyphs and the pixel coder go much further. Images up to the size the list of
     * recent ones keeps have no bound: one drawn again is 2 bytes, as SAME is 1. */
    if (bm->kind == XC_BM_IMAGE)
        return blen <= XC_IMGS_MAX ? 0 : blen / 256;
    if (bm->kind == XC_BM_GLYPHS)
        return blen / XC_PIX_MIN_DIV; /* the pixel coder: flat glyphs cost little */
    return bm->kind == XC_BM_REPLY ? blen / 4096 : blen / 12;
}

static int put_zz(struct buf *out, uint16_t d)
{
    return buf_put_varint(out, xc_zz16(d));
}

/* prev starts as the reference's last element, else zeros. */
static void elems_start(const struct xc_body_model *bm, const uint8_t *rlast, bool msb, uint16_t *prev)
{
    for (unsigned f = 0; f < bm->words; f++)
        prev[f] = rlast ? ld16(rlast + 2 * f, msb) : 0;
}

static int elems_encode(const struct xc_body_model *bm, const uint8_t *body, uint32_t blen, bool msb,
                        const uint8_t *rlast, struct buf *out)
{
    uint16_t prev[XC_BM_WORDS] = { 0 }, cur[XC_BM_WORDS] = { 0 };
    unsigned w = bm->words;
    elems_start(bm, rlast, msb, prev);
    if (buf_reserve(out, blen + blen / 2) < 0)
        return -ENOMEM;
    for (uint32_t at = 0; at + 2u * w <= blen; at += 2u * w) {
        for (unsigned f = 0; f < w; f++) {
            cur[f] = ld16(body + at + 2 * f, msb);
            uint16_t base = bm->base[f] == 0xff ? prev[f] : cur[bm->base[f]];
            if (put_zz(out, (uint16_t)(cur[f] - base)) < 0)
                return -ENOMEM;
        }
        memcpy(prev, cur, sizeof prev);
    }
    return 0;
}

static int elems_decode(const struct xc_body_model *bm, uint8_t *dst, uint32_t blen, bool msb,
                        const uint8_t *rlast, struct rd *r)
{
    uint16_t prev[XC_BM_WORDS] = { 0 }, cur[XC_BM_WORDS] = { 0 };
    unsigned w = bm->words;
    elems_start(bm, rlast, msb, prev);
    if (blen % (2u * w))
        return -EBADMSG;
    for (uint32_t at = 0; at < blen; at += 2u * w) {
        for (unsigned f = 0; f < w; f++) {
            uint64_t v;
            int rc = rd_varint(r, &v);
            if (rc < 0)
                return rc;
            if (v > 0xffff)
                return -EBADMSG;
            uint16_t base = bm->base[f] == 0xff ? prev[f] : cur[bm->base[f]];
            cur[f] = (uint16_t)(base + xc_unzz16(v));
            st16(dst + at + 2 * f, cur[f], msb);
        }
        memcpy(prev, cur, sizeof prev);
    }
    return 0;
}

/* Trapezoids from a polygon (xclock's hands and ticks, cairo's paths) repeat the
 * polygon's few vertex coordinates in every field: each 32-bit value is then the index of
 * an equal one among the last TRAP_TABLE new values of the body, or TRAP_NEW and its 4
 * bytes as sent (it enters the table, replacing the oldest when full). Evenly stepped
 * trapezoids (x11perf's grids) suit the field deltas better: a sub-model byte picks.
 * Sub-model 2 (XC_TRAPS_RECENT) is the table with two changes for long chains of
 * trapezoids (an ellipse cut in slices): an index counts back from the newest value, so
 * every slice repeats the same tags for zstd; and a new right p2 (x or y) may be coded
 * against the left edge's mirror (symmetric shapes) or a parallel of it (rotated
 * rectangles: xclock's ticks), and any new value as a parallelogram's corner. */
enum { XC_TRAPS_DELTA = 0, XC_TRAPS_TABLE = 1, XC_TRAPS_RECENT = 2 }; /* 3: trapmotion.c */
#define TRAP_TABLE 64
#define TRAP_NEW 255
#define TRAP_MIRROR 254   /* right p2.x against left p1.x + right p1.x - left p2.x (.y alike) */
#define TRAP_PARALLEL 253 /* right p2.x against right p1.x + left p2.x - left p1.x (.y alike) */
#define TRAP_CORNER 252   /* against n1 + n2 - n3, the axis's 3 newest new values: the 4th
                           * corner of a parallelogram (a rectangle turned, in any field) */

/* A new value is coded against the last new one of the same axis (fields 0, 1, 3, 5, 7
 * and 9 of a trapezoid are y, the rest x): a polygon's vertices lie close together. */
#define trap_axis_y xc_trap_axis_y
#define zz32 xc_zz32
#define unzz32 xc_unzz32
#define varint_len xc_varint_len

/* The prediction of tag (TRAP_NEW, TRAP_MIRROR, TRAP_PARALLEL, TRAP_CORNER) for the value
 * at byte at of a body whose earlier values are known, with news[a] the axis' newest new
 * values (newest first, 0 before any); false when the tag does not apply there. */
static bool trap_predict(const uint8_t *body, uint32_t at, bool msb, uint8_t tag, uint32_t (*news)[3],
                         uint32_t *pred)
{
    const uint32_t *n = news[trap_axis_y(at)];
    if (tag == TRAP_NEW || tag == TRAP_CORNER) {
        *pred = tag == TRAP_NEW ? n[0] : n[0] + n[1] - n[2];
        return true;
    }
    if (at % 40 != 32 && at % 40 != 36)
        return false;
    const uint8_t *t = body + at - 32; /* right p2.y: the same with the y values */
    uint32_t l1 = ld32(t + 8, msb), l2 = ld32(t + 16, msb), r1 = ld32(t + 24, msb);
    *pred = tag == TRAP_MIRROR ? l1 + r1 - l2 : r1 + l2 - l1;
    return true;
}

/* The table's entry for tag: its index (sub-model 1) or its age (2). */
static unsigned trap_slot(bool recent, unsigned tag, unsigned next)
{
    return recent ? (next + TRAP_TABLE - 1 - tag) % TRAP_TABLE : tag;
}

static void trap_new_value(uint32_t (*news)[3], uint32_t at, uint32_t x)
{
    uint32_t *n = news[trap_axis_y(at)];
    n[2] = n[1], n[1] = n[0], n[0] = x;
}

static int traps_table_encode(const uint8_t *body, uint32_t blen, bool msb, bool recent, struct buf *out)
{
    uint32_t table[TRAP_TABLE], news[2][3] = { { 0 } };
    unsigned ntab = 0, next = 0;
    for (uint32_t at = 0; at + 4 <= blen; at += 4) {
        uint32_t v;
        memcpy(&v, body + at, 4);
        unsigned k = 0;
        while (k < ntab && table[trap_slot(recent, k, next)] != v)
            k++;
        uint8_t tag = k < ntab ? (uint8_t)k : TRAP_NEW;
        uint32_t x = ld32(body + at, msb), pred = news[trap_axis_y(at)][0];
        bool fresh = tag == TRAP_NEW;
        for (uint8_t alt = TRAP_CORNER; recent && fresh && alt < TRAP_NEW; alt++) {
            uint32_t p;
            if (trap_predict(body, at, msb, alt, news, &p) && varint_len(zz32(x - p)) < varint_len(zz32(x - pred)))
                tag = alt, pred = p;
        }
        if (tag < TRAP_TABLE) {
            if (buf_append(out, &tag, 1) < 0)
                return -ENOMEM;
            continue;
        }
        if (buf_append(out, &tag, 1) < 0 || buf_put_varint(out, zz32(x - pred)) < 0)
            return -ENOMEM;
        trap_new_value(news, at, x);
        table[next] = v;
        next = (next + 1) % TRAP_TABLE;
        if (ntab < TRAP_TABLE)
            ntab++;
    }
    return 0;
}

static int traps_table_decode(uint8_t *dst, uint32_t blen, bool msb, bool recent, struct rd *r)
{
    uint32_t table[TRAP_TABLE], news[2][3] = { { 0 } };
    unsigned ntab = 0, next = 0;
    for (uint32_t at = 0; at + 4 <= blen; at += 4) {
        uint8_t tag;
        int rc = rd_u8(r, &tag);
        if (rc < 0)
            return rc;
        if (tag < ntab) {
            memcpy(dst + at, &table[trap_slot(recent, tag, next)], 4);
            continue;
        }
        uint32_t pred;
        if ((tag != TRAP_NEW && !recent) || tag < TRAP_CORNER || !trap_predict(dst, at, msb, tag, news, &pred))
            return -EBADMSG;
        uint64_t d;
        if ((rc = rd_varint(r, &d)) < 0)
            return rc;
        if (d > 0xffffffffu)
            return -EBADMSG;
        uint32_t x = pred + unzz32((uint32_t)d);
        trap_new_value(news, at, x);
        st32(dst + at, x, msb);
        memcpy(&table[next], dst + at, 4);
        next = (next + 1) % TRAP_TABLE;
        if (ntab < TRAP_TABLE)
            ntab++;
    }
    return 0;
}

/* Appends sub-model sub's code to alt and keeps it in out (from mark) when shorter, or as
 * short (the table forms, whose tags zstd finds again). */
static int traps_try(const uint8_t *body, uint32_t blen, bool msb, uint8_t sub, struct buf *out, size_t mark)
{
    struct buf alt = { 0 };
    int rc = 0;
    if (buf_append(&alt, &sub, 1) < 0 ||
        traps_table_encode(body, blen, msb, sub == XC_TRAPS_RECENT, &alt) < 0)
        rc = -ENOMEM;
    else if (alt.len <= out->len - mark) {
        out->len = mark;
        rc = buf_append(out, buf_head(&alt), alt.len);
    }
    buf_free(&alt);
    return rc;
}

static int traps_encode(struct xc_model *m, const struct xc_body_model *bm,
                        const uint8_t *body, uint32_t blen, bool msb, const uint8_t *rlast, struct buf *out)
{
    size_t mark = out->len;
    uint8_t sub = XC_TRAPS_DELTA;
    if (buf_append(out, &sub, 1) < 0)
        return -ENOMEM;
    int rc = elems_encode(bm, body, blen, msb, rlast, out);
    if (rc == 0)
        rc = traps_try(body, blen, msb, XC_TRAPS_TABLE, out, mark);
    if (rc == 0)
        rc = traps_try(body, blen, msb, XC_TRAPS_RECENT, out, mark);
    if (rc == 0)
        rc = xc_traps_motion_encode(m, body, blen, msb, out, mark,
                                    blen > XC_BIG_BODY ? xc_body_min_code(bm, blen) : 0);
    return rc;
}

static int traps_decode(const struct xc_model *m, const struct xc_body_model *bm,
                        uint8_t *dst, uint32_t blen, bool msb, const uint8_t *rlast, struct rd *r)
{
    uint8_t sub;
    int rc = rd_u8(r, &sub);
    if (rc < 0)
        return rc;
    if (sub == XC_TRAPS_DELTA)
        return elems_decode(bm, dst, blen, msb, rlast, r);
    if (sub == XC_TRAPS_TABLE || sub == XC_TRAPS_RECENT)
        return traps_table_decode(dst, blen, msb, sub == XC_TRAPS_RECENT, r);
    if (sub == XC_TRAPS_MOTION)
        return xc_traps_motion_decode(m, dst, blen, msb, r);
    return -EBADMSG;
}

/* CompositeGlyphs items: len:u8, 3 pad bytes, dx, dy (16 bits), then len glyph ids of
 * size bytes, padded to 4; len 255 is a glyphset switch (4 bytes, no glyphs). Coded: len
 * and pad as they are; dx, dy against the previous item's (the reference's first item's
 * before the first); each id against the previous id (the reference's first id before
 * the first): lines of text drawn one after another differ by a constant step. */
struct items_prev {
    uint16_t dx, dy;
    uint32_t id;
};

static void items_start(const uint8_t *rfirst, unsigned size, bool msb, struct items_prev *pv)
{
    *pv = (struct items_prev){ 0, 0, 0 };
    if (!rfirst)
        return;
    pv->dx = ld16(rfirst + 4, msb);
    pv->dy = ld16(rfirst + 6, msb);
    if (rfirst[0] != 0 && rfirst[0] != 255)
        pv->id = size == 1 ? rfirst[8] : size == 2 ? ld16(rfirst + 8, msb) : ld32(rfirst + 8, msb);
}

/* Bytes of the item at p (at least 8 there): 0 when it does not fit in left. */
static uint32_t item_bytes(const uint8_t *p, uint32_t left, unsigned size)
{
    uint32_t n = p[0] == 255 ? 12 : 8 + ((p[0] * size + 3u) & ~3u);
    return n <= left ? n : 0;
}

static bool items_fit(const uint8_t *body, uint32_t blen, unsigned size)
{
    for (uint32_t at = 0, n; at < blen; at += n)
        if (blen - at < 8 || !(n = item_bytes(body + at, blen - at, size)))
            return false;
    return true;
}

static uint32_t id_at(const uint8_t *p, unsigned size, bool msb)
{
    return size == 1 ? p[0] : size == 2 ? ld16(p, msb) : ld32(p, msb);
}

static void id_store(uint8_t *p, uint32_t v, unsigned size, bool msb)
{
    if (size == 1)
        p[0] = (uint8_t)v;
    else if (size == 2)
        st16(p, (uint16_t)v, msb);
    else
        st32(p, v, msb);
}

static int items_encode(const uint8_t *body, uint32_t blen, unsigned size, bool msb, const uint8_t *rfirst,
                        struct buf *out)
{
    if (!items_fit(body, blen, size))
        return 1;
    struct items_prev pv;
    items_start(rfirst, size, msb, &pv);
    uint32_t mask = size == 4 ? 0xffffffffu : (1u << 8 * size) - 1;
    for (uint32_t at = 0, n; at < blen; at += n) {
        const uint8_t *p = body + at;
        n = item_bytes(p, blen - at, size);
        uint16_t dx = ld16(p + 4, msb), dy = ld16(p + 6, msb);
        if (buf_append(out, p, 4) < 0 || put_zz(out, (uint16_t)(dx - pv.dx)) < 0 ||
            put_zz(out, (uint16_t)(dy - pv.dy)) < 0)
            return -ENOMEM;
        pv.dx = dx, pv.dy = dy;
        uint32_t ids = p[0] == 255 ? 0 : p[0], k;
        for (k = 0; k < ids; k++) {
            uint32_t id = id_at(p + 8 + k * size, size, msb), d = (id - pv.id) & mask;
            if (size < 4 && d > mask / 2)
                d |= ~mask; /* negative: sign-extend, so that the zigzag is small */
            if (buf_put_varint(out, zz32(d)) < 0)
                return -ENOMEM;
            pv.id = id;
        }
        /* the rest: a glyphset id, or padding */
        if (buf_append(out, p + 8 + ids * size, n - 8 - ids * size) < 0)
            return -ENOMEM;
    }
    return 0;
}

static int items_decode(uint8_t *dst, uint32_t blen, unsigned size, bool msb, const uint8_t *rfirst, struct rd *r)
{
    struct items_prev pv;
    items_start(rfirst, size, msb, &pv);
    uint32_t mask = size == 4 ? 0xffffffffu : (1u << 8 * size) - 1;
    for (uint32_t at = 0, n; at < blen; at += n) {
        uint8_t *p = dst + at;
        const uint8_t *src;
        uint64_t zdx, zdy;
        int rc;
        if (blen - at < 8)
            return -EBADMSG;
        if ((rc = rd_bytes(r, &src, 4)) < 0 || (rc = rd_varint(r, &zdx)) < 0 || (rc = rd_varint(r, &zdy)) < 0)
            return rc;
        if (zdx > 0xffff || zdy > 0xffff)
            return -EBADMSG;
        memcpy(p, src, 4);
        if (!(n = item_bytes(p, blen - at, size)))
            return -EBADMSG;
        pv.dx = (uint16_t)(pv.dx + xc_unzz16(zdx));
        pv.dy = (uint16_t)(pv.dy + xc_unzz16(zdy));
        st16(p + 4, pv.dx, msb);
        st16(p + 6, pv.dy, msb);
        uint32_t ids = p[0] == 255 ? 0 : p[0];
        for (uint32_t k = 0; k < ids; k++) {
            uint64_t z;
            if ((rc = rd_varint(r, &z)) < 0)
                return rc;
            if (z > 0xffffffffu)
                return -EBADMSG;
            pv.id = (pv.id + unzz32((uint32_t)z)) & mask;
            id_store(p + 8 + k * size, pv.id, size, msb);
        }
        if ((rc = rd_bytes(r, &src, n - 8 - ids * size)) < 0)
            return rc;
        memcpy(p + 8 + ids * size, src, n - 8 - ids * size);
    }
    return 0;
}

static int palette_encode(const uint8_t *body, uint32_t rows, uint32_t stride, unsigned psz, struct buf *out);
static int palette_decode(uint8_t *dst, uint32_t rows, uint32_t stride, unsigned psz, struct rd *r);

/* The pixel coder's statistics (glyphs and images share them), made on first use. */
static struct xc_pix *pix_of(struct xc_model *m)
{
    if (!m->pix)
        m->pix = xc_pix_new();
    return m->pix;
}

/* Appends the pixel code of im, at least min bytes from mark (the code ends with zero
 * bytes a decoder would take as read anyway). Always used once made: the statistics
 * have learnt from it. */
static int pix_put(struct xc_model *m, const struct xc_pix_image *im, const uint8_t *p, struct buf *out,
                   size_t mark, uint32_t min)
{
    struct xc_pix *x = pix_of(m);
    if (!x)
        return -ENOMEM;
    size_t used = out->len - mark;
    return xc_pix_encode(x, im, p, min > used ? min - used : 0, out);
}

/* The pixel coder's view of a PutImage: 32-bit pixels (depth above 16, 4 bytes each,
 * rows unpadded) or a plane of bytes (depth 8 or less: rows of B / h bytes, the first
 * width of them samples). false when neither fits. */
#define PIX_MIN_IMAGE 64           /* smaller images: the filters do as well */
#define PIX_MAX_IMAGE (16u << 10)  /* larger ones (photos, screens): its time per byte does not pay,
                                    * and at about 1.5 us a byte a side, coding 64 KiB holds the
                                    * event loop 0.1 s: input waited 148 ms more at p99 under an
                                    * upload of 64 KiB images (bench/latency), 52 ms at 16 KiB */
static bool image_pix(const uint8_t *fixed, uint32_t blen, bool msb, struct xc_pix_image *im)
{
    uint16_t w = ld16(fixed + 12, msb), h = ld16(fixed + 14, msb);
    uint8_t depth = fixed[21];
    *im = (struct xc_pix_image){ .msb = msb, .blen = blen, .w = w, .h = h };
    if (depth > 16)
        im->kind = XC_PIX_ARGB;
    else if (depth <= 8 && h && blen % h == 0)
        im->kind = XC_PIX_PLANE, im->stride = blen / h;
    else
        return false;
    return blen >= PIX_MIN_IMAGE && blen <= PIX_MAX_IMAGE && xc_pix_shape_ok(im);
}

/* A bitmap (depth 1, any format: rows of B / h bytes) for the pixel coder's bits, filter
 * byte 6: icons and shape masks, which the byte filters and zstd barely shrink. */
#define XC_FILTER_BITS 6
#define XC_FILTER_PIX 4 /* the pixel coder on bytes or 32-bit pixels (image_pix) */
#define PIX_FRESH 8 /* added to a pixel code's marker: new, though equal to a cached one's (pixcache) */
#define BITS_MAX_IMAGE (16u << 10) /* larger bitmaps (stipples, screens of text): the filters */
static bool image_bits(const struct xc_model *m, const uint8_t *fixed, uint32_t blen, bool msb,
                       struct xc_pix_image *im)
{
    uint16_t h = ld16(fixed + 14, msb);
    if (fixed[21] != 1 || !h || blen % h || blen < PIX_MIN_IMAGE || blen > BITS_MAX_IMAGE)
        return false;
    *im = (struct xc_pix_image){ .kind = XC_PIX_BITS, .msb = msb, .blen = blen, .h = h, .stride = blen / h };
    /* The newest recent image, when as long, is most likely the bitmap this one goes with
     * (an icon, then its mask): its samples join the contexts. */
    if (m->imgs && m->imgs->n && m->imgs->e[0].len == blen)
        im->comp = m->imgs->e[0].p;
    return xc_pix_shape_ok(im);
}

/* One filter byte per row (0 none, 1 left, 2 up), chosen by the smallest sum of
 * residual magnitudes, as PNG encoders do; then the residuals. Or the pixel coder
 * (filter byte 4), or a palette (3). */
static int image_encode_new(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                            struct buf *out)
{
    uint32_t rows, stride;
    unsigned psz;
    image_geom(fixed, blen, msb, &rows, &stride, &psz);
    size_t mark = out->len;
    struct xc_pix_image im;
    if (image_bits(m, fixed, blen, msb, &im)) {
        uint8_t f6 = XC_FILTER_BITS;
        if (buf_append(out, &f6, 1) < 0)
            return -ENOMEM;
        return pix_put(m, &im, body, out, mark, 0);
    }
    /* Few colours: a palette, marked by filter 3 in place of the first row's. */
    uint8_t f3 = 3;
    if (buf_append(out, &f3, 1) < 0)
        return -ENOMEM;
    int rc = palette_encode(body, rows, stride, psz, out);
    if (rc != 1)
        return rc;
    out->len = mark;
    if ((rc = xc_bigimg_encode(m, fixed, body, blen, msb, out)) != 1)
        return rc; /* a large image of 32-bit pixels: lossless WebP */
    /* Else the pixel coder, when the image has a shape it knows. */
    if (image_pix(fixed, blen, msb, &im)) {
        uint8_t f4 = XC_FILTER_PIX;
        if (buf_append(out, &f4, 1) < 0)
            return -ENOMEM;
        return pix_put(m, &im, body, out, mark, 0);
    }
    out->len = mark;
    uint8_t *o = buf_append_space(out, (size_t)blen + rows);
    if (!o)
        return -ENOMEM;
    for (uint32_t y = 0; y < rows; y++) {
        const uint8_t *row = body + (size_t)y * stride, *up = y ? row - stride : NULL;
        uint32_t cost_none = 0, cost_sub = 0, cost_up = up ? 0 : UINT32_MAX;
        for (uint32_t i = 0; i < stride; i++) {
            cost_none += (uint32_t)abs((int8_t)row[i]);
            cost_sub += (uint32_t)abs((int8_t)(row[i] - (i >= psz ? row[i - psz] : 0)));
            if (up)
                cost_up += (uint32_t)abs((int8_t)(row[i] - up[i]));
        }
        uint8_t f = cost_up < cost_sub && cost_up < cost_none ? 2 : cost_sub < cost_none ? 1 : 0;
        *o++ = f;
        for (uint32_t i = 0; i < stride; i++)
            *o++ = (uint8_t)(row[i] - (f == 1 ? (i >= psz ? row[i - psz] : 0) : f == 2 ? up[i] : 0));
    }
    return 0;
}

static int image_decode_new(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb,
                            struct rd *r)
{
    uint32_t rows, stride;
    unsigned psz;
    image_geom(fixed, blen, msb, &rows, &stride, &psz);
    uint8_t f0 = rd_left(r) > 0 ? r->p[r->pos] : 0xff;
    if (f0 == XC_FILTER_BITS + PIX_FRESH || f0 == XC_FILTER_PIX + PIX_FRESH)
        f0 -= PIX_FRESH;
    if (f0 == XC_FILTER_BITS) {
        struct xc_pix_image im;
        struct xc_pix *x = pix_of(m);
        if (!image_bits(m, fixed, blen, msb, &im))
            return -EBADMSG;
        if (!x)
            return -ENOMEM;
        r->pos++;
        return xc_pix_decode(x, &im, dst, r);
    }
    if (f0 == XC_FILTER_PIX) {
        struct xc_pix_image im;
        struct xc_pix *x = pix_of(m);
        if (!image_pix(fixed, blen, msb, &im))
            return -EBADMSG;
        if (!x)
            return -ENOMEM;
        r->pos++;
        return xc_pix_decode(x, &im, dst, r);
    }
    if (rd_left(r) > 0 && r->p[r->pos] == 3) {
        r->pos++;
        return palette_decode(dst, rows, stride, psz, r);
    }
    if (f0 == XC_FILTER_WEBPLL) {
        r->pos++;
        return xc_bigimg_decode(m, fixed, dst, blen, msb, r);
    }
    for (uint32_t y = 0; y < rows; y++) {
        uint8_t f;
        const uint8_t *src;
        int rc = rd_u8(r, &f);
        if (rc == 0)
            rc = rd_bytes(r, &src, stride);
        if (rc < 0)
            return rc;
        if (f > 2 || (f == 2 && y == 0))
            return -EBADMSG;
        uint8_t *row = dst + (size_t)y * stride;
        for (uint32_t i = 0; i < stride; i++)
            row[i] = (uint8_t)(src[i] + (f == 1 ? (i >= psz ? row[i - psz] : 0) : f == 2 ? (row - stride)[i] : 0));
    }
    return 0;
}

/* Bodies the pixel coder coded in the last session (pixcache.c) are sent again as the very
 * record that carried them then, marker (sub-model or filter byte) and code: the bytes of
 * the last session's stream, which zstd's cached dictionary holds. A receiver takes a
 * pixel code it holds as a cached body (by the code: it runs no model); a sender whose
 * new code happens to be one of those marks it as new (PIX_FRESH) instead. */

/* The extent of a pixel code at r (sized when the body is small, else the rest); r is left
 * where it was. 0, -EAGAIN or -EBADMSG. */
static int pix_code_extent(const struct rd *r, uint32_t blen, size_t *n)
{
    struct rd t = *r;
    uint64_t k = rd_left(&t);
    int rc = blen <= XC_BIG_BODY ? rd_varint(&t, &k) : 0;
    if (rc == 0 && k > XC_PIXCACHE_CODE_MAX((uint64_t)blen))
        return -EBADMSG;
    if (rc == 0 && rd_left(&t) < k)
        rc = -EAGAIN;
    *n = t.pos - r->pos + (size_t)k;
    return rc;
}

/* At r, after a marker at r->pos - 1: when marker and code are a cached body's of blen
 * bytes, the body in dst, r past the code, and 1; else 0 (r unmoved). */
static int take_cached(struct xc_model *m, struct rd *r, uint8_t *dst, uint32_t blen)
{
    size_t n;
    const uint8_t *body;
    if (!m->pc)
        return 0;
    int rc = pix_code_extent(r, blen, &n);
    if (rc < 0)
        return rc;
    if (xc_pixcache_get(m->pc, r->p + r->pos - 1, (uint32_t)n + 1, blen, &body) < 0)
        return 0;
    memcpy(dst, body, blen);
    r->pos += n;
    return 1;
}

/* After coding a new body from mark (its marker) to the end of out: marks it as new when
 * it equals a cached body's code, else keeps it for the next session. */
static int note_new_code(struct xc_model *m, const uint8_t *body, uint32_t blen, struct buf *out, size_t mark)
{
    const uint8_t *p;
    uint8_t *code = (uint8_t *)buf_head(out) + mark;
    uint32_t n = (uint32_t)(out->len - mark);
    if (m->pc && xc_pixcache_get_quiet(m->pc, code, n, blen, &p) == 0) {
        code[0] += PIX_FRESH;
        return 0;
    }
    return xc_pixcache_note(m->pc, body, blen, code, n);
}

/* Photo-like images, when the sender was asked for lossy coding (xenc_set_lossy): filter
 * byte 8, the value of every pixel's fourth byte, the WebP's size and the WebP of the
 * pixels (lossy, at the sender's quality), then zero bytes up to the code's least size.
 * Only 32-bit LSB ZPixmap images over 16 KiB (the pixel coder's limit) with many colours:
 * icons, text and line art stay exact. */
#define XC_FILTER_LOSSY 8
#define LOSSY_MIN_SIDE 16
#define LOSSY_MIN_COLOURS 512 /* distinct pixels among the first 4096: a photo, a gradient */

static bool image_lossy_fits(const uint8_t *fixed, uint32_t blen, bool msb, uint32_t *w, uint32_t *h)
{
    *w = ld16(fixed + 12, msb), *h = ld16(fixed + 14, msb);
    return !msb && fixed[1] == 2 && fixed[20] == 0 && fixed[21] == 24 && *w >= LOSSY_MIN_SIDE &&
           *h >= LOSSY_MIN_SIDE && blen > PIX_MAX_IMAGE && (uint64_t)*w * *h * 4 == blen;
}

static bool photo_like(const uint8_t *body, uint32_t n_px)
{
    enum { SLOTS = 8192 };
    uint32_t *seen = calloc(SLOTS, sizeof *seen), distinct = 0;
    if (!seen)
        return false;
    for (uint32_t i = 0; i < n_px && i < 4096 && distinct < LOSSY_MIN_COLOURS; i++) {
        uint32_t v = (ld32(body + 4 * (size_t)i, false) & 0xffffff) + 1, k = (v * 2654435761u) >> 19;
        while (seen[k] && seen[k] != v)
            k = (k + 1) & (SLOTS - 1);
        if (!seen[k])
            seen[k] = v, distinct++;
    }
    free(seen);
    return distinct >= LOSSY_MIN_COLOURS;
}

/* 1 when the image is not for lossy coding, 0 when coded, or -ENOMEM. */
static int lossy_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                        struct buf *out)
{
    uint32_t w, h;
    if (!m->lossy_q || !image_lossy_fits(fixed, blen, msb, &w, &h) || !photo_like(body, w * h))
        return 1;
    uint8_t fourth = body[3];
    for (uint32_t i = 7; i < blen; i += 4)
        if (body[i] != fourth)
            return 1;
    uint8_t *bgr = malloc((size_t)w * h * 3), *webp = NULL;
    if (!bgr)
        return -ENOMEM;
    for (size_t i = 0; i < (size_t)w * h; i++)
        memcpy(bgr + 3 * i, body + 4 * i, 3);
    size_t n = WebPEncodeBGR(bgr, (int)w, (int)h, (int)(3 * w), (float)m->lossy_q, &webp);
    free(bgr);
    if (!n || n >= blen / 2) { /* failed, or no better than lossless would be */
        WebPFree(webp);
        return 1;
    }
    size_t mark = out->len;
    uint8_t head[2] = { XC_FILTER_LOSSY, fourth };
    int rc = buf_append(out, head, 2) < 0 || buf_put_varint(out, n) < 0 || buf_append(out, webp, n) < 0 ? -ENOMEM : 0;
    WebPFree(webp);
    while (rc == 0 && blen > XC_IMGS_MAX && out->len - mark < blen / 256)
        rc = buf_append(out, "", 1);
    m->lossy_last = rc == 0;
    return rc;
}

static int lossy_decode(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint32_t w, h;
    uint8_t fourth;
    uint64_t n;
    const uint8_t *webp;
    int rc = rd_u8(r, &fourth);
    if (rc == 0)
        rc = rd_varint(r, &n);
    if (rc == 0 && n > blen)
        rc = -EBADMSG;
    if (rc == 0)
        rc = rd_bytes(r, &webp, n);
    if (rc < 0)
        return rc;
    int ww, hh;
    if (!image_lossy_fits(fixed, blen, msb, &w, &h) || !WebPGetInfo(webp, n, &ww, &hh) || (uint32_t)ww != w ||
        (uint32_t)hh != h)
        return -EBADMSG;
    uint8_t *bgr = malloc((size_t)w * h * 3);
    if (!bgr)
        return -ENOMEM;
    if (!WebPDecodeBGRInto(webp, n, bgr, (size_t)w * h * 3, (int)(3 * w))) {
        free(bgr);
        return -EBADMSG;
    }
    for (size_t i = 0; i < (size_t)w * h; i++) {
        memcpy(dst + 4 * i, bgr + 3 * i, 3);
        dst[4 * i + 3] = fourth;
    }
    free(bgr);
    for (uint8_t z = 0; blen > XC_BIG_BODY && rd_left(r) && !z;) /* the padding to the least size */
        if (rd_u8(r, &z) < 0 || z)
            return -EBADMSG;
    m->lossy_last = true;
    return 0;
}

/* An image among the latest ones is filter byte 5 and its index there; every image of a
 * MODEL body then goes to the front of that list. One of the last session is filter 7. */
#define XC_FILTER_AGAIN 5
static int image_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                        struct buf *out)
{
    if (!m->imgs && !(m->imgs = calloc(1, sizeof *m->imgs)))
        return -ENOMEM;
    uint64_t hash = blen >= XC_IMGS_MIN && blen <= XC_IMGS_MAX ? xc_imgs_hash(body, blen) : 0;
    int found = hash ? xc_imgs_find(m->imgs, body, blen, hash) : -1, rc = 0;
    const uint8_t *code;
    uint32_t code_len;
    size_t mark = out->len;
    if (found >= 0) {
        uint8_t again[2] = { XC_FILTER_AGAIN, (uint8_t)found };
        rc = buf_append(out, again, 2);
    } else if (xc_pixcache_find(m->pc, body, blen, &code, &code_len) == 0) {
        rc = buf_append(out, code, code_len);
    } else if ((rc = lossy_encode(m, fixed, body, blen, msb, out)) <= 0) {
        return rc; /* not kept among the recent images either */
    } else if ((rc = image_encode_new(m, fixed, body, blen, msb, out)) == 0 && out->len > mark &&
               (buf_head(out)[mark] == XC_FILTER_PIX || buf_head(out)[mark] == XC_FILTER_BITS))
        rc = note_new_code(m, body, blen, out, mark);
    return rc < 0 ? rc : xc_imgs_push(m->imgs, body, blen, found, hash);
}

static int image_decode(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb,
                        struct rd *r)
{
    if (!m->imgs && !(m->imgs = calloc(1, sizeof *m->imgs)))
        return -ENOMEM;
    int found = -1, rc = 0;
    if (rd_left(r) > 0 && r->p[r->pos] == XC_FILTER_AGAIN) {
        uint8_t code[2];
        const uint8_t *p;
        if ((rc = rd_bytes(r, &p, 2)) < 0)
            return rc;
        memcpy(code, p, 2);
        if (code[1] >= m->imgs->n || m->imgs->e[code[1]].len != blen)
            return -EBADMSG;
        found = code[1];
        memcpy(dst, m->imgs->e[found].p, blen);
    } else if (rd_left(r) > 0 && r->p[r->pos] == XC_FILTER_LOSSY) {
        r->pos++;
        return lossy_decode(m, fixed, dst, blen, msb, r);
    } else {
        size_t at = r->pos;
        uint8_t f = rd_left(r) > 0 ? r->p[at] : 0;
        bool pix = f == XC_FILTER_PIX || f == XC_FILTER_BITS;
        if (pix) {
            r->pos++;
            rc = take_cached(m, r, dst, blen);
            r->pos -= rc == 0; /* not cached: decoded below */
        }
        if (rc < 0)
            return rc;
        if (rc == 0 && ((rc = image_decode_new(m, fixed, dst, blen, msb, r)) < 0 ||
                        (pix && (rc = xc_pixcache_note(m->pc, dst, blen, r->p + at, (uint32_t)(r->pos - at))) < 0)))
            return rc;
    }
    return xc_imgs_push(m->imgs, dst, blen, found, 0);
}

#define PALETTE_MAX 16     /* distinct pixels: indices of at most 4 bits */

/* Images of few distinct pixels (text, line art, GetImage of them): the palette (each
 * pixel's psz bytes as sent), then each row's pixel indices packed MSB first in 1, 2 or
 * 4 bits, the row padded to a byte. */
static uint32_t px_at(const uint8_t *p, unsigned psz)
{
    uint32_t v = 0;
    memcpy(&v, p, psz);
    return v;
}

static unsigned palette_of(const uint8_t *body, uint32_t blen, unsigned psz, uint32_t *pal)
{
    unsigned n = 0, last = 0;
    for (uint32_t at = 0; at + psz <= blen; at += psz) {
        uint32_t px = px_at(body + at, psz);
        if (n && pal[last] == px)
            continue;
        for (last = 0; last < n && pal[last] != px; last++)
            ;
        if (last == n) {
            if (n == PALETTE_MAX)
                return 0;
            pal[n++] = px;
        }
    }
    return n;
}

static unsigned palette_bits(unsigned n) { return n <= 2 ? 1 : n <= 4 ? 2 : 4; }

/* 0, 1 when more than PALETTE_MAX pixel values (or rows not whole pixels), or -ENOMEM. */
static int palette_encode(const uint8_t *body, uint32_t rows, uint32_t stride, unsigned psz, struct buf *out)
{
    uint32_t pal[PALETTE_MAX];
    unsigned n = stride % psz ? 0 : palette_of(body, rows * stride, psz, pal), bits = palette_bits(n);
    if (!n)
        return 1;
    uint32_t ppr = stride / psz, rowbytes = (uint32_t)(((uint64_t)ppr * bits + 7) / 8);
    uint8_t n1 = (uint8_t)(n - 1);
    if (buf_append(out, &n1, 1) < 0)
        return -ENOMEM;
    uint8_t *o = buf_append_space(out, (size_t)n * psz + (size_t)rows * rowbytes);
    if (!o)
        return -ENOMEM;
    for (unsigned k = 0; k < n; k++, o += psz)
        memcpy(o, &pal[k], psz);
    unsigned last = 0;
    for (uint32_t y = 0; y < rows; y++) {
        const uint8_t *row = body + (size_t)y * stride;
        unsigned acc = 0, nacc = 0;
        for (uint32_t i = 0; i < ppr; i++) {
            uint32_t px = px_at(row + (size_t)i * psz, psz);
            if (pal[last] != px)
                for (last = 0; pal[last] != px; last++)
                    ;
            acc = acc << bits | last;
            if ((nacc += bits) == 8)
                *o++ = (uint8_t)acc, acc = 0, nacc = 0;
        }
        if (nacc)
            *o++ = (uint8_t)(acc << (8 - nacc));
    }
    return 0;
}

static int palette_decode(uint8_t *dst, uint32_t rows, uint32_t stride, unsigned psz, struct rd *r)
{
    uint8_t n1;
    const uint8_t *pal, *idx;
    int rc = rd_u8(r, &n1);
    if (rc < 0)
        return rc;
    unsigned n = n1 + 1u, bits = palette_bits(n);
    if (n > PALETTE_MAX || stride % psz)
        return -EBADMSG;
    uint32_t ppr = stride / psz, rowbytes = (uint32_t)(((uint64_t)ppr * bits + 7) / 8);
    if ((rc = rd_bytes(r, &pal, (size_t)n * psz)) < 0 || (rc = rd_bytes(r, &idx, (size_t)rows * rowbytes)) < 0)
        return rc;
    unsigned per = 8 / bits, maskv = (1u << bits) - 1;
    for (uint32_t y = 0; y < rows; y++, idx += rowbytes) {
        uint8_t *row = dst + (size_t)y * stride;
        for (uint32_t i = 0; i < ppr; i++) {
            unsigned k = idx[i / per] >> (8 - bits * (i % per + 1)) & maskv;
            if (k >= n)
                return -EBADMSG;
            memcpy(row + (size_t)i * psz, pal + (size_t)k * psz, psz);
        }
        if (ppr % per && (idx[ppr / per] & ((1u << (8 - bits * (ppr % per))) - 1)))
            return -EBADMSG; /* unused bits of a row's last byte are zero */
    }
    return 0;
}

/* Replies (the server direction cannot tell which request a reply answers): a sub-model
 * byte, then the code of the first one that fits: font table (fonttab.c), font names
 * (fontnames.c), palette image. */
int xc_reply_encode(const struct xc_fonttabs *ft, const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    size_t mark = out->len;
    uint8_t sub = XC_REPLY_FONTTAB;
    if (buf_append(out, &sub, 1) < 0)
        return -ENOMEM;
    int rc = xc_fonttab_encode(ft, body, blen, msb, out);
    if (rc != 1)
        return rc;
    out->len = mark;
    sub = XC_REPLY_NAMES;
    if (buf_append(out, &sub, 1) < 0)
        return -ENOMEM;
    if ((rc = xc_names_encode(body, blen, out)) != 1)
        return rc;
    out->len = mark;
    if (blen % 4)
        return 1;
    sub = XC_REPLY_PALETTE;
    if (buf_append(out, &sub, 1) < 0)
        return -ENOMEM;
    if ((rc = palette_encode(body, 1, blen, 4, out)) == 1)
        out->len = mark;
    return rc;
}

int xc_reply_decode(const struct xc_fonttabs *ft, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint8_t sub;
    int rc = rd_u8(r, &sub);
    if (rc < 0)
        return rc;
    if (sub == XC_REPLY_PALETTE)
        return blen % 4 ? -EBADMSG : palette_decode(dst, 1, blen, 4, r);
    if (sub == XC_REPLY_NAMES)
        return xc_names_decode(dst, blen, r);
    if (sub == XC_REPLY_FONTTAB)
        return xc_fonttab_decode(ft, dst, blen, msb, r);
    return -EBADMSG;
}

/* AddGlyphs: ids, GLYPHINFOs and images all through the pixel coder (pixel.c), with the
 * images' layout (A8 or 32-bit) a sub-model byte. Whether 32-bit glyphs fit: their
 * sizes add up to the body, with at least one pixel. */
static bool glyphs_argb(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, uint32_t *nglyphs)
{
    uint32_t n = ld32(fixed + 8, msb);
    if ((uint64_t)16 * n > blen)
        return false;
    *nglyphs = n;
    if (!body)
        return (blen - 16 * n) % 4 == 0;
    uint64_t px = 0;
    for (uint32_t g = 0; g < n; g++) {
        const uint8_t *info = body + 4 * (size_t)n + 12 * (size_t)g;
        px += (uint64_t)ld16(info, msb) * ld16(info + 2, msb);
    }
    return px * 4 == blen - 16 * n && px > 0;
}

/* The layout of AddGlyphs images: A8 rows padded to 4 bytes or 32-bit pixels, by which one
 * the GLYPHINFOs' sizes add up to (1-pixel-wide glyphs fit both: either codes them). */
static bool glyphs_a8(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb)
{
    uint32_t n = ld32(fixed + 8, msb);
    uint64_t bytes = 16ull * n;
    for (uint32_t g = 0; g < n && bytes <= blen; g++) {
        const uint8_t *info = body + 4 * (size_t)n + 12 * (size_t)g;
        bytes += (uint64_t)((ld16(info, msb) + 3u) & ~3u) * ld16(info + 2, msb);
    }
    return bytes == blen;
}

enum { XC_GLYPHS_PIX_A8 = 1, XC_GLYPHS_PIX_ARGB = 2 };

static int glyphs_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                         struct buf *out)
{
    uint32_t n = 0;
    bool argb = glyphs_argb(fixed, body, blen, msb, &n);
    if (blen > XC_PIX_MAX_BODY || (!argb && !glyphs_a8(fixed, body, blen, msb)))
        return 1;
    size_t mark = out->len;
    uint32_t min = blen > XC_BIG_BODY ? blen / XC_PIX_MIN_DIV : 0;
    const uint8_t *code;
    uint32_t code_len;
    if (xc_pixcache_find(m->pc, body, blen, &code, &code_len) == 0)
        return buf_append(out, code, code_len); /* at least min, as it was */
    uint8_t sub = argb ? XC_GLYPHS_PIX_ARGB : XC_GLYPHS_PIX_A8;
    if (buf_append(out, &sub, 1) < 0)
        return -ENOMEM;
    struct xc_pix_image im = { argb ? XC_PIX_GLYPHS_ARGB : XC_PIX_GLYPHS_A8, msb, blen, 0, 0, 0, n, NULL };
    int rc = pix_put(m, &im, body, out, mark, min);
    return rc < 0 ? rc : note_new_code(m, body, blen, out, mark);
}

static int glyphs_decode(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb,
                         struct rd *r)
{
    uint32_t n;
    uint8_t sub;
    int rc = rd_u8(r, &sub);
    if (rc < 0)
        return rc;
    if (!glyphs_argb(fixed, NULL, blen, msb, &n))
        return -EBADMSG;
    bool fresh = sub == XC_GLYPHS_PIX_A8 + PIX_FRESH || sub == XC_GLYPHS_PIX_ARGB + PIX_FRESH;
    sub -= fresh ? PIX_FRESH : 0;
    if ((sub != XC_GLYPHS_PIX_A8 && sub != XC_GLYPHS_PIX_ARGB) || blen > XC_PIX_MAX_BODY)
        return -EBADMSG;
    if (!fresh && (rc = take_cached(m, r, dst, blen)) != 0)
        return rc < 0 ? rc : 0;
    struct xc_pix *x = pix_of(m);
    if (!x)
        return -ENOMEM;
    struct xc_pix_image im = { sub == XC_GLYPHS_PIX_ARGB ? XC_PIX_GLYPHS_ARGB : XC_PIX_GLYPHS_A8, msb, blen, 0, 0, 0, n, NULL };
    size_t at = r->pos - 1; /* the marker */
    rc = xc_pix_decode(x, &im, dst, r);
    return rc < 0 || fresh ? rc : xc_pixcache_note(m->pc, dst, blen, r->p + at, (uint32_t)(r->pos - at));
}

int xc_body_encode(struct xc_model *m, const struct xc_body_model *bm, const uint8_t *fixed, const uint8_t *body,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct buf *out)
{
    if (bm->kind == XC_BM_ELEMS)
        return elems_encode(bm, body, blen, msb, rlast, out);
    if (bm->kind == XC_BM_TRAPS)
        return traps_encode(m, bm, body, blen, msb, rlast, out);
    if (bm->kind == XC_BM_ITEMS)
        return items_encode(body, blen, bm->words, msb, rlast, out);
    if (bm->kind == XC_BM_REPLY)
        return xc_reply_encode(NULL, body, blen, msb, out);
    if (bm->kind == XC_BM_GLYPHS)
        return glyphs_encode(m, fixed, body, blen, msb, out);
    return image_encode(m, fixed, body, blen, msb, out);
}

int xc_body_decode(struct xc_model *m, const struct xc_body_model *bm, const uint8_t *fixed, uint8_t *dst,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct rd *r)
{
    if (bm->kind == XC_BM_ELEMS)
        return elems_decode(bm, dst, blen, msb, rlast, r);
    if (bm->kind == XC_BM_TRAPS)
        return traps_decode(m, bm, dst, blen, msb, rlast, r);
    if (bm->kind == XC_BM_ITEMS)
        return items_decode(dst, blen, bm->words, msb, rlast, r);
    if (bm->kind == XC_BM_IMAGE && blen > 0)
        return image_decode(m, fixed, dst, blen, msb, r);
    if (bm->kind == XC_BM_REPLY && blen > XC_BIG_BODY)
        return xc_reply_decode(NULL, dst, blen, msb, r);
    if (bm->kind == XC_BM_GLYPHS)
        return glyphs_decode(m, fixed, dst, blen, msb, r);
    return -EBADMSG;
}
