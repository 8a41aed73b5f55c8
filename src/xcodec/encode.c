/* encode.c -- the sending half: picks the closest recent message of the same class,
 * codes the head as 16-bit word deltas against it and the body by the cheapest mode.
 * Runs once per X message on the sender; keep it linear in the message size. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

struct xenc {
    struct xc_model m;
    struct buf scratch; /* a large body's code, to prefix its size */
    struct xc_budget *budget;
    enum { HEAVY_UNASKED, HEAVY_HELD, HEAVY_REFUSED } heavy;
};

int xenc_new(struct xenc **out, enum xc_dir dir, bool msb)
{
    struct xenc *e = calloc(1, sizeof *e);
    if (!e)
        return -ENOMEM;
    xc_model_init(&e->m, dir, msb);
    *out = e;
    return 0;
}

void xenc_set_budget(struct xenc *e, struct xc_budget *b) { e->budget = b; }

void xenc_set_pixcache(struct xenc *e, struct xc_pixcache *c) { e->m.pc = c; }
void xenc_set_tilecache(struct xenc *e, struct xc_tilecache *c) { e->m.tc = e->m.dir == XC_REQUESTS ? c : NULL; }
void xenc_set_lossy(struct xenc *e, int quality) { e->m.lossy_q = quality >= 1 && quality <= 100 ? quality : 0; }
void xenc_set_link_rate(struct xenc *e, uint64_t rate_Bps) { e->m.bigimg_level = xc_bigimg_level(rate_Bps); }
void xenc_set_store(struct xenc *e, size_t cap) { e->m.store_cap = cap < XC_STORE_MAX ? cap : XC_STORE_MAX; }

size_t xc_heavy_max(enum xc_dir dir)
{
    return dir == XC_REQUESTS ? xc_pix_size() + XC_IMGS_BUDGET + XC_IMGS * 64u + (size_t)XC_TILE_RING * (XC_TILE_BYTES + 8)
                              : xc_pix_size() + (size_t)XC_FONTTABS * XC_FONTTAB_MAX * 12u;
}

/* Whether this body model may keep memory for the channel: reserved once, or refused for good. */
static bool heavy_allowed(struct xenc *e, const struct xc_body_model *bm)
{
    if (bm->kind != XC_BM_IMAGE && bm->kind != XC_BM_GLYPHS && bm->kind != XC_BM_REPLY && bm->kind != XC_BM_ICONS)
        return true;
    if (e->heavy == HEAVY_UNASKED && e->budget) {
        size_t need = xc_heavy_max(e->m.dir);
        e->heavy = e->budget->used + need <= e->budget->cap ? HEAVY_HELD : HEAVY_REFUSED;
        if (e->heavy == HEAVY_HELD)
            e->budget->used += need;
    }
    return e->heavy != HEAVY_REFUSED;
}

void xenc_free(struct xenc *e)
{
    if (!e)
        return;
    if (e->heavy == HEAVY_HELD && e->budget)
        e->budget->used -= xc_heavy_max(e->m.dir);
    xc_model_free(&e->m);
    buf_free(&e->scratch);
    free(e);
}

/* Whether msg is a well-formed message whose length fields the decoder can rebuild. */
static bool well_formed(const struct xc_model *m, const uint8_t *msg, size_t len, bool *big)
{
    struct xp_request_header rq;
    struct xp_server_header sm;
    *big = false;
    if (len < 4 || len % 4)
        return false;
    if (m->dir == XC_REQUESTS) {
        xp_request_header_view(msg, len, m->msb, &rq);
        if (rq.length)
            return len == 4u * rq.length;
        *big = true;
        return len >= XP_BIG_REQUEST_HEADER_SIZE && (uint64_t)rq.big_length * 4 == len;
    }
    if (len < XP_SERVER_MSG_SIZE || !xp_server_header_view(msg, len, m->msb, &sm))
        return false;
    if (sm.code == XP_REPLY || (sm.code & 0x7f) == XP_EV_GE_GENERIC)
        return (uint64_t)sm.length * 4 + XP_SERVER_MSG_SIZE == len;
    return len == XP_SERVER_MSG_SIZE;
}

