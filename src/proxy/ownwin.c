/* ownwin.c -- the model of a client's own windows (ownwin.h): kept from its requests on
 * both sides, answered from at the app side, checked at the display side. Never guesses:
 * whatever a request leaves unknowable is marked unknown and asked of the server. */
#include "proxy/ownwin.h"
#include "proxy/ownwin_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xproto_wire.h"

/* Where the window is in each request about one that is followed (0: not followed). */
const uint8_t ownwin_window_at[128] = {
    [XP_OP_CHANGE_WINDOW_ATTRIBUTES] = XP_CHANGE_WINDOW_ATTRIBUTES_REQ_WINDOW_AT,
    [XP_OP_GET_WINDOW_ATTRIBUTES] = XP_GET_WINDOW_ATTRIBUTES_REQ_WINDOW_AT,
    [XP_OP_DESTROY_WINDOW] = XP_DESTROY_WINDOW_REQ_WINDOW_AT,
    [XP_OP_DESTROY_SUBWINDOWS] = XP_DESTROY_SUBWINDOWS_REQ_WINDOW_AT,
    [XP_OP_REPARENT_WINDOW] = XP_REPARENT_WINDOW_REQ_WINDOW_AT,
    [XP_OP_MAP_WINDOW] = XP_MAP_WINDOW_REQ_WINDOW_AT,
    [XP_OP_MAP_SUBWINDOWS] = XP_MAP_SUBWINDOWS_REQ_WINDOW_AT,
    [XP_OP_UNMAP_WINDOW] = XP_UNMAP_WINDOW_REQ_WINDOW_AT,
    [XP_OP_UNMAP_SUBWINDOWS] = XP_UNMAP_SUBWINDOWS_REQ_WINDOW_AT,
    [XP_OP_CONFIGURE_WINDOW] = XP_CONFIGURE_WINDOW_REQ_WINDOW_AT,
    [XP_OP_GET_GEOMETRY] = XP_GET_GEOMETRY_REQ_DRAWABLE_AT,
    [XP_OP_CHANGE_PROPERTY] = XP_CHANGE_PROPERTY_REQ_WINDOW_AT,
    [XP_OP_DELETE_PROPERTY] = XP_DELETE_PROPERTY_REQ_WINDOW_AT,
    [XP_OP_GET_PROPERTY] = XP_GET_PROPERTY_REQ_WINDOW_AT,
    [XP_OP_ROTATE_PROPERTIES] = XP_ROTATE_PROPERTIES_REQ_WINDOW_AT,
    [XP_OP_CIRCULATE_WINDOW] = XP_CIRCULATE_WINDOW_REQ_WINDOW_AT,
    [XP_OP_QUERY_TREE] = XP_QUERY_TREE_REQ_WINDOW_AT,
};


void ownwin_init(struct ownwin_state *o, bool display_side)
{
    memset(o, 0, sizeof *o);
    idmap_init(&o->by_id, OWNWIN_MAX_WINDOWS);
    idmap_init(&o->pixmaps, OWNWIN_MAX_PIXMAPS);
    o->display_side = display_side;
    o->root_redirect = OWNWIN_REDIRECT_UNKNOWN;
}

static void props_free(struct ownwin_state *o, struct ownwin_win *w)
{
    o->prop_bytes -= w->prop_bytes;
    for (uint32_t i = 0; i < w->n_props; i++)
        free(w->props[i].data);
    free(w->props);
    w->props = NULL;
    w->n_props = 0;
    w->prop_bytes = 0;
}

void ownwin_free(struct ownwin_state *o)
{
    for (uint32_t i = 0; i < o->n_wins; i++)
        props_free(o, &o->wins[i]);
    free(o->wins);
    idmap_free(&o->by_id);
    idmap_free(&o->pixmaps);
    memset(o, 0, sizeof *o);
}

