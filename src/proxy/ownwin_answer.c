/* ownwin_answer.c -- the app side's answers from the model of a client's own windows
 * (ownwin.c): geometry, attributes, the tree, coordinates and properties, each only when
 * the model knows all of it; else the server is asked. */
#include "proxy/ownwin.h"
#include "proxy/ownwin_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xproto_wire.h"

/* ---------------------------------------------------------------- answers */

/* Room for a reply of 32 + extra bytes, zeroed, at the end of out; NULL: no memory. */
static uint8_t *reply_space(struct buf *out, size_t extra)
{
    uint8_t *r = buf_append_space(out, XP_SERVER_MSG_SIZE + extra);
    if (r)
        memset(r, 0, XP_SERVER_MSG_SIZE + extra);
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
    uint8_t *r = reply_space(out, 0);
    return r && xp_get_geometry_reply_put(r, XP_GET_GEOMETRY_REPLY_SIZE, msb, &(struct xp_get_geometry_reply){
        .sequence = seq, .depth = w->depth, .root = w->root, .x = w->x, .y = w->y, .width = w->width,
        .height = w->height, .border_width = w->border });
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
            return a == w ? XP_MAP_STATE_UNMAPPED : XP_MAP_STATE_UNVIEWABLE;
        if (!verify && !unmanaged(o, a))
            return -1;
        if (a->parent == a->root)
            return XP_MAP_STATE_VIEWABLE;
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
    uint8_t *r = reply_space(out, XP_GET_WINDOW_ATTRIBUTES_REPLY_SIZE - XP_SERVER_MSG_SIZE);
    return r && xp_get_window_attributes_reply_put(r, XP_GET_WINDOW_ATTRIBUTES_REPLY_SIZE, msb,
        &(struct xp_get_window_attributes_reply){
            .sequence = seq, .length = (XP_GET_WINDOW_ATTRIBUTES_REPLY_SIZE - XP_SERVER_MSG_SIZE) / 4,
            .backing_store = w->backing_store, .visual = w->visual, .class = w->klass,
            .bit_gravity = w->bit_gravity, .win_gravity = w->win_gravity, .backing_planes = w->backing_planes,
            .backing_pixel = w->backing_pixel, .save_under = w->save_under, .map_is_installed = w->colormap != 0,
            .map_state = (uint8_t)state, .override_redirect = w->override_redirect, .colormap = w->colormap,
            .all_event_masks = w->event_mask | o->observer_mask, .your_event_mask = w->event_mask,
            .do_not_propagate_mask = w->dont_propagate });
}

/* Whether w's children are all in the model, with their stacking: none left out, none that
 * may not exist, none restacked, and (answering) none made, moved in, destroyed or changed
 * by another client; and the client has reparented none of its windows. */
static bool kids_known(const struct ownwin_state *o, const struct ownwin_win *w, bool verify)
{
    if (o->tree_unknown || w->order_unknown || w->kids_unknown || (!verify && w->kids_foreign))
        return false;
    for (uint32_t i = 0; i < o->n_wins; i++) {
        const struct ownwin_win *c = &o->wins[i];
        if (c->parent == w->id && (c->dubious || (!verify && (c->geom_foreign || c->attrs_foreign))))
            return false;
    }
    return true;
}

