/* predict_quiet.c -- quiet requests: without a reply, touching only the client's own resources
 * (ids in its range) from a fixed list, so that only a client's bug or the server's running
 * out of memory makes them fail; later requests may then be answered locally (PROTOCOL.md 3.2).
 * Also XKEYBOARD's per-client flags, which a connection's own requests alone change. */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"

void predict_learn_connection(struct predict_questions *pq, const uint8_t *setup, size_t size, bool msb)
{
    uint32_t base, mask;
    if (!size || setup[0] != 1 || !xp_peek32(setup, size, XP_SETUP_RESOURCE_ID_BASE_AT, msb, &base) ||
        !xp_peek32(setup, size, XP_SETUP_RESOURCE_ID_MASK_AT, msb, &mask))
        return;
    pq->id_base = base;
    pq->id_mask = mask;
    pq->have_ids = true;
    /* The first screen follows the vendor string and the pixmap formats (8 bytes each). */
    struct xp_setup v;
    if (xp_setup_view(setup, size, msb, &v) && v.roots_len) {
        size_t at = XP_SETUP_SIZE + v.vendor_len + xw_pad4(v.vendor_len) + 8u * v.pixmap_formats_len;
        uint32_t root;
        if (at <= size && xp_peek32(setup, size, at, msb, &root))
            pq->root = root;
    }
}

/* Whether the id in the request's field at `at` (an XP_..._AT) is the client's own. A
 * request cut short before the field is not quiet. */
static bool own_id(const struct predict_questions *pq, const uint8_t *req, uint32_t size, uint32_t at, bool msb)
{
    uint32_t id;
    return pq->have_ids && xp_peek32(req, size, at, msb, &id) && id && (id & ~pq->id_mask) == pq->id_base;
}

static bool own_or_none(const struct predict_questions *pq, const uint8_t *req, uint32_t size, uint32_t at, bool msb)
{
    uint32_t id;
    return xp_peek32(req, size, at, msb, &id) && (!id || own_id(pq, req, size, at, msb));
}

/* The reply the connection got to its first request of this extension, when that request
 * was the handshake `minor` (requests of the extension before it fail or are refused). */
static const struct exchange *ext_opened(const struct predictor *p, const struct predict_questions *pq,
                                         uint8_t major, uint8_t minor, bool msb)
{
    const struct predict_history *h = pq->hist && major >= 128 ? &pq->hist[major - 128] : NULL;
    struct xp_request_header first;
    if (!h || !xp_request_header_view(h->bytes, h->len, msb, &first) || !first.length || 4u * first.length > h->len ||
        first.data != minor)
        return NULL;
    return pd_exchange_find(p, EX_REQ, msb, h->bytes, 4u * first.length);
}

/* The core keyboard's XKB device id, from a GetMap reply the display side got for
 * UseCoreKbd (a device id is a byte; 0x100 when not known). */
static uint16_t core_keyboard_id(const struct predictor *p, uint8_t major)
{
    for (uint32_t i = 0; i < p->n_ex; i++) {
        const struct exchange *e = &p->ex[i];
        uint32_t at = pd_exchange_get_map_at(e, major);
        uint16_t device;
        struct xp_server_header r;
        if (at && xp_peek16(e->key + at, e->key_len - at, XP_XKB_GET_MAP_REQ_DEVICE_SPEC_AT, e->msb, &device) &&
            device == XP_XKB_ID_USE_CORE_KBD && xp_server_header_view(e->reply, e->reply_len, e->msb, &r))
            return r.data; /* the reply's first field: its device id */
    }
    return XP_XKB_ID_USE_CORE_KBD;
}

/* The fields of a request that must name the client's own resources (an XP_..._AT each; 0:
 * none more), and those that may also be None. */
struct quiet_fields {
    uint8_t own[2], own_or_none[2];
};

static bool own_fields(const struct predict_questions *pq, const uint8_t *req, uint32_t size, bool msb,
                       const struct quiet_fields *q)
{
    if (!q->own[0])
        return false; /* not a quiet request */
    for (int i = 0; i < 2; i++)
        if ((q->own[i] && !own_id(pq, req, size, q->own[i], msb)) ||
            (q->own_or_none[i] && !own_or_none(pq, req, size, q->own_or_none[i], msb)))
            return false;
    return true;
}

