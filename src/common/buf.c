/* buf.c -- byte queues and bounds-checked readers. Hot path: every byte tincan moves
 * passes through buf_append/buf_consume, so the head is compacted lazily, not per call. */
#include "common/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CACHE_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n) /* a kept block is no one's: reads of it are bugs */
#define CACHE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CACHE_POISON(p, n) ((void)(p), (void)(n))
#define CACHE_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* ---------------------------------------------------------------- kept blocks
 * A large request (a 1 MiB PutImage, a GetImage reply) passes through several buffers of
 * each half, which are emptied and freed between messages (buf_trim). malloc serves blocks
 * this large from mmap, so every message cost a fresh mapping, a zero-filled page fault per
 * 4 KiB and an munmap: a quarter of both halves' time on loopback (docs/BENCHMARKS.md, "Where
 * a LAN's time goes"). main() keeps that threshold low on purpose, so that freed buffers do
 * not stay in the heap beyond what the memory bound counts. A few freed blocks are kept here
 * instead, already faulted in, for the next buffer that grows that large: bounded, at most
 * BUF_KEPT_BLOCKS blocks and BUF_KEPT_BYTES in all, which the memory bound reserves
 * (linkwriter_set_window). The largest are kept first: they cost the most faults. Not
 * thread-safe: tincan runs one thread. */
static struct {
    uint8_t *data[BUF_KEPT_BLOCKS];
    size_t cap[BUF_KEPT_BLOCKS];
    size_t n, bytes;
} kept;

/* Gives a block back: kept if it is a large one and there is room (made by freeing smaller
 * kept blocks), else freed. */
static void block_release(uint8_t *data, size_t cap)
{
    if (!data)
        return;
    while (cap >= BUF_KEPT_MIN && cap <= BUF_KEPT_BYTES && kept.n &&
           (kept.n == BUF_KEPT_BLOCKS || kept.bytes + cap > BUF_KEPT_BYTES)) {
        size_t least = 0;
        for (size_t i = 1; i < kept.n; i++)
            if (kept.cap[i] < kept.cap[least])
                least = i;
        if (kept.cap[least] >= cap)
            break;
        CACHE_UNPOISON(kept.data[least], kept.cap[least]);
        free(kept.data[least]);
        kept.bytes -= kept.cap[least];
        kept.data[least] = kept.data[--kept.n];
        kept.cap[least] = kept.cap[kept.n];
    }
    if (cap >= BUF_KEPT_MIN && kept.n < BUF_KEPT_BLOCKS && kept.bytes + cap <= BUF_KEPT_BYTES) {
        CACHE_POISON(data, cap);
        kept.data[kept.n] = data;
        kept.cap[kept.n++] = cap;
        kept.bytes += cap;
        return;
    }
    free(data);
}

/* The smallest kept block of at least want bytes (removed from the cache), or NULL. */
static uint8_t *block_take(size_t want, size_t *cap)
{
    size_t best = kept.n;
    for (size_t i = 0; i < kept.n; i++)
        if (kept.cap[i] >= want && (best == kept.n || kept.cap[i] < kept.cap[best]))
            best = i;
    if (best == kept.n)
        return NULL;
    uint8_t *d = kept.data[best];
    *cap = kept.cap[best];
    kept.bytes -= *cap;
    kept.data[best] = kept.data[--kept.n];
    kept.cap[best] = kept.cap[kept.n];
    CACHE_UNPOISON(d, *cap);
    return d;
}

size_t buf_kept_bytes(void) { return kept.bytes; }

void buf_kept_drop(void)
{
    while (kept.n) {
        kept.n--;
        CACHE_UNPOISON(kept.data[kept.n], kept.cap[kept.n]);
        free(kept.data[kept.n]);
    }
    kept.bytes = 0;
}

int buf_reserve(struct buf *b, size_t extra)
{
    if (b->cap - b->off - b->len >= extra)
        return 0;
    if (b->off > 0) { /* slide the live bytes down before growing */
        memmove(b->data, b->data + b->off, b->len);
        b->off = 0;
        if (b->cap - b->len >= extra)
            return 0;
    }
    if (extra > SIZE_MAX / 4 - b->len)
        return -ENOMEM;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < extra)
        cap *= 2;
    size_t got;
    uint8_t *d = cap >= BUF_KEPT_MIN ? block_take(cap, &got) : NULL;
    if (d) { /* a kept block: its pages are already there */
        if (b->len)
            memcpy(d, b->data, b->len);
        block_release(b->data, b->cap);
        b->data = d;
        b->cap = got;
        return 0;
    }
    d = realloc(b->data, cap);
    if (!d)
        return -ENOMEM;
    b->data = d;
    b->cap = cap;
    return 0;
}

uint8_t *buf_append_space(struct buf *b, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return NULL;
    uint8_t *p = b->data + b->off + b->len;
    b->len += n;
    return p;
}

