/* bigimg.c -- large 32-bit PutImage bodies (rendered pages, browser windows, photographs:
 * over 16 KiB, past the pixel coder) as lossless WebP (libwebp's VP8L), filter byte 9, at an
 * effort chosen by the link's rate. Both directions; exact: the receiver draws the client's bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

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

/* Effort by the link's rate (bytes per second; 0 unknown), from bench/images (docs/
 * BENCHMARKS.md, "Large images": 254 images of mupdf, xpdf and firefox): preset 1 codes
 * 63 MB in 0.35 s to 1.41 MB, 2 in 0.56 s to 1.34 MB, 3 in 0.81 s to 1.25 MB, 5 and 9 no
 * smaller. Each step up pays while the link takes longer for the bytes it saves than the
 * step costs: below about 350 KB/s; preset 1 beats raw pixels (and the row filters) to
 * about 80 MB/s on photographs. Above 32 MiB/s the row filters, as before. */
int xc_bigimg_level(uint64_t rate_Bps)
{
    if (!rate_Bps)
        return XC_BIGIMG_LEVEL_UNKNOWN;
    if (rate_Bps <= 384u << 10)     /* to 3 Mbit/s */
        return 3;
    if (rate_Bps <= 32u << 20)      /* to 256 Mbit/s */
        return 1;
    return -1;
}

static int webp_write(const uint8_t *d, size_t n, const WebPPicture *pic)
{
    return buf_append(pic->custom_ptr, d, n) == 0;
}

/* Mode 2: the image against one of the recent images of the same length, moved up by dy
 * rows (a scroll; 0: in place): a pixel equal to the reference's there is sent as alpha 0
 * (its colour left to the encoder, which makes it cheap), any other as itself, opaque. */
#define MOVED_CANDIDATES 8 /* recent images looked at, newest first */
#define MOVED_MAX 2        /* at most half the pixels differ: else the image alone */
#define MOVED_SAMPLE 13    /* candidates are compared on every 13th pixel */
#define MOVED_ROWS 4       /* and at least a quarter of its rows (but repeats) are the reference's */

static uint64_t row_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (size_t i = n & ~(size_t)7; i < n; i++)
        h = (h ^ p[i]) * 0xff51afd7ed558ccdull;
    return h;
}

/* The pixels of the image that differ from ref moved up by dy rows (those of rows outside
 * the reference count as differing), of every step-th pixel; stops past limit. */
static size_t moved_changes(const uint8_t *body, const uint8_t *ref, uint32_t w, uint32_t h, int dy, size_t limit,
                            unsigned step)
{
    size_t n = 0, row = (size_t)4 * w;
    for (uint32_t y = 0; y < h && n <= limit; y++) {
        int64_t ry = (int64_t)y + dy;
        if (ry < 0 || ry >= h) {
            n += (w + step - 1 - (y % step)) / step;
            continue;
        }
        const uint8_t *a = body + row * y, *b = ref + row * (size_t)ry;
        if (step == 1 && memcmp(a, b, row) == 0)
            continue;
        for (uint32_t x = y % step; x < w; x += step)
            n += memcmp(a + 4 * x, b + 4 * x, 4) != 0;
    }
    return n;
}

/* The best reference for mode 2: *k (index among the recent images) and *dy, by the
 * candidates' rows found in the image (each candidate's most common shift) and then the
 * count of changed pixels; false when none is close enough. */
