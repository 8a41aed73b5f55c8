/* expose.c -- the app side's view of a client's GCs, pixmaps and windows, enough to
 * know when a CopyArea exposes nothing (see expose.h). */
#include "proxy/expose.h"

#include <string.h>

#include "common/buf.h"

#define EXPOSE_MAX_IDS 8192u         /* per client and kind; beyond, ask the server */
#define GC_GRAPHICS_EXPOSURES (1u << 16)
#define GC_LAST_BIT 22               /* GC value bits 0..22 */

enum {
    OP_DESTROY_WINDOW = 4, OP_DESTROY_SUBWINDOWS = 5, OP_REPARENT_WINDOW = 7, OP_MAP_WINDOW = 8,
    OP_MAP_SUBWINDOWS = 9, OP_UNMAP_WINDOW = 10, OP_UNMAP_SUBWINDOWS = 11, OP_CONFIGURE_WINDOW = 12,
    OP_CIRCULATE_WINDOW = 13, OP_CREATE_PIXMAP = 53, OP_FREE_PIXMAP = 54, OP_CREATE_GC = 55, OP_CHANGE_GC = 56,
    OP_COPY_GC = 57, OP_FREE_GC = 60,
};

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
    case XOP_CREATE_WINDOW: case OP_DESTROY_WINDOW: case OP_DESTROY_SUBWINDOWS: case OP_REPARENT_WINDOW:
    case OP_MAP_WINDOW: case OP_MAP_SUBWINDOWS: case OP_UNMAP_WINDOW: case OP_UNMAP_SUBWINDOWS:
    case OP_CONFIGURE_WINDOW: case OP_CIRCULATE_WINDOW:
        return true;
    default:
        return false;
    }
}

/* The GraphicsExposures value in a GC value list, if the mask names it: values come in
 * the order of their mask bits. Returns -1 when absent or cut short. */
static int gc_exposures_value(uint32_t mask, const uint8_t *values, uint32_t len, bool msb)
{
    if (!(mask & GC_GRAPHICS_EXPOSURES))
        return -1;
    uint32_t index = (uint32_t)__builtin_popcount(mask & (GC_GRAPHICS_EXPOSURES - 1));
    if ((index + 1) * 4 > len)
        return -1;
    return ld32(values + index * 4, msb) ? 1 : 0;
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
    switch (cls->major) {
    case OP_CREATE_GC: /* cid, drawable, mask, values */
        if (len >= 12 && (x = idmap_put(&e->gcs, ld32(b, msb)))) {
            int v = gc_exposures_value(ld32(b + 8, msb), b + 12, len - 12, msb);
            x->a = v != 0; /* the default is on */
        }
        break;
    case OP_CHANGE_GC: /* gc, mask, values */
        if (len >= 8 && (x = idmap_get(&e->gcs, ld32(b, msb)))) {
            int v = gc_exposures_value(ld32(b + 4, msb), b + 8, len - 8, msb);
            if (v >= 0)
                x->a = (uint32_t)v;
        }
        break;
    case OP_COPY_GC: /* src, dst, mask */
        if (len >= 12 && (ld32(b + 8, msb) & GC_GRAPHICS_EXPOSURES)) {
            struct idmap_entry *src = idmap_get(&e->gcs, ld32(b, msb));
            x = idmap_get(&e->gcs, ld32(b + 4, msb));
            if (src && x)
                x->a = src->a;
            else if (!src)
                idmap_del(&e->gcs, ld32(b + 4, msb)); /* copied from a GC we do not know */
        }
        break;
    case OP_FREE_GC:
        if (len >= 4)
            idmap_del(&e->gcs, ld32(b, msb));
        break;
    case OP_CREATE_PIXMAP: /* pid, drawable, width, height */
        if (len >= 12 && (x = idmap_put(&e->pixmaps, ld32(b, msb)))) {
            x->a = ld16(b + 8, msb);
            x->b = ld16(b + 10, msb);
        }
        break;
    case OP_FREE_PIXMAP:
        if (len >= 4)
            idmap_del(&e->pixmaps, ld32(b, msb));
        break;
    case OP_DESTROY_WINDOW:
        if (len >= 4)
            idmap_del(&e->windows, ld32(b, msb));
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
    /* src, dst, gc, src-x, src-y, dst-x, dst-y, width, height (CopyPlane: + bit-plane) */
    if (cls->kind != MSG_REQUEST || cls->ext || (cls->major != XOP_COPY_AREA && cls->major != XOP_COPY_PLANE) ||
        len < 24)
        return false;
    const struct idmap_entry *gc = idmap_get(&e->gcs, ld32(b + 8, msb));
    if (!gc || !gc->a)
        return false; /* exposures off: the server sends nothing at all */
    int32_t sx = (int16_t)ld16(b + 12, msb), sy = (int16_t)ld16(b + 14, msb);
    int32_t w = ld16(b + 20, msb), h = ld16(b + 22, msb);
    uint32_t src = ld32(b, msb);
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

void expose_build_noexpose(uint8_t ev[32], uint16_t seq, uint32_t dst_drawable, uint8_t major, bool msb)
{
    memset(ev, 0, 32);
    ev[0] = XEV_NO_EXPOSE;
    st16(ev + 2, seq, msb);
    st32(ev + 4, dst_drawable, msb);
    ev[10] = major; /* minor opcode (2 bytes at 8) stays 0 */
}
