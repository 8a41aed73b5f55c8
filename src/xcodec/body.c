/* body.c -- models of message bodies: lists of 16-bit fields coded as deltas (points,
 * segments, rectangles, arcs) and image rows under PNG-style filters (PutImage).
 * Both directions here, side by side, so they stay mirror images. Hot on drawing traffic. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
     * runs of glyphs go much further. */
    return bm->kind == XC_BM_REPLY ? blen / 4096 : bm->kind == XC_BM_IMAGE ? blen / 256 : blen / 12;
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
 * trapezoids (x11perf's grids) suit the field deltas better: a sub-model byte picks. */
enum { XC_TRAPS_DELTA = 0, XC_TRAPS_TABLE = 1 };
#define TRAP_TABLE 64
#define TRAP_NEW 255

/* A new value is coded against the last new one of the same axis (fields 0, 1, 3, 5, 7
 * and 9 of a trapezoid are y, the rest x): a polygon's vertices lie close together. */
static unsigned trap_axis_y(uint32_t at)
{
    unsigned f = at % 40 / 4;
    return f < 2 || f % 2 == 1;
}
static uint64_t zz32(uint32_t d) { return (uint32_t)(d << 1) ^ (0u - (d >> 31)); }
static uint32_t unzz32(uint32_t v) { return (v >> 1) ^ (0u - (v & 1)); }

static int traps_table_encode(const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    uint32_t table[TRAP_TABLE], lastv[2] = { 0, 0 };
    unsigned ntab = 0, next = 0;
    for (uint32_t at = 0; at + 4 <= blen; at += 4) {
        uint32_t v;
        memcpy(&v, body + at, 4);
        unsigned k = 0;
        while (k < ntab && table[k] != v)
            k++;
        uint8_t tag = k < ntab ? (uint8_t)k : TRAP_NEW;
        if (buf_append(out, &tag, 1) < 0)
            return -ENOMEM;
        if (tag == TRAP_NEW) {
            uint32_t *last = &lastv[trap_axis_y(at)], x = ld32(body + at, msb);
            if (buf_put_varint(out, zz32(x - *last)) < 0)
                return -ENOMEM;
            *last = x;
            table[next] = v;
            next = (next + 1) % TRAP_TABLE;
            if (ntab < TRAP_TABLE)
                ntab++;
        }
    }
    return 0;
}

static int traps_table_decode(uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint32_t table[TRAP_TABLE], lastv[2] = { 0, 0 };
    unsigned ntab = 0, next = 0;
    for (uint32_t at = 0; at + 4 <= blen; at += 4) {
        uint8_t tag;
        int rc = rd_u8(r, &tag);
        if (rc < 0)
            return rc;
        if (tag < ntab) {
            memcpy(dst + at, &table[tag], 4);
            continue;
        }
        if (tag != TRAP_NEW)
            return -EBADMSG;
        uint64_t d;
        if ((rc = rd_varint(r, &d)) < 0)
            return rc;
        if (d > 0xffffffffu)
            return -EBADMSG;
        uint32_t *last = &lastv[trap_axis_y(at)];
        *last += unzz32((uint32_t)d);
        st32(dst + at, *last, msb);
        memcpy(&table[next], dst + at, 4);
        next = (next + 1) % TRAP_TABLE;
        if (ntab < TRAP_TABLE)
            ntab++;
    }
    return 0;
}

static int traps_encode(const struct xc_body_model *bm, const uint8_t *body, uint32_t blen, bool msb,
                        const uint8_t *rlast, struct buf *out)
{
    size_t mark = out->len;
    uint8_t sub = XC_TRAPS_DELTA;
    if (buf_append(out, &sub, 1) < 0)
        return -ENOMEM;
    int rc = elems_encode(bm, body, blen, msb, rlast, out);
    if (rc < 0)
        return rc;
    struct buf alt = { 0 };
    sub = XC_TRAPS_TABLE;
    if (buf_append(&alt, &sub, 1) < 0 || traps_table_encode(body, blen, msb, &alt) < 0) {
        buf_free(&alt);
        return -ENOMEM;
    }
    if (alt.len < out->len - mark) {
        out->len = mark;
        rc = buf_append(out, buf_head(&alt), alt.len);
    }
    buf_free(&alt);
    return rc;
}

static int traps_decode(const struct xc_body_model *bm, uint8_t *dst, uint32_t blen, bool msb,
                        const uint8_t *rlast, struct rd *r)
{
    uint8_t sub;
    int rc = rd_u8(r, &sub);
    if (rc < 0)
        return rc;
    if (sub == XC_TRAPS_DELTA)
        return elems_decode(bm, dst, blen, msb, rlast, r);
    if (sub == XC_TRAPS_TABLE)
        return traps_table_decode(dst, blen, msb, r);
    return -EBADMSG;
}

static int palette_encode(const uint8_t *body, uint32_t rows, uint32_t stride, unsigned psz, struct buf *out);
static int palette_decode(uint8_t *dst, uint32_t rows, uint32_t stride, unsigned psz, struct rd *r);

/* One filter byte per row (0 none, 1 left, 2 up), chosen by the smallest sum of
 * residual magnitudes, as PNG encoders do; then the residuals. */
static int image_encode(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    uint32_t rows, stride;
    unsigned psz;
    image_geom(fixed, blen, msb, &rows, &stride, &psz);
    /* Few colours: a palette, marked by filter 3 in place of the first row's. */
    size_t mark = out->len;
    uint8_t f3 = 3;
    if (buf_append(out, &f3, 1) < 0)
        return -ENOMEM;
    int rc = palette_encode(body, rows, stride, psz, out);
    if (rc != 1)
        return rc;
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

static int image_decode(const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint32_t rows, stride;
    unsigned psz;
    image_geom(fixed, blen, msb, &rows, &stride, &psz);
    if (rd_left(r) > 0 && r->p[r->pos] == 3) {
        r->pos++;
        return palette_decode(dst, rows, stride, psz, r);
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

/* AddGlyphs of 32-bit glyphs (subpixel text): ids and GLYPHINFOs as they are, then the
 * images' pixels, as 32-bit values in the request's byte order, split into red, green and
 * blue (three samples in a row of one coverage signal) and alpha minus green (alpha is
 * green's copy in such glyphs). Any bytes invert exactly; only the gain depends on it. */
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

static int glyphs_encode(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    uint32_t n;
    if (!glyphs_argb(fixed, body, blen, msb, &n))
        return 1;
    uint32_t npx = (blen - 16 * n) / 4;
    uint8_t *o = buf_append_space(out, blen);
    if (!o)
        return -ENOMEM;
    memcpy(o, body, 16 * (size_t)n);
    uint8_t *rgb = o + 16 * (size_t)n, *alpha = rgb + 3 * (size_t)npx;
    const uint8_t *px = body + 16 * (size_t)n;
    for (uint32_t i = 0; i < npx; i++, px += 4) {
        uint32_t v = ld32(px, msb);
        uint8_t g = (uint8_t)(v >> 8);
        *rgb++ = (uint8_t)(v >> 16);
        *rgb++ = g;
        *rgb++ = (uint8_t)v;
        *alpha++ = (uint8_t)((v >> 24) - g);
    }
    return 0;
}

static int glyphs_decode(const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint32_t n;
    const uint8_t *p;
    if (!glyphs_argb(fixed, NULL, blen, msb, &n))
        return -EBADMSG;
    int rc = rd_bytes(r, &p, blen);
    if (rc < 0)
        return rc;
    uint32_t npx = (blen - 16 * n) / 4;
    memcpy(dst, p, 16 * (size_t)n);
    const uint8_t *rgb = p + 16 * (size_t)n, *alpha = rgb + 3 * (size_t)npx;
    uint8_t *px = dst + 16 * (size_t)n;
    for (uint32_t i = 0; i < npx; i++, px += 4, rgb += 3) {
        uint8_t a = (uint8_t)(alpha[i] + rgb[1]);
        st32(px, (uint32_t)a << 24 | (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2], msb);
    }
    return 0;
}

int xc_body_encode(const struct xc_body_model *bm, const uint8_t *fixed, const uint8_t *body,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct buf *out)
{
    if (bm->kind == XC_BM_ELEMS)
        return elems_encode(bm, body, blen, msb, rlast, out);
    if (bm->kind == XC_BM_TRAPS)
        return traps_encode(bm, body, blen, msb, rlast, out);
    if (bm->kind == XC_BM_REPLY)
        return xc_reply_encode(NULL, body, blen, msb, out);
    if (bm->kind == XC_BM_GLYPHS)
        return glyphs_encode(fixed, body, blen, msb, out);
    return image_encode(fixed, body, blen, msb, out);
}

int xc_body_decode(const struct xc_body_model *bm, const uint8_t *fixed, uint8_t *dst,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct rd *r)
{
    if (bm->kind == XC_BM_ELEMS)
        return elems_decode(bm, dst, blen, msb, rlast, r);
    if (bm->kind == XC_BM_TRAPS)
        return traps_decode(bm, dst, blen, msb, rlast, r);
    if (bm->kind == XC_BM_IMAGE && blen > 0)
        return image_decode(fixed, dst, blen, msb, r);
    if (bm->kind == XC_BM_REPLY && blen > XC_BIG_BODY)
        return xc_reply_decode(NULL, dst, blen, msb, r);
    if (bm->kind == XC_BM_GLYPHS)
        return glyphs_decode(fixed, dst, blen, msb, r);
    return -EBADMSG;
}
