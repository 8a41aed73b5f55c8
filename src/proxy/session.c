/* session.c -- the engine both halves share: link I/O, channels, flow control and the
 * link scheduler. X bytes are framed into whole messages on the way in, accounted, and
 * queued per channel; before each sleep the scheduler packs queued data from all channels
 * into one link write, round robin. Must not block: every socket is non-blocking. */
#include "proxy/session.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "link/codec.h"
#include "link/frame.h"
#include "link/transport.h"
#include "proxy/predict.h"
#include "x11/xstream.h"

#define READ_CHUNK (64u * 1024)            /* bytes per read() */
#define LINK_OUT_HIGH (64u * 1024)         /* stop packing the link buffer above this */
#define DATA_CHUNK (4u * 1024)             /* one channel's share per scheduler round */
#define LINK_TARGET_MIN (2u * 1024)        /* unsent bytes a TCP link may hold, at least */
#define LINK_TARGET_MAX (256u * 1024)      /* ... and at most */
#define TO_LINK_HIGH (256u * 1024)         /* stop reading an X peer above this much queued */
#define MAX_CHANNELS 1024u                 /* live channels per session */
#define DECOMPRESS_STEP (256u * 1024)      /* link bytes decompressed before frames are handled */

enum channel_phase {
    CH_SETUP,   /* app side: waiting for the client's setup request */
    CH_OPEN,    /* carrying X traffic */
};

struct channel {
    uint32_t id;
    struct session *s;
    int fd;                       /* the X peer: a client (app side) or the server (display side) */
    struct watch w;
    struct xstream xs;
    enum channel_phase phase;
    struct buf from_x, to_x, from_link, to_link;
    uint64_t send_credit;         /* DATA bytes we may still send */
    uint64_t link_received;       /* DATA bytes received */
    uint64_t link_granted;        /* credit handed back to the peer */
    bool on_link;                 /* the peer knows this channel (OPEN sent or received) */
    bool x_closed;                /* our X peer is gone: send CLOSE once to_link is out */
    bool peer_closed;             /* CLOSE received: flush to_x, then close */
    bool dead;                    /* freed before the next sleep */
    uint32_t last_answered;       /* sequence number of the last request counted as a round trip */
    uint32_t last_unpredicted;    /* app side: the latest request not answered locally */
    uint32_t seq_floor;           /* app side: the latest request answered locally */
    struct {                      /* display side: replies the app side gave; drop the server's */
        uint32_t *seq;
        uint32_t head, len, cap;
    } drops;
    struct channel *next;
};

struct session {
    struct loop *loop;
    struct session_config cfg;
    enum session_state state;
    int link_in, link_out;
    struct watch link_in_w, link_out_w;  /* one watch when link_in == link_out */
    struct handshake hs;
    struct buf link_rx, hs_tx, link_tx;  /* frames, uncompressed */
    struct codec *codec;                 /* set when both sides offered CAP_ZSTD */
    struct buf wire_rx, wire_tx;         /* compressed link bytes */
    uint64_t handshake_deadline_ns;
    bool goodbye;                 /* end once link_tx is written */
    bool refused;
    char end_reason[256];
    bool ended_clean;
    struct channel *channels;     /* list, in scheduling order */
    struct channel *by_slot[MAX_CHANNELS];
    uint32_t next_id;
    size_t n_channels;
    struct stats stats;
    uint64_t idle_ns_at_start;    /* the loop's idle time before this session began */
    bool link_is_tcp;             /* the kernel reports unsent bytes (TCP_NOTSENT_LOWAT applies) */
    uint32_t lowat;               /* the TCP link's current low-water mark */
    struct predictor *predict;    /* facts for local answers; NULL when disabled */
};

static void link_pump(struct session *s);
static void channel_drop(struct channel *ch, const char *why);

/* ---------------------------------------------------------------- helpers */

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static bool is_app(const struct session *s) { return s->cfg.role == ROLE_APP; }

static struct channel *channel_find(struct session *s, uint32_t id)
{
    struct channel *ch = s->by_slot[id % MAX_CHANNELS];
    return ch && ch->id == id && !ch->dead ? ch : NULL;
}

