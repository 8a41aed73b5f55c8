/* smallcoder.c -- context mixing and a carry-less binary arithmetic coder for small link
 * writes (smallcoder.h). Workload: a write of 5-256 bytes at a time, tens to hundreds a
 * second (pointer motion, line drawing, replies); bulk goes to zstd. Integer only: both
 * ends must compute the same probabilities bit for bit. */
#include "link/smallcoder.h"

#include "link/arith.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SC_INPUTS 5          /* contexts mixed per bit */
#define SC_BUCKET_BITS 11    /* buckets per context table: 2^10 of 16 counters (64 bytes) */
#define SC_MIX_RATE 6        /* the mixer's learning rate */
#define SC_MIX_START 19661   /* each context's first weight: 0.3 in 16.16 */
#define SC_RING_BITS 17      /* the match model's history: the last 128 KiB of the direction */
#define SC_MTAB_BITS 15      /* where each context of SC_MINLEN bytes was last seen */
#define SC_MINLEN 5          /* bytes a match must have to be followed */
#define SC_MAXLEN 31         /* match lengths beyond this count as this */


struct sc_model {
    _Alignas(64) uint32_t slot[SC_INPUTS][1u << SC_BUCKET_BITS][16]; /* 22-bit probability of
                                                      * a 1, 10-bit count; [0] unused */
    _Alignas(64) int32_t weight[512][8];             /* per partial byte and match state: the
                                                      * contexts, the match, a bias; [7] unused */
    int16_t stretch[4096];                           /* the inverse of squash */
    int32_t rate[AC_COUNT_LIMIT + 1];                /* 65536 / (n + 1.5) */
    uint32_t kind_slot;                              /* is the next chunk a small write? */
    uint32_t text_slot;                              /* if not, is it a text chunk? */
    uint32_t size_slot[3][32];                       /* bit counts of a zstd chunk's length, a
                                                      * text chunk's n and m: trees of 31 */
    uint8_t prev[SC_MAX_INPUT + 1];                  /* the last write, length byte first */
    size_t prev_len;
    /* The match model: the direction's history (small writes, the start of zstd chunks, the
     * prime), where the current context last occurred, and the byte that followed it. */
    uint8_t ring[1u << SC_RING_BITS];
    uint32_t mtab[1u << SC_MTAB_BITS];               /* (position + 1) after the context, 0: none */
    uint32_t mslot[SC_MAXLEN + 1][2];                /* by match length and predicted bit */
    uint64_t hpos;                                   /* history bytes so far */
    uint64_t mptr;                                   /* the byte a match predicts next */
    unsigned mlen;                                   /* its length, 0: no match */
    size_t feed_left;                                /* of the zstd chunk being fed */
    uint8_t pend[SC_MAX_INPUT];                      /* this write's bytes, history once committed */
    size_t npend;
    struct { uint32_t h, pos; } defer[SC_MAX_INPUT]; /* its contexts, in mtab once committed */
    size_t ndefer;
    /* Decoding: what a chunk changed, undone when it turns out not to be all there yet. */
    struct sc_undo { uint32_t at, old; } *undo;         /* at: the word's index in the model */
    size_t n_undo;
    struct sc_block *block;                          /* the memory it shares with its pair */
};

/* A side's two models share a block of 2 MiB, given huge pages where the system allows:
 * between writes the process sleeps and its caches go cold, and every counter a bit
 * reads would cost a walk of the page tables as well (in a virtual machine, two). */
#define SC_BLOCK_BYTES (2u << 20)
#define SC_BLOCK_HEAD 64u /* struct sc_block, and the models' cache-line alignment */
struct sc_block {
    unsigned users;
};
_Static_assert(SC_BLOCK_HEAD + 2 * sizeof(struct sc_model) <= SC_BLOCK_BYTES, "a pair of models fits a block");

/* Model words one chunk may change: per bit five slots and six weights, plus the kind's two. */
#define SC_UNDO_MAX (((SC_MAX_INPUT + 1) * 8 + 1) * (2 * SC_INPUTS + 3) + 2)

size_t sc_memory(bool decoding)
{
    return SC_BLOCK_BYTES / 2 + (decoding ? SC_UNDO_MAX * sizeof(struct sc_undo) : 0);
}

static void set_word(struct sc_model *m, uint32_t *at, uint32_t v)
{
    if (m->undo)
        m->undo[m->n_undo++] = (struct sc_undo){ (uint32_t)(at - (uint32_t *)m), *at };
    *at = v;
}

