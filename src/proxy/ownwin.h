/* ownwin.h -- a client's own windows as its requests made them: geometry, attributes and
 * properties, so the app side can answer GetGeometry, GetWindowAttributes and GetProperty
 * on them without crossing the link (docs/PROTOCOL.md 3.4); and its pixmaps' geometry. Both sides keep the same model
 * from the same requests; the display side's observer tells the app side (FACT kinds 10-12)
 * when another client changed one of these windows, and the app side stops answering what
 * that change touched. The display side checks every answer against the server's reply.
 * Workload: a handful of windows per client, a few small properties each. */
#ifndef TINCAN_OWNWIN_H
#define TINCAN_OWNWIN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/idmap.h"
#include "link/frame.h"
#include "proxy/predict.h"
#include "x11/xstream.h"

#define OWNWIN_MAX_WINDOWS 1024u          /* per client; beyond, new windows are not answered */
#define OWNWIN_MAX_PIXMAPS 4096u          /* per client, alive at once; beyond, new ones are not */
#define OWNWIN_MAX_PROPS 64u              /* properties remembered per window */
#define OWNWIN_MAX_PROP_BYTES (64u * 1024) /* property values per window; beyond, forgotten */
#define OWNWIN_MAX_CLIENT_BYTES (1024u * 1024) /* ... and per client */
#define OWNWIN_MAX_SCREENS 8u

/* FACT kinds on a client's channel (display -> app): their numbers and fields are in
 * link/frame.h's one table. */
enum {
    OWNWIN_FACT_PROPERTY = FACT_OWN_PROPERTY,
    OWNWIN_FACT_WINDOW = FACT_OWN_WINDOW,
    OWNWIN_FACT_WATCH = FACT_OWN_WATCH,
};
/* What another client changed of a window. OWN_WINDOW's `what` carries GEOMETRY, ATTRIBUTES
 * and CHILDREN as these bits; PROPERTIES (all of them) goes as an OWN_PROPERTY fact. */
enum { OWNWIN_GEOMETRY = 1, OWNWIN_ATTRIBUTES = 2, OWNWIN_PROPERTIES = 4, OWNWIN_CHILDREN = 8 };
enum { OWNWIN_REDIRECT_NO = 0, OWNWIN_REDIRECT_YES = 1, OWNWIN_REDIRECT_UNKNOWN = 2 };

struct ownwin_prop {
    uint32_t atom, type;
    uint8_t format;
    bool unknown;             /* forgotten (too large, deleted by GetProperty, rotated) */
    bool foreign;             /* app side: another client changed it */
    uint32_t len;             /* bytes */
    uint8_t *data;
    uint32_t events_due;      /* display side: PropertyNotify the client's own requests will cause */
};

struct ownwin_win {
    uint32_t id, parent, root;
    int16_t x, y;
    uint16_t width, height, border;
    uint8_t depth, klass;     /* klass: 1 InputOutput, 2 InputOnly */
    uint32_t visual, colormap;
    uint8_t backing_store, bit_gravity, win_gravity, save_under, override_redirect;
    uint32_t backing_planes, backing_pixel, event_mask;
    uint16_t dont_propagate;
    bool mapped;
    uint32_t stack;           /* when it was made: among its siblings, a later one is above */
    bool order_unknown;       /* its children's stacking: a restack or circulate, not followed */
    bool kids_unknown;        /* a child the model could not keep (no room) */
    bool kids_foreign;        /* app side: another client made or moved a window into it; display: told */
    bool dubious;             /* made by a request the model found may fail: it may not exist */
    bool geom_unknown;        /* the client's own requests left it unknowable (reparent, gravity) */
    bool attrs_unknown;
    bool geom_foreign, attrs_foreign; /* another client changed it (app side: a fact; display: told) */
    bool props_unknown;       /* every property (rotated, no room) */
    bool props_foreign;       /* app side: every property changed by another client */
    uint32_t configures_due, maps_due; /* display side: events the client's own requests will cause */
    uint32_t prop_bytes;
    uint32_t n_props;
    struct ownwin_prop *props;
};

struct ownwin_screen {
    uint32_t root, colormap, visual;
    uint32_t depths;          /* bit d - 1: the screen supports depth d (its allowed depths) */
    uint8_t depth;
};

