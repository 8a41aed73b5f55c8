/* channel.c -- one X connection carried as a channel: reading and framing what its X
 * peer sends, writing what the other side sent, flow-control credit, local answers, and
 * the channel's part of the link protocol. Never writes to the link socket itself: frames
 * go to the session's link buffer or the channel's queue for the scheduler. */
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

struct channel *channel_find(struct session *s, uint32_t id)
{
    struct channel *ch = s->by_slot[id % MAX_CHANNELS];
    return ch && ch->id == id && !ch->dead ? ch : NULL;
}

static int frame_input(struct channel *ch, struct buf *in, const uint8_t *p, size_t n, struct buf *out,
                       bool requests, enum stat_dir dir);
static long frame_span(struct channel *ch, const uint8_t *p, size_t n, struct buf *out, bool requests, enum stat_dir dir);

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
static void drop_pop(struct channel *ch)
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
        drop_pop(ch);
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
}

/* ---------------------------------------------------------------- X side input */

static const char *errno_text(long rc)
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

/* App side: the reference store of a new channel's coders, in XC_STORE_UNITs: an eighth
 * of what the session's budget has left for each (at most XC_STORE_MAX), so any number of
 * clients together stay within it, the first ones with the most. */
static uint8_t refs_grant(const struct session *s)
{
    const struct xc_budget *b = &s->refs_budget;
    size_t left = b->cap > b->used ? b->cap - b->used : 0;
    size_t units = left / 2 / 8 / XC_STORE_UNIT; /* a unit needs 1 MiB left: its trapezoids fit too */
    return (uint8_t)(units < FRAME_OPEN_REFS_MAX ? units : FRAME_OPEN_REFS_MAX);
}

/* The channel's structured encoder (of what it sends on the link: dir) and decoder, the
 * encoder drawing its body models' memory from the session's budget, and both keeping
 * refs units of references. 0 or -ENOMEM. */
static int channel_codecs(struct channel *ch, enum xc_dir dir, bool msb, uint8_t refs)
{
    enum xc_dir other = dir == XC_REQUESTS ? XC_SERVER : XC_REQUESTS;
    if (xenc_new(&ch->enc, dir, msb) < 0 || xdec_new(&ch->dec, other, msb) < 0)
        return -ENOMEM;
    xenc_set_budget(ch->enc, &ch->s->xc_budget);
    if (dir == XC_REQUESTS) { /* pixel bodies are requests' */
        xenc_set_pixcache(ch->enc, ch->s->pixcache);
        xenc_set_lossy(ch->enc, ch->s->cfg.lossy_images);
    } else
        xdec_set_pixcache(ch->dec, ch->s->pixcache);
    size_t store = (size_t)refs * XC_STORE_UNIT;
    xenc_set_store(ch->enc, store);
    xdec_set_store(ch->dec, store);
    ch->refs_held = store ? store + XC_STORE_TRAPS : 0;
    ch->s->refs_budget.used += 2 * ch->refs_held;
    return 0;
}
/* App side: what this machine says of the client, told before its first request (hint.h). */
static void send_hint(struct channel *ch)
{
    struct session *s = ch->s;
    struct hint_want want = { .locale = !s->cfg.no_locale_hint, .fonts = !s->cfg.no_font_hint };
    struct hint h;
    struct frame_hint f;
    if (s->cfg.no_local_answers || hint_of_client(ch->fd, &want, &h) < 0)
        return;
    hint_to_frame(&h, &f);
    if (frame_hint_encode(&s->link_tx, ch->id, &f) < 0)
        return;
    s->stats.link_frames_out++;
    log_debug("channel %u: hint: %s locale, %u fonts of its app-defaults", ch->id,
              h.flags & HINT_FONT_SET ? "a UTF-8" : "another", h.n_fonts);
}

