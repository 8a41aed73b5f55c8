/* observer.c -- the display side's own X connection: facts probed when it opens (the
 * server's extensions, atoms, handshake replies, colours, fonts, sent as FACT frames on
 * channel 0; new atoms looked for as clients connect and every 500 ms), and
 * window watches and confirmations for local NoExpose answers (observer.h, expose.h,
 * docs/PROTOCOL.md 3.2, 3.3).
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
#include "proxy/fontset.h"
#include "proxy/learnt.h"
#include "proxy/statewatch.h"
#include "proxy/session_private.h"
#include "proxy/spare.h"
#include "x11/xdisplay.h"
#include "x11/xwire.h"
#include "xproto_tables.h"

#define OBSERVER_CONNECT_TIMEOUT_MS 5000
#define OBSERVER_MAX_WINDOWS 4096u
#define OBSERVER_MAX_KIDS 8u         /* mapped children remembered; more: never clean */
#define OBSERVER_WATCH_TRIES 8       /* BadWindow: the client's CreateWindow is not yet done */
#define PROBE_MAX_ATOMS 16384u       /* atoms asked for at most */
#define PROBE_ATOM_BATCH 512u
#define PROBE_FACT_BYTES (64u * 1024) /* atoms per FACT frame: about this many bytes */
#define CENSUS_POLL_NS (500u * 1000000ull) /* atoms made by clients outside tincan: looked for this often */
#define CENSUS_FACT_BYTES 4096u      /* a look's FACT_ATOM_HASHES: about this long at most */
#define CENSUS_MAX_UNSURE 4096u      /* atoms left to replies the app side has not acknowledged */

enum { EV_VISIBILITY = 15, EV_DESTROY = 17, EV_UNMAP = 18, EV_MAP = 19, EV_REPARENT = 21, EV_CONFIGURE = 22,
       EV_PROPERTY = 28, EV_MAPPING = 34 };
enum { OP_GET_KEYBOARD_MAPPING = 101, OP_GET_MODIFIER_MAPPING = 119 };
#define PROPERTY_CHANGE_MASK 0x400000u
#define PROBE_MAX_CHANGED 64u        /* root property changes remembered during the probes */
enum { OP_REPARENT_WINDOW = 7, OP_MAP_WINDOW = 8, OP_MAP_SUBWINDOWS = 9 };
enum { OP_CHANGE_WINDOW_ATTRIBUTES = 2, OP_GET_WINDOW_ATTRIBUTES = 3, OP_GET_GEOMETRY = 14, OP_GET_INPUT_FOCUS = 43 };
#define WATCH_MASK (0x10000u | 0x20000u | 0x80000u | PROPERTY_CHANGE_MASK) /* VisibilityChange, StructureNotify,
                                                                           * SubstructureNotify, PropertyChange */
#define SUBSTRUCTURE_REDIRECT_MASK 0x100000u
enum { EV_GRAVITY = 24 };

enum pending_kind { P_SELECT, P_ATTRS, P_GEOMETRY, P_SYNC, P_KEYMAP, P_MODMAP, P_PROBE, P_ROOT_ATTRS,
                    P_SPARE_ROOT_ATTRS, P_SPARE_ROOT_GEOMETRY, P_ASK };
/* P_PROBE's steps (pending.tag): ListExtensions, QueryExtension, GetAtomName, a handshake,
 * ListProperties and GetProperty of the root. */
enum probe_step { S_LIST, S_QE, S_ATOM, S_HS, S_PROPS, S_PROP, S_COLOR, S_FONT, S_FONT_QUERY, S_FONTS_DONE, S_POLL,
                  S_XKB_MAP };
#define PROBE_SLOTS 15               /* handshake probes (probes[] below) */

struct pending {
    uint32_t seq;
    enum pending_kind kind;
    uint32_t window;          /* P_SELECT/ATTRS/GEOMETRY */
    uint32_t channel, tag;    /* P_SYNC: the channel and its structural request confirmed */
    observer_answer_fn fn;    /* P_ASK: observer_ask's */
    void *ctx;
    bool multi, counted;      /* P_ASK: ListFontsWithInfo; a start probe */
};

struct owin {
    uint32_t id, channel;
    int8_t visibility;        /* -1 unknown, else VisibilityNotify's state (0 = unobscured) */
    bool watching;            /* the watch is in place (geometry known) */
    bool unsent;              /* waiting for the client's CreateWindow to be written */
    bool toplevel;            /* its parent is a root: a window manager may manage it */
    bool early;               /* the client changed it before its watch was in place (a grab) */
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
    uint32_t root;            /* screen 0's root: its properties are watched */
    uint32_t white, black;    /* its white and black pixels */
    uint16_t width, height;   /* its size in pixels, as the server started */
    uint32_t root_masks;      /* its all-event-masks, as last read (observer_check_root) */
    uint8_t root_redirect;    /* OWNWIN_REDIRECT_*: whether a window manager redirects the root's children */
    bool own_unwatched;       /* the app side was told that the clients' windows are no longer watched */
    bool props_watched;       /* facts about root properties may have been sent */
    uint8_t min_keycode, max_keycode;
    bool kb_fetching;         /* the mappings are being asked for again after a MappingNotify */
    uint8_t *kb_keymap;       /* ... the keyboard mapping's reply, until the modifiers' */
    uint32_t kb_keymap_size;
    uint32_t changed[PROBE_MAX_CHANGED], n_changed;
    bool changed_overflow;
    struct {                  /* the probes made when the connection opens (probe_start) */
        bool active;          /* not all answered: clients' setup requests wait (held) */
        uint32_t outstanding; /* probes not yet answered */
        uint64_t start_ns;
        struct buf names;     /* extension names asked about, as counted strings */
        uint32_t qe_left;
        uint32_t atom_next;   /* the next atom to ask for */
        bool atoms_end;
        struct buf atoms;     /* a FACT ATOMS payload being filled */
        uint8_t majors[PROBE_SLOTS];
        struct buf keys[PROBE_SLOTS];
        bool hs_dead[PROBE_SLOTS];
        bool props_probing;   /* root property changes wait in changed[] */
        uint32_t props_left;
        bool keyboard;        /* the keyboard's mappings are asked as part of it */
        unsigned n_ext, n_atoms, n_hs, n_props;
        uint32_t atom_bad;    /* the first atom number the server said BadAtom to */
        uint32_t colormap;    /* a TrueColor default colormap whose arithmetic is being checked */
        struct buf color_reqs; /* the colour requests sent, one after another */
        uint32_t colors_left;
        bool colors_bad;      /* an answer differed from the arithmetic */
        struct buf colors;    /* the FACT_COLORS payload being filled */
        uint32_t font_base;   /* resource ids for the fonts opened */
        uint32_t fonts_bad;   /* bit k: fonts[k] did not open */
        unsigned n_colors, n_fonts;
    } probe;
    struct {                  /* XKEYBOARD: its GetMap reply is a fact while the keyboard stays */
        uint8_t major, event; /* its opcode and first event (0: not present) */
        struct buf key;       /* UseExtension and GetMap, as probed: the fact's key */
        uint32_t generation;  /* keyboard changes seen: an older GetMap answer is stale */
    } xkb;
    struct {                  /* the atom census, kept current by polls (docs/PROTOCOL.md 3.2) */
        uint32_t next;        /* the first atom number not yet seen; 0: no census */
        uint32_t told;        /* the census last told */
        struct buf hashes;    /* the FACT_ATOM_HASHES of the look under way */
        uint32_t hash_next;   /* ... the atom it would tell next */
        bool any_hashed;      /* ... it told some (then the census follows) */
        /* Atoms a look left to the replies that tell them (the display side learnt them from
         * its channels' replies, as the app side does), until the app side has acknowledged
         * the link that held those replies: a client gone before reading one leaves the app
         * side without it, and then they are told after all (observer_on_peer_close). */
        struct unsure_atom {
            uint32_t atom;
            uint64_t until;   /* link bytes the app side must have read; 0: not yet known */
        } *unsure;
        uint32_t n_unsure, cap_unsure;
        /* Channels the app side closed: so far, when the last look began, when this one did.
         * An atom found now was made after the last look began; if a client went away since,
         * its reply may have been dropped at the app side: this look tells every atom. */
        uint32_t closes, closes_last, closes_this;
        bool for_setup;       /* a client's setup waits for this look: it tells every atom
                               * ahead of that setup reply, as before any local answer */
        bool polling;
        uint64_t due_ns;      /* the next poll */
        bool hooked;          /* the before-sleep hook is in place */
    } census;
    struct held {             /* clients whose setup request waits for the probes */
        uint32_t channel;
        struct frame_open open;
    } *held;
    uint32_t n_held, cap_held;
};

