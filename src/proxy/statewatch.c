/* statewatch.c -- toolkits' start-up queries of RANDR and XInput 2 state, and selections'
 * owners (statewatch.h). */
#include "proxy/statewatch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"
#include "proxy/observer.h"
#include "proxy/predict.h"
#include "x11/xwire.h"
#include "xproto_wire.h"

#define MAX_KEY 96            /* the handshakes' bytes (a connection's history holds no more) */
#define MAX_ITEMS 16          /* outputs and CRTCs asked about, each */

#define RR_WATCH_MASK (XP_RANDR_NOTIFY_MASK_SCREEN_CHANGE | XP_RANDR_NOTIFY_MASK_CRTC_CHANGE | \
                       XP_RANDR_NOTIFY_MASK_OUTPUT_CHANGE | XP_RANDR_NOTIFY_MASK_OUTPUT_PROPERTY | \
                       XP_RANDR_NOTIFY_MASK_RESOURCE_CHANGE)
#define XI_WATCH_MASK (XP_XINPUT_XI_EVENT_MASK_DEVICE_CHANGED | XP_XINPUT_XI_EVENT_MASK_HIERARCHY | \
                       XP_XINPUT_XI_EVENT_MASK_PROPERTY)

/* XKEYBOARD: the keyboard's changes, each event naming the part of its state it changes */
#define XKB_WATCH_EVENTS (XP_XKB_EVENT_TYPE_NEW_KEYBOARD_NOTIFY | XP_XKB_EVENT_TYPE_MAP_NOTIFY | \
                          XP_XKB_EVENT_TYPE_STATE_NOTIFY | XP_XKB_EVENT_TYPE_CONTROLS_NOTIFY | \
                          XP_XKB_EVENT_TYPE_NAMES_NOTIFY)
#define ALL_MINORS UINT32_MAX  /* a round that asks every query (and forgets every answer) */
#define BIT(minor) (1u << (minor))

enum which { W_RANDR, W_XI, W_XKB, N_WATCHED };
static const char *const names[N_WATCHED] = { "RANDR", "XInputExtension", "XKEYBOARD" };

/* The keyboard's queries toolkits ask at start, as they ask them: GTK 3 (firefox) and
 * emacs's Xlib, of UseCoreKbd or of the core keyboard's own device id (which clients learn
 * from an earlier reply). Xlib's GetMap of types, symbols and modifiers of UseCoreKbd is
 * also the observer's probe (observer_probe.c), but the first STATE forgets it: asked again. */
static const struct {
    bool core_id;             /* of the core keyboard's device id, else of UseCoreKbd */
    uint8_t minor;
    uint32_t arg;             /* GetMap: its full components; GetNames: which */
} xkb_queries[] = {
    { false, XP_XKB_OP_GET_CONTROLS, 0 }, { false, XP_XKB_OP_GET_MAP, 0x07 },   { false, XP_XKB_OP_GET_MAP, 0x47 },
    { false, XP_XKB_OP_GET_MAP, 0xff },   { true, XP_XKB_OP_GET_STATE, 0 },       { true, XP_XKB_OP_GET_CONTROLS, 0 },
    { true, XP_XKB_OP_GET_NAMES, 0x1800 }, { true, XP_XKB_OP_GET_NAMES, 0x3fff }, { true, XP_XKB_OP_GET_MAP, 0x47 },
};

struct question {
    uint8_t req[28];
    uint8_t size;
};

struct watched {
    bool on;
    uint8_t major, first_event;
    uint8_t key[MAX_KEY];     /* the handshakes, then room for the query */
    size_t key_len;
    struct question q[5 + 3 * MAX_ITEMS]; /* this round's queries (RANDR: 3, outputs, CRTCs, the
                                             outputs' names, 2 GetMonitors); the tag is the index */
    uint32_t n_q;
    uint32_t asking;          /* queries not yet answered */
    uint32_t dirty;           /* changes came while asking: the minors to ask again when done */
    uint32_t round;           /* XKEYBOARD: the minors this round asks */
    uint32_t names_asked, names_known; /* RANDR: outputs' names looked up as atoms, found */
    uint16_t core_id;         /* XKEYBOARD: the core keyboard's device id (0: not yet known) */
};

