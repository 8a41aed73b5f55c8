/* observer.c -- the display side's own X connection: window watches and confirmations
 * for local NoExpose answers (observer.h, expose.h, docs/PROTOCOL.md 3.3).
 * Workload: a handful of windows per client, a few events per window change, one round
 * trip per confirmation; all of it on the display's machine, next to the server. */
#include "proxy/observer.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/idmap.h"
#include "common/log.h"
#include "common/net.h"
#include "proxy/expose.h"
#include "proxy/session_private.h"
#include "x11/xdisplay.h"
#include "x11/xwire.h"

#define OBSERVER_CONNECT_TIMEOUT_MS 5000
#define OBSERVER_MAX_WINDOWS 4096u
#define OBSERVER_MAX_KIDS 8u         /* mapped children remembered; more: never clean */
#define OBSERVER_WATCH_TRIES 8       /* BadWindow: the client's CreateWindow is not yet done */

enum { EV_VISIBILITY = 15, EV_DESTROY = 17, EV_UNMAP = 18, EV_MAP = 19, EV_REPARENT = 21, EV_CONFIGURE = 22 };
enum { OP_REPARENT_WINDOW = 7, OP_MAP_WINDOW = 8, OP_MAP_SUBWINDOWS = 9 };
enum { OP_CHANGE_WINDOW_ATTRIBUTES = 2, OP_GET_WINDOW_ATTRIBUTES = 3, OP_GET_GEOMETRY = 14, OP_GET_INPUT_FOCUS = 43 };
#define WATCH_MASK (0x10000u | 0x20000u | 0x80000u) /* VisibilityChange, StructureNotify, SubstructureNotify */

enum pending_kind { P_SELECT, P_ATTRS, P_GEOMETRY, P_SYNC };

struct pending {
    uint32_t seq;
    enum pending_kind kind;
    uint32_t window;          /* P_SELECT/ATTRS/GEOMETRY */
    uint32_t channel, tag;    /* P_SYNC: the channel and its structural request confirmed */
};

struct owin {
    uint32_t id, channel;
    int8_t visibility;        /* -1 unknown, else VisibilityNotify's state (0 = unobscured) */
    bool watching;            /* the watch is in place (geometry known) */
    bool unsent;              /* waiting for the client's CreateWindow to be written */
    uint8_t tries;
    uint16_t width, height;
    uint8_t n_kids;
    bool kids_overflow;
    uint32_t kids[OBSERVER_MAX_KIDS];
    bool sent, sent_clean;    /* the last fact sent */
    uint16_t sent_w, sent_h;
    uint32_t sent_as_of;
};

struct observer {
    struct session *s;
    int fd;
    struct watch w;
    struct xstream xs;
    struct buf rx, tx;
    struct pending *q;        /* ring */
    uint32_t q_head, q_len, q_cap;
    struct owin *wins;        /* dense */
    uint32_t n_wins;
    struct idmap by_id;       /* window -> index + 1 */
    bool broken;
};

static void observer_event(struct watch *w, unsigned events);

/* ---------------------------------------------------------------- connection */

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_setup_reply(int fd, struct buf *in, uint64_t deadline_ns)
{
    for (;;) {
        long need = in->len >= 8 ? xw_setup_reply_size(buf_head(in), in->len, false) : -EAGAIN;
        if (need > 0 && in->len >= (size_t)need)
            return (int)need;
        if (need < 0 && need != -EAGAIN)
            return (int)need;
        uint64_t now = clock_ns();
        if (now >= deadline_ns)
            return -ETIMEDOUT;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, (int)((deadline_ns - now) / 1000000u) + 1) < 0 && errno != EINTR)
            return -errno;
        uint8_t *at = buf_append_space(in, 4096);
        if (!at)
            return -ENOMEM;
        ssize_t n = read(fd, at, 4096);
        in->len -= 4096 - (n > 0 ? (size_t)n : 0);
        if (n == 0)
            return -ECONNRESET;
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -errno;
    }
}