struct kid { uint32_t stack, id; };
static int kid_below(const void *a, const void *b)
{
    const struct kid *x = a, *y = b;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* QueryTree: the root, the parent (a top-level's only where no window manager reparents it),
 * and the children bottom first: each new window goes on top of its siblings. */
static bool answer_tree(const struct ownwin_state *o, const struct ownwin_win *w, uint16_t seq, bool msb, bool verify,
                        struct buf *out)
{
    if (!kids_known(o, w, verify) || w->dubious ||
        (!verify && (w->geom_foreign || w->attrs_foreign || (w->parent == w->root && !unmanaged(o, w)))))
        return false;
    uint32_t n = 0;
    for (uint32_t i = 0; i < o->n_wins; i++)
        n += o->wins[i].parent == w->id;
    struct kid *kids = malloc((n ? n : 1) * sizeof *kids);
    uint8_t *r = kids ? reply_space(out, 4 * (size_t)n) : NULL;
    if (!r) {
        free(kids);
        return false;
    }
    n = 0;
    for (uint32_t i = 0; i < o->n_wins; i++)
        if (o->wins[i].parent == w->id)
            kids[n++] = (struct kid){ o->wins[i].stack, o->wins[i].id };
    qsort(kids, n, sizeof *kids, kid_below);
    bool ok = xp_query_tree_reply_put(r, XP_QUERY_TREE_REPLY_SIZE, msb, &(struct xp_query_tree_reply){
        .sequence = seq, .length = n, .root = w->root, .parent = w->parent, .children_len = (uint16_t)n });
    for (uint32_t i = 0; i < n; i++)
        st32(r + XP_QUERY_TREE_REPLY_SIZE + 4 * i, kids[i].id, msb);
    free(kids);
    return ok;
}

/* Where a window's origin (inside its border) is on its screen, as the server keeps it, when
 * every window up to the root is in the model with its geometry known (a top-level's only
 * where no window manager moves it); a root is at 0, 0. Far out (the server keeps these in
 * 16 bits): not answered. */
#define ORIGIN_FAR 16000
static bool origin_of(const struct ownwin_state *o, uint32_t id, bool verify, uint32_t *root, int32_t *x, int32_t *y)
{
    *x = *y = 0;
    if (screen_of_root(o, id)) {
        *root = id;
        return true;
    }
    const struct ownwin_win *w = win_get(o, id);
    for (uint32_t hops = 0; w && hops <= OWNWIN_MAX_WINDOWS; hops++) {
        if (w->geom_unknown || w->dubious || (!verify && w->geom_foreign))
            return false;
        *x += w->x + w->border;
        *y += w->y + w->border;
        if (*x < -ORIGIN_FAR || *x > ORIGIN_FAR || *y < -ORIGIN_FAR || *y > ORIGIN_FAR)
            return false;
        if (w->parent == w->root) {
            *root = w->root;
            return verify || unmanaged(o, w);
        }
        w = win_get(o, w->parent);
    }
    return false;
}

/* TranslateCoordinates into one of the client's windows, from its own or a root: the point
 * in the destination's coordinates, and the destination's topmost mapped child whose box,
 * border included, holds it (no shapes: the client set none). Into a root, whose children
 * are every client's: not answered; nor across screens. */
static bool answer_translate(const struct ownwin_state *o, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                             bool verify, struct buf *out)
{
    struct xp_translate_coordinates_req q;
    uint32_t src_root, dst_root;
    int32_t sx, sy, dx, dy;
    if (o->tree_unknown || o->shaped || size != XP_TRANSLATE_COORDINATES_REQ_SIZE ||
        !xp_translate_coordinates_req_view(req, size, msb, &q) || !origin_of(o, q.src_window, verify, &src_root, &sx, &sy) ||
        !origin_of(o, q.dst_window, verify, &dst_root, &dx, &dy) || src_root != dst_root)
        return false;
    const struct ownwin_win *d = win_get(o, q.dst_window);
    if (!d || !kids_known(o, d, verify))
        return false;
    int32_t px = sx + q.src_x, py = sy + q.src_y; /* the point on the screen */
    uint32_t child = 0, top = 0;
    for (uint32_t i = 0; i < o->n_wins; i++) {
        const struct ownwin_win *c = &o->wins[i];
        if (c->parent != d->id)
            continue;
        if (c->geom_unknown || c->attrs_unknown)
            return false;
        int32_t cx = dx + c->x + c->border, cy = dy + c->y + c->border, b = c->border;
        if (c->mapped && px >= cx - b && px < cx + c->width + b && py >= cy - b && py < cy + c->height + b &&
            c->stack > top)
            child = c->id, top = c->stack;
    }
    uint8_t *r = reply_space(out, 0);
    return r && xp_translate_coordinates_reply_put(r, XP_TRANSLATE_COORDINATES_REPLY_SIZE, msb,
        &(struct xp_translate_coordinates_reply){ .sequence = seq, .same_screen = 1, .child = child,
                                                  .dst_x = (int16_t)(px - dx), .dst_y = (int16_t)(py - dy) });
}

/* GetProperty: delete, window, property, type, long-offset, long-length. As the protocol
 * says: absent gives None; another type gives the actual type, format and length and no
 * data; an offset beyond the value is BadValue (not answered here). With delete, the same
 * reply; the model deletes after it (ownwin_on_request). */
static bool answer_property(const struct ownwin_win *w, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                            bool verify, const struct predictor *atoms, struct buf *out)
{
    struct xp_get_property_req q;
    if (size != XP_GET_PROPERTY_REQ_SIZE || !xp_get_property_req_view(req, size, msb, &q) || q.delete > 1 ||
        w->props_unknown || (!verify && w->props_foreign))
        return false;
    uint32_t atom = q.property, type = q.type;
    uint64_t offset = 4ull * q.long_offset, length = 4ull * q.long_length;
    const struct ownwin_prop *p = prop_get(w, atom);
    if (p && (p->unknown || (!verify && p->foreign)))
        return false;
    bool present = p && p->type;
    /* BadAtom unless both atoms exist: the property's, when set by this client, does. */
    if (!verify && ((!present && !predict_atom_known(atoms, atom)) ||
                    (type && !(present && type == p->type) && !predict_atom_known(atoms, type))))
        return false;
    uint8_t *r;
    struct xp_get_property_reply a = { .sequence = seq };
    if (!present) /* None, format 0 */
        return (r = reply_space(out, 0)) && xp_get_property_reply_put(r, XP_GET_PROPERTY_REPLY_SIZE, msb, &a);
    if (type && type != p->type) {
        if (!(r = reply_space(out, 0)))
            return false;
        a.format = p->format;
        a.type = p->type;
        a.bytes_after = p->len / (p->format / 8u); /* the sample server counts units here, not bytes */
        return xp_get_property_reply_put(r, XP_GET_PROPERTY_REPLY_SIZE, msb, &a);
    }
    if (offset > p->len)
        return false; /* BadValue */
    uint32_t n = (uint32_t)(p->len - offset < length ? p->len - offset : length);
    unsigned unit = p->format / 8u;
    if (!unit || n % unit || !(r = reply_space(out, n + (4 - n % 4) % 4)))
        return false;
    a.length = (n + (4 - n % 4) % 4) / 4;
    a.format = p->format;
    a.type = p->type;
    a.bytes_after = (uint32_t)(p->len - offset - n);
    a.value_len = n / unit;
    xp_get_property_reply_put(r, XP_GET_PROPERTY_REPLY_SIZE, msb, &a);
    if (n)
        memcpy(r + XP_GET_PROPERTY_REPLY_SIZE, p->data + offset, n);
    return true;
}

bool ownwin_answer(const struct ownwin_state *o, const struct predictor *atoms, const struct msg_class *cls,
                   const uint8_t *req, uint32_t size, uint16_t seq, bool msb, bool verify, struct buf *out)
{
    uint32_t id;
    if (cls->kind == MSG_REQUEST && !cls->ext && cls->major == XP_OP_TRANSLATE_COORDINATES)
        return (verify || o->observer_mask) && answer_translate(o, req, size, seq, msb, verify, out);
    if (cls->kind != MSG_REQUEST || cls->ext || cls->major >= sizeof ownwin_window_at / sizeof *ownwin_window_at ||
        size < XP_REQUEST_HEADER_SIZE || (!verify && !o->observer_mask) || !ownwin_window_at[cls->major] ||
        !xp_peek32(req, size, ownwin_window_at[cls->major], msb, &id))
        return false;
    const struct ownwin_win *w = win_get(o, id);
    const struct idmap_entry *pixmap = w ? NULL : idmap_get(&o->pixmaps, id);
    if (pixmap && cls->major == XP_OP_GET_GEOMETRY && size == XP_GET_GEOMETRY_REQ_SIZE) {
        uint8_t *r = reply_space(out, 0); /* a pixmap: at 0, 0, no border */
        return r && xp_get_geometry_reply_put(r, XP_GET_GEOMETRY_REPLY_SIZE, msb, &(struct xp_get_geometry_reply){
            .sequence = seq, .depth = (uint8_t)pixmap->c, .root = pixmap->a, .width = (uint16_t)pixmap->b,
            .height = (uint16_t)(pixmap->b >> 16) });
    }
    if (!w)
        return false;
    switch (cls->major) {
    case XP_OP_GET_GEOMETRY:
        return size == XP_GET_GEOMETRY_REQ_SIZE && answer_geometry(o, w, seq, msb, verify, out);
    case XP_OP_GET_WINDOW_ATTRIBUTES:
        return size == XP_GET_WINDOW_ATTRIBUTES_REQ_SIZE && answer_attributes(o, w, seq, msb, verify, out);
    case XP_OP_GET_PROPERTY:
        return answer_property(w, req, size, seq, msb, verify, atoms, out);
    case XP_OP_QUERY_TREE:
        return size == XP_QUERY_TREE_REQ_SIZE && answer_tree(o, w, seq, msb, verify, out);
    default:
        return false;
    }
}

