/* expose.c -- the app side's view of a client's GCs, pixmaps and windows, enough to
 * know when a CopyArea exposes nothing (see expose.h). */
#include "proxy/expose.h"

#include <string.h>

#include "common/buf.h"
#include "xproto_wire.h"

#define EXPOSE_MAX_IDS 8192u         /* per client and kind; beyond, ask the server */

void expose_init(struct expose_state *e)
{
    memset(e, 0, sizeof *e);
    idmap_init(&e->gcs, EXPOSE_MAX_IDS);
    idmap_init(&e->pixmaps, EXPOSE_MAX_IDS);
    idmap_init(&e->windows, EXPOSE_MAX_IDS);
}

void expose_free(struct expose_state *e)
{
    idmap_free(&e->gcs);
    idmap_free(&e->pixmaps);
    idmap_free(&e->windows);
}

bool expose_is_structural(const struct msg_class *cls)
{
    if (cls->kind != MSG_REQUEST)
        return false;
    if (cls->ext) /* shapes and redirection change what is visible */
        return !strcmp(cls->ext, "SHAPE") || !strcmp(cls->ext, "Composite");
    switch (cls->major) {
    case XP_OP_CREATE_WINDOW: case XP_OP_DESTROY_WINDOW: case XP_OP_DESTROY_SUBWINDOWS: case XP_OP_REPARENT_WINDOW:
    case XP_OP_MAP_WINDOW: case XP_OP_MAP_SUBWINDOWS: case XP_OP_UNMAP_WINDOW: case XP_OP_UNMAP_SUBWINDOWS:
    case XP_OP_CONFIGURE_WINDOW: case XP_OP_CIRCULATE_WINDOW:
        return true;
    default:
        return false;
    }
}

/* The GraphicsExposures value in a GC value list, if the mask names it: values come in
 * the order of their mask bits. Returns -1 when absent or cut short. */
static int gc_exposures_value(uint32_t mask, const uint8_t *values, size_t len, bool msb)
{
    uint32_t v;
    return xp_mask_value(mask, XP_GC_GRAPHICS_EXPOSURES, values, len, msb, &v) ? v != 0 : -1;
}

void expose_on_request(struct expose_state *e, const struct msg_class *cls, const uint8_t *b, uint32_t len,
                       uint32_t seq, bool msb)
{
    if (cls->kind != MSG_REQUEST)
        return;
    if (expose_is_structural(cls))
        e->struct_seq = seq;
    if (cls->ext)
        return;
    struct idmap_entry *x;
    union {
        struct xp_create_gc_body create_gc;
        struct xp_change_gc_body change_gc;
        struct xp_copy_gc_body copy_gc;
        struct xp_free_gc_body free_gc;
        struct xp_create_pixmap_body create_pixmap;
        struct xp_free_pixmap_body free_pixmap;
        struct xp_destroy_window_body destroy_window;
    } v;
    switch (cls->major) {
    case XP_OP_CREATE_GC:
        if (xp_create_gc_body_view(b, len, msb, &v.create_gc) && (x = idmap_put(&e->gcs, v.create_gc.cid))) {
            int on = gc_exposures_value(v.create_gc.value_mask, v.create_gc.rest, v.create_gc.rest_len, msb);
            x->a = on != 0; /* the default is on */
        }
        break;
    case XP_OP_CHANGE_GC:
        if (xp_change_gc_body_view(b, len, msb, &v.change_gc) && (x = idmap_get(&e->gcs, v.change_gc.gc))) {
            int on = gc_exposures_value(v.change_gc.value_mask, v.change_gc.rest, v.change_gc.rest_len, msb);
            if (on >= 0)
                x->a = (uint32_t)on;
        }
        break;
    case XP_OP_COPY_GC:
        if (xp_copy_gc_body_view(b, len, msb, &v.copy_gc) && (v.copy_gc.value_mask & XP_GC_GRAPHICS_EXPOSURES)) {
            struct idmap_entry *src = idmap_get(&e->gcs, v.copy_gc.src_gc);
            x = idmap_get(&e->gcs, v.copy_gc.dst_gc);
            if (src && x)
                x->a = src->a;
            else if (!src)
                idmap_del(&e->gcs, v.copy_gc.dst_gc); /* copied from a GC we do not know */
        }
        break;
    case XP_OP_FREE_GC:
        if (xp_free_gc_body_view(b, len, msb, &v.free_gc))
            idmap_del(&e->gcs, v.free_gc.gc);
        break;
    case XP_OP_CREATE_PIXMAP:
        if (xp_create_pixmap_body_view(b, len, msb, &v.create_pixmap) && (x = idmap_put(&e->pixmaps, v.create_pixmap.pid))) {
            x->a = v.create_pixmap.width;
            x->b = v.create_pixmap.height;
        }
        break;
    case XP_OP_FREE_PIXMAP:
        if (xp_free_pixmap_body_view(b, len, msb, &v.free_pixmap))
            idmap_del(&e->pixmaps, v.free_pixmap.pixmap);
        break;
    case XP_OP_DESTROY_WINDOW:
        if (xp_destroy_window_body_view(b, len, msb, &v.destroy_window))
            idmap_del(&e->windows, v.destroy_window.window);
        break;
    default:
        break;
    }
}

