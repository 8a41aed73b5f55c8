/* bigimg.c -- large 32-bit PutImage bodies (rendered pages, browser windows, photographs:
 * over 16 KiB, past the pixel coder) as lossless WebP (libwebp's VP8L), filter byte 9, at an
 * effort chosen by the link's rate. Both directions; exact: the receiver draws the client's bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/encode.h>

#include "xcodec/xcodec_private.h"

/* The shape (PROTOCOL.md 5.2, filter byte 9): ZPixmap, left-pad 0, depth 24 or 32, 32-bit
 * pixels without row padding, over XC_BIGIMG_MIN bytes, within WebP's 16383 x 16383. */
static bool bigimg_fits(const uint8_t *fixed, uint32_t blen, bool msb, uint32_t *w, uint32_t *h)
{
    *w = ld16(fixed + 12, msb), *h = ld16(fixed + 14, msb);
    /* fixed is the message 4 bytes on in the BIG-REQUESTS form (its 32-bit length first),
     * where the 16-bit length cannot match: the format, byte 1, is then 3 bytes before it.
     * Both ends hold the message's head when its body is coded. */
    bool big = (uint64_t)ld16(fixed + 2, msb) * 4 != 24ull + blen;
    uint8_t format = big ? fixed[-3] : fixed[1];
    return format == 2 && fixed[20] == 0 && (fixed[21] == 24 || fixed[21] == 32) && blen > XC_BIGIMG_MIN &&
           *w && *h && *w <= WEBP_MAX_DIMENSION && *h <= WEBP_MAX_DIMENSION && (uint64_t)*w * *h * 4 == blen;
}

/* Byte k (0 blue, 1 green, 2 red, 3 the fourth) of a pixel in the request's byte order. */
static inline unsigned chan(bool msb, unsigned k) { return msb ? 3 - k : k; }

/* Effort by the link's rate (bytes per second; 0 unknown), from bench/images: the highest
 * whose encoding time per byte of raw image stays under what its smaller code saves on
 * that link (docs/BENCHMARKS.md, "Large images"). -1: not used (the row filters). */
int xc_bigimg_level(uint64_t rate_Bps)
{
    if (!rate_Bps)
        return XC_BIGIMG_LEVEL_UNKNOWN;
    if (rate_Bps <= 64u << 10)      /* serial lines to 512 kbit/s radios */
        return 5;
    if (rate_Bps <= 256u << 10)     /* to 2 Mbit/s */
        return 3;
    if (rate_Bps <= 4u << 20)       /* to 32 Mbit/s */
        return 1;
    return -1;                      /* faster links: raw-ish bytes cost less than coding them */
}

static int webp_write(const uint8_t *d, size_t n, const WebPPicture *pic)
{
    return buf_append(pic->custom_ptr, d, n) == 0;
}

int xc_bigimg_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                     struct buf *out)
{
    uint32_t w, h;
    if (m->bigimg_level < 0 || !bigimg_fits(fixed, blen, msb, &w, &h))
        return 1;
    size_t npx = (size_t)w * h, mark = out->len;
    uint8_t fourth = body[chan(msb, 3)], mode = 0;
    for (size_t i = 1; i < npx && !mode; i++)
        mode = body[4 * i + chan(msb, 3)] != fourth;
    WebPConfig cfg;
    WebPPicture pic;
    if (!WebPConfigInit(&cfg) || !WebPConfigLosslessPreset(&cfg, m->bigimg_level) || !WebPPictureInit(&pic))
        return 1;
    cfg.exact = 1; /* keep the colour of transparent pixels: the fourth byte is X's, not alpha */
    pic.use_argb = 1, pic.width = (int)w, pic.height = (int)h;
    if (!WebPPictureAlloc(&pic))
        return -ENOMEM;
    const unsigned cb = chan(msb, 0), cg = chan(msb, 1), cr = chan(msb, 2), cx = chan(msb, 3);
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = body + (size_t)4 * w * y;
        uint32_t *d = pic.argb + (size_t)pic.argb_stride * y;
        for (uint32_t x = 0; x < w; x++, s += 4)
            d[x] = (uint32_t)(mode ? s[cx] : 0xff) << 24 | (uint32_t)s[cr] << 16 | (uint32_t)s[cg] << 8 | s[cb];
    }
    struct buf code = { 0 };
    pic.writer = webp_write, pic.custom_ptr = &code;
    int ok = WebPEncode(&cfg, &pic);
    WebPPictureFree(&pic);
    int rc = 1;
    /* A code not under three quarters of the image (noise): the row filters cost less time. */
    if (ok && code.len < blen / 4 * 3) {
        uint8_t head[2] = { XC_FILTER_WEBPLL, mode };
        rc = buf_append(out, head, 2) < 0 || (!mode && buf_append(out, &fourth, 1) < 0) ||
                     buf_put_varint(out, code.len) < 0 || buf_append(out, buf_head(&code), code.len) < 0
                 ? -ENOMEM
                 : 0;
        while (rc == 0 && blen > XC_IMGS_MAX && out->len - mark < blen / 256)
            rc = buf_append(out, "", 1); /* the least code size (5.2) */
        if (rc < 0)
            out->len = mark;
    }
    buf_free(&code);
    return rc;
}

int xc_bigimg_decode(const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint32_t w, h;
    uint8_t mode, fourth = 0;
    uint64_t n;
    const uint8_t *webp;
    int rc = rd_u8(r, &mode);
    if (rc == 0 && mode > 1)
        rc = -EBADMSG;
    if (rc == 0 && !mode)
        rc = rd_u8(r, &fourth);
    if (rc == 0)
        rc = rd_varint(r, &n);
    if (rc == 0 && n > blen)
        rc = -EBADMSG;
    if (rc == 0)
        rc = rd_bytes(r, &webp, n);
    if (rc < 0)
        return rc;
    WebPBitstreamFeatures f;
    if (!bigimg_fits(fixed, blen, msb, &w, &h) || WebPGetFeatures(webp, n, &f) != VP8_STATUS_OK ||
        (uint32_t)f.width != w || (uint32_t)f.height != h || f.format != 2 || f.has_animation)
        return -EBADMSG; /* of another size, lossy, or not a still WebP */
    if (!WebPDecodeBGRAInto(webp, n, dst, blen, (int)(4 * w)))
        return -EBADMSG;
    if (!mode)
        for (size_t i = 3; i < blen; i += 4)
            dst[i] = fourth;
    if (msb)
        for (size_t i = 0; i < blen; i += 4) {
            uint8_t t0 = dst[i], t1 = dst[i + 1];
            dst[i] = dst[i + 3], dst[i + 1] = dst[i + 2], dst[i + 2] = t1, dst[i + 3] = t0;
        }
    for (uint8_t z = 0; blen > XC_BIG_BODY && rd_left(r) && !z;) /* zeros to the least size */
        if (rd_u8(r, &z) < 0 || z)
            return -EBADMSG;
    return 0;
}
