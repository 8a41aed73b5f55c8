/* pixel.c -- lossless coding of pixels (glyph images, PutImage) by prediction from
 * neighbouring pixels and a binary arithmetic coder whose probabilities adapt across the
 * channel's messages (one glyph per request is common: fresh statistics would not pay).
 * Both directions side by side; the state both ends keep in step is struct xc_pix.
 * Hot on image traffic: a handful of binary decisions per sample, no allocation per pixel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

/* ---- Binary range coder: 12-bit probabilities of a 0, 32-bit range, carries through a
 * pending byte and a run of 0xff (the way LZMA's coder does). The first byte it would
 * emit is always 0 and is not sent; the decoder reads zeros past the end of the code,
 * so the encoder ends on the value of its interval with the most trailing zero bytes
 * and drops them. */
#define PB 12
#define P_ONE (1u << PB)
#define P_SHIFT 4 /* adaptation rate: fast, the messages are small */

struct ac_enc {
    struct buf *out;
    uint64_t low;
    uint32_t range;
    uint8_t cache;
    uint64_t pending; /* bytes held back: the cache and 0xff bytes a carry would change */
    bool first;       /* the cache holds the always-zero first byte */
    int err;
};

static void ac_enc_start(struct ac_enc *a, struct buf *out)
{
    *a = (struct ac_enc){ .out = out, .range = 0xffffffffu, .pending = 1, .first = true };
}

static void ac_emit(struct ac_enc *a, uint8_t b)
{
    if (a->first) {
        a->first = false; /* always 0: implied */
        return;
    }
    if (buf_append(a->out, &b, 1) < 0)
        a->err = -ENOMEM;
}

static void ac_shift_low(struct ac_enc *a)
{
    if ((uint32_t)a->low < 0xff000000u || (a->low >> 32) != 0) {
        uint8_t carry = (uint8_t)(a->low >> 32), b = a->cache;
        do {
            ac_emit(a, (uint8_t)(b + carry));
            b = 0xff;
        } while (--a->pending);
        a->cache = (uint8_t)(a->low >> 24);
    }
    a->pending++;
    a->low = (a->low & 0x00ffffffu) << 8;
}

static void ac_bit(struct ac_enc *a, uint16_t *p, unsigned bit)
{
    uint32_t bound = (a->range >> PB) * *p;
    if (!bit) {
        a->range = bound;
        *p = (uint16_t)(*p + ((P_ONE - *p) >> P_SHIFT));
    } else {
        a->low += bound;
        a->range -= bound;
        *p = (uint16_t)(*p - (*p >> P_SHIFT));
    }
    while (a->range < (1u << 24)) {
        a->range <<= 8;
        ac_shift_low(a);
    }
}

/* Ends the code: the value in [low, low + range) with the most trailing zero bits. */
static int ac_enc_finish(struct ac_enc *a, size_t start)
{
    for (unsigned k = 32; k-- > 0;) {
        uint64_t m = (1ull << k) - 1, v = (a->low + m) & ~m;
        if (v - a->low < a->range) {
            a->low = v;
            break;
        }
    }
    for (int i = 0; i < 5; i++)
        ac_shift_low(a);
    while (a->out->len > start && buf_head(a->out)[a->out->len - 1] == 0)
        a->out->len--;
    return a->err;
}

struct ac_dec {
    const uint8_t *p, *end;
    uint32_t range, code;
};

static uint8_t ac_next(struct ac_dec *d) { return d->p < d->end ? *d->p++ : 0; }

static void ac_dec_start(struct ac_dec *d, const uint8_t *p, size_t n)
{
    *d = (struct ac_dec){ .p = p, .end = p + n, .range = 0xffffffffu };
    for (int i = 0; i < 4; i++)
        d->code = d->code << 8 | ac_next(d);
}

