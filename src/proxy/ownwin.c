/* ownwin.c -- the model of a client's own windows (ownwin.h): kept from its requests on
 * both sides, answered from at the app side, checked at the display side. Never guesses:
 * whatever a request leaves unknowable is marked unknown and asked of the server. */
#include "proxy/ownwin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    OP_CREATE_WINDOW = 1, OP_CHANGE_WINDOW_ATTRIBUTES = 2, OP_GET_WINDOW_ATTRIBUTES = 3, OP_DESTROY_WINDOW = 4,
    OP_DESTROY_SUBWINDOWS = 5, OP_REPARENT_WINDOW = 7, OP_MAP_WINDOW = 8, OP_MAP_SUBWINDOWS = 9,
    OP_UNMAP_WINDOW = 10, OP_UNMAP_SUBWINDOWS = 11, OP_CONFIGURE_WINDOW = 12, OP_GET_GEOMETRY = 14,
    OP_CHANGE_PROPERTY = 18, OP_DELETE_PROPERTY = 19, OP_GET_PROPERTY = 20, OP_ROTATE_PROPERTIES = 114,
};
enum { CLASS_INPUT_OUTPUT = 1, CLASS_INPUT_ONLY = 2 };
enum { GRAVITY_NORTH_WEST = 1 };
enum { MAP_UNMAPPED = 0, MAP_UNVIEWABLE = 1, MAP_VIEWABLE = 2 };
#define CW_OVERRIDE_REDIRECT 0x200u
#define CW_LAST_BIT 14

void ownwin_init(struct ownwin_state *o, bool display_side)
{
    memset(o, 0, sizeof *o);
    idmap_init(&o->by_id, OWNWIN_MAX_WINDOWS);
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
    memset(o, 0, sizeof *o);
}

void ownwin_learn_setup(struct ownwin_state *o, const uint8_t *setup, size_t size, bool msb)
{
    struct rd r = rd_make(setup, size, msb);
    uint8_t status, n_screens, n_formats;
    uint16_t vendor_len;
    if (rd_u8(&r, &status) || status != 1 || rd_skip(&r, 23) || rd_u16(&r, &vendor_len) || rd_skip(&r, 2) ||
        rd_u8(&r, &n_screens) || rd_u8(&r, &n_formats) || rd_skip(&r, 10) ||
        rd_skip(&r, vendor_len + ((4 - vendor_len % 4) % 4) + 8u * n_formats))
        return;
    o->n_screens = 0;
    for (uint8_t s = 0; s < n_screens && o->n_screens < OWNWIN_MAX_SCREENS; s++) {
        struct ownwin_screen sc;
        uint8_t n_depths;
        if (rd_u32(&r, &sc.root) || rd_u32(&r, &sc.colormap) || rd_skip(&r, 24) || rd_u32(&r, &sc.visual) ||
            rd_skip(&r, 2) || rd_u8(&r, &sc.depth) || rd_u8(&r, &n_depths))
            return;
        for (uint8_t d = 0; d < n_depths; d++) {
            uint16_t n_visuals;
            if (rd_skip(&r, 2) || rd_u16(&r, &n_visuals) || rd_skip(&r, 4 + 24u * n_visuals))
                return;
        }
        o->screens[o->n_screens++] = sc;
    }
}

static const struct ownwin_screen *screen_of_root(const struct ownwin_state *o, uint32_t root)
{
    for (uint32_t i = 0; i < o->n_screens; i++)
        if (o->screens[i].root == root)
            return &o->screens[i];
    return NULL;
}

static struct ownwin_win *win_get(const struct ownwin_state *o, uint32_t id)
{
    const struct idmap_entry *e = id ? idmap_get(&o->by_id, id) : NULL;
    return e ? &o->wins[e->a] : NULL;
}