/* Core requests quiet on the client's own resources. */
static const struct quiet_fields core_quiet[128] = {
    [XP_OP_CREATE_WINDOW] = { { XP_CREATE_WINDOW_REQ_WID_AT } },
    [XP_OP_CHANGE_WINDOW_ATTRIBUTES] = { { XP_CHANGE_WINDOW_ATTRIBUTES_REQ_WINDOW_AT } },
    [XP_OP_MAP_WINDOW] = { { XP_MAP_WINDOW_REQ_WINDOW_AT } },
    [XP_OP_MAP_SUBWINDOWS] = { { XP_MAP_SUBWINDOWS_REQ_WINDOW_AT } },
    [XP_OP_UNMAP_WINDOW] = { { XP_UNMAP_WINDOW_REQ_WINDOW_AT } },
    [XP_OP_CONFIGURE_WINDOW] = { { XP_CONFIGURE_WINDOW_REQ_WINDOW_AT } },
    [XP_OP_CHANGE_PROPERTY] = { { XP_CHANGE_PROPERTY_REQ_WINDOW_AT } },
    [XP_OP_DELETE_PROPERTY] = { { XP_DELETE_PROPERTY_REQ_WINDOW_AT } },
    [XP_OP_CLOSE_FONT] = { { XP_CLOSE_FONT_REQ_FONT_AT } },
    [XP_OP_CREATE_PIXMAP] = { { XP_CREATE_PIXMAP_REQ_PID_AT } },
    [XP_OP_FREE_PIXMAP] = { { XP_FREE_PIXMAP_REQ_PIXMAP_AT } },
    [XP_OP_CREATE_GC] = { { XP_CREATE_GC_REQ_CID_AT } },
    [XP_OP_CHANGE_GC] = { { XP_CHANGE_GC_REQ_GC_AT } },
    [XP_OP_SET_CLIP_RECTANGLES] = { { XP_SET_CLIP_RECTANGLES_REQ_GC_AT } },
    [XP_OP_FREE_GC] = { { XP_FREE_GC_REQ_GC_AT } },
    [XP_OP_CLEAR_AREA] = { { XP_CLEAR_AREA_REQ_WINDOW_AT } },
    [XP_OP_CREATE_CURSOR] = { { XP_CREATE_CURSOR_REQ_CID_AT } },
    [XP_OP_CREATE_GLYPH_CURSOR] = { { XP_CREATE_GLYPH_CURSOR_REQ_CID_AT } },
    [XP_OP_FREE_CURSOR] = { { XP_FREE_CURSOR_REQ_CURSOR_AT } },
    [XP_OP_RECOLOR_CURSOR] = { { XP_RECOLOR_CURSOR_REQ_CURSOR_AT } },
    [XP_OP_GRAB_BUTTON] = { { XP_GRAB_BUTTON_REQ_GRAB_WINDOW_AT },
                            { XP_GRAB_BUTTON_REQ_CONFINE_TO_AT, XP_GRAB_BUTTON_REQ_CURSOR_AT } },
    /* drawing: its own drawable and GC */
    [XP_OP_POLY_POINT] = { { XP_POLY_POINT_REQ_DRAWABLE_AT, XP_POLY_POINT_REQ_GC_AT } },
    [XP_OP_POLY_LINE] = { { XP_POLY_LINE_REQ_DRAWABLE_AT, XP_POLY_LINE_REQ_GC_AT } },
    [XP_OP_POLY_SEGMENT] = { { XP_POLY_SEGMENT_REQ_DRAWABLE_AT, XP_POLY_SEGMENT_REQ_GC_AT } },
    [XP_OP_POLY_RECTANGLE] = { { XP_POLY_RECTANGLE_REQ_DRAWABLE_AT, XP_POLY_RECTANGLE_REQ_GC_AT } },
    [XP_OP_POLY_ARC] = { { XP_POLY_ARC_REQ_DRAWABLE_AT, XP_POLY_ARC_REQ_GC_AT } },
    [XP_OP_FILL_POLY] = { { XP_FILL_POLY_REQ_DRAWABLE_AT, XP_FILL_POLY_REQ_GC_AT } },
    [XP_OP_POLY_FILL_RECTANGLE] = { { XP_POLY_FILL_RECTANGLE_REQ_DRAWABLE_AT, XP_POLY_FILL_RECTANGLE_REQ_GC_AT } },
    [XP_OP_POLY_FILL_ARC] = { { XP_POLY_FILL_ARC_REQ_DRAWABLE_AT, XP_POLY_FILL_ARC_REQ_GC_AT } },
    [XP_OP_PUT_IMAGE] = { { XP_PUT_IMAGE_REQ_DRAWABLE_AT, XP_PUT_IMAGE_REQ_GC_AT } },
    [XP_OP_POLY_TEXT8] = { { XP_POLY_TEXT8_REQ_DRAWABLE_AT, XP_POLY_TEXT8_REQ_GC_AT } },
    [XP_OP_POLY_TEXT16] = { { XP_POLY_TEXT16_REQ_DRAWABLE_AT, XP_POLY_TEXT16_REQ_GC_AT } },
    [XP_OP_IMAGE_TEXT8] = { { XP_IMAGE_TEXT8_REQ_DRAWABLE_AT, XP_IMAGE_TEXT8_REQ_GC_AT } },
    [XP_OP_IMAGE_TEXT16] = { { XP_IMAGE_TEXT16_REQ_DRAWABLE_AT, XP_IMAGE_TEXT16_REQ_GC_AT } },
};