#define MAX_SELECTIONS 32     /* as the predictor's table (predict_private.h) */
#define SEL_WATCH_MASK (XP_XFIXES_SELECTION_EVENT_MASK_SET_SELECTION_OWNER | \
                        XP_XFIXES_SELECTION_EVENT_MASK_SELECTION_WINDOW_DESTROY | \
                        XP_XFIXES_SELECTION_EVENT_MASK_SELECTION_CLIENT_CLOSE)

struct statewatch {
    struct observer *o;
    uint32_t root;
    struct watched w[N_WATCHED];
    struct {                  /* selections a client asked the owner of, watched through XFIXES */
        bool on;
        uint8_t major, first_event;
        uint32_t atoms[MAX_SELECTIONS];
        uint32_t n;
    } sel;
};

int statewatch_new(struct statewatch **out)
{
    struct statewatch *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    *out = w;
    return 0;
}

void statewatch_free(struct statewatch *w) { free(w); }

/* An extension request (LSB): major, minor, length, then the words. */
static uint32_t build(uint8_t *r, uint8_t major, uint8_t minor, const uint32_t *words, unsigned n)
{
    r[0] = major;
    r[1] = minor;
    xp_request_set_length(r, 1 + n, false, false);
    for (unsigned i = 0; i < n; i++)
        xp_card32_put(r + XP_REQUEST_HEADER_SIZE, 4 * n, i, words[i], false);
    return XP_REQUEST_HEADER_SIZE + 4 * n;
}

static void on_answer(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error, struct buf *fact);

/* Asks a query; its answer becomes an EXCHANGE fact keyed by the handshakes and the query. */
static void ask(struct statewatch *sw, enum which k, const uint8_t *req, uint32_t size)
{
    struct watched *x = &sw->w[k];
    if (x->n_q == sizeof x->q / sizeof *x->q || size > sizeof x->q[0].req)
        return;
    memcpy(x->q[x->n_q].req, req, size);
    x->q[x->n_q].size = (uint8_t)size;
    if (observer_ask(sw->o, req, size, on_answer, sw, (uint32_t)k << 16 | x->n_q) == 0) {
        x->n_q++;
        x->asking++;
    }
}

/* XKEYBOARD's queries of this round whose device is (not) the core keyboard's own id. */
static void ask_xkb(struct statewatch *sw, bool core_id)
{
    struct watched *x = &sw->w[W_XKB];
    uint8_t r[28];
    for (size_t i = 0; i < sizeof xkb_queries / sizeof *xkb_queries; i++) {
        uint8_t minor = xkb_queries[i].minor;
        if (xkb_queries[i].core_id != core_id || !(x->round & BIT(minor)))
            continue;
        uint32_t device = core_id ? x->core_id : XP_XKB_ID_USE_CORE_KBD, arg = xkb_queries[i].arg;
        if (minor == XP_XKB_OP_GET_MAP) /* device, full; nothing partial */
            ask(sw, W_XKB, r, build(r, x->major, minor, (uint32_t[6]){ device | arg << 16 }, 6));
        else if (minor == XP_XKB_OP_GET_NAMES)
            ask(sw, W_XKB, r, build(r, x->major, minor, (uint32_t[2]){ device, arg }, 2));
        else
            ask(sw, W_XKB, r, build(r, x->major, minor, &device, 1));
    }
}

/* RANDR GetOutputInfo's reply: the fixed part, then CRTCs, modes, clones (4 bytes each) and
 * the output's name (randr.xml); the name is looked up as an atom (only if it exists). */
enum { OI_NUM_CRTCS_AT = 26, OI_NUM_MODES_AT = 28, OI_NUM_CLONES_AT = 32, OI_NAME_LEN_AT = 34, OI_SIZE = 36 };

static void ask_output_name(struct statewatch *sw, const uint8_t *info, uint32_t size)
{
    uint16_t crtcs, modes, clones, len;
    uint8_t r[28] = { XP_OP_INTERN_ATOM, 1 /* only if it exists */ };
    if (!xp_peek16(info, size, OI_NUM_CRTCS_AT, false, &crtcs) || !xp_peek16(info, size, OI_NUM_MODES_AT, false, &modes) ||
        !xp_peek16(info, size, OI_NUM_CLONES_AT, false, &clones) || !xp_peek16(info, size, OI_NAME_LEN_AT, false, &len))
        return;
    size_t at = OI_SIZE + 4u * ((size_t)crtcs + modes + clones);
    if (at + len > size || !len || (size_t)XP_INTERN_ATOM_REQ_SIZE + len > sizeof r)
        return; /* not counted: GetMonitors is not asked */
    xp_request_set_length(r, (uint32_t)(XP_INTERN_ATOM_REQ_SIZE + len + 3) / 4, false, false);
    st16(r + 4, len, false);
    memcpy(r + XP_INTERN_ATOM_REQ_SIZE, info + at, len);
    sw->w[W_RANDR].names_asked++;
    ask(sw, W_RANDR, r, (uint32_t)(XP_INTERN_ATOM_REQ_SIZE + len + 3) / 4 * 4);
}

