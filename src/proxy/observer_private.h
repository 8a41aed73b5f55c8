/* observer_private.h -- what the observer's files share: its state, the replies it awaits,
 * the windows it watches, and the functions one file calls in another. observer.c is the
 * X connection (connect, pending replies, reading, dispatch); observer_probe.c the facts
 * probed at start and kept current (extensions, atoms and the atom census, handshakes,
 * colours, fonts, the keyboard); observer_windows.c the watches of clients' windows and
 * the facts about them (ownwin.h, expose.h). Not for use outside these files. */
#ifndef TINCAN_OBSERVER_PRIVATE_H
#define TINCAN_OBSERVER_PRIVATE_H

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
#include "proxy/color_table.h"
#include "proxy/expose.h"
#include "proxy/fontset.h"
#include "proxy/learnt.h"
#include "proxy/statewatch.h"
#include "proxy/session_private.h"
#include "proxy/spare.h"
#include "x11/xdisplay.h"
#include "x11/xwire.h"
#include "xproto_tables.h"
#include "xproto_wire.h"


#define OBSERVER_CONNECT_TIMEOUT_MS 5000
#define OBSERVER_MAX_WINDOWS 4096u
#define OBSERVER_MAX_KIDS 8u         /* mapped children remembered; more: never clean */
#define OBSERVER_WATCH_TRIES 8       /* BadWindow: the client's CreateWindow is not yet done */
#define PROBE_MAX_ATOMS 16384u       /* atoms asked for at most */
#define PROBE_ATOM_BATCH 512u
#define PROBE_COLOR_TABLE_MAX_OFF 64u /* more colour table entries unconfirmed: not the server's database */
#define PROBE_FACT_BYTES (64u * 1024) /* atoms per FACT frame: about this many bytes */
#define CENSUS_POLL_NS (500u * 1000000ull) /* atoms made by clients outside tincan: looked for this often */
#define CENSUS_FACT_BYTES 4096u      /* a look's FACT_ATOM_HASHES: about this long at most */
#define CENSUS_MAX_UNSURE 4096u      /* atoms left to replies the app side has not acknowledged */

#define PROPERTY_CHANGE_MASK XP_EVENT_MASK_PROPERTY_CHANGE
#define PROBE_MAX_CHANGED 64u        /* root property changes remembered during the probes */
#define WATCH_MASK (XP_EVENT_MASK_VISIBILITY_CHANGE | XP_EVENT_MASK_STRUCTURE_NOTIFY | \
                    XP_EVENT_MASK_SUBSTRUCTURE_NOTIFY | PROPERTY_CHANGE_MASK)
#define SUBSTRUCTURE_REDIRECT_MASK XP_EVENT_MASK_SUBSTRUCTURE_REDIRECT

enum pending_kind { P_SELECT, P_ATTRS, P_GEOMETRY, P_SYNC, P_KEYMAP, P_MODMAP, P_PROBE, P_ROOT_ATTRS,
                    P_SPARE_ROOT_ATTRS, P_SPARE_ROOT_GEOMETRY, P_ASK };
/* P_PROBE's steps (pending.tag): ListExtensions, QueryExtension, GetAtomName, a handshake,
 * ListProperties and GetProperty of the root. */
enum probe_step { S_LIST, S_QE, S_ATOM, S_HS, S_PROPS, S_PROP, S_COLOR, S_FONT, S_FONT_QUERY, S_FONTS_DONE, S_POLL,
                  S_XKB_MAP };
#define PROBE_SLOTS 17               /* handshake probes (probes[] below) */

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
    struct {                  /* the probes made when the connection opens (obs_probe_start) */
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
        uint8_t color_off[COLOR_TABLE_OFF_BYTES]; /* colour table entries the server did not confirm */
        uint32_t n_colors_off;
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
    struct observer_listener listeners[OBSERVER_MAX_LISTENERS];
    size_t n_listeners;
};

/* Tells every listener that has the hook: OBS_TELL(o, on_event, o, ev, size). */
#define OBS_TELL(o, hook, ...)                                                   \
    do {                                                                         \
        for (size_t obs_i_ = 0; obs_i_ < (o)->n_listeners; obs_i_++)             \
            if ((o)->listeners[obs_i_].hook)                                     \
                (o)->listeners[obs_i_].hook((o)->listeners[obs_i_].ctx, __VA_ARGS__); \
    } while (0)

/* observer.c */
void obs_send_request_minor(struct observer *o, uint8_t major, uint8_t minor, const uint32_t *words, unsigned n_words, struct pending p);
void obs_send_request(struct observer *o, uint8_t major, const uint32_t *words, unsigned n_words, struct pending p);

/* observer_probe.c */
void obs_send_session_fact(struct observer *o, struct buf *payload);
void obs_property_changed(struct observer *o, uint32_t property);
bool obs_send_keyboard(struct observer *o, const uint8_t *km, uint32_t km_size, const uint8_t *mm, uint32_t mm_size);
void obs_send_bytes(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len, struct pending p);
void obs_keyboard_changed(struct observer *o);
void obs_census_hook(void *data);
void obs_probe_finish(struct observer *o);
void obs_probe_answer(struct observer *o, const struct pending *p, const uint8_t *msg, size_t size, bool error);
void obs_probe_start(struct observer *o);

/* observer_windows.c */
struct owin *obs_win_find(struct observer *o, uint32_t id);
void obs_watch_root(struct observer *o);
void obs_on_root_attributes(struct observer *o, const uint8_t *msg, size_t size, bool error);
void obs_own_unwatch_all(struct observer *o);
void obs_own_foreign(struct observer *o, struct channel *ch, uint32_t window, uint8_t what, bool props);
void obs_own_unwatchable(struct observer *o, struct channel *ch, uint32_t window);
void obs_own_event(struct observer *o, struct owin *w, uint8_t code, uint32_t window); /* PropertyNotify: its atom */
void obs_send_fact(struct observer *o, struct owin *w, bool gone, bool force);
void obs_win_remove(struct observer *o, struct owin *w);
void obs_watch_done(struct observer *o, uint32_t channel_id);
void obs_send_watch(struct observer *o, struct owin *w);

#endif
