/* putimage.c -- PutImage bodies: rows under PNG-style filters, a palette for few colours,
 * the pixel coder for the shapes it knows (pixel.c; glyphs share its statistics), the last
 * session's bodies by their code (pixcache.c), recent images by reference (images.c), and
 * photo-like images as lossy WebP when asked. Both directions here, side by side, so they
 * stay mirror images. body.c dispatches to it (xc_body_encode, xc_body_decode). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/encode.h>

#include "common/log.h"
#include "xcodec/xcodec_private.h"

/* PutImage's fixed part (as without BIG-REQUESTS; complete whenever there is a body). */
static struct xp_put_image_req put_image(const uint8_t *fixed, bool msb)
{
    struct xp_put_image_req v;
    xp_put_image_req_view(fixed, XP_PUT_IMAGE_REQ_SIZE, msb, &v);
    return v;
}

/* Image geometry from PutImage's fixed part: rows of equal stride when the body divides by
 * the height, else one row. */
static void image_geom(const uint8_t *fixed, uint32_t blen, bool msb, uint32_t *rows, uint32_t *stride,
                       unsigned *psz)
{
    struct xp_put_image_req v = put_image(fixed, msb);
    uint16_t h = v.height;
    uint8_t depth = v.depth;
    *psz = depth > 16 ? 4 : depth > 8 ? 2 : 1;
    *rows = h && blen % h == 0 ? h : 1;
    *stride = blen / *rows;
}



/* The pixel coder's statistics (glyphs and images share them), made on first use. */
struct xc_pix *xc_pix_of(struct xc_model *m)
{
    if (!m->pix)
        m->pix = xc_pix_new();
    return m->pix;
}

/* Appends the pixel code of im, at least min bytes from mark (the code ends with zero
 * bytes a decoder would take as read anyway). Always used once made: the statistics
 * have learnt from it. */