/* RENDER's requests quiet on the client's own resources, likewise (by minor opcode). */
static const struct quiet_fields render_quiet[XP_RENDER_OP_CREATE_SOLID_FILL + 1] = {
    [XP_RENDER_OP_CREATE_PICTURE] = { { XP_RENDER_CREATE_PICTURE_REQ_PID_AT, XP_RENDER_CREATE_PICTURE_REQ_DRAWABLE_AT } },
    [XP_RENDER_OP_CHANGE_PICTURE] = { { XP_RENDER_CHANGE_PICTURE_REQ_PICTURE_AT } },
    [XP_RENDER_OP_SET_PICTURE_CLIP_RECTANGLES] = { { XP_RENDER_SET_PICTURE_CLIP_RECTANGLES_REQ_PICTURE_AT } },
    [XP_RENDER_OP_FREE_PICTURE] = { { XP_RENDER_FREE_PICTURE_REQ_PICTURE_AT } },
    [XP_RENDER_OP_CREATE_GLYPH_SET] = { { XP_RENDER_CREATE_GLYPH_SET_REQ_GSID_AT } },
    [XP_RENDER_OP_FREE_GLYPH_SET] = { { XP_RENDER_FREE_GLYPH_SET_REQ_GLYPHSET_AT } },
    [XP_RENDER_OP_ADD_GLYPHS] = { { XP_RENDER_ADD_GLYPHS_REQ_GLYPHSET_AT } },
    [XP_RENDER_OP_FREE_GLYPHS] = { { XP_RENDER_FREE_GLYPHS_REQ_GLYPHSET_AT } },
    [XP_RENDER_OP_CREATE_SOLID_FILL] = { { XP_RENDER_CREATE_SOLID_FILL_REQ_PICTURE_AT } },
    /* source, destination, and a mask or none */
    [XP_RENDER_OP_COMPOSITE] = { { XP_RENDER_COMPOSITE_REQ_SRC_AT, XP_RENDER_COMPOSITE_REQ_DST_AT },
                                 { XP_RENDER_COMPOSITE_REQ_MASK_AT } },
    [XP_RENDER_OP_FILL_RECTANGLES] = { { XP_RENDER_FILL_RECTANGLES_REQ_DST_AT } },
    /* from its own picture */
    [XP_RENDER_OP_CREATE_CURSOR] = { { XP_RENDER_CREATE_CURSOR_REQ_CID_AT, XP_RENDER_CREATE_CURSOR_REQ_SOURCE_AT } },
};

/* Offsets of the fields these extensions' quiet requests name (xcb-proto's layouts; the
 * generated tables describe only the requests other files read). */
enum {
    SHAPE_DEST_AT = 8,        /* Rectangles, Mask, Combine, Offset: the destination window */
    SHAPE_MASK_SOURCE_AT = 16, /* Mask: its bitmap or None */
    SHAPE_COMBINE_SOURCE_AT = 16, /* Combine: the source window */
    SHAPE_SELECT_WINDOW_AT = 4, /* SelectInput: the window */
    SYNC_COUNTER_AT = 4,      /* CreateCounter, SetCounter, ChangeCounter, DestroyCounter */
    RANDR_SELECT_WINDOW_AT = 4, RANDR_SELECT_ENABLE_AT = 8,
};

/* SHAPE requests on the client's own windows (by minor opcode); a bad operation or kind
 * is the client's bug. */
static const struct quiet_fields shape_quiet[XP_SHAPE_OP_SELECT_INPUT + 1] = {
    [XP_SHAPE_OP_RECTANGLES] = { { SHAPE_DEST_AT } },
    [XP_SHAPE_OP_MASK] = { { SHAPE_DEST_AT }, { SHAPE_MASK_SOURCE_AT } },
    [XP_SHAPE_OP_COMBINE] = { { SHAPE_DEST_AT, SHAPE_COMBINE_SOURCE_AT } },
    [XP_SHAPE_OP_OFFSET] = { { SHAPE_DEST_AT } },
    [XP_SHAPE_OP_SELECT_INPUT] = { { SHAPE_SELECT_WINDOW_AT } },
};

/* SYNC's counters of the client's own (GTK 3's frame clock makes two at start). */
static bool quiet_sync(const struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                       uint32_t size, bool msb)
{
    switch (cls->minor) {
    case XP_SYNC_OP_CREATE_COUNTER: /* id, initial value */
    case XP_SYNC_OP_SET_COUNTER:
        return size == 16 && own_id(pq, req, size, SYNC_COUNTER_AT, msb);
    case XP_SYNC_OP_DESTROY_COUNTER:
        return size == 8 && own_id(pq, req, size, SYNC_COUNTER_AT, msb);
    default:
        return false; /* ChangeCounter may overflow: BadValue */
    }
}

/* RANDR SelectInput of the root or of the client's own window, with defined bits only,
 * once the connection's QueryVersion was answered: it only registers for later events. */
static bool quiet_randr(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                        const uint8_t *req, uint32_t size, bool msb)
{
    uint32_t window;
    uint16_t enable;
    const uint16_t defined = XP_RANDR_NOTIFY_MASK_SCREEN_CHANGE | XP_RANDR_NOTIFY_MASK_CRTC_CHANGE |
                             XP_RANDR_NOTIFY_MASK_OUTPUT_CHANGE | XP_RANDR_NOTIFY_MASK_OUTPUT_PROPERTY |
                             XP_RANDR_NOTIFY_MASK_PROVIDER_CHANGE | XP_RANDR_NOTIFY_MASK_PROVIDER_PROPERTY |
                             XP_RANDR_NOTIFY_MASK_RESOURCE_CHANGE | XP_RANDR_NOTIFY_MASK_LEASE;
    if (cls->minor != XP_RANDR_OP_SELECT_INPUT || size != 12 || !ext_opened(p, pq, cls->major, XP_RANDR_OP_QUERY_VERSION, msb) ||
        !xp_peek32(req, size, RANDR_SELECT_WINDOW_AT, msb, &window) || !xp_peek16(req, size, RANDR_SELECT_ENABLE_AT, msb, &enable))
        return false;
    return (enable & ~defined) == 0 && ((pq->root && window == pq->root) || own_id(pq, req, size, RANDR_SELECT_WINDOW_AT, msb));
}

/* RENDER CompositeGlyphs8/16/32 (Xft's text: emacs, GTK) of the client's own pictures and
 * glyph sets, with a standard operator and no mask format or one of the server's: X.Org skips a
 * glyph the set lacks, so only a client's bug makes it fail. Each element is a count, 3
 * bytes of padding, dx and dy, then the glyphs (1, 2 or 4 bytes each, padded to 4); a count
 * of 255 switches to the glyph set in the next 4 bytes. */