static unsigned ac_get(struct ac_dec *d, uint16_t *p)
{
    uint32_t bound = (d->range >> PB) * *p;
    unsigned bit;
    if (d->code < bound) {
        d->range = bound;
        *p = (uint16_t)(*p + ((P_ONE - *p) >> P_SHIFT));
        bit = 0;
    } else {
        d->code -= bound;
        d->range -= bound;
        *p = (uint16_t)(*p - (*p >> P_SHIFT));
        bit = 1;
    }
    while (d->range < (1u << 24)) {
        d->range <<= 8;
        d->code = d->code << 8 | ac_next(d);
    }
    return bit;
}

/* ---- The model: each 8-bit sample is coded as 8 binary decisions down a bit tree (node
 * 1-255), each decision predicted by CM_N context models (a probability per hashed
 * (model, context, node) slot, adapting fast at first and slower as it is seen more)
 * whose predictions are mixed in the logistic domain by weights learnt online per
 * (set, node). Integer arithmetic only: both ends must compute the same bits. */
#define CM_N 6
#define CM_TBITS 18 /* slots: 2^18 of 3 bytes (768 KiB), made on a channel's first image */
#define CM_LIMIT 15 /* a slot's count: its adaptation rate is 1 / (count + 1.5) */
#define CM_LRSHIFT 11 /* the mixer's learning rate: error * input >> this */
#define CM_WMAX (1 << 24)

/* Sets of statistics: glyph coverage (A8), subpixel glyphs (red, green, blue samples in
 * a row), the channels of 32-bit images (glyph alpha too when it is not green's copy),
 * images of depth 8 or less (masks). */
enum { SET_A8, SET_SUB, SET_G, SET_R, SET_B, SET_A, SET_MASK, SET_N };

struct xc_pix {
    uint16_t slot[1u << CM_TBITS]; /* probability of a 1 (12 bits) << 4 | count */
    uint8_t check[1u << CM_TBITS]; /* 8 bits of the slot's hash: another context resets it */
    int32_t weight[SET_N][256][CM_N + 1];
    uint16_t amode;                /* adaptive bit: alpha is green's copy */
    uint16_t gmode;                /* adaptive bit: red and blue go as differences from green */
    uint16_t same[16];             /* adaptive bits: a pixel is the earlier image's (PutImage filter 13) */
    uint16_t quiet[SET_N][3][4];   /* adaptive bit: a sample among zeros is not zero */
    uint16_t pad[256];             /* bit tree: bytes of row padding */
    uint16_t field[16][256];       /* bit trees: glyph ids and GLYPHINFOs per byte position */
    uint32_t last_id;              /* the previous glyph id (glyphs) */
};

/* Logistic squash (4096 / (1 + e^-x), x in 1/256 units) by interpolating its values at
 * x = -8, -7.5, ..., 8; stretch is its inverse, tabulated once. */
static const int16_t squash_at[33] = { 1,    2,    4,    6,    10,   17,   27,   45,   74,   120,  194,
                                       311,  488,  747,  1102, 1546, 2048, 2550, 2994, 3349, 3608, 3785,
                                       3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095 };
static int16_t stretch_of[4096];

static int squash(int d)
{
    if (d > 2047)
        return 4095;
    if (d < -2047)
        return 1;
    int w = d & 127, i = (d >> 7) + 16;
    return (squash_at[i] * (128 - w) + squash_at[i + 1] * w + 64) >> 7;
}

static void stretch_init(void)
{
    static bool done;
    if (done)
        return;
    int pi = 0;
    for (int x = -2047; x <= 2047; x++)
        for (int v = squash(x); pi <= v; pi++)
            stretch_of[pi] = (int16_t)x;
    for (; pi < 4096; pi++)
        stretch_of[pi] = 2047;
    done = true;
}

static void probs_init(uint16_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = P_ONE / 2;
}

size_t xc_pix_size(void) { return sizeof(struct xc_pix); }

/* The last freed model, kept for the next channel's first image: a short-lived client
 * (xlogo, xeyes) then costs no page faults for it, which were a third of tincan's CPU on
 * such a start-up. One process runs one event loop: no locking. */
static struct xc_pix *kept;

