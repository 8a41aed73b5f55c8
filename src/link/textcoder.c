/* textcoder.c -- context mixing for text-like link writes (textcoder.h). Workload: writes
 * of 1-16 KiB, most of their bytes printable (a terminal's output: each line a few X
 * requests and its characters), a few a second. Per bit: seven hashed contexts in
 * buckets of one cache line per nibble, an order-0 table, a match model and a bias, mixed
 * by two mixers (weights chosen by the partial byte, the match state and the last byte's
 * kind; by the last byte and the bit's position), averaged. Integer only. About 1.4 us a
 * byte, most of it waiting for the buckets. */
#include "link/textcoder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/arith.h"

#define TC_HASHED 7               /* contexts: orders 1, 2, 3, the word, two sparse, the frame */
#define TC_INPUTS (TC_HASHED + 3) /* ... order 0, the match, a bias */
#define TC_BUCKET_BITS 16         /* 2^16 buckets of 16 counters: 4 MiB */
#define TC_MTAB_BITS 16           /* where each 6-byte context was last seen */
#define TC_MINLEN 6               /* bytes a match must have to be followed */
#define TC_MAXLEN 15              /* match lengths beyond this count as this */
#define TC_MIX_SHIFT 10           /* the mixer's learning rate: 2^-10 */
#define TC_ERR_MIN 32              /* a mixer learns from errors at least this large (of 4096) */
#define TC_COUNT_LIMIT 30         /* a counter's rate stops falling at 1/(n+1.5) */
#define TC_MIX_START 19661        /* each context's first weight: 0.3 in 16.16 */

struct tc_model {
    uint32_t bucket[1u << TC_BUCKET_BITS][16]; /* per context and nibble: counters 1-15 are
                                                * the nibble's tree (0 unused) */
    uint32_t order0[256];                      /* by partial byte */
    int32_t weight[1024][TC_INPUTS];           /* by partial byte, whether a match speaks and
                                                * whether the last byte was printable */
    int32_t weight2[256 * 8][TC_INPUTS];       /* a second mixer: by the last byte and the
                                                * partial byte's bit count */
    uint32_t mslot[TC_MAXLEN + 1][2];          /* the match: by length and predicted bit */
    int16_t stretch[4096];
    int32_t rate[AC_COUNT_LIMIT + 1];
    uint8_t ring[TC_HISTORY];                  /* the direction's last bytes */
    uint32_t mtab[1u << TC_MTAB_BITS];         /* (position + 1) after a context, 0: none */
    uint64_t pos;                              /* history bytes so far */
    uint64_t mptr;                             /* the byte a match predicts next */
    unsigned mlen;                             /* its length, 0: no match */
    uint64_t last;                             /* the last 8 bytes, newest lowest */
    uint32_t word, prev_word;                  /* hashes of the current and last word */
    /* Where the next byte is in the link's frames (PROTOCOL.md 2): writes are whole frames. */
    uint8_t fstate, ftype, fb0;                /* fstate: 0 type, 1 channel, 2 length, 3 payload */
    unsigned fshift;
    uint32_t flen, foff;
    size_t feed_left;                          /* of the chunk being fed */
};

size_t tc_memory(void) { return sizeof(struct tc_model); }

int tc_new(struct tc_model **out)
{
    struct tc_model *m = malloc(sizeof *m);
    if (!m)
        return -ENOMEM;
    for (size_t i = 0; i < (1u << TC_BUCKET_BITS); i++) {
        m->bucket[i][0] = 0;
        for (int j = 1; j < 16; j++)
            m->bucket[i][j] = AC_SLOT_START;
    }
    for (int i = 0; i < 256; i++)
        m->order0[i] = AC_SLOT_START;
    for (int c = 0; c < 1024; c++) {
        for (int i = 0; i < TC_INPUTS; i++)
            m->weight[c][i] = TC_MIX_START;
        m->weight[c][TC_HASHED + 1] = c & 256 ? 2 * TC_MIX_START : 0; /* the match */
        m->weight[c][TC_HASHED + 2] = 0;                               /* the bias */
    }
    for (int c = 0; c < 256 * 8; c++) {
        for (int i = 0; i < TC_INPUTS; i++)
            m->weight2[c][i] = TC_MIX_START;
        m->weight2[c][TC_HASHED + 2] = 0;
    }
    for (int l = 0; l <= TC_MAXLEN; l++)
        m->mslot[l][0] = m->mslot[l][1] = AC_SLOT_START;
    arith_tables(m->stretch, m->rate);
    for (int n = TC_COUNT_LIMIT; n <= AC_COUNT_LIMIT; n++) /* adapts faster than the small coder */
        m->rate[n] = m->rate[TC_COUNT_LIMIT];
    memset(m->ring, 0, sizeof m->ring);
    memset(m->mtab, 0, sizeof m->mtab);
    m->pos = m->mptr = m->last = 0;
    m->mlen = 0;
    m->word = m->prev_word = 0;
    tc_write_start(m, 0);
    *out = m;
    return 0;
}

