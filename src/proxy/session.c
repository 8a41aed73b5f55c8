/* session.c -- the engine both halves share: the link (handshake, compression, frames),
 * the scheduler and the session's life. X bytes are framed into whole messages per channel
 * (channel.c); before each sleep the scheduler packs queued data from all channels into
 * one link write, round robin. Must not block: every socket is non-blocking. */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "link/dict_builtin.h"
#include "link/transport.h"
#include "proxy/fontset.h"
#include "proxy/learnt.h"
#include "proxy/statewatch.h"
#include "proxy/session_private.h"
#include "proxy/spare.h"

static void link_pump(struct session *s);
static void mem_set_window(struct session *s, int window_log);

/* ---------------------------------------------------------------- compression cache (warm start)
 * Per direction, the last bytes of the stream are saved at a clean end, up to the offsets
 * both sides agreed on in GOODBYE; the next session primes its streams with the files both
 * sides still hold (docs/PROTOCOL.md 2.2). */

static enum dict_dir dir_of(const struct session *s, enum codec_dir d)
{
    return (d == CODEC_TX) == is_app(s) ? DICT_UP : DICT_DOWN;
}

/* At session start: the files this side can offer. Without a usable directory, no cache. */
static uint32_t cache_open(struct session *s)
{
    if (!s->cfg.cache_dir || !s->cfg.compress_level || !(s->dict = calloc(1, sizeof *s->dict)))
        return 0;
    int rc = dict_store_open(s->dict, s->cfg.cache_dir);
    if (rc < 0) {
        log_warn("compression cache %s unusable (%s): starting cold", s->cfg.cache_dir,
                 rc == -EPERM ? "not a directory of ours closed to others" : strerror(-rc));
        free(s->dict);
        s->dict = NULL;
        return 0;
    }
    return CAP_DICT;
}

/* The cache file of kind dir both sides hold, loaded into *p (malloc'd): 1, 0 for none,
 * or -errno (the peer uses it: the link cannot go on without). */
static int cache_load_agreed(struct session *s, enum dict_dir dir, uint8_t **p, size_t *n)
{
    const struct dict_offer *app = is_app(s) ? &s->hs.offer_self : &s->hs.offer_peer;
    const struct dict_offer *disp = is_app(s) ? &s->hs.offer_peer : &s->hs.offer_self;
    int k = dict_offer_choose(app, disp, dir);
    if (k < 0)
        return 0;
    for (size_t i = 0; i < s->hs.offer_self.n; i++)
        if (s->hs.offer_self.e[i].dir == dir && !memcmp(s->hs.offer_self.e[i].hash, app->e[k].hash, DICT_HASH_SIZE)) {
            int rc = dict_store_load(s->dict, i, p, n);
            return rc < 0 ? rc : 1;
        }
    return -ENOENT; /* chosen from the app side's offer and ours: cannot happen */
}

/* The pixel bodies kept for the next session: an eighth of what the encoders' body models
 * may hold (4 MiB under the default bound), twice over with the loaded file. */
static size_t pixcache_budget(const struct session *s) { return s->xc_budget.cap / 2; }

/* Once the handshake is done: primes each direction with the dictionary both sides hold,
 * and loads the pixel bodies both hold. */
static int cache_prime(struct session *s, char *what, size_t cap)
{
    snprintf(what, cap, "cold");
    if (!s->dict || !(s->hs.caps & CAP_DICT) || !s->codec)
        return 0;
    size_t used = 0;
    for (int d = CODEC_TX; d <= CODEC_RX; d++) {
        enum dict_dir dir = dir_of(s, (enum codec_dir)d);
        uint8_t *p;
        size_t n;
        int rc = cache_load_agreed(s, dir, &p, &n);
        if (rc == 1) {
            rc = codec_prime(s->codec, (enum codec_dir)d, p, n);
            free(p);
            used += snprintf(what + used, cap - used, "%s%s %zu KiB", used ? ", " : "warm: ",
                             dir == DICT_UP ? "up" : "down", n / 1024);
        }
        if (rc < 0)
            return rc;
    }
    if (!(s->hs.caps & CAP_XCODEC))
        return 0;
    uint8_t *p;
    size_t n;
    int rc = xc_pixcache_new(&s->pixcache, pixcache_budget(s));
    if (rc == 0 && (rc = cache_load_agreed(s, DICT_PIX, &p, &n)) == 1) {
        rc = xc_pixcache_load(s->pixcache, p, n);
        free(p);
        if (rc == 0 && used < cap)
            snprintf(what + used, cap - used, ", %zu pixel bodies", xc_pixcache_loaded(s->pixcache));
    }
    return rc;
}

/* Every zstd frame starts from the built-in dictionary, then the history (CAP_BUILTIN):
 * the session start and a small program's first messages cost references, not bytes. */