void ownwin_learn_setup(struct ownwin_state *o, const uint8_t *setup, size_t size, bool msb)
{
    struct xp_setup s;
    if (!xp_setup_view(setup, size, msb, &s) || s.status != 1)
        return;
    size_t skip = s.vendor_len + ((4 - s.vendor_len % 4) % 4) + (size_t)XP_FORMAT_SIZE * s.pixmap_formats_len;
    if (skip > s.rest_len)
        return;
    const uint8_t *at = s.rest + skip; /* each view's rest is what follows it */
    size_t left = s.rest_len - skip;
    o->n_screens = 0;
    struct xp_screen sc;
    struct xp_depth d;
    for (uint8_t i = 0; i < s.roots_len && o->n_screens < OWNWIN_MAX_SCREENS; i++) {
        if (!xp_screen_view(at, left, msb, &sc))
            return;
        at = sc.rest, left = sc.rest_len;
        uint32_t depths = 0;
        for (uint8_t k = 0; k < sc.allowed_depths_len; k++) {
            if (!xp_depth_view(at, left, msb, &d) || (size_t)XP_VISUALTYPE_SIZE * d.visuals_len > d.rest_len)
                return;
            if (d.depth >= 1 && d.depth <= 32)
                depths |= 1u << (d.depth - 1);
            at = d.rest + (size_t)XP_VISUALTYPE_SIZE * d.visuals_len, left = d.rest_len - (size_t)XP_VISUALTYPE_SIZE * d.visuals_len;
        }
        o->screens[o->n_screens++] = (struct ownwin_screen){ .root = sc.root, .colormap = sc.default_colormap,
                                                              .visual = sc.root_visual, .depth = sc.root_depth,
                                                              .depths = depths };
    }
}



bool ownwin_known(const struct ownwin_state *o, uint32_t window)
{
    return win_get(o, window) != NULL;
}

bool ownwin_output_visual(const struct ownwin_state *o, uint32_t window, uint32_t *visual)
{
    const struct ownwin_win *w = win_get(o, window);
    if (!w || w->dubious || w->klass != XP_WINDOW_CLASS_INPUT_OUTPUT || !w->visual)
        return false;
    *visual = w->visual;
    return true;
}

static void win_remove(struct ownwin_state *o, struct ownwin_win *w)
{
    uint32_t i = (uint32_t)(w - o->wins);
    props_free(o, w);
    idmap_del(&o->by_id, w->id);
    if (i != o->n_wins - 1) {
        o->wins[i] = o->wins[o->n_wins - 1];
        idmap_get(&o->by_id, o->wins[i].id)->a = i;
    }
    o->n_wins--;
}

/* Destroys w and everything below it (DestroyWindow), or only what is below (DestroySubwindows). */
static void destroy_tree(struct ownwin_state *o, uint32_t id, bool self)
{
    for (uint32_t i = 0; i < o->n_wins;) {
        if (o->wins[i].parent == id) {
            destroy_tree(o, o->wins[i].id, true); /* may move entries: look at i again */
            continue;
        }
        i++;
    }
    struct ownwin_win *w = self ? win_get(o, id) : NULL;
    if (w)
        win_remove(o, w);
}

/* A top-level whose configure and map requests a window manager may redirect. */

/* Sets the window attributes a CreateWindow or ChangeWindowAttributes value list names
 * (values in the order of their mask bits). False if the list is cut short. */
static bool apply_attributes(struct ownwin_state *o, struct ownwin_win *w, uint32_t mask, const uint8_t *v,
                             uint32_t len, bool msb)
{
    uint32_t i = 0, x;
    for (uint32_t bit = 1; bit && bit <= XP_CW_CURSOR; bit <<= 1) {
        if (!(mask & bit))
            continue;
        if (!xp_card32_at(v, len, i++, msb, &x))
            return false;
        switch (bit) {
        case XP_CW_BIT_GRAVITY: w->bit_gravity = (uint8_t)x; break;
        case XP_CW_WIN_GRAVITY: w->win_gravity = (uint8_t)x; break;
        case XP_CW_BACKING_STORE: w->backing_store = (uint8_t)x; break;
        case XP_CW_BACKING_PLANES: w->backing_planes = x; break;
        case XP_CW_BACKING_PIXEL: w->backing_pixel = x; break;
        case XP_CW_OVERRIDE_REDIRECT: w->override_redirect = (uint8_t)(x & 1); break;
        case XP_CW_SAVE_UNDER: w->save_under = (uint8_t)(x & 1); break;
        case XP_CW_EVENT_MASK: w->event_mask = x; break;
        case XP_CW_DONT_PROPAGATE: w->dont_propagate = (uint16_t)x; break;
        case XP_CW_COLORMAP:
            if (x) {
                w->colormap = x;
            } else { /* CopyFromParent, as the parent is now */
                const struct ownwin_win *p = win_get(o, w->parent);
                const struct ownwin_screen *s = screen_of_root(o, w->parent);
                if (p && !p->attrs_unknown)
                    w->colormap = p->colormap;
                else if (s)
                    w->colormap = s->colormap;
                else
                    w->attrs_unknown = true;
            }
            break;
        default: break; /* backgrounds, borders, cursor: not in any reply */
        }
    }
    return true;
}

