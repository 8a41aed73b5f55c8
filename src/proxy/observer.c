/* observer.c -- the display side's own X connection: connecting (bounded, at the session's
 * start), the ring of replies it awaits, reading and dispatching the server's messages to
 * the features (observer_probe.c: facts probed at start and kept current; observer_windows.c:
 * watches of the clients' windows), and requests and questions of others (notice.h,
 * learnt.h). See observer.h for what it is for; observer_private.h for the shared state.
 * Workload: a handful of windows per client, a few events per window change, one round
 * trip per confirmation; all of it on the display's machine, next to the server. */
#include "proxy/observer_private.h"

#include <poll.h>

static void observer_event(struct watch *w, unsigned events);
static void ask_answer(struct observer *o, const struct pending *p, const uint8_t *msg, size_t size, bool error);
static bool ask_more(const struct pending *p, const uint8_t *msg, size_t size, bool error);

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

int observer_start(struct session *s, const struct observer_listener *listeners, size_t n_listeners,
                   struct observer **out)
{
    if (n_listeners > OBSERVER_MAX_LISTENERS)
        return -EINVAL;
    struct observer *o = calloc(1, sizeof *o);
    if (!o)
        return -ENOMEM;
    memcpy(o->listeners, listeners, n_listeners * sizeof *listeners);
    o->n_listeners = n_listeners;
    o->s = s;
    o->root_redirect = OWNWIN_REDIRECT_UNKNOWN;
    idmap_init(&o->by_id, OBSERVER_MAX_WINDOWS);
    o->fd = s->cfg.connect_upstream ? s->cfg.connect_upstream(s->cfg.connect_ctx) : xdisplay_connect(&s->cfg.upstream);
    int rc = o->fd < 0 ? o->fd : 0;
    if (!rc) {
        struct buf req = { 0 };
        rc = xdisplay_setup_request(&s->cfg.upstream, &req, false, 11, 0);
        rc = rc < 0 ? rc : write_all(o->fd, buf_head(&req), req.len);
        buf_free(&req);
    }
    if (!rc) {
        int n = read_setup_reply(o->fd, &o->rx, clock_ns() + OBSERVER_CONNECT_TIMEOUT_MS * 1000000ull);
        /* Success, and at least its fixed part (the resource-id base among it). */
        struct xp_setup setup;
        rc = n < 0 ? n : buf_head(&o->rx)[XP_SETUP_STATUS_AT] != 1 ? -EACCES
           : !xp_setup_view(buf_head(&o->rx), (size_t)n, false, &setup) ? -EPROTO : 0;
        if (!rc) {
            /* Screen 0 follows the vendor string and the pixmap formats. */
            o->min_keycode = setup.min_keycode;
            o->max_keycode = setup.max_keycode;
            size_t skip = setup.vendor_len + xw_pad4(setup.vendor_len) + (size_t)XP_FORMAT_SIZE * setup.pixmap_formats_len;
            struct xp_screen screen;
            if (skip <= setup.rest_len && xp_screen_view(setup.rest + skip, setup.rest_len - skip, false, &screen)) {
                o->root = screen.root;
                o->white = screen.white_pixel;
                o->black = screen.black_pixel;
                o->width = screen.width_in_pixels;
                o->height = screen.height_in_pixels;
            } else {
                o->root = o->white = o->black = o->width = o->height = 0;
            }
            if (s->predict) /* the same server as the clients': its TrueColor maps, checked by the probes */
                predict_learn_setup(s->predict, buf_head(&o->rx), (size_t)n, false);
            o->probe.font_base = setup.resource_id_base;
            OBS_TELL(o, on_setup, o, buf_head(&o->rx), (size_t)n);
            buf_consume(&o->rx, (size_t)n);
        }
    }
    if (!rc) {
        xstream_init(&o->xs, false);
        xstream_on_setup_request(&o->xs, false);
        o->xs.phase = XS_RUNNING;
        rc = net_set_nonblock(o->fd);
    }
    if (!rc)
        rc = loop_watch(s->loop, &o->w, o->fd, LOOP_READ, observer_event, o);
    if (!rc && s->predict)
        obs_probe_start(o);
    if (!rc)
        obs_watch_root(o);
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
    if (o->props_watched && o->s->predict) {
        /* Not watched any more: the app side must stop answering from them. */
        struct buf fact = { 0 };
        predict_fact_property(&fact, o->root, 0, PROP_UNKNOWN, 0, 0, NULL, 0);
        obs_send_session_fact(o, &fact);
        buf_free(&fact);
    }
    if (o->s && o->s->predict && predict_keyboard_known(o->s->predict)) {
        struct buf fact = { 0 }; /* MappingNotify is no longer seen */
        predict_fact_keyboard(&fact, false, 0, 0, 0, NULL, 0, NULL);
        obs_send_session_fact(o, &fact);
        buf_free(&fact);
    }
    if (o->fd >= 0) {
        if (o->w.fd >= 0 && o->s)
            loop_unwatch(o->s->loop, &o->w);
        close(o->fd);
    }
    xstream_free(&o->xs);
    buf_free(&o->rx);
    buf_free(&o->tx);
    free(o->q);
    free(o->kb_keymap);
    buf_free(&o->probe.names);
    buf_free(&o->probe.atoms);
    buf_free(&o->census.hashes);
    free(o->census.unsure);
    buf_free(&o->probe.color_reqs);
    buf_free(&o->probe.colors);
    buf_free(&o->xkb.key);
    for (size_t k = 0; k < PROBE_SLOTS; k++)
        buf_free(&o->probe.keys[k]);
    if (o->census.hooked)
        loop_remove_before_sleep(o->s->loop, obs_census_hook, o);
    free(o->held);
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
void obs_send_request_minor(struct observer *o, uint8_t major, uint8_t minor, const uint32_t *words,
                               unsigned n_words, struct pending p)
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
    r[1] = minor;
    xp_request_set_length(r, 1 + n_words, false, false);
    for (unsigned i = 0; i < n_words; i++)
        xp_card32_put(r + XP_REQUEST_HEADER_SIZE, 4u * n_words, i, words[i], false);
    struct xw_request rq = { .major = major, .data = minor, .size = 4 + 4u * n_words, .header_size = 4 };
    struct msg_class cls;
    xstream_on_request(&o->xs, r, &rq, &cls);
    p.seq = o->xs.seq_sent;
    o->q[(o->q_head + o->q_len++) % o->q_cap] = p;
    /* Written when the loop next sees the socket writable: requests queued in one turn
     * (the probes at session start, a window's watch) go out in one write. */
    loop_want(o->s->loop, &o->w, LOOP_READ | LOOP_WRITE);
}