struct xc_pix *xc_pix_new(void)
{
    struct xc_pix *x = kept;
    kept = NULL;
    if (!x)
        x = malloc(sizeof *x);
    if (!x)
        return NULL;
    stretch_init();
    for (size_t i = 0; i < sizeof x->slot / sizeof x->slot[0]; i++)
        x->slot[i] = 2048 << 4, x->check[i] = 0;
    for (unsigned s = 0; s < SET_N; s++)
        for (unsigned n = 0; n < 256; n++)
            for (unsigned i = 0; i <= CM_N; i++)
                x->weight[s][n][i] = 12000; /* 16.16 fixed point: about 0.18 each */
    x->amode = P_ONE / 2;
    x->gmode = P_ONE / 2;
    probs_init(x->same, 16);
    probs_init(&x->quiet[0][0][0], sizeof x->quiet / 2);
    probs_init(x->pad, 256);
    probs_init(&x->field[0][0], sizeof x->field / 2);
    x->last_id = 0;
    return x;
}

void xc_pix_free(struct xc_pix *x)
{
    if (x && !kept)
        kept = x;
    else
        free(x);
}

/* Codes one bit with probability p1 (of a 1, 12 bits) without adapting it. */
static void ac_put(struct ac_enc *a, unsigned p1, unsigned bit)
{
    uint32_t bound = (a->range >> PB) * (P_ONE - p1);
    if (!bit)
        a->range = bound;
    else {
        a->low += bound;
        a->range -= bound;
    }
    while (a->range < (1u << 24)) {
        a->range <<= 8;
        ac_shift_low(a);
    }
}

static unsigned ac_take(struct ac_dec *d, unsigned p1)
{
    uint32_t bound = (d->range >> PB) * (P_ONE - p1);
    unsigned bit = d->code >= bound;
    if (!bit)
        d->range = bound;
    else {
        d->code -= bound;
        d->range -= bound;
    }
    while (d->range < (1u << 24)) {
        d->range <<= 8;
        d->code = d->code << 8 | ac_next(d);
    }
    return bit;
}

/* What the coder of one image does, in both directions: enc set, or dec. */
struct pix_io {
    struct xc_pix *x;
    struct ac_enc *enc;
    struct ac_dec *dec;
};

static uint32_t hash_ctx(unsigned model, unsigned set, uint32_t a, uint32_t b)
{
    uint32_t h = (model + 1) * 0x9e3779b1u ^ set * 0x85ebca6bu;
    h = (h ^ a) * 0xc2b2ae35u;
    h = (h ^ b) * 0x27d4eb2fu;
    return h ^ h >> 15;
}

/* 65536 / (n + 1.5): how far a slot seen n times moves towards each new bit. */
static const uint16_t rate_of[16] = { 43690, 26214, 18724, 14563, 11915, 10082, 8738, 7710,
                                      6898,  6241,  5698,  5242,  4854,  4519,  4228, 3971 };

/* One sample down the bit tree under the models' context hashes. v is coded (encoder)
 * or ignored and the decoded sample returned (decoder). one_bit: the sample is 0 or 255,
 * its first decision alone (a bitmap's: the other seven would be learnt in every context). */
