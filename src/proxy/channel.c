/* channel.c -- one X connection carried as a channel, the core both halves share: its
 * buffers, reading and framing what its X peer sends (with the per-message hooks in a fixed
 * order: on_request_msg, on_server_msg), writing what the other side sent, flow-control
 * credit, and the DATA, CLOSE and WINDOW frames. What only one half does is in
 * channel_app.c (setup, local answers) and channel_display.c (the upstream connection,
 * holds, answers checked). Never writes to the link socket itself: frames go to the
 * session's link buffer or the channel's queue for the scheduler (linkwriter.c). */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "proxy/fontset.h"
#include "proxy/hint.h"
#include "proxy/learnt.h"
#include "proxy/session_private.h"
#include "proxy/spare.h"
#include "x11/xdisplay.h"
#include "xproto_tables.h"



/* ---------------------------------------------------------------- channels */

struct channel *channel_new(struct session *s, uint32_t id, int fd)
{
    if (s->n_channels >= MAX_CHANNELS || s->by_slot[id % MAX_CHANNELS])
        return NULL;
    struct channel *ch = calloc(1, sizeof *ch);
    if (!ch)
        return NULL;
    ch->id = id;
    ch->s = s;
    ch->fd = fd;
    ch->w.fd = -1;
    ch->send_credit = FRAME_CHANNEL_WINDOW;
    xstream_init(&ch->xs, !is_app(s));
    expose_init(&ch->ex);
    ownwin_init(&ch->own, !is_app(s));
    ch->next = s->channels;
    s->channels = ch;
    s->by_slot[id % MAX_CHANNELS] = ch;
    s->n_channels++;
    return ch;
}

/* Display side: forgets the oldest reply the app side gave. */
void channel_drop_pop(struct channel *ch)
{
    buf_free(&ch->drops.q[ch->drops.head].expected);
    ch->drops.head = (ch->drops.head + 1) % ch->drops.cap;
    ch->drops.len--;
}

static void channel_free(struct channel *ch)
{
    struct session *s = ch->s;
    loop_unwatch(s->loop, &ch->w);
    if (ch->fd >= 0)
        close(ch->fd);
    if (s->by_slot[ch->id % MAX_CHANNELS] == ch)
        s->by_slot[ch->id % MAX_CHANNELS] = NULL;
    xstream_free(&ch->xs);
    buf_free(&ch->from_x);
    buf_free(&ch->to_x);
    buf_free(&ch->from_link);
    buf_free(&ch->to_link);
    while (ch->drops.len)
        channel_drop_pop(ch);
    free(ch->drops.q);
    predict_questions_free(&ch->pq);
    expose_free(&ch->ex);
    ownwin_free(&ch->own);
    xenc_free(ch->enc);
    xdec_free(ch->dec);
    s->refs_budget.used -= 2 * ch->refs_held;
    buf_free(&ch->dec_in);
    if (s->observer)
        observer_forget_channel(s->observer, ch->id);
    s->n_channels--;
    if (!s->n_channels && s->learnt)
        learnt_save(s->learnt, false); /* a quiet moment: what this session learnt is kept even if it
                                        * is killed (not a mere change of order: once per client) */
    free(ch);
}

/* Frees channels marked dead. Runs before sleeping, so no callback of this turn holds one. */
void reap_channels(struct session *s)
{
    for (struct channel **pp = &s->channels; *pp;) {
        struct channel *ch = *pp;
        if (ch->dead) {
            *pp = ch->next;
            channel_free(ch);
        } else {
            pp = &ch->next;
        }
    }
}

/* Every channel but ch reconsiders what it waits for (a grab began or ended). */
void channel_others_interest(struct channel *ch)
{
    for (struct channel *c = ch->s->channels; c; c = c->next)
        if (c != ch && !c->dead)
            channel_update_interest(c);
}

void channel_update_interest(struct channel *ch)
{
    if (ch->w.fd < 0)
        return;
    unsigned want = 0;
    if (!ch->x_closed && ch->to_link.len < TO_LINK_HIGH && session_may_read(ch))
        want |= LOOP_READ;
    if (ch->to_x.len && !ch->setup_held)
        want |= LOOP_WRITE;
    loop_want(ch->s->loop, &ch->w, want);
}

/* Our X peer is gone (or we cut it off). Whatever it sent completely still goes out;
 * then CLOSE tells the other side. why == NULL: an orderly close, not worth a warning. */