static bool find_moved(const struct xc_imgs *imgs, const uint8_t *body, uint32_t blen, uint32_t w, uint32_t h,
                       unsigned *k, int *dy, size_t *changes)
{
    if (!imgs || !imgs->n || h > 4096)
        return false;
    size_t row = (size_t)4 * w, best = (size_t)w * h / MOVED_MAX, sampled_best = best / MOVED_SAMPLE + 1;
    bool found = false;
    uint64_t *mine = malloc(sizeof *mine * h), *theirs = malloc(sizeof *theirs * h);
    int *votes = calloc(2 * (size_t)h, sizeof *votes);
    if (!mine || !theirs || !votes)
        goto done;
    for (uint32_t y = 0; y < h; y++)
        mine[y] = row_hash(body + row * y, row);
    for (unsigned i = 0; i < imgs->n && i < MOVED_CANDIDATES; i++) {
        if (imgs->e[i].len != blen)
            continue;
        const uint8_t *ref = imgs->e[i].p;
        for (uint32_t y = 0; y < h; y++)
            theirs[y] = row_hash(ref + row * y, row);
        /* Votes for each shift by rows equal at both ends (a row of one colour votes for
         * every shift; its matches are weak, so only rows unlike the row above vote). */
        memset(votes, 0, sizeof *votes * 2 * h);
        int voters = 0;
        for (uint32_t y = 0; y < h; y++) {
            if (y && mine[y] == mine[y - 1])
                continue;
            voters++;
            for (uint32_t ry = 0; ry < h; ry++)
                votes[(int64_t)ry - y + h] += theirs[ry] == mine[y];
        }
        int shift = 0, most = votes[h];
        for (uint32_t j = 0; j < 2 * h; j++)
            if (votes[j] > most)
                most = votes[j], shift = (int)j - (int)h;
        if (most * MOVED_ROWS < voters)
            shift = 0; /* too few rows in common at any shift: in place only */
        for (int pass = 0; pass < 1 + (shift != 0); pass++) {
            int d = pass ? shift : 0;
            size_t c = moved_changes(body, ref, w, h, d, sampled_best, MOVED_SAMPLE);
            if (c < sampled_best)
                sampled_best = c, *k = i, *dy = d, found = true;
        }
    }
    /* The best by a sample of the pixels, then counted: at most MOVED_MAX of them changed. */
    if (found) {
        *changes = moved_changes(body, imgs->e[*k].p, w, h, *dy, best, 1);
        found = *changes <= best;
    }
done:
    free(mine), free(theirs), free(votes);
    return found;
}

/* Mode 3: which of the image's whole cells are sent as tiles (1), row by row. */
struct tile_cover {
    struct xc_tile_grid g;
    uint8_t *cell;
};

static bool covered(const struct tile_cover *c, uint32_t x, uint32_t y)
{
    return c && x >= c->g.ox && y >= c->g.oy && x - c->g.ox < c->g.nx * XC_TILE_SIDE &&
           y - c->g.oy < c->g.ny * XC_TILE_SIDE &&
           c->cell[(size_t)(y - c->g.oy) / XC_TILE_SIDE * c->g.nx + (x - c->g.ox) / XC_TILE_SIDE];
}

/* The WebP of the image in a mode (2: against ref moved by dy; 3: but the covered tiles,
 * whose pixels the receiver does not use: each the pixel above it, opaque, which libwebp's
 * predictors code nearly free; 0.97 of the bytes of leaving them transparent on firefox's
 * second session) into code; false when libwebp fails. */
static bool webp_of(const struct xc_model *m, const uint8_t *body, uint32_t w, uint32_t h, bool msb, uint8_t mode,
                    const uint8_t *ref, int dy, const struct tile_cover *cover, struct buf *code)
{
    WebPConfig cfg;
    WebPPicture pic;
    /* An image over 1 MiB holds the event loop longest (4 MiB: about 0.1 s at preset 3): the
     * fastest preset that pays, 1. */
    int level = w * h > XC_BIGIMG_HUGE / 4 && m->bigimg_level > 1 ? 1 : m->bigimg_level;
    if (!WebPConfigInit(&cfg) || !WebPConfigLosslessPreset(&cfg, level) || !WebPPictureInit(&pic))
        return false;
    /* Keep the colour of transparent pixels (modes 0 and 1: the fourth byte is X's, not
     * alpha); in mode 2 they are the reference's, and the encoder may pick any colour. */
    cfg.exact = mode != 2;
    pic.use_argb = 1, pic.width = (int)w, pic.height = (int)h;
    if (!WebPPictureAlloc(&pic))
        return false;
    const unsigned cb = chan(msb, 0), cg = chan(msb, 1), cr = chan(msb, 2), cx = chan(msb, 3);
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = body + (size_t)4 * w * y;
        int64_t ry = (int64_t)y + dy;
        const uint8_t *rs = ref && ry >= 0 && ry < h ? ref + (size_t)4 * w * (size_t)ry : NULL;
        uint32_t *d = pic.argb + (size_t)pic.argb_stride * y;
        for (uint32_t x = 0; x < w; x++, s += 4)
            d[x] = cover && covered(cover, x, y) ? (y ? (d - pic.argb_stride)[x] : x ? d[x - 1] : 0xff000000u)
                 : rs && !memcmp(s, rs + 4 * x, 4) ? 0
                 : (uint32_t)(mode == 1 ? s[cx] : 0xff) << 24 | (uint32_t)s[cr] << 16 | (uint32_t)s[cg] << 8 | s[cb];
    }
    pic.writer = webp_write, pic.custom_ptr = code;
    int ok = WebPEncode(&cfg, &pic);
    WebPPictureFree(&pic);
    return ok;
}