struct ownwin_state {
    struct ownwin_win *wins;  /* dense */
    uint32_t n_wins, cap_wins;
    struct idmap by_id;       /* window -> index */
    struct idmap pixmaps;     /* the client's pixmaps: a root, b width | height << 16, c depth */
    uint32_t prop_bytes;      /* property values held, all windows */
    struct ownwin_screen screens[OWNWIN_MAX_SCREENS];
    uint32_t n_screens;
    uint32_t stack_clock;     /* windows made so far (their stacking) */
    bool tree_unknown;        /* the client reparented a window: parents no longer followed */
    bool shaped;              /* the client changed a shape (SHAPE): pointer containment unknown */
    bool display_side;        /* counts the events the client's requests cause */
    /* From FACT_WATCH: */
    uint32_t observer_mask;   /* what the display side's observer selects on each window; 0: none */
    uint32_t watched_root;
    uint8_t root_redirect;    /* of watched_root: whether a window manager redirects its children */
};

void ownwin_init(struct ownwin_state *o, bool display_side);
void ownwin_free(struct ownwin_state *o);
/* The client's connection setup reply: the screens' roots, depths, visuals, colormaps. */
void ownwin_learn_setup(struct ownwin_state *o, const uint8_t *setup, size_t size, bool msb);
/* A whole request of the client on its way to the server, after any local answer to it. */
void ownwin_on_request(struct ownwin_state *o, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                       bool msb);
/* Whether this request on one of the client's windows will fail, or may, as far as the
 * model knows (an Append of another type: BadMatch): then it is not quiet (predict.h). */
bool ownwin_may_fail(const struct ownwin_state *o, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                     bool msb);
/* If the reply to this request (GetGeometry, GetWindowAttributes, GetProperty, QueryTree,
 * TranslateCoordinates) is known from
 * the model, appends it to out. verify (display side): what the app side would have answered,
 * whatever the facts since (a later fact does not undo an answer given). */
bool ownwin_answer(const struct ownwin_state *o, const struct predictor *atoms, const struct msg_class *cls,
                   const uint8_t *req, uint32_t size, uint16_t seq, bool msb, bool verify, struct buf *out);
/* App side: a FACT payload of kind 10..12 (o NULL: only checked). 0 or -EBADMSG. */
int ownwin_on_fact(struct ownwin_state *o, const uint8_t *payload, size_t len);
/* Whether a FACT payload is of one of these kinds. */
bool ownwin_is_fact(const uint8_t *payload, size_t len);
/* FACT payload encoders (display side). 0 or -ENOMEM. */
int ownwin_fact_property(struct buf *out, uint32_t window, uint32_t atom);
int ownwin_fact_window(struct buf *out, uint32_t window, uint8_t what);
int ownwin_fact_watch(struct buf *out, uint32_t observer_mask, uint32_t root, uint8_t redirect);

/* Display side, the observer's events on the client's window: true when another client
 * caused it and the app side has not been told yet (it then counts as told). */
bool ownwin_event_property(struct ownwin_state *o, uint32_t window, uint32_t *atom); /* *atom 0: all */
bool ownwin_event_configure(struct ownwin_state *o, uint32_t window);
bool ownwin_event_map(struct ownwin_state *o, uint32_t window);
/* A change no request of the client causes on a window it has not destroyed (a reparent, a
 * gravity move, a destruction), or a window that cannot be watched: returns the aspects
 * (OWNWIN_GEOMETRY, OWNWIN_ATTRIBUTES, OWNWIN_PROPERTIES) not yet told. */
uint8_t ownwin_event_foreign(struct ownwin_state *o, uint32_t window, uint8_t what);
/* Display side: whether the window's model geometry differs from what the server says. */
bool ownwin_geometry_differs(const struct ownwin_state *o, uint32_t window, int16_t x, int16_t y, uint16_t width,
                             uint16_t height, uint16_t border);
/* Whether the window is one of the client's, alive in the model. */
bool ownwin_known(const struct ownwin_state *o, uint32_t window);
/* A window of the client's the model holds, made without doubt, of class InputOutput: its
 * visual (CopyFromParent resolved). */
bool ownwin_output_visual(const struct ownwin_state *o, uint32_t window, uint32_t *visual);

#endif