int observer_start(struct session *s, struct observer **out)
{
    struct observer *o = calloc(1, sizeof *o);
    if (!o)
        return -ENOMEM;
    o->s = s;
    idmap_init(&o->by_id, OBSERVER_MAX_WINDOWS);
    o->fd = s->cfg.connect_upstream ? s->cfg.connect_upstream(s->cfg.connect_ctx) : xdisplay_connect(&s->cfg.upstream);
    int rc = o->fd < 0 ? o->fd : 0;
    uint8_t cookie[256];
    size_t cookie_len = 0;
    if (!rc) {
        bool have = xauth_lookup(&s->cfg.upstream, cookie, &cookie_len, sizeof cookie) == 0;
        struct buf req = { 0 };
        xw_build_setup_request(&req, false, 11, 0, have ? XAUTH_COOKIE_NAME : "", have ? strlen(XAUTH_COOKIE_NAME) : 0,
                               cookie, have ? cookie_len : 0);
        rc = write_all(o->fd, buf_head(&req), req.len);
        buf_free(&req);
    }
    if (!rc) {
        int n = read_setup_reply(o->fd, &o->rx, clock_ns() + OBSERVER_CONNECT_TIMEOUT_MS * 1000000ull);
        rc = n < 0 ? n : buf_head(&o->rx)[0] == 1 ? 0 : -EACCES;
        if (!rc)
            buf_consume(&o->rx, (size_t)n);
    }
    if (!rc) {
        xstream_init(&o->xs, false);
        xstream_on_setup_request(&o->xs, false);
        o->xs.phase = XS_RUNNING;
        rc = net_set_nonblock(o->fd);
    }
    if (!rc)
        rc = loop_watch(s->loop, &o->w, o->fd, LOOP_READ, observer_event, o);
    if (rc) {
        log_warn("observer: cannot open its own X connection (%s): NoExpose is not answered at the app side",
                 strerror(-rc));
        observer_free(o);
        return rc;
    }
    log_debug("observer: connected to the X server");
    *out = o;
    return 0;
}

void observer_free(struct observer *o)
{
    if (!o)
        return;
    if (o->fd >= 0) {
        if (o->w.fd >= 0 && o->s)
            loop_unwatch(o->s->loop, &o->w);
        close(o->fd);
    }
    xstream_free(&o->xs);
    buf_free(&o->rx);
    buf_free(&o->tx);
    free(o->q);
    free(o->wins);
    idmap_free(&o->by_id);
    free(o);
}

static void flush_tx(struct observer *o)
{
    while (o->tx.len) {
        ssize_t n = write(o->fd, buf_head(&o->tx), o->tx.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            loop_want(o->s->loop, &o->w, LOOP_READ | LOOP_WRITE);
            return;
        }
        if (n <= 0) {
            o->broken = true;
            buf_clear(&o->tx);
            return;
        }
        buf_consume(&o->tx, (size_t)n);
    }
    loop_want(o->s->loop, &o->w, LOOP_READ);
}

/* Sends one small request (4-byte units given) and remembers what to do with its answer. */
static void send_request(struct observer *o, uint8_t major, const uint32_t *words, unsigned n_words, struct pending p)
{
    if (o->broken)
        return;
    if (o->q_len == o->q_cap) {
        uint32_t cap = o->q_cap ? o->q_cap * 2 : 32;
        struct pending *n = malloc(cap * sizeof *n);
        if (!n) {
            o->broken = true;
            return;
        }
        for (uint32_t i = 0; i < o->q_len; i++)
            n[i] = o->q[(o->q_head + i) % o->q_cap];
        free(o->q);
        o->q = n;
        o->q_head = 0;
        o->q_cap = cap;
    }
    uint8_t *r = buf_append_space(&o->tx, 4 + 4u * n_words);
    if (!r) {
        o->broken = true;
        return;
    }
    r[0] = major;
    r[1] = 0;
    st16(r + 2, (uint16_t)(1 + n_words), false);
    for (unsigned i = 0; i < n_words; i++)
        st32(r + 4 + 4 * i, words[i], false);
    struct xw_request rq = { .major = major, .size = 4 + 4u * n_words, .header_size = 4 };
    struct msg_class cls;
    xstream_on_request(&o->xs, r, &rq, &cls);
    p.seq = o->xs.seq_sent;
    o->q[(o->q_head + o->q_len++) % o->q_cap] = p;
    flush_tx(o);
}