void tc_free(struct tc_model *m) { free(m); }

static uint32_t hash2(uint32_t tag, uint64_t v)
{
    return mix32(tag * 0x9e3779b1u ^ mix32((uint32_t)v + 0x85ebca6bu * (uint32_t)(v >> 32)));
}

/* The hashed contexts of the next byte. */
static void contexts(const struct tc_model *m, uint32_t h[TC_HASHED])
{
    h[0] = hash2(1, m->last & 0xff);
    h[1] = hash2(2, m->last & 0xffff);
    h[2] = hash2(3, m->last & 0xffffff);
    /* In a word: its letters so far; between words: the last word and byte. */
    h[3] = m->word ? hash2(6, m->word) : hash2(7, (uint64_t)m->prev_word << 8 | (m->last & 0xff));
    /* Skipping the last byte (or two): X fields after a byte of junk (an unused field's
     * leftover) or of changing value (a length, a count). */
    h[4] = hash2(9, m->last & 0xffff00);
    h[5] = hash2(10, m->last & 0xffffff0000ull);
    /* Where in a frame (its type, the payload's offset and first byte) and the last byte. */
    h[6] = hash2(11, (uint64_t)(m->fstate | m->ftype << 8 | (m->foff < 24 ? m->foff : 24) << 16 |
                                (uint32_t)(m->foff ? m->fb0 : 0) << 24) << 8 | (m->last & 0xff));
}

/* The bucket of context h at partial byte c0: of two neighbours, the one whose check word
 * (counter 0) is this context's, else the one that has seen fewer bits, emptied for it. */
static uint32_t *bucket_of(struct tc_model *m, uint32_t h, unsigned c0)
{
    uint32_t x = mix32(h + c0 * 0x2545f491u), check = (x & 0xffffu) | 1u; /* never 0: empty */
    uint32_t *a = m->bucket[x >> (32 - TC_BUCKET_BITS)], *b = m->bucket[(x >> (32 - TC_BUCKET_BITS)) ^ 1];
    if (a[0] == check)
        return a;
    if (b[0] == check)
        return b;
    uint32_t *v = (a[1] & 1023) <= (b[1] & 1023) ? a : b;
    v[0] = check;
    for (int j = 1; j < 16; j++)
        v[j] = AC_SLOT_START;
    return v;
}

static uint32_t ring_mask(void) { return TC_HISTORY - 1; }

void tc_write_start(struct tc_model *m, size_t limit)
{
    m->feed_left = limit;
    m->fstate = m->ftype = m->fb0 = 0;
    m->fshift = 0;
    m->flen = m->foff = 0;
}

/* After byte c: where it leaves the frame being read (any bytes make some state). */
static void frame_step(struct tc_model *m, uint8_t c)
{
    switch (m->fstate) {
    case 0:
        m->ftype = c;
        m->fstate = 1;
        break;
    case 1:
        if (!(c & 0x80))
            m->fstate = 2, m->flen = 0, m->fshift = 0;
        break;
    case 2:
        m->flen |= (uint32_t)(c & 0x7f) << m->fshift;
        m->fshift += 7;
        if (!(c & 0x80) || m->fshift > 21) {
            m->fstate = m->flen && !(c & 0x80) ? 3 : 0;
            m->foff = 0;
        }
        break;
    default:
        if (!m->foff)
            m->fb0 = c;
        if (++m->foff >= m->flen)
            m->fstate = 0;
    }
}

