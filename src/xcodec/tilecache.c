/* tilecache.c -- tiles of large images (16 x 16 pixels on the drawable's grid) of earlier
 * sessions, kept by both ends on disk by content (docs/PROTOCOL.md 2.2, 5.1, filter 9 mode 3).
 * Must save the same bytes at both ends whatever order the channels' images came in: what
 * is kept is chosen by the tiles' keys (the least), never by arrival. Workload: a browser's
 * session notes some 100k tiles, about 8k distinct; a warm image looks up some 200. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

struct tile_entry {
    uint64_t key;
    uint8_t *p; /* XC_TILE_BYTES */
};

/* An open-addressed index of entries by key (slot = entry index + 1, 0 empty), at most half full. */
struct tile_index {
    uint32_t *slot;
    uint32_t mask;
};

struct xc_tilecache {
    uint32_t keep;             /* tiles saved, at most (from the budget) */
    /* loaded: the file's tiles, in its order (ascending), read-only */
    uint8_t *file;
    struct tile_entry *loaded;
    uint32_t nloaded;
    struct tile_index loaded_ix;
    /* this session's tiles: a superset of the least `keep` of all noted (see note_tile) */
    uint8_t *slab;             /* hold_cap tiles */
    struct tile_entry *fresh;
    uint32_t nfresh, hold_cap, nfree;
    uint32_t *free_slots;      /* slab slots given back by a prune */
    struct tile_index fresh_ix;
    bool have_limit;           /* a prune happened: tiles not below limit are not kept */
    struct tile_entry limit;
    uint8_t limit_bytes[XC_TILE_BYTES];
    uint64_t hits;
};

uint64_t xc_tile_key(const uint8_t *tile) { return xc_imgs_hash(tile, XC_TILE_BYTES); }

static int entry_cmp(const void *a, const void *b)
{
    const struct tile_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return memcmp(x->p, y->p, XC_TILE_BYTES);
}

static int index_make(struct tile_index *ix, uint32_t entries)
{
    uint32_t n = 16;
    while (n < 2 * entries)
        n *= 2;
    free(ix->slot);
    ix->mask = n - 1;
    return (ix->slot = calloc(n, sizeof *ix->slot)) ? 0 : -ENOMEM;
}

static void index_put(struct tile_index *ix, uint64_t key, uint32_t i)
{
    uint32_t s = (uint32_t)(key ^ key >> 32) & ix->mask;
    while (ix->slot[s])
        s = (s + 1) & ix->mask;
    ix->slot[s] = i + 1;
}

static int index_find(const struct tile_index *ix, const struct tile_entry *e, uint64_t key, const uint8_t *tile)
{
    if (!ix->slot)
        return -1;
    for (uint32_t s = (uint32_t)(key ^ key >> 32) & ix->mask; ix->slot[s]; s = (s + 1) & ix->mask) {
        const struct tile_entry *t = &e[ix->slot[s] - 1];
        if (t->key == key && memcmp(t->p, tile, XC_TILE_BYTES) == 0)
            return (int)ix->slot[s] - 1;
    }
    return -1;
}

int xc_tilecache_new(struct xc_tilecache **out, size_t budget)
{
    struct xc_tilecache *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    size_t keep = budget / XC_TILE_BYTES;
    c->keep = keep < XC_TILES_MAX ? (uint32_t)keep : XC_TILES_MAX;
    c->hold_cap = c->keep + c->keep / 8 + 1; /* a prune back to keep every keep / 8 new tiles */
    *out = c;
    return 0;
}

void xc_tilecache_free(struct xc_tilecache *c)
{
    if (!c)
        return;
    free(c->file), free(c->loaded), free(c->loaded_ix.slot);
    free(c->slab), free(c->fresh), free(c->free_slots), free(c->fresh_ix.slot);
    free(c);
}

