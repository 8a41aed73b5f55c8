/* observer_windows.c -- the observer's watches of the windows clients create: visibility,
 * size and mapped children, so that the app side can answer a CopyArea's NoExpose without
 * crossing the link (expose.h); the facts about the clients' own windows (ownwin.h); and
 * the confirmations that a client's window changes have reached the server. */
#include "proxy/observer_private.h"

/* ---------------------------------------------------------------- windows and facts */

struct owin *obs_win_find(struct observer *o, uint32_t id)
{
    struct idmap_entry *e = idmap_get(&o->by_id, id);
    return e ? &o->wins[e->a] : NULL;
}

static bool win_clean(const struct owin *w)
{
    return w->watching && !w->early && w->visibility == 0 && !w->n_kids && !w->kids_overflow;
}

/* ---------------------------------------------------------------- the clients' own windows (ownwin.h) */

/* A FACT about a client's own windows, on its channel. */
static void send_own_fact(struct observer *o, struct channel *ch, const struct buf *payload)
{
    if (!ch || !ch->on_link || ch->x_closed || ch->peer_closed || !payload->len)
        return;
    (void)!link_send(o->s, FRAME_FACT, ch->id, buf_head(payload), payload->len); /* on failure the session ends */
}

/* Tells ch what the observer selects on its windows and whether the root is redirected. */
static void send_watch_fact(struct observer *o, struct channel *ch)
{
    uint32_t mask = o->broken ? 0 : WATCH_MASK;
    struct buf fact = { 0 };
    ownwin_fact_watch(&fact, mask, o->root, o->root_redirect);
    ch->own.observer_mask = mask; /* this side's counting follows what it said */
    ch->own.watched_root = o->root;
    ch->own.root_redirect = o->root_redirect;
    send_own_fact(o, ch, &fact);
    buf_free(&fact);
}

void observer_on_channel_open(struct observer *o, struct channel *ch)
{
    send_watch_fact(o, ch);
}

/* The root's event masks say whether a window manager holds SubstructureRedirect: asked when
 * the observer opens and again with each new top-level's watch. */
void obs_watch_root(struct observer *o)
{
    if (o->root)
        obs_send_request(o, XP_OP_GET_WINDOW_ATTRIBUTES, &o->root, 1, (struct pending){ .kind = P_ROOT_ATTRS });
}

void obs_on_root_attributes(struct observer *o, const uint8_t *msg, size_t size, bool error)
{
    struct xp_get_window_attributes_reply v;
    uint8_t now = error || !xp_get_window_attributes_reply_view(msg, size, false, &v) ? OWNWIN_REDIRECT_UNKNOWN
                : (v.all_event_masks & SUBSTRUCTURE_REDIRECT_MASK)                    ? OWNWIN_REDIRECT_YES
                                                                                      : OWNWIN_REDIRECT_NO;
    if (now == o->root_redirect)
        return;
    log_debug("observer: the root's children are %s", now == OWNWIN_REDIRECT_NO ? "not redirected (no window manager)"
                                                     : "redirected, or may be (a window manager)");
    o->root_redirect = now;
    for (struct channel *ch = o->s->channels; ch; ch = ch->next)
        if (!ch->dead)
            send_watch_fact(o, ch);
}

/* The observer stopped watching: the app side stops answering about any client's windows. */
void obs_own_unwatch_all(struct observer *o)
{
    if (o->own_unwatched)
        return;
    o->own_unwatched = true;
    for (struct channel *ch = o->s->channels; ch; ch = ch->next)
        if (!ch->dead) {
            send_watch_fact(o, ch);
            if (ch->watches_pending) { /* no watch will be in place: what waits for one goes on */
                ch->watches_pending = 0;
                OBS_TELL(o, on_channel_unblocked, ch);
            }
        }
}

/* Another client changed what of a client's window (OWNWIN_GEOMETRY...), or its properties. */
void obs_own_foreign(struct observer *o, struct channel *ch, uint32_t window, uint8_t what, bool props)
{
    struct buf fact = { 0 };
    props |= (what & OWNWIN_PROPERTIES) != 0;
    what &= OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES | OWNWIN_CHILDREN;
    if (what) {
        ownwin_fact_window(&fact, window, what);
        send_own_fact(o, ch, &fact);
    }
    if (props) {
        buf_clear(&fact);
        ownwin_fact_property(&fact, window, 0);
        send_own_fact(o, ch, &fact);
    }
    buf_free(&fact);
    if (what || props)
        log_debug("observer: window 0x%x of channel %u changed by another client:%s%s%s%s", window, ch->id,
                  what & OWNWIN_GEOMETRY ? " geometry" : "", what & OWNWIN_ATTRIBUTES ? " attributes" : "",
                  what & OWNWIN_CHILDREN ? " children" : "", props ? " properties" : "");
}

