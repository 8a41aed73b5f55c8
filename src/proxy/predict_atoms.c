/* predict_atoms.c -- atoms known by name (predefined, learnt from replies, told in facts),
 * atoms told by the hash of their name only, and the census that lets an only-if-exists
 * InternAtom be answered None. Workload: a few hundred atoms a session, a lookup per InternAtom. */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"

static uint32_t hash_name(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static uint32_t hash_id(uint32_t a) { return a * 2654435761u; }

/* The 16-bit hash of FACT_ATOM_HASHES (docs/PROTOCOL.md 3.2): FNV-1a, folded. */
static uint16_t name_hash16(const char *s, size_t n)
{
    uint32_t h = hash_name(s, n);
    return (uint16_t)(h ^ h >> 16);
}

/* Where atom is, or would go, in the ascending list of atoms told by hash only. */
static uint32_t unnamed_at(const struct predictor *p, uint32_t atom)
{
    uint32_t lo = 0, hi = p->unnamed.n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->unnamed.ids[mid] < atom)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool pd_unnamed_has(const struct predictor *p, uint32_t atom)
{
    uint32_t i = unnamed_at(p, atom);
    return i < p->unnamed.n && p->unnamed.ids[i] == atom;
}

/* Whether a name without a known atom may still have one: its hash was told for an atom
 * whose name is not known. */
bool pd_unnamed_may_be(const struct predictor *p, const char *name, size_t len)
{
    uint16_t h = name_hash16(name, len);
    return p->unnamed.n && p->unnamed.bits && (p->unnamed.bits[h >> 3] >> (h & 7) & 1);
}

const struct atom *pd_atom_by_name(const struct predictor *p, const char *name, size_t len)
{
    for (uint32_t i = hash_name(name, len) & (p->slots - 1);; i = (i + 1) & (p->slots - 1)) {
        uint32_t e = p->by_name[i];
        if (!e)
            return NULL;
        const struct atom *a = &p->atoms[e - 1];
        if (a->len == len && memcmp(a->name, name, len) == 0)
            return a;
    }
}

const struct atom *pd_atom_by_id(const struct predictor *p, uint32_t id)
{
    for (uint32_t i = hash_id(id) & (p->slots - 1);; i = (i + 1) & (p->slots - 1)) {
        uint32_t e = p->by_id[i];
        if (!e)
            return NULL;
        if (p->atoms[e - 1].atom == id)
            return &p->atoms[e - 1];
    }
}

void pd_atom_add(struct predictor *p, uint32_t id, const char *name, size_t len)
{
    if (!id || len > PREDICT_MAX_NAME || p->n_atoms >= PREDICT_MAX_ATOMS || pd_atom_by_id(p, id) ||
        pd_atom_by_name(p, name, len))
        return;
    char *copy = malloc(len + 1);
    if (!copy)
        return;
    memcpy(copy, name, len);
    copy[len] = 0;
    p->atoms[p->n_atoms] = (struct atom){ id, (uint16_t)len, copy };
    uint32_t e = ++p->n_atoms, i;
    for (i = hash_name(name, len) & (p->slots - 1); p->by_name[i]; i = (i + 1) & (p->slots - 1))
        ;
    p->by_name[i] = e;
    for (i = hash_id(id) & (p->slots - 1); p->by_id[i]; i = (i + 1) & (p->slots - 1))
        ;
    p->by_id[i] = e;
    if (id > p->max_atom)
        p->max_atom = id;
    uint32_t u = unnamed_at(p, id);
    if (u < p->unnamed.n && p->unnamed.ids[u] == id) { /* its name, at last */
        memmove(p->unnamed.ids + u, p->unnamed.ids + u + 1, (p->unnamed.n - u - 1) * sizeof *p->unnamed.ids);
        p->unnamed.n--;
    }
    while (p->census_next && (pd_atom_by_id(p, p->census_next) || pd_unnamed_has(p, p->census_next)))
        p->census_next++; /* learnt in order: the census still covers them all */
}

/* An atom told by its name's hash: it counts for the census; a name with that hash is not
 * answered None. Beyond the bound it is not counted, so the census is not current. */
void pd_unnamed_add(struct predictor *p, uint32_t id, uint16_t hash)
{
    if (!p->unnamed.bits && !(p->unnamed.bits = calloc(1, 65536 / 8)))
        return;
    p->unnamed.bits[hash >> 3] |= (uint8_t)(1u << (hash & 7));
    uint32_t u = unnamed_at(p, id);
    if (pd_atom_by_id(p, id) || (u < p->unnamed.n && p->unnamed.ids[u] == id) ||
        p->n_atoms + p->unnamed.n >= PREDICT_MAX_ATOMS)
        return;
    if (p->unnamed.n == p->unnamed.cap) {
        uint32_t cap = p->unnamed.cap ? 2 * p->unnamed.cap : 256;
        uint32_t *ids = realloc(p->unnamed.ids, cap * sizeof *ids);
        if (!ids)
            return;
        p->unnamed.ids = ids;
        p->unnamed.cap = cap;
    }
    memmove(p->unnamed.ids + u + 1, p->unnamed.ids + u, (p->unnamed.n - u) * sizeof *p->unnamed.ids);
    p->unnamed.ids[u] = id;
    p->unnamed.n++;
    if (id > p->max_atom)
        p->max_atom = id;
    while (p->census_next && (pd_atom_by_id(p, p->census_next) || pd_unnamed_has(p, p->census_next)))
        p->census_next++;
}

/* Whether the atoms known (by name or by hash) are exactly 1..census_next-1 and nothing
 * beyond: then a name not among them, and not of a hash told, has no atom (as of the display
 * side's last look, docs/PROTOCOL.md 3.2). */
bool pd_census_current(const struct predictor *p)
{
    return p->census_next > 1 && p->max_atom < p->census_next && p->n_atoms + p->unnamed.n == p->census_next - 1;
}

bool predict_is_atom_none(const struct msg_class *cls, const uint8_t *reply, size_t size, bool msb)
{
    struct xp_intern_atom_reply v;
    return cls->kind == MSG_REPLY && !cls->ext && cls->major == XP_OP_INTERN_ATOM && size == XP_INTERN_ATOM_REPLY_SIZE &&
           xp_intern_atom_reply_view(reply, size, msb, &v) && !v.atom;
}

int predict_atom_none_reply(struct buf *out, uint16_t seq, bool msb)
{
    uint8_t *r = pd_reply_space(out, 0);
    return r && xp_intern_atom_reply_put(r, XP_INTERN_ATOM_REPLY_SIZE, msb, &(struct xp_intern_atom_reply){ .sequence = seq })
               ? 0 : -ENOMEM;
}

int predict_fact_atom(struct buf *out, uint32_t atom, const char *name, size_t name_len)
{
    if (!out->len) {
        uint8_t kind = FACT_ATOMS;
        if (buf_append(out, &kind, 1))
            return -ENOMEM;
    }
    return buf_put_varint(out, atom) || buf_put_varint(out, name_len) || buf_append(out, name, name_len) ? -ENOMEM : 0;
}

int predict_fact_known_atom(const struct predictor *p, struct buf *out, uint32_t atom)
{
    const struct atom *a = p && atom ? pd_atom_by_id(p, atom) : NULL;
    return a ? predict_fact_atom(out, a->atom, a->name, a->len) : -ENOENT;
}

int predict_fact_atom_hash(struct buf *out, uint32_t atom, const char *name, size_t name_len)
{
    if (!out->len) {
        uint8_t kind = FACT_ATOM_HASHES;
        if (buf_append(out, &kind, 1) || buf_put_varint(out, atom))
            return -ENOMEM;
    }
    uint16_t h = name_hash16(name, name_len);
    uint8_t le[2] = { (uint8_t)h, (uint8_t)(h >> 8) };
    return buf_append(out, le, 2) ? -ENOMEM : 0;
}

int predict_fact_census(struct buf *out, uint32_t next)
{
    uint8_t kind = FACT_ATOM_CENSUS;
    return buf_append(out, &kind, 1) || buf_put_varint(out, next) ? -ENOMEM : 0;
}

bool predict_atom_known(const struct predictor *p, uint32_t atom)
{
    return p && atom && pd_atom_by_id(p, atom);
}
