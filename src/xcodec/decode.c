/* decode.c -- the receiving half: rebuilds each message exactly from its record and the
 * same model state as the sender's. Reads only through rd_*, allocates a message only
 * once the input holds enough to produce it, and gives up on the first bad byte. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

struct xdec {
    struct xc_model m;
    bool broken; /* a corrupt record was seen: the stream cannot be resynchronised */
};

int xdec_new(struct xdec **out, enum xc_dir dir, bool msb)
{
    struct xdec *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    xc_model_init(&d->m, dir, msb);
    *out = d;
    return 0;
}

void xdec_set_pixcache(struct xdec *d, struct xc_pixcache *c) { d->m.pc = c; }
void xdec_set_tilecache(struct xdec *d, struct xc_tilecache *c) { d->m.tc = d->m.dir == XC_REQUESTS ? c : NULL; }
void xdec_set_store(struct xdec *d, size_t cap) { d->m.store_cap = cap < XC_STORE_MAX ? cap : XC_STORE_MAX; }

void xdec_setup_seen(struct xdec *d)
{
    d->m.setup_done = true;
}

void xdec_free(struct xdec *d)
{
    if (!d)
        return;
    xc_model_free(&d->m);
    free(d);
}

static int get_varint32(struct rd *r, uint32_t max, uint32_t *v)
{
    uint64_t x;
    int rc = rd_varint(r, &x);
    if (rc < 0)
        return rc;
    if (x > max)
        return -EBADMSG;
    *v = (uint32_t)x;
    return 0;
}

static int dec_escape(struct xc_model *m, uint8_t b0, struct rd *r, struct buf *out)
{
    uint32_t len;
    const uint8_t *p;
    int rc = get_varint32(r, m->dir == XC_REQUESTS ? XC_MAX_REQUEST : XC_MAX_SERVER_MSG, &len);
    if (rc < 0)
        return rc;
    if (len == 0)
        return -EBADMSG;
    if ((rc = rd_bytes(r, &p, len - 1)) < 0)
        return rc;
    uint8_t *dst = buf_append_space(out, len);
    if (!dst)
        return -ENOMEM;
    dst[0] = b0;
    memcpy(dst + 1, p, len - 1);
    m->setup_done = true;
    return 0;
}

/* The length of a message, from its record, checked against what its kind allows. */
static int dec_length(const struct xc_model *m, uint8_t b0, uint8_t sel, const struct xc_slot *ref,
                      struct rd *r, uint32_t *len)
{
    if (sel & XC_SEL_SAMELEN) {
        if (!ref)
            return -EBADMSG;
        *len = ref->len;
    } else {
        uint32_t words;
        int rc = get_varint32(r, (m->dir == XC_REQUESTS ? XC_MAX_REQUEST : XC_MAX_SERVER_MSG) / 4, &words);
        if (rc < 0)
            return rc;
        *len = words * 4;
    }
    if (m->dir == XC_REQUESTS) {
        if (sel & XC_SEL_BIG)
            return *len >= 8 ? 0 : -EBADMSG;
        return *len >= 4 && *len / 4 <= 0xffff ? 0 : -EBADMSG;
    }
    if (sel & XC_SEL_BIG)
        return -EBADMSG;
    if (b0 == XP_REPLY || (b0 & 0x7f) == XP_EV_GE_GENERIC)
        return *len >= 32 ? 0 : -EBADMSG;
    return *len == 32 ? 0 : -EBADMSG;
}

/* The head, into hd (at most 36 bytes): reference words plus the coded deltas, then the
 * implied fields. */
static int dec_head(const struct xc_model *m, const struct xc_shape *s, uint8_t b0, uint8_t byte1, uint16_t seq,
                    uint32_t len, const struct xc_slot *ref, struct rd *r, uint8_t *hd)
{
    unsigned nw = s->head / 2, n = 0;
    for (unsigned k = 0; k < nw; k++)
        n += !xc_word_implied(s, m->dir, k);
    const uint8_t *mask;
    int rc = rd_bytes(r, &mask, (n + 7) / 8);
    if (rc < 0)
        return rc;
    n = 0;
    uint16_t cur[32] = { 0 };
    for (unsigned k = 0; k < nw; k++) {
        if (xc_word_implied(s, m->dir, k))
            continue; /* implied words (0-3) are never used by a prediction */
        uint16_t w = xc_predict(m, ref ? ref->p : NULL, ref ? ref->len : 0, b0, cur, k);
        if (mask[n / 8] >> (n % 8) & 1) {
            uint64_t z;
            if ((rc = rd_varint(r, &z)) < 0)
                return rc;
            if (z > 0xffff)
                return -EBADMSG;
            w = (uint16_t)(w + xc_unzz16(z));
        }
        n++;
        cur[k] = w;
        st16(hd + 2 * k, w, m->msb);
    }
    if (n % 8 && mask[n / 8] >> (n % 8)) /* unused mask bits must be clear */
        return -EBADMSG;
    hd[0] = b0;
    hd[1] = byte1;
    if (m->dir == XC_REQUESTS) {
        xp_request_set_length(hd, len / 4, s->len32, m->msb);
    } else {
        if (s->has_seq)
            xp_server_set_sequence(hd, seq, m->msb);
        if (s->len32)
            xp_server_set_length(hd, (len - XP_SERVER_MSG_SIZE) / 4, m->msb);
    }
    return 0;
}