size_t xc_tilecache_loaded(const struct xc_tilecache *c) { return c ? c->nloaded : 0; }
uint64_t xc_tilecache_hits(const struct xc_tilecache *c) { return c ? c->hits : 0; }

static bool uniform(const uint8_t *tile)
{
    for (unsigned i = 4; i < XC_TILE_BYTES; i += 4)
        if (memcmp(tile + i, tile, 4))
            return false;
    return true;
}

static void drop_loaded(struct xc_tilecache *c)
{
    free(c->file), free(c->loaded), free(c->loaded_ix.slot);
    c->file = NULL, c->loaded = NULL, c->loaded_ix.slot = NULL, c->nloaded = 0;
}

int xc_tilecache_load(struct xc_tilecache *c, const uint8_t *p, size_t n)
{
    struct rd r = rd_make(p, n, false);
    uint32_t count;
    if (c->file || rd_u32(&r, &count) || count == 0 || count > XC_TILES_MAX || rd_left(&r) != (size_t)count * XC_TILE_BYTES)
        return -EBADMSG;
    if (!(c->file = malloc(n - 4)) || !(c->loaded = malloc(sizeof *c->loaded * count)) ||
        index_make(&c->loaded_ix, count) < 0) {
        drop_loaded(c);
        return -ENOMEM;
    }
    memcpy(c->file, p + 4, n - 4);
    for (uint32_t i = 0; i < count; i++) {
        struct tile_entry e = { xc_tile_key(c->file + (size_t)i * XC_TILE_BYTES), c->file + (size_t)i * XC_TILE_BYTES };
        /* ascending (so none twice) and of more than one colour, as saved */
        if ((i && entry_cmp(&c->loaded[i - 1], &e) >= 0) || uniform(e.p)) {
            drop_loaded(c);
            return -EBADMSG;
        }
        c->loaded[i] = e;
        index_put(&c->loaded_ix, e.key, i);
    }
    c->nloaded = count;
    return 0;
}

int xc_tilecache_find(struct xc_tilecache *c, const uint8_t *tile)
{
    return c && c->nloaded ? index_find(&c->loaded_ix, c->loaded, xc_tile_key(tile), tile) : -1;
}

void xc_tilecache_sent(struct xc_tilecache *c, size_t n)
{
    if (c)
        c->hits += n;
}

const uint8_t *xc_tilecache_get(struct xc_tilecache *c, uint64_t index)
{
    if (!c || index >= c->nloaded)
        return NULL;
    c->hits++;
    return c->loaded[index].p;
}

/* Back to the least `keep` tiles held (which hold the least `keep` of all noted: a tile is
 * dropped, or refused later, only when `keep` held tiles are below it). */
static int prune(struct xc_tilecache *c)
{
    qsort(c->fresh, c->nfresh, sizeof *c->fresh, entry_cmp);
    for (uint32_t i = c->keep; i < c->nfresh; i++)
        c->free_slots[c->nfree++] = (uint32_t)((c->fresh[i].p - c->slab) / XC_TILE_BYTES);
    memcpy(c->limit_bytes, c->fresh[c->keep].p, XC_TILE_BYTES);
    c->limit = (struct tile_entry){ c->fresh[c->keep].key, c->limit_bytes };
    c->have_limit = true;
    c->nfresh = c->keep;
    memset(c->fresh_ix.slot, 0, sizeof *c->fresh_ix.slot * (c->fresh_ix.mask + 1));
    for (uint32_t i = 0; i < c->nfresh; i++)
        index_put(&c->fresh_ix, c->fresh[i].key, i);
    return 0;
}