static int app_accept_setup(struct channel *ch)
{
    struct session *s = ch->s;
    struct xw_setup_request rq;
    long n = xw_parse_setup_request(buf_head(&ch->from_x), ch->from_x.len, &rq);
    if (n == -EAGAIN)
        return ch->from_x.len > 65536 ? -EBADMSG : 0;
    if (n == -EPROTONOSUPPORT) { /* answer as a server would, then close */
        s->stats.clients_refused++;
        log_warn("channel %u: client asked for X protocol version %u: refused", ch->id, rq.major);
        xw_build_setup_failed(&ch->to_x, rq.msb, "Protocol version mismatch");
        ch->x_closed = true;
        loop_want(s->loop, &ch->w, LOOP_WRITE);
        buf_clear(&ch->from_x);
        return -EACCES;
    }
    if (n < 0) {
        channel_drop(ch, "garbage instead of an X connection setup");
        return -EBADMSG;
    }
    /* The link's options (its encoding) not agreed yet, or the first spare connection and the
     * facts ahead of it still on their way: channel_session_up() is called again. */
    if (s->state != SESSION_UP || spare_awaited(s)) {
        if (ch->from_x.len > 65536) {
            channel_drop(ch, "client sent too much before its connection was set up");
            return -EBADMSG;
        }
        return -EAGAIN;
    }
    bool ok = rq.auth_name_len == strlen(XAUTH_COOKIE_NAME) &&
              memcmp(rq.auth_name, XAUTH_COOKIE_NAME, rq.auth_name_len) == 0 &&
              rq.auth_data_len == XAUTH_COOKIE_SIZE &&
              sodium_memcmp(rq.auth_data, s->cfg.cookie, XAUTH_COOKIE_SIZE) == 0;
    if (!ok) {
        s->stats.clients_refused++;
        log_warn("channel %u: client did not present this display's MIT-MAGIC-COOKIE-1: refused", ch->id);
        buf_clear(&ch->to_x);
        xw_build_setup_failed(&ch->to_x, rq.msb, "Invalid MIT-MAGIC-COOKIE-1 key");
        ch->x_closed = true; /* write the refusal, then close */
        loop_want(s->loop, &ch->w, LOOP_WRITE);
        buf_clear(&ch->from_x);
        return -EACCES;
    }
    struct frame_open o = { .msb = rq.msb, .major = rq.major, .minor = rq.minor,
                            .refs = s->xcodec ? refs_grant(s) : 0 };
    if (s->xcodec && channel_codecs(ch, XC_REQUESTS, rq.msb, o.refs) < 0) {
        channel_drop(ch, "out of memory");
        return -ENOMEM;
    }
    /* A connection the display side set up ahead answers at once (spare.h). */
    struct buf setup = { 0 };
    if (!s->cfg.no_local_answers && spare_fits(s, rq.msb, rq.major, rq.minor))
        o.spare = spare_take(s, &setup);
    frame_open_encode(&s->link_tx, ch->id, &o);
    s->stats.link_frames_out++;
    send_hint(ch);
    xstream_on_setup_request(&ch->xs, rq.msb);
    struct msg_class cls = { .kind = MSG_SETUP, .name = "SetupRequest", .query_ext = -1 };
    stats_count(&s->stats, &cls, STAT_FROM_X, (uint32_t)n);
    buf_consume(&ch->from_x, (size_t)n);
    ch->phase = CH_OPEN;
    ch->on_link = true;
    if (o.spare) {
        s->stats.answered_locally++;
        s->stats.setups_answered++;
        ch->last_answered = 1; /* the setup's answer did not cross the link */
        if (ch->dec)
            xdec_setup_seen(ch->dec);
        int rc = frame_input(ch, &ch->from_link, buf_head(&setup), setup.len, &ch->to_x, false, STAT_TO_X);
        buf_free(&setup);
        if (rc) {
            channel_drop(ch, "the spare connection's setup reply is unreadable");
            return rc;
        }
        channel_update_interest(ch);
    }
    buf_free(&setup);
    return 0;
}

/* App side: the client has the answer to its latest request (of class cls, size bytes)
 * from us: PREDICTED tells the display side to drop the server's. */
static void answered_here(struct channel *ch, const struct msg_class *cls, uint32_t size, bool atom_none)
{
    struct session *s = ch->s;
    struct buf seq = { 0 };
    buf_put_varint(&seq, ch->xs.seq_sent - ch->seq_floor); /* after the last: a byte, the same most times */
    if (atom_none) /* the display side cannot tell this answer from its own facts */
        buf_append(&seq, &(uint8_t){ 1 }, 1);
    frame_encode(&s->link_tx, FRAME_PREDICTED, ch->id, buf_head(&seq), seq.len);
    buf_free(&seq);
    s->stats.link_frames_out++;
    s->stats.answered_locally++;
    stats_count(&s->stats, cls, STAT_TO_X, size);
    ch->seq_floor = ch->xs.seq_sent;
}

/* App side: answers a request here when its reply is known exactly, and only while every
 * earlier request the server has not yet answered was itself answered here (such requests
 * cause no events or errors), so the client sees a stream a server could have sent. */