enum { CG_OP_AT = 4, CG_MASK_FORMAT_AT = 16, CG_FIRST_ELT_AT = 28, CG_ELT_SIZE = 8, PICT_OP_MAX_STANDARD = 13 };

/* QueryPictFormats' reply (xcb-proto): the count of formats, then from byte 32 the formats,
 * 28 bytes each, their id first. */
enum { QPF_NUM_FORMATS_AT = 8, QPF_FORMATS_AT = 32, QPF_FORMAT_SIZE = 28 };

/* Whether a PictFormat id is one of the server's: listed in a QueryPictFormats reply the
 * display side got (formats are the server's, the same for every client, and never go). */
static bool pict_format_known(const struct predictor *p, uint8_t major, uint32_t format)
{
    for (uint32_t i = 0; i < p->n_ex; i++) {
        const struct exchange *e = &p->ex[i];
        uint32_t n, id;
        if (!pd_exchange_ext_query_at(e, major, XP_RENDER_OP_QUERY_PICT_FORMATS) ||
            !xp_peek32(e->reply, e->reply_len, QPF_NUM_FORMATS_AT, e->msb, &n))
            continue;
        for (uint32_t f = 0; f < n && QPF_FORMATS_AT + (uint64_t)QPF_FORMAT_SIZE * (f + 1) <= e->reply_len; f++)
            if (xp_peek32(e->reply, e->reply_len, QPF_FORMATS_AT + QPF_FORMAT_SIZE * f, e->msb, &id) && id == format)
                return true;
    }
    return false;
}

static bool quiet_glyphs(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                         const uint8_t *req, uint32_t size, bool msb)
{
    unsigned unit = cls->minor == XP_RENDER_OP_COMPOSITE_GLYPHS8 ? 1 : cls->minor == XP_RENDER_OP_COMPOSITE_GLYPHS16 ? 2 : 4;
    uint32_t mask_format;
    if (size < CG_FIRST_ELT_AT || req[CG_OP_AT] > PICT_OP_MAX_STANDARD ||
        !own_id(pq, req, size, XP_RENDER_COMPOSITE_GLYPHS8_REQ_SRC_AT, msb) ||
        !own_id(pq, req, size, XP_RENDER_COMPOSITE_GLYPHS8_REQ_DST_AT, msb) ||
        !own_id(pq, req, size, XP_RENDER_COMPOSITE_GLYPHS8_REQ_GLYPHSET_AT, msb) ||
        !xp_peek32(req, size, CG_MASK_FORMAT_AT, msb, &mask_format) ||
        (mask_format && !pict_format_known(p, cls->major, mask_format))) /* Xft's: A8 or A1, else BadPictFormat */
        return false;
    size_t at = CG_FIRST_ELT_AT;
    while (at + CG_ELT_SIZE < size) { /* the server's loop: an element needs more than its header */
        uint8_t n = req[at];
        at += CG_ELT_SIZE;
        if (n == 0xff) {
            if (at + 4 < size && !own_id(pq, req, size, (uint32_t)at, msb))
                return false; /* another client's glyph set, or none */
            at += 4;
        } else {
            at += ((size_t)unit * n + 3) / 4 * 4;
        }
    }
    return at <= size; /* else BadLength */
}

/* RENDER Trapezoids (cairo's and emacs's anti-aliased shapes) from the client's own picture
 * to its own, a standard operator, no mask format or one of the server's, whole trapezoids
 * of 40 bytes after the 24 of the request (X.Org: BadLength otherwise). */
enum { TRAP_OP_AT = 4, TRAP_SRC_AT = 8, TRAP_DST_AT = 12, TRAP_MASK_FORMAT_AT = 16, TRAP_FIRST_AT = 24, TRAP_SIZE = 40 };

static bool quiet_trapezoids(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                             const uint8_t *req, uint32_t size, bool msb)
{
    uint32_t mask_format;
    return size >= TRAP_FIRST_AT && (size - TRAP_FIRST_AT) % TRAP_SIZE == 0 && req[TRAP_OP_AT] <= PICT_OP_MAX_STANDARD &&
           own_id(pq, req, size, TRAP_SRC_AT, msb) && own_id(pq, req, size, TRAP_DST_AT, msb) &&
           xp_peek32(req, size, TRAP_MASK_FORMAT_AT, msb, &mask_format) &&
           (!mask_format || pict_format_known(p, cls->major, mask_format));
}

/* RENDER SetPictureFilter of the client's own picture to one of the filters every X.Org
 * server has (PictureSetDefaultFilters: nearest and bilinear, and their aliases), which take
 * no values (else BadMatch): cairo's and emacs's image scaling. A name the server lacks is
 * BadName: not quiet. */
enum { SPF_PICTURE_AT = 4, SPF_NAME_LEN_AT = 8, SPF_NAME_AT = 12 };

static bool quiet_picture_filter(const struct predict_questions *pq, const uint8_t *req, uint32_t size, bool msb)
{
    static const char *const standard[] = { "nearest", "bilinear", "fast", "good", "best" };
    uint16_t len;
    if (!own_id(pq, req, size, SPF_PICTURE_AT, msb) || !xp_peek16(req, size, SPF_NAME_LEN_AT, msb, &len) ||
        size != SPF_NAME_AT + len + xw_pad4(len))
        return false;
    for (size_t i = 0; i < sizeof standard / sizeof *standard; i++)
        if (strlen(standard[i]) == len && !memcmp(req + SPF_NAME_AT, standard[i], len))
            return true;
    return false;
}

