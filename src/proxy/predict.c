/* predict.c -- the facts behind local answers, and the answers themselves: the predictor's life,
 * a connection's questions, open fonts and history, root properties, and predict_answer, which
 * answers from the facts the other predict_*.c files keep. Only facts that cannot change during
 * a server's life are kept: nothing here is a guess. Memory is bounded (predict_private.h). */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"

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
    p->ex = calloc(PREDICT_MAX_EXCHANGES, sizeof *p->ex);
    p->props = calloc(PREDICT_MAX_ROOT_PROPS, sizeof *p->props);
    if (!p->ext || !p->atoms || !p->by_name || !p->by_id || !p->ex || !p->props) {
        predict_free(p);
        return -ENOMEM;
    }
    for (uint32_t a = 1; a <= XP_N_PREDEFINED_ATOMS; a++)
        if (xp_predefined_atoms[a])
            pd_atom_add(p, a, xp_predefined_atoms[a], strlen(xp_predefined_atoms[a]));
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
    free(p->unnamed.ids);
    free(p->unnamed.bits);
    free(p->by_name);
    free(p->by_id);
    free(p->ext);
    for (uint32_t i = 0; p->ex && i < p->n_ex; i++) {
        free(p->ex[i].key);
        free(p->ex[i].reply);
    }
    free(p->ex);
    for (uint32_t i = 0; p->props && i < p->n_props; i++)
        free(p->props[i].data);
    free(p->props);
    free(p->kb.keysyms);
    free(p);
}

static void question_drop(struct predict_questions *pq)
{
    free(pq->q[pq->head].name);
    buf_free(&pq->q[pq->head].acc);
    pq->head = (pq->head + 1) % pq->cap;
    pq->len--;
}

void predict_questions_free(struct predict_questions *pq)
{
    while (pq->len)
        question_drop(pq);
    free(pq->q);
    free(pq->hist);
    for (uint32_t i = 0; i < pq->n_fonts; i++)
        free(pq->fonts[i].name);
    free(pq->fonts);
    *pq = (struct predict_questions){ 0 };
}

static const struct predict_font *font_find(const struct predict_questions *pq, uint32_t fid)
{
    for (uint32_t i = 0; i < pq->n_fonts; i++)
        if (pq->fonts[i].fid == fid)
            return &pq->fonts[i];
    return NULL;
}

static void font_forget(struct predict_questions *pq, uint32_t fid)
{
    struct predict_font *f = (struct predict_font *)font_find(pq, fid);
    if (!f)
        return;
    free(f->name);
    *f = pq->fonts[--pq->n_fonts];
}

static struct root_prop *prop_find(const struct predictor *p, uint32_t window, uint32_t property)
{
    for (uint32_t i = 0; i < p->n_props; i++)
        if (p->props[i].window == window && p->props[i].property == property)
            return &p->props[i];
    return NULL;
}

/* Sets what is known of a root property; property 0 with PROP_UNKNOWN forgets the window. */
void pd_prop_set(struct predictor *p, uint32_t window, uint32_t property, uint8_t state, uint32_t type,
                     uint8_t format, const uint8_t *data, uint32_t len)
{
    if (!property && state == PROP_UNKNOWN) {
        for (uint32_t i = 0; i < p->n_props;)
            if (p->props[i].window == window) {
                free(p->props[i].data);
                p->props[i] = p->props[--p->n_props];
            } else {
                i++;
            }
        return;
    }
    struct root_prop *r = prop_find(p, window, property);
    uint8_t *copy = NULL;
    if (state == PROP_VALUE && !(copy = malloc(len ? len : 1)))
        state = PROP_UNKNOWN;
    if (!r) {
        if (p->n_props >= PREDICT_MAX_ROOT_PROPS) {
            free(copy);
            if ((r = prop_find(p, window, 0)))
                r->state = PROP_UNKNOWN; /* no room: nothing unnamed is known either */
            return;
        }
        r = &p->props[p->n_props++];
        *r = (struct root_prop){ .window = window, .property = property };
    }
    free(r->data);
    *r = (struct root_prop){ .window = window, .property = property, .state = state, .type = type,
                             .format = format, .len = copy ? len : 0, .data = copy };
    if (copy && len)
        memcpy(copy, data, len);
}

bool predict_property_known(const struct predictor *p, uint32_t window, uint32_t property)
{
    const struct root_prop *r = prop_find(p, window, property);
    if (!r)
        r = prop_find(p, window, 0);
    return r && r->state != PROP_UNKNOWN;
}

/* A request that changes a root window's properties: what the app side knows of them
 * is no longer current. The same on both sides. */