static int builtin_prime(struct session *s)
{
    if (!s->codec || !(s->hs.caps & CAP_BUILTIN))
        return 0;
    for (int d = CODEC_TX; d <= CODEC_RX; d++) {
        bool up = dir_of(s, (enum codec_dir)d) == DICT_UP;
        int rc = codec_set_builtin(s->codec, (enum codec_dir)d, up ? dict_builtin_up : dict_builtin_down,
                                   up ? dict_builtin_up_len : dict_builtin_down_len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void cache_save(struct session *s)
{
    if (!s->dict || !s->codec)
        return;
    for (int d = CODEC_TX; d <= CODEC_RX; d++) {
        const uint8_t *p;
        size_t n;
        int rc = codec_history(s->codec, (enum codec_dir)d, s->dict_cut[d], &p, &n);
        if (!rc && n)
            rc = dict_store_save(s->dict, dir_of(s, (enum codec_dir)d), p, n);
        if (rc < 0)
            log_warn("compression cache: cannot save the %s dictionary in %s: %s",
                     dir_of(s, (enum codec_dir)d) == DICT_UP ? "up" : "down", s->dict->dir, strerror(-rc));
    }
    if (xc_pixcache_hits(s->pixcache))
        log_info("compression cache: %llu pixel bodies sent again as the last session's codes",
                 (unsigned long long)xc_pixcache_hits(s->pixcache));
    struct buf pix = { 0 };
    int rc = s->pixcache ? xc_pixcache_save(s->pixcache, &pix) : 0;
    if (!rc && pix.len)
        rc = dict_store_save(s->dict, DICT_PIX, buf_head(&pix), pix.len);
    if (rc < 0)
        log_warn("compression cache: cannot save the pixel bodies in %s: %s", s->dict->dir, strerror(-rc));
    buf_free(&pix);
}

void session_end(struct session *s, bool clean, const char *fmt, const char *arg)
{
    if (s->state == SESSION_ENDED)
        return;
    if (clean && s->dict_cut_set)
        cache_save(s);
    s->state = SESSION_ENDED;
    s->ended_clean = clean;
    snprintf(s->end_reason, sizeof s->end_reason, fmt, arg);
    loop_unwatch(s->loop, &s->link_in_w);
    loop_unwatch(s->loop, &s->link_out_w);
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead) {
            ch->peer_closed = true;
            channel_drop(ch, NULL);
        }
}

/* The peer has read this many of our link bytes: the pacer learns the link from it. */
static int on_ack(struct session *s, const struct frame *f)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t acked;
    if (f->channel || rd_varint(&r, &acked) < 0 || rd_left(&r))
        return -EBADMSG;
    /* After a resume, ACKs the peer wrote before the outage arrive again, older than the
     * RESUME that acknowledged more: not news. */
    if (s->generation && acked < s->pacer.acked)
        return 0;
    int rc = pacer_on_ack(&s->pacer, acked, clock_ns());
    if (!rc)
        relink_acked(s, acked);
    if (!rc && s->observer)
        observer_on_ack(s->observer, acked);
    return rc;
}

/* The peer's link was quiet: it asks whether this side is still there. */
static int on_ping(struct session *s, const struct frame *f)
{
    if (f->channel || f->len)
        return -EBADMSG;
    s->ack_now = true;
    return 0;
}

uint64_t session_outage_now_ns(const struct session *s, uint64_t now_ns)
{
    return s->state == SESSION_DETACHED && now_ns > s->outage_from_ns ? now_ns - s->outage_from_ns : 0;
}

static int on_goodbye(struct session *s, const struct frame *f)
{
    /* The peer received our stream up to `got`; our receiving ends with this frame. */
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t got;
    uint8_t status;
    if (f->len && rd_varint(&r, &got) < 0)
        return -EBADMSG;
    if (rd_left(&r)) { /* then the app side's command's exit status */
        if (is_app(s) || rd_u8(&r, &status) < 0 || rd_left(&r))
            return -EBADMSG;
        s->peer_exit_status = status;
    }
    if (f->len && s->codec) {
        size_t after = s->link_rx.len - (size_t)(f->payload + f->len - buf_head(&s->link_rx));
        s->dict_cut[CODEC_TX] = got;
        s->dict_cut[CODEC_RX] = codec_total(s->codec, CODEC_RX) - after;
        s->dict_cut_set = true;
    }
    session_end(s, true, "%s", "the other side ended the session");
    return 0;
}

static int on_bad_frame(struct session *s, const struct frame *f) { return -EBADMSG; }

typedef int (*frame_handler)(struct session *, const struct frame *);

static frame_handler handler_for(uint8_t type)
{
    switch (type) {
    case FRAME_OPEN: return channel_on_open;
    case FRAME_DATA: return channel_on_data;
    case FRAME_CLOSE: return channel_on_close;
    case FRAME_WINDOW: return channel_on_window;
    case FRAME_PREDICTED: return channel_on_predicted;
    case FRAME_FACT: return channel_on_fact;
    case FRAME_ACK: return on_ack;
    case FRAME_PING: return on_ping;
    case FRAME_GOODBYE: return on_goodbye;
    case FRAME_SPARE: return spare_on_frame;
    case FRAME_HINT: return channel_on_hint;
    }
    return on_bad_frame; /* authentication frames after the handshake */
}

static void link_process_frames(struct session *s);

static void link_process_input(struct session *s)
{
    if (s->state == SESSION_HANDSHAKE) {
        int rc = hs_feed(&s->hs, &s->link_rx, &s->hs_tx);
        if (rc < 0) {
            s->refused = true;
            log_error("link: %s", s->hs.error);
            session_end(s, false, "link handshake failed: %s", s->hs.error);
            return;
        }
        if (rc == 0)
            return;
        s->state = SESSION_UP;
        s->caps = s->hs.caps;
        s->window_log = s->hs.window_log;
        memcpy(s->token_peer, s->hs.session.token_peer, HS_TOKEN_SIZE);
        s->rx_stream = s->link_rx.len; /* what came after the handshake is the stream's start */
        s->xcodec = (s->hs.caps & CAP_XCODEC) != 0;
        s->spare.enabled = (s->hs.caps & CAP_SPARE) != 0;
        spare_expect(s);
        channel_session_up(s);
        if (!is_app(s)) {
            /* The spare first: the server numbers clients in the order it accepts them,
             * so the first client's resource ids are those it would get directly. */
            spare_open(s);
            if (s->cfg.observe && !s->observer)
                observer_start(s, &s->observer);
        }
        char warm[96];
        if ((s->hs.caps & CAP_ZSTD) && s->hs.window_log > codec_window_for(s->cfg.max_memory))
            log_warn("link: the other side is an older tincan with a 16 MiB compression window: "
                     "this side may hold more than its memory bound of %llu MiB",
                     (unsigned long long)(s->cfg.max_memory >> 20));
        if (s->hs.caps & CAP_ZSTD)
            mem_set_window(s, s->hs.window_log);
        if ((s->hs.caps & CAP_ZSTD) &&
            codec_new_window(&s->codec, s->cfg.compress_level, s->cfg.link_speed, s->hs.window_log) == 0) {
            /* What follows the handshake is compressed. */
            buf_append(&s->wire_rx, buf_head(&s->link_rx), s->link_rx.len);
            buf_clear(&s->link_rx);
            if ((s->hs.caps & CAP_SMALL) && codec_use_small(s->codec) < 0) {
                session_end(s, false, "%s", "out of memory");
                return;
            }
            /* Text chunks are for what a terminal draws (requests). Replies reach them
             * already modelled by the structured coder: on xlsfonts' 89 KB of font names
             * the text coder saved 0.5 KB of 2.4 for 19 ms of CPU at the two ends, more
             * time than the 0.5 KB takes at 256 kbit/s (docs/BENCHMARKS.md). */
            if (!is_app(s))
                codec_text_tx(s->codec, false);
        }
        if (cache_prime(s, warm, sizeof warm) < 0) {
            log_error("link: cannot load the agreed compression dictionary from %s", s->dict->dir);
            session_end(s, false, "%s", "compression cache failed");
            return;
        }
        if (builtin_prime(s) < 0) {
            session_end(s, false, "%s", "out of memory");
            return;
        }
        if (s->codec)
            log_info("link up (protocol version %d, zstd level %d, %s%s)", LINK_PROTOCOL_VERSION, codec_level(s->codec),
                     warm, s->hs.caps & CAP_BUILTIN ? ", built-in dictionary" : "");
        else
            log_info("link up (protocol version %d, uncompressed)", LINK_PROTOCOL_VERSION);
        hs_wipe(&s->hs);
    }
    int more;
    do {
        more = 0;
        if (s->codec) {
            uint64_t t0 = clock_ns();
            size_t before = s->link_rx.len;
            more = codec_decompress(s->codec, &s->wire_rx, &s->link_rx, DECOMPRESS_STEP);
            s->stats.encode_ns += clock_ns() - t0;
            s->stats.frame_bytes_in += s->link_rx.len - before;
            if (more < 0) {
                log_error("link: corrupt compressed stream: ending the link");
                session_end(s, false, "%s", "corrupt compressed link stream");
                return;
            }
        }
        link_process_frames(s);
    } while (more && s->state == SESSION_UP);
}

static void link_process_frames(struct session *s)
{
    while (s->link_rx.len && s->state == SESSION_UP) {
        struct frame f;
        long n = frame_decode(buf_head(&s->link_rx), s->link_rx.len, &f);
        if (n == -EAGAIN)
            break;
        /* A client's DATA, and the round trips its answers end, are counted to it (tincan info). */
        struct channel *ch = n >= 0 && f.type == FRAME_DATA ? channel_find(s, f.channel) : NULL;
        uint64_t round_trips = s->stats.round_trips;
        int rc = n < 0 ? (int)n : handler_for(f.type)(s, &f);
        if (ch) {
            ch->link_in += f.len;
            ch->round_trips += s->stats.round_trips - round_trips;
        }
        if (rc < 0) {
            char what[64];
            snprintf(what, sizeof what, "%s frame on channel %u", n < 0 ? "undecodable" : frame_type_name(f.type),
                     n < 0 ? 0 : f.channel);
            log_error("link: corrupt %s: ending the link", what);
            session_end(s, false, "corrupt link frame (%s)", what);
            return;
        }
        s->stats.link_frames_in++;
        if (f.type != FRAME_ACK)
            s->ack_worthy = true;
        buf_consume(&s->link_rx, (size_t)n);
    }
}

static void on_link_readable(struct session *s)
{
    struct buf *raw = s->codec ? &s->wire_rx : &s->link_rx;
    uint8_t *p = buf_append_space(raw, READ_CHUNK);
    if (!p) {
        session_end(s, false, "%s", "out of memory");
        return;
    }
    uint64_t t0 = clock_ns();
    ssize_t n = read(s->link_in, p, READ_CHUNK);
    s->stats.read_ns += clock_ns() - t0;
    raw->len -= READ_CHUNK - (n > 0 ? (size_t)n : 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        const char *why = n < 0 ? strerror(errno) : "the other side closed the link";
        if (s->state == SESSION_HANDSHAKE) {
            s->refused = true;
            session_end(s, false, "link closed during the handshake (%s): wrong secret or not a tincan peer?", why);
        } else {
            relink_lost(s, why);
        }
        return;
    }
    s->stats.link_bytes_in += (uint64_t)n;
    s->rx_last_ns = s->now();
    if (s->state == SESSION_UP)
        s->rx_stream += (uint64_t)n;
    link_process_input(s);
}

/* ---------------------------------------------------------------- memory bound
 * What a side holds is the codec (fixed once the window is agreed: codec_reserve, plus
 * codec_text_reserve for text chunks) and its buffers. Above the high mark the session stops reading its X peers (the app side's
 * clients, the display side's server connections), which then block as on a slow server,
 * until the link has drained it below the low mark. Nothing is dropped. */

/* The high mark leaves room, within the bound, for the codec, the process, one turn of
 * reads (64 events of READ_CHUNK) and one message crossing while paused, held twice (being
 * read, and framed into the queue behind it). With 16 MiB requests that room is 36 MiB, so
 * under a 64 MiB bound the mark falls to its floor, an eighth of the bound. */
#define XC_BUDGET_SHARE 8 /* of --max-memory, for the body models of this side's encoders:
                           * at 64 MiB, two channels with image models and two with font tables */
#define REFS_BUDGET_SHARE 8 /* of --max-memory, for the channels' reference stores (the app
                             * side grants them; the display side holds what it is told) */