/* RENDER CreateAnimCursor (libXcursor's animated cursors: the Adwaita `watch`) of the
 * client's own cursors: its id, then (cursor, delay) pairs, at least one (X.Org: BadLength
 * for an odd length). An element that is itself animated is BadMatch: the client's bug. */
enum { ANIM_CID_AT = 4, ANIM_FIRST_AT = 8, ANIM_ELT_SIZE = 8 };

static bool quiet_anim_cursor(const struct predict_questions *pq, const uint8_t *req, uint32_t size, bool msb)
{
    if (size < ANIM_FIRST_AT + ANIM_ELT_SIZE || (size - ANIM_FIRST_AT) % ANIM_ELT_SIZE || !own_id(pq, req, size, ANIM_CID_AT, msb))
        return false;
    for (uint32_t at = ANIM_FIRST_AT; at < size; at += ANIM_ELT_SIZE)
        if (!own_id(pq, req, size, at, msb))
            return false;
    return true;
}

/* DOUBLE-BUFFER SwapBuffers (emacs swaps its frame's back buffer after each redisplay): a
 * count, then (window, swap action, 3 bytes of padding) for each. X.Org's checks: each window
 * has a back buffer (else BadMatch: here one of the connection's confirmed AllocateBackBuffer
 * made it), appears once (BadMatch), its action is Undefined to Copied (BadValue). */
enum { DBE_SWAP_COUNT_AT = 4, DBE_SWAP_FIRST_AT = 8, DBE_SWAP_ELT_SIZE = 8, DBE_SWAP_ACTION_MAX = 3,
       DBE_ALLOC_WINDOW_AT = 4 };

static bool back_buffer_confirmed(const struct predict_questions *pq, uint32_t window)
{
    for (unsigned i = 0; i < pq->n_dbe; i++)
        if (pq->dbe[i].window == window && pq->dbe[i].confirmed)
            return true;
    return false;
}

static bool quiet_swap_buffers(const struct predict_questions *pq, const uint8_t *req, uint32_t size, bool msb)
{
    uint32_t n, w, other;
    if (!xp_peek32(req, size, DBE_SWAP_COUNT_AT, msb, &n) || !n || n > PREDICT_MAX_BACK_BUFFERS ||
        size != DBE_SWAP_FIRST_AT + DBE_SWAP_ELT_SIZE * n)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t at = DBE_SWAP_FIRST_AT + DBE_SWAP_ELT_SIZE * i;
        if (!xp_peek32(req, size, at, msb, &w) || req[at + 4] > DBE_SWAP_ACTION_MAX || !back_buffer_confirmed(pq, w))
            return false;
        for (uint32_t j = 0; j < i; j++)
            if (xp_peek32(req, size, DBE_SWAP_FIRST_AT + DBE_SWAP_ELT_SIZE * j, msb, &other) && other == w)
                return false;
    }
    return true;
}

/* DBE GetVisualInfo's reply (xcb-proto): the count of screens at 8, then from 32 for each a
 * count of visuals and the visuals, 8 bytes each, the id first. */
enum { DBE_VI_SCREENS_AT = 8, DBE_VI_FIRST_AT = 32, DBE_VI_SIZE = 8, DBE_ALLOC_BUFFER_AT = 8, DBE_ALLOC_ACTION_AT = 12,
       DBE_ALLOC_REQ_SIZE = 16 };

/* Whether a GetVisualInfo reply the display side got lists the visual (visual ids are the
 * server's resources, unique across its screens). */
static bool dbe_visual_known(const struct predictor *p, uint8_t major, uint32_t visual)
{
    for (uint32_t i = 0; i < p->n_ex; i++) {
        const struct exchange *e = &p->ex[i];
        uint32_t screens, n, id;
        if (!pd_exchange_ext_query_at(e, major, XP_DBE_OP_GET_VISUAL_INFO) ||
            !xp_peek32(e->reply, e->reply_len, DBE_VI_SCREENS_AT, e->msb, &screens))
            continue;
        uint64_t at = DBE_VI_FIRST_AT;
        for (uint32_t s = 0; s < screens && xp_peek32(e->reply, e->reply_len, (size_t)at, e->msb, &n); s++) {
            at += 4;
            for (uint32_t v = 0; v < n && at + DBE_VI_SIZE <= e->reply_len; v++, at += DBE_VI_SIZE)
                if (xp_peek32(e->reply, e->reply_len, (size_t)at, e->msb, &id) && id == visual)
                    return true;
            if (at + 4 > e->reply_len)
                break;
        }
    }
    return false;
}

bool predict_quiet_back_buffer(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                               const uint8_t *req, uint32_t size, bool msb, uint32_t visual)
{
    uint32_t window;
    if (cls->kind != MSG_REQUEST || !cls->ext || strcmp(cls->ext, "DOUBLE-BUFFER") ||
        cls->minor != XP_DBE_OP_ALLOCATE_BACK_BUFFER || size != DBE_ALLOC_REQ_SIZE ||
        !own_id(pq, req, size, DBE_ALLOC_WINDOW_AT, msb) || !own_id(pq, req, size, DBE_ALLOC_BUFFER_AT, msb) ||
        req[DBE_ALLOC_ACTION_AT] > DBE_SWAP_ACTION_MAX || !xp_peek32(req, size, DBE_ALLOC_WINDOW_AT, msb, &window))
        return false;
    for (unsigned i = 0; i < pq->n_dbe; i++)
        if (pq->dbe[i].window == window)
            return false; /* a second name for its buffer: not what emacs does, not followed */
    return dbe_visual_known(p, cls->major, visual);
}