static void track_property_change(struct predictor *p, const struct msg_class *cls, const uint8_t *req,
                                  uint32_t size, bool msb)
{
    if (size < 12 || !prop_find(p, ld32(req + 4, msb), 0))
        return; /* not a root window we know */
    uint32_t window = ld32(req + 4, msb);
    if (cls->major == XP_OP_ROTATE_PROPERTIES) {
        pd_prop_set(p, window, 0, PROP_UNKNOWN, 0, 0, NULL, 0);
        return;
    }
    if (cls->major == XP_OP_GET_PROPERTY && !req[1])
        return; /* without delete */
    if (predict_property_known(p, window, ld32(req + 8, msb)))
        pd_prop_set(p, window, ld32(req + 8, msb), PROP_UNKNOWN, 0, 0, NULL, 0);
}

void predict_track(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                   uint32_t size, bool msb)
{
    if (cls->kind != MSG_REQUEST || size < 4)
        return;
    /* The keyboard's mappings change: not known until the display side says them again. */
    if ((!cls->ext && (cls->major == XP_OP_CHANGE_KEYBOARD_MAPPING || cls->major == XP_OP_SET_MODIFIER_MAPPING)) ||
        (cls->ext && !strcmp(cls->ext, "XKEYBOARD") && (cls->minor == 9 /* SetMap */ || cls->minor == 23 /* GetKbdByName */)))
        pd_forget_keyboard(p);
    if (!cls->ext && (cls->major == XP_OP_CHANGE_PROPERTY || cls->major == XP_OP_DELETE_PROPERTY ||
                      cls->major == XP_OP_GET_PROPERTY || cls->major == XP_OP_ROTATE_PROPERTIES))
        track_property_change(p, cls, req, size, msb);
    if (cls->ext && pd_state_changing(p, cls, req, size))
        pd_forget_state(p, pd_find_extension((const uint8_t *)cls->ext, strlen(cls->ext)));
    if (cls->ext && req[0] >= 128) {
        if (!pq->hist && !pq->hist_lost && !(pq->hist = calloc(128, sizeof *pq->hist)))
            pq->hist_lost = true; /* no histories: no handshake answers on this connection */
        if (!pq->hist)
            return;
        struct predict_history *h = &pq->hist[req[0] - 128];
        if (h->tainted) {
            h->late = h->late || predict_is_handshake(cls->ext, cls->minor);
            return;
        }
        if (predict_is_handshake(cls->ext, cls->minor) && h->len + size <= PREDICT_MAX_HISTORY) {
            memcpy(h->bytes + h->len, req, size);
            h->len = (uint8_t)(h->len + size);
        } else {
            h->tainted = true; /* anything else may change what later handshakes answer */
        }
        return;
    }
    if (cls->ext)
        return;
    if (cls->major == XP_OP_CLOSE_FONT && size >= 8) {
        font_forget(pq, ld32(req + 4, msb));
    } else if (cls->major == XP_OP_OPEN_FONT && size >= 12) {
        uint32_t fid = ld32(req + 4, msb);
        uint16_t len = ld16(req + 8, msb);
        font_forget(pq, fid);
        if ((uint32_t)len + 12 > size || pq->n_fonts >= PREDICT_MAX_FONTS)
            return;
        if (pq->n_fonts == pq->cap_fonts) {
            uint32_t cap = pq->cap_fonts ? pq->cap_fonts * 2 : 8;
            struct predict_font *n = realloc(pq->fonts, cap * sizeof *n);
            if (!n)
                return;
            pq->fonts = n;
            pq->cap_fonts = cap;
        }
        char *name = malloc(len ? len : 1);
        if (!name)
            return;
        memcpy(name, req + 12, len);
        pq->fonts[pq->n_fonts++] = (struct predict_font){ fid, len, name };
    }
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
    if (cls->kind != MSG_REQUEST)
        return;
    struct predict_question q = { .seq = seq, .major = cls->major };
    const char *name;
    const struct predict_font *f;
    if (cls->ext) {
        if (pd_xkb_get_map(cls))
            return; /* the keyboard may have changed since: only the display side's facts are kept */
        if (!(q.name = (char *)pd_handshake_key(pq, cls, req, size, &q.name_len)))
            return;
        q.major = req[0];
    } else if (cls->major == XP_OP_QUERY_FONT) {
        if (size < 8 || !(f = font_find(pq, ld32(req + 4, msb))) || !(q.name = malloc(f->len ? f->len : 1)))
            return;
        memcpy(q.name, f->name, f->len);
        q.name_len = f->len;
    } else if (cls->major == XP_OP_LIST_FONTS || cls->major == XP_OP_LIST_FONTS_WITH_INFO) {
        if (size > PREDICT_MAX_KEY || !(q.name = malloc(size)))
            return;
        memcpy(q.name, req, size);
        q.name_len = size;
    } else if (cls->major != XP_OP_INTERN_ATOM && cls->major != XP_OP_GET_ATOM_NAME && cls->major != XP_OP_ALLOC_COLOR) {
        return; /* QueryExtension answers are learnt through cls->query_ext */
    } else if (cls->major == XP_OP_ALLOC_COLOR) {
        if (size < 16)
            return;
        q.atom = ld32(req + 4, msb); /* the colormap */
        q.name_len = 6;
        if (!(q.name = malloc(6)))
            return;
        memcpy(q.name, req + 8, 6);  /* red, green, blue as sent */
    } else if (cls->major == XP_OP_GET_ATOM_NAME) {
        if (size < 8)
            return;
        q.atom = ld32(req + 4, msb);
    } else {
        uint16_t len;
        if (!request_name(req, size, msb, &name, &len) || len > PREDICT_MAX_NAME || !(q.name = malloc(len ? len : 1)))
            return;
        memcpy(q.name, name, len);
        q.name_len = len;
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
    struct predict_question *q = &pq->q[pq->head];
    if (q->major == XP_OP_LIST_FONTS_WITH_INFO) {
        /* One reply per font, then one with an empty name: learnt once all are in. */
        if (q->acc.len + size > PREDICT_MAX_REPLY || buf_append(&q->acc, reply, size) < 0) {
            question_drop(pq);
            return;
        }
        if (reply[1])
            return;
        pd_exchange_add(p, EX_REQ, msb, (const uint8_t *)q->name, q->name_len, buf_head(&q->acc), q->acc.len);
    } else if (q->major >= 128 || q->major == XP_OP_LIST_FONTS) {
        pd_exchange_add(p, EX_REQ, msb, (const uint8_t *)q->name, q->name_len, reply, size);
    } else if (q->major == XP_OP_QUERY_FONT) {
        pd_exchange_add(p, EX_FONT, msb, (const uint8_t *)q->name, q->name_len, reply, size);
    } else if (q->major == XP_OP_ALLOC_COLOR) {
        pd_learn_alloc_color(p, q, reply, msb);
    } else if (q->major == XP_OP_INTERN_ATOM) {
        pd_atom_add(p, ld32(reply + 8, msb), q->name, q->name_len);
    } else {
        uint16_t len = ld16(reply + 8, msb);
        if ((uint32_t)len + 32 <= size)
            pd_atom_add(p, q->atom, (const char *)reply + 32, len);
    }
    question_drop(pq);
}

uint8_t *pd_reply_header(struct buf *out, uint16_t seq, bool msb, size_t extra)
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

/* GetProperty on a root window whose property is known, computed as the protocol says
 * (values are kept in the display side's byte order, LSB: MSB clients are not answered). */
static bool answer_get_property(const struct predictor *p, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                                struct buf *out)
{
    if (size != 24 || msb || req[1] /* delete */)
        return false;
    uint32_t window = ld32(req + 4, msb), property = ld32(req + 8, msb), type = ld32(req + 12, msb);
    uint64_t offset = 4ull * ld32(req + 16, msb), length = 4ull * ld32(req + 20, msb);
    const struct root_prop *r = prop_find(p, window, property);
    if (!r && !(r = prop_find(p, window, 0)))
        return false;
    /* Invalid atoms are errors: answer only for atoms known to exist. */
    if (r->state == PROP_UNKNOWN || !pd_atom_by_id(p, property) || (type && !pd_atom_by_id(p, type)))
        return false;
    uint8_t *o;
    if (r->state == PROP_ABSENT || r->property != property) {
        if (r->state != PROP_ABSENT || !(o = pd_reply_header(out, seq, msb, 0)))
            return false;
        return true; /* type None, format 0, nothing after */
    }
    if (type && type != r->type) {
        if (!(o = pd_reply_header(out, seq, msb, 0)))
            return false;
        o[1] = r->format;
        st32(o + 8, r->type, msb);
        /* The X.Org server gives the size in format units here, not bytes as the protocol
         * document says: answer as the server does (its reply is what we are checked against). */
        st32(o + 12, r->format >= 8 ? r->len / (r->format / 8u) : r->len, msb);
        return true;
    }
    if (offset > r->len)
        return false; /* BadValue */
    uint32_t n = (uint32_t)(r->len - offset < length ? r->len - offset : length);
    unsigned unit = r->format / 8;
    if (!unit || n % unit || !(o = pd_reply_header(out, seq, msb, n + xw_pad4(n))))
        return false;
    o[1] = r->format;
    st32(o + 8, r->type, msb);
    st32(o + 12, (uint32_t)(r->len - offset - n), msb);
    st32(o + 16, n / unit, msb);
    memcpy(o + 32, r->data + offset, n);
    return true;
}

bool predict_answer(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                    const uint8_t *req, uint32_t size, uint16_t seq, bool msb, struct buf *out)
{
    if (cls->kind != MSG_REQUEST)
        return false;
    uint8_t *r;
    if (cls->ext) {
        uint32_t key_len;
        uint8_t *key = pd_handshake_key(pq, cls, req, size, &key_len);
        if (!key)
            key = pd_state_key(p, pq, cls, req, size, &key_len);
        bool ok = key && pd_answer_exchange(pd_exchange_find(p, EX_REQ, msb, key, key_len), seq, msb, out);
        free(key);
        return ok;
    }
    if (cls->major == XP_OP_LIST_FONTS || cls->major == XP_OP_LIST_FONTS_WITH_INFO) {
        return pd_answer_exchange(pd_exchange_find(p, EX_REQ, msb, req, size), seq, msb, out);
    }
    if (cls->major == XP_OP_GET_PROPERTY)
        return answer_get_property(p, req, size, seq, msb, out);
    if (cls->major == XP_OP_GET_KEYBOARD_MAPPING && p->kb.known && size == 8) {
        /* first keycode, count: out of range is BadValue */
        unsigned first = req[4], count = req[5], n = count * p->kb.per_keycode;
        if (first < p->kb.min || !count || first + count - 1 > p->kb.max || !(r = pd_reply_header(out, seq, msb, 4u * n)))
            return false;
        r[1] = p->kb.per_keycode;
        for (unsigned i = 0; i < n; i++)
            st32(r + 32 + 4 * i, p->kb.keysyms[(first - p->kb.min) * p->kb.per_keycode + i], msb);
        return true;
    }
    if (cls->major == XP_OP_GET_MODIFIER_MAPPING && p->kb.known && size == 4) {
        if (!(r = pd_reply_header(out, seq, msb, 8u * p->kb.per_modifier)))
            return false;
        r[1] = p->kb.per_modifier;
        memcpy(r + 32, p->kb.modifiers, 8u * p->kb.per_modifier);
        return true;
    }
    if (cls->major == XP_OP_QUERY_FONT) {
        const struct predict_font *f = size >= 8 ? font_find(pq, ld32(req + 4, msb)) : NULL;
        return f && pd_answer_exchange(pd_exchange_find(p, EX_FONT, msb, (const uint8_t *)f->name, f->len), seq, msb, out);
    }
    if (cls->major == XW_OP_QUERY_EXTENSION) {
        const uint8_t *body = NULL;
        const char *name;
        uint16_t len;
        if (cls->query_ext >= 0 && p->ext[cls->query_ext].known)
            body = p->ext[cls->query_ext].body;
        for (uint32_t i = 0; cls->query_ext < 0 && i < p->n_other_ext && request_name(req, size, msb, &name, &len); i++)
            if (p->other_ext[i].len == len && !memcmp(p->other_ext[i].name, name, len))
                body = p->other_ext[i].body;
        if (!body || !(r = pd_reply_header(out, seq, msb, 0)))
            return false;
        memcpy(r + 8, body, QE_BODY);
        return true;
    }
    if (cls->major == XP_OP_INTERN_ATOM) {
        const char *name;
        uint16_t len;
        if (!request_name(req, size, msb, &name, &len))
            return false;
        const struct atom *a = pd_atom_by_name(p, name, len);
        /* only-if-exists of a name no atom has: None, while the census is current */
        if (!a && (req[1] != 1 || !len || len > PREDICT_MAX_NAME || !pd_census_current(p) ||
                   pd_unnamed_may_be(p, name, len)))
            return false;
        if (!(r = pd_reply_header(out, seq, msb, 0)))
            return false;
        st32(r + 8, a ? a->atom : 0, msb);
        return true;
    }
    if (cls->major == XP_OP_ALLOC_COLOR || cls->major == XP_OP_QUERY_COLORS || cls->major == XP_OP_ALLOC_NAMED_COLOR ||
        cls->major == XP_OP_LOOKUP_COLOR)
        return pd_answer_color(p, cls->major, req, size, seq, msb, false, out);
    if (cls->major == XP_OP_GET_ATOM_NAME) {
        const struct atom *a = size >= 8 ? pd_atom_by_id(p, ld32(req + 4, msb)) : NULL;
        if (!a || !(r = pd_reply_header(out, seq, msb, a->len + xw_pad4(a->len))))
            return false;
        st16(r + 8, a->len, msb);
        memcpy(r + 32, a->name, a->len);
        return true;
    }
    return false;
}