static void ask_randr_items(struct statewatch *sw, const uint8_t *res, uint32_t size)
{
    /* GetScreenResourcesCurrent: timestamps, counts, then the CRTCs and the outputs. */
    struct xp_randr_get_screen_resources_current_reply v;
    if (!xp_randr_get_screen_resources_current_reply_view(res, size, false, &v) ||
        4u * (v.num_crtcs + v.num_outputs) > v.rest_len)
        return;
    uint32_t config_ts = v.config_timestamp, id;
    uint8_t r[16];
    uint8_t major = sw->w[W_RANDR].major;
    size_t ids_len = 4u * (v.num_crtcs + v.num_outputs);
    sw->w[W_RANDR].names_known = 0;
    sw->w[W_RANDR].names_asked = v.num_outputs > MAX_ITEMS; /* then one is never known */
    for (uint16_t i = 0; i < v.num_outputs && i < MAX_ITEMS; i++)
        if (xp_card32_at(v.rest, ids_len, v.num_crtcs + i, false, &id))
            ask(sw, W_RANDR, r, build(r, major, XP_RANDR_OP_GET_OUTPUT_INFO, (uint32_t[2]){ id, config_ts }, 2));
    for (uint16_t i = 0; i < v.num_crtcs && i < MAX_ITEMS; i++)
        if (xp_card32_at(v.rest, ids_len, i, false, &id))
            ask(sw, W_RANDR, r, build(r, major, XP_RANDR_OP_GET_CRTC_INFO, (uint32_t[2]){ id, config_ts }, 2));
}

/* Tells the app side to forget the extension's state (of the queries of those minor
 * opcodes), then asks it again. */
static void tell_and_ask(struct statewatch *sw, enum which k, uint32_t minors)
{
    struct watched *x = &sw->w[k];
    struct buf fact = { 0 };
    if (predict_fact_state_of(&fact, names[k], true, minors == ALL_MINORS ? 0 : minors) == 0)
        observer_send_fact(sw->o, &fact);
    buf_free(&fact);
    x->dirty = 0;
    x->n_q = 0;
    uint8_t r[16];
    if (k == W_XKB) {
        /* GetState of UseCoreKbd first: its reply names the core keyboard's device id */
        x->round = minors;
        uint32_t device = XP_XKB_ID_USE_CORE_KBD;
        if (minors & BIT(XP_XKB_OP_GET_STATE) || !x->core_id)
            ask(sw, k, r, build(r, x->major, XP_XKB_OP_GET_STATE, &device, 1));
        /* PerClientFlags changing nothing: what the server supports and how it answers, from
         * which the app side computes a client's (predict_quiet.c); not a state query */
        uint8_t pcf[28];
        if (minors == ALL_MINORS)
            ask(sw, k, pcf, build(pcf, x->major, XP_XKB_OP_PER_CLIENT_FLAGS, (uint32_t[6]){ device }, 6));
        ask_xkb(sw, false);
        if (x->core_id)
            ask_xkb(sw, true);
    } else if (k == W_RANDR) {
        ask(sw, k, r, build(r, x->major, XP_RANDR_OP_GET_SCREEN_RESOURCES_CURRENT, &sw->root, 1));
        /* GetMonitors only once every output's name is an atom (ask_output_name): the server
         * makes an atom of each monitor's name when first asked, and what the observer does
         * must not show in the server's state. */
        ask(sw, k, r, build(r, x->major, XP_RANDR_OP_GET_OUTPUT_PRIMARY, &sw->root, 1));
        ask(sw, k, r, build(r, x->major, XP_RANDR_OP_GET_SCREEN_SIZE_RANGE, &sw->root, 1));
    } else {
        ask(sw, k, r, build(r, x->major, XP_XINPUT_OP_XI_QUERY_DEVICE, (uint32_t[1]){ 0 /* XIAllDevices */ }, 1));
    }
}