static unsigned code_sample(struct pix_io *io, unsigned set, const uint32_t *h, unsigned v, bool one_bit)
{
    struct xc_pix *x = io->x;
    unsigned node = 1;
    for (int b = 7; b >= (one_bit ? 7 : 0); b--) {
        uint16_t *sl[CM_N];
        int st[CM_N + 1];
        int32_t *w = x->weight[set][node];
        int64_t dot = 0;
        for (unsigned i = 0; i < CM_N; i++) {
            uint32_t hv = (h[i] + node) * 0x9e3779b1u, ix = hv >> (32 - CM_TBITS);
            sl[i] = &x->slot[ix];
            if (x->check[ix] != (uint8_t)hv) {
                x->check[ix] = (uint8_t)hv;
                *sl[i] = 2048 << 4;
            }
            st[i] = stretch_of[*sl[i] >> 4];
            dot += (int64_t)w[i] * st[i];
        }
        st[CM_N] = 256;
        dot += (int64_t)w[CM_N] * 256;
        for (unsigned i = 0; b > 0 && i < CM_N; i++) /* the next decision's slots, either way it goes */
            for (unsigned c = 0; c < 2; c++) {
                uint32_t ix = ((h[i] + 2 * node + c) * 0x9e3779b1u) >> (32 - CM_TBITS);
                __builtin_prefetch(&x->slot[ix], 1);
                __builtin_prefetch(&x->check[ix], 1);
            }
        int p = squash((int)(dot >> 16));
        p = p < 1 ? 1 : p > 4095 ? 4095 : p;
        unsigned bit;
        if (io->enc) {
            bit = v >> b & 1;
            ac_put(io->enc, (unsigned)p, bit);
        } else
            bit = ac_take(io->dec, (unsigned)p);
        int err = (int)(bit << 12) - p;
        for (unsigned i = 0; i <= CM_N; i++) { /* kept within +-256.0: no overflow on any input */
            int32_t nw = w[i] + (int32_t)(((int64_t)st[i] * err) >> CM_LRSHIFT);
            w[i] = nw > CM_WMAX ? CM_WMAX : nw < -CM_WMAX ? -CM_WMAX : nw;
        }
        for (unsigned i = 0; i < CM_N; i++) {
            unsigned pr = *sl[i] >> 4, n = *sl[i] & 15;
            int target = bit ? 4095 : 0;
            pr = (unsigned)((int)pr + (int)(((int64_t)(target - (int)pr) * rate_of[n]) >> 16));
            *sl[i] = (uint16_t)(pr << 4 | (n < CM_LIMIT ? n + 1 : n));
        }
        node = node << 1 | bit;
    }
    return one_bit ? (node & 1 ? 255 : 0) : node & 0xff;
}

/* Coverage quantised: none, some, more than half, full. */
static unsigned q4(unsigned v) { return v == 0 ? 0 : v >= 0xf0 ? 3 : v < 0x80 ? 1 : 2; }

static unsigned clamp255(int v) { return v < 0 ? 0 : v > 255 ? 255 : (unsigned)v; }

/* A plane of w by h samples (rows of w bytes): each sample from its coded neighbours
 * (0 outside the plane). phase: samples per pixel in a row (3 for subpixel glyphs), part
 * of every context; comp: another plane of the same pixels coded before, or NULL. A
 * sample whose six nearest neighbours are all zero (glyph background) is first a single
 * adaptive bit, zero or not. */