/* ---------------------------------------------------------------- windows and facts */

static struct owin *win_find(struct observer *o, uint32_t id)
{
    struct idmap_entry *e = idmap_get(&o->by_id, id);
    return e ? &o->wins[e->a] : NULL;
}

static bool win_clean(const struct owin *w)
{
    return w->watching && w->visibility == 0 && !w->n_kids && !w->kids_overflow;
}

/* Tells the app side about w if what it knows has changed (or always, when forced). */
static void send_fact(struct observer *o, struct owin *w, bool gone, bool force)
{
    struct channel *ch = channel_find(o->s, w->channel);
    if (!ch || !ch->on_link || ch->x_closed || ch->peer_closed)
        return;
    bool clean = !gone && win_clean(w);
    if (!force && w->sent && w->sent_clean == clean && w->sent_w == w->width && w->sent_h == w->height &&
        w->sent_as_of == ch->struct_confirmed)
        return;
    if (!w->sent && !clean && !force)
        return; /* the app side assumes nothing about windows it has not heard of */
    struct frame_fact_window fact = { w->id, ch->struct_confirmed, w->width, w->height, clean };
    log_debug("observer: window 0x%x of channel %u: %s, %ux%u, as of request %u", w->id, ch->id,
              clean ? "wholly visible" : "not wholly visible", w->width, w->height, ch->struct_confirmed);
    frame_fact_window_encode(&o->s->link_tx, ch->id, &fact);
    o->s->stats.link_frames_out++;
    w->sent = true;
    w->sent_clean = clean;
    w->sent_w = w->width;
    w->sent_h = w->height;
    w->sent_as_of = ch->struct_confirmed;
}

static void win_remove(struct observer *o, struct owin *w)
{
    uint32_t i = (uint32_t)(w - o->wins);
    idmap_del(&o->by_id, w->id);
    if (i != o->n_wins - 1) {
        o->wins[i] = o->wins[o->n_wins - 1];
        idmap_get(&o->by_id, o->wins[i].id)->a = i;
    }
    o->n_wins--;
}

static void watch_done(struct observer *o, uint32_t channel_id)
{
    struct channel *ch = channel_find(o->s, channel_id);
    if (ch && ch->watches_pending && !--ch->watches_pending)
        channel_resume_requests(ch);
}

static void send_watch(struct observer *o, struct owin *w)
{
    uint32_t select[3] = { w->id, 0x800 /* CWEventMask */, WATCH_MASK };
    send_request(o, OP_CHANGE_WINDOW_ATTRIBUTES, select, 3, (struct pending){ .kind = P_SELECT, .window = w->id });
    send_request(o, OP_GET_WINDOW_ATTRIBUTES, &w->id, 1, (struct pending){ .kind = P_ATTRS, .window = w->id });
    send_request(o, OP_GET_GEOMETRY, &w->id, 1, (struct pending){ .kind = P_GEOMETRY, .window = w->id });
}

void observer_on_request(struct observer *o, struct channel *ch, const struct msg_class *cls, const uint8_t *b,
                         uint32_t len, uint32_t seq, bool msb)
{
    if (expose_is_structural(cls))
        ch->struct_seq = seq;
    /* CreateWindow: wid, parent, x, y, width, height, border, class, visual, ... */
    if (o->broken || cls->ext || cls->major != XOP_CREATE_WINDOW || len < 24 || ld16(b + 18, msb) == 2 /* InputOnly */ ||
        o->n_wins >= OBSERVER_MAX_WINDOWS)
        return;
    uint32_t id = ld32(b, msb);
    log_debug("observer: channel %u creates window 0x%x (class %u)", ch->id, id, ld16(b + 18, msb));
    if (win_find(o, id))
        return;
    struct owin *n = realloc(o->wins, (o->n_wins + 1) * sizeof *n);
    struct idmap_entry *e = n ? (o->wins = n, idmap_put(&o->by_id, id)) : NULL;
    if (!e)
        return;
    e->a = o->n_wins;
    struct owin *w = &o->wins[o->n_wins++];
    *w = (struct owin){ .id = id, .channel = ch->id, .visibility = -1, .unsent = true };
    ch->watches_pending++;
}

