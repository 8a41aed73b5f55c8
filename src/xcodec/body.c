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

bool xc_body_fits(const struct xc_body_model *bm, const uint8_t *fixed, uint32_t blen, bool msb)
{
    if (bm->kind == XC_BM_ELEMS)
        return blen % (2u * bm->words) == 0;
    return bm->kind == XC_BM_IMAGE && blen > 0;
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

/* One filter byte per row (0 none, 1 left, 2 up), chosen by the smallest sum of
 * residual magnitudes, as PNG encoders do; then the residuals. */
static int image_encode(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    uint32_t rows, stride;
    unsigned psz;
    image_geom(fixed, blen, msb, &rows, &stride, &psz);
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

int xc_body_encode(const struct xc_body_model *bm, const uint8_t *fixed, const uint8_t *body,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct buf *out)
{
    if (bm->kind == XC_BM_ELEMS)
        return elems_encode(bm, body, blen, msb, rlast, out);
    return image_encode(fixed, body, blen, msb, out);
}

int xc_body_decode(const struct xc_body_model *bm, const uint8_t *fixed, uint8_t *dst,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct rd *r)
{
    if (bm->kind == XC_BM_ELEMS)
        return elems_decode(bm, dst, blen, msb, rlast, r);
    if (bm->kind == XC_BM_IMAGE && blen > 0)
        return image_decode(fixed, dst, blen, msb, r);
    return -EBADMSG;
}