static void session_end(struct session *s, bool clean, const char *fmt, const char *arg)
{
    if (s->state == SESSION_ENDED)
        return;
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

/* ---------------------------------------------------------------- channels */

static struct channel *channel_new(struct session *s, uint32_t id, int fd)
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
    ch->next = s->channels;
    s->channels = ch;
    s->by_slot[id % MAX_CHANNELS] = ch;
    s->n_channels++;
    return ch;
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
    free(ch->drops.seq);
    s->n_channels--;
    free(ch);
}

/* Frees channels marked dead. Runs before sleeping, so no callback of this turn holds one. */
static void reap_channels(struct session *s)
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

static void channel_update_interest(struct channel *ch)
{
    if (ch->w.fd < 0)
        return;
    unsigned want = 0;
    if (!ch->x_closed && ch->to_link.len < TO_LINK_HIGH)
        want |= LOOP_READ;
    if (ch->to_x.len)
        want |= LOOP_WRITE;
    loop_want(ch->s->loop, &ch->w, want);
}

/* Our X peer is gone (or we cut it off). Whatever it sent completely still goes out;
 * then CLOSE tells the other side. why == NULL: an orderly close, not worth a warning. */
static void channel_drop(struct channel *ch, const char *why)
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
    case ENOBUFS: return "too many replies outstanding";
    case ENOMEM: return "out of memory";
    }
    return "bad input";
}

/* App side: the client's setup request, checked against our cookie. */
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
    struct frame_open o = { .msb = rq.msb, .major = rq.major, .minor = rq.minor };
    frame_open_encode(&s->link_tx, ch->id, &o);
    s->stats.link_frames_out++;
    xstream_on_setup_request(&ch->xs, rq.msb);
    struct msg_class cls = { .kind = MSG_SETUP, .name = "SetupRequest", .query_ext = -1 };
    stats_count(&s->stats, &cls, STAT_FROM_X, (uint32_t)n);
    buf_consume(&ch->from_x, (size_t)n);
    ch->phase = CH_OPEN;
    ch->on_link = true;
    return 0;
}

/* App side: answers a request here when its reply is known exactly, and only while every
 * earlier request the server has not yet answered was itself answered here (such requests
 * cause no events or errors), so the client sees a stream a server could have sent. */
static bool answer_locally(struct channel *ch, const struct msg_class *cls)
{
    struct session *s = ch->s;
    if (s->cfg.no_local_answers || ch->last_unpredicted > ch->xs.seq_done)
        return false;
    struct buf reply = { 0 };
    if (!predict_answer(s->predict, cls, (uint16_t)ch->xs.seq_sent, ch->xs.msb, &reply))
        return false;
    /* Through xstream as if from the server, so this side learns from it as the other does. */
    struct xw_server_msg m;
    struct msg_class rcls;
    bool ok = xstream_next_server_msg(&ch->xs, buf_head(&reply), reply.len, &m) == (long)reply.len &&
              xstream_on_server_msg(&ch->xs, buf_head(&reply), &m, &ch->to_x, &rcls) == 0;
    buf_free(&reply);
    if (!ok)
        return false;
    struct buf seq = { 0 };
    buf_put_varint(&seq, ch->xs.seq_sent);
    frame_encode(&s->link_tx, FRAME_PREDICTED, ch->id, buf_head(&seq), seq.len);
    buf_free(&seq);
    s->stats.link_frames_out++;
    s->stats.answered_locally++;
    stats_count(&s->stats, &rcls, STAT_TO_X, m.size);
    ch->seq_floor = ch->xs.seq_sent;
    return true;
}

static int on_request_msg(struct channel *ch, const uint8_t *msg, const struct xw_request *rq, struct buf *out,
                          struct msg_class *cls)
{
    int rc = xstream_on_request(&ch->xs, msg, rq, cls);
    if (rc)
        return rc;
    /* The request still goes to the server (the display side drops its reply), so the
     * server's state and sequence numbers stay exactly as without tincan. */
    if (!is_app(ch->s) || !answer_locally(ch, cls))
        ch->last_unpredicted = ch->xs.seq_sent;
    return buf_append(out, msg, rq->size);
}

