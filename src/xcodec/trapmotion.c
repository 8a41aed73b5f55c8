/* trapmotion.c -- Trapezoids sub-model 3: each value against the same value of earlier
 * trapezoids, of recent bodies (a shape moved, mirrored, or turned step by step) or of
 * this body (an ellipse cut in slices). Encoder and decoder side by side; small bodies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

/* A value is predicted as c[axis] + K[axis] * r1 / 2^29 - r2 from two sources, r1 and r2
 * (or none), the same value of earlier trapezoids. K = 1 without r2: a shape moved
 * (xeyes's second eye). K = -1 on one axis, r1 read mirrored: a shape mirrored (xclock's
 * ticks past 6 and 12 o'clock). r1, r2 d and 2d steps back and K = 2 cos(t): a shape
 * turned by t at each step about any centre, whose share c takes (xclock's ticks, from
 * recent bodies; an ellipse's slices, from this one): cos(a + t) = 2 cos(t) cos(a) -
 * cos(a - t). */
#define K_SHIFT 29
#define TRAP 40              /* bytes of a trapezoid */
_Static_assert(TRAP == XP_RENDER_TRAPEZOID_SIZE, "a trapezoid's coding is wire-frozen");
#define REPEAT_BACK 12       /* values looked back for a repeat in the sources: a trapezoid's
                              * vertices are its own and the one before's */
#define SRC_THIS 64          /* source bytes 64-71: this body, 1-8 trapezoids back */
#define SRC_NONE 255         /* no r2 */
enum { REFL_NONE, REFL_X, REFL_Y, REFL_N };
#define REPEATS_EXACT 0x04   /* in the refl byte: values predicted as repeats have no residual */
#define K_PAIRED 0x08        /* and K of y is not sent: K of x, negated when mirrored (moved,
                              * mirrored and turned shapes all have it so) */
#define SYMMETRIC 0x10       /* and a shape symmetric in x and y (an ellipse) is predicted so */
#define TURN_START 0x20      /* and, turned within this body, the turn starts at the first
                              * trapezoid's top: c follows that trapezoid, as its difference
                              * from what the turn there gives, and the second is turned too */
#define NOT_THERE 1          /* rep[]: a value without its sources (repeats are 4, 8, ... back) */

struct src {
    const uint8_t *p;     /* NULL: none */
    uint32_t back, blen;  /* this body: the value at byte at is p[at - back], there when at >= back */
    bool this_body;
};
struct motion {
    struct src r1, r2;
    uint8_t refl;         /* how both sources are read: as they are, or mirrored in x or y */
    bool sym;             /* SYMMETRIC */
    bool turn_start;      /* TURN_START */
    uint32_t blen;
    uint32_t k[2], c[2];  /* by axis (0 x, 1 y); k: a signed factor in units of 2^-29 */
};

static int64_t s32(uint32_t v) { return v < 0x80000000u ? (int64_t)v : (int64_t)v - 0x100000000; }
static int64_t round_half(double x) { return (int64_t)(x < 0 ? x - 0.5 : x + 0.5); }

/* Where a source's value for byte at lies once mirrored: in x the left and right edges
 * swap (fields 2-5 and 6-9); in y the trapezoids come in reverse order and each turns
 * upside down (top and bottom swap, and each edge's p1 and p2). */
static uint32_t reflect(uint8_t refl, uint32_t at, uint32_t blen)
{
    static const uint8_t fx[10] = { 0, 1, 6, 7, 8, 9, 2, 3, 4, 5 }, fy[10] = { 1, 0, 4, 5, 2, 3, 8, 9, 6, 7 };
    uint32_t t = at / TRAP, f = at % TRAP / 4;
    if (refl == REFL_X)
        return t * TRAP + 4u * fx[f];
    if (refl == REFL_Y)
        return (blen / TRAP - 1 - t) * TRAP + 4u * fy[f];
    return at;
}

/* K of y as K_PAIRED has it. */
static uint32_t paired_k(const struct motion *mo) { return mo->refl ? 0u - mo->k[0] : mo->k[0]; }