static void model_init(struct sc_model *m)
{
    for (int i = 0; i < SC_INPUTS; i++)
        for (size_t j = 0; j < (1u << SC_BUCKET_BITS); j++)
            for (int n = 0; n < 16; n++)
                m->slot[i][j][n] = AC_SLOT_START;
    for (int c = 0; c < 512; c++) {
        for (int i = 0; i < SC_INPUTS; i++)
            m->weight[c][i] = SC_MIX_START;
        m->weight[c][SC_INPUTS] = c < 256 ? 0 : 2 * SC_MIX_START; /* the match */
        m->weight[c][SC_INPUTS + 1] = 0;
    }
    for (int l = 0; l <= SC_MAXLEN; l++)
        m->mslot[l][0] = m->mslot[l][1] = AC_SLOT_START;
    memset(m->ring, 0, sizeof m->ring);
    memset(m->mtab, 0, sizeof m->mtab);
    m->hpos = m->mptr = 0;
    m->mlen = 0;
    m->feed_left = m->npend = m->ndefer = 0;
    arith_tables(m->stretch, m->rate);
    m->kind_slot = m->text_slot = AC_SLOT_START;
    for (int t = 0; t < 3; t++)
        for (int j = 0; j < 32; j++)
            m->size_slot[t][j] = AC_SLOT_START;
    m->prev_len = 0;
    m->undo = NULL;
    m->n_undo = 0;
}

static int new_models(struct sc_model **out, unsigned n)
{
    void *mem;
    if (posix_memalign(&mem, SC_BLOCK_BYTES, SC_BLOCK_BYTES))
        return -ENOMEM;
    (void)madvise(mem, SC_BLOCK_BYTES, MADV_HUGEPAGE); /* a hint: small pages do too */
    struct sc_block *b = mem;
    b->users = n;
    for (unsigned i = 0; i < n; i++) {
        out[i] = (struct sc_model *)((char *)mem + SC_BLOCK_HEAD + i * sizeof(struct sc_model));
        model_init(out[i]);
        out[i]->block = b;
    }
    return 0;
}

int sc_new(struct sc_model **out) { return new_models(out, 1); }

int sc_new_pair(struct sc_model *out[2]) { return new_models(out, 2); }

void sc_free(struct sc_model *m)
{
    if (!m)
        return;
    free(m->undo);
    if (!--m->block->users)
        free(m->block);
}

static uint32_t ctx_hash(uint32_t tag, uint32_t a, uint32_t b, uint32_t c)
{
    return mix32(tag * 0x01000193u ^ mix32(a + 0x9e3779b9u * (b + 0x85ebca6bu * (c + 1))));
}

/* The contexts of byte i of seq (the length byte is byte 0). */
static void contexts(const struct sc_model *m, const uint8_t *seq, size_t i, uint32_t ctx[SC_INPUTS])
{
    uint32_t p1 = i ? seq[i - 1] : 256, p2 = i > 1 ? seq[i - 2] : 256, p3 = i > 2 ? seq[i - 3] : 256;
    uint32_t col = i < m->prev_len ? m->prev[i] : 256, pos = i < 63 ? (uint32_t)i : 63;
    ctx[0] = ctx_hash(1, col, pos, 0);   /* the same place in the last write */
    ctx[1] = ctx_hash(2, p1, pos < 15 ? pos : 15, 0);
    ctx[2] = ctx_hash(3, p1, p2, 0);
    ctx[3] = ctx_hash(4, p1, p2, p3);
    ctx[4] = ctx_hash(5, col, p1, 0);
}

struct bitstep {
    uint32_t *slot[SC_INPUTS + 1]; /* the last: the match's, or NULL */
    int st[SC_INPUTS + 2];
    unsigned set;                  /* the mixer's weight set */
    int p;                         /* 12-bit probability of a 1 */
};

static uint8_t hist_at(const struct sc_model *m, uint64_t i)
{
    return i >= m->hpos ? m->pend[i - m->hpos] : m->ring[i & ((1u << SC_RING_BITS) - 1)];
}

/* Whether history position i still holds its byte (the ring has not gone round). */
static bool hist_holds(const struct sc_model *m, uint64_t i, uint64_t end)
{
    return i < end && end - i <= (1u << SC_RING_BITS) - SC_MAX_INPUT;
}

/* A bit's probability: its counters are node (1-15: the nibble's bits so far, after a
 * leading 1) of each context's bucket for this nibble. */
