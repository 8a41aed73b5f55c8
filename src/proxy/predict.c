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
    /* The four start alike: the window, then the property (RotateProperties: a count), and
     * are read through DeleteProperty's view, the shortest: a request cut short still makes
     * the property unknown. GetProperty's delete flag is its header's data byte. */
    struct xp_delete_property_req v;
    struct xp_request_header h;
    if (!xp_delete_property_req_view(req, size, msb, &v) || !xp_request_header_view(req, size, msb, &h) ||
        !prop_find(p, v.window, 0))
        return; /* not a root window we know */
    if (cls->major == XP_OP_ROTATE_PROPERTIES) {
        pd_prop_set(p, v.window, 0, PROP_UNKNOWN, 0, 0, NULL, 0);
        return;
    }
    if (cls->major == XP_OP_GET_PROPERTY && !h.data)
        return; /* without delete */
    if (predict_property_known(p, v.window, v.property))
        pd_prop_set(p, v.window, v.property, PROP_UNKNOWN, 0, 0, NULL, 0);
}

/* The index of a selection's entry, or -1. */
static int selection_find(const struct predictor *p, uint32_t atom)
{
    for (uint32_t i = 0; i < p->n_sels; i++)
        if (p->sels[i].atom == atom)
            return (int)i;
    return -1;
}

/* ... made (owner None, not set here) if there is none and there is room. */
static int selection_add(struct predictor *p, uint32_t atom)
{
    int i = selection_find(p, atom);
    if (i >= 0 || p->n_sels == PREDICT_MAX_SELECTIONS)
        return i;
    p->sels[p->n_sels].atom = atom;
    p->sels[p->n_sels].owner = 0;
    p->sels[p->n_sels].set_here = false;
    return (int)p->n_sels++;
}

void pd_selection_told(struct predictor *p, uint32_t selection, uint32_t owner)
{
    int i = selection_add(p, selection);
    if (i >= 0)
        p->sels[i].owner = owner;
}

/* A client of the session sets a selection's owner: what the display side tells of it may
 * be from before the server took that request, and the client would not see its own
 * change: that selection's owner is asked of the server for the rest of the session. */
static void track_selection_set(struct predictor *p, const uint8_t *req, uint32_t size, bool msb)
{
    struct xp_set_selection_owner_req v;
    int i = xp_set_selection_owner_req_view(req, size, msb, &v) ? selection_add(p, v.selection) : -1;
    if (i >= 0)
        p->sels[i].set_here = true;
    else
        p->sels_full = true;
}

static bool answer_selection_owner(const struct predictor *p, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                                   struct buf *out)
{
    struct xp_get_selection_owner_req v;
    int i = !p->sels_full && size == XP_GET_SELECTION_OWNER_REQ_SIZE && xp_get_selection_owner_req_view(req, size, msb, &v)
                ? selection_find(p, v.selection) : -1;
    uint8_t *r;
    if (i < 0 || p->sels[i].set_here || !(r = pd_reply_space(out, 0)))
        return false;
    xp_get_selection_owner_reply_put(r, XP_GET_SELECTION_OWNER_REPLY_SIZE, msb,
                                     &(struct xp_get_selection_owner_reply){ .sequence = seq, .owner = p->sels[i].owner });
    return true;
}

