/* predict.c -- the facts behind local answers, and the answers themselves. Only facts
 * that cannot change during a server's life are kept: nothing here is a guess.
 * Workload: a few hundred atoms and a few dozen extensions per session; lookups per
 * request of the kinds below only. Memory is bounded (PREDICT_MAX_ATOMS). */
#include "proxy/predict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xproto_tables.h"

#define QE_BODY 24                 /* QueryExtension reply bytes 8..31 */
#define PREDICT_MAX_ATOMS 32768u   /* atoms remembered per session */
#define PREDICT_MAX_NAME 1024u     /* longer atom names are not remembered */
#define OP_INTERN_ATOM 16
#define OP_GET_ATOM_NAME 17

struct atom {
    uint32_t atom;
    uint16_t len;
    char *name;
};

struct predictor {
    struct {
        bool known;
        uint8_t body[QE_BODY];
    } *ext;                        /* by xp_extensions index */
    struct atom *atoms;            /* learnt and predefined, in no order */
    uint32_t n_atoms;
    uint32_t *by_name, *by_id;     /* open addressing: index + 1 into atoms, 0 empty */
    uint32_t slots;                /* a power of two, over twice PREDICT_MAX_ATOMS */
};

static uint32_t hash_name(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static uint32_t hash_id(uint32_t a) { return a * 2654435761u; }

static const struct atom *atom_by_name(const struct predictor *p, const char *name, size_t len)
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

static const struct atom *atom_by_id(const struct predictor *p, uint32_t id)
{
    for (uint32_t i = hash_id(id) & (p->slots - 1);; i = (i + 1) & (p->slots - 1)) {
        uint32_t e = p->by_id[i];
        if (!e)
            return NULL;
        if (p->atoms[e - 1].atom == id)
            return &p->atoms[e - 1];
    }
}

static void atom_add(struct predictor *p, uint32_t id, const char *name, size_t len)
{
    if (!id || len > PREDICT_MAX_NAME || p->n_atoms >= PREDICT_MAX_ATOMS || atom_by_id(p, id) ||
        atom_by_name(p, name, len))
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
}

int predict_new(struct predictor **out)
{
    struct predictor *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->slots = 1;
    while (p->slots < 2 * PREDICT_MAX_ATOMS)
        p->slots <<= 1;
    p->ext = calloc(xp_n_extensions, sizeof *p->ext);
    p->atoms = calloc(PREDICT_MAX_ATOMS, sizeof *p->atoms);
    p->by_name = calloc(p->slots, sizeof *p->by_name);
    p->by_id = calloc(p->slots, sizeof *p->by_id);
    if (!p->ext || !p->atoms || !p->by_name || !p->by_id) {
        predict_free(p);
        return -ENOMEM;
    }
    for (uint32_t a = 1; a <= XP_N_PREDEFINED_ATOMS; a++)
        if (xp_predefined_atoms[a])
            atom_add(p, a, xp_predefined_atoms[a], strlen(xp_predefined_atoms[a]));
    *out = p;
    return 0;
}

void predict_free(struct predictor *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; p->atoms && i < p->n_atoms; i++)
        free(p->atoms[i].name);
    free(p->atoms);
    free(p->by_name);
    free(p->by_id);
    free(p->ext);
    free(p);
}

static void question_drop(struct predict_questions *pq)
{
    free(pq->q[pq->head].name);
    pq->head = (pq->head + 1) % pq->cap;
    pq->len--;
}

void predict_questions_free(struct predict_questions *pq)
{
    while (pq->len)
        question_drop(pq);
    free(pq->q);
    *pq = (struct predict_questions){ 0 };
}

/* The name a request carries at offset 8, its length at offset 4 (InternAtom, QueryExtension). */
static bool request_name(const uint8_t *req, uint32_t size, bool msb, const char **name, uint16_t *len)
{
    if (size < 8)
        return false;
    *len = ld16(req + 4, msb);
    *name = (const char *)req + 8;
    return (uint32_t)*len + 8 <= size;
}