static void mem_set_window(struct session *s, int window_log)
{
    uint64_t limit = s->cfg.max_memory, floor = limit / 8;
    /* the body models: this side's encoders' budget, and as much again for its decoders
     * (bounded by the peer's budget, the same with the same --max-memory) */
    uint64_t fixed = codec_reserve(window_log) + codec_text_reserve() + MEM_BASE + 64 * READ_CHUNK +
                     2 * (uint64_t)XS_MAX_REQUEST_BYTES + 2 * (uint64_t)s->xc_budget.cap +
                     s->refs_budget.cap + (s->dict ? XC_PIXCACHE_BYTES + 2 * pixcache_budget(s) : 0);
    s->mem_high = limit > fixed + floor ? limit - fixed : floor;
    s->mem_low = s->mem_high / 4 * 3;
}

static uint64_t held_trim(struct buf *b)
{
    buf_trim(b, BUF_KEEP);
    return b->cap;
}

/* Once per loop turn: gives idle memory back, counts what is held, and pauses or resumes
 * reading. Bytes of partial messages (a request being read, a message being received) cannot
 * drain until their message is whole: once everything else has drained below the low mark,
 * one channel at a time may finish reading the message it is in, and one may receive the
 * rest of a partial message beyond its credit. So a message larger than what is left still
 * passes, nothing waits on itself, and partial messages complete only as fast as the link
 * drains what they become (not all at once: each would then be held whole). */