static bool src_there(const struct src *s, uint32_t at) { return !s->this_body || at >= s->back; }
static uint32_t src_at(const struct motion *mo, const struct src *s, uint32_t at, bool msb)
{
    if (!s->p)
        return 0;
    return s->this_body ? ld32(s->p + at - s->back, msb) : ld32(s->p + reflect(mo->refl, at, s->blen), msb);
}
static bool there(const struct motion *mo, uint32_t at) { return src_there(&mo->r1, at) && src_there(&mo->r2, at); }

/* Where the sources repeat an earlier value (a vertex in two trapezoids), the value is
 * predicted to repeat that value of this body: the distance back in bytes, or 0. */
static uint32_t repeat_back(const struct motion *mo, uint32_t at, bool msb)
{
    uint32_t a1 = src_at(mo, &mo->r1, at, msb), a2 = src_at(mo, &mo->r2, at, msb);
    for (uint32_t back = 4; back <= 4 * REPEAT_BACK && back <= at; back += 4)
        if (there(mo, at - back) && src_at(mo, &mo->r1, at - back, msb) == a1 &&
            src_at(mo, &mo->r2, at - back, msb) == a2)
            return back;
    return 0;
}

/* K * v / 2^29, rounded down. */
static uint32_t times_k(uint32_t k, uint32_t v)
{
    int64_t p = s32(k) * s32(v); /* |p| <= 2^62 */
    return (uint32_t)(p >= 0 ? p >> K_SHIFT : -((-p - 1) >> K_SHIFT) - 1);
}

/* K * r1 / 2^29 (rounded down) - r2, without c. */
static uint32_t formula(const struct motion *mo, uint32_t at, bool msb)
{
    return times_k(mo->k[xc_trap_axis_y(at)], src_at(mo, &mo->r1, at, msb)) - src_at(mo, &mo->r2, at, msb);
}

/* TURN_START: the c of axis a that a turn starting at the first trapezoid's top gives (its
 * left p1.x the centre's x; the slice before its top as high as it); body: that trapezoid. */
static uint32_t turn_c(const struct motion *mo, const uint8_t *body, unsigned a, bool msb)
{
    if (a == 0)
        return 2 * ld32(body + 8, msb) - times_k(mo->k[0], ld32(body + 8, msb));
    return 2 * ld32(body + 4, msb) - times_k(mo->k[1], ld32(body, msb));
}

/* Without its sources (the first trapezoids of a body that is its own source), a value
 * is predicted from one before it: a y from the trapezoid's top or bottom, a p2.x from
 * its p1.x; a top and each edge's p1.x from the previous trapezoid's bottom and p2.x (a
 * polygon's slices go on where the last ended); in the first trapezoid, the right p1.x
 * from the left one, and the top and left p1.x from 0. */
static uint32_t fallback(const uint8_t *cur, uint32_t at, bool msb)
{
    static const uint8_t same[10] = { 10, 0, 10, 0, 2, 1, 10, 3, 6, 5 }; /* 10: from the previous trapezoid */
    static const uint8_t prev[10] = { 1, 0, 4, 0, 0, 0, 8, 0, 0, 0 };
    unsigned f = at % TRAP / 4;
    if (f == 8) /* the left edge mirrored: l1 + r1 - l2 */
        return ld32(cur + at - 24, msb) + ld32(cur + at - 8, msb) - ld32(cur + at - 16, msb);
    if (same[f] < 10)
        return ld32(cur + at - 4 * (f - same[f]), msb);
    if (at >= TRAP)
        return ld32(cur + at - TRAP + 4 * (prev[f] - f), msb);
    return f == 6 ? ld32(cur + at - 16, msb) : 0;
}

/* A shape symmetric in y and x (SYMMETRIC), where the sources do not repeat a value: a
 * trapezoid whose mirror in y (m, as many from the end as it is from the start) is known
 * is as high as m, and its bottom edge's x values are m's top edge's; a right p2.x
 * otherwise is the left edge mirrored in x. 0 in *how: none of these. */