static void observer_event(struct watch *w, unsigned events);
static void watch_root(struct observer *o);
static void probe_start(struct observer *o);
static void probe_finish(struct observer *o);
static void send_session_fact(struct observer *o, struct buf *payload);
static void census_hook(void *data);
static void ask_answer(struct observer *o, const struct pending *p, const uint8_t *msg, bool error);
static bool ask_more(const struct pending *p, const uint8_t *msg, bool error);

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
    o->root_redirect = OWNWIN_REDIRECT_UNKNOWN;
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
        if (!rc) {
            /* Screen 0 follows the vendor string and the pixmap formats; its root comes first. */
            struct rd r = rd_make(buf_head(&o->rx), (size_t)n, false);
            uint16_t vendor_len;
            uint8_t n_formats;
            if (!rd_skip(&r, 24) && !rd_u16(&r, &vendor_len) && !rd_skip(&r, 3) && !rd_u8(&r, &n_formats) &&
                !rd_skip(&r, 4) && !rd_u8(&r, &o->min_keycode) && !rd_u8(&r, &o->max_keycode) &&
                !rd_skip(&r, 4 + vendor_len + xw_pad4(vendor_len) + 8u * n_formats) && rd_u32(&r, &o->root))
                o->root = 0;
            uint32_t colormap, masks;
            if (o->root && (rd_u32(&r, &colormap) || rd_u32(&r, &o->white) || rd_u32(&r, &o->black) ||
                            rd_u32(&r, &masks) || rd_u16(&r, &o->width) || rd_u16(&r, &o->height)))
                o->white = o->black = o->width = o->height = 0;
            if (s->predict) /* the same server as the clients': its TrueColor maps, checked by the probes */
                predict_learn_setup(s->predict, buf_head(&o->rx), (size_t)n, false);
            o->probe.font_base = ld32(buf_head(&o->rx) + 12, false);
            if (s->learnt)
                learnt_on_setup(s->learnt, &s->cfg.upstream, buf_head(&o->rx), (size_t)n);
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
        probe_start(o);
    if (!rc)
        watch_root(o);
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
        send_session_fact(o, &fact);
        buf_free(&fact);
    }
    if (o->s && o->s->predict && predict_keyboard_known(o->s->predict)) {
        struct buf fact = { 0 }; /* MappingNotify is no longer seen */
        predict_fact_keyboard(&fact, false, 0, 0, 0, NULL, 0, NULL);
        send_session_fact(o, &fact);
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
        loop_remove_before_sleep(o->s->loop, census_hook, o);
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
static void send_request_minor(struct observer *o, uint8_t major, uint8_t minor, const uint32_t *words,
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
    st16(r + 2, (uint16_t)(1 + n_words), false);
    for (unsigned i = 0; i < n_words; i++)
        st32(r + 4 + 4 * i, words[i], false);
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
static void send_request(struct observer *o, uint8_t major, const uint32_t *words, unsigned n_words, struct pending p)
{
    send_request_minor(o, major, 0, words, n_words, p);
}

/* ---------------------------------------------------------------- probes at start */

/* Handshakes clients commonly open with, in order per extension (the bytes after the
 * header); each reply is keyed by the requests of that extension up to it. */
static const struct {
    const char *ext;
    uint8_t minor;
    uint8_t body[24];
    uint8_t body_len;
} probes[] = {
    { "BIG-REQUESTS", 0, { 0 }, 0 },                    /* Enable */
    { "XKEYBOARD", 0, { 1, 0, 0, 0 }, 4 },              /* UseExtension 1.0 (Xlib) */
    /* GetMap of the core keyboard's types, symbols and modifier map (Xlib's XkbGetMap, as
     * xterm asks it); asked again when the keyboard changes (PROBE_GET_MAP) */
    { "XKEYBOARD", 8, { 0x00, 0x01, 7, 0 }, 24 },
    { "RENDER", 0, { 0, 0, 0, 0, 11, 0, 0, 0 }, 8 },    /* QueryVersion 0.11 (libXrender, xcb) */
    { "RENDER", 1, { 0 }, 0 },                          /* QueryPictFormats */
    { "XFIXES", 0, { 6, 0, 0, 0, 0, 0, 0, 0 }, 8 },     /* QueryVersion 6.0 (libXfixes) */
    /* GTK 3's start, as it sends them */
    { "Generic Event Extension", 0, { 1, 0, 0, 0 }, 4 }, /* QueryVersion 1.0 */
    { "SHAPE", 0, { 0 }, 0 },                           /* QueryVersion */
    { "RANDR", 0, { 1, 0, 0, 0, 6, 0, 0, 0 }, 8 },      /* QueryVersion 1.6 */
    { "Composite", 0, { 0, 0, 0, 0, 4, 0, 0, 0 }, 8 },  /* QueryVersion 0.4 */
    { "DAMAGE", 0, { 1, 0, 0, 0, 1, 0, 0, 0 }, 8 },     /* QueryVersion 1.1 */
    { "XInputExtension", 1, { 15, 0, 0, 0, 'X', 'I', 'n', 'p', 'u', 't', 'E', 'x', 't', 'e', 'n', 's', 'i', 'o', 'n' },
      19 },                                             /* GetExtensionVersion, twice (libXi) */
    { "XInputExtension", 1, { 15, 0, 0, 0, 'X', 'I', 'n', 'p', 'u', 't', 'E', 'x', 't', 'e', 'n', 's', 'i', 'o', 'n' },
      19 },
    { "XInputExtension", 47, { 2, 0, 4, 0 }, 4 },      /* XIQueryVersion 2.4 */
    { "SYNC", 0, { 3, 1, 0, 0 }, 4 },                   /* Initialize 3.1 (libXext, GTK 3's frame clock) */
};
#define N_PROBES (sizeof probes / sizeof *probes)
_Static_assert(N_PROBES == PROBE_SLOTS, "PROBE_SLOTS counts probes[]");

/* Sends a fact on channel 0 and learns it here too, so both sides' predictors agree. */
static void send_session_fact(struct observer *o, struct buf *payload)
{
    if (payload->len && predict_on_fact(o->s->predict, buf_head(payload), payload->len) == 0) {
        frame_encode(&o->s->link_tx, FRAME_FACT, 0, buf_head(payload), payload->len);
        o->s->stats.link_frames_out++;
    }
    buf_clear(payload);
}

void observer_send_fact(struct observer *o, struct buf *payload)
{
    if (o->s->predict)
        send_session_fact(o, payload);
    buf_clear(payload);
}

/* A root property is no longer known: tell the app side (once). */
static void property_changed(struct observer *o, uint32_t property)
{
    if (!o->s->predict || !predict_property_known(o->s->predict, o->root, property))
        return;
    struct buf fact = { 0 };
    predict_fact_property(&fact, o->root, property, PROP_UNKNOWN, 0, 0, NULL, 0);
    send_session_fact(o, &fact);
    buf_free(&fact);
    log_debug("observer: root property %u changed: no longer answered at the app side", property);
}

/* The keyboard's mappings from GetKeyboardMapping's and GetModifierMapping's replies. */
static bool send_keyboard(struct observer *o, const uint8_t *km, uint32_t km_size, const uint8_t *mm, uint32_t mm_size)
{
    uint32_t keys = o->max_keycode >= o->min_keycode ? o->max_keycode - o->min_keycode + 1u : 0;
    if (!km || !mm || !keys || o->min_keycode < 8 || km_size < 32 || mm_size < 32 || !km[1] ||
        ld32(km + 4, false) != keys * km[1] || km_size != 32 + 4 * keys * km[1] || mm_size < 32 + 8u * mm[1])
        return false;
    struct buf fact = { 0 };
    predict_fact_keyboard(&fact, true, o->min_keycode, o->max_keycode, km[1], km + 32, mm[1], mm + 32);
    send_session_fact(o, &fact);
    buf_free(&fact);
    return true;
}

/* Sends one request given as bytes after its header. */
static void send_bytes(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len,
                       struct pending p)
{
    uint32_t words[72] = { 0 };
    if (body_len > sizeof words)
        return;
    if (body_len)
        memcpy(words, body, body_len); /* the bytes as they are: words go out in this order, LSB */
    for (unsigned i = 0; i < (body_len + 3u) / 4; i++)
        words[i] = ld32((const uint8_t *)&words[i], false);
    send_request_minor(o, major, minor, words, (body_len + 3u) / 4, p);
}

static void probe_send(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len,
                       enum probe_step step, uint32_t index)
{
    o->probe.outstanding++;
    send_bytes(o, major, minor, body, body_len, (struct pending){ .kind = P_PROBE, .tag = step, .window = index });
}

static void probe_atoms(struct observer *o)
{
    uint32_t first = o->probe.atom_next;
    for (uint32_t id = first; id < first + PROBE_ATOM_BATCH && id <= PROBE_MAX_ATOMS; id++)
        probe_send(o, 17 /* GetAtomName */, 0, &(uint8_t[4]){ (uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), 0 },
                   4, S_ATOM, id);
    o->probe.atom_next = first + PROBE_ATOM_BATCH;
}

/* Colour names clients commonly allocate by name (Xt's defaults, xcalc, xclock, ...). */
static const char *const probe_color_names[] = { "black", "white", "red", "green", "blue", "yellow", "cyan",
                                                 "magenta", "gray", "grey", "orange", "navy" };
/* Fonts Xlib and Xt open without asking about them first (cursors; the default font). */
static const char *const probe_font_names[] = { "cursor", "fixed" };

static void probe_color_request(struct observer *o, uint8_t major, const uint8_t *body, uint16_t body_len)
{
    size_t at = o->probe.color_reqs.len;
    uint8_t *rq = buf_append_space(&o->probe.color_reqs, 4u + body_len);
    if (!rq) {
        o->probe.colors_bad = true;
        return;
    }
    rq[0] = major;
    rq[1] = 0;
    st16(rq + 2, (uint16_t)((4u + body_len) / 4), false);
    memcpy(rq + 4, body, body_len);
    o->probe.colors_left++;
    probe_send(o, major, 0, body, body_len, S_COLOR, (uint32_t)at);
}

/* The TrueColor arithmetic (predict.c) checked against the server on its default colormap,
 * where AllocColor and QueryColors allocate nothing; and the common colour names looked up. */
static void probe_colors(struct observer *o)
{
    uint32_t all = 0, cmap = predict_truecolor_colormap(o->s->predict, &all);
    if (!cmap)
        return;
    o->probe.colormap = cmap;
    static const uint16_t rgb[][3] = { { 0, 0, 0 }, { 0xffff, 0xffff, 0xffff }, { 0xff00, 0x5300, 0 },
                                       { 0x1234, 0x8765, 0xfedc }, { 0x7fff, 0x8000, 0x0101 } };
    uint8_t b[8 + 260];
    for (size_t i = 0; i < sizeof rgb / sizeof *rgb; i++) {
        memset(b, 0, 12);
        st32(b, cmap, false);
        for (int c = 0; c < 3; c++)
            st16(b + 4 + 2 * c, rgb[i][c], false);
        probe_color_request(o, 84 /* AllocColor */, b, 12);
    }
    const uint32_t pixels[] = { 0, all, all & 0x55555555u, all & 0x0f0f0f0fu, all & 0xf0f0f0f0u };
    st32(b, cmap, false);
    for (size_t i = 0; i < sizeof pixels / sizeof *pixels; i++)
        st32(b + 4 + 4 * i, pixels[i], false);
    probe_color_request(o, 91 /* QueryColors */, b, 4 + 4 * sizeof pixels / sizeof *pixels);
    for (size_t i = 0; i < sizeof probe_color_names / sizeof *probe_color_names; i++) {
        uint16_t len = (uint16_t)strlen(probe_color_names[i]);
        memset(b, 0, sizeof b);
        st32(b, cmap, false);
        st16(b + 4, len, false);
        memcpy(b + 8, probe_color_names[i], len);
        probe_color_request(o, 92 /* LookupColor */, b, (uint16_t)(8 + len + xw_pad4(len)));
    }
}

static void probe_color_answer(struct observer *o, const struct pending *p, const uint8_t *msg, uint32_t size,
                               bool error)
{
    const uint8_t *rq = buf_head(&o->probe.color_reqs) + p->window;
    uint32_t rq_size = 4u * ld16(rq + 2, false);
    bool lookup = rq[0] == 92;
    if (error && lookup) {
        /* the server does not know the name: not told */
    } else if (error || !predict_color_check(o->s->predict, rq, rq_size, msg, size)) {
        o->probe.colors_bad = true;
        log_info("observer: the server's answer to a colour request (%u) is not the TrueColor arithmetic: colours "
                 "are asked of the server until a real answer matches", rq[0]);
    } else if (lookup) {
        const uint16_t exact[3] = { ld16(msg + 8, false), ld16(msg + 10, false), ld16(msg + 12, false) };
        predict_fact_color_name(&o->probe.colors, (const char *)rq + 12, ld16(rq + 8, false), exact);
        o->probe.n_colors++;
    }
    if (--o->probe.colors_left)
        return;
    struct buf fact = { 0 };
    if (!o->probe.colors_bad && predict_fact_colors(o->s->predict, &fact, o->probe.colormap) == 0 &&
        buf_append(&fact, buf_head(&o->probe.colors), o->probe.colors.len) == 0)
        send_session_fact(o, &fact);
    buf_free(&fact);
}

/* Fonts opened (and closed) on this connection: OpenFont of them is quiet for clients. */
static void probe_fonts(struct observer *o)
{
    for (uint32_t k = 0; k < sizeof probe_font_names / sizeof *probe_font_names; k++) {
        uint8_t b[8 + 256] = { 0 };
        uint32_t fid = o->probe.font_base + 1 + k;
        uint16_t len = (uint16_t)strlen(probe_font_names[k]);
        st32(b, fid, false);
        st16(b + 4, len, false);
        memcpy(b + 8, probe_font_names[k], len);
        /* no answer when it opens; an error names it */
        send_bytes(o, 45 /* OpenFont */, 0, b, (uint16_t)(8 + len + xw_pad4(len)),
                   (struct pending){ .kind = P_PROBE, .tag = S_FONT, .window = k });
        if (!strcmp(probe_font_names[k], "fixed")) /* the server's default font: most core-font programs load it */
            probe_send(o, 47 /* QueryFont */, 0, b, 4, S_FONT_QUERY, k);
        send_request(o, 46 /* CloseFont */, &fid, 1, (struct pending){ .kind = P_SELECT });
    }
    probe_send(o, 43 /* GetInputFocus: after the errors, if any */, 0, NULL, 0, S_FONTS_DONE, 0);
}

static void probe_fonts_done(struct observer *o)
{
    struct buf fact = { 0 };
    for (uint32_t k = 0; k < sizeof probe_font_names / sizeof *probe_font_names; k++)
        if (!(o->probe.fonts_bad >> k & 1)) {
            predict_fact_font(&fact, probe_font_names[k], strlen(probe_font_names[k]));
            o->probe.n_fonts++;
        }
    send_session_fact(o, &fact);
    buf_free(&fact);
}

/* The keyboard's GetMap reply is now a fact: keep its key to ask again, and have the server
 * say when the keyboard changes. Core MappingNotify is not enough: once a connection has
 * used XKEYBOARD, the server sends it only for the map components the connection selected. */
static void xkb_watch(struct observer *o, const uint8_t *key, size_t key_len)
{
    buf_clear(&o->xkb.key);
    if (buf_append(&o->xkb.key, key, key_len) < 0)
        return;
    /* SelectEvents on the core keyboard: NewKeyboardNotify and MapNotify, every detail */
    const uint8_t select[12] = { 0x00, 0x01, 3, 0, 0, 0, 3, 0, 0xff, 0, 0xff, 0 };
    send_bytes(o, o->xkb.major, 1, select, sizeof select, (struct pending){ .kind = P_SELECT });
}

/* GetMap as probed, again (after a change); an answer older than the latest change is dropped. */
static void xkb_ask_map(struct observer *o)
{
    const uint8_t *key = buf_head(&o->xkb.key);
    size_t len = o->xkb.key.len;
    if (!len || !o->s->predict)
        return;
    uint32_t at = 4u * ld16(key + 2, false); /* UseExtension first, then GetMap */
    if (at + 4 > len)
        return;
    send_bytes(o, key[at], key[at + 1], key + at + 4, (uint16_t)(len - at - 4),
               (struct pending){ .kind = P_PROBE, .tag = S_XKB_MAP, .channel = o->xkb.generation });
}

static void xkb_map_answer(struct observer *o, const struct pending *p, const uint8_t *msg, uint32_t size, bool error)
{
    if (error || p->channel != o->xkb.generation)
        return; /* the keyboard changed again meanwhile: a newer answer comes */
    struct buf fact = { 0 };
    predict_fact_exchange(&fact, false, buf_head(&o->xkb.key), o->xkb.key.len, msg, size);
    send_session_fact(o, &fact);
    buf_free(&fact);
}

/* The keyboard changed (core MappingNotify, or XKEYBOARD's MapNotify or NewKeyboardNotify):
 * what the app side knows of it is forgotten, then asked again. */
static void keyboard_changed(struct observer *o)
{
    if (!o->s->predict)
        return;
    struct buf fact = { 0 };
    predict_fact_keyboard(&fact, false, 0, 0, 0, NULL, 0, NULL); /* also forgets GetMap replies */
    send_session_fact(o, &fact);
    buf_free(&fact);
    log_debug("observer: the keyboard mapping changed: asking again");
    if (!o->kb_fetching) {
        /* Asked after the change: the answers say the new mappings. */
        o->kb_fetching = true;
        uint32_t kb = o->min_keycode | (uint32_t)(o->max_keycode - o->min_keycode + 1) << 8;
        send_request(o, OP_GET_KEYBOARD_MAPPING, &kb, 1, (struct pending){ .kind = P_KEYMAP });
        send_request(o, OP_GET_MODIFIER_MAPPING, NULL, 0, (struct pending){ .kind = P_MODMAP });
    }
    o->xkb.generation++;
    xkb_ask_map(o);
}

/* Clients held back until the facts are told. */
static void release_held(struct observer *o)
{
    uint32_t n = o->n_held;
    o->n_held = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct channel *ch = channel_find(o->s, o->held[i].channel);
        if (ch)
            channel_send_setup(ch, &o->held[i].open);
    }
    spare_offer(o->s);
}

bool observer_probing(const struct observer *o)
{
    return o->probe.active && !o->broken;
}

bool observer_check_root(struct observer *o)
{
    if (!o->root || o->broken)
        return false;
    send_request(o, OP_GET_WINDOW_ATTRIBUTES, &o->root, 1,
                 (struct pending){ .kind = P_SPARE_ROOT_ATTRS, .window = o->root });
    send_request(o, OP_GET_GEOMETRY, &o->root, 1, (struct pending){ .kind = P_SPARE_ROOT_GEOMETRY, .window = o->root });
    return !o->broken;
}

/* Looks for atoms made since the last look (by clients outside tincan; atoms made through
 * tincan are learnt from their replies too): GetAtomName of the next numbers, a round trip
 * on the display's machine, until BadAtom. */
static void census_poll(struct observer *o)
{
    if (o->broken || !o->census.next || o->census.polling || o->probe.active)
        return;
    o->census.polling = true;
    o->census.due_ns = o->s->now() + CENSUS_POLL_NS;
    o->census.closes_last = o->census.closes_this;
    o->census.closes_this = o->census.closes;
    uint32_t id = o->census.next;
    send_request(o, 17 /* GetAtomName */, &id, 1, (struct pending){ .kind = P_PROBE, .tag = S_POLL, .window = id });
}

/* Whether a look may leave atom to the reply that told the display side of it. */
static bool census_leave_to_reply(struct observer *o, uint32_t atom)
{
    if (!predict_atom_known(o->s->predict, atom) || o->census.n_unsure >= CENSUS_MAX_UNSURE ||
        o->census.closes != o->census.closes_last || o->census.for_setup)
        return false;
    if (o->census.n_unsure == o->census.cap_unsure) {
        uint32_t cap = o->census.cap_unsure ? 2 * o->census.cap_unsure : 64;
        struct unsure_atom *u = realloc(o->census.unsure, cap * sizeof *u);
        if (!u)
            return false;
        o->census.unsure = u;
        o->census.cap_unsure = cap;
    }
    o->census.unsure[o->census.n_unsure++] = (struct unsure_atom){ atom, 0 };
    return true;
}

/* Once nothing waits for the link but compressed bytes, the replies behind the unsure
 * atoms are within the link's first `until` bytes. */
static void census_mark_unsure(struct observer *o)
{
    struct session *s = o->s;
    if (!o->census.n_unsure || o->census.unsure[o->census.n_unsure - 1].until || s->link_tx.len)
        return;
    for (const struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->to_link.len)
            return;
    uint64_t until = s->tx_stream + s->wire_tx.len;
    for (uint32_t i = o->census.n_unsure; i-- && !o->census.unsure[i].until;)
        o->census.unsure[i].until = until;
}

void observer_on_ack(struct observer *o, uint64_t acked)
{
    if (!o)
        return;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < o->census.n_unsure; i++)
        if (!o->census.unsure[i].until || o->census.unsure[i].until > acked)
            o->census.unsure[kept++] = o->census.unsure[i];
    o->census.n_unsure = kept;
}