void channel_drop(struct channel *ch, const char *why)
{
    if (ch->x_closed)
        return;
    if (why) {
        log_warn("channel %u: %s; closing this connection only", ch->id, why);
        if (is_app(ch->s))
            ch->s->stats.clients_dropped++;
    }
    ch->x_closed = true;
    loop_unwatch(ch->s->loop, &ch->w);
    if (ch->fd >= 0)
        close(ch->fd);
    ch->fd = -1;
    buf_clear(&ch->from_x);
    buf_clear(&ch->to_x);
    if (!ch->on_link || ch->peer_closed || ch->s->state == SESSION_ENDED)
        ch->dead = true;
    if (ch->grabbing)
        channel_others_interest(ch); /* its grab ends with its connection */
}

/* ---------------------------------------------------------------- X side input */

const char *channel_errno_text(long rc)
{
    switch (-rc) {
    case EBADMSG: return "malformed message";
    case EMSGSIZE: return "message length beyond the limit";
    case ENOBUFS: return "request beyond the replies a client may have outstanding";
    case ENOMEM: return "out of memory";
    }
    return "bad input";
}

/* App side: the client's setup request, checked against our cookie. */

/* The channel's structured encoder (of what it sends on the link: dir) and decoder, the
 * encoder drawing its body models' memory from the session's budget, and both keeping
 * refs units of references. 0 or -ENOMEM. */
int channel_codecs(struct channel *ch, enum xc_dir dir, bool msb, uint8_t refs)
{
    enum xc_dir other = dir == XC_REQUESTS ? XC_SERVER : XC_REQUESTS;
    if (xenc_new(&ch->enc, dir, msb) < 0 || xdec_new(&ch->dec, other, msb) < 0)
        return -ENOMEM;
    xenc_set_budget(ch->enc, &ch->s->xc_budget);
    xenc_set_link_rate(ch->enc, ch->s->rate_told_Bps);
    if (dir == XC_REQUESTS) { /* pixel bodies are requests' */
        xenc_set_pixcache(ch->enc, ch->s->pixcache);
        xenc_set_tilecache(ch->enc, ch->s->tilecache);
        xenc_set_lossy(ch->enc, ch->s->cfg.lossy_images);
    } else {
        xdec_set_pixcache(ch->dec, ch->s->pixcache);
        xdec_set_tilecache(ch->dec, ch->s->tilecache);
    }
    size_t store = (size_t)refs * XC_STORE_UNIT;
    xenc_set_store(ch->enc, store);
    xdec_set_store(ch->dec, store);
    ch->refs_held = store ? store + XC_STORE_TRAPS : 0;
    ch->s->refs_budget.used += 2 * ch->refs_held;
    return 0;
}

bool channel_is_copy(const struct msg_class *cls)
{
    return !cls->ext && (cls->major == XOP_COPY_AREA || cls->major == XOP_COPY_PLANE);
}

/* Sending side: replaces the message just appended at out[at..] (bound for the link) by
 * its structured encoding, when both sides agreed on one. */
static int encode_tail(struct channel *ch, struct buf *out, size_t at)
{
    if (!ch->enc || out != &ch->to_link || out->len == at)
        return 0;
    struct stats *st = &ch->s->stats;
    struct buf *t = &ch->s->xc_scratch;
    buf_clear(t);
    int rc = xenc_message(ch->enc, out->data + out->off + at, out->len - at, t);
    if (rc)
        return rc;
    st->xc_raw_out += out->len - at;
    st->xc_encoded_out += t->len;
    out->len = at;
    return buf_append(out, buf_head(t), t->len);
}

/* Padding is never sent: the bytes xcb-proto calls padding are zeroed before the link
 * (the server ignores them; libraries leave there whatever their buffer held). */
static void clear_padding(uint8_t *req, uint32_t size, uint32_t mask)
{
    for (uint32_t b = 0; mask && b < 32 && b < size; b++, mask >>= 1)
        if (mask & 1)
            req[b] = 0;
}

/* GrabServer or UngrabServer, as the client's stream reaches us. A second GrabServer changes
 * nothing; the server ends a grab at UngrabServer or when the connection closes. */
static void channel_on_grab(struct channel *ch, bool grab, uint32_t seq)
{
    if (grab == ch->grabbing)
        return;
    ch->grabbing = grab;
    if (grab)
        ch->s->stats.server_grabs++;
    log_debug("channel %u: request %u %s the server", ch->id, seq, grab ? "grabs" : "ungrabs");
    channel_others_interest(ch); /* session_may_read: the others wait while it holds it */
}