/* After byte c: the history, the word, the match followed or looked up. */
static void history_add(struct tc_model *m, uint8_t c, bool follow)
{
    if (follow && m->mlen && m->ring[m->mptr & ring_mask()] == c) {
        m->mptr++;
        m->mlen += m->mlen < TC_MAXLEN;
    } else {
        m->mlen = 0;
    }
    m->ring[m->pos & ring_mask()] = c;
    m->pos++;
    m->last = m->last << 8 | c;
    frame_step(m, c);
    unsigned lower = c | 0x20u;
    if (lower >= 'a' && lower <= 'z') {
        m->word = (m->word + lower + 1) * 0x01000193u;
    } else if (m->word) {
        m->prev_word = m->word;
        m->word = 0;
    }
    if (m->pos < TC_MINLEN)
        return;
    uint32_t *slot = &m->mtab[hash2(8, m->last & 0xffffffffffffull) >> (32 - TC_MTAB_BITS)];
    if (follow && !m->mlen && *slot) {
        uint32_t back = (uint32_t)m->pos - (*slot - 1); /* positions are kept mod 2^32 */
        uint64_t cand = m->pos - back;
        unsigned len = 0;
        if (back && back < TC_HISTORY - TC_MAXLEN)
            while (len < TC_MAXLEN && cand > len &&
                   m->ring[(cand - 1 - len) & ring_mask()] == m->ring[(m->pos - 1 - len) & ring_mask()])
                len++;
        if (len >= TC_MINLEN) {
            m->mptr = cand;
            m->mlen = len;
        }
    }
    *slot = (uint32_t)m->pos + 1;
}

void tc_feed(struct tc_model *m, const uint8_t *p, size_t n)
{
    if (n > m->feed_left)
        n = m->feed_left;
    m->feed_left -= n;
    for (size_t i = 0; i < n; i++)
        history_add(m, p[i], false);
    m->mlen = 0;
}

struct bitstep {
    uint32_t *slot[TC_HASHED + 2]; /* the contexts', order 0's, the match's (or NULL) */
    int st[TC_INPUTS];
    unsigned set, set2;
    int p1, p2;                    /* the mixers' probabilities */
    int p;                         /* 12-bit probability of a 1: their average */
};

static void predict(struct tc_model *m, uint32_t *const bk[TC_HASHED], unsigned node, unsigned c0, int k,
                    struct bitstep *b)
{
    b->slot[TC_HASHED + 1] = NULL;
    b->st[TC_HASHED + 1] = 0;
    if (m->mlen) {
        unsigned want = m->ring[m->mptr & ring_mask()];
        if (((want | 256u) >> (k + 1)) == c0) {
            b->slot[TC_HASHED + 1] = &m->mslot[m->mlen][(want >> k) & 1];
            b->st[TC_HASHED + 1] = m->stretch[*b->slot[TC_HASHED + 1] >> 20];
        }
    }
    unsigned c1 = m->last & 0xff;
    b->set = c0 | (b->slot[TC_HASHED + 1] ? 256u : 0) | (c1 >= 0x20 && c1 < 0x7f ? 512u : 0);
    b->set2 = c1 << 3 | (unsigned)(7 - k);
    const int32_t *w = m->weight[b->set], *w2 = m->weight2[b->set2];
    for (int i = 0; i < TC_HASHED; i++) {
        b->slot[i] = &bk[i][node];
        b->st[i] = m->stretch[*b->slot[i] >> 20];
    }
    b->slot[TC_HASHED] = &m->order0[c0];
    b->st[TC_HASHED] = m->stretch[m->order0[c0] >> 20];
    b->st[TC_HASHED + 2] = 256;
    int64_t dot = 0, dot2 = 0;
    for (int i = 0; i < TC_INPUTS; i++) {
        dot += (int64_t)w[i] * b->st[i];
        dot2 += (int64_t)w2[i] * b->st[i];
    }
    int d1 = (int)asr(dot, 16), d2 = (int)asr(dot2, 16);
    d1 = d1 > 2047 ? 2047 : d1 < -2047 ? -2047 : d1;
    d2 = d2 > 2047 ? 2047 : d2 < -2047 ? -2047 : d2;
    b->p1 = squash(d1);
    b->p2 = squash(d2);
    int p = squash((d1 + d2) >> 1);
    b->p = p < 1 ? 1 : p > 4095 ? 4095 : p;
}