void observer_on_peer_close(struct observer *o)
{
    if (o)
        o->census.closes++;
    if (!o || !o->census.n_unsure)
        return;
    /* The app side may have dropped the reply that was to tell these: tell them here. */
    struct buf fact = { 0 };
    for (uint32_t i = 0; i < o->census.n_unsure; i++)
        predict_fact_known_atom(o->s->predict, &fact, o->census.unsure[i].atom);
    log_debug("observer: a client went away: %u atoms left to replies told again", o->census.n_unsure);
    o->census.n_unsure = 0;
    send_session_fact(o, &fact);
    buf_free(&fact);
}

static void census_answer(struct observer *o, const struct pending *p, const uint8_t *msg, uint32_t size, bool error)
{
    if (!error && (uint32_t)ld16(msg + 8, false) + 32 <= size && p->window == o->census.next) {
        /* A client's own atom is told by its reply. Another's by the hash of its name, not the
         * name: mostly a font's properties, which nobody asks for by name; two bytes keep the
         * census whole (docs/PROTOCOL.md 3.2). One fact for the whole look. */
        bool hashed = !census_leave_to_reply(o, p->window);
        if (hashed && o->census.hashes.len >= CENSUS_FACT_BYTES)
            send_session_fact(o, &o->census.hashes);
        if (hashed && o->census.hashes.len && o->census.hash_next != p->window)
            send_session_fact(o, &o->census.hashes); /* a fact's atoms follow each other */
        if (hashed) {
            predict_fact_atom_hash(&o->census.hashes, p->window, (const char *)msg + 32, ld16(msg + 8, false));
            o->census.hash_next = p->window + 1;
            o->census.any_hashed = true;
        }
        log_debug("observer: atom %u is new: %s", p->window, hashed ? "told by its name's hash" : "its reply tells it");
        o->census.next = p->window + 1;
        uint32_t id = o->census.next;
        send_request(o, 17, &id, 1, (struct pending){ .kind = P_PROBE, .tag = S_POLL, .window = id });
        return;
    }
    o->census.polling = false;
    send_session_fact(o, &o->census.hashes); /* ahead of the census that counts them */
    /* Atoms only left to replies: the app side's census grows as it learns them in order. */
    if (o->census.next != o->census.told && o->census.any_hashed) {
        struct buf fact = { 0 };
        predict_fact_census(&fact, o->census.next);
        send_session_fact(o, &fact);
        buf_free(&fact);
        o->census.told = o->census.next;
    }
    o->census.any_hashed = o->census.for_setup = false;
    release_held(o);
}