/* Mode 4's second WebP: the fourth byte of each pixel as grey (libwebp's subtract-green
 * transform leaves red and blue nothing to code). A depth-24 image's fourth byte is not part
 * of its pixels' values, but the server keeps it and GetImage returns it, so it goes exactly;
 * programs leave there whatever their buffers held (imlib2: another image's channel, runs of
 * 0 and 128). As alpha (mode 1) it broke libwebp's colour cache and copies of the colours:
 * feh's photographs cost 1.5 times their opaque WebP, the plane apart about 1.05. */
static bool plane_webp(const struct xc_model *m, const uint8_t *body, uint32_t w, uint32_t h, bool msb,
                       struct buf *code)
{
    WebPConfig cfg;
    WebPPicture pic;
    int level = w * h > XC_BIGIMG_HUGE / 4 && m->bigimg_level > 1 ? 1 : m->bigimg_level;
    if (!WebPConfigInit(&cfg) || !WebPConfigLosslessPreset(&cfg, level) || !WebPPictureInit(&pic))
        return false;
    cfg.exact = 1;
    pic.use_argb = 1, pic.width = (int)w, pic.height = (int)h;
    if (!WebPPictureAlloc(&pic))
        return false;
    const uint8_t *s = body + chan(msb, 3);
    for (uint32_t y = 0; y < h; y++) {
        uint32_t *d = pic.argb + (size_t)pic.argb_stride * y;
        for (uint32_t x = 0; x < w; x++, s += 4)
            d[x] = 0xff000000u | (uint32_t)*s * 0x010101u;
    }
    pic.writer = webp_write, pic.custom_ptr = code;
    int ok = WebPEncode(&cfg, &pic);
    WebPPictureFree(&pic);
    return ok;
}

/* What the reference gives: of the image's detail (pixels unlike their left neighbour),
 * how much is found there, moved by dy. Flat areas (a page's white) cost little alone. */
static void moved_detail(const uint8_t *body, const uint8_t *ref, uint32_t w, uint32_t h, int dy, size_t *detail,
                         size_t *found)
{
    size_t row = (size_t)4 * w;
    *detail = *found = 0;
    for (uint32_t y = 0; y < h; y++) {
        int64_t ry = (int64_t)y + dy;
        const uint8_t *a = body + row * y, *b = ry >= 0 && ry < h ? ref + row * (size_t)ry : NULL;
        for (uint32_t x = 1; x < w; x++)
            if (memcmp(a + 4 * x, a + 4 * x - 4, 4)) {
                ++*detail;
                *found += b && !memcmp(a + 4 * x, b + 4 * x, 4);
            }
    }
}

/* Whether the image looks like noise (no codec shrinks it; WebP would spend its time for
 * nothing): the mean difference of green from its left neighbour, on a sample of pixels,
 * above NOISE_MEAN_DIFF (photographs: 3-15; uniform noise: 85). */
#define NOISE_SAMPLES 4096
#define NOISE_MEAN_DIFF 48
static bool noise_like(const uint8_t *body, uint32_t w, uint32_t h, bool msb)
{
    size_t npx = (size_t)w * h, step = npx / NOISE_SAMPLES + 1, n = 0, sum = 0;
    unsigned cg = chan(msb, 1);
    for (size_t i = 1; i < npx; i += step) {
        if (i % w == 0)
            continue;
        sum += (size_t)abs((int)body[4 * i + cg] - (int)body[4 * i - 4 + cg]);
        n++;
    }
    return n && sum > n * NOISE_MEAN_DIFF;
}

/* The encoder's hashes of the WebPs it sent lately (a channel's own; informative, not on the
 * wire): an image whose code is one of them costs a reference in zstd's window, so it is
 * not coded against tiles (firefox draws its strips again and again). */
#define SENT_CODES 256
struct xc_sent_codes {
    uint64_t hash[SENT_CODES];
    unsigned next;
};

static bool sent_before(const struct xc_model *m, const struct buf *code)
{
    uint64_t h = xc_imgs_hash(buf_head(code), (uint32_t)code->len);
    for (unsigned i = 0; m->sent && i < SENT_CODES; i++)
        if (m->sent->hash[i] == h)
            return true;
    return false;
}

