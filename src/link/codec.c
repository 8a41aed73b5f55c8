/* codec.c -- zstd streaming compression of the link (libzstd), primed frames and the
 * automatic level. Workload: many small flushes (a few hundred bytes each on interactive
 * traffic), some large ones (images); a level change or a new frame is rare. */
#include "link/codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/clock.h"
#include "common/log.h"
#include "link/smallcoder.h"
#include "link/textcoder.h"

#define TUNE_BYTES (256u * 1024)     /* input between two looks at the level */
#define TUNE_HOLD_NS 5000000000ull   /* 5 s between level changes: each re-primes a frame */
#define LEVEL_MIN 1
#define LEVEL_AUTO_MAX 6
#define CHUNK_MAX_ZSTD (1u << 30)    /* a larger zstd chunk is corrupt (a write is at most a few MiB) */
#define REPRIME_IDLE_NS 300000000ull /* after this long without writes, a new frame ... */
#define REPRIME_WRITE 4096u          /* ... at a write this large (priming costs about 15 ms at
                                      * level 9 with a 2 MiB window: not for a small reply) ... */
#define REPRIME_AROUND 16u           /* ... when what went around zstd since the frame began is
                                      * at least 1/16 of the new frame's prime (reprime_pays) */
#define TEXT_LEVEL_MIN 7             /* text chunks only at the levels of slow links: they cost
                                      * about 1.4 us a byte at each end, zstd a tenth of that */
#define TEXT_RATE_MAX (32u * 1024)   /* ... or, at the automatic level, on a link this slow (B/s):
                                      * the tenth of a byte they save per byte is worth 3 us of
                                      * its time */

/* One direction: what went through it (the last bytes, for priming and the cache) and the
 * stable copy the current zstd frame was primed with (zstd reads it while the frame lasts). */
struct half {
    uint8_t *hist;
    size_t hist_len, hist_cap;
    uint64_t total;        /* stream bytes, not counting the prime */
    uint8_t *prefix;
    size_t prefix_len, prefix_cap;
    uint8_t *cache_text;   /* the text-like blocks of a cached dictionary, for the text model */
    size_t cache_text_len;
    bool need_prime;       /* rx: a frame ended; prime the next before decoding it */
};

struct codec {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    struct half h[2];
    int window_log;
    size_t prime_max;      /* the window: what a frame is primed with */
    size_t hist_keep;      /* history kept when it slides: the prime plus slack for the bytes
                            * in flight when the session ends (GOODBYE's offsets) */
    size_t hist_cap;       /* the history buffer's size: slid back to hist_keep when full */
    int level, next_level;
    bool fixed;            /* an explicit level: never changed */
    enum codec_speed speed;
    uint64_t rate_Bps;
    uint64_t tune_in, tune_out, tune_ns, last_change_ns;
    /* Chunks (codec_use_small): small writes go through the small coder, the rest is zstd. */
    struct sc_model *sc[2];
    struct buf scratch;    /* one zstd chunk's code */
    const uint8_t *builtin[2]; /* CAP_BUILTIN: each frame's prefix starts with it (static) */
    size_t builtin_len[2];
    uint64_t frame_in;     /* zstd input of the current tx frame */
    uint64_t frame_start;  /* the tx stream offset where it began */
    uint64_t last_write_ns;
    bool reprime;          /* the next zstd write starts a new frame (after an idle time) */
    uint64_t rx_left;      /* zstd bytes left in the chunk being received */
    bool rx_more;          /* zstd may hold output that did not fit the last call */
    /* Text chunks: each direction's model is made at its first one. */
    struct tc_model *tc[2];
    bool no_text_tx;       /* codec_text_tx(false) */
    uint32_t rx_text_n, rx_text_code; /* the text chunk whose code comes next: its sizes */
    struct buf rx_text;    /* a decoded text chunk, given out from rx_text_at on */
    size_t rx_text_at;
};

static const int speed_levels[] = {
    [CODEC_SPEED_AUTO] = CODEC_DEFAULT_LEVEL, [CODEC_SPEED_MODEM] = 9, [CODEC_SPEED_ISDN] = 6,
    [CODEC_SPEED_ADSL] = 3, [CODEC_SPEED_LAN] = 1,
};
static const char *const speed_names[] = { "auto", "modem", "isdn", "adsl", "lan" };

