/* model.c -- the state both ends of a channel direction keep in step: message classes,
 * head sizes and body models per request, and rings of recent messages per class
 * under a byte budget. Must stay deterministic: the decoder replays every decision. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

/* Body models, by the layout of the core protocol's list requests. */
static const struct xc_body_model bm_points = { XC_BM_ELEMS, 2, { 0xff, 0xff } };
static const struct xc_body_model bm_segments = { XC_BM_ELEMS, 4, { 0xff, 0xff, 0, 1 } };
static const struct xc_body_model bm_rects = { XC_BM_ELEMS, 4, { 0xff, 0xff, 0xff, 0xff } };
static const struct xc_body_model bm_arcs = { XC_BM_ELEMS, 6, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
static const struct xc_body_model bm_image = { XC_BM_IMAGE, 0, { 0 } };
static const struct xc_body_model bm_reply = { XC_BM_REPLY, 0, { 0 } };
/* RENDER's TRAP (top l, r, y, bottom l, r, y: 32-bit FIXED, two words each), each field
 * against the previous trap's: a row of traps steps evenly. */
static const struct xc_body_model bm_addtraps = {
    XC_BM_ELEMS, 12, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }
};
static const struct xc_body_model bm_addglyphs = { XC_BM_GLYPHS, 0, { 0 } };
static const struct xc_body_model bm_icons = { XC_BM_ICONS, 0, { 0 } }; /* 32-bit icon lists (icons.c) */
/* CompositeGlyphs8, 16, 32: items of glyph ids of 1, 2 or 4 bytes (in words). */
static const struct xc_body_model bm_items[3] = { { XC_BM_ITEMS, 1, { 0 } }, { XC_BM_ITEMS, 2, { 0 } },
                                                  { XC_BM_ITEMS, 4, { 0 } } };
/* RENDER's TRAPEZOID as 16-bit words (32-bit FIXED values, two words each): top, bottom,
 * left p1 x y, p2 x y, right p1 x y, p2 x y. Bottom and the lines' y follow top and
 * bottom; p2.x follows p1.x; the rest follows the previous trapezoid. */
static const struct xc_body_model bm_traps = {
    XC_BM_TRAPS, 20, { 0xff, 0xff, 0, 1, 0xff, 0xff, 0, 1, 4, 5, 2, 3, 0xff, 0xff, 6, 7, 12, 13, 10, 11 }
};

/* Per core request: its opcode, the fixed part coded as word deltas (0: the first 32 bytes),
 * and the model of what follows it. Wire-frozen (PROTOCOL.md 5): both are written here once
 * and pinned below to xcb-proto's opcode and fixed size, so that a newer xcb-proto cannot
 * change the encoding unseen (the build stops instead). */
#define XC_CORE_HEADS(X)                                                                \
    X(CREATE_WINDOW, 1, 32, NULL)           /* a value list follows */                  \
    X(CHANGE_WINDOW_ATTRIBUTES, 2, 12, NULL)                                            \
    X(CONFIGURE_WINDOW, 12, 12, NULL)                                                   \
    X(INTERN_ATOM, 16, 8, NULL)             /* the name follows */                      \
    X(CHANGE_PROPERTY, 18, 24, &bm_icons)   /* format 32: perhaps icons */              \
    X(OPEN_FONT, 45, 12, NULL)                                                          \
    X(CREATE_GC, 55, 16, NULL)                                                          \
    X(CHANGE_GC, 56, 12, NULL)                                                          \
    X(SET_CLIP_RECTANGLES, 59, 12, &bm_rects)                                           \
    X(POLY_POINT, 64, 12, &bm_points)                                                   \
    X(POLY_LINE, 65, 12, &bm_points)                                                    \
    X(POLY_SEGMENT, 66, 12, &bm_segments)                                               \
    X(POLY_RECTANGLE, 67, 12, &bm_rects)                                                \
    X(POLY_ARC, 68, 12, &bm_arcs)                                                       \
    X(FILL_POLY, 69, 16, &bm_points)                                                    \
    X(POLY_FILL_RECTANGLE, 70, 12, &bm_rects)                                           \
    X(POLY_FILL_ARC, 71, 12, &bm_arcs)                                                  \
    X(PUT_IMAGE, 72, 24, &bm_image)                                                     \
    X(POLY_TEXT8, 74, 16, NULL)                                                         \
    X(POLY_TEXT16, 75, 16, NULL)                                                        \
    X(IMAGE_TEXT8, 76, 16, NULL)                                                        \
    X(IMAGE_TEXT16, 77, 16, NULL)                                                       \
    X(QUERY_EXTENSION, 98, 8, NULL)         /* the name follows */