bool ownwin_known(const struct ownwin_state *o, uint32_t window)
{
    return win_get(o, window) != NULL;
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
static bool redirectable(const struct ownwin_state *o, const struct ownwin_win *w)
{
    return w->parent == w->root && !w->override_redirect;
}

/* Sets the window attributes a CreateWindow or ChangeWindowAttributes value list names
 * (values in the order of their mask bits). False if the list is cut short. */
static bool apply_attributes(struct ownwin_state *o, struct ownwin_win *w, uint32_t mask, const uint8_t *v,
                             uint32_t len, bool msb)
{
    uint32_t at = 0;
    for (int bit = 0; bit <= CW_LAST_BIT; bit++) {
        if (!(mask & (1u << bit)))
            continue;
        if (at + 4 > len)
            return false;
        uint32_t x = ld32(v + at, msb);
        at += 4;
        switch (bit) {
        case 4: w->bit_gravity = (uint8_t)x; break;
        case 5: w->win_gravity = (uint8_t)x; break;
        case 6: w->backing_store = (uint8_t)x; break;
        case 7: w->backing_planes = x; break;
        case 8: w->backing_pixel = x; break;
        case 9: w->override_redirect = (uint8_t)(x & 1); break;
        case 10: w->save_under = (uint8_t)(x & 1); break;
        case 11: w->event_mask = x; break;
        case 12: w->dont_propagate = (uint16_t)x; break;
        case 13:
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
    /* depth in the header; wid, parent, x, y, width, height, border, class, visual, mask, values */
    if (size < 32)
        return;
    uint32_t id = ld32(req + 4, msb), parent_id = ld32(req + 8, msb);
    const struct ownwin_screen *screen = screen_of_root(o, parent_id);
    if (win_get(o, id) || (!win_get(o, parent_id) && !screen) || o->n_wins >= OWNWIN_MAX_WINDOWS)
        return; /* a window under someone else's: not modelled */
    if (o->n_wins == o->cap_wins) {
        uint32_t cap = o->cap_wins ? o->cap_wins * 2 : 8;
        struct ownwin_win *n = realloc(o->wins, cap * sizeof *n);
        if (!n)
            return;
        o->wins = n;
        o->cap_wins = cap;
    }
    const struct ownwin_win *parent = win_get(o, parent_id); /* after the array moved */
    struct idmap_entry *e = idmap_put(&o->by_id, id);
    if (!e)
        return;
    e->a = o->n_wins;
    struct ownwin_win *w = &o->wins[o->n_wins++];
    uint16_t klass = ld16(req + 22, msb);
    uint8_t parent_class = parent ? parent->klass : CLASS_INPUT_OUTPUT;
    *w = (struct ownwin_win){
        .id = id, .parent = parent_id, .root = parent ? parent->root : parent_id,
        .x = (int16_t)ld16(req + 12, msb), .y = (int16_t)ld16(req + 14, msb),
        .width = ld16(req + 16, msb), .height = ld16(req + 18, msb), .border = ld16(req + 20, msb),
        .klass = (uint8_t)(klass ? klass : parent_class), .visual = ld32(req + 24, msb),
        .win_gravity = GRAVITY_NORTH_WEST, .backing_planes = 0xffffffffu,
        .geom_unknown = parent && parent->geom_unknown, .attrs_unknown = parent && parent->attrs_unknown,
    };
    /* CopyFromParent: depth, visual and colormap are the parent's (InputOnly: none). */
    uint8_t depth = req[1];
    uint32_t parent_visual = parent ? parent->visual : screen->visual;
    if (w->klass == CLASS_INPUT_ONLY) {
        w->depth = 0;
    } else {
        w->depth = depth ? depth : parent ? parent->depth : screen->depth;
        w->colormap = parent ? parent->colormap : screen->colormap;
    }
    if (!w->visual)
        w->visual = parent_visual;
    else if (w->visual != parent_visual && w->klass != CLASS_INPUT_ONLY)
        w->colormap = 0; /* another visual needs a colormap of its own: given below, or BadMatch */
    if (klass > CLASS_INPUT_ONLY ||
        !w->width || !w->height || !apply_attributes(o, w, ld32(req + 28, msb), req + 32, size - 32, msb) ||
        (w->klass != CLASS_INPUT_ONLY && !w->colormap)) {
        w->geom_unknown = w->attrs_unknown = true; /* an error, or something we do not follow */
        w->props_unknown = true;
    }
}

/* ConfigureWindow's value list: x, y, width, height, border, sibling, stack-mode. */
static void configure_window(struct ownwin_state *o, struct ownwin_win *w, const uint8_t *req, uint32_t size,
                             bool msb)
{
    if (size < 12)
        return;
    uint16_t mask = ld16(req + 8, msb);
    uint32_t at = 12;
    int32_t v[7] = { 0 };
    for (int bit = 0; bit < 7; bit++) {
        if (!(mask & (1u << bit)))
            continue;
        if (at + 4 > size) {
            w->geom_unknown = true;
            return;
        }
        v[bit] = (int32_t)ld32(req + at, msb);
        at += 4;
    }
    if (o->display_side && !(redirectable(o, w) && o->root_redirect == OWNWIN_REDIRECT_YES))
        w->configures_due++; /* carried out: one ConfigureNotify; redirected: none */
    if (((mask & 4) && !(uint16_t)v[2]) || ((mask & 8) && !(uint16_t)v[3])) {
        w->geom_unknown = true; /* BadValue */
        return;
    }
    bool moved = mask & 0x1f;
    if (mask & 1) w->x = (int16_t)v[0];
    if (mask & 2) w->y = (int16_t)v[1];
    if (mask & 4) w->width = (uint16_t)v[2];
    if (mask & 8) w->height = (uint16_t)v[3];
    if (mask & 16) w->border = (uint16_t)v[4];
    if (moved) /* children whose gravity is not NorthWest move with a resize: not followed */
        for (uint32_t i = 0; i < o->n_wins; i++)
            if (o->wins[i].parent == w->id && o->wins[i].win_gravity != GRAVITY_NORTH_WEST)
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

static struct ownwin_prop *prop_get(const struct ownwin_win *w, uint32_t atom)
{
    for (uint32_t i = 0; i < w->n_props; i++)
        if (w->props[i].atom == atom)
            return &w->props[i];
    return NULL;
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
    if (size < 24 || w->props_unknown)
        return;
    uint8_t mode = req[1], format = req[16];
    uint32_t atom = ld32(req + 8, msb), type = ld32(req + 12, msb), units = ld32(req + 20, msb);
    struct ownwin_prop *p = prop_get(w, atom);
    if (p && p->unknown && mode != 0)
        return;
    if (p && p->unknown)
        p->unknown = false; /* a whole new value: known again */
    if (p && !prop_is_model(p) && !model_room(w)) {
        w->props_unknown = true; /* as prop_add would, on the side without this entry */
        return;
    }
    uint64_t n = (uint64_t)units * (format / 8);
    if (mode > 2 || !type || (format != 8 && format != 16 && format != 32) || n > size - 24) {
        if (p || (p = prop_add(w, atom, true))) /* an error we do not follow exactly */
            prop_forget(o, w, p);
        return;
    }
    bool present = p && p->type;
    if (present && mode != 0 && (p->type != type || p->format != format))
        return; /* BadMatch: nothing changes, no event */
    if (!p && !(p = prop_add(w, atom, true)))
        return;
    if (count)
        p->events_due++; /* one PropertyNotify, even for an empty append */
    uint64_t keep = mode == 0 || !present ? 0 : p->len;
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
    const uint8_t *src = req + 24;
    if (mode == 1) { /* Prepend */
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
static void get_property_deletes(struct ownwin_state *o, struct ownwin_win *w, const uint8_t *req, bool msb)
{
    const struct ownwin_prop *p = prop_get(w, ld32(req + 8, msb));
    uint32_t type = ld32(req + 12, msb);
    uint64_t offset = 4ull * ld32(req + 16, msb), length = 4ull * ld32(req + 20, msb);
    if (!p || !p->type || p->unknown || w->props_unknown || (type && type != p->type) || offset > p->len)
        return;
    if (p->len - offset <= length)
        delete_property(o, w, p->atom);
}

void ownwin_on_request(struct ownwin_state *o, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                       bool msb)
{
    if (cls->kind != MSG_REQUEST || cls->ext || size < 8)
        return;
    if (cls->major == OP_CREATE_WINDOW) {
        create_window(o, req, size, msb);
        return;
    }
    struct ownwin_win *w = win_get(o, ld32(req + 4, msb));
    if (!w)
        return;
    switch (cls->major) {
    case OP_CHANGE_WINDOW_ATTRIBUTES:
        if (size < 12 || !apply_attributes(o, w, ld32(req + 8, msb), req + 12, size - 12, msb))
            w->attrs_unknown = true;
        break;
    case OP_DESTROY_WINDOW:
        destroy_tree(o, w->id, true);
        break;
    case OP_DESTROY_SUBWINDOWS:
        destroy_tree(o, w->id, false);
        break;
    case OP_REPARENT_WINDOW: /* not followed: its new place, and its subtree's map states */
        for (uint32_t i = 0; i < o->n_wins; i++) {
            o->wins[i].geom_unknown |= o->wins[i].id == w->id;
            o->wins[i].attrs_unknown = true;
        }
        break;
    case OP_MAP_WINDOW:
    case OP_UNMAP_WINDOW:
        set_mapped(o, w, cls->major == OP_MAP_WINDOW);
        break;
    case OP_MAP_SUBWINDOWS:
    case OP_UNMAP_SUBWINDOWS:
        for (uint32_t i = 0; i < o->n_wins; i++)
            if (o->wins[i].parent == w->id)
                set_mapped(o, &o->wins[i], cls->major == OP_MAP_SUBWINDOWS);
        break;
    case OP_CONFIGURE_WINDOW:
        configure_window(o, w, req, size, msb);
        break;
    case OP_CHANGE_PROPERTY:
        change_property(o, w, req, size, msb);
        break;
    case OP_DELETE_PROPERTY:
        if (size >= 12)
            delete_property(o, w, ld32(req + 8, msb));
        break;
    case OP_GET_PROPERTY:
        if (size == 24 && req[1] == 1)
            get_property_deletes(o, w, req, msb);
        else if (size >= 12 && req[1]) { /* BadValue, or cut short: not followed */
            struct ownwin_prop *p = prop_get(w, ld32(req + 8, msb));
            if (p || (p = prop_add(w, ld32(req + 8, msb), true)))
                prop_forget(o, w, p);
        }
        break;
    case OP_ROTATE_PROPERTIES:
        w->props_unknown = true;
        break;
    default:
        break;
    }
}

bool ownwin_may_fail(const struct ownwin_state *o, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                     bool msb)
{
    if (cls->kind != MSG_REQUEST || cls->ext || size < 8)
        return false;
    const struct ownwin_win *w = win_get(o, ld32(req + 4, msb));
    if (!w)
        return false;
    if (cls->major == OP_CHANGE_PROPERTY && size >= 24) {
        uint8_t mode = req[1], format = req[16];
        if (mode > 2 || !ld32(req + 12, msb) || (format != 8 && format != 16 && format != 32))
            return true;
        if (mode == 0)
            return false;
        const struct ownwin_prop *p = prop_get(w, ld32(req + 8, msb));
        if (w->props_unknown || (p && p->unknown))
            return true; /* appending to a value we do not know: its type may differ */
        return p && p->type && (p->type != ld32(req + 12, msb) || p->format != format); /* BadMatch */
    }
    if (cls->major == OP_CONFIGURE_WINDOW && size >= 12) { /* a width or height of 0: BadValue */
        uint16_t mask = ld16(req + 8, msb);
        uint32_t at = 12 + 4u * (mask & 1) + 4u * ((mask >> 1) & 1);
        return ((mask & 4) && at + 4 <= size && !ld16(req + at + (msb ? 2 : 0), msb)) ||
               ((mask & 8) && at + 4u * ((mask >> 2) & 1) + 4 <= size &&
                !ld16(req + at + 4u * ((mask >> 2) & 1) + (msb ? 2 : 0), msb));
    }
    return false;
}

/* ---------------------------------------------------------------- answers */

static uint8_t *reply_header(struct buf *out, uint16_t seq, bool msb, size_t extra)
{
    uint8_t *r = buf_append_space(out, 32 + extra);
    if (!r)
        return NULL;
    memset(r, 0, 32 + extra);
    r[0] = 1;
    st16(r + 2, seq, msb);
    st32(r + 4, (uint32_t)(extra / 4), msb);
    return r;
}

/* Whether the window manager question is settled for w (it cannot move or map w). */
static bool unmanaged(const struct ownwin_state *o, const struct ownwin_win *w)
{
    return !redirectable(o, w) || (o->watched_root == w->root && o->root_redirect == OWNWIN_REDIRECT_NO);
}

static bool answer_geometry(const struct ownwin_state *o, const struct ownwin_win *w, uint16_t seq, bool msb,
                            bool verify, struct buf *out)
{
    if (w->geom_unknown || (!verify && (w->geom_foreign || !unmanaged(o, w))))
        return false;
    uint8_t *r = reply_header(out, seq, msb, 0);
    if (!r)
        return false;
    r[1] = w->depth;
    st32(r + 8, w->root, msb);
    st16(r + 12, (uint16_t)w->x, msb);
    st16(r + 14, (uint16_t)w->y, msb);
    st16(r + 16, w->width, msb);
    st16(r + 18, w->height, msb);
    st16(r + 20, w->border, msb);
    return true;
}

/* Unmapped, unviewable or viewable: every ancestor up to the root must be known. */
/* Unmapped, unviewable or viewable: every ancestor up to the root must be known. A window
 * the client has not mapped is unmapped even under a window manager; a mapped top-level
 * is the window manager's business. */
static int map_state(const struct ownwin_state *o, const struct ownwin_win *w, bool verify)
{
    for (const struct ownwin_win *a = w; a; a = win_get(o, a->parent)) {
        if (a->attrs_unknown || (!verify && a->attrs_foreign))
            return -1;
        if (!a->mapped)
            return a == w ? MAP_UNMAPPED : MAP_UNVIEWABLE;
        if (!verify && !unmanaged(o, a))
            return -1;
        if (a->parent == a->root)
            return MAP_VIEWABLE;
    }
    return -1;
}

static bool answer_attributes(const struct ownwin_state *o, const struct ownwin_win *w, uint16_t seq, bool msb,
                              bool verify, struct buf *out)
{
    if (w->attrs_unknown || (!verify && (w->attrs_foreign || !o->observer_mask)))
        return false;
    const struct ownwin_screen *s = screen_of_root(o, w->root);
    int state = map_state(o, w, verify);
    /* Only the default colormap is known to be installed. */
    if (state < 0 || !s || (w->colormap && w->colormap != s->colormap))
        return false;
    uint8_t *r = reply_header(out, seq, msb, 12);
    if (!r)
        return false;
    r[1] = w->backing_store;
    st32(r + 8, w->visual, msb);
    st16(r + 12, w->klass, msb);
    r[14] = w->bit_gravity;
    r[15] = w->win_gravity;
    st32(r + 16, w->backing_planes, msb);
    st32(r + 20, w->backing_pixel, msb);
    r[24] = w->save_under;
    r[25] = w->colormap != 0;
    r[26] = (uint8_t)state;
    r[27] = w->override_redirect;
    st32(r + 28, w->colormap, msb);
    st32(r + 32, w->event_mask | o->observer_mask, msb);
    st32(r + 36, w->event_mask, msb);
    st16(r + 40, w->dont_propagate, msb);
    return true;
}

/* GetProperty: delete, window, property, type, long-offset, long-length. As the protocol
 * says: absent gives None; another type gives the actual type, format and length and no
 * data; an offset beyond the value is BadValue (not answered here). With delete, the same
 * reply; the model deletes after it (ownwin_on_request). */
static bool answer_property(const struct ownwin_win *w, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                            bool verify, const struct predictor *atoms, struct buf *out)
{
    if (size != 24 || req[1] > 1 || w->props_unknown || (!verify && w->props_foreign))
        return false;
    uint32_t atom = ld32(req + 8, msb), type = ld32(req + 12, msb);
    uint64_t offset = 4ull * ld32(req + 16, msb), length = 4ull * ld32(req + 20, msb);
    const struct ownwin_prop *p = prop_get(w, atom);
    if (p && (p->unknown || (!verify && p->foreign)))
        return false;
    bool present = p && p->type;
    /* BadAtom unless both atoms exist: the property's, when set by this client, does. */
    if (!verify && ((!present && !predict_atom_known(atoms, atom)) ||
                    (type && !(present && type == p->type) && !predict_atom_known(atoms, type))))
        return false;
    uint8_t *r;
    if (!present)
        return reply_header(out, seq, msb, 0) != NULL; /* None, format 0 */
    if (type && type != p->type) {
        if (!(r = reply_header(out, seq, msb, 0)))
            return false;
        r[1] = p->format;
        st32(r + 8, p->type, msb);
        st32(r + 12, p->len / (p->format / 8u), msb); /* the sample server counts units here, not bytes */
        return true;
    }
    if (offset > p->len)
        return false; /* BadValue */
    uint32_t n = (uint32_t)(p->len - offset < length ? p->len - offset : length);
    unsigned unit = p->format / 8u;
    if (!unit || n % unit || !(r = reply_header(out, seq, msb, n + (4 - n % 4) % 4)))
        return false;
    r[1] = p->format;
    st32(r + 8, p->type, msb);
    st32(r + 12, (uint32_t)(p->len - offset - n), msb);
    st32(r + 16, n / unit, msb);
    if (n)
        memcpy(r + 32, p->data + offset, n);
    return true;
}

bool ownwin_answer(const struct ownwin_state *o, const struct predictor *atoms, const struct msg_class *cls,
                   const uint8_t *req, uint32_t size, uint16_t seq, bool msb, bool verify, struct buf *out)
{
    if (cls->kind != MSG_REQUEST || cls->ext || size < 8 || (!verify && !o->observer_mask))
        return false;
    const struct ownwin_win *w = win_get(o, ld32(req + 4, msb));
    if (!w)
        return false;
    switch (cls->major) {
    case OP_GET_GEOMETRY:
        return size == 8 && answer_geometry(o, w, seq, msb, verify, out);
    case OP_GET_WINDOW_ATTRIBUTES:
        return size == 8 && answer_attributes(o, w, seq, msb, verify, out);
    case OP_GET_PROPERTY:
        return answer_property(w, req, size, seq, msb, verify, atoms, out);
    default:
        return false;
    }
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
        if (rd_u8(&r, &what) || what > 3 || rd_left(&r))
            return -EBADMSG;
        struct ownwin_win *w = o ? win_get(o, (uint32_t)a) : NULL;
        if (w) {
            w->geom_foreign |= (what & OWNWIN_GEOMETRY) != 0;
            w->attrs_foreign |= (what & OWNWIN_ATTRIBUTES) != 0;
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
    return told;
}

bool ownwin_geometry_differs(const struct ownwin_state *o, uint32_t window, int16_t x, int16_t y, uint16_t width,
                             uint16_t height, uint16_t border)
{
    const struct ownwin_win *w = win_get(o, window);
    return w && !w->geom_unknown &&
           (w->x != x || w->y != y || w->width != width || w->height != height || w->border != border);
}