static void on_answer(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error, struct buf *fact)
{
    struct statewatch *sw = ctx;
    uint32_t k = tag >> 16, i = tag & 0xffff;
    if (k >= N_WATCHED || i >= sw->w[k].n_q || !sw->w[k].asking)
        return;
    struct watched *x = &sw->w[k];
    const struct question *q = &x->q[i];
    struct xp_intern_atom_reply atom;
    if (q->req[0] == XP_OP_INTERN_ATOM) {
        /* An output's name: once every output's is an atom, GetMonitors (which names each
         * monitor by its first output's name, interning it when first asked) changes nothing. */
        if (!error && xp_intern_atom_reply_view(msg, size, false, &atom) && atom.atom &&
            ++x->names_known == x->names_asked) {
            uint8_t r[12];
            for (uint32_t active = 0; active < 2; active++)
                ask(sw, W_RANDR, r, build(r, x->major, XP_RANDR_OP_GET_MONITORS, (uint32_t[2]){ sw->root, active }, 2));
        }
    } else if (!error && x->key_len + q->size <= sizeof x->key + sizeof q->req) {
        uint8_t key[MAX_KEY + sizeof q->req];
        memcpy(key, x->key, x->key_len);
        memcpy(key + x->key_len, q->req, q->size);
        predict_fact_exchange(fact, false, key, x->key_len + q->size, msg, size);
        struct xp_request_header h;
        if (k == W_RANDR && xp_request_header_view(q->req, q->size, false, &h) &&
            h.data == XP_RANDR_OP_GET_SCREEN_RESOURCES_CURRENT)
            ask_randr_items(sw, msg, size);
        if (k == W_RANDR && xp_request_header_view(q->req, q->size, false, &h) && h.data == XP_RANDR_OP_GET_OUTPUT_INFO)
            ask_output_name(sw, msg, size);
        struct xp_server_header r;
        if (k == W_XKB && !x->core_id && xp_request_header_view(q->req, q->size, false, &h) &&
            h.data == XP_XKB_OP_GET_STATE && xp_server_header_view(msg, size, false, &r) && r.data) {
            x->core_id = r.data; /* the reply's device id */
            ask_xkb(sw, true);
        }
    }
    if (!--x->asking && x->dirty)
        tell_and_ask(sw, (enum which)k, x->dirty);
}

static void tell_owner(struct statewatch *sw, uint32_t selection, uint32_t owner, struct buf *fact)
{
    if (predict_fact_selection(fact, selection, owner) == 0)
        log_debug("state watch: selection %u: owner %#x", selection, owner);
}

static void on_owner(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error, struct buf *fact)
{
    struct statewatch *sw = ctx;
    struct xp_get_selection_owner_reply v;
    if (!error && tag < sw->sel.n && xp_get_selection_owner_reply_view(msg, size, false, &v))
        tell_owner(sw, sw->sel.atoms[tag], v.owner, fact);
}

/* Watches a selection's owner (once): selected first, then asked: on the one connection, a
 * change after the answer comes as an event after it. */
static void watch_selection(struct statewatch *sw, uint32_t selection)
{
    if (!selection || sw->sel.n == MAX_SELECTIONS)
        return;
    for (uint32_t i = 0; i < sw->sel.n; i++)
        if (sw->sel.atoms[i] == selection)
            return;
    uint8_t r[16];
    if (observer_ask(sw->o, r, build(r, sw->sel.major, XP_XFIXES_OP_SELECT_SELECTION_INPUT,
                                      (uint32_t[3]){ sw->root, selection, SEL_WATCH_MASK }, 3), NULL, NULL, 0) < 0)
        return;
    xp_get_selection_owner_req_put(r, sizeof r, false,
                                   &(struct xp_get_selection_owner_req){ .length = 2, .selection = selection });
    if (observer_ask(sw->o, r, XP_GET_SELECTION_OWNER_REQ_SIZE, on_owner, sw, sw->sel.n) == 0) {
        sw->sel.atoms[sw->sel.n++] = selection;
        log_debug("state watch: selection %u: watching its owner", selection);
    }
}

