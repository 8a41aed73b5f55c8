/* channel_app.c -- the app side's part of a channel: a new client's setup (checked against
 * our cookie, answered from a spare or passed on), what this machine says of the client
 * (hint.h), answers given here without crossing the link (predict.h, ownwin.h, expose.h),
 * and the facts the display side sends for them. The shared core is channel.c. */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/net.h"
#include "proxy/hint.h"
#include "proxy/session_private.h"
#include "proxy/spare.h"
#include "xproto_tables.h"

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
    struct buf frame = { 0 };
    int rc = frame_hint_encode(&frame, ch->id, &f); /* one that cannot be made is not sent */
    rc = rc < 0 ? rc : link_send_frames(s, &frame);
    buf_free(&frame);
    if (rc < 0)
        return;
    log_debug("channel %u: hint: %s locale, %u fonts of its app-defaults", ch->id,
              h.flags & HINT_FONT_SET ? "a UTF-8" : "another", h.n_fonts);
}

int channel_app_accept_setup(struct channel *ch)
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
    struct buf frame = { 0 };
    int rc = frame_open_encode(&frame, ch->id, &o);
    rc = rc < 0 ? rc : link_send_frames(s, &frame);
    buf_free(&frame);
    if (rc < 0) {
        buf_free(&setup);
        return rc;
    }
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
        rc = channel_frame_input(ch, &ch->from_link, buf_head(&setup), setup.len, &ch->to_x, false, STAT_TO_X);
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
enum { NOTE_NONE, NOTE_ATOM_NONE, NOTE_FOCUS }; /* PREDICTED's note (docs/PROTOCOL.md 2.1) */
static void answered_here(struct channel *ch, const struct msg_class *cls, uint32_t size, uint8_t note)
{
    struct session *s = ch->s;
    struct buf seq = { 0 };
    int rc = buf_put_varint(&seq, ch->xs.seq_sent - ch->seq_floor); /* after the last: a byte, the same most times */
    if (!rc && note) /* the display side cannot tell this answer from its own facts */
        rc = buf_append(&seq, &note, 1);
    rc = rc < 0 ? rc : link_send(s, FRAME_PREDICTED, ch->id, buf_head(&seq), seq.len);
    buf_free(&seq);
    if (rc < 0)
        return;
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
    answered_here(ch, &rcls, m.size, atom_none ? NOTE_ATOM_NONE : NOTE_NONE); /* counts the last reply; the loop, the others */
    return true;
}

/* Whether a request may move the focus, so that the client's last GetInputFocus answer is
 * no longer the focus as the client knows it: SetInputFocus; what makes a window unviewable
 * (the focus then reverts: UnmapWindow, UnmapSubwindows, DestroyWindow, DestroySubwindows,
 * ReparentWindow, KillClient); an extension's request that is not quiet (XInput can set the
 * focus). A core query (QueryTree, GetGeometry, InternAtom ...) cannot: once its answer is
 * in, the focus is as it was. */
static bool may_move_focus(const struct msg_class *cls, bool quiet)
{
    if (cls->ext)
        return !quiet;
    switch (cls->major) {
    case XP_OP_SET_INPUT_FOCUS:
    case XP_OP_UNMAP_WINDOW:
    case XP_OP_UNMAP_SUBWINDOWS:
    case XP_OP_DESTROY_WINDOW:
    case XP_OP_DESTROY_SUBWINDOWS:
    case XP_OP_REPARENT_WINDOW:
    case XP_OP_KILL_CLIENT:
        return true;
    default:
        return false;
    }
}

/* App side: GetInputFocus (XSync's question) answered with the client's last answer to it,
 * when no event has reached the client since that answer, every request since that may fail
 * has had its answer (a reply or an error), and none may have moved the focus
 * (may_move_focus). The client's whole stream is then one in which the server took this
 * request right after the last it answered: the focus it tells was the focus then (nothing
 * the client heard says otherwise), and what the server sends meanwhile comes after it (its
 * numbers kept rising, channel_app_on_server_msg). For
 * FOCUS_FRESH_NS after the server's answer reached the client: a client that polls the
 * focus, waiting for it to move, then asks the server again and sees it move. Not while the
 * client holds the server grabbed: there XSync is how it lets the server go at its pace
 * (a loop of grab, XSync, ungrab answered here sent its grabs back to back, and another
 * client of the server waited over 1 s: core_grab). */