/* ---------------------------------------------------------------- moving a message whole
 * A large message read into one buffer (from_x, from_link) was copied whole into the next
 * (to_link, to_x) once framed: an eighth of a half's time on loopback. Framed while it is all
 * of its buffer, it moves with its block instead (buf_offer, buf_prepare). */
static struct {
    struct buf *src, *dst;
} offer;

void buf_offer(struct buf *src, struct buf *dst)
{
    offer.src = src;
    offer.dst = dst;
}

static bool adopts(const struct buf *b, const void *p, size_t n)
{
    const struct buf *src = offer.src;
    return src && b == offer.dst && src != b && n >= BUF_ADOPT_MIN && n == src->len && p == buf_head(src) &&
           b->len <= src->off;
}

static void adopt(struct buf *b, size_t n)
{
    struct buf *src = offer.src;
    size_t off = src->off - b->len;
    if (b->len)
        memcpy(src->data + off, b->data + b->off, b->len);
    uint8_t *old = b->data;
    size_t old_cap = b->cap;
    *b = (struct buf){ .data = src->data, .off = off, .len = b->len + n, .cap = src->cap };
    *src = (struct buf){ .data = old, .cap = old_cap };
    offer.src = offer.dst = NULL; /* once: src is empty now */
}

int buf_prepare(struct buf *b, size_t head, size_t total)
{
    if (total <= b->len)
        return 0;
    if (b->off >= head && b->cap - b->off >= total) {
        b->fill = total;
        return 0;
    }
    if (total > SIZE_MAX / 2 - head)
        return -ENOMEM;
    size_t need = head + total;
    if (b->cap >= need) {
        memmove(b->data + head, b->data + b->off, b->len);
    } else {
        size_t cap;
        uint8_t *d = block_take(need, &cap);
        if (!d) {
            d = malloc(need);
            cap = need;
            if (!d)
                return -ENOMEM;
        }
        if (b->len)
            memcpy(d + head, b->data + b->off, b->len);
        block_release(b->data, b->cap);
        b->data = d;
        b->cap = cap;
    }
    b->off = head;
    b->fill = total;
    return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (adopts(b, p, n)) {
        adopt(b, n);
        return 0;
    }
    uint8_t *dst = buf_append_space(b, n);
    if (!dst)
        return -ENOMEM;
    memcpy(dst, p, n);
    return 0;
}

void buf_consume(struct buf *b, size_t n)
{
    if (n)
        b->fill = 0;
    if (n >= b->len) {
        b->off = b->len = 0;
        return;
    }
    b->off += n;
    b->len -= n;
}

void buf_clear(struct buf *b) { b->off = b->len = b->fill = 0; }

void buf_free(struct buf *b)
{
    block_release(b->data, b->cap);
    *b = (struct buf){ 0 };
}

void buf_trim(struct buf *b, size_t keep)
{
    if (b->cap <= keep)
        return;
    if (!b->len) {
        buf_free(b);
        return;
    }
    if (b->fill > b->len) /* a message in progress will fill it */
        return;
    /* Not a block the cache would keep: a queue that drains (a large message going out) is
     * empty in a few turns, and shrinking it meant a copy, an mremap and the block's pages
     * faulted in again for the next message. The memory bound counts its capacity meanwhile. */
    if (b->cap <= BUF_KEPT_BYTES || b->len >= b->cap / 4)
        return;
    memmove(b->data, b->data + b->off, b->len);
    b->off = 0;
    size_t cap = keep > 4096 ? keep : 4096;
    while (cap < 2 * b->len)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (d) {
        b->data = d;
        b->cap = cap;
    }
}

int buf_put_varint(struct buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    return buf_append(b, tmp, n);
}

int rd_u8(struct rd *r, uint8_t *v)
{
    if (rd_left(r) < 1)
        return -EAGAIN;
    *v = r->p[r->pos++];
    return 0;
}

int rd_u16(struct rd *r, uint16_t *v)
{
    if (rd_left(r) < 2)
        return -EAGAIN;
    *v = ld16(r->p + r->pos, r->msb);
    r->pos += 2;
    return 0;
}

int rd_u32(struct rd *r, uint32_t *v)
{
    if (rd_left(r) < 4)
        return -EAGAIN;
    *v = ld32(r->p + r->pos, r->msb);
    r->pos += 4;
    return 0;
}

int rd_skip(struct rd *r, size_t n)
{
    if (rd_left(r) < n)
        return -EAGAIN;
    r->pos += n;
    return 0;
}

int rd_bytes(struct rd *r, const uint8_t **p, size_t n)
{
    if (rd_left(r) < n)
        return -EAGAIN;
    *p = r->p + r->pos;
    r->pos += n;
    return 0;
}

int rd_varint(struct rd *r, uint64_t *v)
{
    uint64_t out = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->pos + i >= r->n)
            return -EAGAIN;
        uint8_t byte = r->p[r->pos + i];
        if (i == 9 && byte > 1)
            return -EBADMSG;
        out |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            r->pos += i + 1;
            *v = out;
            return 0;
        }
    }
    return -EBADMSG;
}