void predict_track_back_buffers(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                                uint32_t size, uint32_t seq, bool msb)
{
    uint32_t window;
    if (cls->kind != MSG_REQUEST)
        return;
    if (!cls->ext && (cls->major == XP_OP_DESTROY_WINDOW || cls->major == XP_OP_DESTROY_SUBWINDOWS))
        pq->n_dbe = 0; /* a window with a buffer, or its parent: which, is not worth knowing */
    if (!cls->ext || strcmp(cls->ext, "DOUBLE-BUFFER"))
        return;
    if (cls->minor == XP_DBE_OP_DEALLOCATE_BACK_BUFFER)
        pq->n_dbe = 0;
    else if (cls->minor == XP_DBE_OP_ALLOCATE_BACK_BUFFER && pq->n_dbe < PREDICT_MAX_BACK_BUFFERS &&
             xp_peek32(req, size, DBE_ALLOC_WINDOW_AT, msb, &window))
        pq->dbe[pq->n_dbe++] = (struct predict_back_buffer){ window, seq, false };
}

void predict_back_buffers_seen(struct predict_questions *pq, bool error, uint32_t seq_done)
{
    for (unsigned i = 0; i < pq->n_dbe;) {
        struct predict_back_buffer *b = &pq->dbe[i];
        if (error && seq_done == b->seq) {
            *b = pq->dbe[--pq->n_dbe]; /* BadMatch, BadWindow ...: no buffer */
            continue;
        }
        if (seq_done > b->seq)
            b->confirmed = true; /* the server went past it without an error */
        i++;
    }
}

/* Extension requests that only create, change or free the client's own resources. Each
 * fails only for a bug of the client (a wrong id, format or value) or for want of memory. */
static bool quiet_extension(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                            const uint8_t *req, uint32_t size, bool msb)
{
    const struct exchange *e;
    struct xp_xkb_use_extension_reply opened;
    if (!strcmp(cls->ext, "XKEYBOARD")) {
        /* SelectEvents on the core keyboard, after UseExtension said yes (else BadAccess) */
        struct xp_xkb_select_events_req v;
        e = ext_opened(p, pq, cls->major, XP_XKB_OP_USE_EXTENSION, msb);
        if (cls->minor != XP_XKB_OP_SELECT_EVENTS || !xp_xkb_select_events_req_view(req, size, msb, &v) || !e ||
            !xp_xkb_use_extension_reply_view(e->reply, e->reply_len, e->msb, &opened) || opened.supported != 1)
            return false;
        return v.device_spec == XP_XKB_ID_USE_CORE_KBD || v.device_spec == core_keyboard_id(p, cls->major);
    }
    if (!strcmp(cls->ext, "XFIXES")) {
        /* XFIXES 2 requests, after QueryVersion agreed on 2 or later (the server refuses
         * requests beyond the version agreed): SetCursorName on its own cursor, */
        struct xp_xfixes_query_version_reply version;
        struct xp_xfixes_select_selection_input_req v;
        e = ext_opened(p, pq, cls->major, XP_XFIXES_OP_QUERY_VERSION, msb);
        if (!e || !xp_xfixes_query_version_reply_view(e->reply, e->reply_len, e->msb, &version) ||
            version.major_version < 2)
            return false;
        if (cls->minor == XP_XFIXES_OP_SET_CURSOR_NAME)
            return own_id(pq, req, size, XP_XFIXES_SET_CURSOR_NAME_REQ_CURSOR_AT, msb);
        /* SelectSelectionInput on its own window, of an atom that exists (else BadAtom), with
         * the three defined event bits (else BadValue): events only when owners change later */
        return cls->minor == XP_XFIXES_OP_SELECT_SELECTION_INPUT && size == XP_XFIXES_SELECT_SELECTION_INPUT_REQ_SIZE &&
               own_id(pq, req, size, XP_XFIXES_SELECT_SELECTION_INPUT_REQ_WINDOW_AT, msb) &&
               xp_xfixes_select_selection_input_req_view(req, size, msb, &v) && predict_atom_known(p, v.selection) &&
               v.event_mask <= 7;
    }
    if (!strcmp(cls->ext, "DOUBLE-BUFFER"))
        return cls->minor == XP_DBE_OP_SWAP_BUFFERS && quiet_swap_buffers(pq, req, size, msb);
    if (!strcmp(cls->ext, "SHAPE"))
        return cls->minor < sizeof shape_quiet / sizeof *shape_quiet && own_fields(pq, req, size, msb, &shape_quiet[cls->minor]);
    if (!strcmp(cls->ext, "SYNC"))
        return quiet_sync(pq, cls, req, size, msb);
    if (!strcmp(cls->ext, "RANDR"))
        return quiet_randr(p, pq, cls, req, size, msb);
    if (!strcmp(cls->ext, "RENDER") && cls->minor >= XP_RENDER_OP_COMPOSITE_GLYPHS8 &&
        cls->minor <= XP_RENDER_OP_COMPOSITE_GLYPHS32)
        return quiet_glyphs(p, pq, cls, req, size, msb);
    if (!strcmp(cls->ext, "RENDER") && cls->minor == XP_RENDER_OP_SET_PICTURE_FILTER)
        return quiet_picture_filter(pq, req, size, msb);
    if (!strcmp(cls->ext, "RENDER") && cls->minor == XP_RENDER_OP_TRAPEZOIDS)
        return quiet_trapezoids(p, pq, cls, req, size, msb);
    if (!strcmp(cls->ext, "RENDER") && cls->minor == XP_RENDER_OP_CREATE_ANIM_CURSOR)
        return quiet_anim_cursor(pq, req, size, msb);
    if (strcmp(cls->ext, "RENDER") || cls->minor >= sizeof render_quiet / sizeof *render_quiet)
        return false;
    /* CreatePicture and ChangePicture: no alpha map or clip mask (other resources) */
    uint32_t mask, at = cls->minor == XP_RENDER_OP_CREATE_PICTURE ? XP_RENDER_CREATE_PICTURE_REQ_VALUE_MASK_AT
                      : cls->minor == XP_RENDER_OP_CHANGE_PICTURE ? XP_RENDER_CHANGE_PICTURE_REQ_VALUE_MASK_AT : 0;
    if (at && (!xp_peek32(req, size, at, msb, &mask) || (mask & (XP_RENDER_CP_ALPHA_MAP | XP_RENDER_CP_CLIP_MASK))))
        return false;
    return own_fields(pq, req, size, msb, &render_quiet[cls->minor]);
}