static int escape(const uint8_t *msg, size_t len, struct buf *out)
{
    uint8_t hdr[2] = { msg[0], XC_SEL_ESC };
    if (buf_append(out, hdr, 2) < 0 || buf_put_varint(out, len) < 0 || buf_append(out, msg + 1, len - 1) < 0)
        return -ENOMEM;
    return 0;
}

static bool is_exact(const struct xc_shape *s, const uint8_t *msg, size_t len, const struct xc_slot *ref)
{
    if (ref->len != len)
        return false;
    if (s->has_seq)
        return memcmp(msg, ref->p, XP_SEQUENCE_AT) == 0 &&
               memcmp(msg + XP_SEQUENCE_AT + 2, ref->p + XP_SEQUENCE_AT + 2, len - XP_SEQUENCE_AT - 2) == 0;
    return memcmp(msg, ref->p, len) == 0;
}

/* Cost estimate of coding msg against ref (NULL: zeros): changed head words, byte 1,
 * length, and whether the body would have to be sent. */
static unsigned ref_cost(const struct xc_model *m, const struct xc_shape *s, const uint8_t *msg, uint32_t len,
                         const struct xc_slot *ref)
{
    const uint8_t *rp = ref ? ref->p : NULL;
    uint32_t rlen = ref ? ref->len : 0;
    unsigned cost = 0;
    for (unsigned k = 0; k < s->head / 2; k++)
        if (!xc_word_implied(s, m->dir, k) && xc_word(msg, len, k, m->msb) != (rp ? xc_word(rp, rlen, k, m->msb) : 0))
            cost++;
    if (!rp || rp[1] != msg[1])
        cost++;
    if (rlen != len)
        cost += 2;
    else if (len > s->head && memcmp(msg + s->head, rp + s->head, len - s->head) != 0)
        cost += 3;
    return cost;
}

static int put_head(const struct xc_model *m, const struct xc_shape *s, const uint8_t *msg, uint32_t len,
                    const struct xc_slot *ref, struct buf *out)
{
    uint8_t mask[32] = { 0 }, deltas[64 * 3];
    uint16_t cur[32];
    unsigned n = 0, nd = 0;
    for (unsigned k = 0; k < s->head / 2; k++) {
        cur[k] = xc_word(msg, len, k, m->msb);
        if (xc_word_implied(s, m->dir, k))
            continue;
        uint16_t w = cur[k], r = xc_predict(m, ref ? ref->p : NULL, ref ? ref->len : 0, msg[0], cur, k);
        if (w != r) {
            mask[n / 8] |= (uint8_t)(1u << (n % 8));
            uint64_t z = xc_zz16((uint16_t)(w - r));
            do { /* LEB128, as rd_varint reads it */
                deltas[nd++] = (uint8_t)(z & 0x7f) | (z > 0x7f ? 0x80 : 0);
                z >>= 7;
            } while (z);
        }
        n++;
    }
    if (buf_append(out, mask, (n + 7) / 8) < 0 || buf_append(out, deltas, nd) < 0)
        return -ENOMEM;
    return 0;
}

/* Sparse changes against a reference body of the same length: count, then (skip, delta) words. */
static int put_delta(const uint8_t *body, const uint8_t *rbody, uint32_t blen, bool msb, struct buf *out)
{
    uint32_t nw = blen / 2, changed = 0, last = 0;
    for (uint32_t k = 0; k < nw; k++)
        changed += ld16(body + 2 * k, msb) != ld16(rbody + 2 * k, msb);
    if (buf_put_varint(out, changed) < 0)
        return -ENOMEM;
    for (uint32_t k = 0; k < nw; k++) {
        uint16_t w = ld16(body + 2 * k, msb), r = ld16(rbody + 2 * k, msb);
        if (w == r)
            continue;
        if (buf_put_varint(out, k - last) < 0 || buf_put_varint(out, xc_zz16((uint16_t)(w - r))) < 0)
            return -ENOMEM;
        last = k + 1;
    }
    return 0;
}