static void sent_now(struct xc_model *m, const struct buf *code)
{
    if (!m->sent && !(m->sent = calloc(1, sizeof *m->sent)))
        return; /* a guess less */
    m->sent->hash[m->sent->next] = xc_imgs_hash(buf_head(code), (uint32_t)code->len);
    m->sent->next = (m->sent->next + 1) % SENT_CODES;
}

/* The image's position on its drawable (its grid of tiles). */
static void image_at(const uint8_t *fixed, bool msb, int *x, int *y)
{
    *x = (int16_t)ld16(fixed + 16, msb), *y = (int16_t)ld16(fixed + 18, msb);
}

/* Mode 3's references: the whole tiles of the image that are among the loaded ones or
 * this session's of the channel, as `count` and (skip, index) pairs into refs, and which
 * cells they are into cover; the count of them (of loaded ones in *loaded). */
static int tile_refs(const struct xc_model *m, const uint8_t *body, int x, int y, uint32_t w, uint32_t h,
                     struct tile_cover *cover, struct buf *refs, size_t *loaded)
{
    xc_tile_grid(x, y, w, h, &cover->g);
    size_t cells = (size_t)cover->g.nx * cover->g.ny, count = 0, last = 0, nloaded = xc_tilecache_loaded(m->tc);
    *loaded = 0;
    if ((!nloaded && !xc_tile_ring_count(m->ring)) || !cells || !(cover->cell = calloc(cells, 1)))
        return 0;
    struct buf pairs = { 0 };
    uint8_t tile[XC_TILE_BYTES];
    for (size_t c = 0; c < cells; c++) {
        xc_tile_cut(body, w, cover->g.ox + (uint32_t)(c % cover->g.nx) * XC_TILE_SIDE,
                    cover->g.oy + (uint32_t)(c / cover->g.nx) * XC_TILE_SIDE, tile);
        int k = xc_tilecache_find(m->tc, tile);
        *loaded += k >= 0;
        if (k < 0 && (k = xc_tile_ring_find(m->ring, tile, xc_tile_key(tile))) >= 0)
            k += (int)nloaded;
        if (k < 0)
            continue;
        if (buf_put_varint(&pairs, c - last) < 0 || buf_put_varint(&pairs, (uint64_t)k) < 0) {
            count = 0;
            break;
        }
        cover->cell[c] = 1, last = c + 1, count++;
    }
    if (count && (buf_put_varint(refs, count) < 0 || buf_append(refs, buf_head(&pairs), pairs.len) < 0))
        count = 0;
    buf_free(&pairs);
    return (int)count;
}

/* What both ends note of every image coded here, as it was decoded: its whole cells among
 * the tiles of the file and of the channel. 0 or -ENOMEM. */
static int note_image_tiles(struct xc_model *m, const uint8_t *px, int x, int y, uint32_t w, uint32_t h)
{
    int rc = xc_tilecache_note_image(m->tc, px, x, y, w, h);
    return rc ? rc : xc_tile_ring_push_image(&m->ring, m->tc, px, x, y, w, h);
}

/* Mode 5: a colour byte premultiplied by its alpha, rounded to the nearest (cairo's and
 * pixman's rule: GTK and firefox premultiply their window icon so for an ARGB pixmap). */
static inline uint8_t premultiplied(uint8_t c, uint8_t a) { return (uint8_t)((c * a + 127) / 255); }

/* Whether body is the first blen bytes of p, as they are (how 0) or premultiplied (how 1). */
static bool prefix_is(const uint8_t *body, const uint8_t *p, uint32_t blen, bool msb, uint8_t how)
{
    if (!how)
        return !memcmp(body, p, blen);
    const unsigned ca = chan(msb, 3);
    for (uint32_t i = 0; i < blen; i += 4) {
        uint8_t a = p[i + ca];
        if (body[i + ca] != a)
            return false;
        for (unsigned k = 0; k < 3; k++) {
            unsigned c = chan(msb, k);
            if (body[i + c] != premultiplied(p[i + c], a))
                return false;
        }
    }
    return true;
}

/* Mode 5: the recent image (newest first) whose first blen bytes are body, as they are or
 * premultiplied: a program's window icon, in the icon list (icons.c, a recent image too), then
 * premultiplied into an ARGB pixmap of its height or one row less (gnumeric's 256x256, 26 KB
 * as WebP; firefox's 128x128, 11 KB). */