/* ChangeWindowAttributes of the root's event mask alone (toolkits select StructureNotify
 * and PropertyChange there at start): the root exists, and only the masks one client at a
 * time may hold (SubstructureRedirect, ResizeRedirect, ButtonPress) can fail, BadAccess. */
static bool root_events(const struct predict_questions *pq, const uint8_t *req, uint32_t size, bool msb)
{
    uint32_t window, value_mask, events;
    const uint32_t exclusive = XP_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XP_EVENT_MASK_RESIZE_REDIRECT |
                               XP_EVENT_MASK_BUTTON_PRESS;
    return size == 16 && pq->root && xp_peek32(req, size, XP_CHANGE_WINDOW_ATTRIBUTES_REQ_WINDOW_AT, msb, &window) &&
           window == pq->root && xp_peek32(req, size, XP_CHANGE_WINDOW_ATTRIBUTES_REQ_VALUE_MASK_AT, msb, &value_mask) &&
           value_mask == XP_CW_EVENT_MASK && xp_peek32(req, size, 12, msb, &events) && !(events & exclusive) &&
           events <= 0x1ffffff; /* the 25 defined bits, else BadValue */
}

/* SendEvent (window managers' ClientMessages: _NET_WM_STATE, _NET_ACTIVE_WINDOW) to the root
 * or the client's own window. X.Org's checks: propagate a boolean, defined event-mask bits,
 * a core event's code (not an error, reply or GenericEvent: an extension's needs the
 * extension's own knowledge), a ClientMessage's format 8, 16 or 32, the destination. */
enum { SE_DESTINATION_AT = 4, SE_EVENT_MASK_AT = 8, SE_EVENT_AT = 12, SE_REQ_SIZE = 44,
       EV_FIRST_CORE = 2, EV_CLIENT_MESSAGE = 33, EV_LAST_CORE = 34 };

static bool quiet_send_event(const struct predict_questions *pq, const uint8_t *req, uint32_t size, bool msb)
{
    uint32_t destination, mask;
    if (size != SE_REQ_SIZE || req[1] > 1 || !xp_peek32(req, size, SE_DESTINATION_AT, msb, &destination) ||
        !xp_peek32(req, size, SE_EVENT_MASK_AT, msb, &mask) || mask > 0x1ffffff)
        return false;
    uint8_t code = req[SE_EVENT_AT], format = req[SE_EVENT_AT + 1];
    if (code < EV_FIRST_CORE || code > EV_LAST_CORE ||
        (code == EV_CLIENT_MESSAGE && format != 8 && format != 16 && format != 32))
        return false;
    return (pq->root && destination == pq->root) || own_id(pq, req, size, SE_DESTINATION_AT, msb);
}

/* XKEYBOARD PerClientFlags: its fields after the header (xcb-proto), and the flags. */
enum {
    PCF_DEVICE_AT = 4, PCF_CHANGE_AT = 8, PCF_VALUE_AT = 12, PCF_REQ_SIZE = 28,
    PCF_REPLY_SUPPORTED_AT = 8, PCF_REPLY_VALUE_AT = 12, PCF_REPLY_AUTO_AT = 16, PCF_REPLY_AUTO_VALUES_AT = 20,
    PCF_ALL = 0x1f,           /* XkbPCF_AllFlagsMask */
    PCF_AUTO_RESET = 0x04,    /* XkbPCF_AutoResetControlsMask: per-client controls too */
};

/* A PerClientFlags that sets flags alone (change within the defined flags, value within
 * change, not the auto-reset controls): *change and *value. */
static bool pcf_simple(const uint8_t *req, uint32_t size, bool msb, uint32_t *change, uint32_t *value)
{
    return size == PCF_REQ_SIZE && xp_peek32(req, size, PCF_CHANGE_AT, msb, change) &&
           xp_peek32(req, size, PCF_VALUE_AT, msb, value) && !(*change & ~(uint32_t)PCF_ALL) && !(*value & ~*change) &&
           !(*change & PCF_AUTO_RESET);
}