int codec_speed_level(enum codec_speed s) { return speed_levels[s]; }

int codec_speed_parse(const char *s)
{
    for (int i = 0; i < (int)(sizeof speed_names / sizeof *speed_names); i++)
        if (!strcmp(s, speed_names[i]))
            return i;
    return -1;
}

/* zstd's default chainLog and hashLog per level (lib/compress/clevels.h, unknown source
 * size), so that a small window can lower them: the tables of level 9 alone take 12 MiB,
 * more than a 2 MiB window needs. Used only to lower, never to raise. */
static const uint8_t level_logs[20][2] = {
    { 13, 14 }, { 13, 14 }, { 15, 16 }, { 16, 17 }, { 18, 18 }, { 18, 19 }, { 18, 19 }, { 19, 20 },
    { 19, 20 }, { 20, 21 }, { 21, 22 }, { 21, 22 }, { 22, 23 }, { 22, 22 }, { 22, 23 }, { 23, 23 },
    { 22, 22 }, { 23, 22 }, { 23, 22 }, { 24, 22 },
};

static void set_cparams(struct codec *c)
{
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, c->level);
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog, c->window_log);
    /* Tables at most a quarter of the window each (measured: about 1 % more bytes at level 9
     * with a 256 KiB window, against 11 MiB less memory). */
    int cap = c->window_log - 2, lv = c->level < 20 ? c->level : 19;
    if (level_logs[lv][0] > cap)
        ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_chainLog, cap);
    if (level_logs[lv][1] > cap)
        ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_hashLog, cap);
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 0);
    /* Long-distance matching finds the repeats of a primed frame (an image, a glyph set,
     * a keyboard map sent again) anywhere in the window, where the level's own hash
     * tables only remember the most recent positions. */
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_enableLongDistanceMatching, 1);
}

int codec_window_log(const struct codec *c) { return c->window_log; }

/* Per side, at most: compressor (window, two blocks, tables of a quarter window each,
 * long-distance matching, sequences), decompressor (window, two blocks), and per direction
 * a history of 1.25 windows and a prefix of one. Measured with ZSTD_sizeof_*: 20.6 MiB
 * at level 9 with a 2 MiB window, all buffers full (tests/unit/test_codec.c). */
uint64_t codec_reserve(int window_log)
{
    uint64_t w = 1ull << window_log;
    return w + 3 * w + w + 2 * (w + w / 4 + w) + (2u << 20) + sc_memory(false) + sc_memory(true) + SC_MAX_CODE;
}

/* Text chunks, on top of the reserve: a model per direction that uses them (made at the
 * first), the largest code and a decoded chunk. Not part of the window's choice: the
 * window is worth more to the other workloads than text is. */
#define CACHE_TEXT_MAX (128u << 10) /* of a cached dictionary's text, for the text model */
#define CACHE_TEXT_BLOCK 512u

uint64_t codec_text_reserve(void)
{
    return 2 * (uint64_t)tc_memory() + TC_MAX_CODE + TC_MAX_INPUT + 2 * CACHE_TEXT_MAX;
}

int codec_window_for(uint64_t bound)
{
    int wl = CODEC_WINDOW_LOG;
    while (wl > CODEC_WINDOW_LOG_MIN && codec_reserve(wl) > bound / 8 * 3)
        wl--;
    return wl;
}

uint64_t codec_memory(const struct codec *c)
{
    uint64_t n = sizeof *c + ZSTD_sizeof_CCtx(c->cctx) + ZSTD_sizeof_DCtx(c->dctx);
    for (int d = 0; d < 2; d++)
        n += c->h[d].hist_cap + c->h[d].prefix_cap + c->h[d].cache_text_len + (c->sc[d] ? sc_memory(d == CODEC_RX) : 0) +
             (c->tc[d] ? tc_memory() : 0);
    return n + c->scratch.cap + c->rx_text.cap;
}

int codec_new_speed(struct codec **out, int level, enum codec_speed speed)
{
    return codec_new_window(out, level, speed, CODEC_WINDOW_LOG);
}