static void create_window(struct ownwin_state *o, const uint8_t *req, uint32_t size, bool msb)
{
    struct xp_create_window_req v;
    if (!xp_create_window_req_view(req, size, msb, &v))
        return;
    uint32_t id = v.wid, parent_id = v.parent;
    const struct ownwin_screen *screen = screen_of_root(o, parent_id);
    struct ownwin_win *kept_parent = win_get(o, parent_id);
    if (win_get(o, id) || (!kept_parent && !screen))
        return; /* a window under someone else's: not modelled */
    if (o->n_wins >= OWNWIN_MAX_WINDOWS) {
        if (kept_parent)
            kept_parent->kids_unknown = true; /* its children are no longer all known */
        return;
    }
    if (o->n_wins == o->cap_wins) {
        uint32_t cap = o->cap_wins ? o->cap_wins * 2 : 8;
        struct ownwin_win *n = realloc(o->wins, cap * sizeof *n);
        if (!n) {
            if (kept_parent)
                kept_parent->kids_unknown = true;
            return;
        }
        o->wins = n;
        o->cap_wins = cap;
    }
    const struct ownwin_win *parent = win_get(o, parent_id); /* after the array moved */
    struct idmap_entry *e = idmap_put(&o->by_id, id);
    if (!e) {
        if (parent)
            win_get(o, parent_id)->kids_unknown = true;
        return;
    }
    e->a = o->n_wins;
    struct ownwin_win *w = &o->wins[o->n_wins++];
    uint16_t klass = v.class;
    uint8_t parent_class = parent ? parent->klass : XP_WINDOW_CLASS_INPUT_OUTPUT;
    *w = (struct ownwin_win){
        .id = id, .parent = parent_id, .root = parent ? parent->root : parent_id,
        .x = v.x, .y = v.y, .width = v.width, .height = v.height, .border = v.border_width,
        .klass = (uint8_t)(klass ? klass : parent_class), .visual = v.visual,
        .win_gravity = XP_GRAVITY_NORTH_WEST, .backing_planes = 0xffffffffu, .stack = ++o->stack_clock,
        .geom_unknown = parent && parent->geom_unknown, .attrs_unknown = parent && parent->attrs_unknown,
    };
    /* CopyFromParent: depth, visual and colormap are the parent's (InputOnly: none). */
    uint8_t depth = v.depth;
    uint32_t parent_visual = parent ? parent->visual : screen->visual;
    if (w->klass == XP_WINDOW_CLASS_INPUT_ONLY) {
        w->depth = 0;
    } else {
        w->depth = depth ? depth : parent ? parent->depth : screen->depth;
        w->colormap = parent ? parent->colormap : screen->colormap;
    }
    if (!w->visual)
        w->visual = parent_visual;
    else if (w->visual != parent_visual && w->klass != XP_WINDOW_CLASS_INPUT_ONLY)
        w->colormap = 0; /* another visual needs a colormap of its own: given below, or BadMatch */
    if (klass > XP_WINDOW_CLASS_INPUT_ONLY ||
        !w->width || !w->height || !apply_attributes(o, w, v.value_mask, v.rest, (uint32_t)v.rest_len, msb) ||
        (w->klass != XP_WINDOW_CLASS_INPUT_ONLY && !w->colormap)) {
        w->geom_unknown = w->attrs_unknown = true; /* an error, or something we do not follow */
        w->props_unknown = true;
        w->dubious = true;
    }
}

