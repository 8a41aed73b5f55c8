/* icons.c -- ChangeProperty of a list of 32-bit icons (EWMH's _NET_WM_ICON: width, height,
 * then width x height ARGB pixels, again for each size) through the image coder, each icon
 * as a depth-32 ZPixmap PutImage of it would be coded. A GTK 3 program sets one at start:
 * gnumeric's, 16 to 256 pixels, is 280 KB, 57 KB under zstd, 32 KB as lossless WebP.
 * The property's atom is the server's, not known here: a list is recognised by its shape. */
#include <errno.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

/* The icons of one list, and each side's bound (EWMH names no limit; programs set 2 to 8). */
#define ICONS_MAX 16
#define ICON_MAX_SIDE 1024

struct icon {
    uint32_t at;   /* the offset of its pixels in the body */
    uint32_t w, h;
};

bool xc_icons_fit(const uint8_t *fixed, uint32_t blen, bool msb)
{
    struct xp_change_property_req v;
    /* Past XC_BIG_BODY only: the code then carries its size, and is all there before the
     * icons are decoded (each changes the image coder's state). */
    return xp_change_property_req_view(fixed, XP_CHANGE_PROPERTY_REQ_SIZE, msb, &v) && v.format == 32 &&
           blen > XC_BIG_BODY && blen % 4 == 0;
}

/* The list's icons, or 0 when the body is not exactly such a list. */
static unsigned icons_of(const uint8_t *body, uint32_t blen, bool msb, struct icon *icons)
{
    unsigned n = 0;
    uint32_t at = 0;
    while (at < blen) {
        if (n == ICONS_MAX || blen - at < 8)
            return 0;
        uint32_t w = ld32(body + at, msb), h = ld32(body + at + 4, msb);
        if (!w || !h || w > ICON_MAX_SIDE || h > ICON_MAX_SIDE || 4ull * w * h > blen - at - 8)
            return 0;
        icons[n++] = (struct icon){ at + 8, w, h };
        at += 8 + 4 * w * h;
    }
    return n;
}

/* A PutImage of icon i's pixels, depth 32, ZPixmap, at 0,0 of drawable 0, in the form a
 * client would send it (BIG-REQUESTS' when its length needs it): what the image coder is
 * given as the message's fixed part (msg + 4 in that form). */
static const uint8_t *put_image_of(uint8_t msg[XP_PUT_IMAGE_REQ_SIZE + 4], uint32_t w, uint32_t h, bool msb)
{
    uint32_t words = (XP_PUT_IMAGE_REQ_SIZE + 4 * w * h) / 4;
    bool big = words > 0xffff;
    uint8_t *fixed = msg + (big ? 4 : 0);
    memset(msg, 0, XP_PUT_IMAGE_REQ_SIZE + 4);
    msg[0] = XP_OP_PUT_IMAGE;
    msg[1] = 2; /* ZPixmap */
    if (big)
        st32(msg + 4, words + 1, msb);
    else
        st16(msg + 2, (uint16_t)words, msb);
    /* drawable, gc, then width and height, dst x and y, left pad, depth */
    st16(fixed + 12, (uint16_t)w, msb);
    st16(fixed + 14, (uint16_t)h, msb);
    fixed[21] = 32;
    return fixed;
}

int xc_icons_encode(struct xc_model *m, const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    struct icon icons[ICONS_MAX];
    unsigned n = icons_of(body, blen, msb, icons);
    if (!n)
        return 1; /* another kind of 32-bit property: as data */
    size_t mark = out->len;
    struct buf one = { 0 };
    int lossy_q = m->lossy_q, rc = buf_put_varint(out, n);
    m->lossy_q = 0; /* an icon's edges are its alpha: exact */
    for (unsigned i = 0; i < n && rc == 0; i++) {
        uint8_t msg[XP_PUT_IMAGE_REQ_SIZE + 4];
        const uint8_t *fixed = put_image_of(msg, icons[i].w, icons[i].h, msb);
        buf_clear(&one);
        rc = xc_image_encode(m, fixed, body + icons[i].at, 4 * icons[i].w * icons[i].h, msb, &one);
        if (rc == 0)
            rc = buf_put_varint(out, icons[i].w) || buf_put_varint(out, icons[i].h) ||
                 buf_put_varint(out, one.len) || buf_append(out, buf_head(&one), one.len) ? -ENOMEM : 0;
    }
    m->lossy_q = lossy_q;
    buf_free(&one);
    uint32_t min = xc_icons_min_code(blen);
    while (rc == 0 && out->len - mark < min) /* zero bytes up to the code's least size */
        rc = buf_append(out, "", 1);
    return rc < 0 ? -ENOMEM : rc;
}

int xc_icons_decode(struct xc_model *m, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint64_t n, w, h, len;
    size_t start = r->pos;
    int rc = rd_varint(r, &n);
    if (rc < 0)
        return rc;
    if (!n || n > ICONS_MAX)
        return -EBADMSG;
    uint32_t at = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *code;
        if ((rc = rd_varint(r, &w)) < 0 || (rc = rd_varint(r, &h)) < 0 || (rc = rd_varint(r, &len)) < 0)
            return rc;
        if (!w || !h || w > ICON_MAX_SIDE || h > ICON_MAX_SIDE || blen - at < 8 || 4 * w * h > blen - at - 8)
            return -EBADMSG;
        if ((rc = rd_bytes(r, &code, (size_t)len)) < 0)
            return rc;
        st32(dst + at, (uint32_t)w, msb);
        st32(dst + at + 4, (uint32_t)h, msb);
        uint8_t msg[XP_PUT_IMAGE_REQ_SIZE + 4];
        const uint8_t *fixed = put_image_of(msg, (uint32_t)w, (uint32_t)h, msb);
        struct rd t = rd_make(code, (size_t)len, msb);
        if ((rc = xc_image_decode(m, fixed, dst + at + 8, (uint32_t)(4 * w * h), msb, &t)) < 0)
            return rc == -EAGAIN ? -EBADMSG : rc; /* its code was all there */
        if (rd_left(&t))
            return -EBADMSG;
        at += 8 + (uint32_t)(4 * w * h);
    }
    if (at != blen)
        return -EBADMSG;
    /* The zero bytes that bring the code to its least size, all of them zero. */
    for (uint32_t min = xc_icons_min_code(blen); r->pos - start < min;) {
        uint8_t z;
        if ((rc = rd_u8(r, &z)) < 0)
            return rc;
        if (z)
            return -EBADMSG;
    }
    return 0;
}