/* Sends one small request (4-byte units given) and remembers what to do with its answer. */
void obs_send_request(struct observer *o, uint8_t major, const uint32_t *words, unsigned n_words, struct pending p)
{
    obs_send_request_minor(o, major, 0, words, n_words, p);
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

static void on_event(struct observer *o, const uint8_t *ev, size_t size)
{
    struct xp_server_header h;
    if (!xp_server_header_view(ev, size, false, &h))
        return;
    uint8_t code = h.code & 0x7f;
    OBS_TELL(o, on_event, o, ev, size);
    struct owin *w; /* the window we selected on: Visibility's own, or the parent's */
    switch (code) {
    case XP_EV_PROPERTY_NOTIFY: {
        struct xp_property_notify_event v;
        if (!xp_property_notify_event_view(ev, size, false, &v))
            return;
        if (v.window == o->root) {
            if (!o->probe.props_probing)
                obs_property_changed(o, v.atom);
            else if (o->n_changed < PROBE_MAX_CHANGED) /* told after the values, which may predate it */
                o->changed[o->n_changed++] = v.atom;
            else
                o->changed_overflow = true;
        } else if ((w = obs_win_find(o, v.window))) {
            obs_own_event(o, w, code, v.atom);
        }
        return;
    }
    case XP_EV_MAPPING_NOTIFY: {
        struct xp_mapping_notify_event v;
        if (xp_mapping_notify_event_view(ev, size, false, &v) && v.request != XP_MAPPING_POINTER)
            obs_keyboard_changed(o);
        return;
    }
    case XP_EV_VISIBILITY_NOTIFY: {
        struct xp_visibility_notify_event v;
        if (!xp_visibility_notify_event_view(ev, size, false, &v) || !(w = obs_win_find(o, v.window)))
            return;
        w->visibility = (int8_t)v.state;
        break;
    }
    case XP_EV_CONFIGURE_NOTIFY: {
        struct xp_configure_notify_event v;
        if (!xp_configure_notify_event_view(ev, size, false, &v) || !(w = obs_win_find(o, v.event)))
            return;
        obs_own_event(o, w, code, v.window);
        if (v.window == w->id) {
            w->width = v.width;
            w->height = v.height;
        }
        break;
    }
    case XP_EV_MAP_NOTIFY: {
        struct xp_map_notify_event v;
        if (!xp_map_notify_event_view(ev, size, false, &v) || !(w = obs_win_find(o, v.event)))
            return;
        obs_own_event(o, w, code, v.window);
        if (v.window != w->id)
            kid_set(w, v.window, true);
        break;
    }
    case XP_EV_UNMAP_NOTIFY: {
        struct xp_unmap_notify_event v;
        if (!xp_unmap_notify_event_view(ev, size, false, &v) || !(w = obs_win_find(o, v.event)))
            return;
        obs_own_event(o, w, code, v.window);
        if (v.window == w->id)
            w->visibility = -1;
        else
            kid_set(w, v.window, false);
        break;
    }
    case XP_EV_REPARENT_NOTIFY: {
        struct xp_reparent_notify_event v;
        if (!xp_reparent_notify_event_view(ev, size, false, &v) || !(w = obs_win_find(o, v.event)))
            return;
        obs_own_event(o, w, code, v.window);
        if (v.window == w->id)
            w->visibility = -1;
        else if (v.parent != w->id)
            kid_set(w, v.window, false);
        break;
    }
    case XP_EV_DESTROY_NOTIFY: {
        struct xp_destroy_notify_event v;
        if (!xp_destroy_notify_event_view(ev, size, false, &v) || !(w = obs_win_find(o, v.event)))
            return;
        obs_own_event(o, w, code, v.window); /* before w is removed */
        if (v.window == w->id) {
            obs_send_fact(o, w, true, false);
            obs_win_remove(o, w);
            return;
        }
        kid_set(w, v.window, false);
        break;
    }
    case XP_EV_GRAVITY_NOTIFY: {
        struct xp_gravity_notify_event v;
        if (xp_gravity_notify_event_view(ev, size, false, &v) && (w = obs_win_find(o, v.event)))
            obs_own_event(o, w, code, v.window);
        return;
    }
    case XP_EV_CREATE_NOTIFY: { /* a child made in a watched window */
        struct xp_create_notify_event v;
        if (xp_create_notify_event_view(ev, size, false, &v) && (w = obs_win_find(o, v.parent)))
            obs_own_event(o, w, code, v.window);
        return;
    }
    default: {
        uint8_t shape_major, shape_event; /* in a block: a declaration may not follow a label in C11 (clang) */
        if (o->s->predict && predict_extension(o->s->predict, "SHAPE", &shape_major, &shape_event) && shape_event &&
            code == shape_event) { /* ShapeNotify: which points the window holds */
            struct xp_shape_notify_event v;
            struct channel *ch;
            if (xp_shape_notify_event_view(ev, size, false, &v) && (w = obs_win_find(o, v.affected_window)) &&
                (ch = channel_find(o->s, w->channel)))
                obs_own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_GEOMETRY), false);
            return;
        }
        if (o->xkb.event && code == o->xkb.event && h.data /* xkbType */ <= XP_XKB_EV_MAP_NOTIFY)
            obs_keyboard_changed(o); /* NewKeyboardNotify, MapNotify */
        return;
    }
    }
    obs_send_fact(o, w, false, false);
}

