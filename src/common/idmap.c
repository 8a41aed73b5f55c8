/* idmap.c -- resource id -> small record, open addressing with linear probing.
 * Workload: tens to thousands of GCs, pixmaps and windows per client; one lookup per
 * drawing request of the kinds tincan answers locally. */
#include "common/idmap.h"

#include <stdlib.h>

static uint32_t slot_of(uint32_t id, uint32_t cap) { return (id * 2654435761u) & (cap - 1); }

void idmap_init(struct idmap *m, uint32_t max_entries) { *m = (struct idmap){ .max = max_entries }; }

void idmap_free(struct idmap *m)
{
    free(m->e);
    *m = (struct idmap){ .max = m->max };
}

struct idmap_entry *idmap_get(const struct idmap *m, uint32_t id)
{
    if (!m->cap || !id || id == IDMAP_GONE)
        return NULL;
    for (uint32_t i = slot_of(id, m->cap), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
        if (m->e[i].id == id)
            return &m->e[i];
        if (!m->e[i].id)
            return NULL;
    }
    return NULL;
}

/* Rehashes into a table of cap slots, dropping tombstones. */
static int rebuild(struct idmap *m, uint32_t cap)
{
    struct idmap_entry *n = calloc(cap, sizeof *n);
    if (!n)
        return -1;
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->e[i].id || m->e[i].id == IDMAP_GONE)
            continue;
        uint32_t j = slot_of(m->e[i].id, cap);
        while (n[j].id)
            j = (j + 1) & (cap - 1);
        n[j] = m->e[i];
    }
    free(m->e);
    m->e = n;
    m->cap = cap;
    m->used = m->live;
    return 0;
}

struct idmap_entry *idmap_put(struct idmap *m, uint32_t id)
{
    if (!id || id == IDMAP_GONE)
        return NULL;
    struct idmap_entry *e = idmap_get(m, id);
    if (e)
        return e;
    if (m->live >= m->max)
        return NULL;
    if ((m->used + 1) * 2 > m->cap) { /* keep at most half full, counting tombstones */
        uint32_t cap = m->cap ? m->cap : 16;
        while ((m->live + 1) * 4 > cap) /* live entries fill at most a quarter after a rebuild */
            cap *= 2;
        if (rebuild(m, cap) < 0)
            return NULL;
    }
    uint32_t i = slot_of(id, m->cap);
    while (m->e[i].id && m->e[i].id != IDMAP_GONE)
        i = (i + 1) & (m->cap - 1);
    if (!m->e[i].id)
        m->used++;
    m->e[i] = (struct idmap_entry){ .id = id };
    m->live++;
    return &m->e[i];
}

void idmap_del(struct idmap *m, uint32_t id)
{
    struct idmap_entry *e = idmap_get(m, id);
    if (e) {
        e->id = IDMAP_GONE;
        m->live--;
    }
}