static uint32_t symmetric(const uint8_t *cur, uint32_t at, uint32_t blen, bool msb, bool *how)
{
    uint32_t t = at / TRAP, f = at % TRAP / 4, m = blen / TRAP - 1 - t;
    const uint8_t *mt = cur + m * TRAP, *tt = cur + t * TRAP;
    *how = true;
    if (m < t && f == 1)
        return ld32(tt, msb) + ld32(mt + 4, msb) - ld32(mt, msb);
    if (m < t && (f == 4 || f == 8))
        return ld32(mt + 4 * f - 8, msb);
    if (f == 8)
        return ld32(tt + 8, msb) + ld32(tt + 24, msb) - ld32(tt + 16, msb);
    *how = false;
    return 0;
}

/* The prediction of the value at byte at; cur holds the body's values before it. rep:
 * repeat_back's answer where the sources are there. */
static uint32_t predict(const struct motion *mo, const uint8_t *cur, uint32_t at, bool msb, uint32_t rep)
{
    if (!there(mo, at) && mo->turn_start && at == TRAP + 4) /* the second bottom, turned */
        return mo->c[1] + times_k(mo->k[1], ld32(cur + 4, msb)) - ld32(cur, msb);
    if (!there(mo, at) && mo->turn_start && at == TRAP + 16) /* and its left p2.x */
        return mo->c[0] + times_k(mo->k[0], ld32(cur + 16, msb)) - ld32(cur + 8, msb);
    if (!there(mo, at))
        return fallback(cur, at, msb);
    if (rep)
        return ld32(cur + at - rep, msb);
    bool how = false;
    uint32_t p = mo->sym ? symmetric(cur, at, mo->blen, msb, &how) : 0;
    return how ? p : formula(mo, at, msb) + mo->c[xc_trap_axis_y(at)];
}

/* Source byte n: recent body n (0-63, B bytes long); this body (64-71), n - 63 trapezoids
 * back; none (255, r2 only). */
static int src_of(const struct xc_model *m, unsigned n, uint32_t blen, const uint8_t *cur, struct src *s)
{
    *s = (struct src){ NULL, 0, blen, false };
    if (n == SRC_NONE)
        return 0;
    if (n >= SRC_THIS && n < SRC_THIS + 8) {
        *s = (struct src){ cur, TRAP * (n - SRC_THIS + 1), blen, true };
        return 0;
    }
    const struct xc_traps *r = m->traps;
    if (n >= SRC_THIS || !r || n >= r->n || r->len[(r->head + n) % XC_TRAPS_KEPT] != blen)
        return -EBADMSG;
    s->p = r->p[(r->head + n) % XC_TRAPS_KEPT];
    return 0;
}