static bool find_prefix(const struct xc_imgs *imgs, const uint8_t *body, uint32_t blen, bool msb, unsigned *k,
                        uint8_t *how)
{
    for (unsigned i = 0; imgs && i < imgs->n; i++)
        for (uint8_t h = 0; h < 2; h++)
            if (imgs->e[i].len >= blen && prefix_is(body, imgs->e[i].p, blen, msb, h)) {
                *k = i, *how = h;
                return true;
            }
    return false;
}

/* Mode 5's record; then the tiles noted at this end, as the receiver notes them. */
static int put_prefix(struct xc_model *m, const uint8_t *body, uint32_t blen, int x, int y, uint32_t w, uint32_t h,
                      unsigned k, uint8_t how, struct buf *out)
{
    size_t mark = out->len;
    uint8_t head[4] = { XC_FILTER_WEBPLL, 5, (uint8_t)k, how };
    int rc = buf_append(out, head, sizeof head) < 0 ? -ENOMEM : 0;
    while (rc == 0 && blen > XC_IMGS_MAX && out->len - mark < blen / 256)
        rc = buf_append(out, "", 1); /* the least code size (5.2) */
    if (rc == 0)
        rc = note_image_tiles(m, body, x, y, w, h);
    if (rc < 0)
        out->len = mark;
    return rc;
}

/* The image's record after the filter byte's place at out's end (mode, its fields, the
 * WebP of code), when code and refs are under three quarters of the image (noise: the row
 * filters cost less time); then the tiles and the code noted at this end, as the receiver
 * notes them. 1: not worth it (nothing appended), 0 or -ENOMEM. */
static int put_code(struct xc_model *m, const uint8_t *body, uint32_t blen, int x, int y, uint32_t w, uint32_t h,
                    uint8_t mode, unsigned k, int dy, uint8_t fourth, const struct buf *refs, size_t loaded,
                    const struct buf *code, const struct buf *plane, struct buf *out)
{
    if (code->len + refs->len + plane->len >= blen / 4 * 3)
        return 1;
    size_t mark = out->len;
    uint8_t head[3] = { XC_FILTER_WEBPLL, mode, (uint8_t)k };
    int rc = buf_append(out, head, mode == 2 ? 3 : 2) < 0 || (mode == 2 && buf_put_varint(out, xc_zz32((uint32_t)dy)) < 0) ||
                     (mode != 1 && mode != 4 && buf_append(out, &fourth, 1) < 0) ||
                     (mode == 3 && buf_append(out, buf_head(refs), refs->len) < 0) || buf_put_varint(out, code->len) < 0 ||
                     buf_append(out, buf_head(code), code->len) < 0 ||
                     (mode == 4 && (buf_put_varint(out, plane->len) < 0 || buf_append(out, buf_head(plane), plane->len) < 0))
                 ? -ENOMEM
                 : 0;
    while (rc == 0 && blen > XC_IMGS_MAX && out->len - mark < blen / 256)
        rc = buf_append(out, "", 1); /* the least code size (5.2) */
    if (rc == 0 && mode == 3)
        xc_tilecache_sent(m->tc, loaded);
    if (rc == 0)
        rc = note_image_tiles(m, body, x, y, w, h);
    if (rc == 0)
        sent_now(m, code);
    if (rc < 0)
        out->len = mark;
    return rc;
}

