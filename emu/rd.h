/* rd.h -- bounds-checked reads of untrusted bytes (packets, frames): every getter
 * fails with -EBADMSG past the end instead of reading it. No allocation. */
#ifndef EMU_RD_H
#define EMU_RD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct emu_rd {
    const uint8_t *p;
    size_t len, off;
};

static inline struct emu_rd emu_rd_init(const uint8_t *p, size_t len)
{
    struct emu_rd r = { p, len, 0 };
    return r;
}
static inline size_t emu_rd_left(const struct emu_rd *r) { return r->len - r->off; }

static inline int emu_rd_u8(struct emu_rd *r, uint8_t *v)
{
    if (emu_rd_left(r) < 1) return -EBADMSG;
    *v = r->p[r->off++];
    return 0;
}
static inline int emu_rd_be16(struct emu_rd *r, uint16_t *v)
{
    if (emu_rd_left(r) < 2) return -EBADMSG;
    *v = (uint16_t)(r->p[r->off] << 8 | r->p[r->off + 1]);
    r->off += 2;
    return 0;
}
static inline int emu_rd_be32(struct emu_rd *r, uint32_t *v)
{
    if (emu_rd_left(r) < 4) return -EBADMSG;
    *v = (uint32_t)r->p[r->off] << 24 | (uint32_t)r->p[r->off + 1] << 16 |
         (uint32_t)r->p[r->off + 2] << 8 | r->p[r->off + 3];
    r->off += 4;
    return 0;
}
static inline int emu_rd_skip(struct emu_rd *r, size_t n)
{
    if (emu_rd_left(r) < n) return -EBADMSG;
    r->off += n;
    return 0;
}

/* Big-endian accessors at a fixed offset of a buffer whose length the caller has checked. */
static inline uint16_t emu_get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t emu_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void emu_put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void emu_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

#endif