int xc_traps_motion_decode(const struct xc_model *m, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint8_t h[3];
    uint64_t v[4];
    struct motion mo;
    int rc;
    for (unsigned i = 0; i < 3; i++)
        if ((rc = rd_u8(r, &h[i])) < 0)
            return rc;
    mo.refl = h[2] & 3;
    mo.sym = h[2] & SYMMETRIC;
    mo.turn_start = h[2] & TURN_START;
    mo.blen = blen;
    bool exact = h[2] & REPEATS_EXACT, paired = h[2] & K_PAIRED;
    if (h[0] == SRC_NONE || src_of(m, h[0], blen, dst, &mo.r1) < 0 || src_of(m, h[1], blen, dst, &mo.r2) < 0 ||
        (h[2] & ~(3 | REPEATS_EXACT | K_PAIRED | SYMMETRIC | TURN_START)) ||
        (mo.turn_start && (h[0] != SRC_THIS || h[1] != SRC_THIS + 1 || blen < 2 * TRAP)) || mo.refl >= REFL_N || (mo.refl && (mo.r1.this_body || mo.r2.this_body)))
        return -EBADMSG;
    for (unsigned i = 0; i < 4; i++) {
        if ((i == 1 && paired) || (i >= 2 && mo.turn_start)) {
            v[i] = 0;
            continue;
        }
        if ((rc = rd_varint(r, &v[i])) < 0)
            return rc;
        if (v[i] > 0xffffffffu)
            return -EBADMSG;
    }
    for (unsigned a = 0; a < 2; a++)
        mo.k[a] = xc_unzz32((uint32_t)v[a]), mo.c[a] = xc_unzz32((uint32_t)v[2 + a]);
    if (paired)
        mo.k[1] = paired_k(&mo);
    for (uint32_t at = 0; at + 4 <= blen; at += 4) {
        uint32_t rep = there(&mo, at) ? repeat_back(&mo, at, msb) : NOT_THERE;
        uint64_t d = 0;
        if (!(exact && rep >= 4)) {
            if ((rc = rd_varint(r, &d)) < 0)
                return rc;
            if (d > 0xffffffffu)
                return -EBADMSG;
        }
        st32(dst + at, predict(&mo, dst, at, msb, rep) + xc_unzz32((uint32_t)d), msb);
        for (unsigned a = 0; at == TRAP - 4 && mo.turn_start && a < 2; a++) { /* c, after the first */
            if ((rc = rd_varint(r, &d)) < 0)
                return rc;
            if (d > 0xffffffffu)
                return -EBADMSG;
            mo.c[a] = turn_c(&mo, dst, a, msb) + xc_unzz32((uint32_t)d);
        }
    }
    return 0;
}

int xc_traps_keep(struct xc_model *m, const uint8_t *body, uint32_t blen)
{
    /* A channel granted no store keeps none (both ends know its store). */
    if (blen < TRAP || blen > XC_TRAPS_MAX || !m->store_cap)
        return 0;
    if (!m->traps && !(m->traps = calloc(1, sizeof *m->traps)))
        return -ENOMEM;
    struct xc_traps *t = m->traps;
    unsigned i = (t->head + XC_TRAPS_KEPT - 1) % XC_TRAPS_KEPT;
    if (t->len[i] != blen) {
        uint8_t *p = realloc(t->p[i], blen);
        if (!p)
            return -ENOMEM;
        t->p[i] = p;
    }
    memcpy(t->p[i], body, blen);
    t->len[i] = blen;
    t->head = i;
    if (t->n < XC_TRAPS_KEPT)
        t->n++;
    return 0;
}

/* The encoder's side. Least-squares sums of y = v + r2 against x = r1 over the values the
 * formula predicts, per axis, to fit K and c. */
struct sums {
    double n[2], sx[2], sy[2], sxy, sxx;
};
/* Kinds of motion: moved, mirrored in x or y, turned from bodies d = 1-5 back, turned
 * within the body. Per kind the parameters last sent, tried again so that their bytes
 * repeat for zstd, and for the turned ones the sums of the bodies coded so (a fit over a
 * whole clock face is finer than over one tick). Encoder only. */
enum { KIND_MOVED, KIND_MIRROR_X, KIND_MIRROR_Y, KIND_TURNED, KIND_THIS = KIND_TURNED + 5, KINDS };
#define MOVED_TRIES 8     /* recent bodies tried as moved, mirrored: the first of B bytes */
#define MIRROR_TRIES 40
#define THIS_MAX_BITS 6   /* a body turned within itself: at most this guess of bits a value */
#define THIS_SLACK 256.0  /* and its first slices with sources within this of a turn (1/65536 px) */
#define SEEN_SLOTS 4096 /* hashes of table codes sent, direct-mapped */
struct xc_trap_hints {
    struct {
        bool set;
        uint32_t k[2], c[2];
        struct sums acc;
    } h[KINDS];
    uint64_t seen[SEEN_SLOTS];
};

static void sums_add(struct sums *s, const struct sums *t)
{
    for (unsigned a = 0; a < 2; a++)
        s->n[a] += t->n[a], s->sx[a] += t->sx[a], s->sy[a] += t->sy[a];
    s->sxy += t->sxy, s->sxx += t->sxx;
}