static bool answer_locally(struct channel *ch, const struct msg_class *cls, const uint8_t *msg, uint32_t size)
{
    struct session *s = ch->s;
    if (s->cfg.no_local_answers || ch->last_unpredicted > ch->xs.seq_done)
        return false;
    struct buf reply = { 0 };
    /* During a grab the observer's watch on a window made meanwhile is not yet in place, and
     * GetWindowAttributes' all-event-masks would name it: that one is asked of the server. */
    bool own_ok = !(ch->grabbing && !cls->ext && cls->major == XP_OP_GET_WINDOW_ATTRIBUTES);
    if (!predict_answer(s->predict, &ch->pq, cls, msg, size, (uint16_t)ch->xs.seq_sent, ch->xs.msb, &reply) &&
        !(own_ok && ownwin_answer(&ch->own, s->predict, cls, msg, size, (uint16_t)ch->xs.seq_sent, ch->xs.msb, false,
                                  &reply)))
        return false;
    /* Through xstream as if from the server, so this side learns from it as the other does.
     * Usually one reply; ListFontsWithInfo's answer is several: all are framed first. */
    struct xw_server_msg m;
    struct msg_class rcls;
    bool ok = true;
    for (size_t at = 0; ok && at < reply.len; at += m.size)
        ok = xstream_next_server_msg(&ch->xs, buf_head(&reply) + at, reply.len - at, &m) > 0;
    for (size_t at = 0; ok && at < reply.len; at += m.size) {
        ok = xstream_next_server_msg(&ch->xs, buf_head(&reply) + at, reply.len - at, &m) > 0 &&
             xstream_on_server_msg(&ch->xs, buf_head(&reply) + at, &m, &ch->to_x, &rcls) == 0;
        if (ok && at + m.size < reply.len)
            stats_count(&s->stats, &rcls, STAT_TO_X, m.size);
    }
    bool atom_none = ok && predict_is_atom_none(&rcls, buf_head(&reply), reply.len, ch->xs.msb);
    buf_free(&reply);
    if (!ok)
        return false;
    answered_here(ch, &rcls, m.size, atom_none); /* counts the last reply; the loop, the others */
    return true;
}

static bool is_copy(const struct msg_class *cls)
{
    return !cls->ext && (cls->major == XOP_COPY_AREA || cls->major == XOP_COPY_PLANE);
}

/* App side: answers a CopyArea's NoExpose here when the source is known to be wholly
 * visible (expose.h). No reply may be outstanding, so nothing the server sends for an
 * earlier request can be a reply; its events are renumbered as above. */
static bool answer_noexpose(struct channel *ch, const struct msg_class *cls, const uint8_t *msg,
                            const struct xw_request *rq)
{
    struct session *s = ch->s;
    const uint8_t *body = msg + rq->header_size;
    uint32_t len = rq->size - rq->header_size;
    if (s->cfg.no_local_answers || xstream_replies_owed(&ch->xs) || !expose_predict(&ch->ex, cls, body, len, ch->xs.msb))
        return false;
    uint8_t ev[32];
    expose_build_noexpose(ev, (uint16_t)ch->xs.seq_sent, ld32(body + 4, ch->xs.msb), cls->major, ch->xs.msb);
    if (buf_append(&ch->to_x, ev, sizeof ev) < 0)
        return false;
    struct msg_class ecls = { .kind = MSG_EVENT, .major = XEV_NO_EXPOSE, .name = "NoExpose", .query_ext = -1 };
    answered_here(ch, &ecls, sizeof ev, false);
    return true;
}