static void census_hook(void *data)
{
    struct observer *o = data;
    census_mark_unsure(o);
    if (o->broken || !o->census.next)
        return;
    uint64_t now = o->s->now();
    if (!o->census.polling && now >= o->census.due_ns)
        census_poll(o);
    loop_wake_by(o->s->loop, o->census.polling ? now + CENSUS_POLL_NS : o->census.due_ns);
}

/* Every probe has been answered: the clients held back may have their setup requests go. */
static void probe_finish(struct observer *o)
{
    if (!o->probe.active) {
        if (o->broken)
            o->census.polling = false;
        if (!o->census.polling)
            release_held(o);
        return;
    }
    o->probe.active = false;
    send_session_fact(o, &o->probe.atoms);
    if (o->probe.atom_bad && !o->broken) {
        /* Every atom below the first BadAtom has been told. */
        o->census.next = o->census.told = o->probe.atom_bad;
        o->census.due_ns = o->s->now() + CENSUS_POLL_NS;
        struct buf fact = { 0 };
        predict_fact_census(&fact, o->census.next);
        send_session_fact(o, &fact);
        buf_free(&fact);
    }
    buf_free(&o->probe.atoms);
    buf_free(&o->probe.names);
    for (size_t k = 0; k < N_PROBES; k++)
        buf_free(&o->probe.keys[k]);
    log_debug("observer: told the app side %u extensions, %u atoms, %u handshake replies, %u root properties, "
              "%u colour names%s, %u fonts in %.1f ms", o->probe.n_ext, o->probe.n_atoms, o->probe.n_hs,
              o->probe.n_props, o->probe.n_colors, o->probe.colormap && !o->probe.colors_bad ? " (TrueColor checked)" : "",
              o->probe.n_fonts, (double)(o->s->now() - o->probe.start_ns) / 1e6);
    release_held(o);
}