/* fit: only the values that mo's K and c predict within FIT_SLACK (NULL: all). */
#define FIT_SLACK 64 /* in 1/65536 pixel */
static void sums_of(const struct motion *mo, const uint8_t *body, uint32_t blen, bool msb, const uint32_t *rep,
                    const struct motion *fit, struct sums *s)
{
    memset(s, 0, sizeof *s);
    for (uint32_t at = 0; at + 4 <= blen; at += 4) {
        if (rep[at / 4] != 0)
            continue;
        if (fit && ld32(body + at, msb) - predict(fit, body, at, msb, 0) + FIT_SLACK > 2 * FIT_SLACK)
            continue;
        unsigned a = xc_trap_axis_y(at);
        double x = (double)s32(src_at(mo, &mo->r1, at, msb));
        double y = (double)s32(ld32(body + at, msb)) + (double)s32(src_at(mo, &mo->r2, at, msb));
        s->n[a]++, s->sx[a] += x, s->sy[a] += y, s->sxy += x * y, s->sxx += x * x;
    }
}

/* One K for both axes (unless k_fixed: mo's) and c from sums; false when K is out of
 * range or unknown. */
static bool solve(const struct sums *s, bool k_fixed, struct motion *mo)
{
    if (!k_fixed) {
        double num = s->sxy, den = s->sxx;
        for (unsigned a = 0; a < 2; a++)
            if (s->n[a])
                num -= s->sx[a] * s->sy[a] / s->n[a], den -= s->sx[a] * s->sx[a] / s->n[a];
        if (!(den > 0))
            return false;
        double kk = num / den * (1u << K_SHIFT);
        if (!(kk > -2147483648.0 && kk < 2147483647.0))
            return false;
        mo->k[0] = mo->k[1] = (uint32_t)(int32_t)round_half(kk);
    }
    for (unsigned a = 0; a < 2; a++) {
        double k = (double)s32(mo->k[a]) / (1u << K_SHIFT);
        mo->c[a] = s->n[a] ? (uint32_t)round_half((s->sy[a] - k * s->sx[a]) / s->n[a]) : 0;
    }
    return true;
}

/* What zstd is guessed to make of a residual: zero bytes come almost free. */
static unsigned residual_bits(uint64_t z)
{
    return z == 0 ? 1 : z < 8 ? 4 : 8 * xc_varint_len(z);
}

/* c as sent: itself, or with TURN_START its difference from the turn's. */
static uint32_t c_sent(const struct motion *mo, const uint8_t *body, unsigned a, bool msb)
{
    return mo->turn_start ? mo->c[a] - turn_c(mo, body, a, msb) : mo->c[a];
}

static unsigned param_bytes(const struct motion *mo, const uint8_t *body, bool msb)
{
    unsigned n = 3;
    for (unsigned a = 0; a < 2; a++)
        n += xc_varint_len(xc_zz32(mo->k[a])) + xc_varint_len(xc_zz32(c_sent(mo, body, a, msb)));
    return mo->k[1] == paired_k(mo) ? n - xc_varint_len(xc_zz32(mo->k[1])) : n;
}

/* Whether every value predicted as a repeat is one (its residual then not sent). */
static bool repeats_exact(const uint8_t *body, uint32_t blen, bool msb, const uint32_t *rep)
{
    for (uint32_t at = 0; at + 4 <= blen; at += 4)
        if (rep[at / 4] >= 4 && ld32(body + at, msb) != ld32(body + at - rep[at / 4], msb))
            return false;
    return true;
}

/* The guessed cost of mo's code in bits; params_old: its K and c were sent last time.
 * *all_zero: whether every residual is 0. */
static unsigned cost_bits(const struct motion *mo, const uint8_t *body, uint32_t blen, bool msb, const uint32_t *rep,
                          bool params_old, bool *all_zero)
{
    unsigned bits = params_old && !mo->turn_start ? 16 : 8 * param_bytes(mo, body, msb);
    bool exact = repeats_exact(body, blen, msb, rep);
    *all_zero = true;
    for (uint32_t at = 0; at + 4 <= blen; at += 4)
        if (!(exact && rep[at / 4] >= 4)) {
            uint64_t z = xc_zz32(ld32(body + at, msb) - predict(mo, body, at, msb, rep[at / 4]));
            bits += residual_bits(z);
            *all_zero = *all_zero && z == 0;
        }
    return bits;
}