static struct dropped_reply *drop_find(struct channel *ch, uint32_t seq)
{
    for (uint32_t i = 0; i < ch->drops.len; i++) {
        struct dropped_reply *d = &ch->drops.q[(ch->drops.head + i) % ch->drops.cap];
        if (d->seq == seq)
            return d;
    }
    return NULL;
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
}

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
    const uint8_t *body = msg + rq->header_size;
    uint32_t body_len = rq->size - rq->header_size;
    if (is_app(s)) {
        if (!cls->ext && cls->major == 8 /* MapWindow */)
            log_debug("channel %u: request %u maps a window", ch->id, seq); /* for round-trip counts */
        expose_on_request(&ch->ex, cls, body, body_len, seq, ch->xs.msb);
        if (!answer_locally(ch, cls, msg, rq->size)) {
            if (!predict_quiet(s->predict, &ch->pq, cls, msg, rq->size, ch->xs.msb) ||
                ownwin_may_fail(&ch->own, cls, msg, rq->size, ch->xs.msb))
                ch->last_unpredicted = seq;
            if (!answer_noexpose(ch, cls, msg, rq))
                predict_ask(&ch->pq, cls, msg, rq->size, seq, ch->xs.msb);
        }
    } else {
        if (s->observer)
            observer_on_request(s->observer, ch, cls, body, body_len, seq, ch->xs.msb);
        predict_ask(&ch->pq, cls, msg, rq->size, seq, ch->xs.msb);
        if (s->learnt)
            learnt_on_request(s->learnt, &ch->pq, cls, msg, rq->size, ch->xs.msb);
        struct dropped_reply *d = drop_find(ch, seq);
        if (d) /* the state may have changed since the app side answered: a miss, not a bug */
            d->state = predict_is_state_query(cls, msg, rq->size, ch->xs.msb);
        if (d && is_copy(cls) && body_len >= 8) {
            d->event = true;
            uint8_t *ev = buf_append_space(&d->expected, 32);
            if (ev)
                expose_build_noexpose(ev, (uint16_t)seq, ld32(body + 4, ch->xs.msb), cls->major, ch->xs.msb);
        } else if (d && d->atom_none) {
            predict_atom_none_reply(&d->expected, (uint16_t)seq, ch->xs.msb);
        } else if (d && !predict_answer(s->predict, &ch->pq, cls, msg, rq->size, (uint16_t)seq, ch->xs.msb, &d->expected) &&
                   !(d->own_window = ownwin_answer(&ch->own, s->predict, cls, msg, rq->size, (uint16_t)seq, ch->xs.msb,
                                                   true, &d->expected)) &&
                   !d->state)
            log_error("channel %u: request %u was answered at the app side, but this side knows no answer "
                      "(please report this)", ch->id, seq);
        /* The client has its answer already and may act on it (BigReqEnable, extension
         * requests) before the server's reply reaches us: learn from our copy now. */
        if (d && d->expected.len == 32 && cls->major == XW_OP_QUERY_EXTENSION)
            xstream_learn_extension(&ch->xs, cls->query_ext, buf_head(&d->expected));
    }
    /* Both sides, answered or not: later handshakes and QueryFonts depend on it. */
    predict_track(s->predict, &ch->pq, cls, msg, rq->size, ch->xs.msb);
    ownwin_on_request(&ch->own, cls, msg, rq->size, ch->xs.msb);
    size_t at = out->len;
    rc = buf_append(out, msg, rq->size);
    if (!rc && is_app(s) && rq->header_size == 4)
        clear_padding(out->data + out->off + at, rq->size, cls->pad_mask);
    return rc ? rc : encode_tail(ch, out, at);
}

