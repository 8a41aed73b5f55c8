/* pixcache.c -- the bodies the pixel coder coded in the last session (AddGlyphs, PutImage),
 * with their codes (marker byte included), which both ends keep on disk (docs/PROTOCOL.md
 * 2.2 and 5.1). In the next session a body coded again is sent as its old code again:
 * neither end runs the pixel coder on it (the receiver finds the body by its code), and the
 * bytes are those of the last session's stream, which the cached dictionary primes zstd
 * with, so they cost a reference there. The set loaded at link start is read-only for the session; the bodies
 * coded this session are collected for the next save. Files are shared by content hash, so
 * both ends must save the same bytes: what is saved depends only on which bodies came,
 * never on the order they came in (the two ends see a link's channels interleaved
 * differently). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

struct pc_item {
    const uint8_t *p, *code; /* fresh items own both (one allocation, p first) */
    uint32_t len, code_len;
    bool used;     /* loaded: coded again this session */
};

/* Items with open-addressed indices by body and by code (slot = item index + 1, 0 empty). */
struct pc_set {
    struct pc_item *e;
    size_t n, bytes;
    uint32_t *slot, *code_slot;
};
#define PC_SLOTS (2 * XC_PIXCACHE_ITEMS) /* a power of two: at most half full */

struct xc_pixcache {
    size_t budget;             /* of this session's bodies, and of the set saved */
    uint8_t *file;             /* the loaded content: loaded items point into it */
    struct pc_set loaded, fresh; /* fresh items own their bytes */
    uint64_t hits;             /* bodies sent or received as a loaded code */
};

static uint32_t slot_of(uint64_t hash) { return (uint32_t)(hash ^ hash >> 32) & (PC_SLOTS - 1); }

static int set_find(const struct pc_set *s, const uint8_t *p, uint32_t len, uint64_t hash)
{
    if (!s->slot)
        return -1;
    for (uint32_t i = slot_of(hash); s->slot[i]; i = (i + 1) & (PC_SLOTS - 1)) {
        const struct pc_item *e = &s->e[s->slot[i] - 1];
        if (e->len == len && memcmp(e->p, p, len) == 0)
            return (int)s->slot[i] - 1;
    }
    return -1;
}

static int set_find_code(const struct pc_set *s, const uint8_t *code, uint32_t n)
{
    if (!s->code_slot)
        return -1;
    for (uint32_t i = slot_of(xc_imgs_hash(code, n)); s->code_slot[i]; i = (i + 1) & (PC_SLOTS - 1)) {
        const struct pc_item *e = &s->e[s->code_slot[i] - 1];
        if (e->code_len == n && memcmp(e->code, code, n) == 0)
            return (int)s->code_slot[i] - 1;
    }
    return -1;
}

static void slot_put(uint32_t *slots, uint64_t hash, uint32_t v)
{
    uint32_t i = slot_of(hash);
    while (slots[i])
        i = (i + 1) & (PC_SLOTS - 1);
    slots[i] = v;
}

/* With the code index when code_too (a loaded set: the receiver finds bodies by code). */
static int set_add(struct pc_set *s, const struct pc_item *it, uint64_t hash, bool code_too)
{
    if (!s->slot && !(s->slot = calloc(PC_SLOTS, sizeof *s->slot)))
        return -ENOMEM;
    if (code_too && !s->code_slot && !(s->code_slot = calloc(PC_SLOTS, sizeof *s->code_slot)))
        return -ENOMEM;
    if (!s->e && !(s->e = calloc(XC_PIXCACHE_ITEMS, sizeof *s->e)))
        return -ENOMEM;
    s->e[s->n] = *it;
    s->n++;
    slot_put(s->slot, hash, (uint32_t)s->n);
    if (code_too)
        slot_put(s->code_slot, xc_imgs_hash(it->code, it->code_len), (uint32_t)s->n);
    s->bytes += it->len;
    return 0;
}

static void set_free(struct pc_set *s, bool owned)
{
    for (size_t i = 0; owned && i < s->n; i++)
        free((void *)s->e[i].p);
    free(s->e);
    free(s->slot);
    free(s->code_slot);
    memset(s, 0, sizeof *s);
}