/* Display side: whether this reply was answered at the app side (and is dropped here). */
static bool predicted_reply(struct channel *ch, const struct xw_server_msg *m, const struct msg_class *cls,
                            const uint8_t *msg)
{
    struct session *s = ch->s;
    if (m->kind == XW_KIND_EVENT)
        return false;
    while (ch->drops.len && ch->drops.seq[ch->drops.head] < ch->xs.seq_done) {
        ch->drops.head = (ch->drops.head + 1) % ch->drops.cap; /* answered by an error instead */
        ch->drops.len--;
    }
    if (!ch->drops.len || ch->drops.seq[ch->drops.head] != ch->xs.seq_done)
        return false;
    if (m->kind != XW_KIND_REPLY || !predict_matches(s->predict, cls, msg, m->size))
        log_error("channel %u: the server's answer to request %u differs from the one given at the app side "
                  "(please report this)", ch->id, ch->xs.seq_done);
    if (m->kind == XW_KIND_REPLY) {
        ch->drops.head = (ch->drops.head + 1) % ch->drops.cap;
        ch->drops.len--;
        return true;
    }
    return false;
}

static int on_server_msg(struct channel *ch, const uint8_t *msg, const struct xw_server_msg *m, struct buf *out,
                         struct msg_class *cls)
{
    struct session *s = ch->s;
    size_t at = out->len;
    int rc = xstream_on_server_msg(&ch->xs, msg, m, out, cls);
    if (rc)
        return rc;
    if (!is_app(s) && predicted_reply(ch, m, cls, msg)) {
        out->len = at; /* the client already has it */
        return 0;
    }
    if (m->kind == XW_KIND_REPLY)
        predict_learn(s->predict, cls, out->data + out->off + at, (uint32_t)(out->len - at));
    if (is_app(s) && m->has_seq && ch->xs.seq_done < ch->seq_floor) {
        /* An event from before a locally answered request: only answered requests lie
         * between, so it may as well have come after them. Keep the numbers rising. */
        st16(out->data + out->off + at + 2, (uint16_t)ch->seq_floor, ch->xs.msb);
    }
    /* An answer to the latest request: a client that needed it has waited a round trip. */
    if (is_app(s) && (m->kind == XW_KIND_REPLY || m->kind == XW_KIND_ERROR || m->kind == XW_KIND_SETUP) &&
        ch->xs.seq_done == ch->xs.seq_sent && ch->last_answered != ch->xs.seq_sent + 1) {
        s->stats.round_trips++;
        ch->last_answered = ch->xs.seq_sent + 1;
    }
    return 0;
}

/* Frames whole requests (or server messages) out of p[0..n) and appends them to out.
 * Returns the bytes used (a partial message at the end is left), or a negative errno for
 * input that cannot be framed. */
