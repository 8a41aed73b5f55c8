/* images.c -- the latest PutImage bodies of a channel direction, so that an image drawn
 * again (toolkits redraw the same icons and widget parts) is sent as an index. Both ends
 * keep the same list: newest first, at most XC_IMGS entries and XC_IMGS_BUDGET bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

uint64_t xc_imgs_hash(const uint8_t *p, uint32_t len)
{
    uint64_t h = 0xcbf29ce484222325ull ^ len;
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h = (h ^ v) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int xc_imgs_find(const struct xc_imgs *c, const uint8_t *p, uint32_t len, uint64_t hash)
{
    for (unsigned i = 0; c && i < c->n; i++)
        if (c->e[i].len == len && c->e[i].hash == hash && memcmp(c->e[i].p, p, len) == 0)
            return (int)i;
    return -1;
}

static void drop_last(struct xc_imgs *c)
{
    struct xc_img *e = &c->e[--c->n];
    c->bytes -= e->len;
    free(e->p);
    memset(e, 0, sizeof *e);
}

int xc_imgs_push(struct xc_imgs *c, const uint8_t *p, uint32_t len, int found, uint64_t hash)
{
    struct xc_img e;
    if (found >= 0) {
        e = c->e[found];
        memmove(&c->e[1], &c->e[0], (size_t)found * sizeof e);
    } else {
        if (len < XC_IMGS_MIN || len > XC_IMGS_MAX)
            return 0;
        e = (struct xc_img){ malloc(len), len, hash };
        if (!e.p)
            return -ENOMEM;
        memcpy(e.p, p, len);
        if (c->n == XC_IMGS)
            drop_last(c);
        memmove(&c->e[1], &c->e[0], (size_t)c->n * sizeof e);
        c->n++;
        c->bytes += len;
        while (c->bytes > XC_IMGS_BUDGET && c->n > 1)
            drop_last(c);
    }
    c->e[0] = e;
    return 0;
}

void xc_imgs_free(struct xc_imgs *c)
{
    while (c && c->n)
        drop_last(c);
    free(c);
}