void statewatch_on_request(struct statewatch *sw, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                           bool msb)
{
    struct xp_get_selection_owner_req v;
    if (sw && sw->sel.on && !cls->ext && cls->major == XP_OP_GET_SELECTION_OWNER &&
        xp_get_selection_owner_req_view(req, size, msb, &v))
        watch_selection(sw, v.selection);
}

/* Selections toolkits ask the owner of at start (GTK 3's settings daemon and compositing
 * manager, emacs's and GTK's clipboard and its manager): watched from the session's start
 * when their atoms exist already (an earlier program or a desktop made them), found by
 * InternAtom only-if-exists, which leaves no trace. */
static const char *const start_selections[] = { "_XSETTINGS_S0", "_NET_WM_CM_S0", "CLIPBOARD", "CLIPBOARD_MANAGER" };

static void on_selection_atom(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error, struct buf *fact)
{
    (void)tag;
    (void)fact;
    struct xp_intern_atom_reply v;
    if (!error && xp_intern_atom_reply_view(msg, size, false, &v))
        watch_selection(ctx, v.atom);
}

static void listen_probes_done(void *ctx, struct observer *o)
{
    (void)o;
    struct statewatch *sw = ctx;
    for (size_t i = 0; sw && sw->sel.on && i < sizeof start_selections / sizeof *start_selections; i++) {
        size_t len = strlen(start_selections[i]);
        uint8_t r[XP_INTERN_ATOM_REQ_SIZE + 20] = { XP_OP_INTERN_ATOM, 1 /* only if it exists */ };
        xp_request_set_length(r, (uint32_t)(XP_INTERN_ATOM_REQ_SIZE + len + 3) / 4, false, false);
        st16(r + 4, (uint16_t)len, false);
        memcpy(r + XP_INTERN_ATOM_REQ_SIZE, start_selections[i], len);
        observer_ask(sw->o, r, (uint32_t)(XP_INTERN_ATOM_REQ_SIZE + len + 3) / 4 * 4, on_selection_atom, sw, 0);
    }
}

void statewatch_start(struct statewatch *sw, struct observer *o, const char *ext, const uint8_t *key, size_t key_len,
                      uint8_t major, uint8_t first_event, uint32_t root)
{
    if (sw && !strcmp(ext, "XFIXES") && major) {
        sw->o = o;
        sw->root = root;
        sw->sel.on = true;
        sw->sel.major = major;
        sw->sel.first_event = first_event;
        log_debug("state watch: XFIXES: selections' owners watched once asked");
        return;
    }
    enum which k = W_RANDR;
    while (k < N_WATCHED && strcmp(ext, names[k]))
        k++;
    if (!sw || k == N_WATCHED || sw->w[k].on || key_len > MAX_KEY || !major)
        return;
    struct watched *x = &sw->w[k];
    sw->o = o;
    sw->root = root;
    x->on = true;
    x->major = major;
    x->first_event = first_event;
    memcpy(x->key, key, key_len);
    x->key_len = key_len;
    uint8_t r[24];
    struct xp_request_header h;
    if (k == W_XKB) {
        /* The observer's XKEYBOARD probes are UseExtension, then a GetMap (itself a state
         * query): the handshake is the first. */
        if (!xp_request_header_view(key, key_len, false, &h) || 4u * h.length > key_len) {
            x->on = false;
            return;
        }
        x->key_len = 4u * h.length;
        xp_xkb_select_events_req_put(r, sizeof r, false, &(struct xp_xkb_select_events_req){
            .major_opcode = major, .length = XP_XKB_SELECT_EVENTS_REQ_SIZE / 4,
            .device_spec = XP_XKB_ID_USE_CORE_KBD, .affect_which = XKB_WATCH_EVENTS, .select_all = XKB_WATCH_EVENTS,
            .affect_map = 0xff, .map = 0xff });
        observer_ask(o, r, XP_XKB_SELECT_EVENTS_REQ_SIZE, NULL, NULL, 0);
    } else if (k == W_RANDR) {
        observer_ask(o, r, build(r, major, XP_RANDR_OP_SELECT_INPUT, (uint32_t[2]){ root, RR_WATCH_MASK }, 2), NULL, NULL,
                     0);
    } else {
        /* window, one mask; the mask: XIAllDevices, one word */
        observer_ask(o, r, build(r, major, XP_XINPUT_OP_XI_SELECT_EVENTS, (uint32_t[4]){ root, 1, 0 | 1u << 16, XI_WATCH_MASK }, 4),
                     NULL, NULL, 0);
    }
    log_debug("state watch: %s: watching its changes, telling the app side its state", names[k]);
    tell_and_ask(sw, k, ALL_MINORS);
}