static void code_plane(struct pix_io *io, uint8_t *pl, uint32_t w, uint32_t h, unsigned set, unsigned phase,
                       const uint8_t *comp, bool one_bit, const uint8_t *known)
{
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *row = pl + (size_t)y * w, *up = y ? row - w : NULL, *up2 = y > 1 ? up - w : NULL;
        for (uint32_t x = 0; x < w; x++) {
            if (known && known[(size_t)y * w + x])
                continue; /* in place already (a pixel as it was in an earlier image) */
            unsigned W = x ? row[x - 1] : 0, WW = x > 1 ? row[x - 2] : 0;
            unsigned N = up ? up[x] : 0, NW = up && x ? up[x - 1] : 0, NE = up && x + 1 < w ? up[x + 1] : 0;
            unsigned NN = up2 ? up2[x] : 0, NNE = up2 && x + 1 < w ? up2[x + 1] : 0;
            unsigned WWW = x > 2 ? row[x - 3] : 0;
            unsigned NWW = up && x > 1 ? up[x - 2] : 0, ph = phase > 1 ? x % phase : 0;
            /* predictions: the plane through W, N, NW; lines through the row's last two and
             * three samples (subpixel rows are smooth), and the row above's line moved down */
            unsigned grad = clamp255((int)W + (int)N - (int)NW), lin = clamp255(2 * (int)W - (int)WW);
            unsigned quad = clamp255(3 * (int)W - 3 * (int)WW + (int)WWW);
            unsigned lin_n = clamp255((int)N + (int)lin - (int)clamp255(2 * (int)NW - (int)NWW));
            unsigned s = set << 2 | ph;
            uint32_t hh[CM_N] = {
                hash_ctx(0, s, W, 0),
                hash_ctx(1, s, q4(W) | q4(N) << 2 | q4(NW) << 4 | q4(NE) << 6 | (WW > 0) << 8 | (NN > 0) << 9, 0),
                hash_ctx(2, s, grad >> 3, q4(NE)),
                hash_ctx(3, s, W >> 2, WW >> 2),
                hash_ctx(4, s, lin >> 1, N >> 5),
                hash_ctx(5, s, quad >> 2, lin_n >> 3),
            };
            if (!(W | N | NW | NE | WW | NN)) {
                uint8_t *v = &pl[(size_t)y * w + x];
                uint16_t *q = &io->x->quiet[set][ph][(NNE > 0) | (WWW > 0) << 1];
                unsigned nz;
                if (io->enc)
                    ac_bit(io->enc, q, nz = *v != 0);
                else
                    nz = ac_get(io->dec, q);
                if (!nz || one_bit) {
                    *v = nz ? 255 : 0;
                    continue;
                }
            }
            if (comp) { /* another channel of the same pixels, coded before: it moves alike */
                const uint8_t *crow = comp + (size_t)y * w;
                int C = crow[x], CW = x ? crow[x - 1] : 0, CN = y ? (crow - w)[x] : 0;
                hh[3] = hash_ctx(6, s, (unsigned)C, clamp255((int)W + C - CW));
                hh[4] = hash_ctx(7, s, (unsigned)C, clamp255((int)N + C - CN));
                hh[5] = hash_ctx(8, s, (unsigned)C >> 2, (W >> 2) << 8 | N >> 2);
            }
            pl[(size_t)y * w + x] = (uint8_t)code_sample(io, set, hh, pl[(size_t)y * w + x], one_bit);
        }
    }
}

/* A byte through an adaptive bit tree of its own (glyph fields, row padding). */
static unsigned code_tree(struct pix_io *io, uint16_t *t, unsigned v)
{
    unsigned node = 1;
    for (int b = 7; b >= 0; b--) {
        unsigned bit;
        if (io->enc)
            ac_bit(io->enc, &t[node], bit = v >> b & 1);
        else
            bit = ac_get(io->dec, &t[node]);
        node = node << 1 | bit;
    }
    return node & 0xff;
}

/* Rows of stride bytes, the first w of each samples, the rest padding. */
static int code_rows(struct pix_io *io, uint8_t *px, uint32_t w, uint32_t h, uint32_t stride, unsigned set)
{
    uint8_t *pl = malloc((size_t)w * h + 1);
    if (!pl)
        return -ENOMEM;
    for (uint32_t y = 0; io->enc && y < h; y++)
        memcpy(pl + (size_t)y * w, px + (size_t)y * stride, w);
    code_plane(io, pl, w, h, set, 1, NULL, false, NULL);
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *row = px + (size_t)y * stride;
        memcpy(row, pl + (size_t)y * w, w);
        for (uint32_t x = w; x < stride; x++)
            row[x] = (uint8_t)code_tree(io, io->x->pad, row[x]);
    }
    free(pl);
    return 0;
}

/* 32-bit glyph pixels (subpixel text): red, green and blue as three samples in a row of
 * 3w (the coverage at three positions across the pixel); alpha, when it is not green's
 * copy in every pixel (one flag per image), as a plane after them. */