/* One mixer's weights learn from its error. */
static void train(int32_t *w, const struct bitstep *b, int32_t err)
{
    if (err > -TC_ERR_MIN && err < TC_ERR_MIN) /* right enough: most bits of a long match */
        return;
    for (int i = 0; i < TC_INPUTS; i++) { /* |st * err| < 2^23; weights bounded at +-128 */
        int32_t d = b->st[i] * err + (1 << (TC_MIX_SHIFT - 1));
        int32_t v = w[i] + (d >= 0 ? d >> TC_MIX_SHIFT : -((-d - 1) >> TC_MIX_SHIFT) - 1);
        w[i] = v > (1 << 23) ? 1 << 23 : v < -(1 << 23) ? -(1 << 23) : v;
    }
}

static void update(struct tc_model *m, const struct bitstep *b, int bit)
{
    train(m->weight[b->set], b, (bit << 12) - b->p1);
    train(m->weight2[b->set2], b, (bit << 12) - b->p2);
    for (int i = 0; i < TC_HASHED + 2; i++)
        if (b->slot[i])
            *b->slot[i] = counter_next(*b->slot[i], bit, m->rate);
}

/* Codes (or decodes, when a->out is NULL) one byte. */
static uint8_t code_byte(struct tc_model *m, struct ac *a, uint8_t c)
{
    uint32_t h[TC_HASHED];
    contexts(m, h);
    unsigned c0 = 1;
    for (int nib = 0; nib < 2; nib++) {
        uint32_t *bk[TC_HASHED];
        for (int i = 0; i < TC_HASHED; i++) /* the loads at once, not one after another */
            __builtin_prefetch(m->bucket[mix32(h[i] + c0 * 0x2545f491u) >> (32 - TC_BUCKET_BITS)]);
        for (int i = 0; i < TC_HASHED; i++)
            bk[i] = bucket_of(m, h[i], c0);
        unsigned node = 1;
        for (int j = 0; j < 4; j++) {
            int k = 7 - 4 * nib - j;
            struct bitstep b;
            predict(m, bk, node, c0, k, &b);
            int bit = ac_bit(a, b.p, (c >> k) & 1);
            update(m, &b, bit);
            node = node << 1 | (unsigned)bit;
            c0 = c0 << 1 | (unsigned)bit;
        }
    }
    history_add(m, (uint8_t)c0, true);
    return (uint8_t)c0;
}

int tc_encode(struct tc_model *m, const uint8_t *p, size_t n, struct buf *out)
{
    if (!n || n > TC_MAX_INPUT)
        return -EINVAL;
    size_t room = 12 * n + 8;
    uint8_t *dst = buf_append_space(out, room);
    if (!dst)
        return -ENOMEM;
    struct ac a = { .x1 = 0, .x2 = 0xffffffffu, .out = dst };
    for (size_t i = 0; i < n; i++)
        code_byte(m, &a, p[i]);
    a.pos += ac_ending(&a, dst + a.pos);
    out->len -= room - a.pos;
    return 0;
}

int tc_decode(struct tc_model *m, const uint8_t *in, size_t code_len, uint8_t *out, size_t n)
{
    struct ac a;
    ac_start_decoding(&a, in, code_len);
    for (size_t i = 0; i < n; i++)
        out[i] = code_byte(m, &a, 0);
    uint8_t end[4];
    size_t settled = a.pos - 4, k = ac_ending(&a, end);
    return settled + k == code_len && !memcmp(in + settled, end, k) ? 0 : -EBADMSG;
}

bool tc_suits(const uint8_t *p, size_t n)
{
    size_t printable = 0;
    for (size_t i = 0; i < n; i++)
        printable += p[i] >= 0x20 && p[i] < 0x7f;
    return printable * 8 >= n * 5;
}
