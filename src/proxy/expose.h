/* expose.h -- local NoExpose answers. A client that copies an area with graphics
 * exposures on (xterm scrolling, for one) waits for the server's NoExpose or
 * GraphicsExpose before it copies again: a link round trip per scroll. The answer is
 * NoExpose exactly when the whole source rectangle is visible: a pixmap, inside its
 * bounds; or a window that is viewable, unobscured, without mapped children, and holds
 * the rectangle. The app side tracks the client's GCs and pixmaps from its requests; the
 * display side watches windows through its own X connection (observer.c) and sends each
 * window's state as a FACT frame. Facts are used only when no request of the client that
 * could change windows is newer than they are (docs/PROTOCOL.md 3.3). */
#ifndef TINCAN_EXPOSE_H
#define TINCAN_EXPOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/idmap.h"
#include "x11/xstream.h"

#include "xproto_tables.h"

/* xcb-proto's names under the ones channel.c and observer.c use (until they use XP_* themselves). */
#define XOP_CREATE_WINDOW XP_OP_CREATE_WINDOW
#define XOP_COPY_AREA XP_OP_COPY_AREA
#define XOP_COPY_PLANE XP_OP_COPY_PLANE
#define XEV_GRAPHICS_EXPOSE XP_EV_GRAPHICS_EXPOSURE
#define XEV_NO_EXPOSE XP_EV_NO_EXPOSURE

struct expose_state {
    struct idmap gcs;         /* a: graphics-exposures on */
    struct idmap pixmaps;     /* a: width, b: height */
    struct idmap windows;     /* a: clean, b: width << 16 | height, c: as_of */
    uint32_t struct_seq;      /* the client's latest request that may change windows */
};

void expose_init(struct expose_state *e);
void expose_free(struct expose_state *e);

/* Whether a request may change the mapping, stacking, shape or size of windows (the
 * same test on both sides: it decides which window facts are current). */
bool expose_is_structural(const struct msg_class *cls);

/* App side: a request of the client on its way to the server (body = after the header). */
void expose_on_request(struct expose_state *e, const struct msg_class *cls, const uint8_t *body, uint32_t body_len,
                       uint32_t seq, bool msb);
/* App side: the display side's report on one of the client's windows. */
void expose_on_fact(struct expose_state *e, uint32_t window, bool clean, uint16_t width, uint16_t height,
                    uint32_t as_of);
/* App side: whether this CopyArea/CopyPlane yields exactly one NoExpose. */
bool expose_predict(const struct expose_state *e, const struct msg_class *cls, const uint8_t *body,
                    uint32_t body_len, bool msb);

/* App side: whether this CopyArea/CopyPlane's GC is known to have graphics exposures off
 * (the server then sends no event for it at all). */
bool expose_copy_silent(const struct expose_state *e, const struct msg_class *cls, const uint8_t *body,
                        uint32_t body_len, bool msb);

/* The NoExpose event the server sends for a CopyArea/CopyPlane request. */
void expose_build_noexpose(uint8_t ev[32], uint16_t seq, uint32_t dst_drawable, uint8_t major, bool msb);

#endif