/* Display side: whether this reply was answered at the app side (and is dropped here). */
static bool predicted_reply(struct channel *ch, const struct xw_server_msg *m, const struct msg_class *cls,
                            const uint8_t *msg, size_t size)
{
    if (m->kind == XW_KIND_EVENT && !m->has_seq)
        return false;
    while (ch->drops.len && ch->drops.q[ch->drops.head].seq < ch->xs.seq_done) {
        if (ch->drops.q[ch->drops.head].event) /* no NoExpose came: the copy failed or exposed */
            ch->s->stats.noexpose_missed++;
        drop_pop(ch); /* a reply: should not happen, answered by an error instead */
    }
    for (uint32_t i = 0; m->kind == XW_KIND_ERROR && i < ch->drops.len; i++) {
        const struct dropped_reply *d = &ch->drops.q[(ch->drops.head + i) % ch->drops.cap];
        if (d->seq != ch->xs.seq_done && !d->event && d->own_window) {
            /* Likely another client's doing (it destroyed the client's window): a miss, 3.4. */
            ch->s->stats.ownwin_missed++;
            log_info("channel %u: the server's error for request %u (%s) came after request %u about the client's "
                     "own window was answered at the app side", ch->id, ch->xs.seq_done, cls->name ? cls->name : "?", d->seq);
            break;
        }
        if (d->seq != ch->xs.seq_done && !d->event) {
            /* A quiet request failed after a later one was answered: the client saw them out of order. */
            log_error("channel %u: the server's error for request %u (%s) came after request %u was answered at "
                      "the app side (please report this)", ch->id, ch->xs.seq_done, cls->name ? cls->name : "?", d->seq);
            break;
        }
    }
    if (!ch->drops.len || ch->drops.q[ch->drops.head].seq != ch->xs.seq_done)
        return false;
    const struct buf *e = &ch->drops.q[ch->drops.head].expected;
    if (ch->drops.q[ch->drops.head].event) {
        if (m->kind == XW_KIND_EVENT && m->code == XEV_NO_EXPOSE && e->len == size && memcmp(buf_head(e), msg, size) == 0) {
            drop_pop(ch);
            return true;
        }
        /* The server exposed after all (the window changed while the answer was on its
         * way): the client gets the real events too, and repaints what they name. */
        if (m->kind != XW_KIND_EVENT || m->code == XEV_GRAPHICS_EXPOSE || m->code == XEV_NO_EXPOSE) {
            ch->s->stats.noexpose_missed++;
            log_info("channel %u: request %u (%s) was answered with NoExpose at the app side, but the server sent %s",
                     ch->id, ch->xs.seq_done, cls->name ? cls->name : "?",
                     m->kind == XW_KIND_ERROR ? "an error" : m->code == XEV_GRAPHICS_EXPOSE ? "GraphicsExpose" : "another NoExpose");
            drop_pop(ch);
        }
        return false;
    }
    if (m->kind == XW_KIND_EVENT)
        return false;
    if (m->kind == XW_KIND_REPLY && e->len > size && memcmp(buf_head(e), msg, size) == 0) {
        /* One of several replies (ListFontsWithInfo): the rest are still to come. */
        buf_consume(&ch->drops.q[ch->drops.head].expected, size);
        return true;
    }
    if (ch->drops.q[ch->drops.head].own_window && (m->kind != XW_KIND_REPLY || e->len != size ||
                                                   memcmp(buf_head(e), msg, size) != 0)) {
        /* Another client changed the window while the answer was on its way (PROTOCOL.md
         * 3.4): the client keeps the answer it has; the server's is dropped. */
        ch->s->stats.ownwin_missed++;
        log_info("channel %u: request %u (%s) about the client's own window was answered at the app side, but "
                 "the server's %s differs (the window changed meanwhile)", ch->id, ch->xs.seq_done,
                 cls->name ? cls->name : "?", m->kind == XW_KIND_REPLY ? "reply" : "error");
        drop_pop(ch);
        return true;
    }
    if (ch->drops.q[ch->drops.head].state && (m->kind != XW_KIND_REPLY || e->len != size ||
                                               memcmp(buf_head(e), msg, size) != 0)) {
        /* The state changed, and this side learnt it, while the answer was on its way
         * (PROTOCOL.md 3.2): the client keeps the answer it has, as if it asked a moment earlier. */
        ch->s->stats.state_missed++;
        log_info("channel %u: request %u (%s%s%s) was answered at the app side from state that changed meanwhile",
                 ch->id, ch->xs.seq_done, cls->ext ? cls->ext : "", cls->ext ? " " : "", cls->name ? cls->name : "?");
        drop_pop(ch);
        return true;
    }
    if (ch->drops.q[ch->drops.head].atom_none && m->kind == XW_KIND_REPLY && e->len == size &&
        memcmp(buf_head(e), msg, size) != 0) {
        /* Another client made the atom while the census crossed the link (docs/PROTOCOL.md 3.2). */
        ch->s->stats.atom_none_missed++;
        log_info("channel %u: request %u (InternAtom) was answered None at the app side, but the atom existed "
                 "(made by another client meanwhile)", ch->id, ch->xs.seq_done);
    } else if (m->kind != XW_KIND_REPLY || e->len != size || memcmp(buf_head(e), msg, size) != 0)
        log_error("channel %u: the server's %s to request %u (%s) differs from the answer given at the app side "
                  "(please report this)", ch->id, m->kind == XW_KIND_REPLY ? "reply" : "error", ch->xs.seq_done,
                  cls->name ? cls->name : "?");
    if (m->kind != XW_KIND_REPLY)
        return false;
    drop_pop(ch);
    return true;
}

static int on_server_msg(struct channel *ch, const uint8_t *msg, const struct xw_server_msg *m, struct buf *out,
                         struct msg_class *cls)
{
    struct session *s = ch->s;
    size_t at = out->len;
    int rc = xstream_on_server_msg(&ch->xs, msg, m, out, cls);
    if (rc)
        return rc;
    /* Compared as the client would see it: after hidden extensions are rewritten. */
    if (!is_app(s) && predicted_reply(ch, m, cls, out->data + out->off + at, out->len - at)) {
        out->len = at; /* the client already has it */
        return 0;
    }
    if (!is_app(s) && s->observer && m->has_seq)
        observer_on_progress(s->observer, ch);
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
    if (is_app(s) && m->has_seq && ch->xs.seq_done < ch->seq_floor) {
        /* An event from before a locally answered request: only answered requests lie
         * between, so it may as well have come after them. Keep the numbers rising. */
        st16(out->data + out->off + at + 2, (uint16_t)ch->seq_floor, ch->xs.msb);
    }
    /* An answer to the latest request: a client that needed it has waited a round trip. */
    if (is_app(s) && (m->kind == XW_KIND_REPLY || m->kind == XW_KIND_ERROR || m->kind == XW_KIND_SETUP) &&
        ch->xs.seq_done == ch->xs.seq_sent && ch->last_answered != ch->xs.seq_sent + 1) {
        s->stats.round_trips++;
        log_debug("channel %u: round trip ended by the %s to request %u (%s%s%s)", ch->id, msg_kind_name(cls->kind),
                  ch->xs.seq_done, cls->ext ? cls->ext : "", cls->ext ? " " : "", cls->name ? cls->name : "?");
        ch->last_answered = ch->xs.seq_sent + 1;
    }
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
        return (cls->major >= 2 && cls->major <= 8) || cls->major == 35;
    return true;
}