static int dec_delta(uint8_t *body, uint32_t blen, bool msb, struct rd *r)
{
    uint32_t n, nw = blen / 2, at = 0;
    int rc = get_varint32(r, nw, &n);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint32_t skip;
        uint64_t z;
        if ((rc = get_varint32(r, nw, &skip)) < 0 || (rc = rd_varint(r, &z)) < 0)
            break;
        if (skip >= nw - at || z > 0xffff)
            return -EBADMSG;
        at += skip;
        st16(body + 2 * at, (uint16_t)(ld16(body + 2 * at, msb) + xc_unzz16(z)), msb);
        at++;
    }
    return rc;
}

/* A NAMED record after its sel: [minor] index. */
static int dec_named(struct xc_model *m, uint8_t b0, struct rd *r, struct buf *out)
{
    uint8_t minor = 0, index;
    int rc;
    if ((b0 >= 128 && (rc = rd_u8(r, &minor)) < 0) || (rc = rd_u8(r, &index)) < 0)
        return rc;
    size_t at = out->len;
    uint32_t len;
    if ((rc = xc_named_build(b0, minor, index, m->msb, out, &len)) < 0)
        return rc;
    return xc_remember(m, xc_class_of(m, b0, minor), buf_head(out) + at, len);
}

/* One record; -EAGAIN when the input ends inside it (nothing is kept then). */
static int dec_one(struct xdec *d, struct rd *r, struct buf *out)
{
    struct xc_model *m = &d->m;
    uint8_t b0, sel, minor = 0, byte1, mode = 0;
    int rc;
    if ((rc = rd_u8(r, &b0)) < 0 || (rc = rd_u8(r, &sel)) < 0)
        return rc;
    if (sel == XC_SEL_ESC)
        return dec_escape(m, b0, r, out);
    if (m->dir == XC_SERVER && !m->setup_done)
        return -EBADMSG; /* the setup reply always crosses verbatim */
    if (sel == XC_SEL_NAMED && m->dir == XC_REQUESTS)
        return dec_named(m, b0, r, out);
    if (sel & 0x80)
        return -EBADMSG;
    if (m->dir == XC_REQUESTS && b0 >= 128 && (rc = rd_u8(r, &minor)) < 0)
        return rc;
    unsigned slot = sel & XC_SEL_SLOT, cls = xc_class_of(m, b0, minor);
    const struct xc_slot *ref = slot == XC_NOREF ? NULL : xc_ref(m, cls, slot);
    if (slot != XC_NOREF && !ref)
        return -EBADMSG;
    struct xc_shape s;
    bool has_seq = m->dir == XC_SERVER && (b0 & 0x7f) != XP_EV_KEYMAP_NOTIFY;
    uint16_t seq = 0;
    if (has_seq) {
        uint64_t z;
        if ((rc = rd_varint(r, &z)) < 0)
            return rc;
        if (z > 0xffff)
            return -EBADMSG;
        seq = (uint16_t)(m->last_seq + xc_unzz16(z));
    }

    if (sel & XC_SEL_EXACT) {
        if (!ref || (sel & ~(XC_SEL_EXACT | XC_SEL_SLOT)))
            return -EBADMSG;
        uint8_t *dst = buf_append_space(out, ref->len);
        if (!dst)
            return -ENOMEM;
        memcpy(dst, ref->p, ref->len);
        if (has_seq)
            xp_server_set_sequence(dst, seq, m->msb);
        if (has_seq)
            m->last_seq = seq;
        return 0;
    }

    uint32_t len;
    bool big = sel & XC_SEL_BIG;
    if ((rc = dec_length(m, b0, sel, ref, r, &len)) < 0)
        return rc;
    xc_shape_of(m, b0, minor, len, big, &s);
    if (sel & XC_SEL_B1) {
        if (m->dir == XC_REQUESTS && b0 >= 128)
            return -EBADMSG;
        if ((rc = rd_u8(r, &byte1)) < 0)
            return rc;
    } else
        byte1 = m->dir == XC_REQUESTS && b0 >= 128 ? minor : ref ? ref->p[1] : 0;

    uint8_t hd[40] = { 0 };
    if ((rc = dec_head(m, &s, b0, byte1, seq, len, ref, r, hd)) < 0)
        return rc;

    uint32_t blen = len - s.head, enc_len = 0;
    const uint8_t *raw = NULL;
    struct rd sub = *r;
    if (blen) {
        if ((rc = rd_u8(r, &mode)) < 0)
            return rc;
        unsigned kind = mode & 3, trim = mode >> 2 & 3;
        if ((kind != XC_BODY_RAW && (mode & ~3u)) || mode & 0xf0)
            return -EBADMSG;
        if ((kind == XC_BODY_SAME || kind == XC_BODY_DELTA) && !(ref && ref->len == len))
            return -EBADMSG;
        if (kind == XC_BODY_MODEL && !(s.body && xc_body_fits(s.body, hd + (big ? 4 : 0), blen, m->msb)))
            return -EBADMSG;
        if (kind == XC_BODY_RAW) {
            if (trim > blen)
                return -EBADMSG;
            if ((rc = rd_bytes(r, &raw, blen - trim)) < 0)
                return rc;
        } else if ((kind == XC_BODY_DELTA || kind == XC_BODY_MODEL) && blen > XC_BIG_BODY) {
            /* Large bodies carry their code's size: wait for all of it before allocating,
             * and refuse sizes that cannot make this many bytes. */
            const uint8_t *p;
            if ((rc = get_varint32(r, XC_MAX_SERVER_MSG + (XC_MAX_SERVER_MSG >> 4), &enc_len)) < 0)
                return rc;
            if (kind == XC_BODY_MODEL && enc_len < xc_body_min_code(s.body, blen))
                return -EBADMSG;
            if ((rc = rd_bytes(r, &p, enc_len)) < 0)
                return rc;
            sub = rd_make(p, enc_len, m->msb);
        } else
            sub = *r;
    }

    uint8_t *dst = buf_append_space(out, len);
    if (!dst)
        return -ENOMEM;
    memcpy(dst, hd, s.head);
    uint8_t *body = dst + s.head;
    switch (blen ? mode & 3 : XC_BODY_SAME) {
    case XC_BODY_RAW:
        memcpy(body, raw, blen - (mode >> 2 & 3));
        memset(body + blen - (mode >> 2 & 3), 0, mode >> 2 & 3);
        break;
    case XC_BODY_SAME:
        if (blen)
            memcpy(body, ref->p + s.head, blen);
        break;
    case XC_BODY_DELTA:
        memcpy(body, ref->p + s.head, blen);
        rc = dec_delta(body, blen, m->msb, &sub);
        break;
    case XC_BODY_MODEL:
        if (s.body->kind == XC_BM_REPLY) {
            uint8_t first = rd_left(&sub) ? sub.p[sub.pos] : 0;
            rc = xc_reply_decode(&m->fonts, body, blen, m->msb, &sub);
            if (rc == 0 && xc_reply_is_fonttab(&s, &first))
                rc = xc_fonttab_remember(&m->fonts, body, blen, m->msb);
        } else {
            rc = xc_body_decode(m, s.body, dst + (big ? 4 : 0), body, blen, m->msb, xc_ref_last_elem(m, &s, ref), &sub);
            if (rc == 0 && s.body->kind == XC_BM_TRAPS)
                rc = xc_traps_keep(m, body, blen);
        }
        break;
    }
    if (rc < 0 || (blen && (mode & 3) != XC_BODY_RAW && (mode & 3) != XC_BODY_SAME)) {
        if (rc < 0)
            return enc_len && rc == -EAGAIN ? -EBADMSG : rc;
        if (enc_len) {
            if (rd_left(&sub) != 0)
                return -EBADMSG; /* the code's size must be exact */
        } else
            r->pos = sub.pos;
    }
    if (!m->lossy_last && (rc = xc_remember(m, s.cls, dst, len)) < 0)
        return rc;
    m->lossy_last = false;
    if (has_seq)
        m->last_seq = seq;
    return 0;
}

long xdec_feed(struct xdec *d, const uint8_t *in, size_t n, struct buf *out)
{
    if (d->broken)
        return -EBADMSG;
    size_t used = 0;
    while (used < n) {
        size_t mark = out->len;
        struct rd r = rd_make(in + used, n - used, d->m.msb);
        int rc = dec_one(d, &r, out);
        if (rc == -EAGAIN) {
            out->len = mark;
            break;
        }
        if (rc < 0) {
            out->len = mark;
            if (rc == -EBADMSG)
                d->broken = true;
            return rc;
        }
        used += r.pos;
    }
    return (long)used;
}