static void predict(struct sc_model *m, uint32_t *const bucket[SC_INPUTS], unsigned node, unsigned c0, int k,
                    struct bitstep *b)
{
    b->slot[SC_INPUTS] = NULL;
    b->st[SC_INPUTS] = 0;
    if (m->mlen && !hist_holds(m, m->mptr, m->hpos + m->npend))
        m->mlen = 0; /* the ring went round under a long match */
    if (m->mlen) { /* the match still agrees with this byte's bits so far */
        unsigned want = hist_at(m, m->mptr);
        if (((want | 256u) >> (k + 1)) == c0) {
            b->slot[SC_INPUTS] = &m->mslot[m->mlen][(want >> k) & 1];
            b->st[SC_INPUTS] = m->stretch[*b->slot[SC_INPUTS] >> 20];
        }
    }
    if (k) /* the next bit's weights: the sets of both its partial bytes share a line */
        __builtin_prefetch(m->weight[(c0 << 1) | (b->slot[SC_INPUTS] ? 256u : 0)]);
    b->set = c0 | (b->slot[SC_INPUTS] ? 256u : 0);
    const int32_t *w = m->weight[b->set];
    int64_t dot = 0;
    for (int i = 0; i < SC_INPUTS; i++) {
        b->slot[i] = &bucket[i][node];
        b->st[i] = m->stretch[*b->slot[i] >> 20];
        dot += (int64_t)w[i] * b->st[i];
    }
    dot += (int64_t)w[SC_INPUTS] * b->st[SC_INPUTS];
    b->st[SC_INPUTS + 1] = 256;
    dot += (int64_t)w[SC_INPUTS + 1] * 256;
    int p = squash((int)asr(dot, 16));
    b->p = p < 1 ? 1 : p > 4095 ? 4095 : p;
}

static void slot_learn(struct sc_model *m, uint32_t *slot, int bit)
{
    set_word(m, slot, counter_next(*slot, bit, m->rate));
}

static void update(struct sc_model *m, const struct bitstep *b, int bit)
{
    int32_t *w = m->weight[b->set];
    int32_t err = ((bit << 12) - b->p) * SC_MIX_RATE;
    for (int i = 0; i <= SC_INPUTS + 1; i++)
        set_word(m, (uint32_t *)&w[i], (uint32_t)(w[i] + (int32_t)asr((int64_t)b->st[i] * err + 512, 10)));
    for (int i = 0; i <= SC_INPUTS; i++)
        if (b->slot[i])
            slot_learn(m, b->slot[i], bit);
}

static uint32_t context_at(const struct sc_model *m, uint64_t end)
{
    uint32_t h = 0;
    for (uint64_t i = end - SC_MINLEN; i < end; i++)
        h = (h + hist_at(m, i) + 1) * 0x2f0b3c4du;
    return h >> (32 - SC_MTAB_BITS);
}

/* After byte c of a small write: follow or lose the match; look for a new one. */
static void match_after(struct sc_model *m, uint8_t c)
{
    if (m->mlen && hist_at(m, m->mptr) == c) {
        m->mptr++;
        m->mlen += m->mlen < SC_MAXLEN;
    } else {
        m->mlen = 0;
    }
    m->pend[m->npend++] = c;
    uint64_t end = m->hpos + m->npend;
    if (end < SC_MINLEN + 1)
        return;
    uint32_t h = context_at(m, end);
    if (!m->mlen && m->mtab[h]) {
        uint64_t cand = end - ((uint32_t)end - (m->mtab[h] - 1)); /* the last 32 bits name it */
        unsigned len = 0;
        while (len < SC_MAXLEN && cand > len && hist_holds(m, cand - 1 - len, end) &&
               hist_at(m, cand - 1 - len) == hist_at(m, end - 1 - len))
            len++;
        if (len >= SC_MINLEN && hist_holds(m, cand, end)) {
            m->mptr = cand;
            m->mlen = len;
        }
    }
    m->defer[m->ndefer].h = h;
    m->defer[m->ndefer++].pos = (uint32_t)end + 1;
}

/* This write's bytes join the history. */
static void match_commit(struct sc_model *m)
{
    for (size_t i = 0; i < m->npend; i++)
        m->ring[(m->hpos + i) & ((1u << SC_RING_BITS) - 1)] = m->pend[i];
    m->hpos += m->npend;
    for (size_t i = 0; i < m->ndefer; i++)
        m->mtab[m->defer[i].h] = m->defer[i].pos;
    m->npend = m->ndefer = 0;
}

void sc_feed_start(struct sc_model *m, size_t limit) { m->feed_left = limit; }