/* The XKEYBOARD queries whose answers an XKEYBOARD event of this type changes (0: none). */
static uint32_t xkb_changed(uint8_t xkb_type)
{
    switch (xkb_type) {
    case XP_XKB_EV_NEW_KEYBOARD_NOTIFY:
        return ALL_MINORS;
    case XP_XKB_EV_MAP_NOTIFY: /* the types' and keys' count may change the controls and names too */
        return BIT(XP_XKB_OP_GET_MAP) | BIT(XP_XKB_OP_GET_NAMES) | BIT(XP_XKB_OP_GET_CONTROLS);
    case XP_XKB_EV_STATE_NOTIFY:
        return BIT(XP_XKB_OP_GET_STATE);
    case XP_XKB_EV_CONTROLS_NOTIFY:
        return BIT(XP_XKB_OP_GET_CONTROLS);
    case XP_XKB_EV_NAMES_NOTIFY:
        return BIT(XP_XKB_OP_GET_NAMES);
    default:
        return 0;
    }
}

void statewatch_on_event(struct statewatch *sw, struct observer *o, const uint8_t *ev, size_t size)
{
    (void)o;
    struct xp_server_header h;
    struct xp_generic_event_header g;
    if (!sw || size < XP_SERVER_MSG_SIZE || !xp_server_header_view(ev, size, false, &h))
        return;
    uint8_t code = h.code & 0x7f;
    struct xp_xfixes_selection_notify_event sn;
    if (sw->sel.on && code == sw->sel.first_event + XP_XFIXES_EV_SELECTION_NOTIFY &&
        xp_xfixes_selection_notify_event_view(ev, size, false, &sn)) {
        for (uint32_t i = 0; i < sw->sel.n; i++) {
            if (sw->sel.atoms[i] != sn.selection)
                continue;
            struct buf fact = { 0 };
            tell_owner(sw, sn.selection, sn.owner, &fact);
            observer_send_fact(sw->o, &fact);
            buf_free(&fact);
        }
        return;
    }
    enum which k = N_WATCHED;
    uint32_t minors = ALL_MINORS;
    struct watched *rr = &sw->w[W_RANDR], *xi = &sw->w[W_XI], *kb = &sw->w[W_XKB];
    if (kb->on && code == kb->first_event && (minors = xkb_changed(ev[1])))
        k = W_XKB; /* every XKEYBOARD event has its code; its type follows */
    else if (rr->on && rr->first_event &&
        (code == rr->first_event + XP_RANDR_EV_SCREEN_CHANGE_NOTIFY || code == rr->first_event + XP_RANDR_EV_NOTIFY))
        k = W_RANDR; /* ScreenChangeNotify, or RRNotify of a CRTC, output, property or resource */
    else if (xi->on && code == XP_EV_GE_GENERIC && xp_generic_event_header_view(ev, size, false, &g) &&
             g.extension == xi->major &&
             (g.event_type == XP_XINPUT_EV_DEVICE_CHANGED || g.event_type == XP_XINPUT_EV_HIERARCHY ||
              g.event_type == XP_XINPUT_EV_PROPERTY))
        k = W_XI;
    if (k == N_WATCHED)
        return;
    log_debug("state watch: %s changed: telling the app side again", names[k]);
    if (sw->w[k].asking)
        sw->w[k].dirty |= minors;
    else
        tell_and_ask(sw, k, minors);
}

static void listen_extension(void *ctx, struct observer *o, const char *ext, const uint8_t *key, size_t key_len,
                             uint8_t major, uint8_t first_event, uint32_t root)
{
    statewatch_start(ctx, o, ext, key, key_len, major, first_event, root);
}

static void listen_event(void *ctx, struct observer *o, const uint8_t *ev, size_t size)
{
    statewatch_on_event(ctx, o, ev, size);
}

void statewatch_listen(struct statewatch *w, struct observer_listener *out)
{
    *out = (struct observer_listener){ .ctx = w, .on_extension = listen_extension, .on_event = listen_event,
                                       .on_probes_done = listen_probes_done };
}
