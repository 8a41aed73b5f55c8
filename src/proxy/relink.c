/* relink.c -- the link's life across outages: liveness probes on a quiet link, detaching
 * when it is lost (every channel stays), new links proving they are for this session, and
 * the streams resumed exactly where the peer stopped reading (docs/PROTOCOL.md 1.3).
 * Must not touch what the link carries: above the stream's bytes nothing knows of an outage.
 * Workload: a PING every few seconds on an idle link; outages are rare, resumes small
 * (what was in flight). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "link/transport.h"
#include "proxy/session_private.h"
#include "proxy/notice.h"
#include "proxy/spare.h"

#define PING_AFTER_MIN_NS (2000000000ull)  /* a link quiet this long is asked for an ACK ... */
#define PING_AFTER_RTTS 2                  /* ... or this many round trips, if longer */
#define SILENT_AFTER_MIN_NS (2000000000ull) /* then lost when still silent this long ... */
#define SILENT_AFTER_RTTS 4                /* ... or this many round trips (a satellite hop) */
#define REPLAY_SHARE 8                     /* of --max-memory at most, for the stream kept to resend */
#define CANDIDATE_MIN_NS (5000000000ull)   /* a new link's handshake may take this long at least */

static uint64_t rtt_ns(const struct session *s) { return pacer_rtt_ns(&s->pacer); }

static uint64_t ping_after_ns(const struct session *s)
{
    uint64_t r = PING_AFTER_RTTS * rtt_ns(s);
    return r > PING_AFTER_MIN_NS ? r : PING_AFTER_MIN_NS;
}

static uint64_t silent_after_ns(const struct session *s)
{
    uint64_t r = SILENT_AFTER_RTTS * rtt_ns(s);
    return ping_after_ns(s) + (r > SILENT_AFTER_MIN_NS ? r : SILENT_AFTER_MIN_NS);
}

static void unwatch_link(struct session *s)
{
    loop_unwatch(s->loop, &s->link_in_w);
    loop_unwatch(s->loop, &s->link_out_w);
    if (s->link_in >= 0)
        close(s->link_in);
    if (s->link_out >= 0 && s->link_out != s->link_in)
        close(s->link_out);
    s->link_in = s->link_out = -1;
}

/* Keeps the session, without a link. The display side lets go of a server grab: the
 * user's screen must not stay frozen for as long as the radio is out. */
static void detach(struct session *s, const char *why, bool silent)
{
    unwatch_link(s);
    s->state = SESSION_DETACHED;
    s->detached_ns = s->now();
    /* A silent link was out from its last byte on; a closed one from now. */
    s->outage_from_ns = silent ? s->rx_last_ns : s->detached_ns;
    s->stats.outages++;
    s->kq_known = false;
    s->hold_since = 0;
    log_warn("link lost (%s): %zu clients wait for a new link, for up to %u s", why, s->n_channels, s->cfg.grace_s);
    if (is_app(s))
        return;
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->grabbing)
            channel_drop(ch, "it holds the X server grabbed while the link is down: closed, so the display "
                             "does not stay frozen");
}

static void lost(struct session *s, const char *why, bool silent)
{
    if (s->state == SESSION_UP && s->cfg.grace_s && !s->goodbye) {
        detach(s, why, silent);
        return;
    }
    session_end(s, false, "link lost: %s", why);
}

void relink_lost(struct session *s, const char *why) { lost(s, why, false); }

void relink_sent(struct session *s, const uint8_t *p, size_t n)
{
    s->tx_stream += n;
    if (!s->cfg.grace_s)
        return;
    size_t cap = (size_t)(s->cfg.max_memory / REPLAY_SHARE);
    if (buf_append(&s->replay, p, n) < 0 || s->replay.len > cap) {
        /* What the peer may not have read is no longer all here: a resume from before
         * replay_start fails (cleanly) instead. */
        size_t drop = s->replay.len > cap ? s->replay.len - cap : s->replay.len;
        buf_consume(&s->replay, drop);
        s->replay_start += drop;
    }
}

void relink_acked(struct session *s, uint64_t acked)
{
    if (acked <= s->replay_start)
        return;
    uint64_t done = acked - s->replay_start;
    if (done > s->replay.len)
        done = s->replay.len;
    buf_consume(&s->replay, (size_t)done);
    s->replay_start += done;
}