void sc_feed(struct sc_model *m, const uint8_t *p, size_t n)
{
    if (n > m->feed_left)
        n = m->feed_left;
    m->feed_left -= n;
    for (size_t i = 0; i < n; i++) {
        m->ring[m->hpos & ((1u << SC_RING_BITS) - 1)] = p[i];
        m->hpos++;
        if (m->hpos >= SC_MINLEN + 1)
            m->mtab[context_at(m, m->hpos)] = (uint32_t)m->hpos + 1;
    }
    if (n)
        m->mlen = 0;
}

/* Context j's bucket for the nibble that follows the partial byte c0 (1, or 16-31). */
static uint32_t *nibble_bucket(struct sc_model *m, int j, uint32_t ctx, unsigned c0)
{
    uint32_t h = mix32(ctx + c0);
    return m->slot[j][h >> (32 - SC_BUCKET_BITS)];
}

/* Codes (or decodes, when a->out is NULL) byte i of seq. */
static uint8_t code_byte(struct sc_model *m, struct ac *a, uint8_t *seq, size_t i)
{
    uint32_t ctx[SC_INPUTS], *bucket[SC_INPUTS];
    contexts(m, seq, i, ctx);
    unsigned c0 = 1, node = 1;
    unsigned mlen = m->mlen;
    if (!i) /* the length byte is no part of the history */
        m->mlen = 0;
    for (int k = 7; k >= 0; k--) {
        if (k == 7 || k == 3) { /* a nibble's bucket: one cache line per context */
            for (int j = 0; j < SC_INPUTS; j++)
                bucket[j] = nibble_bucket(m, j, ctx[j], c0);
            node = 1;
        }
        struct bitstep b;
        predict(m, bucket, node, c0, k, &b);
        int bit = ac_bit(a, b.p, (seq[i] >> k) & 1);
        update(m, &b, bit);
        c0 = c0 << 1 | (unsigned)bit;
        node = node << 1 | (unsigned)bit;
    }
    seq[i] = (uint8_t)c0;
    if (i)
        match_after(m, seq[i]);
    else
        m->mlen = mlen;
    return seq[i];
}

/* Asks the memory for the counters and weights a write like seq[0, n) (the length byte
 * first) would use, all at once: between writes the process sleeps and the model goes
 * cold, and coding would wait for each line in turn. Changes nothing the coder sees. */
static void warm(struct sc_model *m, const uint8_t *seq, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t ctx[SC_INPUTS];
        contexts(m, seq, i, ctx);
        for (int j = 0; j < SC_INPUTS; j++) {
            __builtin_prefetch(nibble_bucket(m, j, ctx[j], 1));
            __builtin_prefetch(nibble_bucket(m, j, ctx[j], 16u | seq[i] >> 4));
        }
        for (int k = 7; k >= 0; k--) {
            unsigned c0 = (seq[i] | 256u) >> (k + 1);
            __builtin_prefetch(m->weight[c0]);
            __builtin_prefetch(m->weight[c0 | 256]);
        }
    }
    __asm__ volatile("" ::: "memory"); /* else GCC finds the function pure and drops the calls */
}

static void remember(struct sc_model *m, const uint8_t *seq, size_t n)
{
    memcpy(m->prev, seq, n);
    m->prev_len = n;
}

/* One bit of the chunk's kind, with its adaptive probability. */
static int code_kind(struct sc_model *m, struct ac *a, uint32_t *slot, int bit)
{
    int p = (int)(*slot >> 20);
    bit = ac_bit(a, p < 1 ? 1 : p > 4095 ? 4095 : p, bit);
    slot_learn(m, slot, bit);
    return bit;
}

/* A size of 1 to 2^32 - 1: its count of bits less one (b) in 5 bits through a tree of
 * adaptive counters, then the b bits below its leading one at probability 1/2. A zstd
 * chunk's length takes 2 bytes or less where 32 bits took 4. */
static uint32_t code_size(struct sc_model *m, struct ac *a, uint32_t tree[32], uint32_t v)
{
    unsigned b = 0;
    while (b < 31 && v >> (b + 1))
        b++;
    unsigned node = 1;
    for (int k = 4; k >= 0; k--)
        node = node << 1 | (unsigned)code_kind(m, a, &tree[node], (int)(b >> k) & 1);
    uint32_t r = 1;
    for (int k = (int)(node - 32) - 1; k >= 0; k--)
        r = r << 1 | (uint32_t)ac_bit(a, 2048, (int)(v >> k) & 1);
    return r;
}