static void mem_check(struct session *s)
{
    buf_clear(&s->xc_scratch); /* scratch of one call: its last contents are spent */
    uint64_t held = held_trim(&s->link_rx) + held_trim(&s->link_tx) + held_trim(&s->wire_rx) + held_trim(&s->wire_tx) +
                    held_trim(&s->xc_scratch) + held_trim(&s->replay);
    uint64_t partial = 0;
    for (struct channel *ch = s->channels; ch; ch = ch->next) {
        uint64_t in = held_trim(&ch->from_x), rx = held_trim(&ch->from_link) + held_trim(&ch->dec_in);
        uint64_t tx = held_trim(&ch->to_x);
        held += in + rx + tx + held_trim(&ch->to_link);
        /* Bytes for an X peer drain only as it reads, and a client blocked writing to us
         * reads nothing until we read it (a PutImage crossing a GetImage reply): they do not
         * keep the exceptions below from being granted, or nothing would move. */
        partial += (ch->from_x.len ? in : 0) + (ch->from_link.len + ch->dec_in.len ? rx : 0) + tx;
    }
    s->mem_held = held;
    if (held > s->mem_peak)
        s->mem_peak = held;
    bool was = s->mem_paused;
    if (held > s->mem_high)
        s->mem_paused = true;
    else if (held < s->mem_low)
        s->mem_paused = false;
    if (s->mem_paused && !was) {
        s->mem_pauses++;
        log_debug("memory: %llu KiB held, above %llu KiB: not reading X peers", (unsigned long long)held / 1024,
                  (unsigned long long)s->mem_high / 1024);
    }
    if (!s->mem_paused) {
        s->mem_reader = s->mem_receiver = NULL;
        return;
    }
    if (s->mem_reader && (s->mem_reader->dead || !s->mem_reader->from_x.len))
        s->mem_reader = NULL;
    if (s->mem_receiver && (s->mem_receiver->dead || !(s->mem_receiver->from_link.len + s->mem_receiver->dec_in.len)))
        s->mem_receiver = NULL;
    if (held - partial >= s->mem_low) /* the link is still draining: no new exception */
        return;
    for (struct channel *ch = s->channels; ch && (!s->mem_reader || !s->mem_receiver); ch = ch->next) {
        if (ch->dead)
            continue;
        if (!s->mem_reader && ch->from_x.len)
            s->mem_reader = ch;
        if (!s->mem_receiver && ch->from_link.len + ch->dec_in.len)
            s->mem_receiver = ch;
    }
}

/* ---------------------------------------------------------------- link output */

/* Writes b to the link: 0 when all is out, 1 when the socket is full, -1 when the link broke.
 * Everything but the handshake (hs_tx) is the link's stream: counted, paced, kept to resend. */
static int link_write_buf(struct session *s, struct buf *b)
{
    bool stream = b != &s->hs_tx;
    while (b->len) {
        uint64_t t0 = clock_ns();
        ssize_t n = write(s->link_out, buf_head(b), b->len);
        s->stats.write_ns += clock_ns() - t0;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 1;
            if (s->state == SESSION_HANDSHAKE)
                session_end(s, false, "link lost: %s", strerror(errno));
            else
                relink_lost(s, strerror(errno));
            return -1;
        }
        s->stats.link_writes++;
        s->stats.link_bytes_out += (uint64_t)n;
        if (stream) {
            pacer_on_send(&s->pacer, (uint64_t)n, clock_ns());
            relink_sent(s, buf_head(b), (size_t)n);
        }
        buf_consume(b, (size_t)n);
    }
    return 0;
}

/* How long link_tx may wait for more frames: on a slow link each write costs a flushed
 * zstd block (3-10 bytes of its own) and usually a packet, so a few ms of gathering buys
 * bytes; on a fast one it only buys latency. */
static uint64_t flush_delay_ns(const struct session *s)
{
    switch (s->cfg.link_speed) {
    case CODEC_SPEED_MODEM: return 10000000;
    case CODEC_SPEED_ISDN: return 5000000;
    case CODEC_SPEED_ADSL: return 2000000;
    case CODEC_SPEED_LAN: return 0;
    }
    uint64_t r = s->link_rate_Bps; /* auto: by the measured rate; unknown (not TCP): at once */
    return !r ? 0 : r < 16000 ? 10000000 : r < 64000 ? 5000000 : r < 1000000 ? 2000000 : 0;
}

static bool channels_waiting(const struct session *s)
{
    for (const struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->on_link && ch->to_link.len && ch->send_credit)
            return true;
    return false;
}

enum flush_why { FLUSH_AT_ONCE, FLUSH_URGENT, FLUSH_FULL, FLUSH_DEADLINE };

/* Frames added to link_tx outside the scheduler are control frames (OPEN, WINDOW, FACT,
 * CLOSE, GOODBYE): the peer acts on them, so they go at once. Not PREDICTED: the client
 * has its answer already, and the display side needs it only before the request it
 * precedes, which the scheduler queues behind it. ACK is urgent: the pacer's round trip
 * and rate come from its timing. */
