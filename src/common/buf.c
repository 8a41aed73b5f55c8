/* buf.c -- byte queues and bounds-checked readers. Hot path: every byte tincan moves
 * passes through buf_append/buf_consume, so the head is compacted lazily, not per call. */
#include "common/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    uint8_t *d = realloc(b->data, cap);
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

int buf_append(struct buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    uint8_t *dst = buf_append_space(b, n);
    if (!dst)
        return -ENOMEM;
    memcpy(dst, p, n);
    return 0;
}

void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        b->off = b->len = 0;
        return;
    }
    b->off += n;
    b->len -= n;
}

void buf_clear(struct buf *b) { b->off = b->len = 0; }

void buf_free(struct buf *b)
{
    free(b->data);
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
    if (b->cap < (1u << 20) || b->len >= b->cap / 4)
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