struct best {
    unsigned bits, kind;
    uint8_t srcs[2];
    bool fitted; /* by this body's sums alone */
    bool perfect; /* every value predicted exactly */
    struct motion mo;
    struct sums s;
};

static void rep_of(const struct motion *mo, uint32_t blen, bool msb, uint32_t *rep)
{
    for (uint32_t i = 0; i < blen / 4; i++)
        rep[i] = there(mo, 4 * i) ? repeat_back(mo, 4 * i, msb) : NOT_THERE;
}

/* Whether a shape moved or mirrored from the sources may be this one, by its first
 * trapezoid: every value there at the same offset (up to rounding) from the formula, per
 * axis. Most recent bodies are other shapes: this spares fitting them. */
#define PLAUSIBLE_SLACK 16 /* in 1/65536 pixel */
static bool plausible(const struct motion *mo, const uint8_t *body, bool msb)
{
    uint32_t first[2] = { 0, 0 };
    for (uint32_t at = 0; at < TRAP; at += 4) {
        unsigned a = xc_trap_axis_y(at);
        uint32_t d = ld32(body + at, msb) - formula(mo, at, msb);
        if (at == 0 || at == 8)
            first[a] = d; /* the first y and the first x */
        else if (d - first[a] + PLAUSIBLE_SLACK > 2 * PLAUSIBLE_SLACK)
            return false;
    }
    return true;
}

/* Whether a shape turned from the sources may be this one, by the x values of its first
 * trapezoid with sources: K and c from two, the others within slack (1/65536 pixel). */
static bool plausible_turned(const struct motion *mo, const uint8_t *body, uint32_t blen, bool msb, double slack)
{
    uint32_t t = 0;
    while (t + TRAP <= blen && !there(mo, t))
        t += TRAP;
    if (t + TRAP > blen)
        return true;
    double y[4], x[4];
    for (unsigned i = 0; i < 4; i++) { /* left p1.x, p2.x, right p1.x, p2.x */
        uint32_t at = t + 8 + 8 * i;
        x[i] = (double)s32(src_at(mo, &mo->r1, at, msb));
        y[i] = (double)s32(ld32(body + at, msb)) + (double)s32(src_at(mo, &mo->r2, at, msb));
    }
    unsigned a = 0, b = 1;
    while (b < 4 && x[b] == x[a])
        b++;
    if (b == 4)
        return true;
    double k = (y[b] - y[a]) / (x[b] - x[a]), c = y[a] - k * x[a];
    for (unsigned i = 0; i < 4; i++)
        if (y[i] - k * x[i] - c > slack || y[i] - k * x[i] - c < -slack)
            return false;
    return true;
}

/* Tries one pair of sources with the parameters fitted, last sent and accumulated. */
static void try_sources(struct xc_trap_hints *th, unsigned kind, uint8_t s1, uint8_t s2, const struct motion *base,
                        const uint8_t *body, uint32_t blen, bool msb, uint32_t *rep, struct best *b)
{
    if (kind < KIND_TURNED ? !plausible(base, body, msb)
                           : kind == KIND_THIS && !plausible_turned(base, body, blen, msb, THIS_SLACK))
        return; /* a body's own slices turn closely (a clock's ticks next to a longer one do not) */
    rep_of(base, blen, msb, rep);
    struct sums s;
    sums_of(base, body, blen, msb, rep, NULL, &s);
    bool k_fixed = kind < KIND_TURNED;
    for (unsigned how = 0; how < 3; how++) { /* last sent, fitted, accumulated */
        struct motion mo = *base;
        if (how == 0) {
            if (!th->h[kind].set)
                continue;
            memcpy(mo.k, th->h[kind].k, sizeof mo.k), memcpy(mo.c, th->h[kind].c, sizeof mo.c);
        } else if (how == 1) {
            if (!solve(&s, k_fixed, &mo))
                continue;
        } else {
            struct sums acc = th->h[kind].acc;
            if (k_fixed || acc.n[0] + acc.n[1] == 0)
                continue;
            sums_add(&acc, &s);
            if (!solve(&acc, false, &mo))
                continue;
        }
        bool zero;
        unsigned bits = cost_bits(&mo, body, blen, msb, rep, how == 0, &zero);
        if (bits < b->bits)
            *b = (struct best){ bits, kind, { s1, s2 }, how == 1, zero, mo, s };
    }
}