/* ConfigureWindow's value list: x, y, width, height, border, sibling, stack-mode. */
static void configure_window(struct ownwin_state *o, struct ownwin_win *w, const uint8_t *req, uint32_t size,
                             bool msb)
{
    struct xp_configure_window_req c;
    if (!xp_configure_window_req_view(req, size, msb, &c))
        return;
    uint16_t mask = c.value_mask;
    uint32_t at = 0, x;
    int32_t v[7] = { 0 }; /* x, y, width, height, border, sibling, stack mode */
    for (int bit = 0; bit < 7; bit++) {
        if (!(mask & (1u << bit)))
            continue;
        if (!xp_card32_at(c.rest, c.rest_len, at++, msb, &x)) {
            w->geom_unknown = true;
            return;
        }
        v[bit] = (int32_t)x;
    }
    if (o->display_side && !(redirectable(o, w) && o->root_redirect == OWNWIN_REDIRECT_YES))
        w->configures_due++; /* carried out: one ConfigureNotify; redirected: none */
    struct ownwin_win *parent = win_get(o, w->parent);
    if (parent && (mask & XP_CONFIG_WINDOW_STACK_MODE))
        parent->order_unknown = true; /* restacked among its siblings: not followed */
    if (((mask & XP_CONFIG_WINDOW_WIDTH) && !(uint16_t)v[2]) || ((mask & XP_CONFIG_WINDOW_HEIGHT) && !(uint16_t)v[3])) {
        w->geom_unknown = true; /* BadValue */
        return;
    }
    bool moved = mask & (XP_CONFIG_WINDOW_X | XP_CONFIG_WINDOW_Y | XP_CONFIG_WINDOW_WIDTH | XP_CONFIG_WINDOW_HEIGHT |
                         XP_CONFIG_WINDOW_BORDER_WIDTH);
    if (mask & XP_CONFIG_WINDOW_X) w->x = (int16_t)v[0];
    if (mask & XP_CONFIG_WINDOW_Y) w->y = (int16_t)v[1];
    if (mask & XP_CONFIG_WINDOW_WIDTH) w->width = (uint16_t)v[2];
    if (mask & XP_CONFIG_WINDOW_HEIGHT) w->height = (uint16_t)v[3];
    if (mask & XP_CONFIG_WINDOW_BORDER_WIDTH) w->border = (uint16_t)v[4];
    if (moved) /* children whose gravity is not NorthWest move with a resize: not followed */
        for (uint32_t i = 0; i < o->n_wins; i++)
            if (o->wins[i].parent == w->id && o->wins[i].win_gravity != XP_GRAVITY_NORTH_WEST)
                o->wins[i].geom_unknown = true;
}

/* A top-level's map request may be redirected to a window manager: the model still says
 * mapped (the answers look at the window manager question), but no event is due. */
static void set_mapped(struct ownwin_state *o, struct ownwin_win *w, bool mapped)
{
    if (w->mapped == mapped)
        return; /* no event */
    w->mapped = mapped;
    if (o->display_side && !(mapped && redirectable(o, w) && o->root_redirect == OWNWIN_REDIRECT_YES))
        w->maps_due++;
}


/* The value's bytes leave the window's and the client's count. */
static void value_free(struct ownwin_state *o, struct ownwin_win *w, struct ownwin_prop *p)
{
    w->prop_bytes -= p->len;
    o->prop_bytes -= p->len;
    free(p->data);
    p->data = NULL;
    p->len = 0;
}

static void prop_drop(struct ownwin_state *o, struct ownwin_win *w, struct ownwin_prop *p)
{
    value_free(o, w, p);
    *p = w->props[--w->n_props];
}

/* A property no longer known: kept as such (an absent entry would mean "absent"). */
static void prop_forget(struct ownwin_state *o, struct ownwin_win *w, struct ownwin_prop *p)
{
    value_free(o, w, p);
    p->type = 0;
    p->unknown = true;
}

/* Entries that say what the client set (a value, or that it is unknown): the same on both
 * sides. Others (absent but awaiting its events, changed by another client) are not. */
static bool prop_is_model(const struct ownwin_prop *p) { return p->type || p->unknown; }

static bool model_room(const struct ownwin_win *w)
{
    uint32_t n_model = 0;
    for (uint32_t i = 0; i < w->n_props; i++)
        n_model += prop_is_model(&w->props[i]);
    return n_model < OWNWIN_MAX_PROPS;
}

static struct ownwin_prop *prop_add(struct ownwin_win *w, uint32_t atom, bool model)
{
    if (model ? !model_room(w) : w->n_props >= 4 * OWNWIN_MAX_PROPS) {
        if (model)
            w->props_unknown = true; /* no room to say it is unknown: nothing is known */
        return NULL;
    }
    struct ownwin_prop *n = realloc(w->props, (w->n_props + 1) * sizeof *n);
    if (!n) {
        w->props_unknown = true;
        return NULL;
    }
    w->props = n;
    struct ownwin_prop *p = &w->props[w->n_props++];
    *p = (struct ownwin_prop){ .atom = atom };
    return p;
}