int codec_new_window(struct codec **out, int level, enum codec_speed speed, int window_log)
{
    if (window_log < CODEC_WINDOW_LOG_MIN || window_log > CODEC_WINDOW_LOG)
        return -EINVAL;
    struct codec *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->window_log = window_log;
    c->prime_max = (size_t)1 << window_log;
    c->hist_keep = c->prime_max + c->prime_max / 16;
    c->hist_cap = c->prime_max + c->prime_max / 4;
    c->cctx = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    if (!c->cctx || !c->dctx) {
        codec_free(c);
        return -ENOMEM;
    }
    c->fixed = level > 0;
    c->speed = speed;
    c->level = c->next_level = c->fixed ? level : speed_levels[speed];
    set_cparams(c);
    /* The peer agreed on this window (PROTOCOL.md 1): a larger one is a corrupt stream. */
    ZSTD_DCtx_setParameter(c->dctx, ZSTD_d_windowLogMax, window_log);
    *out = c;
    return 0;
}

int codec_new(struct codec **out, int level) { return codec_new_speed(out, level, CODEC_SPEED_AUTO); }

/* The small coder's match model looks back into the prime too (its last bytes). */
static void feed_prime(struct codec *c, enum codec_dir d)
{
    struct half *h = &c->h[d];
    size_t n = h->hist_len < SC_FEED_PRIME ? h->hist_len : SC_FEED_PRIME;
    if (!c->sc[d] || !n)
        return;
    sc_feed_start(c->sc[d], n);
    sc_feed(c->sc[d], h->hist + h->hist_len - n, n);
}

int codec_use_small(struct codec *c)
{
    if (c->h[CODEC_TX].total || c->h[CODEC_RX].total)
        return -EINVAL;
    if (!c->sc[0] && sc_new_pair(c->sc) < 0)
        return -ENOMEM;
    for (int d = 0; d < 2; d++)
        feed_prime(c, (enum codec_dir)d);
    return 0;
}

void codec_text_tx(struct codec *c, bool on)
{
    c->no_text_tx = !on;
    if (!on) { /* no text model will want it */
        free(c->h[CODEC_TX].cache_text);
        c->h[CODEC_TX].cache_text = NULL;
        c->h[CODEC_TX].cache_text_len = 0;
    }
}

void codec_free(struct codec *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    for (int d = 0; d < 2; d++) {
        free(c->h[d].hist);
        free(c->h[d].prefix);
        free(c->h[d].cache_text);
        sc_free(c->sc[d]);
        tc_free(c->tc[d]);
    }
    buf_free(&c->scratch);
    buf_free(&c->rx_text);
    free(c);
}

static int hist_append(const struct codec *c, struct half *h, const uint8_t *p, size_t n)
{
    if (n >= c->hist_keep) {
        p += n - c->hist_keep;
        n = c->hist_keep;
        h->hist_len = 0;
    }
    if (h->hist_len + n > c->hist_cap) { /* slide: keep what may still be primed or saved */
        size_t keep = c->hist_keep - n;
        if (keep > h->hist_len)
            keep = h->hist_len;
        memmove(h->hist, h->hist + h->hist_len - keep, keep);
        h->hist_len = keep;
    }
    if (h->hist_len + n > h->hist_cap) {
        size_t cap = h->hist_cap ? 2 * h->hist_cap : 64 * 1024;
        while (cap < h->hist_len + n)
            cap *= 2;
        if (cap > c->hist_cap)
            cap = c->hist_cap;
        uint8_t *nh = realloc(h->hist, cap);
        if (!nh)
            return -ENOMEM;
        h->hist = nh;
        h->hist_cap = cap;
    }
    if (n) /* p may be NULL when there is nothing to add */
        memcpy(h->hist + h->hist_len, p, n);
    h->hist_len += n;
    return 0;
}

/* Starts a frame of direction d primed with the last window of its history (after the
 * built-in dictionary, when there is one). Both ends do this at the same stream offset,
 * so both hold the same prefix. */