/* Adds a body's sums to those of its kind, or starts them again from it when it turned by
 * another angle (another K: another clock). */
static void remember_sums(struct sums *acc, const struct best *b)
{
    struct motion fit = b->mo, all = b->mo;
    if ((b->fitted || solve(&b->s, false, &fit)) && solve(acc, false, &all) &&
        llabs(s32(all.k[0]) - s32(fit.k[0])) < (1 << K_SHIFT) / 1000) {
        sums_add(acc, &b->s);
        return;
    }
    *acc = b->s;
}

static int motion_put(const struct best *b, const uint8_t *body, uint32_t blen, bool msb, const uint32_t *rep,
                      struct buf *out)
{
    const struct motion *mo = &b->mo;
    bool exact = repeats_exact(body, blen, msb, rep), paired = mo->k[1] == paired_k(mo);
    uint8_t h[4] = { XC_TRAPS_MOTION, b->srcs[0], b->srcs[1],
                     (uint8_t)(mo->refl | (exact ? REPEATS_EXACT : 0) | (paired ? K_PAIRED : 0) |
                               (mo->sym ? SYMMETRIC : 0) | (mo->turn_start ? TURN_START : 0)) };
    if (buf_append(out, h, 4) < 0)
        return -ENOMEM;
    for (unsigned i = 0; i < 4; i++)
        if (!(i == 1 && paired) && !(i >= 2 && mo->turn_start) &&
            buf_put_varint(out, xc_zz32(i < 2 ? mo->k[i] : mo->c[i - 2])) < 0)
            return -ENOMEM;
    for (uint32_t at = 0; at + 4 <= blen; at += 4) {
        if (!(exact && rep[at / 4] >= 4) &&
            buf_put_varint(out, xc_zz32(ld32(body + at, msb) - predict(mo, body, at, msb, rep[at / 4]))) < 0)
            return -ENOMEM;
        for (unsigned a = 0; at == TRAP - 4 && mo->turn_start && a < 2; a++)
            if (buf_put_varint(out, xc_zz32(c_sent(mo, body, a, msb))) < 0)
                return -ENOMEM;
    }
    return 0;
}

/* The candidates: recent bodies of B bytes moved or mirrored; turned from the bodies d - 1
 * and 2d - 1 back (d = 1-5); turned within the body, slice by slice. */