/* Display side: whether a request waits for one of tincan's own X connections: a window's
 * watch (observer.c), a font set asked ahead (fontset.c). While the client holds the server
 * grabbed, or has asked to, the server serves it alone and those connections not at all: its
 * requests never wait for them, and what the wait would have kept exact is given up instead. */
static bool request_waits(struct channel *ch, const uint8_t *req, const struct xw_request *rq)
{
    struct session *s = ch->s;
    /* The server keeps what it owes a client until we read it; we read only as fast as the
     * link takes it. Past SERVER_OWED_MAX, what asks for more waits for the replies to be
     * read (channel_read_more resumes it); one request at a time always goes. */
    if (ch->xs.owed_bytes && ch->xs.owed_bytes + xs_reply_bytes(req, rq, ch->xs.msb) > SERVER_OWED_MAX)
        return true;
    if (!s->observer)
        return false;
    if (ch->grabbing) {
        observer_pass_unwatched(s->observer, ch, rq->major);
        return false;
    }
    return observer_must_hold(s->observer, ch, rq->major) ||
           fontset_hold(s->fontset, s->observer, ch, req, rq->size, ch->xs.msb);
}

/* Frames whole requests (or server messages) out of p[0..n) and appends them to out.
 * Returns the bytes used (a partial message at the end is left), or a negative errno for
 * input that cannot be framed. */