static int prime_frame(struct codec *c, enum codec_dir d)
{
    struct half *h = &c->h[d];
    size_t b = c->builtin_len[d] < c->prime_max ? c->builtin_len[d] : 0, room = c->prime_max - b;
    size_t n = h->hist_len < room ? h->hist_len : room;
    h->prefix_len = 0;
    if (!n && !b)
        return 0;
    if (b + n > h->prefix_cap) { /* kept from frame to frame: a fresh 2 MiB costs page faults */
        free(h->prefix);
        h->prefix_cap = 0;
        if (!(h->prefix = malloc(b + n)))
            return -ENOMEM;
        h->prefix_cap = b + n;
    }
    h->prefix_len = b + n;
    if (b)
        memcpy(h->prefix, c->builtin[d], b);
    if (n)
        memcpy(h->prefix + b, h->hist + h->hist_len - n, n);
    size_t r = d == CODEC_TX ? ZSTD_CCtx_refPrefix(c->cctx, h->prefix, b + n)
                             : ZSTD_DCtx_refPrefix(c->dctx, h->prefix, b + n);
    return ZSTD_isError(r) ? -EIO : 0;
}

/* The text-like blocks of a cached dictionary (the last CACHE_TEXT_MAX of them, in order),
 * for the text model: what a terminal showed in the last session can then be matched
 * even after other traffic has pushed it out of the zstd window and the history (xterm
 * printing the same file again after x11perf: 11 KB instead of 2). Blocks are counted
 * from the dictionary's start, so both ends pick the same. */
static int keep_cache_text(struct half *h, const uint8_t *p, size_t n)
{
    size_t found[CACHE_TEXT_MAX / CACHE_TEXT_BLOCK], kept = 0; /* newest first */
    for (size_t b = n / CACHE_TEXT_BLOCK; b > 0 && kept < CACHE_TEXT_MAX / CACHE_TEXT_BLOCK; b--)
        if (tc_suits(p + (b - 1) * CACHE_TEXT_BLOCK, CACHE_TEXT_BLOCK))
            found[kept++] = b - 1;
    if (!kept)
        return 0;
    h->cache_text = malloc(kept * CACHE_TEXT_BLOCK);
    if (!h->cache_text)
        return -ENOMEM;
    for (size_t i = kept; i-- > 0;) { /* in order */
        memcpy(h->cache_text + h->cache_text_len, p + found[i] * CACHE_TEXT_BLOCK, CACHE_TEXT_BLOCK);
        h->cache_text_len += CACHE_TEXT_BLOCK;
    }
    return 0;
}

int codec_prime(struct codec *c, enum codec_dir d, const uint8_t *p, size_t n)
{
    struct half *h = &c->h[d];
    if (h->total || h->hist_len)
        return -EINVAL;
    if (n > c->prime_max) {
        p += n - c->prime_max;
        n = c->prime_max;
    }
    int rc = hist_append(c, h, p, n);
    if (rc == 0 && !(d == CODEC_TX && c->no_text_tx))
        rc = keep_cache_text(h, p, n);
    if (rc == 0)
        feed_prime(c, d);
    return rc ? rc : prime_frame(c, d);
}

uint64_t codec_total(const struct codec *c, enum codec_dir d) { return c->h[d].total; }

int codec_set_builtin(struct codec *c, enum codec_dir d, const uint8_t *p, size_t n)
{
    if (c->h[d].total || c->builtin[d])
        return -EINVAL;
    c->builtin[d] = p;
    c->builtin_len[d] = n;
    if (c->sc[d]) { /* the small coder's history too (after a cached dictionary) */
        size_t k = n < SC_FEED_PRIME ? n : SC_FEED_PRIME;
        sc_feed_start(c->sc[d], k);
        sc_feed(c->sc[d], p + n - k, k);
    }
    return prime_frame(c, d);
}

int codec_history(const struct codec *c, enum codec_dir d, uint64_t end, const uint8_t **p, size_t *n)
{
    const struct half *h = &c->h[d];
    if (end > h->total || h->total - end > h->hist_len)
        return -ERANGE;
    size_t stop = h->hist_len - (size_t)(h->total - end);
    size_t len = stop < c->prime_max ? stop : c->prime_max;
    *p = h->hist + stop - len;
    *n = len;
    return 0;
}

int codec_level(const struct codec *c) { return c->next_level; }

void codec_set_level(struct codec *c, int level)
{
    if (level >= 1 && level <= ZSTD_maxCLevel())
        c->next_level = level;
}

void codec_set_link_rate(struct codec *c, uint64_t rate_Bps) { c->rate_Bps = rate_Bps; }

/* With an automatic level: compression that costs more time than the bytes it saves take
 * on this link is turned down; on a slow link it is turned up, within bounds. */