/* The extension names: the server's list, those it lacks that xcb-proto names, and a few more. */
static void probe_extensions(struct observer *o, const uint8_t *list, uint32_t size)
{
    struct rd r = rd_make(list, size, false);
    struct buf *names = &o->probe.names; /* counted strings */
    uint8_t len;
    const uint8_t *name;
    if (!rd_skip(&r, 32))
        for (unsigned i = 0; i < list[1] && !rd_u8(&r, &len) && !rd_bytes(&r, &name, len); i++) {
            uint8_t *slot = buf_append_space(names, 1u + len); /* whole, or not at all */
            if (slot) {
                slot[0] = len;
                memcpy(slot + 1, name, len);
            }
        }
    size_t listed = names->len;
    static const char *const others[] = { "XFree86-Bigfont" }; /* Xlib asks when it loads a font */
    for (size_t e = 0; e < xp_n_extensions + sizeof others / sizeof *others; e++) {
        const char *xname = e < xp_n_extensions ? xp_extensions[e].xname : others[e - xp_n_extensions];
        size_t n = strlen(xname);
        bool seen = n > 255;
        for (size_t at = 0; at < listed && !seen; at += 1u + buf_head(names)[at])
            seen = buf_head(names)[at] == n && !memcmp(buf_head(names) + at + 1, xname, n);
        if (!seen) {
            uint8_t *slot = buf_append_space(names, 1u + n);
            if (slot) {
                slot[0] = (uint8_t)n;
                memcpy(slot + 1, xname, n);
            }
        }
    }
    for (size_t at = 0; at < names->len; at += 1u + buf_head(names)[at]) {
        uint8_t body[260] = { 0 };
        st16(body, buf_head(names)[at], false);
        memcpy(body + 4, buf_head(names) + at + 1, buf_head(names)[at]);
        probe_send(o, XW_OP_QUERY_EXTENSION, 0, body, (uint16_t)(4 + buf_head(names)[at]), S_QE, (uint32_t)at);
        o->probe.qe_left++;
    }
}