int xc_pix_put(struct xc_model *m, const struct xc_pix_image *im, const uint8_t *p, struct buf *out,
                   size_t mark, uint32_t min)
{
    struct xc_pix *x = xc_pix_of(m);
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
    struct xp_put_image_req v = put_image(fixed, msb);
    uint16_t w = v.width, h = v.height;
    uint8_t depth = v.depth;
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
#define XC_FILTER_PIX_PREV 13 /* ... on 32-bit pixels, an earlier image's pixels as context */
#define BITS_MAX_IMAGE (16u << 10) /* larger bitmaps (stipples, screens of text): the filters */
static bool image_bits(const struct xc_model *m, const uint8_t *fixed, uint32_t blen, bool msb,
                       struct xc_pix_image *im)
{
    struct xp_put_image_req v = put_image(fixed, msb);
    uint16_t h = v.height;
    if (v.depth != 1 || !h || blen % h || blen < PIX_MIN_IMAGE || blen > BITS_MAX_IMAGE)
        return false;
    *im = (struct xc_pix_image){ .kind = XC_PIX_BITS, .msb = msb, .blen = blen, .h = h, .stride = blen / h };
    /* The newest recent image, when as long, is most likely the bitmap this one goes with
     * (an icon, then its mask): its samples join the contexts. */
    if (m->imgs && m->imgs->n && m->imgs->e[0].len == blen)
        im->comp = m->imgs->e[0].p;
    return xc_pix_shape_ok(im);
}

/* The newest recent image of blen bytes, or NULL: for 32-bit pixels, the context of filter
 * byte 13. Frames of an animated cursor (Xcursor themes' watch: emacs, GTK and Qt programs
 * upload a few dozen 24x24 frames at start), a toolbar's icon in its states, a sprite. */
static const uint8_t *image_prev(const struct xc_model *m, uint32_t blen)
{
    for (unsigned i = 0; m->imgs && i < m->imgs->n; i++)
        if (m->imgs->e[i].len == blen)
            return m->imgs->e[i].p;
    return NULL;
}

/* Whether an earlier image is worth its contexts: a quarter of its pixels or more the
 * same (the frames of a spinner share 85%; an unrelated icon of the same size about none,
 * whose contexts would only slow the mixer's learning). The sender's choice. */
static bool prev_pays(const uint8_t *body, const uint8_t *prev, uint32_t blen)
{
    uint32_t same = 0;
    for (uint32_t i = 0; i + 4 <= blen; i += 4)
        same += !memcmp(body + i, prev + i, 4);
    return 16u * same >= blen; /* same >= pixels / 4 */
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
        return xc_pix_put(m, &im, body, out, mark, 0);
    }
    /* Few colours: a palette, marked by filter 3 in place of the first row's. */
    uint8_t f3 = 3;
    if (buf_append(out, &f3, 1) < 0)
        return -ENOMEM;
    int rc = xc_palette_encode(body, rows, stride, psz, out);
    if (rc == 0)
        return blen > XC_BIGIMG_MIN ? xc_bigimg_palette(m, fixed, body, blen, msb, out, mark) : 0;
    if (rc != 1)
        return rc;
    out->len = mark;
    if ((rc = xc_bigimg_encode(m, fixed, body, blen, msb, out)) != 1)
        return rc; /* a large image of 32-bit pixels: lossless WebP */
    /* Else the pixel coder, when the image has a shape it knows. */
    if (image_pix(fixed, blen, msb, &im)) {
        const uint8_t *prev = im.kind == XC_PIX_ARGB ? image_prev(m, blen) : NULL;
        im.comp = prev && prev_pays(body, prev, blen) ? prev : NULL;
        uint8_t f4 = im.comp ? XC_FILTER_PIX_PREV : XC_FILTER_PIX;
        if (buf_append(out, &f4, 1) < 0)
            return -ENOMEM;
        return xc_pix_put(m, &im, body, out, mark, 0);
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
    if (f0 == XC_FILTER_BITS + PIX_FRESH || f0 == XC_FILTER_PIX + PIX_FRESH || f0 == XC_FILTER_PIX_PREV + PIX_FRESH)
        f0 -= PIX_FRESH;
    if (f0 == XC_FILTER_BITS) {
        struct xc_pix_image im;
        struct xc_pix *x = xc_pix_of(m);
        if (!image_bits(m, fixed, blen, msb, &im))
            return -EBADMSG;
        if (!x)
            return -ENOMEM;
        r->pos++;
        return xc_pix_decode(x, &im, dst, r);
    }
    if (f0 == XC_FILTER_PIX || f0 == XC_FILTER_PIX_PREV) {
        struct xc_pix_image im;
        struct xc_pix *x = xc_pix_of(m);
        if (!image_pix(fixed, blen, msb, &im))
            return -EBADMSG;
        if (f0 == XC_FILTER_PIX_PREV && (im.kind != XC_PIX_ARGB || !(im.comp = image_prev(m, blen))))
            return -EBADMSG; /* 32-bit pixels only, after an image of their length */
        if (!x)
            return -ENOMEM;
        r->pos++;
        return xc_pix_decode(x, &im, dst, r);
    }
    if (rd_left(r) > 0 && r->p[r->pos] == 3) {
        r->pos++;
        int rc = xc_palette_decode(dst, rows, stride, psz, r);
        return rc < 0 || blen <= XC_BIGIMG_MIN ? rc : xc_bigimg_note_tiles(m, fixed, dst, blen, msb);
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
int xc_pix_take_cached(struct xc_model *m, struct rd *r, uint8_t *dst, uint32_t blen)
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
int xc_pix_note_new_code(struct xc_model *m, const uint8_t *body, uint32_t blen, struct buf *out, size_t mark)
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
    struct xp_put_image_req v = put_image(fixed, msb);
    *w = v.width, *h = v.height;
    return !msb && v.format == XP_IMAGE_FORMAT_Z_PIXMAP && v.left_pad == 0 && v.depth == 24 && *w >= LOSSY_MIN_SIDE &&
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
        rc = xc_rd_sized(r, blen, &webp, &n);
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
 * MODEL body then goes to the front of that list. One of the last session's pixel bodies
 * is its code again, or, when that is long, filter byte 11 and its index in the set. */
#define XC_FILTER_AGAIN 5
#define XC_FILTER_CACHED 11

/* After the marker of a cached body by its index: the index, then (a body whose code is
 * the rest of its record) zero bytes to the end. r moves only when the whole is there. */
int xc_pix_take_ref(struct xc_model *m, struct rd *r, uint8_t *dst, uint32_t blen)
{
    struct rd t = *r;
    uint64_t index;
    const uint8_t *p;
    int rc = rd_varint(&t, &index);
    if (rc < 0 || (rc = xc_pixcache_take(m->pc, index, blen, &p)) < 0)
        return rc;
    for (uint8_t z = 0; blen > XC_BIG_BODY && rd_left(&t);)
        if (rd_u8(&t, &z) < 0 || z)
            return -EBADMSG;
    memcpy(dst, p, blen);
    *r = t;
    return 0;
}

int xc_pix_put_ref(struct buf *out, uint8_t marker, uint32_t index)
{
    return buf_append(out, &marker, 1) || buf_put_varint(out, index) ? -ENOMEM : 0;
}

/* For a debug log: what an image cost, and how it went (the filter byte, and for WebP its
 * mode: 0/1/4 alone, 2 against a recent image moved, 3 with tiles found). */
static void trace_image(const uint8_t *fixed, uint32_t blen, bool msb, const uint8_t *code, size_t n)
{
    struct xp_put_image_req q = put_image(fixed, msb);
    if (n > 1 && code[0] == XC_FILTER_WEBPLL)
        log_debug("image %ux%u at %d,%d of 0x%x depth %u: %u -> %zu bytes, filter %u mode %u", q.width, q.height, q.dst_x,
                  q.dst_y, q.drawable, q.depth, blen, n, code[0], code[1]);
    else
        log_debug("image %ux%u at %d,%d of 0x%x depth %u: %u -> %zu bytes, filter %u", q.width, q.height, q.dst_x, q.dst_y,
                  q.drawable, q.depth, blen, n, n ? code[0] : 0);
}

/* Whether a new image's code is kept for the next session's pixel bodies though the pixel
 * coder did not make it: a palette (filter 3) or a WebP of the image alone (filter 9, mode 0,
 * 1 or 4), codes that need no state of this session to be read, of bodies up to
 * XC_PIXCACHE_IMAGE_MAX. What a program sends at every start: its window's icon (firefox:
 * 22 KB of WebP), toolbar images of few colours. Larger images are left to the tiles: a
 * browser's strips would fill the set's budget and end its collecting for the session. */
static bool code_whole(const uint8_t *code, size_t n, uint32_t blen)
{
    return blen <= XC_PIXCACHE_IMAGE_MAX && n >= 2 &&
           (code[0] == 3 || (code[0] == XC_FILTER_WEBPLL && (code[1] <= 1 || code[1] == 4)));
}

int xc_image_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                        struct buf *out)
{
    if (!m->imgs && !(m->imgs = calloc(1, sizeof *m->imgs)))
        return -ENOMEM;
    uint64_t hash = blen >= XC_IMGS_MIN && blen <= XC_IMGS_MAX ? xc_imgs_hash(body, blen) : 0;
    int found = hash ? xc_imgs_find(m->imgs, body, blen, hash) : -1, rc = 0;
    const uint8_t *code;
    uint32_t code_len, index;
    size_t mark = out->len;
    if (found >= 0) {
        uint8_t again[2] = { XC_FILTER_AGAIN, (uint8_t)found };
        rc = buf_append(out, again, 2);
    } else if (xc_pixcache_find(m->pc, body, blen, &code, &code_len, &index) == 0) {
        rc = code_len >= XC_PIXCACHE_REF_MIN ? xc_pix_put_ref(out, XC_FILTER_CACHED, index)
                                             : buf_append(out, code, code_len);
    } else if ((rc = lossy_encode(m, fixed, body, blen, msb, out)) <= 0) {
        return rc; /* not kept among the recent images either */
    } else if ((rc = image_encode_new(m, fixed, body, blen, msb, out)) == 0 && out->len > mark &&
               (buf_head(out)[mark] == XC_FILTER_PIX || buf_head(out)[mark] == XC_FILTER_BITS ||
                buf_head(out)[mark] == XC_FILTER_PIX_PREV))
        rc = xc_pix_note_new_code(m, body, blen, out, mark);
    else if (rc == 0 && code_whole(buf_head(out) + mark, out->len - mark, blen))
        rc = xc_pixcache_note(m->pc, body, blen, buf_head(out) + mark, (uint32_t)(out->len - mark));
    if (rc == 0 && log_get_level() >= LOG_DEBUG)
        trace_image(fixed, blen, msb, buf_head(out) + mark, out->len - mark);
    return rc < 0 ? rc : xc_imgs_push(m->imgs, body, blen, found, hash);
}

int xc_image_decode(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb,
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
    } else if (rd_left(r) > 0 && r->p[r->pos] == XC_FILTER_CACHED) {
        struct rd t = *r;
        t.pos++;
        if ((rc = xc_pix_take_ref(m, &t, dst, blen)) < 0)
            return rc;
        *r = t;
    } else {
        size_t at = r->pos;
        uint8_t f = rd_left(r) > 0 ? r->p[at] : 0;
        bool pix = f == XC_FILTER_PIX || f == XC_FILTER_BITS || f == XC_FILTER_PIX_PREV;
        if (pix) {
            r->pos++;
            rc = xc_pix_take_cached(m, r, dst, blen);
            r->pos -= rc == 0; /* not cached: decoded below */
        }
        if (rc < 0)
            return rc;
        if (rc == 0 && ((rc = image_decode_new(m, fixed, dst, blen, msb, r)) < 0 ||
                        ((pix || code_whole(r->p + at, r->pos - at, blen)) &&
                         (rc = xc_pixcache_note(m->pc, dst, blen, r->p + at, (uint32_t)(r->pos - at))) < 0)))
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
int xc_palette_encode(const uint8_t *body, uint32_t rows, uint32_t stride, unsigned psz, struct buf *out)
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

int xc_palette_decode(uint8_t *dst, uint32_t rows, uint32_t stride, unsigned psz, struct rd *r)
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