static int code_subpixel(struct pix_io *io, uint8_t *px, uint32_t w, uint32_t h, bool msb)
{
    size_t n = (size_t)w * h;
    uint8_t *pl = malloc(4 * n + 1);
    if (!pl)
        return -ENOMEM;
    uint8_t *alpha = pl + 3 * n;
    unsigned copy = 1;
    for (size_t i = 0; io->enc && i < n; i++) {
        uint32_t v = ld32(px + 4 * i, msb);
        pl[3 * i] = (uint8_t)(v >> 16), pl[3 * i + 1] = (uint8_t)(v >> 8), pl[3 * i + 2] = (uint8_t)v;
        alpha[i] = (uint8_t)(v >> 24);
        copy &= alpha[i] == pl[3 * i + 1];
    }
    if (io->enc)
        ac_bit(io->enc, &io->x->amode, copy);
    else
        copy = ac_get(io->dec, &io->x->amode);
    code_plane(io, pl, 3 * w, h, SET_SUB, 3, NULL, false, NULL);
    if (!copy)
        code_plane(io, alpha, w, h, SET_A, 1, NULL, false, NULL);
    for (size_t i = 0; i < n; i++) {
        uint8_t a = copy ? pl[3 * i + 1] : alpha[i];
        st32(px + 4 * i, (uint32_t)a << 24 | (uint32_t)pl[3 * i] << 16 | (uint32_t)pl[3 * i + 1] << 8 | pl[3 * i + 2], msb);
    }
    free(pl);
    return 0;
}

/* Whether red and blue should go as their differences from green (WebP's "subtract
 * green"): when green predicts them better than their left neighbours do. In a grey image
 * (Adwaita's cursors: emacs's 60 frames of `watch`) the differences are zeros, which cost
 * one quiet bit a sample, where the planes' contexts would learn red = green value by
 * value; in shaded icons they are small. Saturated colours (xterm's icon, flat red and
 * orange) keep their channels: there the differences are large and rough (778 bytes of
 * code as channels, 1240 as differences). Pixels all zero and the earlier image's (filter
 * 13) are not counted: the planes do not code them. The sender's choice, told by a bit. */
static bool green_predicts(const uint8_t *px, size_t n, bool msb, const uint8_t *prev)
{
    uint64_t from_green = 0, from_left = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = ld32(px + 4 * i, msb), left = i ? ld32(px + 4 * (i - 1), msb) : 0;
        if (!v || (prev && ld32(prev + 4 * i, msb) == v))
            continue;
        int r = (int)(v >> 16 & 0xff), g = (int)(v >> 8 & 0xff), b = (int)(v & 0xff);
        from_green += (unsigned)abs(r - g) + (unsigned)abs(b - g);
        from_left += (unsigned)abs(r - (int)(left >> 16 & 0xff)) + (unsigned)abs(b - (int)(left & 0xff));
    }
    return from_green <= from_left;
}

/* 32-bit image pixels: the four channels as planes, green first, each after the first
 * with green's samples as context; red and blue as differences from green when green
 * predicts them (green_predicts: one adaptive bit an image). Given an earlier image of as many pixels (prev), first a
 * bit a pixel, whether it is that image's pixel (its neighbours' bits as context); the
 * planes then code only the others. */
static int code_argb(struct pix_io *io, uint8_t *px, uint32_t w, uint32_t h, bool msb, const uint8_t *prev)
{
    size_t n = (size_t)w * h;
    uint8_t *pl = malloc((prev ? 5 : 4) * n + 1), *same = prev ? pl + 4 * n : NULL;
    if (!pl)
        return -ENOMEM;
    static const unsigned set[4] = { SET_G, SET_R, SET_B, SET_A }, shift[4] = { 8, 16, 0, 24 };
    unsigned diff;
    if (io->enc)
        ac_bit(io->enc, &io->x->gmode, diff = green_predicts(px, n, msb, prev));
    else
        diff = ac_get(io->dec, &io->x->gmode);
    for (size_t i = 0; io->enc && i < n; i++) {
        uint32_t v = ld32(px + 4 * i, msb);
        for (unsigned c = 0; c < 4; c++)
            pl[c * n + i] = (uint8_t)(v >> shift[c]);
        if (diff)
            pl[n + i] -= pl[i], pl[2 * n + i] -= pl[i];
    }
    for (uint32_t y = 0; same && y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            unsigned ctx = (x && same[i - 1]) | (y && same[i - w]) << 1 | (x && y && same[i - w - 1]) << 2 |
                           (y && x + 1 < w && same[i - w + 1]) << 3;
            uint16_t *q = &io->x->same[ctx];
            if (io->enc)
                ac_bit(io->enc, q, same[i] = !memcmp(px + 4 * i, prev + 4 * i, 4));
            else
                same[i] = (uint8_t)ac_get(io->dec, q);
            uint32_t v = ld32(prev + 4 * i, msb);
            for (unsigned c = 0; same[i] && c < 4; c++)
                pl[c * n + i] = (uint8_t)(v >> shift[c]);
            if (diff && same[i])
                pl[n + i] -= pl[i], pl[2 * n + i] -= pl[i];
        }
    for (unsigned c = 0; c < 4; c++)
        code_plane(io, pl + c * n, w, h, set[c], 1, c ? pl : NULL, false, same);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;
        if (diff)
            pl[n + i] += pl[i], pl[2 * n + i] += pl[i];
        for (unsigned c = 0; c < 4; c++)
            v |= (uint32_t)pl[c * n + i] << shift[c];
        st32(px + 4 * i, v, msb);
    }
    free(pl);
    return 0;
}