/* All QueryExtension answers are in: the handshakes of the extensions present. */
static void probe_handshakes(struct observer *o)
{
    for (size_t k = 0; k < N_PROBES; k++) {
        if (!o->probe.majors[k])
            continue;
        size_t f = k; /* the extension's first probe holds its key */
        while (f > 0 && !strcmp(probes[f - 1].ext, probes[k].ext))
            f--;
        uint16_t units = (uint16_t)(1 + (probes[k].body_len + 3) / 4);
        uint8_t rq[28] = { o->probe.majors[k], probes[k].minor };
        st16(rq + 2, units, false);
        memcpy(rq + 4, probes[k].body, probes[k].body_len);
        buf_append(&o->probe.keys[f], rq, 4u * units); /* the key of probe k: a prefix of this */
        probe_send(o, o->probe.majors[k], probes[k].minor, probes[k].body, probes[k].body_len, S_HS, (uint32_t)k);
    }
}

static void probe_answer(struct observer *o, const struct pending *p, const uint8_t *msg, bool error)
{
    uint32_t size = error ? 32 : 32 + 4 * ld32(msg + 4, false);
    struct buf fact = { 0 };
    switch ((enum probe_step)p->tag) {
    case S_FONT:                /* an error: the font does not open (not counted as outstanding) */
        if (error && p->window < 32)
            o->probe.fonts_bad |= 1u << p->window;
        return;
    case S_POLL:                /* not part of the probes at start */
        census_answer(o, p, msg, size, error);
        return;
    case S_XKB_MAP:
        xkb_map_answer(o, p, msg, size, error);
        return;
    case S_COLOR:
        probe_color_answer(o, p, msg, size, error);
        break;
    case S_FONTS_DONE:
        probe_fonts_done(o);
        break;
    case S_FONT_QUERY:          /* as a font learnt in an earlier session (FACT_FONT, learnt.h) */
        if (!error && p->window < sizeof probe_font_names / sizeof *probe_font_names &&
            predict_fact_reply(&fact, FACT_FONT, false, (const uint8_t *)probe_font_names[p->window],
                               strlen(probe_font_names[p->window]), msg, size) == 0)
            send_session_fact(o, &fact);
        break;
    case S_LIST:
        if (!error)
            probe_extensions(o, msg, size);
        break;
    case S_QE: {
        const uint8_t *names = buf_head(&o->probe.names);
        uint8_t len = names[p->window];
        const char *name = (const char *)names + p->window + 1;
        if (!error && size == 32) {
            uint8_t reply[32];
            memcpy(reply, msg, 32);
            if (xstream_extension_hidden(name, len))
                memset(reply + 8, 0, 4); /* as clients see it (xstream.c) */
            for (size_t k = 0; k < N_PROBES; k++)
                if (reply[8] && strlen(probes[k].ext) == len && !memcmp(probes[k].ext, name, len))
                    o->probe.majors[k] = reply[9];
            if (reply[8] && len == 9 && !memcmp(name, "XKEYBOARD", 9)) {
                o->xkb.major = reply[9];
                o->xkb.event = reply[10];
            }
            predict_fact_extension(&fact, name, len, reply);
            send_session_fact(o, &fact);
            o->probe.n_ext++;
        }
        if (!--o->probe.qe_left)
            probe_handshakes(o);
        break;
    }
    case S_ATOM:
        if (error && (!o->probe.atom_bad || p->window < o->probe.atom_bad))
            o->probe.atom_bad = p->window;
        if (error || o->probe.atoms_end) {
            o->probe.atoms_end = true; /* BadAtom: past the last atom */
        } else if ((uint32_t)ld16(msg + 8, false) + 32 <= size) {
            predict_fact_atom(&o->probe.atoms, p->window, (const char *)msg + 32, ld16(msg + 8, false));
            o->probe.n_atoms++;
            if (o->probe.atoms.len >= PROBE_FACT_BYTES)
                send_session_fact(o, &o->probe.atoms);
        }
        if (p->window + 1 == o->probe.atom_next && !o->probe.atoms_end && o->probe.atom_next <= PROBE_MAX_ATOMS)
            probe_atoms(o); /* the batch is all atoms: there may be more */
        break;
    case S_HS: {
        size_t k = p->window;
        size_t f = k;
        while (f > 0 && !strcmp(probes[f - 1].ext, probes[k].ext))
            f--;
        if (error)
            o->probe.hs_dead[f] = true; /* what follows depends on it, and clients will not send it */
        if (!error && !o->probe.hs_dead[f]) {
            /* key: this extension's probes up to this one */
            size_t key_len = 0;
            for (size_t j = f; j <= k; j++)
                key_len += 4u * (1 + (probes[j].body_len + 3) / 4);
            predict_fact_exchange(&fact, false, buf_head(&o->probe.keys[f]), key_len, msg, size);
            send_session_fact(o, &fact);
            o->probe.n_hs++;
            if (!strcmp(probes[k].ext, "XKEYBOARD") && probes[k].minor == 8)
                xkb_watch(o, buf_head(&o->probe.keys[f]), key_len);
            uint8_t major, first_event;
            if ((k + 1 == N_PROBES || strcmp(probes[k + 1].ext, probes[k].ext)) && o->s->predict &&
                predict_extension(o->s->predict, probes[k].ext, &major, &first_event))
                statewatch_start(o->s->statewatch, o, probes[k].ext, buf_head(&o->probe.keys[f]), key_len, major,
                                 first_event, o->root); /* its last handshake: RANDR's and XInput's state */
        }
        break;
    }
    case S_PROPS: {
        uint32_t n = error ? 0 : ld16(msg + 8, false);
        if (error || 32 + 4ull * n > size)
            break;
        o->props_watched = true;
        o->probe.props_left = n;
        for (uint32_t i = 0; i < n; i++) {
            /* window, property, type Any, offset 0, length: the largest value kept */
            uint32_t words[5] = { o->root, ld32(msg + 32 + 4 * i, false), 0, 0, 256u * 1024 / 4 };
            o->probe.outstanding++;
            send_request(o, 20 /* GetProperty */, words, 5,
                         (struct pending){ .kind = P_PROBE, .tag = S_PROP, .window = words[1] });
        }
        if (!n)
            goto props_done;
        break;
    }
    case S_PROP: {
        uint32_t format = error ? 0 : msg[1], units = error ? 0 : ld32(msg + 16, false);
        uint64_t bytes = (uint64_t)units * (format / 8);
        if (error || ld32(msg + 12, false) /* bytes after: too large */ || !format || 32 + bytes > size) {
            predict_fact_property(&fact, o->root, p->window, PROP_UNKNOWN, 0, 0, NULL, 0);
        } else {
            predict_fact_property(&fact, o->root, p->window, PROP_VALUE, ld32(msg + 8, false), (uint8_t)format,
                                  msg + 32, (size_t)bytes);
            o->probe.n_props++;
        }
        send_session_fact(o, &fact);
        if (--o->probe.props_left)
            break;
    props_done:
        /* Every other property of the root does not exist (until a PropertyNotify says otherwise). */
        predict_fact_property(&fact, o->root, 0, PROP_ABSENT, 0, 0, NULL, 0);
        send_session_fact(o, &fact);
        o->probe.props_probing = false;
        if (o->changed_overflow) {
            predict_fact_property(&fact, o->root, 0, PROP_UNKNOWN, 0, 0, NULL, 0);
            send_session_fact(o, &fact);
        }
        for (uint32_t i = 0; i < o->n_changed; i++)
            property_changed(o, o->changed[i]);
        o->n_changed = 0;
        break;
    }
    }
    buf_free(&fact);
    if (!--o->probe.outstanding)
        probe_finish(o);
}