#define FOCUS_FRESH_NS (250u * 1000000)
static bool answer_focus(struct channel *ch, const struct msg_class *cls)
{
    struct session *s = ch->s;
    if (s->cfg.no_local_answers || cls->ext || cls->major != XP_OP_GET_INPUT_FOCUS || !ch->focus_known || ch->grabbing ||
        s->now() - ch->focus_at_ns >= FOCUS_FRESH_NS || ch->last_unpredicted > ch->xs.seq_done)
        return false;
    uint8_t reply[sizeof ch->focus_reply];
    memcpy(reply, ch->focus_reply, sizeof reply);
    xp_server_set_sequence(reply, (uint16_t)ch->xs.seq_sent, ch->xs.msb);
    struct xw_server_msg m;
    struct msg_class rcls;
    if (xstream_next_server_msg(&ch->xs, reply, sizeof reply, &m) <= 0 ||
        xstream_on_server_msg(&ch->xs, reply, &m, &ch->to_x, &rcls) < 0)
        return false;
    answered_here(ch, &rcls, m.size, NOTE_FOCUS);
    return true;
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
    uint8_t ev[XP_NO_EXPOSURE_EVENT_SIZE];
    uint32_t dst; /* CopyArea's or CopyPlane's destination, in one place in both */
    _Static_assert((int)XP_COPY_AREA_BODY_DST_DRAWABLE_AT == (int)XP_COPY_PLANE_BODY_DST_DRAWABLE_AT, "copies' destinations");
    if (!xp_peek32(body, len, XP_COPY_AREA_BODY_DST_DRAWABLE_AT, ch->xs.msb, &dst))
        return false;
    expose_build_noexpose(ev, (uint16_t)ch->xs.seq_sent, dst, cls->major, ch->xs.msb);
    if (buf_append(&ch->to_x, ev, sizeof ev) < 0)
        return false;
    struct msg_class ecls = { .kind = MSG_EVENT, .major = XEV_NO_EXPOSE, .name = "NoExpose", .query_ext = -1 };
    answered_here(ch, &ecls, sizeof ev, NOTE_NONE);
    return true;
}

/* App side, a client's request on its way to the link: NoExpose and the exposure model
 * (expose.h), the local answers (predict.h, ownwin.h), and what the display side is told
 * to expect (PREDICTED). */
void channel_app_on_request(struct channel *ch, const struct msg_class *cls, const uint8_t *msg,
                            const struct xw_request *rq, uint32_t seq)
{
    struct session *s = ch->s;
    const uint8_t *body = msg + rq->header_size;
    uint32_t body_len = rq->size - rq->header_size;
    if (!cls->ext && cls->major == XP_OP_MAP_WINDOW)
        log_debug("channel %u: request %u maps a window", ch->id, seq); /* for round-trip counts */
    expose_on_request(&ch->ex, cls, body, body_len, seq, ch->xs.msb);
    if (!answer_locally(ch, cls, msg, rq->size) && !answer_focus(ch, cls)) {
        /* A copy among its own drawables whose only event is answered here, or that has
         * none (exposures off), can fail only by the client's bug: quiet as the others. */
        bool noexpose = answer_noexpose(ch, cls, msg, rq);
        uint32_t visual, window;
        bool back_buffer = cls->ext && rq->size >= 8 && xp_peek32(msg, rq->size, 4, ch->xs.msb, &window) &&
                           ownwin_output_visual(&ch->own, window, &visual) &&
                           predict_quiet_back_buffer(s->predict, &ch->pq, cls, msg, rq->size, ch->xs.msb, visual);
        bool quiet = (back_buffer || predict_quiet(s->predict, &ch->pq, cls, msg, rq->size, ch->xs.msb) ||
                      ((noexpose || expose_copy_silent(&ch->ex, cls, body, body_len, ch->xs.msb)) &&
                       predict_copy_own(&ch->pq, cls, msg, rq->size, ch->xs.msb))) &&
                     !ownwin_may_fail(&ch->own, cls, msg, rq->size, ch->xs.msb);
        /* For round-trip counts: why a question crosses (a request not quiet still
         * unanswered before it, else no answer known here). */
        const struct xs_pending *last = ch->xs.pending_len ?
            &ch->xs.pending[(ch->xs.pending_head + ch->xs.pending_len - 1) % ch->xs.pending_cap] : NULL;
        if (last && last->seq == seq) {
            if (ch->last_unpredicted > ch->xs.seq_done)
                log_debug("channel %u: request %u (%s%s%s) crosses behind request %u (%s%s%s)", ch->id, seq,
                          cls->ext ? cls->ext : "", cls->ext ? " " : "", cls->name ? cls->name : "?",
                          ch->last_unpredicted, ch->unpredicted_cls.ext ? ch->unpredicted_cls.ext : "",
                          ch->unpredicted_cls.ext ? " " : "", ch->unpredicted_cls.name ? ch->unpredicted_cls.name : "?");
            else if (!cls->ext && cls->major == XP_OP_INTERN_ATOM && rq->size >= 8)
                log_debug("channel %u: request %u (InternAtom %.*s) crosses: no answer known here", ch->id, seq,
                          (int)(rq->size - 8 < (uint32_t)ld16(msg + 4, ch->xs.msb) ? rq->size - 8
                                                                                    : ld16(msg + 4, ch->xs.msb)),
                          (const char *)msg + 8);
            else
                log_debug("channel %u: request %u (%s%s%s) crosses: no answer known here%s", ch->id, seq,
                          cls->ext ? cls->ext : "", cls->ext ? " " : "", cls->name ? cls->name : "?",
                          cls->ext || cls->major != XP_OP_GET_INPUT_FOCUS ? ""
                          : !ch->focus_known ? " (the focus not known: an event, or a request that may move it)"
                          : ch->grabbing ? " (a grab)" : " (the last answer is older than 250 ms)");
        }
        predict_track_back_buffers(&ch->pq, cls, msg, rq->size, seq, ch->xs.msb);
        if (!quiet) {
            ch->last_unpredicted = seq;
            ch->unpredicted_cls = *cls;
        }
        if (may_move_focus(cls, quiet))
            ch->focus_known = false;
        if (!noexpose)
            predict_ask(&ch->pq, cls, msg, rq->size, seq, ch->xs.msb);
    }
}