/* ChangeProperty: mode, window, property, type, format, 3 unused, length (in format units), data. */
static void change_property(struct ownwin_state *o, struct ownwin_win *w, const uint8_t *req, uint32_t size,
                            bool msb)
{
    bool count = o->display_side;
    struct xp_change_property_req v;
    if (!xp_change_property_req_view(req, size, msb, &v) || w->props_unknown)
        return;
    uint8_t mode = v.mode, format = v.format;
    uint32_t atom = v.property, type = v.type, units = v.data_len;
    struct ownwin_prop *p = prop_get(w, atom);
    if (p && p->unknown && mode != XP_PROP_MODE_REPLACE)
        return;
    if (p && p->unknown)
        p->unknown = false; /* a whole new value: known again */
    if (p && !prop_is_model(p) && !model_room(w)) {
        w->props_unknown = true; /* as prop_add would, on the side without this entry */
        return;
    }
    uint64_t n = (uint64_t)units * (format / 8);
    if (mode > XP_PROP_MODE_APPEND || !type || (format != 8 && format != 16 && format != 32) || n > v.rest_len) {
        if (p || (p = prop_add(w, atom, true))) /* an error we do not follow exactly */
            prop_forget(o, w, p);
        return;
    }
    bool present = p && p->type;
    if (present && mode != XP_PROP_MODE_REPLACE && (p->type != type || p->format != format))
        return; /* BadMatch: nothing changes, no event */
    if (!p && !(p = prop_add(w, atom, true)))
        return;
    if (count)
        p->events_due++; /* one PropertyNotify, even for an empty append */
    uint64_t keep = mode == XP_PROP_MODE_REPLACE || !present ? 0 : p->len;
    if (w->prop_bytes - p->len + keep + n > OWNWIN_MAX_PROP_BYTES ||
        o->prop_bytes - p->len + keep + n > OWNWIN_MAX_CLIENT_BYTES) {
        prop_forget(o, w, p);
        return;
    }
    uint8_t *data = malloc(keep + n ? keep + n : 1);
    if (!data) {
        prop_forget(o, w, p);
        return;
    }
    const uint8_t *src = v.rest;
    if (mode == XP_PROP_MODE_PREPEND) {
        memcpy(data, src, n);
        if (keep)
            memcpy(data + n, p->data, keep);
    } else {
        if (keep)
            memcpy(data, p->data, keep);
        memcpy(data + keep, src, n);
    }
    value_free(o, w, p);
    p->data = data;
    p->len = (uint32_t)(keep + n);
    w->prop_bytes += p->len;
    o->prop_bytes += p->len;
    p->type = type;
    p->format = format;
}

/* DeleteProperty: an event only if it was there. The display side keeps an absent entry
 * (type 0) until the events it awaits have come. */
static void delete_property(struct ownwin_state *o, struct ownwin_win *w, uint32_t atom)
{
    struct ownwin_prop *p = prop_get(w, atom);
    if (!p || w->props_unknown || p->unknown || !p->type)
        return;
    if (!o->display_side) {
        prop_drop(o, w, p);
        return;
    }
    p->events_due++;
    value_free(o, w, p);
    p->type = 0;
    p->format = 0;
}

/* GetProperty with delete: the property goes when the reply holds the whole rest of it
 * (bytes-after 0) and the type matched. */
static void get_property_deletes(struct ownwin_state *o, struct ownwin_win *w, const struct xp_get_property_req *v)
{
    const struct ownwin_prop *p = prop_get(w, v->property);
    uint32_t type = v->type;
    uint64_t offset = 4ull * v->long_offset, length = 4ull * v->long_length;
    if (!p || !p->type || p->unknown || w->props_unknown || (type && type != p->type) || offset > p->len)
        return;
    if (p->len - offset <= length)
        delete_property(o, w, p->atom);
}

/* CreatePixmap: its geometry never changes until FreePixmap. Modelled only when the server
 * will take it: a new id, a drawable of the client's (a window in the model, a pixmap) or a
 * screen's root, a depth that screen supports, a width and height not 0 (else BadIDChoice,
 * BadDrawable, BadValue). What no model sees: an id the client uses for another kind of
 * resource (its bug) or the server out of memory (BadAlloc), as for every quiet request
 * (predict_quiet.c); no other client frees a client's pixmap but by its bug either. */