int xc_bigimg_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                     struct buf *out)
{
    uint32_t w, h;
    if (m->bigimg_level < 0 || !bigimg_fits(fixed, blen, msb, &w, &h) || noise_like(body, w, h, msb))
        return 1;
    size_t npx = (size_t)w * h, changes = 0;
    uint8_t fourth = body[chan(msb, 3)], mode = 0;
    for (size_t i = 1; i < npx && !mode; i++)
        mode = body[4 * i + chan(msb, 3)] != fourth;
    /* Varied fourth bytes: a depth-32 image's alpha goes with its colours (mode 1); a depth-24
     * image's are left over from the program's buffers, apart (mode 4, plane_webp). */
    if (mode && fixed[21] == 24)
        mode = 4;
    unsigned k = 0;
    int dy = 0, x, y;
    image_at(fixed, msb, &x, &y);
    uint8_t how;
    if (mode == 1 && find_prefix(m->imgs, body, blen, msb, &k, &how))
        return put_prefix(m, body, blen, x, y, w, h, k, how, out);
    struct buf code = { 0 }, alone = { 0 }, refs = { 0 }, plane = { 0 };
    struct tile_cover cover = { 0 };
    bool moved = !mode && find_moved(m->imgs, body, blen, w, h, &k, &dy, &changes), ok;
    size_t detail = 0, found = 0;
    if (moved)
        moved_detail(body, m->imgs->e[k].p, w, h, dy, &detail, &found);
    /* Text against another page's text has about a quarter of its detail in common by
     * chance (measured on mupdf's tiles); a caret, a selection or a scroll most of it. */
    if (moved && found * 3 < detail)
        moved = false;
    if (moved) {
        ok = webp_of(m, body, w, h, msb, 2, m->imgs->e[k].p, dy, NULL, &code);
        /* Between: the image alone may cost less. */
        if (ok && found * 3 < detail * 2 && webp_of(m, body, w, h, msb, 0, NULL, 0, NULL, &alone) && alone.len <= code.len) {
            struct buf t = code;
            code = alone, alone = t, moved = false;
        }
    } else
        ok = webp_of(m, body, w, h, msb, mode, NULL, 0, NULL, &code) &&
             (mode != 4 || plane_webp(m, body, w, h, msb, &plane));
    if (moved)
        mode = 2;
    /* Tiles of earlier sessions or of this one (a page drawn again in other rectangles): the
     * rest as WebP, when that costs less than the image's best code otherwise. Not for an
     * image over 1 MiB, which one WebP already holds the loop longest (core_grab's probe of
     * the real server missed its 1 s by 3 ms when such images were coded twice). */
    size_t loaded = 0;
    int tiles = ok && mode != 1 && mode != 4 && blen <= XC_BIGIMG_HUGE && !sent_before(m, &code)
                    ? tile_refs(m, body, x, y, w, h, &cover, &refs, &loaded)
                    : 0;
    if (tiles > 0) {
        buf_clear(&alone);
        if (webp_of(m, body, w, h, msb, 3, NULL, 0, &cover, &alone) && refs.len + alone.len < code.len + 2) {
            struct buf t = code;
            code = alone, alone = t, mode = 3;
        }
    }
    free(cover.cell);
    int rc = ok ? put_code(m, body, blen, x, y, w, h, mode, k, dy, fourth, &refs, loaded, &code, &plane, out) : 1;
    buf_free(&code);
    buf_free(&plane);
    buf_free(&alone);
    buf_free(&refs);
    return rc;
}

/* Whether code is a still lossless WebP (VP8L) of w x h. */
static bool lossless_webp_of(const uint8_t *code, uint64_t n, uint32_t w, uint32_t h)
{
    WebPBitstreamFeatures f;
    return WebPGetFeatures(code, n, &f) == VP8_STATUS_OK && (uint32_t)f.width == w && (uint32_t)f.height == h &&
           f.format == 2 && !f.has_animation;
}

/* Mode 3's references: into cell[] (0: from the WebP; else 1 + the tile's index: the loaded
 * ones, then this session's of the channel, newest first). */
static int read_tile_refs(const struct xc_model *m, const struct xc_tile_grid *g, struct rd *r, uint32_t **cell)
{
    uint64_t count, skip, index;
    size_t cells = (size_t)g->nx * g->ny, at = 0;
    int rc = rd_varint(r, &count);
    if (rc < 0)
        return rc;
    size_t tiles = xc_tilecache_loaded(m->tc) + xc_tile_ring_count(m->ring);
    if (count == 0 || count > cells || !tiles)
        return -EBADMSG; /* no tiles to refer to, or more references than whole tiles */
    if (!(*cell = calloc(cells, sizeof **cell)))
        return -ENOMEM;
    for (uint64_t i = 0; i < count; i++) {
        if ((rc = rd_varint(r, &skip)) < 0 || (rc = rd_varint(r, &index)) < 0)
            return rc;
        if (skip >= cells - at || index >= tiles)
            return -EBADMSG; /* past the image's last whole tile, or no such tile */
        at += skip;
        (*cell)[at++] = (uint32_t)index + 1;
    }
    return 0;
}