/* A small write's p[0, n); or the head of a chunk whose follow_len code bytes come next:
 * zstd when text_len is 0, else a text chunk of text_len bytes. */
static int encode(struct sc_model *m, const uint8_t *p, size_t n, uint32_t follow_len, uint32_t text_len, struct buf *out)
{
    uint8_t *dst = buf_append_space(out, SC_MAX_CODE);
    if (!dst)
        return -ENOMEM;
    struct ac a = { .x1 = 0, .x2 = 0xffffffffu, .out = dst };
    if (code_kind(m, &a, &m->kind_slot, p != NULL)) {
        uint8_t seq[SC_MAX_INPUT + 1];
        seq[0] = (uint8_t)(n - 1);
        memcpy(seq + 1, p, n);
        warm(m, seq, n + 1);
        for (size_t i = 0; i <= n; i++)
            code_byte(m, &a, seq, i);
        remember(m, seq, n + 1);
        match_commit(m);
    } else if (code_kind(m, &a, &m->text_slot, text_len != 0)) {
        code_size(m, &a, m->size_slot[1], text_len);
        code_size(m, &a, m->size_slot[2], follow_len);
    } else {
        code_size(m, &a, m->size_slot[0], follow_len);
    }
    a.pos += ac_ending(&a, dst + a.pos);
    out->len -= SC_MAX_CODE - a.pos;
    return 0;
}

int sc_encode(struct sc_model *m, const uint8_t *p, size_t n, struct buf *out)
{
    if (!n || n > SC_MAX_INPUT)
        return -EINVAL;
    return encode(m, p, n, 0, 0, out);
}

int sc_encode_zstd_head(struct sc_model *m, uint32_t len, struct buf *out)
{
    return len ? encode(m, NULL, 0, len, 0, out) : -EINVAL;
}

int sc_encode_text_head(struct sc_model *m, uint32_t n, uint32_t code_len, struct buf *out)
{
    return n && code_len ? encode(m, NULL, 0, code_len, n, out) : -EINVAL;
}

static void undo_all(struct sc_model *m)
{
    while (m->n_undo) {
        struct sc_undo *u = &m->undo[--m->n_undo];
        ((uint32_t *)m)[u->at] = u->old;
    }
}

int sc_decode(struct sc_model *m, const uint8_t *in, size_t n, struct buf *out, size_t *used, uint32_t *zstd_len,
              uint32_t *text_len)
{
    if (!m->undo && !(m->undo = malloc(SC_UNDO_MAX * sizeof *m->undo)))
        return -ENOMEM;
    m->n_undo = 0;
    uint64_t mptr = m->mptr;
    unsigned mlen = m->mlen;
    struct ac a;
    ac_start_decoding(&a, in, n);
    uint8_t seq[SC_MAX_INPUT + 1] = { 0 };
    size_t len = 0;
    *zstd_len = *text_len = 0;
    warm(m, m->prev, m->prev_len); /* most writes are much like the last */
    if (code_kind(m, &a, &m->kind_slot, 0)) {
        len = (size_t)code_byte(m, &a, seq, 0) + 1;
        for (size_t i = 1; i <= len; i++)
            code_byte(m, &a, seq, i);
    } else if (code_kind(m, &a, &m->text_slot, 0)) {
        uint32_t t = code_size(m, &a, m->size_slot[1], 0);
        *zstd_len = code_size(m, &a, m->size_slot[2], 0);
        *text_len = t;
    } else {
        *zstd_len = code_size(m, &a, m->size_slot[0], 0);
    }
    /* Bytes missing past n were read as zeros, which may decode other bits whose ending
     * happens to fit in n: only an ending equal to the input's next bytes proves every
     * continuation (the real one too) decodes as here. When all bytes read were real, an
     * ending that differs is corrupt input; otherwise the rest has not come yet. */
    uint8_t end[4];
    size_t settled = a.pos - 4, k = ac_ending(&a, end), need = settled + k;
    bool ends_here = need <= n && !memcmp(in + settled, end, k);
    if (!ends_here) { /* as if never seen */
        undo_all(m);
        m->npend = m->ndefer = 0;
        m->mptr = mptr;
        m->mlen = mlen;
        return a.pos <= n ? -EBADMSG : -EAGAIN;
    }
    m->n_undo = 0;
    match_commit(m);
    if (!len)
        return *zstd_len ? (*used = need, 0) : -EBADMSG;
    remember(m, seq, len + 1);
    *used = need;
    return buf_append(out, seq + 1, len) < 0 ? -ENOMEM : 0;
}