/* Asks the server what clients ask at start; the answers become FACT frames (channel 0) as
 * they come, and clients that connect meanwhile send their setup requests only after. */
static void probe_start(struct observer *o)
{
    o->probe.active = true;
    o->probe.start_ns = o->s->now();
    o->probe.atom_next = 1;
    probe_send(o, 99 /* ListExtensions */, 0, NULL, 0, S_LIST, 0);
    probe_atoms(o); /* atoms are numbered from 1 without gaps: ask until the first BadAtom */
    probe_colors(o);
    probe_fonts(o);
    if (loop_add_before_sleep(o->s->loop, census_hook, o) == 0)
        o->census.hooked = true;
    if (o->root) {
        /* Watch the root's properties first, then read them. */
        uint32_t select[3] = { o->root, 0x800 /* CWEventMask */, PROPERTY_CHANGE_MASK };
        send_request(o, OP_CHANGE_WINDOW_ATTRIBUTES, select, 3, (struct pending){ .kind = P_SELECT });
        o->probe.props_probing = true;
        probe_send(o, 21 /* ListProperties */, 0, &(uint8_t[4]){ (uint8_t)o->root, (uint8_t)(o->root >> 8),
                   (uint8_t)(o->root >> 16), (uint8_t)(o->root >> 24) }, 4, S_PROPS, 0);
    }
    if (o->max_keycode >= o->min_keycode && o->min_keycode >= 8) {
        /* The keyboard: a MappingNotify (every client gets it) says when it changes. */
        o->kb_fetching = true;
        o->probe.keyboard = true;
        o->probe.outstanding++;
        uint32_t kb = o->min_keycode | (uint32_t)(o->max_keycode - o->min_keycode + 1) << 8;
        send_request(o, OP_GET_KEYBOARD_MAPPING, &kb, 1, (struct pending){ .kind = P_KEYMAP });
        send_request(o, OP_GET_MODIFIER_MAPPING, NULL, 0, (struct pending){ .kind = P_MODMAP });
    }
    if (o->s->learnt)
        learnt_probe(o->s->learnt, o); /* what clients asked in earlier sessions */
}

bool observer_hold_setup(struct observer *o, uint32_t channel_id, const struct frame_open *open)
{
    if (o->broken)
        return false;
    if (!o->probe.active) {
        census_poll(o); /* atoms made since the last look are told before this client's setup reply */
        if (!o->census.polling)
            return false;
        o->census.for_setup = true;
    }
    struct held *n = o->n_held == o->cap_held ? realloc(o->held, (o->cap_held * 2 + 4) * sizeof *n) : o->held;
    if (!n)
        return false;
    if (o->n_held == o->cap_held) {
        o->held = n;
        o->cap_held = o->cap_held * 2 + 4;
    }
    o->held[o->n_held++] = (struct held){ channel_id, *open };
    return true;
}

/* ---------------------------------------------------------------- windows and facts */

static struct owin *win_find(struct observer *o, uint32_t id)
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
    frame_encode(&o->s->link_tx, FRAME_FACT, ch->id, buf_head(payload), payload->len);
    o->s->stats.link_frames_out++;
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
static void watch_root(struct observer *o)
{
    if (o->root)
        send_request(o, OP_GET_WINDOW_ATTRIBUTES, &o->root, 1, (struct pending){ .kind = P_ROOT_ATTRS });
}