int xc_pixcache_new(struct xc_pixcache **out, size_t budget)
{
    if (!(*out = calloc(1, sizeof **out)))
        return -ENOMEM;
    (*out)->budget = budget < XC_PIXCACHE_BYTES ? budget : XC_PIXCACHE_BYTES;
    return 0;
}

void xc_pixcache_free(struct xc_pixcache *c)
{
    if (!c)
        return;
    set_free(&c->loaded, false);
    set_free(&c->fresh, true);
    free(c->file);
    free(c);
}

static bool item_size_ok(uint32_t len) { return len >= XC_PIXCACHE_MIN && len <= XC_PIXCACHE_MAX; }
static bool code_size_ok(uint32_t n, uint32_t len) { return n >= 1 && n <= XC_PIXCACHE_CODE_MAX(len); }

/* The order of a saved set: by length, then bytes. */
static int item_cmp(const void *a, const void *b)
{
    const struct pc_item *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->p, y->p, x->len);
}

int xc_pixcache_load(struct xc_pixcache *c, const uint8_t *p, size_t n)
{
    if (c->file || n > XC_PIXCACHE_FILE_MAX)
        return -EBADMSG;
    struct rd r = rd_make(p, n, false);
    uint32_t count;
    if (rd_u32(&r, &count) || count == 0 || count > XC_PIXCACHE_ITEMS)
        return -EBADMSG;
    if (!(c->file = malloc(n)))
        return -ENOMEM;
    memcpy(c->file, p, n);
    r = rd_make(c->file, n, false);
    rd_u32(&r, &count);
    int rc = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        struct pc_item it = { 0 };
        if (rd_u32(&r, &it.len) || !item_size_ok(it.len) || rd_bytes(&r, &it.p, it.len) ||
            rd_u32(&r, &it.code_len) || !code_size_ok(it.code_len, it.len) || rd_bytes(&r, &it.code, it.code_len))
            rc = -EBADMSG;
        else if (c->loaded.n && item_cmp(&c->loaded.e[c->loaded.n - 1], &it) >= 0)
            rc = -EBADMSG; /* not in the saved order, or twice */
        else if (set_find_code(&c->loaded, it.code, it.code_len) >= 0)
            rc = -EBADMSG; /* a code must name one body */
        else
            rc = set_add(&c->loaded, &it, xc_imgs_hash(it.p, it.len), true);
    }
    if (!rc && (rd_left(&r) || c->loaded.bytes > XC_PIXCACHE_BYTES))
        rc = -EBADMSG;
    if (rc) {
        set_free(&c->loaded, false);
        free(c->file);
        c->file = NULL;
    }
    return rc;
}

static int code_cmp(const void *a, const void *b)
{
    const struct pc_item *x = *(struct pc_item *const *)a, *y = *(struct pc_item *const *)b;
    if (x->code_len != y->code_len)
        return x->code_len < y->code_len ? -1 : 1;
    return memcmp(x->code, y->code, x->code_len);
}

/* Drops every item whose code another has too (a code must name one body): the same
 * set at both ends drops the same. */
static size_t drop_shared_codes(struct pc_item *v, size_t n)
{
    struct pc_item **by = malloc((n ? n : 1) * sizeof *by);
    if (!by)
        return 0;
    for (size_t i = 0; i < n; i++)
        by[i] = &v[i];
    qsort(by, n, sizeof *by, code_cmp);
    for (size_t i = 0; i + 1 < n; i++)
        if (code_cmp(&by[i], &by[i + 1]) == 0)
            by[i]->len = by[i + 1]->len = 0; /* marked */
    free(by);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].len)
            v[k++] = v[i];
    return k;
}

/* This session's bodies, then those loaded and coded again, then the other loaded ones, as
 * long as they fit; in the saved order. */