static void tune(struct codec *c, uint64_t now_ns)
{
    if (c->fixed || c->speed != CODEC_SPEED_AUTO || c->tune_in < TUNE_BYTES)
        return;
    uint64_t in = c->tune_in, out = c->tune_out, ns = c->tune_ns;
    c->tune_in = c->tune_out = c->tune_ns = 0;
    if (!c->rate_Bps || now_ns - c->last_change_ns < TUNE_HOLD_NS)
        return;
    double saved_ns = out < in ? (double)(in - out) * 1e9 / (double)c->rate_Bps : 0;
    int want = c->level;
    if ((double)ns > saved_ns && c->level > LEVEL_MIN)
        want = c->level > CODEC_DEFAULT_LEVEL ? CODEC_DEFAULT_LEVEL : LEVEL_MIN;
    else if ((double)ns * 8 < saved_ns && c->level < LEVEL_AUTO_MAX)
        want = c->level < CODEC_DEFAULT_LEVEL ? CODEC_DEFAULT_LEVEL : LEVEL_AUTO_MAX;
    if (want != c->level) {
        log_debug("link compression: level %d -> %d (%.0f ns to save %.0f ns of link time)", c->level, want,
                  (double)ns, saved_ns);
        c->next_level = want;
        c->last_change_ns = now_ns;
    }
}

/* Ends the current frame and starts one at the next level, primed with the history. */
static int new_frame(struct codec *c, struct buf *out)
{
    ZSTD_inBuffer in = { NULL, 0, 0 };
    size_t left;
    do {
        uint8_t *dst = buf_append_space(out, 64);
        if (!dst)
            return -ENOMEM;
        ZSTD_outBuffer o = { dst, 64, 0 };
        left = ZSTD_compressStream2(c->cctx, &o, &in, ZSTD_e_end);
        out->len -= 64 - o.pos;
        if (ZSTD_isError(left))
            return -EIO;
    } while (left);
    ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
    c->level = c->next_level;
    c->frame_in = 0;
    c->frame_start = c->h[CODEC_TX].total;
    c->reprime = false;
    set_cparams(c);
    return prime_frame(c, CODEC_TX);
}

/* Direction d's text model, made at its first text chunk from a cached dictionary's text
 * and the history so far: both ends hold the same there, all of it or at least the window
 * (hist_append). */
static int text_model(struct codec *c, enum codec_dir d)
{
    if (c->tc[d])
        return 0;
    if (tc_new(&c->tc[d]) < 0)
        return -ENOMEM;
    struct half *h = &c->h[d];
    size_t n = h->hist_len < c->prime_max ? h->hist_len : c->prime_max;
    if (n > TC_HISTORY - h->cache_text_len)
        n = TC_HISTORY - h->cache_text_len;
    tc_write_start(c->tc[d], h->cache_text_len + n);
    tc_feed(c->tc[d], h->cache_text, h->cache_text_len);
    tc_feed(c->tc[d], h->hist + h->hist_len - n, n);
    free(h->cache_text); /* in the model now */
    h->cache_text = NULL;
    h->cache_text_len = 0;
    return 0;
}

/* Bytes of direction d that a text model did not code join its history. */
static void text_feed(struct codec *c, enum codec_dir d, const uint8_t *p, size_t n)
{
    if (c->tc[d])
        tc_feed(c->tc[d], p, n);
}

/* A chunk (one write of whole frames) of direction d begins: of its bytes, the text model's
 * history takes the first TC_FEED_MAX (a large image costs it no more than that). */
static void text_write_start(struct codec *c, enum codec_dir d)
{
    if (c->tc[d])
        tc_write_start(c->tc[d], TC_FEED_MAX);
}

/* Whether a text chunk is worth its CPU: at a slow link's level, or on a link known slow. */
static bool text_pays(const struct codec *c)
{
    if (c->no_text_tx)
        return false;
    return c->level >= TEXT_LEVEL_MIN ||
           (!c->fixed && c->speed == CODEC_SPEED_AUTO && c->rate_Bps && c->rate_Bps <= TEXT_RATE_MAX);
}

/* Whether most of a write is already in the history a zstd frame reaches (a warm
 * session's cached stream, or text shown long ago): zstd then sends it as matches, a few
 * bytes, where the text coder, whose own matches reach back 256 KiB, would code it afresh
 * (xterm printing the GPL again: 11.4 KB through the text coder, 2 KB through zstd).
 * Eight samples of 32 bytes are looked up in that window. */