static void channel_read_more(struct channel *ch);
static long frame_span(struct channel *ch, const uint8_t *p, size_t n, struct buf *out, bool requests, enum stat_dir dir)
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
                if (!is_app(s) && request_waits(ch, m_at, &rq)) {
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

/* Frames the messages in `in` followed by n new bytes at p, appending them to out and
 * keeping any partial message in `in`. New bytes are copied into `in` only when they
 * complete or continue a partial message. 0 or a negative errno. */
static int frame_input(struct channel *ch, struct buf *in, const uint8_t *p, size_t n, struct buf *out,
                       bool requests, enum stat_dir dir)
{
    if (in->len && n && buf_append(in, p, n) < 0)
        return -ENOMEM;
    const uint8_t *at = in->len ? buf_head(in) : p;
    size_t len = in->len ? in->len : n;
    long used = frame_span(ch, at, len, out, requests, dir);
    if (used < 0)
        return (int)used;
    if (in->len) {
        buf_consume(in, (size_t)used);
        return 0;
    }
    return buf_append(in, p + used, n - (size_t)used);
}

static void channel_read_x(struct channel *ch)
{
    struct session *s = ch->s;
    uint8_t *p = buf_append_space(&ch->from_x, READ_CHUNK);
    if (!p) {
        channel_drop(ch, "out of memory");
        return;
    }
    uint64_t t0 = clock_ns();
    ssize_t n = read(ch->fd, p, READ_CHUNK);
    s->stats.read_ns += clock_ns() - t0;
    ch->from_x.len -= READ_CHUNK - (n > 0 ? (size_t)n : 0);
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
    if (ch->phase == CH_SETUP && app_accept_setup(ch) != 0)
        return;
    if (ch->phase == CH_OPEN)
        channel_read_more(ch);
}

/* Frames what from_x holds and queues it for the link. */
static void channel_read_more(struct channel *ch)
{
    struct session *s = ch->s;
    /* App side: requests from the client; display side: the server's messages. */
    long used = frame_span(ch, buf_head(&ch->from_x), ch->from_x.len, &ch->to_link, is_app(s), STAT_FROM_X);
    int rc = used < 0 ? (int)used : 0;
    if (used > 0)
        buf_consume(&ch->from_x, (size_t)used);
    if (rc) {
        char why[96];
        if (rc == -ENOBUFS && is_app(s)) /* as an X server drops a client that asks for GBs it never reads */
            snprintf(why, sizeof why, "client asked for more replies than it reads (%u outstanding, %llu MiB)",
                     ch->xs.pending_len, (unsigned long long)(ch->xs.owed_bytes >> 20));
        else
            snprintf(why, sizeof why, "%s %s", is_app(s) ? "client sent a" : "X server sent a", errno_text(rc));
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

static void on_x_event(struct watch *w, unsigned events)
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
        buf_put_varint(&tmp, consumed - ch->link_granted);
        frame_encode(&ch->s->link_tx, FRAME_WINDOW, ch->id, buf_head(&tmp), tmp.len);
        ch->s->stats.link_frames_out++;
        buf_free(&tmp);
        ch->link_granted = consumed;
    }
}

/* ---------------------------------------------------------------- link input */

int channel_on_open(struct session *s, const struct frame *f)
{
    struct frame_open o;
    if (is_app(s) || frame_open_parse(f, &o) < 0)
        return -EBADMSG;
    if (channel_find(s, f->channel))
        return -EBADMSG;
    struct buf setup = { 0 };
    int fd = -ENOENT;
    if (o.spare) {
        /* The client already has this connection's setup reply (spare.h). */
        if (spare_claim(s, o.spare, &fd, &setup) < 0) {
            const char *why = "the X connection prepared for this client closed";
            log_warn("channel %u: %s", f->channel, why);
            frame_encode(&s->link_tx, FRAME_CLOSE, f->channel, why, strlen(why));
            s->stats.link_frames_out++;
            buf_free(&setup);
            spare_open(s);
            return 0;
        }
    } else {
        fd = s->cfg.connect_upstream ? s->cfg.connect_upstream(s->cfg.connect_ctx) : xdisplay_connect(&s->cfg.upstream);
    }
    struct channel *ch = fd >= 0 ? channel_new(s, f->channel, fd) : NULL;
    if (!ch) {
        char reason[128];
        snprintf(reason, sizeof reason, "cannot connect to the X server: %s", fd < 0 ? strerror((int)-fd) : "too many clients");
        log_warn("channel %u: %s", f->channel, reason);
        if (fd >= 0)
            close(fd);
        frame_encode(&s->link_tx, FRAME_CLOSE, f->channel, reason, strlen(reason));
        s->stats.link_frames_out++;
        return 0;
    }
    s->stats.clients_total++;
    if (s->xcodec && channel_codecs(ch, XC_SERVER, o.msb, o.refs) < 0) {
        ch->on_link = true; /* the app side knows it: CLOSE tells it the channel is gone */
        channel_drop(ch, "out of memory");
        return 0;
    }
    ch->on_link = true;
    ch->phase = CH_OPEN;
    if (s->observer)
        observer_on_channel_open(s->observer, ch); /* ahead of the setup reply */
    net_set_nonblock(fd);
    xstream_on_setup_request(&ch->xs, o.msb);
    if (loop_watch(s->loop, &ch->w, fd, LOOP_READ | LOOP_WRITE, on_x_event, ch) < 0) {
        channel_drop(ch, "cannot watch the X server socket");
        return 0;
    }
    if (o.spare) {
        /* Through the stream as if just read, so this side learns what the app side did;
         * its bytes are not sent again. */
        long used = frame_span(ch, buf_head(&setup), setup.len, &ch->to_link, false, STAT_FROM_X);
        buf_clear(&ch->to_link);
        ch->urgent = false;
        buf_free(&setup);
        if (used < 0) {
            channel_drop(ch, "the spare connection's setup reply is unreadable");
            return 0;
        }
        spare_open(s); /* ready for the next client */
        return 0;
    }
    /* While the observer's first probes are unanswered, the setup request waits: the facts
     * they give must reach the app side before this client's setup reply. */
    if (!s->observer || !observer_hold_setup(s->observer, ch->id, &o))
        channel_send_setup(ch, &o);
    else
        ch->setup_held = true;
    return 0;
}

int channel_build_upstream_setup(const struct session *s, struct buf *out, const struct frame_open *o)
{
    uint8_t cookie[256];
    size_t cookie_len = 0;
    bool have_cookie = xauth_lookup(&s->cfg.upstream, cookie, &cookie_len, sizeof cookie) == 0;
    return xw_build_setup_request(out, o->msb, o->major, o->minor, have_cookie ? XAUTH_COOKIE_NAME : "",
                                  have_cookie ? strlen(XAUTH_COOKIE_NAME) : 0, cookie, have_cookie ? cookie_len : 0);
}

void channel_send_setup(struct channel *ch, const struct frame_open *o)
{
    if (ch->dead || ch->x_closed)
        return;
    /* A client whose setup the app side answered may have sent requests meanwhile: they
     * are in to_x, and the setup request goes ahead of them. */
    struct buf setup = { 0 };
    if (channel_build_upstream_setup(ch->s, &setup, o) < 0 || buf_append(&setup, buf_head(&ch->to_x), ch->to_x.len) < 0) {
        buf_free(&setup);
        channel_drop(ch, "out of memory");
        return;
    }
    buf_free(&ch->to_x);
    ch->to_x = setup;
    ch->setup_held = false;
    channel_update_interest(ch);
}

void channel_session_up(struct session *s)
{
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (is_app(s) && ch->phase == CH_SETUP && !ch->dead && ch->from_x.len && app_accept_setup(ch) == 0 &&
            ch->phase == CH_OPEN && ch->from_x.len)
            channel_read_more(ch);
}

void channel_resume_requests(struct channel *ch)
{
    if (ch->dead || !ch->from_link.len)
        return;
    int rc = frame_input(ch, &ch->from_link, NULL, 0, &ch->to_x, true, STAT_TO_X);
    if (rc) {
        char why[96];
        snprintf(why, sizeof why, "the link carried a %s for this client", errno_text(rc));
        channel_drop(ch, why);
        return;
    }
    channel_update_interest(ch);
}

int channel_on_fact(struct session *s, const struct frame *f)
{
    if (f->channel == 0) /* session-wide facts (docs/PROTOCOL.md 3.2) */
        return !is_app(s) ? -EBADMSG : s->predict ? predict_on_fact(s->predict, f->payload, f->len) : 0;
    struct channel *ch = channel_find(s, f->channel);
    if (is_app(s) && ownwin_is_fact(f->payload, f->len)) /* the client's own windows (3.4) */
        return ownwin_on_fact(ch ? &ch->own : NULL, f->payload, f->len);
    struct frame_fact_window w;
    if (!is_app(s) || frame_fact_window_parse(f, &w) < 0)
        return -EBADMSG;
    if (ch)
        expose_on_fact(&ch->ex, w.window, w.clean, w.width, w.height, w.as_of);
    return 0;
}

int channel_on_hint(struct session *s, const struct frame *f)
{
    struct frame_hint h;
    if (is_app(s) || frame_hint_parse(f, &h) < 0)
        return -EBADMSG;
    struct channel *ch = channel_find(s, f->channel);
    if (!ch)
        return 0; /* it could not connect: CLOSE is on its way */
    ch->font_set_hint = (h.flags & HINT_FONT_SET) != 0;
    fontset_ask_fonts(s->fontset, s->observer, &h);
    return 0;
}

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
        rc = frame_input(ch, &ch->from_link, p, n, &ch->to_x, !is_app(s), STAT_TO_X);
    if (rc) {
        char why[96];
        snprintf(why, sizeof why, "the link carried a %s for this client", errno_text(rc));
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

int channel_on_predicted(struct session *s, const struct frame *f)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t step;
    uint8_t note = 0;
    if (is_app(s) || rd_varint(&r, &step) < 0 || (rd_left(&r) && rd_u8(&r, &note) < 0) || rd_left(&r) ||
        step > UINT32_MAX || note > 1)
        return -EBADMSG;
    struct channel *ch = channel_find(s, f->channel);
    if (!ch)
        return 0;
    uint32_t seq = ch->seq_floor + (uint32_t)step;
    ch->seq_floor = seq;
    if (ch->drops.len == ch->drops.cap) {
        uint32_t cap = ch->drops.cap ? ch->drops.cap * 2 : 16;
        struct dropped_reply *n = cap <= XS_MAX_PENDING ? malloc(cap * sizeof *n) : NULL;
        if (!n)
            return -EBADMSG;
        for (uint32_t i = 0; i < ch->drops.len; i++)
            n[i] = ch->drops.q[(ch->drops.head + i) % ch->drops.cap];
        free(ch->drops.q);
        ch->drops.q = n;
        ch->drops.head = 0;
        ch->drops.cap = cap;
    }
    ch->drops.q[(ch->drops.head + ch->drops.len++) % ch->drops.cap] =
        (struct dropped_reply){ .seq = seq, .atom_none = note == 1 };
    return 0;
}


int channel_start_client(struct channel *ch)
{
    ch->phase = CH_SETUP;
    int rc = net_set_nonblock(ch->fd);
    if (!rc)
        rc = loop_watch(ch->s->loop, &ch->w, ch->fd, LOOP_READ, on_x_event, ch);
    return rc;
}