static void create_pixmap(struct ownwin_state *o, const uint8_t *req, uint32_t size, bool msb)
{
    struct xp_create_pixmap_req v;
    if (size != XP_CREATE_PIXMAP_REQ_SIZE || !xp_create_pixmap_req_view(req, size, msb, &v) || !v.pid ||
        win_get(o, v.pid) || idmap_get(&o->pixmaps, v.pid))
        return;
    const struct ownwin_win *w = win_get(o, v.drawable);
    const struct idmap_entry *from = w ? NULL : idmap_get(&o->pixmaps, v.drawable);
    uint32_t root = w ? w->root : from ? from->a : v.drawable;
    const struct ownwin_screen *s = screen_of_root(o, root);
    if (!s || !v.depth || v.depth > 32 || !(s->depths >> (v.depth - 1) & 1) || !v.width || !v.height)
        return;
    struct idmap_entry *e = idmap_put(&o->pixmaps, v.pid);
    if (e)
        e->a = root, e->b = (uint32_t)v.width | (uint32_t)v.height << 16, e->c = v.depth;
}

void ownwin_on_request(struct ownwin_state *o, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                       bool msb)
{
    /* SHAPE's requests that set a shape (not its queries nor SelectInput): which point a
     * window contains is then not followed. */
    if (cls->kind == MSG_REQUEST && cls->ext && !strcmp(cls->ext, "SHAPE") && cls->minor >= XP_SHAPE_OP_RECTANGLES &&
        cls->minor <= XP_SHAPE_OP_OFFSET)
        o->shaped = true;
    /* Core requests only: an extension's that xstream does not know yet comes without its
     * name, its major opcode 128 or more. */
    if (cls->kind != MSG_REQUEST || cls->ext || cls->major >= sizeof ownwin_window_at / sizeof *ownwin_window_at ||
        size < XP_REQUEST_HEADER_SIZE)
        return;
    if (cls->major == XP_OP_CREATE_WINDOW) {
        create_window(o, req, size, msb);
        return;
    }
    uint32_t pixmap;
    if (cls->major == XP_OP_CREATE_PIXMAP) {
        create_pixmap(o, req, size, msb);
        return;
    }
    if (cls->major == XP_OP_FREE_PIXMAP) {
        if (xp_peek32(req, size, XP_FREE_PIXMAP_REQ_PIXMAP_AT, msb, &pixmap) && idmap_get(&o->pixmaps, pixmap))
            idmap_del(&o->pixmaps, pixmap);
        return;
    }
    uint32_t id, property;
    struct ownwin_win *w = ownwin_window_at[cls->major] && xp_peek32(req, size, ownwin_window_at[cls->major], msb, &id) ? win_get(o, id) : NULL;
    if (!w)
        return;
    union {
        struct xp_change_window_attributes_req attrs;
        struct xp_delete_property_req del;
        struct xp_get_property_req get;
    } v;
    struct xp_request_header h;
    switch (cls->major) {
    case XP_OP_CHANGE_WINDOW_ATTRIBUTES:
        if (!xp_change_window_attributes_req_view(req, size, msb, &v.attrs) ||
            !apply_attributes(o, w, v.attrs.value_mask, v.attrs.rest, (uint32_t)v.attrs.rest_len, msb))
            w->attrs_unknown = true;
        break;
    case XP_OP_DESTROY_WINDOW:
        destroy_tree(o, w->id, true);
        break;
    case XP_OP_DESTROY_SUBWINDOWS:
        destroy_tree(o, w->id, false);
        break;
    case XP_OP_REPARENT_WINDOW: /* not followed: its new place, and its subtree's map states */
        o->tree_unknown = true;
        for (uint32_t i = 0; i < o->n_wins; i++) {
            o->wins[i].geom_unknown |= o->wins[i].id == w->id;
            o->wins[i].attrs_unknown = true;
        }
        break;
    case XP_OP_MAP_WINDOW:
    case XP_OP_UNMAP_WINDOW:
        set_mapped(o, w, cls->major == XP_OP_MAP_WINDOW);
        break;
    case XP_OP_MAP_SUBWINDOWS:
    case XP_OP_UNMAP_SUBWINDOWS:
        for (uint32_t i = 0; i < o->n_wins; i++)
            if (o->wins[i].parent == w->id)
                set_mapped(o, &o->wins[i], cls->major == XP_OP_MAP_SUBWINDOWS);
        break;
    case XP_OP_CONFIGURE_WINDOW:
        configure_window(o, w, req, size, msb);
        break;
    case XP_OP_CHANGE_PROPERTY:
        change_property(o, w, req, size, msb);
        break;
    case XP_OP_DELETE_PROPERTY:
        if (xp_delete_property_req_view(req, size, msb, &v.del))
            delete_property(o, w, v.del.property);
        break;
    case XP_OP_GET_PROPERTY: /* delete: the header's data byte, 1 or BadValue */
        if (size == XP_GET_PROPERTY_REQ_SIZE && xp_get_property_req_view(req, size, msb, &v.get) && v.get.delete == 1)
            get_property_deletes(o, w, &v.get);
        else if (xp_request_header_view(req, size, msb, &h) && h.data &&
                 xp_peek32(req, size, XP_GET_PROPERTY_REQ_PROPERTY_AT, msb, &property)) { /* BadValue, or cut short: not followed */
            struct ownwin_prop *p = prop_get(w, property);
            if (p || (p = prop_add(w, property, true)))
                prop_forget(o, w, p);
        }
        break;
    case XP_OP_ROTATE_PROPERTIES:
        w->props_unknown = true;
        break;
    case XP_OP_CIRCULATE_WINDOW: /* its children restacked */
        w->order_unknown = true;
        break;
    default:
        break;
    }
}