static bool seen_before(const struct codec *c, const uint8_t *p, size_t n)
{
    const struct half *h = &c->h[CODEC_TX];
    size_t w = h->hist_len < c->prime_max ? h->hist_len : c->prime_max;
    if (n < 512 || w < 32)
        return false;
    const uint8_t *window = h->hist + h->hist_len - w;
    unsigned found = 0;
    for (unsigned i = 0; i < 8; i++)
        found += memmem(window, w, p + (n - 32) * i / 7, 32) != NULL;
    return found >= 6;
}

/* One text-like write through the text coder: its head, then its code. */
static int compress_text(struct codec *c, const uint8_t *p, size_t n, struct buf *out)
{
    int rc = text_model(c, CODEC_TX);
    if (rc == 0)
        tc_write_start(c->tc[CODEC_TX], 0);
    buf_clear(&c->scratch);
    if (rc == 0)
        rc = tc_encode(c->tc[CODEC_TX], p, n, &c->scratch);
    if (rc == 0)
        rc = sc_encode_text_head(c->sc[CODEC_TX], (uint32_t)n, (uint32_t)c->scratch.len, out);
    if (rc == 0)
        rc = buf_append(out, buf_head(&c->scratch), c->scratch.len);
    if (rc == 0) { /* the small coder's history, as for a zstd chunk */
        sc_feed_start(c->sc[CODEC_TX], SC_FEED_MAX);
        sc_feed(c->sc[CODEC_TX], p, n);
    }
    return rc;
}

/* One write through the small coder: a chunk of its own. */
static int compress_small(struct codec *c, const uint8_t *p, size_t n, struct buf *out)
{
    return sc_encode(c->sc[CODEC_TX], p, n, out);
}

static int compress_zstd(struct codec *c, const uint8_t *p, size_t n, struct buf *out)
{
    ZSTD_inBuffer in = { p, n, 0 };
    for (;;) {
        size_t room = ZSTD_compressBound(n - in.pos) + 64;
        uint8_t *dst = buf_append_space(out, room);
        if (!dst)
            return -ENOMEM;
        ZSTD_outBuffer o = { dst, room, 0 };
        size_t left = ZSTD_compressStream2(c->cctx, &o, &in, ZSTD_e_flush);
        out->len -= room - o.pos;
        if (ZSTD_isError(left))
            return -EIO;
        if (left == 0 && in.pos == n)
            return 0;
    }
}

/* Whether a new tx frame, primed with the history as it is now, is worth its CPU: zstd
 * hashes every byte of a prime into its tables (about 6 ns a byte at level 9, 10 to 20 in
 * a busy process: 2 ms for the built-in dictionary and 100 KiB, 11 ms for a 2 MiB window).
 * A frame reaches all of its own prime until its input is a window long (RFC 8878 5: a
 * dictionary stays in reach for the first Window_Size bytes), so the built-in dictionary
 * and a warm session's cache are still there long after the frame began. What it cannot
 * reach is what went around zstd since then (small and text chunks), and, once its input
 * is a window, its prime. The rule before (a new frame at a program start once the frame
 * had taken 64 KiB) made 5 and 6 frames in two recorded bench/compare sessions, 2 to 11 ms
 * each, and saved nothing overall: the one that saved bytes (260) had 1/8 of its prime
 * gone around, the others less than 1/50. This rule made 3 and 2: 79 bytes fewer on the
 * first, 183 more on the second (that one frame). */
static bool reprime_pays(const struct codec *c)
{
    const struct half *h = &c->h[CODEC_TX];
    if (!c->builtin[CODEC_TX])
        return false;
    if (c->frame_in >= c->prime_max)
        return true;
    size_t b = c->builtin_len[CODEC_TX] < c->prime_max ? c->builtin_len[CODEC_TX] : 0, room = c->prime_max - b;
    size_t prime = b + (h->hist_len < room ? h->hist_len : room);
    uint64_t around = h->total - c->frame_start - c->frame_in;
    return around * REPRIME_AROUND >= prime;
}