int xc_bigimg_decode(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb,
                     struct rd *r)
{
    uint32_t w, h, *cell = NULL;
    uint8_t mode, fourth = 0, k = 0;
    uint64_t n, zdy = 0;
    int x, y;
    const uint8_t *webp, *plane = NULL, *ref = NULL;
    uint64_t pn = 0;
    struct xc_tile_grid g = { 0 };
    bool fits = bigimg_fits(fixed, blen, msb, &w, &h);
    image_at(fixed, msb, &x, &y);
    int rc = rd_u8(r, &mode);
    if (rc == 0 && mode > 5)
        rc = -EBADMSG;
    if (rc == 0 && mode == 5) { /* a recent image's first blen bytes, as they are or premultiplied */
        uint8_t how;
        if ((rc = rd_u8(r, &k)) < 0 || (rc = rd_u8(r, &how)) < 0)
            goto done;
        rc = -EBADMSG;
        if (!fits || !m->imgs || k >= m->imgs->n || m->imgs->e[k].len < blen || how > 1)
            goto done;
        const uint8_t *p = m->imgs->e[k].p;
        memcpy(dst, p, blen);
        for (uint32_t i = 0; how && i < blen; i += 4)
            for (unsigned c = 0; c < 3; c++)
                dst[i + chan(msb, c)] = premultiplied(p[i + chan(msb, c)], p[i + chan(msb, 3)]);
        goto tail;
    }
    if (rc == 0 && mode == 2 && (rc = rd_u8(r, &k)) == 0 && (rc = rd_varint(r, &zdy)) == 0) {
        if (!m->imgs || k >= m->imgs->n || m->imgs->e[k].len != blen || zdy > 0xffffffffu)
            rc = -EBADMSG;
        else
            ref = m->imgs->e[k].p;
    }
    if (rc == 0 && mode != 1 && mode != 4)
        rc = rd_u8(r, &fourth);
    if (rc == 0 && mode == 3) {
        if (!fits)
            rc = -EBADMSG;
        else
            xc_tile_grid(x, y, w, h, &g), rc = read_tile_refs(m, &g, r, &cell);
    }
    if (rc == 0)
        rc = xc_rd_sized(r, blen, &webp, &n);
    if (rc == 0 && mode == 4)
        rc = xc_rd_sized(r, blen, &plane, &pn);
    if (rc < 0)
        goto done;
    rc = -EBADMSG;
    if (!fits || !lossless_webp_of(webp, n, w, h) || (mode == 4 && !lossless_webp_of(plane, pn, w, h)))
        goto done; /* of another size, lossy, or not a still WebP */
    if (!WebPDecodeBGRAInto(webp, n, dst, blen, (int)(4 * w)))
        goto done;
    if (mode == 4) { /* the fourth bytes: the second WebP's green */
        uint8_t *grey = malloc(blen);
        bool ok = grey && WebPDecodeBGRAInto(plane, pn, grey, blen, (int)(4 * w));
        for (size_t i = 0; ok && i < blen; i += 4)
            dst[i + 3] = grey[i + 1];
        free(grey);
        if (!ok) {
            rc = grey ? -EBADMSG : -ENOMEM;
            goto done;
        }
    }
    if (mode == 2) { /* alpha 0: the reference's pixel, dy rows down; else opaque, as sent */
        int64_t dy = (int32_t)xc_unzz32((uint32_t)zdy);
        for (uint32_t yy = 0; yy < h; yy++) {
            uint8_t *d = dst + (size_t)4 * w * yy;
            int64_t ry = (int64_t)yy + dy;
            for (uint32_t xx = 0; xx < w; xx++, d += 4) {
                if (d[3] && msb) {
                    uint8_t b = d[0], gr = d[1];
                    d[0] = fourth, d[1] = d[2], d[2] = gr, d[3] = b;
                } else if (d[3])
                    d[3] = fourth;
                else if (ry < 0 || ry >= h)
                    goto done;
                else
                    memcpy(d, ref + (size_t)4 * (w * (size_t)ry + xx), 4);
            }
        }
    } else if (mode == 0 || mode == 3) /* the fourth byte is one value; the WebP's alpha is not used */
        for (size_t i = 3; i < blen; i += 4)
            dst[i] = fourth;
    if (msb && mode != 2) /* to the request's byte order */
        for (size_t i = 0; i < blen; i += 4) {
            uint8_t t0 = dst[i], t1 = dst[i + 1];
            dst[i] = dst[i + 3], dst[i + 1] = dst[i + 2], dst[i + 2] = t1, dst[i + 3] = t0;
        }
    for (size_t c = 0; mode == 3 && c < (size_t)g.nx * g.ny; c++) { /* the loaded tiles, as they are */
        size_t nloaded = xc_tilecache_loaded(m->tc);
        const uint8_t *tile = !cell[c]                ? NULL
                            : cell[c] - 1 < nloaded ? xc_tilecache_get(m->tc, cell[c] - 1)
                                                    : xc_tile_ring_get(m->ring, (uint32_t)(cell[c] - 1 - nloaded));
        uint32_t ox = g.ox + (uint32_t)(c % g.nx) * XC_TILE_SIDE, oy = g.oy + (uint32_t)(c / g.nx) * XC_TILE_SIDE;
        for (unsigned j = 0; tile && j < XC_TILE_SIDE; j++)
            memcpy(dst + 4 * ((size_t)(oy + j) * w + ox), tile + 4 * XC_TILE_SIDE * j, 4 * XC_TILE_SIDE);
    }
tail:
    rc = -EBADMSG;
    for (uint8_t z = 0; blen > XC_BIG_BODY && rd_left(r) && !z;) /* zeros to the least size */
        if (rd_u8(r, &z) < 0 || z)
            goto done;
    rc = note_image_tiles(m, dst, x, y, w, h);
done:
    free(cell);
    return rc;
}