static long frame_span(struct channel *ch, const uint8_t *p, size_t n, struct buf *out, bool requests, enum stat_dir dir)
{
    struct session *s = ch->s;
    uint64_t t0 = clock_ns();
    size_t used = 0;
    long rc = 0;
    while (used < n) {
        const uint8_t *m_at = p + used;
        struct msg_class cls;
        long size;
        if (requests) {
            struct xw_request rq;
            if ((size = xstream_next_request(&ch->xs, m_at, n - used, &rq)) >= 0)
                rc = on_request_msg(ch, m_at, &rq, out, &cls);
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
    if (in->len && buf_append(in, p, n) < 0)
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
    if (ch->phase != CH_OPEN)
        return;
    /* App side: requests from the client; display side: the server's messages. */
    long used = frame_span(ch, buf_head(&ch->from_x), ch->from_x.len, &ch->to_link, is_app(s), STAT_FROM_X);
    int rc = used < 0 ? (int)used : 0;
    if (used > 0)
        buf_consume(&ch->from_x, (size_t)used);
    if (rc) {
        char why[96];
        snprintf(why, sizeof why, "%s %s", is_app(s) ? "client sent a" : "X server sent a", errno_text(rc));
        channel_drop(ch, why);
        return;
    }
    channel_update_interest(ch);
}

static void channel_write_x(struct channel *ch)
{
    struct session *s = ch->s;
    if (ch->fd < 0 || !ch->to_x.len)
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
static void channel_grant(struct channel *ch)
{
    uint64_t buffered = ch->to_x.len;
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

static int on_open(struct session *s, const struct frame *f)
{
    struct frame_open o;
    if (is_app(s) || frame_open_parse(f, &o) < 0)
        return -EBADMSG;
    if (channel_find(s, f->channel))
        return -EBADMSG;
    int fd = s->cfg.connect_upstream ? s->cfg.connect_upstream(s->cfg.connect_ctx) : xdisplay_connect(&s->cfg.upstream);
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
    ch->on_link = true;
    ch->phase = CH_OPEN;
    set_nonblock(fd);
    uint8_t cookie[256];
    size_t cookie_len = 0;
    bool have_cookie = xauth_lookup(&s->cfg.upstream, cookie, &cookie_len, sizeof cookie) == 0;
    xw_build_setup_request(&ch->to_x, o.msb, o.major, o.minor, have_cookie ? XAUTH_COOKIE_NAME : "",
                           have_cookie ? strlen(XAUTH_COOKIE_NAME) : 0, cookie, have_cookie ? cookie_len : 0);
    xstream_on_setup_request(&ch->xs, o.msb);
    if (loop_watch(s->loop, &ch->w, fd, LOOP_READ | LOOP_WRITE, on_x_event, ch) < 0)
        channel_drop(ch, "cannot watch the X server socket");
    return 0;
}

static int on_data(struct session *s, const struct frame *f)
{
    struct channel *ch = channel_find(s, f->channel);
    if (!ch || ch->x_closed)
        return 0; /* crossed with our CLOSE: harmless */
    if (ch->link_received + f->len > ch->link_granted + FRAME_CHANNEL_WINDOW)
        return -EBADMSG; /* the peer ignored flow control */
    ch->link_received += f->len;
    /* App side: the server's messages for our client; display side: the client's requests. */
    int rc = frame_input(ch, &ch->from_link, f->payload, f->len, &ch->to_x, !is_app(s), STAT_TO_X);
    if (rc) {
        char why[96];
        snprintf(why, sizeof why, "the link carried a %s for this client", errno_text(rc));
        channel_drop(ch, why);
    }
    return 0;
}

static int on_close(struct session *s, const struct frame *f)
{
    struct channel *ch = channel_find(s, f->channel);
    if (!ch)
        return 0;
    if (f->len)
        log_info("channel %u: closed by the other side: %.*s", ch->id, (int)(f->len > 200 ? 200 : f->len), f->payload);
    ch->peer_closed = true;
    buf_clear(&ch->to_link);
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

static int on_window(struct session *s, const struct frame *f)
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

static int on_predicted(struct session *s, const struct frame *f)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t seq;
    if (is_app(s) || rd_varint(&r, &seq) < 0 || rd_left(&r) || seq > UINT32_MAX)
        return -EBADMSG;
    struct channel *ch = channel_find(s, f->channel);
    if (!ch)
        return 0;
    if (ch->drops.len == ch->drops.cap) {
        uint32_t cap = ch->drops.cap ? ch->drops.cap * 2 : 16;
        uint32_t *n = malloc(cap * sizeof *n);
        if (!n || cap > XS_MAX_PENDING) {
            free(n);
            return -EBADMSG;
        }
        for (uint32_t i = 0; i < ch->drops.len; i++)
            n[i] = ch->drops.seq[(ch->drops.head + i) % ch->drops.cap];
        free(ch->drops.seq);
        ch->drops.seq = n;
        ch->drops.head = 0;
        ch->drops.cap = cap;
    }
    ch->drops.seq[(ch->drops.head + ch->drops.len++) % ch->drops.cap] = (uint32_t)seq;
    return 0;
}

static int on_goodbye(struct session *s, const struct frame *f)
{
    session_end(s, true, "%s", "the other side ended the session");
    return 0;
}

static int on_bad_frame(struct session *s, const struct frame *f) { return -EBADMSG; }

typedef int (*frame_handler)(struct session *, const struct frame *);

static frame_handler handler_for(uint8_t type)
{
    switch (type) {
    case FRAME_OPEN: return on_open;
    case FRAME_DATA: return on_data;
    case FRAME_CLOSE: return on_close;
    case FRAME_WINDOW: return on_window;
    case FRAME_PREDICTED: return on_predicted;
    case FRAME_GOODBYE: return on_goodbye;
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
        if ((s->hs.caps & CAP_ZSTD) && codec_new(&s->codec, s->cfg.compress_level) == 0) {
            /* What follows the handshake is compressed. */
            buf_append(&s->wire_rx, buf_head(&s->link_rx), s->link_rx.len);
            buf_clear(&s->link_rx);
        }
        log_info("link up (protocol version %d, %s)", LINK_PROTOCOL_VERSION, s->codec ? "zstd" : "uncompressed");
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
        int rc = n < 0 ? (int)n : handler_for(f.type)(s, &f);
        if (rc < 0) {
            char what[64];
            snprintf(what, sizeof what, "%s frame on channel %u", n < 0 ? "undecodable" : frame_type_name(f.type),
                     n < 0 ? 0 : f.channel);
            log_error("link: corrupt %s: ending the link", what);
            session_end(s, false, "corrupt link frame (%s)", what);
            return;
        }
        s->stats.link_frames_in++;
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
            session_end(s, false, "link lost: %s", why);
        }
        return;
    }
    s->stats.link_bytes_in += (uint64_t)n;
    link_process_input(s);
}

/* ---------------------------------------------------------------- link output */

/* Writes b to the link: 0 when all is out, 1 when the socket is full, -1 when the link broke. */
static int link_write_buf(struct session *s, struct buf *b)
{
    while (b->len) {
        uint64_t t0 = clock_ns();
        ssize_t n = write(s->link_out, buf_head(b), b->len);
        s->stats.write_ns += clock_ns() - t0;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 1;
            session_end(s, false, "link lost: %s", strerror(errno));
            return -1;
        }
        s->stats.link_writes++;
        s->stats.link_bytes_out += (uint64_t)n;
        buf_consume(b, (size_t)n);
    }
    return 0;
}

static void link_write(struct session *s)
{
    if (link_write_buf(s, &s->hs_tx) != 0 || s->state != SESSION_UP)
        return;
    if (!s->codec) {
        link_write_buf(s, &s->link_tx);
        return;
    }
    if (s->link_tx.len) { /* one flushed zstd block per write: nothing waits for more data */
        uint64_t t0 = clock_ns();
        s->stats.frame_bytes_out += s->link_tx.len;
        int rc = codec_compress(s->codec, buf_head(&s->link_tx), s->link_tx.len, &s->wire_tx);
        s->stats.encode_ns += clock_ns() - t0;
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
static size_t link_budget(struct session *s)
{
    struct transport_queue q;
    if (!s->link_is_tcp || transport_queue_info(s->link_out, &q) < 0)
        return LINK_OUT_HIGH;
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

static bool channels_waiting(const struct session *s)
{
    for (const struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->on_link && ch->to_link.len && ch->send_credit)
            return true;
    return false;
}

/* Packs queued channel data into link_tx, a DATA_CHUNK per channel per round, until the
 * link buffer is full or nothing is ready; then CLOSE for channels whose X peer has gone. */
static void schedule_channels(struct session *s)
{
    size_t budget = channels_waiting(s) ? link_budget(s) : 0;
    bool progress = true; /* one pass at least: CLOSEs go even without data */
    while (progress) {
        progress = false;
        for (struct channel *ch = s->channels; ch; ch = ch->next) {
            if (ch->dead || !ch->on_link)
                continue;
            size_t n = ch->to_link.len, backlog = link_backlog(s), room = backlog < budget ? budget - backlog : 0;
            if (n > DATA_CHUNK)
                n = DATA_CHUNK;
            if (n > room)
                n = room;
            if (n > ch->send_credit)
                n = (size_t)ch->send_credit;
            if (n) {
                frame_encode(&s->link_tx, FRAME_DATA, ch->id, buf_head(&ch->to_link), n);
                buf_consume(&ch->to_link, n);
                ch->send_credit -= n;
                s->stats.link_frames_out++;
                progress = true;
            }
            if (ch->x_closed && !ch->to_link.len && !ch->peer_closed) {
                frame_encode(&s->link_tx, FRAME_CLOSE, ch->id, NULL, 0);
                s->stats.link_frames_out++;
                ch->dead = true;
            }
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

static void link_pump(struct session *s)
{
    if (s->state == SESSION_UP) {
        for (struct channel *ch = s->channels; ch; ch = ch->next)
            if (!ch->dead && ch->on_link) {
                channel_write_x(ch);
                if (!ch->dead)
                    channel_grant(ch);
            }
        schedule_channels(s);
    }
    reap_channels(s);
    if (s->state != SESSION_ENDED)
        link_write(s);
    if (s->state == SESSION_ENDED)
        return;
    if (s->goodbye && !link_backlog(s) && !s->hs_tx.len) {
        session_end(s, true, "%s", "session ended");
        return;
    }
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead)
            channel_update_interest(ch);
    /* Wake when the link drains: to write what is packed, or to pack what channels hold. */
    bool pending = s->hs_tx.len || (s->state == SESSION_UP && (link_backlog(s) || channels_waiting(s)));
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

/* ---------------------------------------------------------------- public */

static void before_sleep(void *data) { link_pump(data); }

int session_new(struct session **out, struct loop *loop, const struct session_config *cfg, int link_in, int link_out)
{
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->loop = loop;
    s->cfg = *cfg;
    if (!s->cfg.handshake_timeout_ms)
        s->cfg.handshake_timeout_ms = 15000;
    s->link_in = link_in;
    s->link_out = link_out;
    s->link_in_w.fd = s->link_out_w.fd = -1;
    struct transport_queue q;
    s->link_is_tcp = transport_queue_info(link_out, &q) == 0;
    s->lowat = TRANSPORT_INITIAL_LOWAT;
    if (predict_new(&s->predict) < 0) {
        free(s);
        return -ENOMEM;
    }
    s->next_id = 1;
    stats_init(&s->stats);
    s->idle_ns_at_start = loop_idle_ns(loop);
    int rc = hs_init(&s->hs, cfg->role, cfg->secret, cfg->secret_len, cfg->compress_level > 0 ? CAP_ZSTD : 0);
    if (!rc)
        rc = hs_start(&s->hs, &s->hs_tx);
    if (!rc)
        rc = set_nonblock(link_in);
    if (!rc && link_out != link_in)
        rc = set_nonblock(link_out);
    if (!rc)
        rc = loop_watch(loop, &s->link_in_w, link_in, LOOP_READ | LOOP_WRITE, on_link_event, s);
    if (!rc && link_out != link_in)
        rc = loop_watch(loop, &s->link_out_w, link_out, LOOP_WRITE, on_link_event, s);
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
    loop_unwatch(s->loop, &s->link_in_w);
    loop_unwatch(s->loop, &s->link_out_w);
    loop_remove_before_sleep(s->loop, before_sleep, s);
    close(s->link_in);
    if (s->link_out != s->link_in)
        close(s->link_out);
    hs_wipe(&s->hs);
    buf_free(&s->link_rx);
    buf_free(&s->hs_tx);
    buf_free(&s->link_tx);
    buf_free(&s->wire_rx);
    buf_free(&s->wire_tx);
    codec_free(s->codec);
    predict_free(s->predict);
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
    ch->phase = CH_SETUP;
    int rc = set_nonblock(fd);
    if (!rc)
        rc = loop_watch(s->loop, &ch->w, fd, LOOP_READ, on_x_event, ch);
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
    if (s->state == SESSION_UP)
        frame_encode(&s->link_tx, FRAME_GOODBYE, 0, NULL, 0);
    s->goodbye = true;
}

void session_tick(struct session *s)
{
    if (s->state == SESSION_HANDSHAKE && clock_ns() > s->handshake_deadline_ns) {
        s->refused = true;
        log_error("link: no valid handshake within %u ms: refused", s->cfg.handshake_timeout_ms);
        session_end(s, false, "%s", "link handshake timed out");
    }
}

enum session_state session_state(const struct session *s) { return s->state; }
const char *session_end_reason(const struct session *s) { return s->ended_clean ? NULL : s->end_reason; }
bool session_refused(const struct session *s) { return s->refused; }
size_t session_channel_count(const struct session *s) { return s->n_channels; }
struct stats *session_stats(struct session *s) { return &s->stats; }

void session_print_stats(struct session *s, FILE *f)
{
    stats_print(&s->stats, f, is_app(s) ? "app side" : "display side", loop_idle_ns(s->loop) - s->idle_ns_at_start);
}