int codec_compress(struct codec *c, const uint8_t *p, size_t n, struct buf *out)
{
    uint64_t t0 = clock_ns();
    /* After an idle time, a new program may be starting: a new frame when it pays. */
    if (t0 - c->last_write_ns >= REPRIME_IDLE_NS && reprime_pays(c))
        c->reprime = true;
    c->last_write_ns = t0;
    size_t out0 = out->len;
    int rc;
    bool chunked = c->sc[CODEC_TX] != NULL, text = false;
    text_write_start(c, CODEC_TX);
    if (chunked && n && n <= SC_MAX_INPUT) {
        rc = compress_small(c, p, n, out);
    } else if (chunked && n <= TC_MAX_INPUT && text_pays(c) && tc_suits(p, n) && !seen_before(c, p, n)) {
        rc = compress_text(c, p, n, out);
        text = true;
    } else {
        /* A zstd chunk: its head says its size, so the block is made aside first. */
        struct buf *z = chunked ? &c->scratch : out;
        if (chunked)
            buf_clear(z);
        bool fresh = c->next_level != c->level || (c->reprime && n >= REPRIME_WRITE);
        rc = fresh ? new_frame(c, z) : 0;
        if (rc == 0)
            rc = compress_zstd(c, p, n, z);
        if (fresh) /* zstd hashes the prime in this first call */
            log_debug("link compression: a new frame at %llu, primed with %zu bytes: %llu us",
                      (unsigned long long)c->h[CODEC_TX].total, c->h[CODEC_TX].prefix_len,
                      (unsigned long long)((clock_ns() - t0) / 1000));
        c->frame_in += n;
        if (rc == 0 && chunked && z->len)
            rc = sc_encode_zstd_head(c->sc[CODEC_TX], (uint32_t)z->len, out);
        if (rc == 0 && chunked)
            rc = buf_append(out, buf_head(z), z->len);
        if (rc == 0 && chunked) {
            sc_feed_start(c->sc[CODEC_TX], SC_FEED_MAX);
            sc_feed(c->sc[CODEC_TX], p, n);
        }
    }
    if (rc < 0)
        return rc;
    if ((rc = hist_append(c, &c->h[CODEC_TX], p, n)) < 0)
        return rc;
    if (!text)
        text_feed(c, CODEC_TX, p, n);
    c->h[CODEC_TX].total += n;
    uint64_t t1 = clock_ns();
    c->tune_in += n;
    c->tune_out += out->len - out0;
    c->tune_ns += t1 - t0;
    tune(c, t1);
    return 0;
}

/* Decodes zstd input, at most limit bytes of in, into out within *room. 1 when room ran
 * out (zstd may hold more), 0 when that input is used, -EBADMSG or -ENOMEM. */
static int decompress_zstd(struct codec *c, struct buf *in, uint64_t limit, struct buf *out, size_t *room)
{
    struct half *h = &c->h[CODEC_RX];
    ZSTD_inBuffer i = { buf_head(in), in->len < limit ? in->len : (size_t)limit, 0 };
    int rc = 0;
    for (;;) {
        if (h->need_prime && i.pos < i.size) {
            /* The history now ends where the sender's did when it began the next frame. */
            if (prime_frame(c, CODEC_RX) < 0) {
                rc = -ENOMEM;
                break;
            }
            h->need_prime = false;
        }
        uint8_t *dst = buf_append_space(out, *room);
        if (!dst) {
            rc = -ENOMEM;
            break;
        }
        ZSTD_outBuffer o = { dst, *room, 0 };
        size_t r = ZSTD_decompressStream(c->dctx, &o, &i);
        out->len -= *room - o.pos;
        if (ZSTD_isError(r)) {
            rc = -EBADMSG;
            break;
        }
        if (hist_append(c, h, dst, o.pos) < 0) {
            rc = -ENOMEM;
            break;
        }
        if (c->sc[CODEC_RX])
            sc_feed(c->sc[CODEC_RX], dst, o.pos);
        text_feed(c, CODEC_RX, dst, o.pos);
        h->total += o.pos;
        *room -= o.pos;
        if (r == 0)
            h->need_prime = true;
        if (!*room) { /* full: there may be more for this input */
            rc = 1;
            break;
        }
        if (i.pos == i.size)
            break;
    }
    buf_consume(in, i.pos);
    if (c->sc[CODEC_RX])
        c->rx_left -= i.pos;
    c->rx_more = rc == 1;
    return rc;
}