/* ---------------------------------------------------------------- candidate links */

static void candidate_close(struct link_candidate *c)
{
    struct session *s = c->s;
    loop_unwatch(s->loop, &c->w_in);
    loop_unwatch(s->loop, &c->w_out);
    if (c->in >= 0)
        close(c->in);
    if (c->out >= 0 && c->out != c->in)
        close(c->out);
    c->in = c->out = -1;
    hs_wipe(&c->hs);
    buf_free(&c->rx);
    buf_free(&c->tx);
}

static void candidate_refuse(struct link_candidate *c, const char *why)
{
    log_warn("link: a new link was refused: %s", why);
    candidate_close(c);
}

/* The candidate resumes the session: its fds become the link; each side's stream goes on
 * from what the other has read. */
static void adopt(struct session *s, struct link_candidate *c)
{
    if (s->state == SESSION_UP) /* another new link, taken during this one's handshake */
        detach(s, "a newer link for this session came", true);
    uint64_t from = c->hs.session.received_peer;
    if (from > s->tx_stream || from < s->replay_start) {
        char why[160];
        snprintf(why, sizeof why, "the other side has read %llu bytes of this side's stream, which holds %llu to %llu",
                 (unsigned long long)from, (unsigned long long)s->replay_start, (unsigned long long)s->tx_stream);
        candidate_close(c);
        session_end(s, false, "cannot resume the session: %s", why);
        return;
    }
    /* Resent first, then what was not yet written. */
    struct buf *unsent = s->codec ? &s->wire_tx : &s->link_tx;
    size_t again = (size_t)(s->tx_stream - from);
    struct buf out = { 0 };
    if (buf_append(&out, buf_head(&s->replay) + (from - s->replay_start), again) < 0 ||
        buf_append(&out, buf_head(unsent), unsent->len) < 0) {
        buf_free(&out);
        candidate_close(c);
        session_end(s, false, "%s", "out of memory");
        return;
    }
    buf_free(unsent);
    *unsent = out;
    buf_clear(&s->replay);
    s->replay_start = s->tx_stream = from;
    s->stats.bytes_replayed += again;
    /* What came after the peer's RESUME is its stream. */
    struct buf *in = s->codec ? &s->wire_rx : &s->link_rx;
    if (buf_append(in, buf_head(&c->rx), c->rx.len) < 0) {
        session_end(s, false, "out of memory resuming the link", NULL);
        return;
    }
    /* The peer has taken this link too once its stream comes on it; until then it may not
     * have (our RESUME may have been lost), but it has passed the generation it was sent. */
    s->rx_adopted = s->rx_stream;
    if (s->peer_generation < c->hs.session.generation)
        s->peer_generation = c->hs.session.generation;
    s->rx_stream += c->rx.len;
    loop_unwatch(s->loop, &c->w_in);
    loop_unwatch(s->loop, &c->w_out);
    s->link_in = c->in;
    s->link_out = c->out;
    c->in = c->out = -1;
    candidate_close(c);
    s->generation++;
    uint64_t now = s->now(), out_ns = now - s->outage_from_ns;
    s->stats.outage_ns += out_ns;
    if (out_ns > s->outage_longest_ns)
        s->outage_longest_ns = out_ns;
    log_info("link back after %.1f s without one: %zu bytes sent again, the rest goes on (link %llu)",
             (double)out_ns / 1e9, again, (unsigned long long)s->generation + 1);
    /* Another path, perhaps: its rate and round trip are measured anew. */
    pacer_restart(&s->pacer, from);
    struct transport_queue q;
    s->link_is_tcp = transport_queue_info(s->link_out, &q) == 0;
    s->lowat = TRANSPORT_INITIAL_LOWAT;
    s->link_rate_Bps = 0;
    s->ack_sent = s->rx_stream;
    s->ack_first_ns = 0;
    s->rx_last_ns = now;
    s->ping_ns = 0;
    s->state = SESSION_UP;
    if (session_watch_link(s) < 0) {
        relink_lost(s, "cannot watch the new link");
        return;
    }
    /* Clients that connected during the outage may set up now; a spare lost meanwhile is
     * made again. */
    channel_session_up(s);
    if (!is_app(s)) {
        spare_open(s);
        notice_hide(s);
        s->notice_ns = 0;
    }
}