/* App side, a server message on its way to the client (msg: as the client gets it): the
 * sequence numbers kept rising past local answers, and the round trips counted. */
void channel_app_on_server_msg(struct channel *ch, const struct xw_server_msg *m, const struct msg_class *cls,
                               uint8_t *msg)
{
    struct session *s = ch->s;
    if (m->has_seq && ch->xs.seq_done < ch->seq_floor) {
        /* An event from before a locally answered request: only answered requests lie
         * between, so it may as well have come after them. Keep the numbers rising. */
        xp_server_set_sequence(msg, (uint16_t)ch->seq_floor, ch->xs.msb);
    }
    /* An answer to the latest request: a client that needed it has waited a round trip. */
    if ((m->kind == XW_KIND_REPLY || m->kind == XW_KIND_ERROR || m->kind == XW_KIND_SETUP) &&
        ch->xs.seq_done == ch->xs.seq_sent && ch->last_answered != ch->xs.seq_sent + 1) {
        s->stats.round_trips++;
        log_debug("channel %u: round trip ended by the %s to request %u (%s%s%s)", ch->id, msg_kind_name(cls->kind),
                  ch->xs.seq_done, cls->ext ? cls->ext : "", cls->ext ? " " : "", cls->name ? cls->name : "?");
        ch->last_answered = ch->xs.seq_sent + 1;
    }
    if (m->has_seq)
        predict_back_buffers_seen(&ch->pq, m->kind == XW_KIND_ERROR, ch->xs.seq_done);
    /* The focus as the client last heard it from the server, while it hears no event after
     * (a FocusOut, or news of a change that moved it). Replies and errors keep it. */
    bool focus_reply = m->kind == XW_KIND_REPLY && !cls->ext && cls->major == XP_OP_GET_INPUT_FOCUS &&
                       m->size == sizeof ch->focus_reply;
    if (m->kind != XW_KIND_REPLY && m->kind != XW_KIND_ERROR)
        ch->focus_known = false;
    if (focus_reply) {
        ch->focus_known = true;
        memcpy(ch->focus_reply, msg, sizeof ch->focus_reply);
        ch->focus_at_ns = s->now();
    }
}

void channel_session_up(struct session *s)
{
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (is_app(s) && ch->phase == CH_SETUP && !ch->dead && ch->from_x.len && channel_app_accept_setup(ch) == 0 &&
            ch->phase == CH_OPEN && ch->from_x.len)
            channel_read_more(ch);
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

int channel_start_client(struct channel *ch)
{
    ch->phase = CH_SETUP;
    int rc = net_set_nonblock(ch->fd);
    if (!rc)
        rc = loop_watch(ch->s->loop, &ch->w, ch->fd, LOOP_READ, channel_on_x_event, ch);
    return rc;
}