static uint32_t changed_words(const uint8_t *a, const uint8_t *b, uint32_t blen, uint32_t limit)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k + 1 < blen && n <= limit; k += 2)
        n += a[k] != b[k] || a[k + 1] != b[k + 1];
    return n;
}

/* A MODEL body's code into e->scratch: 0 when the model applies and its code may be
 * used, 1 when not, or -ENOMEM. */
static int model_code(struct xenc *e, const struct xc_shape *s, const uint8_t *msg, uint32_t blen, bool big,
                      const struct xc_slot *ref)
{
    const uint8_t *fixed = msg + (big ? 4 : 0);
    if (!s->body || !xc_body_fits(s->body, fixed, blen, e->m.msb) || !heavy_allowed(e, s->body))
        return 1;
    buf_clear(&e->scratch);
    int rc = s->body->kind == XC_BM_REPLY
                 ? xc_reply_encode(&e->m.fonts, msg + s->head, blen, e->m.msb, &e->scratch)
                 : xc_body_encode(&e->m, s->body, fixed, msg + s->head, blen, e->m.msb,
                                 xc_ref_last_elem(&e->m, s, ref), &e->scratch);
    if (rc == 0 && blen > XC_BIG_BODY && e->scratch.len < xc_body_min_code(s->body, blen))
        rc = 1; /* the decoder would refuse so short a code */
    if (rc != 0)
        e->m.lossy_last = false; /* not sent as coded */
    return rc;
}

static int put_body(struct xenc *e, const struct xc_shape *s, const uint8_t *msg, uint32_t len, bool big,
                    const struct xc_slot *ref, struct buf *out)
{
    const uint8_t *body = msg + s->head;
    uint32_t blen = len - s->head;
    bool same_len = ref && ref->len == len;
    uint8_t mode;
    int rc = 1;
    if (same_len && memcmp(body, ref->p + s->head, blen) == 0)
        mode = XC_BODY_SAME;
    else if ((rc = model_code(e, s, msg, blen, big, ref)) == 0)
        mode = XC_BODY_MODEL;
    else if (rc < 0)
        return rc;
    else if (same_len && changed_words(body, ref->p + s->head, blen, blen / 8) < blen / 8)
        mode = XC_BODY_DELTA;
    else
        mode = XC_BODY_RAW;

    if (mode == XC_BODY_SAME)
        return buf_append(out, &mode, 1);
    if (mode == XC_BODY_RAW) {
        unsigned trim = 0;
        while (trim < 3 && trim < blen && body[blen - 1 - trim] == 0)
            trim++;
        mode |= (uint8_t)(trim << 2);
        if (buf_append(out, &mode, 1) < 0 || buf_append(out, body, blen - trim) < 0)
            return -ENOMEM;
        return 0;
    }
    if (buf_append(out, &mode, 1) < 0)
        return -ENOMEM;
    if (mode == XC_BODY_DELTA) {
        buf_clear(&e->scratch);
        if (put_delta(body, ref->p + s->head, blen, e->m.msb, &e->scratch) < 0)
            return -ENOMEM;
    }
    /* Large bodies carry their code's size. */
    if (blen > XC_BIG_BODY && buf_put_varint(out, e->scratch.len) < 0)
        return -ENOMEM;
    if (mode == XC_BODY_MODEL && xc_reply_is_fonttab(s, buf_head(&e->scratch)) &&
        xc_fonttab_remember(&e->m.fonts, body, blen, e->m.msb) < 0)
        return -ENOMEM;
    if (mode == XC_BODY_MODEL && s->body->kind == XC_BM_TRAPS && xc_traps_keep(&e->m, body, blen) < 0)
        return -ENOMEM;
    return buf_append(out, buf_head(&e->scratch), e->scratch.len);
}