static void candidate_flush(struct link_candidate *c)
{
    while (c->tx.len) {
        ssize_t n = write(c->out, buf_head(&c->tx), c->tx.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n <= 0) {
            candidate_refuse(c, "it closed during its handshake");
            return;
        }
        buf_consume(&c->tx, (size_t)n);
    }
    loop_want(c->s->loop, c->out == c->in ? &c->w_in : &c->w_out,
              (c->out == c->in ? LOOP_READ : 0) | (c->tx.len ? LOOP_WRITE : 0));
}

/* Taking a new link is not atomic: each side takes it on the peer's RESUME, so a link cut
 * between the two RESUMEs leaves one side a generation ahead, and both must still take
 * the next link (else each refuses the other's as stale, every redial, until the grace
 * period ends the session). A generation one ahead of this side's is thus this session's,
 * and so is one behind until the peer is known to have reached this side's: its stream
 * came on the link this side took last, or it named that generation, or it answered a
 * SESSION naming it with its RESUME (peer_generation). NULL, or why the peer's is stale. */
static const char *stale_generation(const struct session *s, uint64_t peer, char *why, size_t cap)
{
    uint64_t g = s->generation;
    uint64_t least = s->rx_stream > s->rx_adopted ? g : s->peer_generation;
    if (peer <= g + 1 && peer + 1 >= g && peer >= least)
        return NULL;
    snprintf(why, cap, "peer resumes this session from link %llu, this side is at link %llu (a stale handshake): refused",
             (unsigned long long)peer + 1, (unsigned long long)g + 1);
    return why;
}

static void candidate_feed(struct link_candidate *c)
{
    struct session *s = c->s;
    int rc = hs_feed(&c->hs, &c->rx, &c->tx);
    if (rc == HS_RESUME_READY) {
        char why[160];
        uint64_t peer = c->hs.session.generation_peer;
        if (stale_generation(s, peer, why, sizeof why)) {
            candidate_refuse(c, why);
            return;
        }
        /* Both count on from the higher: after this link, whether or not it is taken on
         * both sides, they are a generation apart at most. */
        if (s->generation < peer)
            s->generation = peer;
        if (s->peer_generation < peer)
            s->peer_generation = peer;
        /* It is for this session. The old link, if it still seems up, is dead or dying:
         * not one more byte is read from it, so what we say we hold stays true. */
        if (s->state == SESSION_UP)
            detach(s, "a new link for this session came", true);
        c->hs.session.received_self = s->rx_stream;
        rc = hs_feed(&c->hs, &c->rx, &c->tx);
    }
    if (rc < 0) {
        candidate_refuse(c, c->hs.error);
        return;
    }
    candidate_flush(c);
    if (rc == 1 && c->in >= 0) {
        if (c->hs.caps != s->caps || c->hs.window_log != s->window_log)
            candidate_refuse(c, "its capabilities differ from the session's");
        else if (s->rx_stream != c->hs.session.received_self)
            /* Another new link was taken after this one's RESUME and brought more: the
             * count this side gave is no longer what it holds (the peer would send some
             * of it again). */
            candidate_refuse(c, "another new link was taken during its handshake");
        else
            adopt(s, c);
    }
}

static void on_candidate_event(struct watch *w, unsigned events)
{
    struct link_candidate *c = w->data;
    if (events & LOOP_WRITE)
        candidate_flush(c);
    if (c->in < 0 || !(events & (LOOP_READ | LOOP_HUP)) || w != &c->w_in)
        return;
    uint8_t *p = buf_append_space(&c->rx, 4096);
    if (!p) {
        candidate_refuse(c, "out of memory");
        return;
    }
    ssize_t n = read(c->in, p, 4096);
    c->rx.len -= 4096 - (n > 0 ? (size_t)n : 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        candidate_refuse(c, n < 0 ? strerror(errno) : "it closed during its handshake");
        return;
    }
    candidate_feed(c);
}