static int note_tile(struct xc_tilecache *c, const uint8_t *tile)
{
    if (uniform(tile))
        return 0; /* one colour: as cheap in the WebP as a reference */
    struct tile_entry e = { xc_tile_key(tile), (uint8_t *)tile };
    if ((c->have_limit && entry_cmp(&e, &c->limit) >= 0) || index_find(&c->fresh_ix, c->fresh, e.key, tile) >= 0)
        return 0;
    if (!c->slab) {
        if (!(c->slab = malloc((size_t)c->hold_cap * XC_TILE_BYTES)) || !(c->fresh = malloc(sizeof *c->fresh * c->hold_cap)) ||
            !(c->free_slots = malloc(sizeof *c->free_slots * c->hold_cap)) || index_make(&c->fresh_ix, c->hold_cap) < 0)
            return -ENOMEM;
        for (uint32_t i = 0; i < c->hold_cap; i++)
            c->free_slots[i] = c->hold_cap - 1 - i;
        c->nfree = c->hold_cap;
    }
    uint8_t *slot = c->slab + (size_t)c->free_slots[--c->nfree] * XC_TILE_BYTES;
    memcpy(slot, tile, XC_TILE_BYTES);
    c->fresh[c->nfresh] = (struct tile_entry){ e.key, slot };
    index_put(&c->fresh_ix, e.key, c->nfresh++);
    return c->nfresh == c->hold_cap ? prune(c) : 0;
}

void xc_tile_cut(const uint8_t *body, uint32_t w, uint32_t ox, uint32_t oy, uint8_t *tile)
{
    for (unsigned j = 0; j < XC_TILE_SIDE; j++)
        memcpy(tile + 4 * XC_TILE_SIDE * j, body + 4 * ((size_t)(oy + j) * w + ox), 4 * XC_TILE_SIDE);
}

void xc_tile_grid(int x, int y, uint32_t w, uint32_t h, struct xc_tile_grid *g)
{
    /* whole cells: from the first multiple of the side at or after the image's edge */
    int64_t cx0 = ((int64_t)x + XC_TILE_SIDE - 1 + 65536) / XC_TILE_SIDE - 65536 / XC_TILE_SIDE;
    int64_t cy0 = ((int64_t)y + XC_TILE_SIDE - 1 + 65536) / XC_TILE_SIDE - 65536 / XC_TILE_SIDE;
    int64_t cx1 = ((int64_t)x + w + 65536) / XC_TILE_SIDE - 65536 / XC_TILE_SIDE;
    int64_t cy1 = ((int64_t)y + h + 65536) / XC_TILE_SIDE - 65536 / XC_TILE_SIDE;
    g->ox = (uint32_t)(cx0 * XC_TILE_SIDE - x), g->oy = (uint32_t)(cy0 * XC_TILE_SIDE - y);
    g->nx = cx1 > cx0 ? (uint32_t)(cx1 - cx0) : 0, g->ny = cy1 > cy0 ? (uint32_t)(cy1 - cy0) : 0;
}

int xc_tilecache_note_image(struct xc_tilecache *c, const uint8_t *body, int x, int y, uint32_t w, uint32_t h)
{
    if (!c || !c->keep)
        return 0;
    struct xc_tile_grid g;
    xc_tile_grid(x, y, w, h, &g);
    uint8_t tile[XC_TILE_BYTES];
    for (uint32_t j = 0; j < g.ny; j++)
        for (uint32_t i = 0; i < g.nx; i++) {
            xc_tile_cut(body, w, g.ox + i * XC_TILE_SIDE, g.oy + j * XC_TILE_SIDE, tile);
            int rc = note_tile(c, tile);
            if (rc < 0)
                return rc;
        }
    return 0;
}

/* The least `keep` of this session's tiles, then the loaded ones not among them, least
 * first, to `keep` in all; in ascending order. */