/* ---- Glyph ids and GLYPHINFOs: the id as its difference from the previous id plus one,
 * then the info's 12 bytes, each byte through a bit tree of its position. */
static unsigned code_byte(struct pix_io *io, unsigned pos, unsigned v) { return code_tree(io, io->x->field[pos], v); }

static void code_glyph_fields(struct pix_io *io, uint8_t *id, uint8_t *info, bool msb)
{
    uint32_t d = io->enc ? ld32(id, msb) - (io->x->last_id + 1) : 0, dd = 0;
    for (unsigned i = 0; i < 4; i++)
        dd |= (uint32_t)code_byte(io, i, d >> 8 * i & 0xff) << 8 * i;
    io->x->last_id += 1 + dd;
    st32(id, io->x->last_id, msb);
    for (unsigned i = 0; i < 12; i++)
        info[i] = (uint8_t)code_byte(io, 4 + i, info[i]);
}

/* The image bytes of glyph g: A8 rows padded to 4 bytes, or 32-bit pixels. */
static uint64_t glyph_bytes(const uint8_t *info, bool argb, bool msb)
{
    uint64_t w = ld16(info, msb), h = ld16(info + 2, msb);
    return argb ? 4 * w * h : ((w + 3) & ~3ull) * h;
}

/* All of an AddGlyphs body (n ids, n GLYPHINFOs, the images). The decoder checks the
 * images' sizes against blen before coding any. */
static int code_glyphs(struct pix_io *io, uint8_t *body, uint32_t blen, uint32_t n, bool argb, bool msb)
{
    uint64_t total = 16ull * n;
    for (uint32_t g = 0; g < n; g++) {
        uint8_t *info = body + 4 * (size_t)n + 12 * (size_t)g;
        code_glyph_fields(io, body + 4 * (size_t)g, info, msb);
        total += glyph_bytes(info, argb, msb);
    }
    if (total != blen)
        return -EBADMSG;
    uint8_t *px = body + 16 * (size_t)n;
    for (uint32_t g = 0; g < n; g++) {
        const uint8_t *info = body + 4 * (size_t)n + 12 * (size_t)g;
        uint32_t w = ld16(info, msb), h = ld16(info + 2, msb);
        int rc = argb ? code_subpixel(io, px, w, h, msb) : code_rows(io, px, w, h, (w + 3) & ~3u, SET_A8);
        if (rc < 0)
            return rc;
        px += glyph_bytes(info, argb, msb);
    }
    return 0;
}

/* A bitmap (depth 1: icons, shape masks): each bit, least significant first (the usual
 * bitmap bit order), a sample of 0 or 255 in a plane of 8 * stride by h, padding bits
 * included, so that the plane's contexts see the shape's edges; one decision a sample. */