bool ownwin_may_fail(const struct ownwin_state *o, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                     bool msb)
{
    uint32_t id, x;
    if (cls->kind != MSG_REQUEST || cls->ext || cls->major >= sizeof ownwin_window_at / sizeof *ownwin_window_at ||
        size < XP_REQUEST_HEADER_SIZE || !ownwin_window_at[cls->major] || !xp_peek32(req, size, ownwin_window_at[cls->major], msb, &id))
        return false;
    const struct ownwin_win *w = win_get(o, id);
    if (!w)
        return false;
    struct xp_change_property_req c;
    struct xp_configure_window_req g;
    if (cls->major == XP_OP_CHANGE_PROPERTY && xp_change_property_req_view(req, size, msb, &c)) {
        if (c.mode > XP_PROP_MODE_APPEND || !c.type || (c.format != 8 && c.format != 16 && c.format != 32))
            return true;
        if (c.mode == XP_PROP_MODE_REPLACE)
            return false;
        const struct ownwin_prop *p = prop_get(w, c.property);
        if (w->props_unknown || (p && p->unknown))
            return true; /* appending to a value we do not know: its type may differ */
        return p && p->type && (p->type != c.type || p->format != c.format); /* BadMatch */
    }
    if (cls->major == XP_OP_CONFIGURE_WINDOW && xp_configure_window_req_view(req, size, msb, &g)) {
        /* a width or height of 0: BadValue */
        return (xp_mask_value(g.value_mask, XP_CONFIG_WINDOW_WIDTH, g.rest, g.rest_len, msb, &x) && !(uint16_t)x) ||
               (xp_mask_value(g.value_mask, XP_CONFIG_WINDOW_HEIGHT, g.rest, g.rest_len, msb, &x) && !(uint16_t)x);
    }
    return false;
}

/* ---------------------------------------------------------------- facts */

bool ownwin_is_fact(const uint8_t *payload, size_t len)
{
    return len && payload[0] >= OWNWIN_FACT_PROPERTY && payload[0] <= OWNWIN_FACT_WATCH;
}

int ownwin_on_fact(struct ownwin_state *o, const uint8_t *payload, size_t len)
{
    struct rd r = rd_make(payload, len, false);
    uint8_t kind, what;
    uint64_t a, b;
    if (rd_u8(&r, &kind) || rd_varint(&r, &a) || a > UINT32_MAX)
        return -EBADMSG;
    switch (kind) {
    case OWNWIN_FACT_PROPERTY: {
        if (rd_varint(&r, &b) || b > UINT32_MAX || rd_left(&r))
            return -EBADMSG;
        struct ownwin_win *w = o ? win_get(o, (uint32_t)a) : NULL;
        if (!w)
            return 0; /* destroyed since, or never followed */
        struct ownwin_prop *p = b ? prop_get(w, (uint32_t)b) : NULL;
        if (!b)
            w->props_foreign = true;
        else if (p || (p = prop_add(w, (uint32_t)b, false)))
            p->foreign = true;
        else
            w->props_foreign = true; /* no room to say which */
        return 0;
    }
    case OWNWIN_FACT_WINDOW: {
        if (rd_u8(&r, &what) || !what || (what & ~(OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES | OWNWIN_CHILDREN)) || rd_left(&r))
            return -EBADMSG;
        struct ownwin_win *w = o ? win_get(o, (uint32_t)a) : NULL;
        if (w) {
            w->geom_foreign |= (what & OWNWIN_GEOMETRY) != 0;
            w->attrs_foreign |= (what & OWNWIN_ATTRIBUTES) != 0;
            w->kids_foreign |= (what & OWNWIN_CHILDREN) != 0;
        }
        return 0;
    }
    case OWNWIN_FACT_WATCH:
        if (rd_varint(&r, &b) || b > UINT32_MAX || rd_u8(&r, &what) || what > OWNWIN_REDIRECT_UNKNOWN || rd_left(&r))
            return -EBADMSG;
        if (!o)
            return 0;
        o->observer_mask = (uint32_t)a;
        o->watched_root = (uint32_t)b;
        o->root_redirect = what;
        return 0;
    default:
        return -EBADMSG;
    }
}