void observer_on_x_drained(struct observer *o, struct channel *ch)
{
    /* The client's CreateWindow requests are written; the server may still be reading
     * them, hence the retries on BadWindow. */
    for (uint32_t i = 0; i < o->n_wins; i++)
        if (o->wins[i].unsent && o->wins[i].channel == ch->id) {
            o->wins[i].unsent = false;
            send_watch(o, &o->wins[i]);
        }
}

bool observer_must_hold(const struct observer *o, const struct channel *ch, uint8_t major)
{
    /* Until the watch is in place, a map could make the window visible unseen. */
    return ch->watches_pending && (major == OP_REPARENT_WINDOW || major == OP_MAP_WINDOW || major == OP_MAP_SUBWINDOWS);
}

void observer_on_progress(struct observer *o, struct channel *ch)
{
    if (o->broken || ch->struct_confirmed == ch->struct_seq || ch->sync_tag == ch->struct_seq ||
        (int32_t)(ch->xs.seq_done - ch->struct_seq) < 0)
        return;
    /* The server has carried out ch's latest window change; the events it caused for us
     * are queued before the answer to this round trip. */
    ch->sync_tag = ch->struct_seq;
    send_request(o, OP_GET_INPUT_FOCUS, NULL, 0,
                 (struct pending){ .kind = P_SYNC, .channel = ch->id, .tag = ch->struct_seq });
}

void observer_forget_channel(struct observer *o, uint32_t channel_id)
{
    for (uint32_t i = 0; i < o->n_wins;)
        if (o->wins[i].channel == channel_id)
            win_remove(o, &o->wins[i]);
        else
            i++;
}

/* ---------------------------------------------------------------- the server's messages */

static void kid_set(struct owin *w, uint32_t kid, bool mapped)
{
    for (uint8_t i = 0; i < w->n_kids; i++)
        if (w->kids[i] == kid) {
            if (!mapped)
                w->kids[i] = w->kids[--w->n_kids];
            return;
        }
    if (!mapped)
        return;
    if (w->n_kids == OBSERVER_MAX_KIDS)
        w->kids_overflow = true;
    else
        w->kids[w->n_kids++] = kid;
}

static void on_event(struct observer *o, const uint8_t *ev)
{
    uint8_t code = ev[0] & 0x7f;
    uint32_t event = ld32(ev + 4, false), window = ld32(ev + 8, false);
    struct owin *w = win_find(o, event); /* the window we selected on: Visibility's own, or the parent's */
    if (!w)
        return;
    switch (code) {
    case EV_VISIBILITY:
        w->visibility = (int8_t)ev[8];
        break;
    case EV_CONFIGURE:
        if (window == w->id) {
            w->width = ld16(ev + 20, false);
            w->height = ld16(ev + 22, false);
        }
        break;
    case EV_MAP:
        if (window != w->id)
            kid_set(w, window, true);
        break;
    case EV_UNMAP:
        if (window == w->id)
            w->visibility = -1;
        else
            kid_set(w, window, false);
        break;
    case EV_REPARENT:
        if (window == w->id)
            w->visibility = -1;
        else if (ld32(ev + 12, false) != w->id)
            kid_set(w, window, false);
        break;
    case EV_DESTROY:
        if (window == w->id) {
            send_fact(o, w, true, false);
            win_remove(o, w);
            return;
        }
        kid_set(w, window, false);
        break;
    default:
        return;
    }
    send_fact(o, w, false, false);
}