void pd_track_xkb_flags(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                        bool msb)
{
    uint32_t change, value;
    if (cls->minor == XP_XKB_OP_USE_EXTENSION) {
        pq->xkb_flags_known = true; /* the server sets them anew (to none) when it accepts */
        pq->xkb_flags = 0;
    } else if (cls->minor == XP_XKB_OP_PER_CLIENT_FLAGS) {
        if (pq->xkb_flags_known && pcf_simple(req, size, msb, &change, &value))
            pq->xkb_flags = (uint8_t)((pq->xkb_flags & ~change) | value);
        else
            pq->xkb_flags_known = false;
    }
}

/* PerClientFlags computed as the server does (its flags after the change), from the reply
 * the display side's own flag-less question got: what this server says it supports and how
 * it fills the rest. Only for a connection whose every request that set its flags is known,
 * whose XKEYBOARD began with an accepted UseExtension, of the core keyboard. */
bool pd_answer_xkb_flags(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                         const uint8_t *req, uint32_t size, uint16_t seq, bool msb, struct buf *out)
{
    const struct predict_history *h = pq->hist && cls->major >= 128 ? &pq->hist[cls->major - 128] : NULL;
    struct xp_xkb_use_extension_reply opened;
    const struct exchange *use = ext_opened(p, pq, cls->major, XP_XKB_OP_USE_EXTENSION, msb);
    uint32_t change, value, supported, auto_ctrls, auto_values;
    uint16_t device;
    if (msb || !pq->xkb_flags_known || !use || !xp_xkb_use_extension_reply_view(use->reply, use->reply_len, false, &opened) ||
        opened.supported != 1 || !pcf_simple(req, size, msb, &change, &value) ||
        !xp_peek16(req, size, PCF_DEVICE_AT, msb, &device) ||
        (device != XP_XKB_ID_USE_CORE_KBD && device != core_keyboard_id(p, cls->major)))
        return false;
    /* the display side's question: its UseExtension (the connection's), then no change */
    uint8_t key[PREDICT_MAX_HISTORY + PCF_REQ_SIZE] = { 0 };
    uint32_t use_len = use->key_len;
    if (!h || use_len > PREDICT_MAX_HISTORY)
        return false;
    memcpy(key, h->bytes, use_len);
    key[use_len] = cls->major;
    key[use_len + 1] = XP_XKB_OP_PER_CLIENT_FLAGS;
    key[use_len + 2] = PCF_REQ_SIZE / 4;
    st16(key + use_len + PCF_DEVICE_AT, XP_XKB_ID_USE_CORE_KBD, false);
    const struct exchange *e = pd_exchange_find(p, EX_REQ, false, key, use_len + PCF_REQ_SIZE);
    uint8_t *r;
    if (!e || e->reply_len != XP_SERVER_MSG_SIZE || !xp_peek32(e->reply, e->reply_len, PCF_REPLY_SUPPORTED_AT, false, &supported) ||
        !xp_peek32(e->reply, e->reply_len, PCF_REPLY_AUTO_AT, false, &auto_ctrls) ||
        !xp_peek32(e->reply, e->reply_len, PCF_REPLY_AUTO_VALUES_AT, false, &auto_values) || auto_ctrls || auto_values ||
        (change & ~supported) || !pd_answer_exchange(e, seq, msb, out))
        return false;
    r = out->data + out->off + out->len - XP_SERVER_MSG_SIZE;
    st32(r + PCF_REPLY_VALUE_AT, ((pq->xkb_flags & ~change) | value) & supported, false);
    return true;
}

bool predict_copy_own(const struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                      bool msb)
{
    _Static_assert((int)XP_COPY_AREA_REQ_GC_AT == 12 && (int)XP_COPY_AREA_REQ_DST_DRAWABLE_AT == 8, "CopyPlane's alike");
    return cls->kind == MSG_REQUEST && !cls->ext && (cls->major == XP_OP_COPY_AREA || cls->major == XP_OP_COPY_PLANE) &&
           own_id(pq, req, size, XP_COPY_AREA_REQ_SRC_DRAWABLE_AT, msb) &&
           own_id(pq, req, size, XP_COPY_AREA_REQ_DST_DRAWABLE_AT, msb) && own_id(pq, req, size, XP_COPY_AREA_REQ_GC_AT, msb);
}

bool predict_quiet(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                   const uint8_t *req, uint32_t size, bool msb)
{
    if (cls->kind != MSG_REQUEST || size < XP_REQUEST_HEADER_SIZE)
        return false;
    if (cls->ext)
        return cls->major >= 128 && quiet_extension(p, pq, cls, req, size, msb);
    if (cls->major == XP_OP_GRAB_SERVER || cls->major == XP_OP_UNGRAB_SERVER) /* no reply, error or event */
        return size == XP_GRAB_SERVER_REQ_SIZE;
    if (cls->major == XP_OP_OPEN_FONT) { /* a font that opened before in this session */
        struct xp_open_font_req v;
        if (!own_id(pq, req, size, XP_OPEN_FONT_REQ_FID_AT, msb) || !xp_open_font_req_view(req, size, msb, &v) || !v.name)
            return false;
        for (uint32_t i = 0; i < p->n_fonts_ok; i++)
            if (p->fonts_ok[i].len == v.name_len && !memcmp(p->fonts_ok[i].name, v.name, v.name_len))
                return true;
        return pd_exchange_find(p, EX_FONT, msb, v.name, v.name_len);
    }
    if (cls->major == XP_OP_CHANGE_WINDOW_ATTRIBUTES && root_events(pq, req, size, msb))
        return true;
    if (cls->major == XP_OP_SEND_EVENT)
        return quiet_send_event(pq, req, size, msb);
    return cls->major < 128 && own_fields(pq, req, size, msb, &core_quiet[cls->major]);
}