/* A window of ch the observer cannot watch: nothing about it is answered at the app side. */
void obs_own_unwatchable(struct observer *o, struct channel *ch, uint32_t window)
{
    if (ch)
        obs_own_foreign(o, ch, window,
                    ownwin_event_foreign(&ch->own, window, OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES | OWNWIN_PROPERTIES), false);
}

/* The observer's events on a client's window that may come from another client. */
void obs_own_event(struct observer *o, struct owin *w, uint8_t code, uint32_t window)
{
    struct channel *ch = channel_find(o->s, w->channel);
    /* A child made in it that is not the client's (another client's window, or one the model
     * could not keep), or a child reparented into it or out of it: its children changed. */
    if (ch && window != w->id &&
        ((code == XP_EV_CREATE_NOTIFY && !ownwin_known(&ch->own, window)) || code == XP_EV_REPARENT_NOTIFY))
        obs_own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_CHILDREN), false);
    if (!ch || (code != XP_EV_PROPERTY_NOTIFY && window != w->id))
        return; /* about a child: its own watch reports it */
    switch (code) {
    case XP_EV_PROPERTY_NOTIFY: {
        uint32_t atom = window;
        if (ownwin_event_property(&ch->own, w->id, &atom)) {
            struct buf fact = { 0 };
            ownwin_fact_property(&fact, w->id, atom);
            send_own_fact(o, ch, &fact);
            buf_free(&fact);
            log_debug("observer: property %u of window 0x%x (channel %u) changed by another client", atom, w->id, ch->id);
        }
        break;
    }
    case XP_EV_CONFIGURE_NOTIFY:
        if (ownwin_event_configure(&ch->own, w->id))
            obs_own_foreign(o, ch, w->id, OWNWIN_GEOMETRY, false);
        break;
    case XP_EV_MAP_NOTIFY:
    case XP_EV_UNMAP_NOTIFY:
        if (ownwin_event_map(&ch->own, w->id))
            obs_own_foreign(o, ch, w->id, OWNWIN_ATTRIBUTES, false);
        break;
    case XP_EV_REPARENT_NOTIFY:
        obs_own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES), false);
        break;
    case XP_EV_GRAVITY_NOTIFY: /* the client's own resizes left such children unknown already */
        obs_own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_GEOMETRY), false);
        break;
    case XP_EV_DESTROY_NOTIFY: /* the client's own DestroyWindow has left the model already */
        obs_own_unwatchable(o, ch, w->id);
        break;
    case XP_EV_CREATE_NOTIFY: /* its child's (above) */
        break;
    default:
        break;
    }
}

/* Tells the app side about w if what it knows has changed (or always, when forced). */
void obs_send_fact(struct observer *o, struct owin *w, bool gone, bool force)
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
    struct buf frame = { 0 };
    int rc = frame_fact_window_encode(&frame, ch->id, &fact);
    rc = rc < 0 ? rc : link_send_frames(o->s, &frame);
    buf_free(&frame);
    if (rc < 0)
        return;
    w->sent = true;
    w->sent_clean = clean;
    w->sent_w = w->width;
    w->sent_h = w->height;
    w->sent_as_of = ch->struct_confirmed;
}

void obs_win_remove(struct observer *o, struct owin *w)
{
    uint32_t i = (uint32_t)(w - o->wins);
    idmap_del(&o->by_id, w->id);
    if (i != o->n_wins - 1) {
        o->wins[i] = o->wins[o->n_wins - 1];
        idmap_get(&o->by_id, o->wins[i].id)->a = i;
    }
    o->n_wins--;
}

void obs_watch_done(struct observer *o, uint32_t channel_id)
{
    struct channel *ch = channel_find(o->s, channel_id);
    if (ch && ch->watches_pending && !--ch->watches_pending)
        OBS_TELL(o, on_channel_unblocked, ch);
}

void obs_send_watch(struct observer *o, struct owin *w)
{
    if (w->toplevel)
        obs_watch_root(o); /* a window manager may have come since */
    uint32_t select[3] = { w->id, XP_CW_EVENT_MASK, WATCH_MASK };
    obs_send_request(o, XP_OP_CHANGE_WINDOW_ATTRIBUTES, select, 3, (struct pending){ .kind = P_SELECT, .window = w->id });
    /* SHAPE's ShapeNotify too: a shape changes which points the window holds (what
     * TranslateCoordinates names as the child), and no core event says so */
    uint8_t shape_major, shape_event;
    if (o->s->predict && predict_extension(o->s->predict, "SHAPE", &shape_major, &shape_event)) {
        uint8_t body[XP_SHAPE_SELECT_INPUT_REQ_SIZE];
        xp_shape_select_input_req_put(body, sizeof body, false, &(struct xp_shape_select_input_req){
            .major_opcode = shape_major, .length = sizeof body / 4, .destination_window = w->id, .enable = 1 });
        obs_send_bytes(o, shape_major, XP_SHAPE_OP_SELECT_INPUT, body + XP_REQUEST_HEADER_SIZE,
                       sizeof body - XP_REQUEST_HEADER_SIZE, (struct pending){ .kind = P_SELECT, .window = w->id });
    }
    obs_send_request(o, XP_OP_GET_WINDOW_ATTRIBUTES, &w->id, 1, (struct pending){ .kind = P_ATTRS, .window = w->id });
    obs_send_request(o, XP_OP_GET_GEOMETRY, &w->id, 1, (struct pending){ .kind = P_GEOMETRY, .window = w->id });
}