#define XC_HEAD_ENTRY(name, op, head, body) [op] = { head, body },
#define XC_HEAD_PIN(name, op, head, body)                                                                  \
    _Static_assert(XP_OP_##name == op && XP_##name##_REQ_SIZE == head, "xcodec's head of " #name " is wire-frozen");
static const struct { uint8_t head; const struct xc_body_model *body; } core_req[128] = { XC_CORE_HEADS(XC_HEAD_ENTRY) };
XC_CORE_HEADS(XC_HEAD_PIN)

/* The RENDER requests coded by minor (xcodec_private.h), their heads and elements, frozen alike. */
#define XC_HEAD_TRAPEZOIDS 24 /* op, pictures, source x y; then trapezoids */
#define XC_HEAD_ADDTRAPS 12   /* picture, x and y offsets; then TRAPs */
#define XC_HEAD_GLYPHS 28     /* op, pictures, mask format, glyphset, source x y; then items */
#define XC_HEAD_ADDGLYPHS 12  /* glyphset, count; then ids, GLYPHINFOs and images */
_Static_assert(XC_HEAD_TRAPEZOIDS == XP_RENDER_TRAPEZOIDS_REQ_SIZE && XC_HEAD_ADDTRAPS == XP_RENDER_ADD_TRAPS_REQ_SIZE &&
               XC_HEAD_GLYPHS == XP_RENDER_COMPOSITE_GLYPHS8_REQ_SIZE && XC_HEAD_ADDGLYPHS == XP_RENDER_ADD_GLYPHS_REQ_SIZE,
               "xcodec's RENDER heads are wire-frozen");
/* The body models' elements, in 16-bit words, are the protocol's structures. */
_Static_assert(2 * 2 == XP_POINT_SIZE && 2 * 4 == XP_SEGMENT_SIZE && 2 * 4 == XP_RECTANGLE_SIZE && 2 * 6 == XP_ARC_SIZE &&
               2 * 12 == XP_RENDER_TRAP_SIZE && 2 * 20 == XP_RENDER_TRAPEZOID_SIZE, "xcodec's elements are wire-frozen");

void xc_model_init(struct xc_model *m, enum xc_dir dir, bool msb)
{
    memset(m, 0, sizeof *m);
    m->dir = dir;
    m->msb = msb;
    m->store_cap = XC_STORE_BUDGET;
    m->bigimg_level = XC_BIGIMG_LEVEL_UNKNOWN;
}

void xc_model_free(struct xc_model *m)
{
    for (unsigned c = 0; c < XC_NCLASS; c++)
        for (unsigned i = 0; i < XC_K; i++)
            free(m->cls[c].slot[i].p);
    memset(m->cls, 0, sizeof m->cls);
    m->stored = 0;
    xc_pix_free(m->pix);
    m->pix = NULL;
    xc_imgs_free(m->imgs);
    m->imgs = NULL;
    xc_tile_ring_free(m->ring);
    m->ring = NULL;
    free(m->sent);
    m->sent = NULL;
    xc_fonttabs_free(&m->fonts);
    xc_trap_hints_free(m);
}

unsigned xc_class_of(const struct xc_model *m, uint8_t byte0, uint8_t minor)
{
    if (m->dir == XC_SERVER)
        return byte0;
    if (byte0 < 128)
        return byte0;
    return 128 + ((unsigned)byte0 * 67u + minor) % (XC_NCLASS - 128);
}

void xc_shape_of(const struct xc_model *m, uint8_t byte0, uint8_t minor, uint32_t len, bool big,
                 struct xc_shape *s)
{
    unsigned head = 32;
    memset(s, 0, sizeof *s);
    s->cls = xc_class_of(m, byte0, minor);
    if (m->dir == XC_REQUESTS) {
        if (byte0 < 128 && core_req[byte0].head) {
            head = core_req[byte0].head;
            s->body = core_req[byte0].body;
        } else if (byte0 >= 128 && minor == XC_EXT_TRAPEZOIDS) {
            /* The extension's opcode is the server's choice: any minor 10 is taken for
             * RENDER's Trapezoids (24 bytes, then trapezoids of 40); another extension's
             * minor 10 loses nothing but perhaps compression (its body rarely fits). */
            head = XC_HEAD_TRAPEZOIDS;
            s->body = &bm_traps;
        } else if (byte0 >= 128 && minor == XC_EXT_ADDTRAPS) {
            head = XC_HEAD_ADDTRAPS;
            s->body = &bm_addtraps;
        } else if (byte0 >= 128 && minor >= XC_EXT_GLYPHS8 && minor <= XC_EXT_GLYPHS8 + 2) {
            head = XC_HEAD_GLYPHS;
            s->body = &bm_items[minor - XC_EXT_GLYPHS8];
        } else if (byte0 >= 128 && minor == XC_EXT_ADDGLYPHS) {
            head = XC_HEAD_ADDGLYPHS;
            s->body = &bm_addglyphs;
        }
        if (big) {
            head += 4; /* the fixed part moves 4 bytes on */
            s->len32 = true;
        }
    } else {
        unsigned code = byte0 & 0x7f;
        s->has_seq = code != XP_EV_KEYMAP_NOTIFY; /* it has none */
        s->len32 = byte0 == XP_REPLY || code == XP_EV_GE_GENERIC;
        if (byte0 == XP_REPLY)
            s->body = &bm_reply; /* large replies: font tables and few-colour images */
    }
    s->head = head < len ? head : len;
}

const struct xc_slot *xc_ref(const struct xc_model *m, unsigned cls, unsigned i)
{
    if (cls >= XC_NCLASS || i >= XC_K)
        return NULL;
    const struct xc_class *c = &m->cls[cls];
    const struct xc_slot *sl = &c->slot[(c->head + XC_K - i) % XC_K];
    return sl->p ? sl : NULL;
}

static void slot_drop(struct xc_model *m, struct xc_slot *sl)
{
    m->stored -= sl->cap;
    free(sl->p);
    memset(sl, 0, sizeof *sl);
}

/* Evicts the oldest reference of all classes but keep; rare (only under bulk traffic).
 * false when there was none. */
static bool evict_oldest(struct xc_model *m, const struct xc_slot *keep)
{
    struct xc_slot *old = NULL;
    for (unsigned c = 0; c < XC_NCLASS; c++)
        for (unsigned i = 0; i < XC_K; i++) {
            struct xc_slot *sl = &m->cls[c].slot[i];
            if (sl->p && sl != keep && (!old || sl->serial < old->serial))
                old = sl;
        }
    if (old)
        slot_drop(m, old);
    return old != NULL;
}

int xc_remember(struct xc_model *m, unsigned cls, const uint8_t *msg, uint32_t len)
{
    /* A message above half the store is not kept: it would evict nearly all the rest. */
    if (cls >= XC_NCLASS || len > XC_REF_MAX || len == 0 || len > m->store_cap / 2)
        return 0;
    struct xc_class *c = &m->cls[cls];
    c->head = (uint8_t)((c->head + 1) % XC_K);
    struct xc_slot *sl = &c->slot[c->head];
    if (sl->cap < len || sl->cap > 2 * len + 64) { /* keep the accounting close to the bytes */
        uint8_t *p = malloc(len);
        if (!p) {
            slot_drop(m, sl);
            return -ENOMEM;
        }
        m->stored -= sl->cap;
        free(sl->p);
        sl->p = p;
        sl->cap = len;
        m->stored += len;
    }
    memcpy(sl->p, msg, len);
    sl->len = len;
    sl->serial = ++m->serial;
    while (m->stored > m->store_cap && evict_oldest(m, sl))
        ;
    return 0;
}