/* A request framed from the client's stream (app side) or the link (display side). The
 * hooks, in this order: xstream (sequence numbers, reply kinds), server grabs, the role's
 * own (channel_app_on_request: local answers; channel_display_on_request: the observer,
 * questions asked ahead, answers to check), then on both sides what later answers depend
 * on (predict_track, ownwin_on_request); then the request is appended to out and coded. */
static int on_request_msg(struct channel *ch, const uint8_t *msg, const struct xw_request *rq, struct buf *out,
                          struct msg_class *cls)
{
    struct session *s = ch->s;
    int rc = xstream_on_request(&ch->xs, msg, rq, cls);
    if (rc)
        return rc;
    uint32_t seq = ch->xs.seq_sent;
    if (!cls->ext && (cls->major == XP_OP_GRAB_SERVER || cls->major == XP_OP_UNGRAB_SERVER))
        channel_on_grab(ch, cls->major == XP_OP_GRAB_SERVER, seq);
    /* The request still goes to the server (the display side drops its reply), so the
     * server's state and sequence numbers stay exactly as without tincan. */
    if (is_app(s))
        channel_app_on_request(ch, cls, msg, rq, seq);
    else
        channel_display_on_request(ch, cls, msg, rq, seq);
    /* Both sides, answered or not: later handshakes and QueryFonts depend on it. */
    predict_track(s->predict, &ch->pq, cls, msg, rq->size, ch->xs.msb);
    ownwin_on_request(&ch->own, cls, msg, rq->size, ch->xs.msb);
    size_t at = out->len;
    rc = buf_append(out, msg, rq->size);
    if (!rc && is_app(s) && rq->header_size == 4)
        clear_padding(out->data + out->off + at, rq->size, cls->pad_mask);
    return rc ? rc : encode_tail(ch, out, at);
}

/* A server message framed from the server's stream (display side) or the link (app side).
 * The hooks, in this order: xstream (replies matched to requests, extensions rewritten),
 * on the display side the check of answers given ahead (channel_display_drops_server_msg),
 * then on both sides what later answers learn (learnt, predict, ownwin), then on the app
 * side channel_app_on_server_msg; then the message is coded. */
static int on_server_msg(struct channel *ch, const uint8_t *msg, const struct xw_server_msg *m, struct buf *out,
                         struct msg_class *cls)
{
    struct session *s = ch->s;
    size_t at = out->len;
    int rc = xstream_on_server_msg(&ch->xs, msg, m, out, cls);
    if (rc)
        return rc;
    if (!is_app(s) && channel_display_drops_server_msg(ch, m, cls, out->data + out->off + at, out->len - at)) {
        out->len = at; /* the client already has it */
        return 0;
    }
    if (s->learnt && m->kind == XW_KIND_REPLY) /* before predict_learn: the question is still there */
        learnt_on_reply(s->learnt, &ch->pq, cls, ch->xs.seq_done, out->data + out->off + at, (uint32_t)(out->len - at),
                        ch->xs.msb);
    if (m->kind == XW_KIND_REPLY)
        predict_learn(s->predict, &ch->pq, cls, ch->xs.seq_done, out->data + out->off + at, (uint32_t)(out->len - at),
                      ch->xs.msb);
    else if (m->kind == XW_KIND_SETUP) {
        predict_learn_setup(s->predict, out->data + out->off + at, out->len - at, ch->xs.msb);
        predict_learn_connection(&ch->pq, out->data + out->off + at, out->len - at, ch->xs.msb);
        ownwin_learn_setup(&ch->own, out->data + out->off + at, out->len - at, ch->xs.msb);
    }
    if (is_app(s))
        channel_app_on_server_msg(ch, m, cls, out->data + out->off + at);
    return encode_tail(ch, out, at);
}

/* Whether a peer waits for this message, so the link writes it at once (session.c's flush
 * policy): a request owed an answer, any answer, an input event (core 2-8, or GenericEvent:
 * XInput 2). */
static bool message_urgent(const struct channel *ch, const struct msg_class *cls)
{
    const struct xstream *xs = &ch->xs;
    if (cls->kind == MSG_REQUEST) /* owed an answer, and not answered here already */
        return xs->pending_len && xs->seq_done < xs->seq_sent &&
               xs->pending[(xs->pending_head + xs->pending_len - 1) % xs->pending_cap].seq == xs->seq_sent;
    if (cls->kind == MSG_EVENT)
        return (cls->major >= XP_EV_KEY_PRESS && cls->major <= XP_EV_LEAVE_NOTIFY) || cls->major == XW_GENERIC_EVENT;
    return true;
}