static void on_answer(struct observer *o, const struct pending *p, const uint8_t *msg, bool error)
{
    struct owin *w = p->kind == P_SYNC ? NULL : win_find(o, p->window);
    switch (p->kind) {
    case P_SELECT:
        break;
    case P_ATTRS:
        if (w && !error && msg[26] != 0)
            w->visibility = -1; /* mapped before we looked: its visibility is unknown until it changes */
        break;
    case P_GEOMETRY:
        if (!w)
            break;
        if (error) {
            log_debug("observer: window 0x%x not there yet (try %u)", w->id, w->tries + 1);
            if (++w->tries < OBSERVER_WATCH_TRIES) {
                send_watch(o, w); /* the client's CreateWindow is still on its way */
                break;
            }
            uint32_t channel = w->channel;
            win_remove(o, w);
            watch_done(o, channel);
            break;
        }
        w->width = ld16(msg + 16, false);
        w->height = ld16(msg + 18, false);
        w->watching = true;
        send_fact(o, w, false, false);
        watch_done(o, w->channel); /* may create windows: w is not to be used after */
        break;
    case P_SYNC: {
        struct channel *ch = channel_find(o->s, p->channel);
        if (!ch)
            break;
        ch->struct_confirmed = p->tag;
        if (ch->sync_tag == p->tag)
            ch->sync_tag = 0;
        for (uint32_t i = 0; i < o->n_wins; i++)
            if (o->wins[i].channel == ch->id && o->wins[i].watching)
                send_fact(o, &o->wins[i], false, o->wins[i].sent);
        observer_on_progress(o, ch); /* a newer change may be waiting */
        break;
    }
    }
}

static void observer_read(struct observer *o)
{
    uint8_t *at = buf_append_space(&o->rx, 16384);
    if (!at) {
        o->broken = true;
        return;
    }
    ssize_t n = read(o->fd, at, 16384);
    o->rx.len -= 16384 - (n > 0 ? (size_t)n : 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        log_warn("observer: the X server closed its connection: NoExpose is no longer answered at the app side");
        o->broken = true;
        loop_unwatch(o->s->loop, &o->w);
        return;
    }
    while (o->rx.len) {
        struct xw_server_msg m;
        long size = xstream_next_server_msg(&o->xs, buf_head(&o->rx), o->rx.len, &m);
        if (size == -EAGAIN)
            break;
        struct buf scratch = { 0 };
        struct msg_class cls;
        if (size < 0 || xstream_on_server_msg(&o->xs, buf_head(&o->rx), &m, &scratch, &cls) < 0) {
            buf_free(&scratch);
            log_warn("observer: unreadable message from the X server: giving up watching windows");
            o->broken = true;
            loop_unwatch(o->s->loop, &o->w);
            return;
        }
        buf_free(&scratch);
        const uint8_t *msg = buf_head(&o->rx);
        if (m.kind == XW_KIND_EVENT) {
            on_event(o, msg);
        } else {
            /* Requests before this one without an answer of their own are done. */
            while (o->q_len && o->q[o->q_head].seq != o->xs.seq_done &&
                   (int32_t)(o->q[o->q_head].seq - o->xs.seq_done) < 0) {
                o->q_head = (o->q_head + 1) % o->q_cap;
                o->q_len--;
            }
            if (o->q_len && o->q[o->q_head].seq == o->xs.seq_done) {
                struct pending p = o->q[o->q_head];
                o->q_head = (o->q_head + 1) % o->q_cap;
                o->q_len--;
                on_answer(o, &p, msg, m.kind == XW_KIND_ERROR);
            }
        }
        buf_consume(&o->rx, (size_t)size);
    }
}

static void observer_event(struct watch *w, unsigned events)
{
    struct observer *o = w->data;
    if (events & LOOP_WRITE)
        flush_tx(o);
    if ((events & (LOOP_READ | LOOP_HUP)) && !o->broken)
        observer_read(o);
}