void predict_ask(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                 uint32_t seq, bool msb)
{
    if (cls->kind != MSG_REQUEST || (cls->major != OP_INTERN_ATOM && cls->major != OP_GET_ATOM_NAME))
        return; /* QueryExtension answers are learnt through cls->query_ext */
    struct predict_question q = { .seq = seq, .major = cls->major };
    const char *name;
    if (cls->major == OP_GET_ATOM_NAME) {
        if (size < 8)
            return;
        q.atom = ld32(req + 4, msb);
    } else {
        if (!request_name(req, size, msb, &name, &q.name_len) || q.name_len > PREDICT_MAX_NAME ||
            !(q.name = malloc(q.name_len ? q.name_len : 1)))
            return;
        memcpy(q.name, name, q.name_len);
    }
    if (pq->len == pq->cap) {
        uint32_t cap = pq->cap ? pq->cap * 2 : 16;
        struct predict_question *n = cap <= XS_MAX_PENDING ? malloc(cap * sizeof *n) : NULL;
        if (!n) {
            free(q.name);
            return;
        }
        for (uint32_t i = 0; i < pq->len; i++)
            n[i] = pq->q[(pq->head + i) % pq->cap];
        free(pq->q);
        pq->q = n;
        pq->head = 0;
        pq->cap = cap;
    }
    pq->q[(pq->head + pq->len++) % pq->cap] = q;
}

void predict_learn(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, uint32_t seq,
                   const uint8_t *reply, uint32_t size, bool msb)
{
    while (pq->len && pq->q[pq->head].seq < seq)
        question_drop(pq); /* answered by an error, or not by a reply */
    if (cls->kind != MSG_REPLY || size < 32)
        return;
    if (cls->major == XW_OP_QUERY_EXTENSION && cls->query_ext >= 0 && size == 32) {
        p->ext[cls->query_ext].known = true;
        memcpy(p->ext[cls->query_ext].body, reply + 8, QE_BODY);
        return;
    }
    if (!pq->len || pq->q[pq->head].seq != seq || pq->q[pq->head].major != cls->major)
        return;
    const struct predict_question *q = &pq->q[pq->head];
    if (q->major == OP_INTERN_ATOM) {
        atom_add(p, ld32(reply + 8, msb), q->name, q->name_len);
    } else {
        uint16_t len = ld16(reply + 8, msb);
        if ((uint32_t)len + 32 <= size)
            atom_add(p, q->atom, (const char *)reply + 32, len);
    }
    question_drop(pq);
}

static uint8_t *reply_header(struct buf *out, uint16_t seq, bool msb, size_t extra)
{
    uint8_t *r = buf_append_space(out, 32 + extra);
    if (!r)
        return NULL;
    memset(r, 0, 32 + extra);
    r[0] = 1; /* Reply */
    st16(r + 2, seq, msb);
    st32(r + 4, (uint32_t)(extra / 4), msb);
    return r;
}

bool predict_answer(const struct predictor *p, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                    uint16_t seq, bool msb, struct buf *out)
{
    if (cls->kind != MSG_REQUEST)
        return false;
    uint8_t *r;
    if (cls->major == XW_OP_QUERY_EXTENSION) {
        if (cls->query_ext < 0 || !p->ext[cls->query_ext].known || !(r = reply_header(out, seq, msb, 0)))
            return false;
        memcpy(r + 8, p->ext[cls->query_ext].body, QE_BODY);
        return true;
    }
    if (cls->major == OP_INTERN_ATOM) {
        const char *name;
        uint16_t len;
        const struct atom *a = request_name(req, size, msb, &name, &len) ? atom_by_name(p, name, len) : NULL;
        if (!a || !(r = reply_header(out, seq, msb, 0)))
            return false;
        st32(r + 8, a->atom, msb);
        return true;
    }
    if (cls->major == OP_GET_ATOM_NAME) {
        const struct atom *a = size >= 8 ? atom_by_id(p, ld32(req + 4, msb)) : NULL;
        if (!a || !(r = reply_header(out, seq, msb, a->len + xw_pad4(a->len))))
            return false;
        st16(r + 8, a->len, msb);
        memcpy(r + 32, a->name, a->len);
        return true;
    }
    return false;
}
