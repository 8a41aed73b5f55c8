/* arith.h -- private to the link's coders (smallcoder.c, textcoder.c): the carry-less
 * binary arithmetic coder, the logistic squash and the adaptive counters both share.
 * Integer only: both ends must compute the same numbers bit for bit. */
#ifndef TINCAN_ARITH_H
#define TINCAN_ARITH_H

#include <stdint.h>
#include <stddef.h>

#define AC_COUNT_LIMIT 60    /* a counter adapts at 1/(n+1.5) until it has seen this many bits */
#define AC_SLOT_START 0x80000000u /* probability 1/2, no bits seen */

/* Floor division by 2^k of a signed value: C leaves >> of negatives to the compiler. */
static inline int64_t asr(int64_t x, unsigned k) { return x >= 0 ? x >> k : -((-x - 1) >> k) - 1; }

/* Probability (12 bits) of a logistic value d/256, at d = -2048 + 128 i: round(4096 / (1 + e^(-i/2 + 8))). */
static const int16_t squash_at[33] = {
    1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048,
    2550, 2994, 3349, 3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095,
};

static inline int squash(int d)
{
    if (d > 2047)
        d = 2047;
    if (d < -2047)
        d = -2047;
    int i = (d + 2048) >> 7, w = (d + 2048) & 127;
    return (squash_at[i] * (128 - w) + squash_at[i + 1] * w + 64) >> 7;
}

/* stretch[p]: the inverse of squash; rate[n]: 65536 / (n + 1.5). */
static inline void arith_tables(int16_t stretch[4096], int32_t rate[AC_COUNT_LIMIT + 1])
{
    int pi = 0;
    for (int d = -2047; d <= 2047; d++) {
        int v = squash(d);
        for (int j = pi; j <= v; j++)
            stretch[j] = (int16_t)d;
        pi = v + 1;
    }
    for (int j = pi; j < 4096; j++)
        stretch[j] = 2047;
    for (int n = 0; n <= AC_COUNT_LIMIT; n++)
        rate[n] = 131072 / (2 * n + 3);
}

/* A counter: 22-bit probability of a 1, 10-bit count of bits seen. Its next value. */
static inline uint32_t counter_next(uint32_t s, int bit, const int32_t rate[AC_COUNT_LIMIT + 1])
{
    uint32_t n = s & 1023;
    int32_t p = (int32_t)(s >> 10), target = bit ? (1 << 22) - 1 : 0;
    p += (int32_t)asr((int64_t)(target - p) * rate[n], 16);
    if (n < AC_COUNT_LIMIT)
        n++;
    return (uint32_t)p << 10 | n;
}

static inline uint32_t mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    return h ^ (h >> 16);
}

/* The carry-less coder: [x1, x2] narrows per bit; equal leading bytes are settled. */
struct ac {
    uint32_t x1, x2, x;
    uint8_t *out;          /* encoding */
    const uint8_t *in;     /* decoding: bytes past the end read as zeros */
    size_t pos, len;       /* bytes settled (encoding) or read (decoding, 4 ahead) */
};

static inline void ac_settle(struct ac *a)
{
    while (((a->x1 ^ a->x2) & 0xff000000u) == 0) {
        if (a->out)
            a->out[a->pos++] = (uint8_t)(a->x2 >> 24);
        else
            a->x = a->x << 8 | (a->pos < a->len ? a->in[a->pos] : 0), a->pos++;
        a->x1 <<= 8;
        a->x2 = a->x2 << 8 | 255;
    }
}

/* Starts decoding in[0, n). */
static inline void ac_start_decoding(struct ac *a, const uint8_t *in, size_t n)
{
    *a = (struct ac){ .x1 = 0, .x2 = 0xffffffffu, .in = in, .len = n };
    for (int k = 0; k < 4; k++)
        a->x = a->x << 8 | (a->pos < n ? in[a->pos] : 0), a->pos++;
}

/* Codes (or decodes, when a->out is NULL) one bit whose probability of a 1 is p/4096. */
static inline int ac_bit(struct ac *a, int p, int bit)
{
    uint32_t mid = a->x1 + ((a->x2 - a->x1) >> 12) * (uint32_t)p;
    if (!a->out)
        bit = a->x <= mid;
    if (bit)
        a->x2 = mid;
    else
        a->x1 = mid + 1;
    ac_settle(a);
    return bit;
}

/* The ending: the fewest leading bytes of a number whose every continuation lies in
 * [x1, x2], so whatever follows the code cannot change its decoding. Encoder and decoder
 * both know x1, x2, so both know its length. */
static inline unsigned ac_ending(const struct ac *a, uint8_t end[4])
{
    for (unsigned k = 1;; k++) {
        unsigned shift = 32 - 8 * k;
        uint64_t start = (((uint64_t)a->x1 + ((1ull << shift) - 1)) >> shift) << shift;
        if (start + ((1ull << shift) - 1) <= a->x2) {
            for (unsigned i = 0; i < k; i++)
                end[i] = (uint8_t)(start >> (24 - 8 * i));
            return k;
        }
    }
}

#endif