static void tx_classify(struct session *s)
{
    for (size_t at = s->tx_plain; at < s->link_tx.len && !s->tx_urgent;) {
        struct frame f;
        long n = frame_decode(buf_head(&s->link_tx) + at, s->link_tx.len - at, &f);
        if (n <= 0 || f.type != FRAME_PREDICTED)
            s->tx_urgent = true;
        at += n > 0 ? (size_t)n : 0;
    }
    s->tx_plain = s->link_tx.len;
}

/* Whether link_tx waits for more: only DATA nobody waits for, less than FLUSH_BYTES, for at
 * most the link's delay since it began to wait. Asks the loop to wake at the deadline. */
static bool link_hold(struct session *s)
{
    uint64_t delay = flush_delay_ns(s);
    if (!s->link_tx.len)
        return false;
    if (!delay || s->goodbye) {
        s->flushes[FLUSH_AT_ONCE]++;
        return false;
    }
    tx_classify(s);
    if (s->tx_urgent) {
        s->flushes[FLUSH_URGENT]++;
        return false;
    }
    if (s->link_tx.len >= FLUSH_BYTES || channels_waiting(s)) { /* as full as it will get */
        s->flushes[FLUSH_FULL]++;
        return false;
    }
    uint64_t now = s->now();
    if (!s->hold_since)
        s->hold_since = now;
    if (now - s->hold_since >= delay) {
        s->flushes[FLUSH_DEADLINE]++;
        return false;
    }
    loop_wake_by(s->loop, clock_ns() + (s->hold_since + delay - now));
    return true;
}

/* Debug: one line per link write, its frames (type:channel:length) and what zstd made of
 * them, to account for every byte on the link. */
static void trace_write(const struct session *s, size_t wire_len)
{
    char line[1024];
    size_t used = 0;
    for (size_t at = 0; at < s->link_tx.len && used < sizeof line - 40;) {
        struct frame f;
        long n = frame_decode(buf_head(&s->link_tx) + at, s->link_tx.len - at, &f);
        if (n <= 0)
            break;
        used += (size_t)snprintf(line + used, sizeof line - used, " %s:%u:%u", frame_type_name(f.type), f.channel, f.len);
        at += (size_t)n;
    }
    log_debug("link write: %zu frame bytes -> %zu:%s", s->link_tx.len, wire_len, line);
}

static void link_write(struct session *s)
{
    if (link_write_buf(s, &s->hs_tx) != 0 || s->state != SESSION_UP)
        return;
    if (s->link_tx.len && link_hold(s)) {
        link_write_buf(s, &s->wire_tx);
        return;
    }
    s->tx_plain = 0;
    s->tx_urgent = false;
    s->hold_since = 0;
    /* The rate moves slowly: a TCP_INFO of the last 100 ms (the scheduler's, most often) will do. */
    struct transport_queue q;
    uint64_t now = clock_ns();
    if (s->link_tx.len && s->link_is_tcp && now - s->link_rate_ns >= LINK_RATE_AGE_NS &&
        transport_queue_info(s->link_out, &q) == 0) {
        s->link_rate_Bps = q.rate_Bps;
        s->link_rate_ns = now;
    }
    if (!s->codec) {
        link_write_buf(s, &s->link_tx);
        return;
    }
    if (s->link_tx.len) { /* one flushed zstd block per write */
        codec_set_link_rate(s->codec, s->link_rate_Bps); /* for the automatic level */
        uint64_t t0 = clock_ns();
        size_t wire0 = s->wire_tx.len;
        s->stats.frame_bytes_out += s->link_tx.len;
        int rc = codec_compress(s->codec, buf_head(&s->link_tx), s->link_tx.len, &s->wire_tx);
        s->stats.encode_ns += clock_ns() - t0;
        if (log_get_level() >= LOG_DEBUG)
            trace_write(s, s->wire_tx.len - wire0);
        buf_clear(&s->link_tx);
        if (rc < 0) {
            session_end(s, false, "%s", "cannot compress the link stream");
            return;
        }
    }
    link_write_buf(s, &s->wire_tx);
}

/* Bytes waiting for the link, compressed or not yet. */
static size_t link_backlog(const struct session *s) { return s->link_tx.len + s->wire_tx.len; }

/* How many bytes to pack for the link now. On TCP, the kernel may hold only about 5 ms
 * of unsent data at the link's measured rate (2 KiB to 256 KiB): the rest waits here, per
 * channel, where the scheduler still chooses what goes first. The low-water mark follows,
 * so writability wakes us when the kernel runs low. */
static size_t kernel_budget(struct session *s, size_t wanted)
{
    if (!s->link_is_tcp)
        return LINK_OUT_HIGH;
    /* The kernel holds at most what it held at the last look plus what was written since:
     * when that and all we want fit the least target, asking (a syscall a write) changes nothing. */
    uint64_t bound = s->kq_unsent + (s->stats.link_bytes_out - s->kq_out);
    if (s->kq_known && bound + wanted <= LINK_TARGET_MIN)
        return (size_t)(LINK_TARGET_MIN - bound);
    struct transport_queue q;
    if (transport_queue_info(s->link_out, &q) < 0) {
        s->kq_known = false;
        return LINK_OUT_HIGH;
    }
    s->kq_known = true;
    s->kq_unsent = q.unsent;
    s->kq_out = s->stats.link_bytes_out;
    s->link_rate_Bps = q.rate_Bps;
    s->link_rate_ns = clock_ns();
    uint64_t target = q.rate_Bps / 200;
    if (target < LINK_TARGET_MIN)
        target = LINK_TARGET_MIN;
    if (target > LINK_TARGET_MAX)
        target = LINK_TARGET_MAX;
    if (target > 2 * s->lowat || 2 * target < s->lowat) {
        s->lowat = (uint32_t)target;
        transport_set_lowat(s->link_out, s->lowat);
    }
    return q.unsent >= target ? 0 : (size_t)(target - q.unsent);
}

/* ... and no more than the pacer lets be in flight beyond the peer (pacer.h): the kernel
 * cannot see a queue in a relay, a modem or a router. Its window counts link bytes; the
 * scheduler packs frame bytes, which the zstd stage shrinks by the recent ratio. */