static void search(const struct xc_model *m, struct xc_trap_hints *th, const uint8_t *body, uint32_t blen, bool msb,
                   uint32_t *rep, struct best *b)
{
    const uint32_t one = 1u << K_SHIFT, minus = 0u - one;
    /* A candidate predicting every value exactly cannot be beaten by much: the search,
     * which on gtk3's many rounded corners (the same shape moved) cost a sixth of the app
     * side's CPU, ends there. */
    unsigned same = 0;
    for (unsigned i = 0; m->traps && i < m->traps->n && same < MIRROR_TRIES && !b->perfect; i++) {
        struct motion mo = { .k = { one, one } };
        if (src_of(m, i, blen, body, &mo.r1) < 0)
            continue;
        src_of(m, SRC_NONE, blen, body, &mo.r2);
        if (same++ < MOVED_TRIES)
            try_sources(th, KIND_MOVED, (uint8_t)i, SRC_NONE, &mo, body, blen, msb, rep, b);
        mo.refl = REFL_X, mo.k[0] = minus;
        try_sources(th, KIND_MIRROR_X, (uint8_t)i, SRC_NONE, &mo, body, blen, msb, rep, b);
        mo.refl = REFL_Y, mo.k[0] = one, mo.k[1] = minus;
        try_sources(th, KIND_MIRROR_Y, (uint8_t)i, SRC_NONE, &mo, body, blen, msb, rep, b);
    }
    for (unsigned d = 1; d <= 5 && !b->perfect; d++) {
        struct motion mo = { .k = { one, one } };
        if (src_of(m, d - 1, blen, body, &mo.r1) == 0 && src_of(m, 2 * d - 1, blen, body, &mo.r2) == 0)
            try_sources(th, KIND_TURNED + d - 1, (uint8_t)(d - 1), (uint8_t)(2 * d - 1), &mo, body, blen, msb, rep, b);
    }
    for (int how = 0; how < 4 && blen >= 3 * TRAP && !b->perfect; how++) { /* an ellipse: symmetric, from its top */
        struct motion mo = { .k = { one, one }, .sym = how & 1, .turn_start = how >> 1, .blen = blen };
        src_of(m, SRC_THIS, blen, body, &mo.r1);
        src_of(m, SRC_THIS + 1, blen, body, &mo.r2);
        try_sources(th, KIND_THIS, SRC_THIS, SRC_THIS + 1, &mo, body, blen, msb, rep, b);
    }
}

void xc_trap_hints_free(struct xc_model *m)
{
    free(m->trap_hints);
    m->trap_hints = NULL;
    for (unsigned i = 0; m->traps && i < XC_TRAPS_KEPT; i++)
        free(m->traps->p[i]);
    free(m->traps);
    m->traps = NULL;
}

static uint64_t code_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u ^ n;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h | 1; /* 0: an empty slot */
}

int xc_traps_motion_encode(struct xc_model *m, const uint8_t *body, uint32_t blen, bool msb, struct buf *out,
                           size_t mark, uint32_t min)
{
    if (blen > XC_TRAPS_MAX || blen % TRAP)
        return 0;
    if (!m->trap_hints && !(m->trap_hints = calloc(1, sizeof *m->trap_hints)))
        return -ENOMEM;
    struct xc_trap_hints *th = m->trap_hints;
    /* A table code sent before (a shape drawn again, elsewhere: the table codes of moved
     * shapes are alike) costs zstd next to nothing: kept, and kept the same. */
    uint64_t h = code_hash(buf_head(out) + mark, out->len - mark), *seen = &th->seen[h % SEEN_SLOTS];
    if (*seen == h)
        return 0;
    uint32_t rep[XC_TRAPS_MAX / 4];
    struct best b;
    memset(&b, 0, sizeof b);
    b.bits = ~0u;
    search(m, th, body, blen, msb, rep, &b);
    if (b.kind == KIND_THIS && b.bits > THIS_MAX_BITS * (blen / 4))
        b.bits = ~0u; /* not an ellipse: the table codes of rounded shapes drawn again repeat better */
    if (b.bits == ~0u) {
        *seen = h;
        return 0;
    }

    struct buf alt = { 0 };
    int rc = 0;
    rep_of(&b.mo, blen, msb, rep);
    if (motion_put(&b, body, blen, msb, rep, &alt) < 0)
        rc = -ENOMEM;
    else if (alt.len * 5 <= (out->len - mark) * 4 && alt.len >= min) {
        /* a fifth shorter at least: table codes repeat better for zstd; a decoder refuses
         * codes shorter than min */
        out->len = mark;
        rc = buf_append(out, buf_head(&alt), alt.len);
        th->h[b.kind].set = true;
        memcpy(th->h[b.kind].k, b.mo.k, sizeof b.mo.k), memcpy(th->h[b.kind].c, b.mo.c, sizeof b.mo.c);
        if (b.kind >= KIND_TURNED) {
            sums_of(&b.mo, body, blen, msb, rep, &b.mo, &b.s); /* the values it turned well */
            remember_sums(&th->h[b.kind].acc, &b);
        }
    } else
        *seen = h;
    buf_free(&alt);
    return rc;
}
