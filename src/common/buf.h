/* buf.h -- growable byte queues (append at the tail, consume at the head) and
 * bounds-checked readers for wire data. Every decoder in tincan reads through rd_*;
 * none indexes a wire buffer by hand. */
#ifndef TINCAN_BUF_H
#define TINCAN_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Results a caller must look at (a lost append, a frame half made): -Wunused-result. */
#define MUST_USE __attribute__((warn_unused_result))

/* A byte queue. Bytes live in data[off, off+len). Owns data; free with buf_free(). */
struct buf {
    uint8_t *data;
    size_t off, len, cap;
    size_t fill; /* buf_prepare's message in progress: live bytes once it is whole (0: none) */
};

static inline const uint8_t *buf_head(const struct buf *b) { return b->data ? b->data + b->off : NULL; }
MUST_USE int buf_reserve(struct buf *b, size_t extra);          /* 0 or -ENOMEM */
MUST_USE int buf_append(struct buf *b, const void *p, size_t n); /* 0 or -ENOMEM */
uint8_t *buf_append_space(struct buf *b, size_t n);     /* n writable bytes at the tail, or NULL */
void buf_consume(struct buf *b, size_t n);              /* drop n bytes from the head */
void buf_clear(struct buf *b);
void buf_free(struct buf *b);
/* Freed blocks of BUF_KEPT_MIN bytes or more are kept for the next buffer that grows as large
 * (at most BUF_KEPT_BLOCKS of them, BUF_KEPT_BYTES in all): large messages then reuse memory
 * already faulted in instead of a fresh mapping each. */
#define BUF_KEPT_MIN (128u * 1024)
#define BUF_KEPT_BLOCKS 4
#define BUF_KEPT_BYTES (4u << 20)
size_t buf_kept_bytes(void); /* held in kept blocks now */
void buf_kept_drop(void);    /* frees them (tests; a process about to exit) */
/* Gives memory back between uses: frees an empty buffer holding more than keep bytes, and
 * shrinks a large one (above BUF_KEPT_BYTES) that uses under a quarter of it. */
void buf_trim(struct buf *b, size_t keep);

/* Readies b for a large message in progress, of total bytes of which b holds the first
 * (all of b): its bytes start at least head bytes into the block, so that a buf_offer target
 * holding that much can take the block, and the rest of the message fits behind them. Until
 * the message is whole (or b is consumed), buf_trim leaves b's block alone. 0 or -ENOMEM. */
MUST_USE int buf_prepare(struct buf *b, size_t head, size_t total);
/* Offers src's bytes to one buf_append: while offered, appending exactly all of src's bytes
 * (at least BUF_ADOPT_MIN) to dst moves src's block to dst instead of copying, dst's own bytes
 * (if they fit in src's headroom) copied in front, and src gets dst's block, emptied. The bytes
 * stay where they are: pointers into them remain valid. buf_offer(NULL, NULL) withdraws it. */
#define BUF_ADOPT_MIN (64u * 1024)
void buf_offer(struct buf *src, struct buf *dst);

/* Appends a LEB128 unsigned varint (at most 10 bytes). */
MUST_USE int buf_put_varint(struct buf *b, uint64_t v);

/* A reader over bytes it does not own. Getters return 0, or -EAGAIN when the input ends
 * before the value does (more bytes may come), and never read past end. */
struct rd {
    const uint8_t *p;
    size_t n, pos;
    bool msb; /* byte order for rd_u16/rd_u32: X11 lets each client choose */
};

static inline struct rd rd_make(const uint8_t *p, size_t n, bool msb) { return (struct rd){ p, n, 0, msb }; }
static inline size_t rd_left(const struct rd *r) { return r->n - r->pos; }
int rd_u8(struct rd *r, uint8_t *v);
int rd_u16(struct rd *r, uint16_t *v);
int rd_u32(struct rd *r, uint32_t *v);
int rd_skip(struct rd *r, size_t n);
int rd_bytes(struct rd *r, const uint8_t **p, size_t n);
/* LEB128: -EAGAIN if cut short, -EBADMSG if longer than 10 bytes or above 2^64. */
int rd_varint(struct rd *r, uint64_t *v);

/* Plain loads and stores in a given byte order, for fields whose offset a caller has
 * already bounds-checked (e.g. a complete, length-validated X message). */
static inline uint16_t ld16(const uint8_t *p, bool msb) { return msb ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]); }
static inline uint32_t ld32(const uint8_t *p, bool msb)
{
    return msb ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
               : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static inline void st16(uint8_t *p, uint16_t v, bool msb)
{
    if (msb) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; } else { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
}
static inline void st32(uint8_t *p, uint32_t v, bool msb)
{
    if (msb) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }
    else { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24); }
}

#endif