void predict_track(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                   uint32_t size, bool msb)
{
    if (cls->kind != MSG_REQUEST || size < 4)
        return;
    /* The keyboard's mappings change: not known until the display side says them again. */
    if ((!cls->ext && (cls->major == XP_OP_CHANGE_KEYBOARD_MAPPING || cls->major == XP_OP_SET_MODIFIER_MAPPING)) ||
        (cls->ext && !strcmp(cls->ext, "XKEYBOARD") && (cls->minor == XP_XKB_OP_SET_MAP || cls->minor == XP_XKB_OP_GET_KBD_BY_NAME)))
        pd_forget_keyboard(p);
    if (!cls->ext && (cls->major == XP_OP_CHANGE_PROPERTY || cls->major == XP_OP_DELETE_PROPERTY ||
                      cls->major == XP_OP_GET_PROPERTY || cls->major == XP_OP_ROTATE_PROPERTIES))
        track_property_change(p, cls, req, size, msb);
    if (!cls->ext && cls->major == XP_OP_SET_SELECTION_OWNER)
        track_selection_set(p, req, size, msb);
    if (cls->ext && pd_state_changing(p, cls, req, size))
        pd_forget_state(p, pd_find_extension((const uint8_t *)cls->ext, strlen(cls->ext)), 0);
    /* The core requests that change the keyboard's XKEYBOARD state (its controls, map and
     * names), and XTEST's fake input (its state): a client sees its own change. */
    if ((!cls->ext && (cls->major == XP_OP_CHANGE_KEYBOARD_MAPPING || cls->major == XP_OP_SET_MODIFIER_MAPPING ||
                       cls->major == XP_OP_CHANGE_KEYBOARD_CONTROL)) ||
        (cls->ext && !strcmp(cls->ext, "XTEST") && cls->minor == XP_XTEST_OP_FAKE_INPUT))
        pd_forget_state(p, pd_find_extension((const uint8_t *)"XKEYBOARD", 9), 0);
    if (cls->ext && cls->major >= 128 && !strcmp(cls->ext, "XKEYBOARD"))
        pd_track_xkb_flags(pq, cls, req, size, msb);
    if (cls->ext && cls->major >= 128) {
        if (!pq->hist && !pq->hist_lost && !(pq->hist = calloc(128, sizeof *pq->hist)))
            pq->hist_lost = true; /* no histories: no handshake answers on this connection */
        if (!pq->hist)
            return;
        struct predict_history *h = &pq->hist[cls->major - 128];
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
    struct xp_close_font_req close;
    struct xp_open_font_req open;
    if (cls->major == XP_OP_CLOSE_FONT && xp_close_font_req_view(req, size, msb, &close)) {
        font_forget(pq, close.font);
    } else if (cls->major == XP_OP_OPEN_FONT && xp_open_font_req_view(req, size, msb, &open)) {
        uint32_t fid = open.fid;
        uint16_t len = open.name_len;
        font_forget(pq, fid);
        if (!open.name || pq->n_fonts >= PREDICT_MAX_FONTS)
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
        memcpy(name, open.name, len);
        pq->fonts[pq->n_fonts++] = (struct predict_font){ fid, len, name };
    }
}

void predict_ask(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                 uint32_t seq, bool msb)
{
    if (cls->kind != MSG_REQUEST)
        return;
    struct predict_question q = { .seq = seq, .major = cls->major };
    const struct predict_font *f;
    union {
        struct xp_query_font_req font;
        struct xp_alloc_color_req color;
        struct xp_get_atom_name_req name;
        struct xp_intern_atom_req atom;
    } v;
    if (cls->ext) {
        if (pd_xkb_get_map(cls))
            return; /* the keyboard may have changed since: only the display side's facts are kept */
        if (!(q.name = (char *)pd_handshake_key(pq, cls, req, size, &q.name_len)))
            return;
        q.major = cls->major;
    } else if (cls->major == XP_OP_QUERY_FONT) {
        if (!xp_query_font_req_view(req, size, msb, &v.font) || !(f = font_find(pq, v.font.font)) ||
            !(q.name = malloc(f->len ? f->len : 1)))
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
        if (!xp_alloc_color_req_view(req, size, msb, &v.color) || !(q.name = malloc(3 * sizeof(uint16_t))))
            return;
        q.atom = v.color.cmap;
        q.name_len = 3 * sizeof(uint16_t);
        memcpy(q.name, (const uint16_t[3]){ v.color.red, v.color.green, v.color.blue }, q.name_len); /* as asked */
    } else if (cls->major == XP_OP_GET_ATOM_NAME) {
        if (!xp_get_atom_name_req_view(req, size, msb, &v.name))
            return;
        q.atom = v.name.atom;
    } else {
        if (!xp_intern_atom_req_view(req, size, msb, &v.atom) || !v.atom.name || v.atom.name_len > PREDICT_MAX_NAME ||
            !(q.name = malloc(v.atom.name_len ? v.atom.name_len : 1)))
            return;
        memcpy(q.name, v.atom.name, v.atom.name_len);
        q.name_len = v.atom.name_len;
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
    if (cls->kind != MSG_REPLY || size < XP_SERVER_MSG_SIZE)
        return;
    if (cls->major == XP_OP_QUERY_EXTENSION && cls->query_ext >= 0 && size == XP_QUERY_EXTENSION_REPLY_SIZE) {
        p->ext[cls->query_ext].known = true;
        memcpy(p->ext[cls->query_ext].body, reply + XP_REPLY_HEADER_SIZE, QE_BODY);
        return;
    }
    if (!pq->len || pq->q[pq->head].seq != seq || pq->q[pq->head].major != cls->major)
        return;
    struct predict_question *q = &pq->q[pq->head];
    union {
        struct xp_server_header info;
        struct xp_intern_atom_reply atom;
        struct xp_get_atom_name_reply name;
    } v;
    if (q->major == XP_OP_LIST_FONTS_WITH_INFO) {
        /* One reply per font, then one with an empty name: learnt once all are in. */
        if (q->acc.len + size > PREDICT_MAX_REPLY || buf_append(&q->acc, reply, size) < 0) {
            question_drop(pq);
            return;
        }
        if (!xp_server_header_view(reply, size, msb, &v.info) || v.info.data /* name_len */)
            return;
        pd_exchange_add(p, EX_REQ, msb, (const uint8_t *)q->name, q->name_len, buf_head(&q->acc), q->acc.len);
    } else if (q->major >= 128 || q->major == XP_OP_LIST_FONTS) {
        pd_exchange_add(p, EX_REQ, msb, (const uint8_t *)q->name, q->name_len, reply, size);
    } else if (q->major == XP_OP_QUERY_FONT) {
        pd_exchange_add(p, EX_FONT, msb, (const uint8_t *)q->name, q->name_len, reply, size);
    } else if (q->major == XP_OP_ALLOC_COLOR) {
        pd_learn_alloc_color(p, q, reply, msb);
    } else if (q->major == XP_OP_INTERN_ATOM) {
        if (xp_intern_atom_reply_view(reply, size, msb, &v.atom))
            pd_atom_add(p, v.atom.atom, q->name, q->name_len);
    } else if (xp_get_atom_name_reply_view(reply, size, msb, &v.name) && v.name.name) {
        pd_atom_add(p, q->atom, (const char *)v.name.name, v.name.name_len);
    }
    question_drop(pq);
}

uint8_t *pd_reply_space(struct buf *out, size_t extra)
{
    uint8_t *r = buf_append_space(out, XP_SERVER_MSG_SIZE + extra);
    if (r)
        memset(r, 0, XP_SERVER_MSG_SIZE + extra);
    return r;
}

/* GetProperty on a root window whose property is known, computed as the protocol says
 * (values are kept in the display side's byte order, LSB: MSB clients are not answered). */
static bool answer_get_property(const struct predictor *p, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                                struct buf *out)
{
    struct xp_get_property_req q;
    if (size != XP_GET_PROPERTY_REQ_SIZE || msb || !xp_get_property_req_view(req, size, msb, &q) || q.delete)
        return false;
    uint64_t offset = 4ull * q.long_offset, length = 4ull * q.long_length;
    const struct root_prop *r = prop_find(p, q.window, q.property);
    if (!r && !(r = prop_find(p, q.window, 0)))
        return false;
    /* Invalid atoms are errors: answer only for atoms known to exist. */
    if (r->state == PROP_UNKNOWN || !pd_atom_by_id(p, q.property) || (q.type && !pd_atom_by_id(p, q.type)))
        return false;
    uint8_t *o;
    struct xp_get_property_reply a = { .sequence = seq };
    if (r->state == PROP_ABSENT || r->property != q.property) {
        if (r->state != PROP_ABSENT || !(o = pd_reply_space(out, 0)))
            return false;
        return xp_get_property_reply_put(o, XP_GET_PROPERTY_REPLY_SIZE, msb, &a); /* type None, format 0, nothing after */
    }
    if (q.type && q.type != r->type) {
        if (!(o = pd_reply_space(out, 0)))
            return false;
        a.format = r->format;
        a.type = r->type;
        /* The X.Org server gives the size in format units here, not bytes as the protocol
         * document says: answer as the server does (its reply is what we are checked against). */
        a.bytes_after = r->format >= 8 ? r->len / (r->format / 8u) : r->len;
        return xp_get_property_reply_put(o, XP_GET_PROPERTY_REPLY_SIZE, msb, &a);
    }
    if (offset > r->len)
        return false; /* BadValue */
    uint32_t n = (uint32_t)(r->len - offset < length ? r->len - offset : length);
    unsigned unit = r->format / 8;
    if (!unit || n % unit || !(o = pd_reply_space(out, n + xw_pad4(n))))
        return false;
    a.length = (n + (uint32_t)xw_pad4(n)) / 4;
    a.format = r->format;
    a.type = r->type;
    a.bytes_after = (uint32_t)(r->len - offset - n);
    a.value_len = n / unit;
    xp_get_property_reply_put(o, XP_GET_PROPERTY_REPLY_SIZE, msb, &a);
    memcpy(o + XP_GET_PROPERTY_REPLY_SIZE, r->data + offset, n);
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
        if (!ok && cls->major >= 128 && cls->minor == XP_XKB_OP_PER_CLIENT_FLAGS && !strcmp(cls->ext, "XKEYBOARD"))
            ok = pd_answer_xkb_flags(p, pq, cls, req, size, seq, msb, out);
        return ok;
    }
    if (cls->major == XP_OP_LIST_FONTS || cls->major == XP_OP_LIST_FONTS_WITH_INFO || cls->major == XP_OP_LIST_EXTENSIONS) {
        return pd_answer_exchange(pd_exchange_find(p, EX_REQ, msb, req, size), seq, msb, out);
    }
    if (cls->major == XP_OP_GET_PROPERTY)
        return answer_get_property(p, req, size, seq, msb, out);
    if (cls->major == XP_OP_GET_SELECTION_OWNER)
        return answer_selection_owner(p, req, size, seq, msb, out);
    union {
        struct xp_get_keyboard_mapping_req keys;
        struct xp_query_font_req font;
        struct xp_intern_atom_req atom;
        struct xp_get_atom_name_req name;
    } q;
    if (cls->major == XP_OP_GET_KEYBOARD_MAPPING && p->kb.known && size == XP_GET_KEYBOARD_MAPPING_REQ_SIZE &&
        xp_get_keyboard_mapping_req_view(req, size, msb, &q.keys)) {
        /* first keycode, count: out of range is BadValue */
        unsigned first = q.keys.first_keycode, count = q.keys.count, n = count * p->kb.per_keycode;
        if (first < p->kb.min || !count || first + count - 1 > p->kb.max || !(r = pd_reply_space(out, 4u * n)))
            return false;
        xp_get_keyboard_mapping_reply_put(r, XP_GET_KEYBOARD_MAPPING_REPLY_SIZE, msb, &(struct xp_get_keyboard_mapping_reply){
            .sequence = seq, .length = n, .keysyms_per_keycode = p->kb.per_keycode });
        for (unsigned i = 0; i < n; i++)
            xp_card32_put(r + XP_GET_KEYBOARD_MAPPING_REPLY_SIZE, 4u * n, i,
                          p->kb.keysyms[(first - p->kb.min) * p->kb.per_keycode + i], msb);
        return true;
    }
    if (cls->major == XP_OP_GET_MODIFIER_MAPPING && p->kb.known && size == XP_GET_MODIFIER_MAPPING_REQ_SIZE) {
        if (!(r = pd_reply_space(out, 8u * p->kb.per_modifier)))
            return false;
        xp_get_modifier_mapping_reply_put(r, XP_GET_MODIFIER_MAPPING_REPLY_SIZE, msb, &(struct xp_get_modifier_mapping_reply){
            .sequence = seq, .length = 2u * p->kb.per_modifier, .keycodes_per_modifier = p->kb.per_modifier });
        memcpy(r + XP_GET_MODIFIER_MAPPING_REPLY_SIZE, p->kb.modifiers, 8u * p->kb.per_modifier);
        return true;
    }
    if (cls->major == XP_OP_QUERY_FONT) {
        const struct predict_font *f = xp_query_font_req_view(req, size, msb, &q.font) ? font_find(pq, q.font.font) : NULL;
        return f && pd_answer_exchange(pd_exchange_find(p, EX_FONT, msb, (const uint8_t *)f->name, f->len), seq, msb, out);
    }
    if (cls->major == XP_OP_QUERY_EXTENSION) {
        const uint8_t *body = NULL;
        if (cls->query_ext >= 0 && p->ext[cls->query_ext].known)
            body = p->ext[cls->query_ext].body;
        struct xp_query_extension_req ext;
        bool named = xp_query_extension_req_view(req, size, msb, &ext) && ext.name;
        for (uint32_t i = 0; cls->query_ext < 0 && named && i < p->n_other_ext; i++)
            if (p->other_ext[i].len == ext.name_len && !memcmp(p->other_ext[i].name, ext.name, ext.name_len))
                body = p->other_ext[i].body;
        if (!body || !(r = pd_reply_space(out, 0)))
            return false;
        xp_query_extension_reply_put(r, XP_QUERY_EXTENSION_REPLY_SIZE, msb, &(struct xp_query_extension_reply){
            .sequence = seq });
        memcpy(r + XP_REPLY_HEADER_SIZE, body, QE_BODY); /* present, opcodes, padding as the server sent them */
        return true;
    }
    if (cls->major == XP_OP_INTERN_ATOM) {
        const char *name;
        uint16_t len;
        if (!xp_intern_atom_req_view(req, size, msb, &q.atom) || !q.atom.name)
            return false;
        name = (const char *)q.atom.name;
        len = q.atom.name_len;
        const struct atom *a = pd_atom_by_name(p, name, len);
        /* only-if-exists of a name no atom has: None, while the census is current */
        if (!a && (q.atom.only_if_exists != 1 || !len || len > PREDICT_MAX_NAME || !pd_census_current(p) ||
                   pd_unnamed_may_be(p, name, len)))
            return false;
        if (!(r = pd_reply_space(out, 0)))
            return false;
        return xp_intern_atom_reply_put(r, XP_INTERN_ATOM_REPLY_SIZE, msb,
                                        &(struct xp_intern_atom_reply){ .sequence = seq, .atom = a ? a->atom : 0 });
    }
    if (cls->major == XP_OP_ALLOC_COLOR || cls->major == XP_OP_QUERY_COLORS || cls->major == XP_OP_ALLOC_NAMED_COLOR ||
        cls->major == XP_OP_LOOKUP_COLOR)
        return pd_answer_color(p, cls->major, req, size, seq, msb, false, out);
    if (cls->major == XP_OP_GET_ATOM_NAME) {
        const struct atom *a = xp_get_atom_name_req_view(req, size, msb, &q.name) ? pd_atom_by_id(p, q.name.atom) : NULL;
        if (!a || !(r = pd_reply_space(out, a->len + xw_pad4(a->len))))
            return false;
        xp_get_atom_name_reply_put(r, XP_GET_ATOM_NAME_REPLY_SIZE, msb, &(struct xp_get_atom_name_reply){
            .sequence = seq, .length = (uint32_t)(a->len + xw_pad4(a->len)) / 4, .name_len = a->len });
        memcpy(r + XP_GET_ATOM_NAME_REPLY_SIZE, a->name, a->len);
        return true;
    }
    return false;
}
