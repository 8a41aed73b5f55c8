/* idmap.h -- a small open-addressing map from X resource ids (never 0) to three 32-bit
 * values, bounded in size: when full, new ids are not remembered (callers treat an
 * unknown id as "ask the server"). Deletions use tombstones, rebuilt on growth. */
#ifndef TINCAN_IDMAP_H
#define TINCAN_IDMAP_H

#include <stdbool.h>
#include <stdint.h>

struct idmap_entry {
    uint32_t id;          /* 0: empty; IDMAP_GONE: deleted */
    uint32_t a, b, c;
};

struct idmap {
    struct idmap_entry *e;
    uint32_t cap, used, live, max;   /* used counts tombstones too */
};

#define IDMAP_GONE 0xffffffffu

void idmap_init(struct idmap *m, uint32_t max_entries);
void idmap_free(struct idmap *m);
struct idmap_entry *idmap_get(const struct idmap *m, uint32_t id);
/* The entry for id, created zeroed if absent; NULL when the map is full or id invalid. */
struct idmap_entry *idmap_put(struct idmap *m, uint32_t id);
void idmap_del(struct idmap *m, uint32_t id);

#endif