static void on_root_attributes(struct observer *o, const uint8_t *msg, bool error)
{
    uint8_t now = error ? OWNWIN_REDIRECT_UNKNOWN
                        : (ld32(msg + 32, false) & SUBSTRUCTURE_REDIRECT_MASK) ? OWNWIN_REDIRECT_YES : OWNWIN_REDIRECT_NO;
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
static void own_unwatch_all(struct observer *o)
{
    if (o->own_unwatched)
        return;
    o->own_unwatched = true;
    for (struct channel *ch = o->s->channels; ch; ch = ch->next)
        if (!ch->dead) {
            send_watch_fact(o, ch);
            if (ch->watches_pending) { /* no watch will be in place: what waits for one goes on */
                ch->watches_pending = 0;
                channel_resume_requests(ch);
            }
        }
}

/* Another client changed what of a client's window (OWNWIN_GEOMETRY...), or its properties. */
static void own_foreign(struct observer *o, struct channel *ch, uint32_t window, uint8_t what, bool props)
{
    struct buf fact = { 0 };
    props |= (what & OWNWIN_PROPERTIES) != 0;
    what &= OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES;
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
        log_debug("observer: window 0x%x of channel %u changed by another client:%s%s%s", window, ch->id,
                  what & OWNWIN_GEOMETRY ? " geometry" : "", what & OWNWIN_ATTRIBUTES ? " attributes" : "",
                  props ? " properties" : "");
}

/* A window of ch the observer cannot watch: nothing about it is answered at the app side. */
static void own_unwatchable(struct observer *o, struct channel *ch, uint32_t window)
{
    if (ch)
        own_foreign(o, ch, window,
                    ownwin_event_foreign(&ch->own, window, OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES | OWNWIN_PROPERTIES), false);
}

/* The observer's events on a client's window that may come from another client. */
static void own_event(struct observer *o, struct owin *w, uint8_t code, const uint8_t *ev)
{
    struct channel *ch = channel_find(o->s, w->channel);
    uint32_t window = ld32(ev + 8, false);
    if (!ch || (code != EV_PROPERTY && window != w->id))
        return; /* about a child: its own watch reports it */
    switch (code) {
    case EV_PROPERTY: {
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
    case EV_CONFIGURE:
        if (ownwin_event_configure(&ch->own, w->id))
            own_foreign(o, ch, w->id, OWNWIN_GEOMETRY, false);
        break;
    case EV_MAP:
    case EV_UNMAP:
        if (ownwin_event_map(&ch->own, w->id))
            own_foreign(o, ch, w->id, OWNWIN_ATTRIBUTES, false);
        break;
    case EV_REPARENT:
        own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES), false);
        break;
    case EV_GRAVITY: /* the client's own resizes left such children unknown already */
        own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_GEOMETRY), false);
        break;
    case EV_DESTROY: /* the client's own DestroyWindow has left the model already */
        own_unwatchable(o, ch, w->id);
        break;
    default:
        break;
    }
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
    if (w->toplevel)
        watch_root(o); /* a window manager may have come since */
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
    /* CreateWindow: wid, parent, x, y, width, height, border, class, visual, ... InputOnly
     * windows too: their properties and geometry may be answered at the app side. */
    if (o->broken || cls->ext || cls->major != XOP_CREATE_WINDOW || len < 24)
        return;
    uint32_t id = ld32(b, msb);
    if (o->n_wins >= OBSERVER_MAX_WINDOWS) {
        own_unwatchable(o, ch, id);
        return;
    }
    log_debug("observer: channel %u creates window 0x%x (class %u)", ch->id, id, ld16(b + 18, msb));
    if (win_find(o, id))
        return;
    struct owin *n = realloc(o->wins, (o->n_wins + 1) * sizeof *n);
    struct idmap_entry *e = n ? (o->wins = n, idmap_put(&o->by_id, id)) : NULL;
    if (!e)
        return;
    e->a = o->n_wins;
    struct owin *w = &o->wins[o->n_wins++];
    *w = (struct owin){ .id = id, .channel = ch->id, .visibility = -1, .unsent = true,
                        .toplevel = ld32(b + 4, msb) == o->root };
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
    /* Until the watch is in place, a map could make the window visible unseen, and the events
     * of the client's own changes would not reach us to be told from another client's (the
     * display side counts them as they are written); GetWindowAttributes would not yet see
     * our selection, which the app side's answer includes. */
    if (!ch->watches_pending || o->broken)
        return false;
    switch (major) {
    case OP_REPARENT_WINDOW: case OP_MAP_WINDOW: case OP_MAP_SUBWINDOWS: case 10: case 11: /* Unmap(Sub)Window */
    case 12: case 18: case 19: case 20: case 114: /* ConfigureWindow, Change/Delete/GetProperty, RotateProperties */
    case OP_GET_WINDOW_ATTRIBUTES:
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
        own_unwatchable(o, ch, w->id);
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
    statewatch_on_event(o->s->statewatch, o, ev, 32);
    uint32_t event = ld32(ev + 4, false), window = ld32(ev + 8, false);
    if (code == EV_PROPERTY && event == o->root) {
        if (!o->probe.props_probing)
            property_changed(o, window /* the atom */);
        else if (o->n_changed < PROBE_MAX_CHANGED) /* told after the values, which may predate it */
            o->changed[o->n_changed++] = window;
        else
            o->changed_overflow = true;
        return;
    }
    if ((code == EV_MAPPING && ev[4] != 2 /* Pointer */) ||
        (o->xkb.event && code == o->xkb.event && ev[1] <= 1 /* NewKeyboardNotify, MapNotify */)) {
        keyboard_changed(o);
        return;
    }
    struct owin *w = win_find(o, event); /* the window we selected on: Visibility's own, or the parent's */
    if (!w)
        return;
    own_event(o, w, code, ev); /* before a DestroyNotify removes w */
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
    struct owin *w = p->kind == P_SYNC || p->kind == P_KEYMAP || p->kind == P_MODMAP || p->kind == P_PROBE ||
                             p->kind >= P_ROOT_ATTRS ? NULL : win_find(o, p->window);
    switch (p->kind) {
    case P_ASK:
        ask_answer(o, p, msg, error);
        break;
    case P_ROOT_ATTRS:
        on_root_attributes(o, msg, error);
        break;
    case P_SPARE_ROOT_ATTRS:
        o->root_masks = error ? 0 : ld32(msg + 32, false);
        break;
    case P_SPARE_ROOT_GEOMETRY:
        spare_check_root(o->s, p->window, error ? 0 : o->root_masks, error ? 0 : ld16(msg + 16, false),
                         error ? 0 : ld16(msg + 18, false));
        break;
    case P_PROBE:
        probe_answer(o, p, msg, error);
        break;
    case P_KEYMAP:
        free(o->kb_keymap);
        o->kb_keymap = NULL;
        uint32_t size = error ? 0 : 32 + 4 * ld32(msg + 4, false);
        if (size && (o->kb_keymap = malloc(size))) {
            memcpy(o->kb_keymap, msg, size);
            o->kb_keymap_size = size;
        }
        break;
    case P_MODMAP:
        o->kb_fetching = false;
        if (!error)
            send_keyboard(o, o->kb_keymap, o->kb_keymap_size, msg, 32 + 4 * ld32(msg + 4, false));
        free(o->kb_keymap);
        o->kb_keymap = NULL;
        if (o->probe.keyboard) {
            o->probe.keyboard = false;
            if (!--o->probe.outstanding)
                probe_finish(o);
        }
        break;
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
            uint32_t channel = w->channel, id = w->id;
            win_remove(o, w);
            own_unwatchable(o, channel_find(o->s, channel), id);
            watch_done(o, channel);
            break;
        }
        {
            /* The client's changes wait for the watch: the server must agree with the model. */
            struct channel *ch = channel_find(o->s, w->channel);
            if (ch && ownwin_geometry_differs(&ch->own, w->id, (int16_t)ld16(msg + 12, false), (int16_t)ld16(msg + 14, false),
                                              ld16(msg + 16, false), ld16(msg + 18, false), ld16(msg + 20, false)))
                own_foreign(o, ch, w->id, ownwin_event_foreign(&ch->own, w->id, OWNWIN_GEOMETRY), false);
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
                if (!ask_more(&p, msg, m.kind == XW_KIND_ERROR)) {
                    o->q_head = (o->q_head + 1) % o->q_cap;
                    o->q_len--;
                }
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
    if (o->broken) {
        probe_finish(o); /* no more answers: the clients held back go on without them */
        own_unwatch_all(o);
        fontset_give_up(o->s->fontset);
    }
}

/* ---------------------------------------------------------------- requests of others (notice.h) */

void observer_send_quiet(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len)
{
    send_bytes(o, major, minor, body, body_len, (struct pending){ .kind = P_SELECT });
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
    if (o->broken)
        return -EPIPE;
    if (size < 4 || size % 4 || size > sizeof words + 4 || ld16(req + 2, false) * 4u != size)
        return -EINVAL;
    for (uint32_t i = 0; i < size / 4 - 1; i++)
        words[i] = ld32(req + 4 + 4 * i, false);
    bool counted = fn && o->probe.active;
    if (counted)
        o->probe.outstanding++;
    send_request_minor(o, req[0], req[1], words, size / 4 - 1,
                       (struct pending){ .kind = P_ASK, .fn = fn, .ctx = ctx, .tag = tag,
                                         .multi = req[0] == 50 /* ListFontsWithInfo */, .counted = counted });
    return 0;
}

/* A ListFontsWithInfo's replies before its last (the one with an empty name) keep it pending. */
static bool ask_more(const struct pending *p, const uint8_t *msg, bool error)
{
    return p->kind == P_ASK && p->multi && !error && msg[1] != 0;
}

static void ask_answer(struct observer *o, const struct pending *p, const uint8_t *msg, bool error)
{
    struct buf fact = { 0 };
    if (p->fn)
        p->fn(p->ctx, p->tag, msg, error ? 32 : 32 + 4 * ld32(msg + 4, false), error, &fact);
    if (o->s->predict)
        send_session_fact(o, &fact);
    buf_free(&fact);
    if (p->counted && !ask_more(p, msg, error) && !--o->probe.outstanding)
        probe_finish(o);
}