/* Frames whole requests (or server messages) out of p[0..n) and appends them to out.
 * Returns the bytes used (a partial message at the end is left), or a negative errno for
 * input that cannot be framed. */
long channel_frame_span(struct channel *ch, const uint8_t *p, size_t n, struct buf *out, bool requests, enum stat_dir dir)
{
    struct session *s = ch->s;
    uint64_t t0 = clock_ns();
    size_t used = 0;
    long rc = 0;
    if (requests)
        ch->requests_held = false;
    while (used < n) {
        const uint8_t *m_at = p + used;
        struct msg_class cls;
        long size;
        if (requests) {
            struct xw_request rq;
            if ((size = xstream_next_request(&ch->xs, m_at, n - used, &rq)) >= 0) {
                if (!is_app(s) && channel_request_waits(ch, m_at, &rq)) {
                    ch->requests_held = true;
                    break; /* resumed by channel_resume_requests() */
                }
                rc = on_request_msg(ch, m_at, &rq, out, &cls);
            }
        } else {
            struct xw_server_msg m;
            if ((size = xstream_next_server_msg(&ch->xs, m_at, n - used, &m)) >= 0)
                rc = on_server_msg(ch, m_at, &m, out, &cls);
        }
        if (size < 0) {
            rc = size == -EAGAIN ? 0 : size; /* -EAGAIN: the rest of the message is still on its way */
            break;
        }
        if (rc)
            break;
        stats_count(&s->stats, &cls, dir, (uint32_t)size);
        if (dir == STAT_FROM_X && !ch->urgent)
            ch->urgent = message_urgent(ch, &cls);
        used += (size_t)size;
    }
    s->stats.encode_ns += clock_ns() - t0;
    return rc ? rc : (long)used;
}

/* A large message in progress (one read, or one DATA frame, holds part of it) waits in a
 * buffer readied for it (buf_prepare): the rest is read straight behind it, and once whole it
 * moves to the next buffer with its block instead of being copied (buf_offer). The headroom
 * lets the next buffer hold this much still unsent and take the block all the same. */
#define ADOPT_HEADROOM TO_LINK_HIGH
#define PREPARE_MAX (4u << 20) /* larger ones (rare) grow as they come, as before */

/* The size of the partial message at the head of `in`, when its header tells it; 0 if not. */
static size_t partial_size(const struct channel *ch, const struct buf *in, bool requests)
{
    if (requests) {
        struct xw_request rq = { 0 };
        return xstream_next_request(&ch->xs, buf_head(in), in->len, &rq) == -EAGAIN ? rq.size : 0;
    }
    struct xw_server_msg m = { 0 };
    return xstream_next_server_msg(&ch->xs, buf_head(in), in->len, &m) == -EAGAIN ? m.size : 0;
}

/* `in` holds a partial message after framing: readies it if it is large. 0 or -ENOMEM. */
static int prepare_partial(const struct channel *ch, struct buf *in, bool requests)
{
    if (!in->len || in->fill > in->len)
        return 0;
    size_t size = partial_size(ch, in, requests);
    if (size < BUF_ADOPT_MIN || size > PREPARE_MAX)
        return 0;
    return buf_prepare(in, ADOPT_HEADROOM, size);
}

/* Frames the messages in `in` followed by n new bytes at p, appending them to out and
 * keeping any partial message in `in`. New bytes are copied into `in` only when they
 * complete or continue a partial message, and only up to its end when it was readied (what
 * follows is framed from p): whole, it is then all of `in`, and moves to out without a copy.
 * 0 or a negative errno. */
int channel_frame_input(struct channel *ch, struct buf *in, const uint8_t *p, size_t n, struct buf *out,
                       bool requests, enum stat_dir dir)
{
    if (in->len) {
        size_t take = n;
        if (in->fill > in->len && in->fill - in->len < n)
            take = in->fill - in->len;
        if (take) { /* (p may be NULL when n is 0: resuming held requests) */
            if (buf_append(in, p, take) < 0)
                return -ENOMEM;
            p += take;
            n -= take;
        }
        buf_offer(in, out);
        long used = channel_frame_span(ch, buf_head(in), in->len, out, requests, dir);
        buf_offer(NULL, NULL);
        if (used < 0)
            return (int)used;
        buf_consume(in, (size_t)used);
        if (in->len) { /* still partial, or held (channel_request_waits): the rest joins it */
            if (n && buf_append(in, p, n) < 0)
                return -ENOMEM;
            return prepare_partial(ch, in, requests);
        }
    }
    if (!n)
        return 0;
    long used = channel_frame_span(ch, p, n, out, requests, dir);
    if (used < 0)
        return (int)used;
    if (buf_append(in, p + used, n - (size_t)used) < 0)
        return -ENOMEM;
    return prepare_partial(ch, in, requests);
}