int xc_tilecache_save(const struct xc_tilecache *c, struct buf *out)
{
    uint32_t nf = c->nfresh < c->keep ? c->nfresh : c->keep, n = 0;
    if (!nf && !c->nloaded)
        return 0;
    struct tile_entry *v = malloc(sizeof *v * ((size_t)c->nfresh + c->nloaded + 1));
    if (!v)
        return -ENOMEM;
    if (c->nfresh) /* (none noted: no array) */
        memcpy(v, c->fresh, sizeof *v * c->nfresh);
    qsort(v, c->nfresh, sizeof *v, entry_cmp);
    n = nf;
    for (uint32_t i = 0; i < c->nloaded && n < c->keep; i++)
        if (!bsearch(&c->loaded[i], v, nf, sizeof *v, entry_cmp))
            v[n++] = c->loaded[i];
    qsort(v, n, sizeof *v, entry_cmp);
    uint8_t w[4];
    st32(w, n, false);
    int rc = n ? buf_append(out, w, 4) : 0;
    for (uint32_t i = 0; i < n && !rc; i++)
        rc = buf_append(out, v[i].p, XC_TILE_BYTES);
    free(v);
    return rc;
}

/* This session's tiles of one channel direction (mode 3's indices past the loaded ones):
 * the newest XC_TILE_RING, found by a scan of their keys (a ring of 1024: some 200 lookups
 * an image). Both ends push the same tiles in the channel's order. */
struct xc_tile_ring {
    uint8_t *slab;                /* XC_TILE_RING tiles */
    uint64_t key[XC_TILE_RING];
    uint32_t n, next;             /* held; the slot the next tile goes to */
};

void xc_tile_ring_free(struct xc_tile_ring *r)
{
    if (r)
        free(r->slab);
    free(r);
}

uint32_t xc_tile_ring_count(const struct xc_tile_ring *r) { return r ? r->n : 0; }

static uint32_t ring_slot(const struct xc_tile_ring *r, uint32_t back)
{
    return (r->next + XC_TILE_RING - 1 - back) % XC_TILE_RING;
}

int xc_tile_ring_find(const struct xc_tile_ring *r, const uint8_t *tile, uint64_t key)
{
    for (uint32_t back = 0; r && back < r->n; back++) {
        uint32_t s = ring_slot(r, back);
        if (r->key[s] == key && memcmp(r->slab + (size_t)s * XC_TILE_BYTES, tile, XC_TILE_BYTES) == 0)
            return (int)back;
    }
    return -1;
}

const uint8_t *xc_tile_ring_get(const struct xc_tile_ring *r, uint32_t back)
{
    return r && back < r->n ? r->slab + (size_t)ring_slot(r, back) * XC_TILE_BYTES : NULL;
}

int xc_tile_ring_push_image(struct xc_tile_ring **rp, struct xc_tilecache *c, const uint8_t *body, int x, int y,
                            uint32_t w, uint32_t h)
{
    struct xc_tile_grid g;
    xc_tile_grid(x, y, w, h, &g);
    if (!g.nx || !g.ny)
        return 0;
    if (!*rp) {
        if (!(*rp = calloc(1, sizeof **rp)) || !((*rp)->slab = malloc((size_t)XC_TILE_RING * XC_TILE_BYTES))) {
            free(*rp);
            *rp = NULL;
            return -ENOMEM;
        }
    }
    struct xc_tile_ring *r = *rp;
    uint8_t tile[XC_TILE_BYTES];
    for (uint32_t j = 0; j < g.ny; j++)
        for (uint32_t i = 0; i < g.nx; i++) {
            xc_tile_cut(body, w, g.ox + i * XC_TILE_SIDE, g.oy + j * XC_TILE_SIDE, tile);
            uint64_t key = xc_tile_key(tile);
            if (uniform(tile) || xc_tile_ring_find(r, tile, key) >= 0 ||
                (c && c->nloaded && index_find(&c->loaded_ix, c->loaded, key, tile) >= 0))
                continue; /* one colour, or held already */
            memcpy(r->slab + (size_t)r->next * XC_TILE_BYTES, tile, XC_TILE_BYTES);
            r->key[r->next] = key;
            r->next = (r->next + 1) % XC_TILE_RING;
            r->n += r->n < XC_TILE_RING;
        }
    return 0;
}