static size_t link_budget(struct session *s, size_t queued, bool small)
{
    size_t budget = kernel_budget(s, queued + link_backlog(s));
    uint64_t allow = small ? pacer_allowance_small(&s->pacer) : pacer_allowance(&s->pacer), ratio = 1;
    if (s->codec && s->stats.link_bytes_out)
        ratio = s->stats.frame_bytes_out / s->stats.link_bytes_out;
    allow *= ratio < 1 ? 1 : ratio > 8 ? 8 : ratio;
    if (allow < queued)
        pacer_note_blocked(&s->pacer);
    return allow < budget ? (size_t)allow : budget;
}

/* Packs queued channel data into link_tx, a DATA_CHUNK per channel per round, until the
 * link buffer is full or nothing is ready; then CLOSE for channels whose X peer has gone. */
static void schedule_channels(struct session *s)
{
    size_t queued = 0;
    for (const struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->on_link && ch->send_credit)
            queued += ch->to_link.len;
    size_t budget = queued ? link_budget(s, queued, false) : 0, small_budget = queued ? link_budget(s, queued, true) : 0;
    /* First the channels with little queued (a key press, a small reply, a drawing
     * request), whole; then the rest, a piece each per round. */
    bool progress = true, small_first = true; /* one pass at least: CLOSEs go even without data */
    while (progress || small_first) {
        progress = false;
        for (struct channel *ch = s->channels; ch; ch = ch->next) {
            if (ch->dead || !ch->on_link || (small_first && ch->to_link.len > SMALL_QUEUE))
                continue;
            size_t lim = small_first ? small_budget : budget; /* small ones need not wait behind bulk for an ACK */
            size_t n = ch->to_link.len, backlog = link_backlog(s), room = backlog < lim ? lim - backlog : 0;
            if (n > DATA_CHUNK)
                n = DATA_CHUNK;
            if (n > room)
                n = room;
            if (n > ch->send_credit)
                n = (size_t)ch->send_credit;
            if (n) {
                frame_encode(&s->link_tx, FRAME_DATA, ch->id, buf_head(&ch->to_link), n);
                buf_consume(&ch->to_link, n);
                ch->link_out += n;
                ch->send_credit -= n;
                s->stats.link_frames_out++;
                progress = true;
                if (ch->urgent) /* some of it may be what a peer waits for */
                    s->tx_urgent = true;
                if (!ch->to_link.len)
                    ch->urgent = false;
            }
            if (ch->x_closed && !ch->to_link.len && !ch->peer_closed) {
                s->tx_urgent = true;
                frame_encode(&s->link_tx, FRAME_CLOSE, ch->id, NULL, 0);
                s->stats.link_frames_out++;
                ch->dead = true;
            }
        }
        if (small_first) { /* then everyone */
            small_first = false;
            progress = true;
        }
    }
    /* Rotate so the next turn starts with another channel. */
    if (s->channels && s->channels->next) {
        struct channel *first = s->channels, *last = first;
        while (last->next)
            last = last->next;
        s->channels = first->next;
        first->next = NULL;
        last->next = first;
    }
}

/* Tells the peer how many of its link bytes we have read: when ACK_BYTES have come
 * (at most every ACK_INTERVAL_NS; at once for eight times that), with a write that goes
 * anyway once ACK_FEW have come, or ACK_DELAY_NS after the first byte not yet acknowledged
 * (ACK_FEW_DELAY_NS while fewer than ACK_FEW have come: no peer's window, at least
 * PACER_MIN_WINDOW, waits on so few). An ACK costs a few bytes on the way back, so a
 * trickle of input is acknowledged in lumps; its lateness adds to the peer's round-trip
 * samples, of which the pacer keeps the least. */
static void send_ack(struct session *s)
{
    uint64_t pending = s->rx_stream - s->ack_sent, now = s->now();
    /* Acknowledging ACKs on a timer made the two sides ping-pong forever on an idle link. */
    if (!pending || (!s->ack_worthy && pending < ACK_FEW))
        return;
    if (s->ack_now) /* a PING: the peer wonders whether the link is alive */
        s->ack_first_ns = now - ACK_FEW_DELAY_NS;
    if (!s->ack_first_ns)
        s->ack_first_ns = now;
    bool lump = pending >= ACK_BYTES || (pending >= ACK_FEW && s->link_tx.len);
    uint64_t delay = pending < ACK_FEW ? ACK_FEW_DELAY_NS : ACK_DELAY_NS;
    if (pending < 8 * ACK_BYTES && !(lump && now - s->ack_sent_ns >= ACK_INTERVAL_NS) &&
        now - s->ack_first_ns < delay) {
        uint64_t due = lump ? s->ack_sent_ns + ACK_INTERVAL_NS : s->ack_first_ns + delay;
        loop_wake_by(s->loop, clock_ns() + (due > now ? due - now : 0));
        return;
    }
    s->ack_first_ns = 0;
    s->ack_worthy = s->ack_now = false;
    struct buf v = { 0 };
    buf_put_varint(&v, s->rx_stream);
    frame_encode(&s->link_tx, FRAME_ACK, 0, buf_head(&v), v.len);
    buf_free(&v);
    s->stats.link_frames_out++;
    s->ack_sent = s->rx_stream;
    s->ack_sent_ns = now;
}

