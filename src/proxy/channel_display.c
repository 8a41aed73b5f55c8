/* channel_display.c -- the display side's part of a channel: the upstream connection
 * (connected when the app side's OPEN comes, or a spare taken), its setup request (held
 * while the observer's first probes are unanswered), requests that wait (for a window's
 * watch, a font set asked ahead, or replies the server owes), and the check of answers the
 * app side gave ahead (PREDICTED): the server's reply is compared and dropped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/net.h"
#include "proxy/fontset.h"
#include "proxy/learnt.h"
#include "proxy/session_private.h"
#include "proxy/spare.h"
#include "proxy/statewatch.h"
#include "x11/xdisplay.h"
#include "xproto_tables.h"

static struct dropped_reply *drop_find(struct channel *ch, uint32_t seq)
{
    for (uint32_t i = 0; i < ch->drops.len; i++) {
        struct dropped_reply *d = &ch->drops.q[(ch->drops.head + i) % ch->drops.cap];
        if (d->seq == seq)
            return d;
    }
    return NULL;
}

/* Display side, a client's request on its way to the server: the observer's watches, the
 * questions asked ahead (predict.h, learnt.h), and the answer the app side gave, if it gave
 * one, to be checked against the server's reply and dropped (predicted_reply). */
void channel_display_on_request(struct channel *ch, const struct msg_class *cls, const uint8_t *msg,
                                const struct xw_request *rq, uint32_t seq)
{
    struct session *s = ch->s;
    const uint8_t *body = msg + rq->header_size;
    uint32_t body_len = rq->size - rq->header_size;
    if (s->observer)
        observer_on_request(s->observer, ch, cls, body, body_len, seq, ch->xs.msb);
    predict_ask(&ch->pq, cls, msg, rq->size, seq, ch->xs.msb);
    if (s->learnt)
        learnt_on_request(s->learnt, &ch->pq, cls, msg, rq->size, ch->xs.msb);
    if (s->statewatch)
        statewatch_on_request(s->statewatch, cls, msg, rq->size, ch->xs.msb);
    struct dropped_reply *d = drop_find(ch, seq);
    if (d) /* the state may have changed since the app side answered: a miss, not a bug */
        d->state = predict_is_state_query(cls, msg, rq->size, ch->xs.msb);
    uint32_t dst; /* CopyArea's or CopyPlane's destination, in one place in both */
    _Static_assert((int)XP_COPY_AREA_BODY_DST_DRAWABLE_AT == (int)XP_COPY_PLANE_BODY_DST_DRAWABLE_AT, "copies' destinations");
    if (d && channel_is_copy(cls) && xp_peek32(body, body_len, XP_COPY_AREA_BODY_DST_DRAWABLE_AT, ch->xs.msb, &dst)) {
        d->event = true;
        uint8_t *ev = buf_append_space(&d->expected, XP_NO_EXPOSURE_EVENT_SIZE);
        if (ev)
            expose_build_noexpose(ev, (uint16_t)seq, dst, cls->major, ch->xs.msb);
    } else if (d && d->atom_none) {
        predict_atom_none_reply(&d->expected, (uint16_t)seq, ch->xs.msb);
    } else if (d && d->focus) {
        /* the channel's last GetInputFocus reply, as the app side has it; the focus may have
         * moved since, in which case the client's answer is as if it asked a moment earlier */
        uint8_t *r = !cls->ext && cls->major == XP_OP_GET_INPUT_FOCUS && ch->focus_known
                         ? buf_append_space(&d->expected, sizeof ch->focus_reply) : NULL;
        if (r) {
            memcpy(r, ch->focus_reply, sizeof ch->focus_reply);
            xp_server_set_sequence(r, (uint16_t)seq, ch->xs.msb);
            d->state = true;
        } else
            log_error("channel %u: request %u was answered at the app side as the last GetInputFocus, but it is "
                      "not one, or none came (please report this)", ch->id, seq);
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

/* Display side: whether this reply was answered at the app side (and is dropped here). */
static bool predicted_reply(struct channel *ch, const struct xw_server_msg *m, const struct msg_class *cls,
                            const uint8_t *msg, size_t size)
{
    if (m->kind == XW_KIND_EVENT && !m->has_seq)
        return false;
    while (ch->drops.len && ch->drops.q[ch->drops.head].seq < ch->xs.seq_done) {
        if (ch->drops.q[ch->drops.head].event) /* no NoExpose came: the copy failed or exposed */
            ch->s->stats.noexpose_missed++;
        channel_drop_pop(ch); /* a reply: should not happen, answered by an error instead */
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
            channel_drop_pop(ch);
            return true;
        }
        /* The server exposed after all (the window changed while the answer was on its
         * way): the client gets the real events too, and repaints what they name. */
        if (m->kind != XW_KIND_EVENT || m->code == XEV_GRAPHICS_EXPOSE || m->code == XEV_NO_EXPOSE) {
            ch->s->stats.noexpose_missed++;
            log_info("channel %u: request %u (%s) was answered with NoExpose at the app side, but the server sent %s",
                     ch->id, ch->xs.seq_done, cls->name ? cls->name : "?",
                     m->kind == XW_KIND_ERROR ? "an error" : m->code == XEV_GRAPHICS_EXPOSE ? "GraphicsExpose" : "another NoExpose");
            channel_drop_pop(ch);
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
        channel_drop_pop(ch);
        return true;
    }
    if (ch->drops.q[ch->drops.head].state && (m->kind != XW_KIND_REPLY || e->len != size ||
                                               memcmp(buf_head(e), msg, size) != 0)) {
        /* The state changed, and this side learnt it, while the answer was on its way
         * (PROTOCOL.md 3.2): the client keeps the answer it has, as if it asked a moment earlier. */
        ch->s->stats.state_missed++;
        log_info("channel %u: request %u (%s%s%s) was answered at the app side from state that changed meanwhile",
                 ch->id, ch->xs.seq_done, cls->ext ? cls->ext : "", cls->ext ? " " : "", cls->name ? cls->name : "?");
        channel_drop_pop(ch);
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
    channel_drop_pop(ch);
    return true;
}

/* Display side, a server message on its way to the link (msg: as the client would see it,
 * after hidden extensions are rewritten): true if the app side answered it already (it is
 * dropped); otherwise the observer hears of the client's progress. */
bool channel_display_drops_server_msg(struct channel *ch, const struct xw_server_msg *m, const struct msg_class *cls,
                                      const uint8_t *msg, size_t len)
{
    struct session *s = ch->s;
    if (predicted_reply(ch, m, cls, msg, len))
        return true;
    if (m->kind == XW_KIND_REPLY && !cls->ext && cls->major == XP_OP_GET_INPUT_FOCUS && len == sizeof ch->focus_reply) {
        memcpy(ch->focus_reply, msg, sizeof ch->focus_reply); /* what the app side answers the next from */
        ch->focus_known = true;
    }
    if (s->observer && m->has_seq)
        observer_on_progress(s->observer, ch);
    return false;
}

/* Display side: whether a request waits for one of tincan's own X connections: a window's
 * watch (observer.c), a font set asked ahead (fontset.c). While the client holds the server
 * grabbed, or has asked to, the server serves it alone and those connections not at all: its
 * requests never wait for them, and what the wait would have kept exact is given up instead. */
bool channel_request_waits(struct channel *ch, const uint8_t *req, const struct xw_request *rq)
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
            buf_free(&setup);
            if (link_send(s, FRAME_CLOSE, f->channel, why, strlen(why)) < 0)
                return 0;
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
        (void)!link_send(s, FRAME_CLOSE, f->channel, reason, strlen(reason)); /* on failure the session ends */
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
    if (loop_watch(s->loop, &ch->w, fd, LOOP_READ | LOOP_WRITE, channel_on_x_event, ch) < 0) {
        channel_drop(ch, "cannot watch the X server socket");
        return 0;
    }
    if (o.spare) {
        /* Through the stream as if just read, so this side learns what the app side did;
         * its bytes are not sent again. */
        long used = channel_frame_span(ch, buf_head(&setup), setup.len, &ch->to_link, false, STAT_FROM_X);
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

void channel_send_setup(struct channel *ch, const struct frame_open *o)
{
    if (ch->dead || ch->x_closed)
        return;
    /* A client whose setup the app side answered may have sent requests meanwhile: they
     * are in to_x, and the setup request goes ahead of them. */
    struct buf setup = { 0 };
    if (xdisplay_setup_request(&ch->s->cfg.upstream, &setup, o->msb, o->major, o->minor) < 0 || buf_append(&setup, buf_head(&ch->to_x), ch->to_x.len) < 0) {
        buf_free(&setup);
        channel_drop(ch, "out of memory");
        return;
    }
    buf_free(&ch->to_x);
    ch->to_x = setup;
    ch->setup_held = false;
    channel_update_interest(ch);
}

void channel_resume_requests(struct channel *ch)
{
    if (ch->dead || !ch->from_link.len)
        return;
    int rc = channel_frame_input(ch, &ch->from_link, NULL, 0, &ch->to_x, true, STAT_TO_X);
    if (rc) {
        char why[96];
        snprintf(why, sizeof why, "the link carried a %s for this client", channel_errno_text(rc));
        channel_drop(ch, why);
        return;
    }
    channel_update_interest(ch);
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

int channel_on_predicted(struct session *s, const struct frame *f)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t step;
    uint8_t note = 0;
    if (is_app(s) || rd_varint(&r, &step) < 0 || (rd_left(&r) && rd_u8(&r, &note) < 0) || rd_left(&r) ||
        step > UINT32_MAX || note > 2)
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
        (struct dropped_reply){ .seq = seq, .atom_none = note == 1, .focus = note == 2 };
    return 0;
}


static void listen_setup_released(void *ctx, struct channel *ch, const struct frame_open *open)
{
    (void)ctx;
    channel_send_setup(ch, open);
}

static void listen_unblocked(void *ctx, struct channel *ch)
{
    (void)ctx;
    channel_resume_requests(ch);
}

void channel_listen(struct session *s, struct observer_listener *out)
{
    *out = (struct observer_listener){ .ctx = s, .on_setup_released = listen_setup_released,
                                       .on_channel_unblocked = listen_unblocked };
}