int xc_pixcache_save(const struct xc_pixcache *c, struct buf *out)
{
    size_t cap = c->fresh.n + c->loaded.n, n = 0, bytes = 0;
    if (!cap)
        return 0;
    struct pc_item *v = malloc(cap * sizeof *v);
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < c->fresh.n; i++, n++)
        v[n] = c->fresh.e[i], bytes += v[n].len;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->loaded.n; i++) {
            const struct pc_item *e = &c->loaded.e[i];
            if (e->used != (pass == 0) || n == XC_PIXCACHE_ITEMS || bytes + e->len > c->budget ||
                set_find(&c->fresh, e->p, e->len, xc_imgs_hash(e->p, e->len)) >= 0)
                continue;
            v[n++] = *e;
            bytes += e->len;
        }
    n = drop_shared_codes(v, n);
    qsort(v, n, sizeof *v, item_cmp);
    uint8_t w[4];
    st32(w, (uint32_t)n, false);
    int rc = n ? buf_append(out, w, 4) : 0;
    for (size_t i = 0; i < n && !rc; i++) {
        st32(w, v[i].len, false);
        if (!(rc = buf_append(out, w, 4)))
            rc = buf_append(out, v[i].p, v[i].len);
        st32(w, v[i].code_len, false);
        if (!rc && !(rc = buf_append(out, w, 4)))
            rc = buf_append(out, v[i].code, v[i].code_len);
    }
    free(v);
    return rc;
}

size_t xc_pixcache_loaded(const struct xc_pixcache *c) { return c ? c->loaded.n : 0; }
uint64_t xc_pixcache_hits(const struct xc_pixcache *c) { return c ? c->hits : 0; }

int xc_pixcache_find(struct xc_pixcache *c, const uint8_t *p, uint32_t len, const uint8_t **code, uint32_t *code_len,
                     uint32_t *index)
{
    if (!c || !item_size_ok(len))
        return -1;
    int i = set_find(&c->loaded, p, len, xc_imgs_hash(p, len));
    if (i < 0)
        return -1;
    c->loaded.e[i].used = true;
    c->hits++;
    *code = c->loaded.e[i].code;
    *code_len = c->loaded.e[i].code_len;
    if (index)
        *index = (uint32_t)i;
    return 0;
}

int xc_pixcache_take(struct xc_pixcache *c, uint64_t index, uint32_t len, const uint8_t **p)
{
    if (!c || index >= c->loaded.n || c->loaded.e[index].len != len)
        return -EBADMSG;
    c->loaded.e[index].used = true;
    c->hits++;
    *p = c->loaded.e[index].p;
    return 0;
}

int xc_pixcache_get_quiet(const struct xc_pixcache *c, const uint8_t *code, uint32_t code_len, uint32_t len,
                          const uint8_t **p)
{
    int i = c ? set_find_code(&c->loaded, code, code_len) : -1;
    if (i < 0 || c->loaded.e[i].len != len)
        return -1;
    *p = c->loaded.e[i].p;
    return i;
}

int xc_pixcache_get(struct xc_pixcache *c, const uint8_t *code, uint32_t code_len, uint32_t len, const uint8_t **p)
{
    int i = xc_pixcache_get_quiet(c, code, code_len, len, p);
    if (i < 0)
        return -EBADMSG;
    c->loaded.e[i].used = true;
    c->hits++;
    return 0;
}

int xc_pixcache_note(struct xc_pixcache *c, const uint8_t *p, uint32_t len, const uint8_t *code, uint32_t code_len)
{
    if (!c || !item_size_ok(len) || !code_size_ok(code_len, len))
        return 0;
    uint64_t hash = xc_imgs_hash(p, len);
    int i = set_find(&c->loaded, p, len, hash);
    if (i >= 0) {
        c->loaded.e[i].used = true;
        return 0;
    }
    /* Beyond the bound, the rest of the session is not kept: which bodies came first may
     * differ between the ends, so their files then differ and the next session is cold. */
    if (set_find(&c->fresh, p, len, hash) >= 0 || c->fresh.n == XC_PIXCACHE_ITEMS ||
        c->fresh.bytes + len > c->budget)
        return 0;
    uint8_t *copy = malloc((size_t)len + code_len);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, p, len);
    memcpy(copy + len, code, code_len);
    struct pc_item it = { copy, copy + len, len, code_len, false };
    int rc = set_add(&c->fresh, &it, hash, false);
    if (rc)
        free(copy);
    return rc;
}
