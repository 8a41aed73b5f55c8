/* session.c -- the engine both halves share: the link's handshake, compression cache and
 * incoming frames, and the session's life (start, end, clients, statistics). X bytes are
 * framed into whole messages per channel (channel.c); what goes out onto the link, and when,
 * is linkwriter.c's; a lost link and its replacement are relink.c's. Must not block: every
 * socket is non-blocking. */
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
            used += snprintf(what + used, cap - used, ", %zu pixel bodies", xc_pixcache_loaded(s->pixcache));
    }
    if (rc >= 0)
        rc = xc_tilecache_new(&s->tilecache, tilecache_budget(s));
    if (rc >= 0 && (rc = cache_load_agreed(s, DICT_TILES, &p, &n)) == 1) {
        rc = xc_tilecache_load(s->tilecache, p, n);
        free(p);
        if (rc == 0 && used < cap)
            snprintf(what + used, cap - used, ", %zu tiles", xc_tilecache_loaded(s->tilecache));
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
    if (xc_tilecache_hits(s->tilecache))
        log_info("compression cache: %llu tiles of large images sent as earlier sessions'",
                 (unsigned long long)xc_tilecache_hits(s->tilecache));
    struct buf tiles = { 0 };
    rc = s->tilecache ? xc_tilecache_save(s->tilecache, &tiles) : 0;
    if (!rc && tiles.len)
        rc = dict_store_save(s->dict, DICT_TILES, buf_head(&tiles), tiles.len);
    if (rc < 0)
        log_warn("compression cache: cannot save the tiles in %s: %s", s->dict->dir, strerror(-rc));
    buf_free(&tiles);
}

/* The session's table of channels, by id. */
struct channel *channel_find(struct session *s, uint32_t id)
{
    struct channel *ch = s->by_slot[id % MAX_CHANNELS];
    return ch && ch->id == id && !ch->dead ? ch : NULL;
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
    int rc = pacer_on_ack(&s->pacer, acked, s->now());
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
            if (s->cfg.observe && !s->observer) {
                /* What uses the observer's connection hears of it through these. */
                struct observer_listener ls[5];
                size_t n = 0;
                channel_listen(s, &ls[n++]);
                if (s->learnt)
                    learnt_listen(s->learnt, &s->cfg.upstream, &ls[n++]);
                statewatch_listen(s->statewatch, &ls[n++]);
                fontset_listen(s->fontset, &ls[n++]);
                spare_listen(s, &ls[n++]);
                observer_start(s, ls, n, &s->observer);
            }
        }
        char warm[96];
        if ((s->hs.caps & CAP_ZSTD) && s->hs.window_log > codec_window_for(s->cfg.max_memory))
            log_warn("link: the other side is an older tincan with a 16 MiB compression window: "
                     "this side may hold more than its memory bound of %llu MiB",
                     (unsigned long long)(s->cfg.max_memory >> 20));
        if (s->hs.caps & CAP_ZSTD)
            linkwriter_set_window(s, s->hs.window_log);
        if ((s->hs.caps & CAP_ZSTD) &&
            codec_new_window(&s->codec, s->cfg.compress_level, s->cfg.link_speed, s->hs.window_log) == 0) {
            /* What follows the handshake is compressed. */
            if (buf_append(&s->wire_rx, buf_head(&s->link_rx), s->link_rx.len) < 0) {
                session_end(s, false, "out of memory starting the link", NULL);
                return;
            }
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
        if (s->goodbye_when_up) /* the session ended during the handshake: now it can say so */
            session_goodbye(s);
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

void session_on_link_readable(struct session *s)
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

/* ---------------------------------------------------------------- public */

static void before_sleep(void *data)
{
    spare_tick(data);
    linkwriter_pump(data);
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
    s->spare.clients_may_go = channel_session_up;
    stats_init(&s->stats);
    pacer_init(&s->pacer);
    s->idle_ns_at_start = loop_idle_ns(loop);
    if (cfg->role == ROLE_DISPLAY && cfg->cache_dir && learnt_new(&s->learnt, cfg->cache_dir) < 0)
        s->learnt = NULL; /* learn once: without it, fonts are learnt per session, that is all */
    if (cfg->role == ROLE_DISPLAY && fontset_new(&s->fontset, s, channel_resume_requests) < 0)
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
    linkwriter_set_window(s, s->hs.window_log);
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
    s->handshake_deadline_ns = s->now() + (uint64_t)s->cfg.handshake_timeout_ms * 1000000u;
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
    xc_tilecache_free(s->tilecache);
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
    /* A command that fails at once (not found: 127) ends before the link is up; its GOODBYE,
     * with the status, goes once it is (or the handshake's timeout ends the session). */
    if (s->state == SESSION_HANDSHAKE) {
        s->goodbye_when_up = true;
        return;
    }
    if (s->state == SESSION_UP) {
        /* GOODBYE says how much of the peer's stream we received: both sides then save
         * the same bytes of each direction for the next session. */
        struct buf got = { 0 };
        int rc = buf_put_varint(&got, s->codec ? codec_total(s->codec, CODEC_RX) : 0);
        if (!rc && is_app(s) && s->exit_status >= 0)
            rc = buf_append(&got, &(uint8_t){ (uint8_t)s->exit_status }, 1);
        rc = rc < 0 ? rc : link_send(s, FRAME_GOODBYE, 0, buf_head(&got), got.len);
        buf_free(&got);
        if (rc < 0)
            return;
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
    if (s->state == SESSION_HANDSHAKE && s->now() > s->handshake_deadline_ns) {
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
    fprintf(f, "link writes of frames: %u urgent, %u full (%u bytes), %u at the deadline (%.0f ms), %u unheld, "
               "%u coalesced under contention\n",
            s->flushes[FLUSH_URGENT], s->flushes[FLUSH_FULL], FLUSH_BYTES, s->flushes[FLUSH_DEADLINE],
            (double)linkwriter_flush_delay_ns(s) / 1e6, s->flushes[FLUSH_AT_ONCE], s->flushes[FLUSH_COALESCED]);
}

