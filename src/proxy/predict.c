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
#define OP_ALLOC_COLOR 84
#define PREDICT_MAX_COLORMAPS 16u  /* default colormaps of TrueColor screens */

struct atom {
    uint32_t atom;
    uint16_t len;
    char *name;
};

/* A colormap whose AllocColor answer is arithmetic: a TrueColor visual's default map.
 * The formula is the sample server's (mi); it is trusted only once a real reply has
 * matched it, and never again after one has not. */
struct truecolor_map {
    uint32_t colormap;
    uint32_t red_mask, green_mask, blue_mask;
    uint8_t bits_per_rgb, depth;
    bool verified, broken;
};

struct predictor {
    struct truecolor_map cmaps[PREDICT_MAX_COLORMAPS];
    uint32_t n_cmaps;
    bool setup_learnt;
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
    if (cls->kind != MSG_REQUEST || cls->ext ||
        (cls->major != OP_INTERN_ATOM && cls->major != OP_GET_ATOM_NAME && cls->major != OP_ALLOC_COLOR))
        return; /* QueryExtension answers are learnt through cls->query_ext */
    struct predict_question q = { .seq = seq, .major = cls->major };
    const char *name;
    if (cls->major == OP_ALLOC_COLOR) {
        if (size < 16)
            return;
        q.atom = ld32(req + 4, msb); /* the colormap */
        q.name_len = 6;
        if (!(q.name = malloc(6)))
            return;
        memcpy(q.name, req + 8, 6);  /* red, green, blue as sent */
    } else if (cls->major == OP_GET_ATOM_NAME) {
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

/* ---------------------------------------------------------------- AllocColor, TrueColor */

static struct truecolor_map *cmap_find(const struct predictor *p, uint32_t colormap)
{
    for (uint32_t i = 0; i < p->n_cmaps; i++)
        if (p->cmaps[i].colormap == colormap)
            return (struct truecolor_map *)&p->cmaps[i];
    return NULL;
}

static unsigned mask_shift(uint32_t mask)
{
    unsigned s = 0;
    while (s < 32 && !(mask >> s & 1))
        s++;
    return s;
}

/* One component as the sample server computes it: the request's value is first rounded to
 * bits_per_rgb bits (miResolveColor), then the nearest of the map's entries is taken
 * (FindBestPixel; the first of equals wins); entry i holds i scaled to 16 bits and
 * rounded to bits_per_rgb the same way (miInitializeColormap). */
static void component(const struct truecolor_map *m, uint32_t mask, uint16_t want, uint32_t *pixel, uint16_t *got)
{
    unsigned shift = 16u - m->bits_per_rgb;
    uint32_t lim = (1u << m->bits_per_rgb) - 1;
    uint32_t limc = mask >> mask_shift(mask);
    uint32_t v = ((uint32_t)(want >> shift) * 65535u) / lim;
    uint32_t best = 0, best_value = 0;
    uint64_t best_d = UINT64_MAX;
    for (uint32_t i = 0; i <= limc; i++) {
        uint32_t e = ((((i * 65535u) / limc) >> shift) * 65535u) / lim;
        int64_t d = (int64_t)e - (int64_t)v;
        if ((uint64_t)(d * d) < best_d) {
            best_d = (uint64_t)(d * d);
            best = i;
            best_value = e;
        }
    }
    *pixel |= best << mask_shift(mask);
    *got = (uint16_t)best_value;
}

static void truecolor_alloc(const struct truecolor_map *m, const uint8_t rgb[6], bool msb, uint8_t out[12])
{
    uint32_t pixel = 0;
    uint16_t r, g, b;
    component(m, m->red_mask, ld16(rgb, msb), &pixel, &r);
    component(m, m->green_mask, ld16(rgb + 2, msb), &pixel, &g);
    component(m, m->blue_mask, ld16(rgb + 4, msb), &pixel, &b);
    if (m->depth == 32) /* the server sets the bits no colour uses (alpha) */
        pixel |= ~(m->red_mask | m->green_mask | m->blue_mask);
    memset(out, 0, 12);
    st16(out, r, msb);
    st16(out + 2, g, msb);
    st16(out + 4, b, msb);
    st32(out + 8, pixel, msb);
}

/* A plausible TrueColor description: contiguous masks of at most 16 bits, rgb bits 1..16. */
static bool truecolor_sane(const struct truecolor_map *m)
{
    const uint32_t masks[3] = { m->red_mask, m->green_mask, m->blue_mask };
    for (int i = 0; i < 3; i++) {
        uint32_t v = masks[i] ? masks[i] >> mask_shift(masks[i]) : 0;
        if (!v || v > 0xffff || (v & (v + 1)))
            return false;
    }
    return m->bits_per_rgb >= 1 && m->bits_per_rgb <= 16;
}

void predict_learn_setup(struct predictor *p, const uint8_t *setup, size_t size, bool msb)
{
    if (p->setup_learnt || size < 40 || setup[0] != 1)
        return;
    p->setup_learnt = true; /* every client sees the same server */
    struct rd r = rd_make(setup, size, msb);
    uint16_t vendor_len;
    uint8_t n_screens, n_formats;
    if (rd_skip(&r, 24) || rd_u16(&r, &vendor_len) || rd_skip(&r, 2) || rd_u8(&r, &n_screens) ||
        rd_u8(&r, &n_formats) || rd_skip(&r, 10) || rd_skip(&r, vendor_len + xw_pad4(vendor_len)) ||
        rd_skip(&r, 8u * n_formats))
        return;
    for (unsigned sc = 0; sc < n_screens; sc++) {
        uint32_t root, colormap, root_visual;
        uint8_t n_depths;
        if (rd_u32(&r, &root) || rd_u32(&r, &colormap) || rd_skip(&r, 24) || rd_u32(&r, &root_visual) ||
            rd_skip(&r, 3) || rd_u8(&r, &n_depths))
            return;
        for (unsigned d = 0; d < n_depths; d++) {
            uint8_t depth;
            uint16_t n_visuals;
            if (rd_u8(&r, &depth) || rd_skip(&r, 1) || rd_u16(&r, &n_visuals) || rd_skip(&r, 4))
                return;
            for (unsigned v = 0; v < n_visuals; v++) {
                uint32_t id;
                uint8_t class;
                struct truecolor_map m = { .colormap = colormap, .depth = depth };
                if (rd_u32(&r, &id) || rd_u8(&r, &class) || rd_u8(&r, &m.bits_per_rgb) || rd_skip(&r, 2) ||
                    rd_u32(&r, &m.red_mask) || rd_u32(&r, &m.green_mask) || rd_u32(&r, &m.blue_mask) ||
                    rd_skip(&r, 4))
                    return;
                if (id == root_visual && class == 4 /* TrueColor */ && truecolor_sane(&m) &&
                    p->n_cmaps < PREDICT_MAX_COLORMAPS && !cmap_find(p, colormap))
                    p->cmaps[p->n_cmaps++] = m;
            }
        }
    }
}

static void learn_alloc_color(struct predictor *p, const struct predict_question *q, const uint8_t *reply, bool msb)
{
    struct truecolor_map *m = cmap_find(p, q->atom);
    if (!m || m->broken)
        return;
    uint8_t want[12];
    truecolor_alloc(m, (const uint8_t *)q->name, msb, want);
    if (memcmp(want, reply + 8, 12) == 0)
        m->verified = true;
    else
        m->broken = true; /* not the sample server's arithmetic: ask the server from now on */
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
    if (q->major == OP_ALLOC_COLOR) {
        learn_alloc_color(p, q, reply, msb);
    } else if (q->major == OP_INTERN_ATOM) {
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
    if (cls->major == OP_ALLOC_COLOR && !cls->ext) {
        const struct truecolor_map *m = size >= 16 ? cmap_find(p, ld32(req + 4, msb)) : NULL;
        if (!m || !m->verified || m->broken || !(r = reply_header(out, seq, msb, 0)))
            return false;
        truecolor_alloc(m, req + 8, msb, r + 8);
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