static void channel_read_x(struct channel *ch)
{
    struct session *s = ch->s;
    /* The rest of a readied large message at once (its room is there): fewer reads per MB. */
    size_t want = ch->from_x.fill > ch->from_x.len ? ch->from_x.fill - ch->from_x.len : READ_CHUNK;
    uint8_t *p = buf_append_space(&ch->from_x, want);
    if (!p) {
        channel_drop(ch, "out of memory");
        return;
    }
    uint64_t t0 = clock_ns();
    ssize_t n = read(ch->fd, p, want);
    s->stats.read_ns += clock_ns() - t0;
    ch->from_x.len -= want - (n > 0 ? (size_t)n : 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* A peer that closes with our data unread resets the connection: also just gone. */
        bool gone = n == 0 || errno == ECONNRESET || errno == EPIPE;
        char why[96];
        snprintf(why, sizeof why, "read error: %s", n < 0 ? strerror(errno) : "");
        if (ch->from_x.len && is_app(s))
            log_info("channel %u: client left in the middle of a request (%zu bytes dropped)", ch->id, ch->from_x.len);
        channel_drop(ch, gone ? NULL : why);
        return;
    }
    if (ch->phase == CH_SETUP && channel_app_accept_setup(ch) != 0)
        return;
    if (ch->phase == CH_OPEN)
        channel_read_more(ch);
}

/* Frames what from_x holds and queues it for the link. */
void channel_read_more(struct channel *ch)
{
    struct session *s = ch->s;
    /* App side: requests from the client; display side: the server's messages. */
    buf_offer(&ch->from_x, &ch->to_link);
    long used = channel_frame_span(ch, buf_head(&ch->from_x), ch->from_x.len, &ch->to_link, is_app(s), STAT_FROM_X);
    buf_offer(NULL, NULL);
    int rc = used < 0 ? (int)used : 0;
    if (used > 0)
        buf_consume(&ch->from_x, (size_t)used);
    if (!rc)
        rc = prepare_partial(ch, &ch->from_x, is_app(s));
    if (rc) {
        char why[96];
        if (rc == -ENOBUFS && is_app(s)) /* as an X server drops a client that asks for GBs it never reads */
            snprintf(why, sizeof why, "client asked for more replies than it reads (%u outstanding, %llu MiB)",
                     ch->xs.pending_len, (unsigned long long)(ch->xs.owed_bytes >> 20));
        else
            snprintf(why, sizeof why, "%s %s", is_app(s) ? "client sent a" : "X server sent a", channel_errno_text(rc));
        channel_drop(ch, why);
        return;
    }
    if (ch->requests_held && used > 0) /* replies read: requests waiting on SERVER_OWED_MAX may go */
        channel_resume_requests(ch);
    if (!ch->dead)
        channel_update_interest(ch);
}

void channel_write_x(struct channel *ch)
{
    struct session *s = ch->s;
    if (ch->fd < 0 || !ch->to_x.len || ch->setup_held)
        return;
    uint64_t t0 = clock_ns();
    ssize_t n = write(ch->fd, buf_head(&ch->to_x), ch->to_x.len);
    s->stats.write_ns += clock_ns() - t0;
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR)
            channel_drop(ch, NULL); /* the peer went away; its read side will tell */
        return;
    }
    buf_consume(&ch->to_x, (size_t)n);
    if (!ch->to_x.len && ch->watches_pending && s->observer)
        observer_on_x_drained(s->observer, ch);
    if (!ch->to_x.len && (ch->peer_closed || (ch->x_closed && !ch->on_link))) {
        /* Everything the other side sent before closing is delivered. */
        ch->x_closed = false;
        channel_drop(ch, NULL);
        ch->dead = true;
    }
}

void channel_on_x_event(struct watch *w, unsigned events)
{
    struct channel *ch = w->data;
    if (events & LOOP_WRITE)
        channel_write_x(ch);
    if ((events & (LOOP_READ | LOOP_HUP)) && ch->fd >= 0 && !ch->dead)
        channel_read_x(ch);
    if (!ch->dead)
        channel_update_interest(ch);
}