static int fact_encode(struct buf *out, uint8_t kind, uint64_t a, uint64_t b, int u8_value)
{
    int rc = buf_append(out, &kind, 1);
    rc = rc ? rc : buf_put_varint(out, a);
    if (!rc && b != UINT64_MAX)
        rc = buf_put_varint(out, b);
    if (!rc && u8_value >= 0) {
        uint8_t v = (uint8_t)u8_value;
        rc = buf_append(out, &v, 1);
    }
    return rc;
}

int ownwin_fact_property(struct buf *out, uint32_t window, uint32_t atom)
{
    return fact_encode(out, OWNWIN_FACT_PROPERTY, window, atom, -1);
}

int ownwin_fact_window(struct buf *out, uint32_t window, uint8_t what)
{
    return fact_encode(out, OWNWIN_FACT_WINDOW, window, UINT64_MAX, what);
}

int ownwin_fact_watch(struct buf *out, uint32_t observer_mask, uint32_t root, uint8_t redirect)
{
    return fact_encode(out, OWNWIN_FACT_WATCH, observer_mask, root, redirect);
}

/* ---------------------------------------------------------------- display side: attribution */

bool ownwin_event_property(struct ownwin_state *o, uint32_t window, uint32_t *atom)
{
    struct ownwin_win *w = win_get(o, window);
    if (!w || w->props_unknown || w->props_foreign)
        return false;
    struct ownwin_prop *p = prop_get(w, *atom);
    if (p && p->events_due) {
        if (!--p->events_due && !prop_is_model(p) && !p->foreign)
            prop_drop(o, w, p); /* deleted, and every event it waited for has come */
        return false;
    }
    if (p && (p->unknown || p->foreign))
        return false;
    if (!p && !(p = prop_add(w, *atom, false))) {
        w->props_foreign = true; /* no room to say which: all of them */
        *atom = 0;
        return true;
    }
    p->foreign = true;
    return true;
}

bool ownwin_event_configure(struct ownwin_state *o, uint32_t window)
{
    struct ownwin_win *w = win_get(o, window);
    if (!w || w->geom_unknown || w->geom_foreign)
        return false;
    if (w->configures_due) {
        w->configures_due--;
        return false;
    }
    w->geom_foreign = true;
    return true;
}

bool ownwin_event_map(struct ownwin_state *o, uint32_t window)
{
    struct ownwin_win *w = win_get(o, window);
    if (!w || w->attrs_unknown || w->attrs_foreign)
        return false;
    if (w->maps_due) {
        w->maps_due--;
        return false;
    }
    w->attrs_foreign = true;
    return true;
}

uint8_t ownwin_event_foreign(struct ownwin_state *o, uint32_t window, uint8_t what)
{
    struct ownwin_win *w = win_get(o, window);
    if (!w)
        return 0;
    uint8_t told = 0;
    if ((what & OWNWIN_GEOMETRY) && !w->geom_unknown && !w->geom_foreign) {
        w->geom_foreign = true;
        told |= OWNWIN_GEOMETRY;
    }
    if ((what & OWNWIN_ATTRIBUTES) && !w->attrs_unknown && !w->attrs_foreign) {
        w->attrs_foreign = true;
        told |= OWNWIN_ATTRIBUTES;
    }
    if ((what & OWNWIN_PROPERTIES) && !w->props_unknown && !w->props_foreign) {
        w->props_foreign = true;
        told |= OWNWIN_PROPERTIES;
    }
    if ((what & OWNWIN_CHILDREN) && !w->kids_foreign) {
        w->kids_foreign = true;
        told |= OWNWIN_CHILDREN;
    }
    return told;
}

bool ownwin_geometry_differs(const struct ownwin_state *o, uint32_t window, int16_t x, int16_t y, uint16_t width,
                             uint16_t height, uint16_t border)
{
    const struct ownwin_win *w = win_get(o, window);
    return w && !w->geom_unknown &&
           (w->x != x || w->y != y || w->width != width || w->height != height || w->border != border);
}