void expose_on_fact(struct expose_state *e, uint32_t window, bool clean, uint16_t width, uint16_t height,
                    uint32_t as_of)
{
    struct idmap_entry *x = idmap_put(&e->windows, window);
    if (!x)
        return;
    x->a = clean;
    x->b = (uint32_t)width << 16 | height;
    x->c = as_of;
}

bool expose_predict(const struct expose_state *e, const struct msg_class *cls, const uint8_t *b, uint32_t len,
                    bool msb)
{
    struct xp_copy_area_body c;
    struct xp_copy_plane_body p;
    if (cls->kind != MSG_REQUEST || cls->ext)
        return false;
    if (cls->major == XP_OP_COPY_PLANE && xp_copy_plane_body_view(b, len, msb, &p))
        c = (struct xp_copy_area_body){ .src_drawable = p.src_drawable, .gc = p.gc, .src_x = p.src_x, .src_y = p.src_y,
                                        .width = p.width, .height = p.height };
    else if (cls->major != XP_OP_COPY_AREA || !xp_copy_area_body_view(b, len, msb, &c))
        return false;
    const struct idmap_entry *gc = idmap_get(&e->gcs, c.gc);
    if (!gc || !gc->a)
        return false; /* exposures off: the server sends nothing at all */
    int32_t sx = c.src_x, sy = c.src_y;
    int32_t w = c.width, h = c.height;
    uint32_t src = c.src_drawable;
    int32_t max_w, max_h;
    const struct idmap_entry *x;
    if ((x = idmap_get(&e->pixmaps, src))) {
        max_w = (int32_t)x->a;
        max_h = (int32_t)x->b;
    } else if ((x = idmap_get(&e->windows, src)) && x->a && (int32_t)(x->c - e->struct_seq) >= 0) {
        max_w = (int32_t)(x->b >> 16);
        max_h = (int32_t)(x->b & 0xffff);
    } else {
        return false;
    }
    return w > 0 && h > 0 && sx >= 0 && sy >= 0 && sx + w <= max_w && sy + h <= max_h;
}

bool expose_copy_silent(const struct expose_state *e, const struct msg_class *cls, const uint8_t *b, uint32_t len,
                        bool msb)
{
    struct xp_copy_area_body c;
    struct xp_copy_plane_body p;
    uint32_t gc;
    if (cls->kind != MSG_REQUEST || cls->ext)
        return false;
    if (cls->major == XP_OP_COPY_PLANE && xp_copy_plane_body_view(b, len, msb, &p))
        gc = p.gc;
    else if (cls->major == XP_OP_COPY_AREA && xp_copy_area_body_view(b, len, msb, &c))
        gc = c.gc;
    else
        return false;
    const struct idmap_entry *x = idmap_get(&e->gcs, gc);
    return x && !x->a;
}

void expose_build_noexpose(uint8_t ev[32], uint16_t seq, uint32_t dst_drawable, uint8_t major, bool msb)
{
    xp_no_exposure_event_put(ev, XP_NO_EXPOSURE_EVENT_SIZE, msb, &(struct xp_no_exposure_event){
        .response_type = XP_EV_NO_EXPOSURE, .sequence = seq, .drawable = dst_drawable, .major_opcode = major });
}