/* Hands flow-control credit back once data has left our buffers for the X peer. A partial
 * message in from_link counts as consumed: a request may be larger than the window, and
 * it is bounded by the largest message xstream accepts. */
void channel_grant(struct channel *ch)
{
    uint64_t buffered = ch->to_x.len;
    if (ch->requests_held) /* they wait: the peer sends no more until they go */
        buffered += ch->from_link.len;
    /* Decoded bytes outnumber the link's: once the peer has taken most of them, every
     * link byte received counts as consumed. */
    if (ch->dec && buffered < FRAME_CHANNEL_WINDOW / 4)
        buffered = 0;
    if (session_holds_partial(ch)) /* over the memory bound: a partial message waits its turn */
        buffered += ch->from_link.len + ch->dec_in.len;
    uint64_t consumed = ch->link_received > buffered ? ch->link_received - buffered : 0;
    if (consumed > ch->link_granted && consumed - ch->link_granted >= FRAME_CHANNEL_WINDOW / 4) {
        struct buf tmp = { 0 };
        int rc = buf_put_varint(&tmp, consumed - ch->link_granted);
        rc = rc < 0 ? rc : link_send(ch->s, FRAME_WINDOW, ch->id, buf_head(&tmp), tmp.len);
        buf_free(&tmp);
        if (rc < 0)
            return;
        ch->link_granted = consumed;
    }
}

/* ---------------------------------------------------------------- link input */

int channel_on_data(struct session *s, const struct frame *f)
{
    struct channel *ch = channel_find(s, f->channel);
    if (!ch || ch->x_closed)
        return 0; /* crossed with our CLOSE: harmless */
    if (ch->link_received + f->len > ch->link_granted + FRAME_CHANNEL_WINDOW)
        return -EBADMSG; /* the peer ignored flow control */
    ch->link_received += f->len;
    const uint8_t *p = f->payload;
    size_t n = f->len;
    int rc = 0;
    if (ch->dec) {
        /* Structured encoding: decode whole messages; a partial one waits in dec_in. */
        struct buf *in = &ch->dec_in, *raw = &s->xc_scratch;
        if (in->len) {
            if (buf_append(in, p, n) < 0)
                return -ENOMEM;
            p = buf_head(in);
            n = in->len;
        }
        buf_clear(raw);
        long used = xdec_feed(ch->dec, p, n, raw);
        if (used < 0) {
            channel_drop(ch, used == -ENOMEM ? "out of memory" : "the link carried a corrupt structured encoding");
            return 0;
        }
        if (in->len)
            buf_consume(in, (size_t)used);
        else if ((size_t)used < n && buf_append(in, p + used, n - (size_t)used) < 0)
            return -ENOMEM;
        p = buf_head(raw);
        n = raw->len;
    }
    /* App side: the server's messages for our client; display side: the client's requests. */
    if (n)
        rc = channel_frame_input(ch, &ch->from_link, p, n, &ch->to_x, !is_app(s), STAT_TO_X);
    if (rc) {
        char why[96];
        snprintf(why, sizeof why, "the link carried a %s for this client", channel_errno_text(rc));
        channel_drop(ch, why);
    }
    return 0;
}

int channel_on_close(struct session *s, const struct frame *f)
{
    struct channel *ch = channel_find(s, f->channel);
    if (!ch)
        return 0;
    if (f->len)
        log_info("channel %u: closed by the other side: %.*s", ch->id, (int)(f->len > 200 ? 200 : f->len), f->payload);
    ch->peer_closed = true;
    buf_clear(&ch->to_link);
    if (!is_app(s) && s->observer)
        observer_on_peer_close(s->observer);
    if (is_app(s) && ch->xs.phase == XS_SETUP_REPLY && !ch->to_x.len) {
        /* The display side could not reach the server: refuse the client as a server would. */
        char reason[200];
        snprintf(reason, sizeof reason, "tincan: %.*s", (int)(f->len > 180 ? 180 : f->len), f->payload);
        xw_build_setup_failed(&ch->to_x, ch->xs.msb, reason);
    }
    if (ch->x_closed || !ch->to_x.len) {
        ch->x_closed = false;
        channel_drop(ch, NULL);
        ch->dead = true;
    }
    return 0;
}

int channel_on_window(struct session *s, const struct frame *f)
{
    struct channel *ch = channel_find(s, f->channel);
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t credit;
    if (rd_varint(&r, &credit) < 0 || rd_left(&r) || credit > (1ull << 40))
        return -EBADMSG;
    if (ch)
        ch->send_credit += credit;
    return 0;
}