static void link_pump(struct session *s)
{
    if (s->state == SESSION_UP || s->state == SESSION_DETACHED) /* what came before an outage still goes */
        for (struct channel *ch = s->channels; ch; ch = ch->next)
            if (!ch->dead && ch->on_link) {
                channel_write_x(ch);
                if (!ch->dead)
                    channel_grant(ch);
            }
    if (s->state == SESSION_UP) {
        tx_classify(s);
        schedule_channels(s);
        s->tx_plain = s->link_tx.len;
        send_ack(s);
    }
    if (s->mem_reader && s->mem_reader->dead)
        s->mem_reader = NULL;
    if (s->mem_receiver && s->mem_receiver->dead)
        s->mem_receiver = NULL;
    reap_channels(s);
    if (s->state != SESSION_ENDED)
        link_write(s);
    if (s->state == SESSION_ENDED)
        return;
    if (s->goodbye && !link_backlog(s) && !s->hs_tx.len) {
        session_end(s, true, "%s", "session ended");
        return;
    }
    /* The memory check before the channels' interest: a channel it lets finish the message
     * it reads must want to read now, and one it lets receive beyond its credit must be
     * granted it now: with every other channel paused, nothing else may wake the loop. */
    const struct channel *receiver = s->mem_receiver;
    mem_check(s);
    if (s->mem_receiver && s->mem_receiver != receiver)
        channel_grant(s->mem_receiver);
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead)
            channel_update_interest(ch);
    /* Wake when the link drains: to write what is packed (unless held: the loop wakes at
     * its deadline), or to pack what channels hold. */
    bool held = s->link_tx.len && s->hold_since;
    /* Channels' data waiting on the pacer's window waits for an ACK (a read), not for the
     * socket, which is writable all along: wanting it would spin. */
    bool pending = s->hs_tx.len ||
                   (s->state == SESSION_UP && (s->wire_tx.len || (s->link_tx.len && !held) ||
                                               (channels_waiting(s) && pacer_allowance(&s->pacer))));
    if (s->state == SESSION_DETACHED)
        return;
    if (s->link_in == s->link_out)
        loop_want(s->loop, &s->link_in_w, LOOP_READ | (pending ? LOOP_WRITE : 0));
    else
        loop_want(s->loop, &s->link_out_w, pending ? LOOP_WRITE : 0);
}

static void on_link_event(struct watch *w, unsigned events)
{
    struct session *s = w->data;
    if (events & LOOP_WRITE)
        link_write(s);
    if ((events & (LOOP_READ | LOOP_HUP)) && s->state != SESSION_ENDED && w == &s->link_in_w)
        on_link_readable(s);
}

int session_watch_link(struct session *s)
{
    int rc = loop_watch(s->loop, &s->link_in_w, s->link_in, LOOP_READ | LOOP_WRITE, on_link_event, s);
    if (!rc && s->link_out != s->link_in)
        rc = loop_watch(s->loop, &s->link_out_w, s->link_out, LOOP_WRITE, on_link_event, s);
    return rc;
}

/* ---------------------------------------------------------------- public */

static void before_sleep(void *data)
{
    spare_tick(data);
    link_pump(data);
}