static int encode(struct xenc *e, const uint8_t *msg, uint32_t len, bool big, struct buf *out)
{
    struct xc_model *m = &e->m;
    uint8_t b0 = msg[0], minor = m->dir == XC_REQUESTS && b0 >= 128 ? msg[1] : 0;
    struct xc_shape s;
    xc_shape_of(m, b0, minor, len, big, &s);

    /* The closest of the class's references; an exact one ends the search. */
    const struct xc_slot *ref = NULL;
    unsigned slot = XC_NOREF, best = ~0u;
    bool exact = false;
    for (unsigned i = 0; i < XC_K; i++) {
        const struct xc_slot *r = xc_ref(m, s.cls, i);
        if (!r)
            continue;
        if (is_exact(&s, msg, len, r)) {
            ref = r, slot = i, exact = true;
            break;
        }
        unsigned c = ref_cost(m, &s, msg, len, r);
        if (c < best)
            best = c, ref = r, slot = i;
    }

    int named = m->dir == XC_REQUESTS && !exact ? xc_named_index(msg, len, m->msb) : -1;
    if (named >= 0) { /* byte0, NAMED, the minor of an extension's request, the index */
        uint8_t rec[4] = { b0, XC_SEL_NAMED, minor, (uint8_t)named };
        if (b0 < 128)
            rec[2] = (uint8_t)named;
        if (buf_append(out, rec, b0 < 128 ? 3 : 4) < 0)
            return -ENOMEM;
        return xc_remember(m, s.cls, msg, len) < 0 ? -ENOMEM : 0;
    }

    uint8_t hdr[4];
    size_t nh = 0;
    uint8_t sel = (uint8_t)slot;
    if (exact)
        sel |= XC_SEL_EXACT;
    else {
        if (ref && ref->len == len)
            sel |= XC_SEL_SAMELEN;
        bool minor_known = m->dir == XC_REQUESTS && b0 >= 128;
        if (!minor_known && msg[1] != (ref ? ref->p[1] : 0))
            sel |= XC_SEL_B1;
        if (big)
            sel |= XC_SEL_BIG;
    }
    hdr[nh++] = b0;
    hdr[nh++] = sel;
    if (m->dir == XC_REQUESTS && b0 >= 128)
        hdr[nh++] = minor;
    if (buf_append(out, hdr, nh) < 0)
        return -ENOMEM;
    uint16_t seq = 0;
    if (s.has_seq) {
        struct xp_server_header h;
        seq = xp_server_header_view(msg, len, m->msb, &h) ? h.sequence : 0;
        if (buf_put_varint(out, xc_zz16((uint16_t)(seq - m->last_seq))) < 0)
            return -ENOMEM;
    }
    if (!exact) {
        if (!(sel & XC_SEL_SAMELEN) && buf_put_varint(out, len / 4) < 0)
            return -ENOMEM;
        if ((sel & XC_SEL_B1) && buf_append(out, msg + 1, 1) < 0)
            return -ENOMEM;
        int rc = put_head(m, &s, msg, len, ref, out);
        if (rc == 0 && len > s.head)
            rc = put_body(e, &s, msg, len, big, ref, out);
        if (rc < 0)
            return rc;
        /* A lossy body is not what the receiver holds: nothing is coded against it. */
        if (!m->lossy_last && xc_remember(m, s.cls, msg, len) < 0)
            return -ENOMEM;
        m->lossy_last = false;
    }
    if (s.has_seq)
        m->last_seq = seq;
    return 0;
}

int xenc_message(struct xenc *e, const uint8_t *msg, size_t len, struct buf *out)
{
    struct xc_model *m = &e->m;
    if (len == 0)
        return -EINVAL;
    if (len > (m->dir == XC_REQUESTS ? XC_MAX_REQUEST : XC_MAX_SERVER_MSG))
        return -EMSGSIZE;
    size_t mark = out->len;
    bool big;
    int rc;
    if (m->dir == XC_SERVER && !m->setup_done) {
        m->setup_done = true; /* the setup reply crosses verbatim */
        rc = escape(msg, len, out);
    } else if (!well_formed(m, msg, len, &big))
        rc = escape(msg, len, out);
    else
        rc = encode(e, msg, (uint32_t)len, big, out);
    if (rc < 0)
        out->len = mark;
    return rc;
}