/* The chunk head at in: a small write's bytes go to out, a zstd chunk's size to rx_left.
 * 0, -EAGAIN (not all there yet), -EBADMSG or -ENOMEM. */
static int decompress_chunk(struct codec *c, struct buf *in, struct buf *out, size_t *room)
{
    struct half *h = &c->h[CODEC_RX];
    size_t before = out->len, used;
    uint32_t zstd_len, text_len;
    int rc = sc_decode(c->sc[CODEC_RX], buf_head(in), in->len, out, &used, &zstd_len, &text_len);
    if (rc < 0)
        return rc;
    buf_consume(in, used);
    text_write_start(c, CODEC_RX);
    if (text_len) {
        if (text_len > TC_MAX_INPUT || zstd_len > TC_MAX_CODE)
            return -EBADMSG;
        c->rx_text_n = text_len;
        c->rx_text_code = zstd_len;
        return 0;
    }
    if (zstd_len > CHUNK_MAX_ZSTD)
        return -EBADMSG;
    size_t n = out->len - before;
    if (hist_append(c, h, buf_head(out) + before, n) < 0)
        return -ENOMEM;
    text_feed(c, CODEC_RX, buf_head(out) + before, n);
    h->total += n;
    *room -= n;
    c->rx_left = zstd_len;
    if (zstd_len)
        sc_feed_start(c->sc[CODEC_RX], SC_FEED_MAX);
    return 0;
}

/* A text chunk's code, once all there, decoded into rx_text. 0, -EAGAIN, -EBADMSG or -ENOMEM. */
static int decompress_text(struct codec *c, struct buf *in)
{
    if (in->len < c->rx_text_code)
        return -EAGAIN;
    if (text_model(c, CODEC_RX) < 0)
        return -ENOMEM;
    tc_write_start(c->tc[CODEC_RX], 0);
    buf_clear(&c->rx_text);
    c->rx_text_at = 0;
    uint8_t *dst = buf_append_space(&c->rx_text, c->rx_text_n);
    if (!dst)
        return -ENOMEM;
    if (tc_decode(c->tc[CODEC_RX], buf_head(in), c->rx_text_code, dst, c->rx_text_n) < 0)
        return -EBADMSG;
    sc_feed_start(c->sc[CODEC_RX], SC_FEED_MAX);
    sc_feed(c->sc[CODEC_RX], dst, c->rx_text_n);
    buf_consume(in, c->rx_text_code);
    c->rx_text_n = c->rx_text_code = 0;
    return 0;
}

/* Gives out what room allows of a decoded text chunk. */
static int text_give(struct codec *c, struct buf *out, size_t *room)
{
    struct half *h = &c->h[CODEC_RX];
    size_t left = c->rx_text.len - c->rx_text_at, k = left < *room ? left : *room;
    const uint8_t *p = buf_head(&c->rx_text) + c->rx_text_at;
    if (buf_append(out, p, k) < 0 || hist_append(c, h, p, k) < 0)
        return -ENOMEM;
    h->total += k;
    *room -= k;
    if ((c->rx_text_at += k) == c->rx_text.len) {
        buf_clear(&c->rx_text);
        c->rx_text_at = 0;
    }
    return 0;
}

int codec_decompress(struct codec *c, struct buf *in, struct buf *out, size_t max_out)
{
    size_t room = max_out;
    if (!c->sc[CODEC_RX]) /* one zstd stream */
        return decompress_zstd(c, in, SIZE_MAX, out, &room);
    while (in->len || c->rx_more || c->rx_text.len) {
        if (c->rx_text.len) {
            if (!room)
                return 1;
            if (text_give(c, out, &room) < 0)
                return -ENOMEM;
            continue;
        }
        if (c->rx_text_n) {
            int rc = decompress_text(c, in);
            if (rc == -EAGAIN)
                break;
            if (rc < 0)
                return rc;
            continue;
        }
        if (c->rx_left || c->rx_more) {
            int rc = decompress_zstd(c, in, c->rx_left, out, &room);
            if (rc)
                return rc;
            continue;
        }
        if (room < SC_MAX_INPUT) /* a small chunk may give that much */
            return room == max_out ? -EINVAL : 1;
        int rc = decompress_chunk(c, in, out, &room);
        if (rc == -EAGAIN)
            break;
        if (rc < 0)
            return rc;
    }
    return 0;
}