int session_new(struct session **out, struct loop *loop, const struct session_config *cfg, int link_in, int link_out)
{
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->loop = loop;
    s->cfg = *cfg;
    if (!s->cfg.max_memory)
        s->cfg.max_memory = MEM_DEFAULT;
    s->xc_budget.cap = s->cfg.max_memory / XC_BUDGET_SHARE;
    s->refs_budget.cap = s->cfg.max_memory / REFS_BUDGET_SHARE;
    s->now = cfg->clock ? cfg->clock : clock_ns;
    if (!s->cfg.handshake_timeout_ms)
        s->cfg.handshake_timeout_ms = 15000;
    s->link_in = link_in;
    s->link_out = link_out;
    s->link_in_w.fd = s->link_out_w.fd = -1;
    for (size_t i = 0; i < MAX_CANDIDATES; i++)
        s->cand[i].in = s->cand[i].out = -1;
    s->rx_last_ns = s->now();
    struct transport_queue q;
    s->link_is_tcp = transport_queue_info(link_out, &q) == 0;
    s->lowat = TRANSPORT_INITIAL_LOWAT;
    if (predict_new(&s->predict) < 0) {
        free(s);
        return -ENOMEM;
    }
    s->next_id = 1;
    s->spare.fd = s->spare.old_fd = -1;
    stats_init(&s->stats);
    pacer_init(&s->pacer);
    s->idle_ns_at_start = loop_idle_ns(loop);
    if (cfg->role == ROLE_DISPLAY && cfg->cache_dir && learnt_new(&s->learnt, cfg->cache_dir) < 0)
        s->learnt = NULL; /* learn once: without it, fonts are learnt per session, that is all */
    if (cfg->role == ROLE_DISPLAY && fontset_new(&s->fontset, s) < 0)
        s->fontset = NULL; /* font sets then cost a round trip per question, that is all */
    if (cfg->role == ROLE_DISPLAY && statewatch_new(&s->statewatch) < 0)
        s->statewatch = NULL; /* toolkits then ask the server, that is all */
    uint32_t caps = cfg->compress_level ? CAP_ZSTD | cache_open(s) : 0;
    if (cfg->compress_level && !cfg->no_xcodec)
        caps |= CAP_XCODEC;
    if (cfg->role == ROLE_DISPLAY ? cfg->observe : !cfg->no_local_answers)
        caps |= CAP_SPARE; /* the display side's connections of its own: the observer's and spares */
    if (cfg->compress_level)
        caps |= CAP_SMALL | CAP_BUILTIN;
    int rc = hs_init(&s->hs, cfg->role, cfg->secret, cfg->secret_len, caps);
    if (s->dict)
        s->hs.offer_self = s->dict->offer;
    if (cfg->token)
        memcpy(s->token, cfg->token, sizeof s->token);
    else
        randombytes_buf(s->token, sizeof s->token);
    s->exit_status = s->peer_exit_status = -1;
    memcpy(s->hs.session.token_self, s->token, HS_TOKEN_SIZE);
    /* The window (and so the codec's memory) from the bound; the peer may choose smaller. */
    s->hs.window_log = codec_window_for(s->cfg.max_memory);
    mem_set_window(s, s->hs.window_log);
    if (!rc)
        rc = hs_start(&s->hs, &s->hs_tx);
    if (!rc)
        rc = net_set_nonblock(link_in);
    if (!rc && link_out != link_in)
        rc = net_set_nonblock(link_out);
    if (!rc)
        rc = session_watch_link(s);
    if (rc) {
        session_free(s);
        return rc;
    }
    s->handshake_deadline_ns = clock_ns() + (uint64_t)s->cfg.handshake_timeout_ms * 1000000u;
    if ((rc = loop_add_before_sleep(loop, before_sleep, s)) < 0) {
        session_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    if (s->state != SESSION_ENDED)
        session_end(s, true, "%s", "closed");
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        ch->dead = true;
    reap_channels(s);
    observer_free(s->observer); /* while link_tx and the predictor live: it may tell a last fact */
    s->observer = NULL;
    spare_free(s);
    loop_unwatch(s->loop, &s->link_in_w);
    loop_unwatch(s->loop, &s->link_out_w);
    loop_remove_before_sleep(s->loop, before_sleep, s);
    relink_free(s);
    if (s->link_in >= 0)
        close(s->link_in);
    if (s->link_out >= 0 && s->link_out != s->link_in)
        close(s->link_out);
    hs_wipe(&s->hs);
    buf_free(&s->link_rx);
    buf_free(&s->hs_tx);
    buf_free(&s->link_tx);
    buf_free(&s->wire_rx);
    buf_free(&s->wire_tx);
    buf_free(&s->xc_scratch);
    codec_free(s->codec);
    free(s->dict);
    xc_pixcache_free(s->pixcache); /* after the channels' coders */
    predict_free(s->predict);
    fontset_free(s->fontset);
    statewatch_free(s->statewatch);
    if (s->learnt) {
        learnt_save(s->learnt, true);
        learnt_free(s->learnt);
    }
    free(s);
}

int session_add_client(struct session *s, int fd)
{
    if (s->state == SESSION_ENDED) {
        close(fd);
        return -ENOTCONN;
    }
    uint32_t id = s->next_id;
    for (unsigned tries = 0; s->by_slot[id % MAX_CHANNELS] && tries < MAX_CHANNELS; tries++)
        id++;
    struct channel *ch = channel_new(s, id, fd);
    if (!ch) {
        log_warn("too many X clients (%zu): refusing a new one", s->n_channels);
        close(fd);
        return -EMFILE;
    }
    s->next_id = id + 1;
    s->stats.clients_total++;
    int rc = channel_start_client(ch);
    if (rc) {
        channel_drop(ch, "cannot watch the client socket");
        return rc;
    }
    return 0;
}

void session_goodbye(struct session *s)
{
    if (s->state == SESSION_ENDED || s->goodbye)
        return;
    if (s->state == SESSION_DETACHED) { /* nobody to tell */
        session_end(s, true, "%s", "session ended while the link was lost");
        return;
    }
    if (s->state == SESSION_UP) {
        /* GOODBYE says how much of the peer's stream we received: both sides then save
         * the same bytes of each direction for the next session. */
        struct buf got = { 0 };
        buf_put_varint(&got, s->codec ? codec_total(s->codec, CODEC_RX) : 0);
        if (is_app(s) && s->exit_status >= 0)
            buf_append(&got, &(uint8_t){ (uint8_t)s->exit_status }, 1);
        frame_encode(&s->link_tx, FRAME_GOODBYE, 0, buf_head(&got), got.len);
        buf_free(&got);
        if (s->codec) {
            s->dict_cut[CODEC_TX] = codec_total(s->codec, CODEC_TX) + s->link_tx.len;
            s->dict_cut[CODEC_RX] = codec_total(s->codec, CODEC_RX);
            s->dict_cut_set = true;
        }
    }
    s->goodbye = true;
}

void session_tick(struct session *s)
{
    if (s->state == SESSION_HANDSHAKE && clock_ns() > s->handshake_deadline_ns) {
        s->refused = true;
        log_error("link: no valid handshake within %u ms: refused", s->cfg.handshake_timeout_ms);
        session_end(s, false, "%s", "link handshake timed out");
    }
    relink_tick(s);
}

int session_token_hex(const struct session *s, bool peer, char *out, size_t cap)
{
    const uint8_t *t = peer ? s->token_peer : s->token;
    bool known = false;
    for (size_t i = 0; i < HS_TOKEN_SIZE; i++)
        known |= t[i] != 0;
    if (!known || cap < 17)
        return -ENOTCONN;
    sodium_bin2hex(out, cap, t, 8);
    return 0;
}

void session_set_exit_status(struct session *s, int status) { s->exit_status = status & 0xff; }
int session_peer_exit_status(const struct session *s) { return s->peer_exit_status; }

enum session_state session_state(const struct session *s) { return s->state; }
const char *session_end_reason(const struct session *s) { return s->ended_clean ? NULL : s->end_reason; }
bool session_refused(const struct session *s) { return s->refused; }
size_t session_channel_count(const struct session *s) { return s->n_channels; }
uint64_t session_memory_held(const struct session *s) { return s->mem_held; }
bool session_reading_paused(const struct session *s) { return s->mem_paused; }
struct stats *session_stats(struct session *s) { return &s->stats; }

void session_print_stats(struct session *s, FILE *f)
{
    stats_print(&s->stats, f, is_app(s) ? "app side" : "display side", loop_idle_ns(s->loop) - s->idle_ns_at_start);
    fprintf(f, "memory: buffers held %.1f MiB at most (high mark %.1f MiB, reading paused %u times); "
               "compression %.1f MiB (window %d KiB); bound %.0f MiB\n",
            (double)s->mem_peak / 1048576, (double)s->mem_high / 1048576, s->mem_pauses,
            s->codec ? (double)codec_memory(s->codec) / 1048576 : 0.0, s->codec ? (1 << codec_window_log(s->codec)) / 1024 : 0,
            (double)s->cfg.max_memory / 1048576);
    fprintf(f, "link writes of frames: %u urgent, %u full (%u bytes), %u at the deadline (%.0f ms), %u unheld\n",
            s->flushes[FLUSH_URGENT], s->flushes[FLUSH_FULL], FLUSH_BYTES, s->flushes[FLUSH_DEADLINE],
            (double)flush_delay_ns(s) / 1e6, s->flushes[FLUSH_AT_ONCE]);
}