void observer_on_request(struct observer *o, struct channel *ch, const struct msg_class *cls, const uint8_t *b,
                         uint32_t len, uint32_t seq, bool msb)
{
    if (expose_is_structural(cls))
        ch->struct_seq = seq;
    /* CreateWindow, InputOnly windows too: their properties and geometry may be answered at
     * the app side. */
    struct xp_create_window_body v;
    if (o->broken || cls->ext || cls->major != XOP_CREATE_WINDOW || !xp_create_window_body_view(b, len, msb, &v))
        return;
    uint32_t id = v.wid;
    if (o->n_wins >= OBSERVER_MAX_WINDOWS) {
        obs_own_unwatchable(o, ch, id);
        return;
    }
    log_debug("observer: channel %u creates window 0x%x (class %u)", ch->id, id, v.class);
    if (obs_win_find(o, id))
        return;
    struct owin *n = realloc(o->wins, (o->n_wins + 1) * sizeof *n);
    struct idmap_entry *e = n ? (o->wins = n, idmap_put(&o->by_id, id)) : NULL;
    if (!e)
        return;
    e->a = o->n_wins;
    struct owin *w = &o->wins[o->n_wins++];
    *w = (struct owin){ .id = id, .channel = ch->id, .visibility = -1, .unsent = true,
                        .toplevel = v.parent == o->root };
    ch->watches_pending++;
}

void observer_on_x_drained(struct observer *o, struct channel *ch)
{
    /* The client's CreateWindow requests are written; the server may still be reading
     * them, hence the retries on BadWindow. */
    for (uint32_t i = 0; i < o->n_wins; i++)
        if (o->wins[i].unsent && o->wins[i].channel == ch->id) {
            o->wins[i].unsent = false;
            obs_send_watch(o, &o->wins[i]);
        }
}

bool observer_must_hold(const struct observer *o, const struct channel *ch, uint8_t major)
{
    /* Until the watch is in place, a map could make the window visible unseen, and the events
     * of the client's own changes would not reach us to be told from another client's (the
     * display side counts them as they are written); GetWindowAttributes would not yet see
     * our selection, which the app side's answer includes. */
    if (!ch->watches_pending || o->broken)
        return false;
    switch (major) {
    case XP_OP_REPARENT_WINDOW: case XP_OP_MAP_WINDOW: case XP_OP_MAP_SUBWINDOWS: case XP_OP_UNMAP_WINDOW:
    case XP_OP_UNMAP_SUBWINDOWS: case XP_OP_CONFIGURE_WINDOW: case XP_OP_CHANGE_PROPERTY: case XP_OP_DELETE_PROPERTY:
    case XP_OP_GET_PROPERTY: case XP_OP_ROTATE_PROPERTIES:
    case XP_OP_GET_WINDOW_ATTRIBUTES:
        return true;
    default:
        return false;
    }
}

void observer_pass_unwatched(struct observer *o, struct channel *ch, uint8_t major)
{
    if (!observer_must_hold(o, ch, major))
        return;
    for (uint32_t i = 0; i < o->n_wins; i++) {
        struct owin *w = &o->wins[i];
        if (w->channel != ch->id || w->watching || w->early)
            continue;
        /* Its events before the watch are lost: neither the client's own changes can be told
         * from another's, nor its children's maps counted. */
        w->early = true;
        obs_own_unwatchable(o, ch, w->id);
        log_debug("observer: window 0x%x of channel %u changes during a grab before its watch", w->id, ch->id);
    }
}

void observer_on_progress(struct observer *o, struct channel *ch)
{
    if (o->broken || ch->struct_confirmed == ch->struct_seq || ch->sync_tag == ch->struct_seq ||
        (int32_t)(ch->xs.seq_done - ch->struct_seq) < 0)
        return;
    /* The server has carried out ch's latest window change; the events it caused for us
     * are queued before the answer to this round trip. */
    ch->sync_tag = ch->struct_seq;
    obs_send_request(o, XP_OP_GET_INPUT_FOCUS, NULL, 0,
                 (struct pending){ .kind = P_SYNC, .channel = ch->id, .tag = ch->struct_seq });
}

void observer_forget_channel(struct observer *o, uint32_t channel_id)
{
    for (uint32_t i = 0; i < o->n_wins;)
        if (o->wins[i].channel == channel_id)
            obs_win_remove(o, &o->wins[i]);
        else
            i++;
}