/* Whether every pixel's fourth byte is the first's (modes 0 and 3 send it once). */
static bool fourth_constant(const uint8_t *body, size_t npx, bool msb)
{
    for (size_t i = 1; i < npx; i++)
        if (body[4 * i + chan(msb, 3)] != body[chan(msb, 3)])
            return false;
    return true;
}

/* Mode 3 for a palette: only against tiles of earlier sessions covering a quarter of the
 * image's cells or more (the page of the last visit), and not for a palette code sent lately
 * (zstd finds it again: a browser draws its strips again and again, and in a cold session
 * WebPs against this session's tiles in place of palettes cost more bytes and CPU, as
 * measured on firefox). 0: appended; 1: not (nothing appended); -ENOMEM. */
static int palette_tiled(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                         size_t beat, struct buf *out)
{
    uint32_t w, h;
    int x, y;
    if (m->bigimg_level < 0 || blen > XC_BIGIMG_HUGE || !xc_tilecache_loaded(m->tc) ||
        !bigimg_fits(fixed, blen, msb, &w, &h) || !fourth_constant(body, (size_t)w * h, msb))
        return 1;
    image_at(fixed, msb, &x, &y);
    struct tile_cover cover = { 0 };
    struct buf refs = { 0 }, code = { 0 };
    size_t loaded = 0;
    int rc = 1;
    if (tile_refs(m, body, x, y, w, h, &cover, &refs, &loaded) > 0 &&
        4 * loaded >= (size_t)cover.g.nx * cover.g.ny &&
        webp_of(m, body, w, h, msb, 3, NULL, 0, &cover, &code) && refs.len + code.len + 8 < beat)
        rc = put_code(m, body, blen, x, y, w, h, 3, 0, 0, body[chan(msb, 3)], &refs, loaded, &code, &(struct buf){ 0 }, out);
    free(cover.cell);
    buf_free(&refs);
    buf_free(&code);
    return rc;
}

int xc_bigimg_palette(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                      struct buf *out, size_t mark)
{
    struct buf pal = { .data = (uint8_t *)buf_head(out) + mark, .len = out->len - mark }; /* a view, not owned */
    if (m->bigimg_level >= 0 && xc_tilecache_loaded(m->tc) && !sent_before(m, &pal)) {
        size_t bound = ZSTD_compressBound(pal.len), beat = 0;
        uint8_t *z = malloc(bound);
        if (z)
            beat = ZSTD_compress(z, bound, buf_head(&pal), pal.len, 1);
        free(z);
        struct buf alt = { 0 };
        int rc = z && !ZSTD_isError(beat) ? palette_tiled(m, fixed, body, blen, msb, beat, &alt) : 1;
        if (rc == 0) {
            out->len = mark; /* pal's bytes no longer used */
            rc = buf_append(out, buf_head(&alt), alt.len) < 0 ? -ENOMEM : 0;
        }
        buf_free(&alt);
        if (rc <= 0)
            return rc; /* the mode 3 code, its tiles noted */
    }
    sent_now(m, &pal);
    return xc_bigimg_note_tiles(m, fixed, body, blen, msb);
}

int xc_bigimg_note_tiles(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb)
{
    uint32_t w, h;
    int x, y, rc = 0;
    if (!bigimg_fits(fixed, blen, msb, &w, &h))
        return 0;
    image_at(fixed, msb, &x, &y);
    rc = note_image_tiles(m, body, x, y, w, h);
    return rc;
}