static int code_bits(struct pix_io *io, uint8_t *px, uint32_t h, uint32_t stride, const uint8_t *comp)
{
    size_t w = 8 * (size_t)stride, n = w * h;
    uint8_t *pl = malloc(comp ? 2 * n + 1 : n + 1), *cp = comp ? pl + n : NULL;
    if (!pl)
        return -ENOMEM;
    for (size_t i = 0; io->enc && i < n; i++)
        pl[i] = (px[i >> 3] >> (i & 7) & 1) ? 255 : 0;
    for (size_t i = 0; cp && i < n; i++)
        cp[i] = (comp[i >> 3] >> (i & 7) & 1) ? 255 : 0;
    code_plane(io, pl, (uint32_t)w, h, SET_MASK, 1, cp, true, NULL);
    if (!io->enc) {
        memset(px, 0, (size_t)stride * h);
        for (size_t i = 0; i < n; i++)
            px[i >> 3] |= (uint8_t)((pl[i] & 1) << (i & 7));
    }
    free(pl);
    return 0;
}

/* The kinds of image: an AddGlyphs body, a plane of 8-bit samples, 32-bit pixels, bits. */
static int code_any(struct pix_io *io, const struct xc_pix_image *im, uint8_t *p)
{
    if (im->kind == XC_PIX_GLYPHS_A8 || im->kind == XC_PIX_GLYPHS_ARGB)
        return code_glyphs(io, p, im->blen, im->n, im->kind == XC_PIX_GLYPHS_ARGB, im->msb);
    if (im->kind == XC_PIX_PLANE)
        return code_rows(io, p, im->w, im->h, im->stride, SET_MASK);
    if (im->kind == XC_PIX_BITS)
        return code_bits(io, p, im->h, im->stride, im->comp);
    return code_argb(io, p, im->w, im->h, im->msb, im->comp);
}

bool xc_pix_shape_ok(const struct xc_pix_image *im)
{
    if (im->kind == XC_PIX_PLANE)
        return im->w <= im->stride && (uint64_t)im->stride * im->h == im->blen;
    if (im->kind == XC_PIX_ARGB)
        return 4ull * im->w * im->h == im->blen;
    if (im->kind == XC_PIX_BITS)
        return im->h && (uint64_t)im->stride * im->h == im->blen;
    return 16ull * im->n <= im->blen;
}

int xc_pix_encode(struct xc_pix *x, const struct xc_pix_image *im, const uint8_t *p, size_t min, struct buf *out)
{
    /* The coder writes into its input as the decoder does (the same code for both): work
     * on a copy. */
    uint8_t *copy = malloc(im->blen ? im->blen : 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, p, im->blen);
    struct buf code = { 0 };
    struct ac_enc a;
    ac_enc_start(&a, &code);
    struct pix_io io = { x, &a, NULL };
    int rc = code_any(&io, im, copy);
    free(copy);
    if (rc == 0)
        rc = ac_enc_finish(&a, 0);
    bool sized = im->blen <= XC_BIG_BODY; /* larger bodies' codes carry their size already */
    while (rc == 0 && code.len + sized < min) /* zeros the decoder would read anyway */
        if (buf_append(&code, "", 1) < 0)
            rc = -ENOMEM;
    if (rc == 0 && ((sized && buf_put_varint(out, code.len) < 0) || buf_append(out, buf_head(&code), code.len) < 0))
        rc = -ENOMEM;
    buf_free(&code);
    return rc;
}

int xc_pix_decode(struct xc_pix *x, const struct xc_pix_image *im, uint8_t *dst, struct rd *r)
{
    uint64_t n = rd_left(r); /* a large body's code: the rest of it */
    const uint8_t *p;
    int rc = im->blen <= XC_BIG_BODY ? rd_varint(r, &n) : 0;
    if (rc < 0)
        return rc;
    if (n > xc_pix_max_code(im->blen))
        return -EBADMSG;
    if ((rc = rd_bytes(r, &p, (size_t)n)) < 0)
        return rc;
    struct ac_dec d;
    ac_dec_start(&d, p, (size_t)n);
    struct pix_io io = { x, NULL, &d };
    memset(dst, 0, im->blen);
    return code_any(&io, im, dst);
}