static void on_answer(struct observer *o, const struct pending *p, const uint8_t *msg, size_t size, bool error)
{
    struct owin *w = p->kind == P_SYNC || p->kind == P_KEYMAP || p->kind == P_MODMAP || p->kind == P_PROBE ||
                             p->kind >= P_ROOT_ATTRS ? NULL : obs_win_find(o, p->window);
    switch (p->kind) {
    case P_ASK:
        ask_answer(o, p, msg, size, error);
        break;
    case P_ROOT_ATTRS:
        obs_on_root_attributes(o, msg, size, error);
        break;
    case P_SPARE_ROOT_ATTRS: { /* GetWindowAttributes: its all-event-masks */
        struct xp_get_window_attributes_reply v;
        o->root_masks = !error && xp_get_window_attributes_reply_view(msg, size, false, &v) ? v.all_event_masks : 0;
        break;
    }
    case P_SPARE_ROOT_GEOMETRY: { /* GetGeometry: the width and height */
        struct xp_get_geometry_reply v;
        bool ok = !error && xp_get_geometry_reply_view(msg, size, false, &v);
        OBS_TELL(o, on_root, p->window, ok ? o->root_masks : 0, ok ? v.width : 0, ok ? v.height : 0);
        break;
    }
    case P_PROBE:
        obs_probe_answer(o, p, msg, size, error);
        break;
    case P_KEYMAP:
        free(o->kb_keymap);
        o->kb_keymap = NULL;
        if (!error && (o->kb_keymap = malloc(size))) {
            memcpy(o->kb_keymap, msg, size);
            o->kb_keymap_size = (uint32_t)size;
        }
        break;
    case P_MODMAP:
        o->kb_fetching = false;
        if (!error)
            obs_send_keyboard(o, o->kb_keymap, o->kb_keymap_size, msg, (uint32_t)size);
        free(o->kb_keymap);
        o->kb_keymap = NULL;
        if (o->probe.keyboard) {
            o->probe.keyboard = false;
            if (!--o->probe.outstanding)
                obs_probe_finish(o);
        }
        break;
    case P_SELECT:
        break;
    case P_ATTRS: {
        struct xp_get_window_attributes_reply v;
        if (w && !error && xp_get_window_attributes_reply_view(msg, size, false, &v) && v.map_state != XP_MAP_STATE_UNMAPPED)
            w->visibility = -1; /* mapped before we looked: its visibility is unknown until it changes */
        break;
    }
    case P_GEOMETRY: {
        struct xp_get_geometry_reply v;
        if (!w)
            break;
        if (error || !xp_get_geometry_reply_view(msg, size, false, &v)) {
            log_debug("observer: window 0x%x not there yet (try %u)", w->id, w->tries + 1);
            if (++w->tries < OBSERVER_WATCH_TRIES) {
                obs_send_watch(o, w); /* the client's CreateWindow is still on its way */
                break;
            }
            uint32_t channel = w->channel, id = w->id;
            obs_win_remove(o, w);
            obs_own_unwatchable(o, channel_find(o->s, channel), id);
            obs_watch_done(o, channel);
            break;
        }
        {
            /* The client's changes wait for the watch: the server must agree with the model. */
            struct channel *ch = channel_find(o->s, w->channel);
            if (ch && ownwin_geometry_differs(&ch->own, w->id, v.x, v.y, v.width, v.height, v.border_width))
                obs_own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_GEOMETRY), false);
        }
        w->width = v.width;
        w->height = v.height;
        w->watching = true;
        obs_send_fact(o, w, false, false);
        obs_watch_done(o, w->channel); /* may create windows: w is not to be used after */
        break;
    }
    case P_SYNC: {
        struct channel *ch = channel_find(o->s, p->channel);
        if (!ch)
            break;
        ch->struct_confirmed = p->tag;
        if (ch->sync_tag == p->tag)
            ch->sync_tag = 0;
        for (uint32_t i = 0; i < o->n_wins; i++)
            if (o->wins[i].channel == ch->id && o->wins[i].watching)
                obs_send_fact(o, &o->wins[i], false, o->wins[i].sent);
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
            on_event(o, msg, (size_t)size);
        } else {
            /* Requests before this one without an answer of their own are done. */
            while (o->q_len && o->q[o->q_head].seq != o->xs.seq_done &&
                   (int32_t)(o->q[o->q_head].seq - o->xs.seq_done) < 0) {
                o->q_head = (o->q_head + 1) % o->q_cap;
                o->q_len--;
            }
            if (o->q_len && o->q[o->q_head].seq == o->xs.seq_done) {
                struct pending p = o->q[o->q_head];
                if (!ask_more(&p, msg, (size_t)size, m.kind == XW_KIND_ERROR)) {
                    o->q_head = (o->q_head + 1) % o->q_cap;
                    o->q_len--;
                }
                on_answer(o, &p, msg, (size_t)size, m.kind == XW_KIND_ERROR);
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
    if (o->broken) {
        obs_probe_finish(o); /* no more answers: the clients held back go on without them */
        obs_own_unwatch_all(o);
        OBS_TELL(o, on_broken, o);
    }
}

/* ---------------------------------------------------------------- requests of others (notice.h) */

void observer_send_quiet(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len)
{
    obs_send_bytes(o, major, minor, body, body_len, (struct pending){ .kind = P_SELECT });
}

bool observer_screen(const struct observer *o, uint32_t *root, uint32_t *id_base, uint32_t *white, uint32_t *black,
                     uint16_t *height)
{
    if (o->broken || !o->root || !o->probe.font_base)
        return false;
    *height = o->height;
    *root = o->root;
    *id_base = o->probe.font_base;
    *white = o->white;
    *black = o->black;
    return true;
}

/* ---------------------------------------------------------------- questions of others (learnt.h) */

uint32_t observer_font_id(const struct observer *o)
{
    /* above the start probes' fonts (font_base + 1 + k); learnt.c's come from the top */
    return o->broken || !o->probe.font_base ? 0 : o->probe.font_base + 0x100;
}

int observer_ask(struct observer *o, const uint8_t *req, uint32_t size, observer_answer_fn fn, void *ctx, uint32_t tag)
{
    uint32_t words[1024];
    struct xp_request_header h;
    if (o->broken)
        return -EPIPE;
    if (!xp_request_header_view(req, size, false, &h) || size % 4 || size > sizeof words + 4 || h.length * 4u != size)
        return -EINVAL;
    for (uint32_t i = 0; i < size / 4 - 1; i++)
        xp_card32_at(req + XP_REQUEST_HEADER_SIZE, size - XP_REQUEST_HEADER_SIZE, i, false, &words[i]);
    bool counted = fn && o->probe.active;
    if (counted)
        o->probe.outstanding++;
    obs_send_request_minor(o, h.major, h.data, words, size / 4 - 1,
                       (struct pending){ .kind = P_ASK, .fn = fn, .ctx = ctx, .tag = tag,
                                         .multi = h.major == XP_OP_LIST_FONTS_WITH_INFO, .counted = counted });
    return 0;
}

/* A ListFontsWithInfo's replies before its last (the one with an empty name) keep it pending. */
static bool ask_more(const struct pending *p, const uint8_t *msg, size_t size, bool error)
{
    struct xp_server_header h; /* a ListFontsWithInfo reply's data byte: its name's length */
    return p->kind == P_ASK && p->multi && !error && xp_server_header_view(msg, size, false, &h) && h.data != 0;
}

static void ask_answer(struct observer *o, const struct pending *p, const uint8_t *msg, size_t size, bool error)
{
    struct buf fact = { 0 };
    if (p->fn)
        p->fn(p->ctx, p->tag, msg, (uint32_t)size, error, &fact);
    if (o->s->predict)
        obs_send_session_fact(o, &fact);
    buf_free(&fact);
    if (p->counted && !ask_more(p, msg, size, error) && !--o->probe.outstanding)
        obs_probe_finish(o);
}
