/* body.c -- models of message bodies: lists of 16-bit fields coded as deltas (points,
 * segments, rectangles, arcs), trapezoids, glyph and id lists, glyph images through the pixel
 * coder, replies' bodies; and the dispatch by body model (xc_body_encode, xc_body_decode),
 * PutImage's to putimage.c. Both directions here, side by side, so they stay mirror images.
 * Hot on drawing traffic. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/encode.h>

#include "xcodec/xcodec_private.h"

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
    if (bm->kind == XC_BM_ICONS)
        return xc_icons_fit(fixed, blen, msb);
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
    if (bm->kind == XC_BM_ICONS)
        return xc_icons_min_code(blen);
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
    if ((rc = xc_palette_encode(body, 1, blen, 4, out)) == 1)
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
        return blen % 4 ? -EBADMSG : xc_palette_decode(dst, 1, blen, 4, r);
    if (sub == XC_REPLY_NAMES)
        return xc_names_decode(dst, blen, r);
    if (sub == XC_REPLY_FONTTAB)
        return xc_fonttab_decode(ft, dst, blen, msb, r);
    return -EBADMSG;
}

/* AddGlyphs: ids, GLYPHINFOs and images all through the pixel coder (pixel.c), with the
 * images' layout (A8 or 32-bit) a sub-model byte. Whether 32-bit glyphs fit: their
 * sizes add up to the body, with at least one pixel. */
/* AddGlyphs' glyph count, from its fixed part (complete whenever there is a body). */
static uint32_t glyph_count(const uint8_t *fixed, bool msb)
{
    struct xp_render_add_glyphs_req v;
    return xp_render_add_glyphs_req_view(fixed, XP_RENDER_ADD_GLYPHS_REQ_SIZE, msb, &v) ? v.glyphs_len : 0;
}

/* The size of glyph g of n in an AddGlyphs body: its GLYPHINFO, after the n ids. */
static struct xp_render_glyphinfo glyph_info(const uint8_t *body, uint32_t n, uint32_t g, bool msb)
{
    struct xp_render_glyphinfo v;
    xp_render_glyphinfo_view(body + 4 * (size_t)n + XP_RENDER_GLYPHINFO_SIZE * (size_t)g, XP_RENDER_GLYPHINFO_SIZE, msb, &v);
    return v;
}

static bool glyphs_argb(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, uint32_t *nglyphs)
{
    uint32_t n = glyph_count(fixed, msb);
    if ((uint64_t)16 * n > blen)
        return false;
    *nglyphs = n;
    if (!body)
        return (blen - 16 * n) % 4 == 0;
    uint64_t px = 0;
    for (uint32_t g = 0; g < n; g++) {
        struct xp_render_glyphinfo info = glyph_info(body, n, g, msb);
        px += (uint64_t)info.width * info.height;
    }
    return px * 4 == blen - 16 * n && px > 0;
}

/* The layout of AddGlyphs images: A8 rows padded to 4 bytes or 32-bit pixels, by which one
 * the GLYPHINFOs' sizes add up to (1-pixel-wide glyphs fit both: either codes them). */
static bool glyphs_a8(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb)
{
    uint32_t n = glyph_count(fixed, msb);
    uint64_t bytes = 16ull * n;
    for (uint32_t g = 0; g < n && bytes <= blen; g++) {
        struct xp_render_glyphinfo info = glyph_info(body, n, g, msb);
        bytes += (uint64_t)((info.width + 3u) & ~3u) * info.height;
    }
    return bytes == blen;
}

enum { XC_GLYPHS_PIX_A8 = 1, XC_GLYPHS_PIX_ARGB = 2, XC_GLYPHS_CACHED = 3 /* a cached body by its index */ };

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
    uint32_t code_len, index;
    if (xc_pixcache_find(m->pc, body, blen, &code, &code_len, &index) == 0) {
        if (code_len < XC_PIXCACHE_REF_MIN)
            return buf_append(out, code, code_len); /* at least min, as it was */
        int rc = xc_pix_put_ref(out, XC_GLYPHS_CACHED, index);
        while (rc == 0 && out->len - mark < min) /* zero bytes up to the code's least size */
            rc = buf_append(out, "", 1);
        return rc;
    }
    uint8_t sub = argb ? XC_GLYPHS_PIX_ARGB : XC_GLYPHS_PIX_A8;
    if (buf_append(out, &sub, 1) < 0)
        return -ENOMEM;
    struct xc_pix_image im = { argb ? XC_PIX_GLYPHS_ARGB : XC_PIX_GLYPHS_A8, msb, blen, 0, 0, 0, n, NULL };
    int rc = xc_pix_put(m, &im, body, out, mark, min);
    return rc < 0 ? rc : xc_pix_note_new_code(m, body, blen, out, mark);
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
    if (sub == XC_GLYPHS_CACHED)
        return xc_pix_take_ref(m, r, dst, blen);
    bool fresh = sub == XC_GLYPHS_PIX_A8 + PIX_FRESH || sub == XC_GLYPHS_PIX_ARGB + PIX_FRESH;
    sub -= fresh ? PIX_FRESH : 0;
    if ((sub != XC_GLYPHS_PIX_A8 && sub != XC_GLYPHS_PIX_ARGB) || blen > XC_PIX_MAX_BODY)
        return -EBADMSG;
    if (!fresh && (rc = xc_pix_take_cached(m, r, dst, blen)) != 0)
        return rc < 0 ? rc : 0;
    struct xc_pix *x = xc_pix_of(m);
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
    if (bm->kind == XC_BM_ICONS)
        return xc_icons_encode(m, body, blen, msb, out);
    return xc_image_encode(m, fixed, body, blen, msb, out);
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
        return xc_image_decode(m, fixed, dst, blen, msb, r);
    if (bm->kind == XC_BM_REPLY && blen > XC_BIG_BODY)
        return xc_reply_decode(NULL, dst, blen, msb, r);
    if (bm->kind == XC_BM_GLYPHS)
        return glyphs_decode(m, fixed, dst, blen, msb, r);
    if (bm->kind == XC_BM_ICONS)
        return xc_icons_decode(m, dst, blen, msb, r);
    return -EBADMSG;
}