int session_attach(struct session *s, int link_in, int link_out)
{
    struct link_candidate *c = NULL;
    for (size_t i = 0; i < MAX_CANDIDATES && !c; i++)
        if (s->cand[i].in < 0)
            c = &s->cand[i];
    int rc = s->state == SESSION_UP || s->state == SESSION_DETACHED ? 0 : -ENOTCONN;
    if (!rc && !c)
        rc = -EBUSY;
    if (!rc)
        rc = hs_init(&c->hs, s->cfg.role, s->cfg.secret, s->cfg.secret_len, s->caps);
    if (rc) {
        close(link_in);
        if (link_out != link_in)
            close(link_out);
        return rc;
    }
    c->s = s;
    c->in = link_in;
    c->out = link_out;
    c->w_in.fd = c->w_out.fd = -1;
    c->hs.window_log = s->window_log;
    c->hs.session = (struct hs_resume){ .resume = true, .generation = s->generation };
    memcpy(c->hs.session.token_self, s->token, HS_TOKEN_SIZE);
    memcpy(c->hs.session.token_peer, s->token_peer, HS_TOKEN_SIZE);
    /* A new link's handshake is four round trips: ten, and 5 s at least, are plenty; a dial
     * stuck in a connect that goes nowhere must not keep the next one from being tried. */
    uint64_t wait_ns = 10 * rtt_ns(s), max_ns = (uint64_t)s->cfg.handshake_timeout_ms * 1000000u;
    wait_ns = wait_ns < CANDIDATE_MIN_NS ? CANDIDATE_MIN_NS : wait_ns;
    c->deadline_ns = s->now() + (wait_ns < max_ns ? wait_ns : max_ns);
    rc = hs_start(&c->hs, &c->tx);
    if (!rc)
        rc = net_set_nonblock(link_in);
    if (!rc && link_out != link_in)
        rc = net_set_nonblock(link_out);
    if (!rc)
        rc = loop_watch(s->loop, &c->w_in, link_in, LOOP_READ | LOOP_WRITE, on_candidate_event, c);
    if (!rc && link_out != link_in)
        rc = loop_watch(s->loop, &c->w_out, link_out, LOOP_WRITE, on_candidate_event, c);
    if (rc)
        candidate_close(c);
    return rc;
}

unsigned session_attaching(const struct session *s)
{
    unsigned n = 0;
    for (size_t i = 0; i < MAX_CANDIDATES; i++)
        n += s->cand[i].in >= 0;
    return n;
}

void relink_free(struct session *s)
{
    for (size_t i = 0; i < MAX_CANDIDATES; i++)
        if (s->cand[i].in >= 0)
            candidate_close(&s->cand[i]);
    buf_free(&s->replay);
}

void relink_tick(struct session *s)
{
    uint64_t now = s->now();
    for (size_t i = 0; i < MAX_CANDIDATES; i++)
        if (s->cand[i].in >= 0 && (now > s->cand[i].deadline_ns || s->state == SESSION_ENDED))
            candidate_refuse(&s->cand[i], "no valid handshake in time");
    if (s->state == SESSION_DETACHED && now - s->detached_ns > (uint64_t)s->cfg.grace_s * 1000000000u) {
        char why[96];
        snprintf(why, sizeof why, "the link was lost for longer than the grace period (%u s)", s->cfg.grace_s);
        log_error("%s: ending the session, closing every client", why);
        session_end(s, false, "%s", why);
        return;
    }
    if (s->state == SESSION_DETACHED && !is_app(s) && now - s->notice_ns >= 1000000000ull) {
        char text[96];
        snprintf(text, sizeof text, "tincan: link lost %.0f s ago, reconnecting", (double)(now - s->outage_from_ns) / 1e9);
        notice_show(s, text);
        s->notice_ns = now;
    }
    if (s->state == SESSION_DETACHED)
        loop_wake_by(s->loop, clock_ns() + 1000000000ull);
    if (s->state != SESSION_UP || !s->cfg.grace_s)
        return;
    uint64_t quiet = now - s->rx_last_ns;
    if (quiet > silent_after_ns(s)) {
        char why[64];
        snprintf(why, sizeof why, "silent for %.1f s", (double)quiet / 1e9);
        lost(s, why, true);
        return;
    }
    if (quiet > ping_after_ns(s) && (!s->ping_ns || now - s->ping_ns > ping_after_ns(s))) {
        if (link_send(s, FRAME_PING, 0, NULL, 0) < 0)
            return;
        s->ping_ns = now;
    }
    loop_wake_by(s->loop, clock_ns() + ping_after_ns(s) / 2);
}
