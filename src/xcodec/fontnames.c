/* fontnames.c -- the reply model of font name lists (ListFonts): each XLFD name is coded
 * field by field against the name before it, since a server lists a font directory's
 * names sorted, so most names change one or two of the fourteen fields, and a changed
 * field often takes the value that followed the same old value earlier in the list
 * (iso8859-1, -2, ... again for each size). Three streams (operations, arguments, new
 * text) so that the zstd stage sees each kind of byte together. Per reply, no state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

#define XLFD_FIELDS 14
#define NAMES_MIN 8          /* fewer names gain nothing worth a model */
#define OP_END 0x00          /* the name is complete */
#define OP_OTHER 0xff        /* not an XLFD name: prefix of the previous name + new text */
enum { HOW_SUCC = 1, HOW_DICT = 2, HOW_NUM = 3, HOW_NEW = 4 };
#define FIND_LAST 1024      /* dictionary entries searched per changed field */
#define NUM_MAX 999999999u   /* decimal fields coded as differences: at most nine digits */

/* A distinct value of one field, by its place in the body (the same offsets at both ends). */
struct fn_value {
    uint32_t off;
    uint8_t len;
    int32_t succ; /* the value that last replaced this one in its field, or -1 */
};

struct fn_state {
    const uint8_t *base;         /* the body: values point into it */
    struct fn_value *v;
    uint32_t nv, cap;
    uint32_t *dict[XLFD_FIELDS]; /* per field: value ids in order of first use */
    uint32_t nd[XLFD_FIELDS], dcap[XLFD_FIELDS];
    uint32_t cur[XLFD_FIELDS];   /* the previous XLFD name's fields */
};

static void fn_free(struct fn_state *s)
{
    free(s->v);
    for (unsigned k = 0; k < XLFD_FIELDS; k++)
        free(s->dict[k]);
}

/* A new value of field k; it becomes the field's current one. -1 on -ENOMEM. */
static int64_t fn_add(struct fn_state *s, unsigned k, uint32_t off, uint8_t len)
{
    if (s->nv == s->cap) {
        uint32_t c = s->cap ? 2 * s->cap : 64;
        struct fn_value *v = realloc(s->v, c * sizeof *v);
        if (!v)
            return -1;
        s->v = v, s->cap = c;
    }
    if (s->nd[k] == s->dcap[k]) {
        uint32_t c = s->dcap[k] ? 2 * s->dcap[k] : 16;
        uint32_t *d = realloc(s->dict[k], c * sizeof *d);
        if (!d)
            return -1;
        s->dict[k] = d, s->dcap[k] = c;
    }
    s->v[s->nv] = (struct fn_value){ off, len, -1 };
    s->dict[k][s->nd[k]++] = s->nv;
    return s->nv++;
}

/* Both ends start with the empty value as every field's value 0. */
static int fn_init(struct fn_state *s, const uint8_t *base)
{
    memset(s, 0, sizeof *s);
    s->base = base;
    for (unsigned k = 0; k < XLFD_FIELDS; k++) {
        int64_t id = fn_add(s, k, 0, 0);
        if (id < 0)
            return -ENOMEM;
        s->cur[k] = (uint32_t)id;
    }
    return 0;
}

/* Field k takes value id: the old value's successor becomes id. */
static void fn_set(struct fn_state *s, unsigned k, uint32_t id)
{
    s->v[s->cur[k]].succ = (int32_t)id;
    s->cur[k] = id;
}

/* A canonical decimal (no sign, no leading zero, at most nine digits), or -1. */
static int64_t fn_number(const uint8_t *p, unsigned len)
{
    if (len == 0 || len > 9 || (p[0] == '0' && len > 1))
        return -1;
    int64_t n = 0;
    for (unsigned i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        n = n * 10 + (p[i] - '0');
    }
    return n;
}

/* The fields of an XLFD name: 14 dash-led fields, the first dash at its start. */
static bool fn_split(const uint8_t *name, unsigned len, uint32_t start[XLFD_FIELDS], uint8_t flen[XLFD_FIELDS])
{
    if (len == 0 || name[0] != '-')
        return false;
    unsigned k = 0;
    for (unsigned i = 0; i < len; i++) {
        if (name[i] != '-')
            continue;
        if (k == XLFD_FIELDS)
            return false;
        if (k)
            flen[k - 1] = (uint8_t)(i - start[k - 1]);
        start[k++] = i + 1;
    }
    if (k != XLFD_FIELDS)
        return false;
    flen[k - 1] = (uint8_t)(len - start[k - 1]);
    return true;
}

/* The list's names: printable, non-empty, then at most 3 zero bytes. */
static bool names_fit(const uint8_t *body, uint32_t blen, uint32_t *count)
{
    uint32_t o = 0, n = 0;
    while (o < blen && body[o] != 0) {
        uint8_t l = body[o];
        if (o + 1u + l > blen)
            return false;
        for (uint32_t i = o + 1; i <= o + l; i++)
            if (body[i] < 0x20 || body[i] > 0x7e)
                return false;
        o += 1u + l, n++;
    }
    if (blen - o > 3 || n < NAMES_MIN)
        return false;
    for (; o < blen; o++)
        if (body[o])
            return false;
    *count = n;
    return true;
}

struct fn_out {
    struct buf ops, args, text;
};

/* A value among the field's latest FIND_LAST (a bound on the sender's work; an older one
 * is sent again as new). */
static int64_t fn_find(const struct fn_state *s, unsigned k, const uint8_t *p, uint8_t len)
{
    uint32_t lo = s->nd[k] > FIND_LAST ? s->nd[k] - FIND_LAST : 0;
    for (uint32_t i = s->nd[k]; i-- > lo;) {
        const struct fn_value *v = &s->v[s->dict[k][i]];
        if (v->len == len && memcmp(s->base + v->off, p, len) == 0)
            return i;
    }
    return -1;
}

static int put_u8(struct buf *b, uint8_t v) { return buf_append(b, &v, 1); }

/* One changed field: its operation byte, arguments and text. */
static int field_encode(struct fn_state *s, struct fn_out *o, unsigned k, uint32_t off, uint8_t len)
{
    const uint8_t *p = s->base + off;
    const struct fn_value *old = &s->v[s->cur[k]];
    uint8_t op = (uint8_t)((k + 1) << 3);
    if (old->succ >= 0) {
        const struct fn_value *n = &s->v[old->succ];
        if (n->len == len && memcmp(s->base + n->off, p, len) == 0) {
            fn_set(s, k, (uint32_t)old->succ);
            return put_u8(&o->ops, op | HOW_SUCC);
        }
    }
    int64_t i = fn_find(s, k, p, len);
    if (i >= 0) {
        fn_set(s, k, s->dict[k][i]);
        return put_u8(&o->ops, op | HOW_DICT) < 0 || buf_put_varint(&o->args, (uint64_t)i) < 0 ? -ENOMEM : 0;
    }
    int64_t a = fn_number(s->base + old->off, old->len), b = fn_number(p, len);
    int rc;
    if (a >= 0 && b >= 0)
        rc = put_u8(&o->ops, op | HOW_NUM) < 0 ||
             buf_put_varint(&o->args, (uint64_t)(b >= a ? 2 * (b - a) : 2 * (a - b) - 1)) < 0 ? -ENOMEM : 0;
    else
        rc = put_u8(&o->ops, op | HOW_NEW) < 0 || put_u8(&o->args, len) < 0 || buf_append(&o->text, p, len) < 0
                 ? -ENOMEM : 0;
    if (rc < 0)
        return rc;
    int64_t id = fn_add(s, k, off, len);
    if (id < 0)
        return -ENOMEM;
    fn_set(s, k, (uint32_t)id);
    return 0;
}

static int name_encode(struct fn_state *s, struct fn_out *o, uint32_t off, uint8_t len, uint32_t prev_off,
                       uint8_t prev_len)
{
    const uint8_t *name = s->base + off;
    uint32_t start[XLFD_FIELDS];
    uint8_t flen[XLFD_FIELDS];
    if (!fn_split(name, len, start, flen)) {
        const uint8_t *prev = s->base + prev_off;
        unsigned p = 0;
        while (p < len && p < prev_len && name[p] == prev[p])
            p++;
        uint8_t a[2] = { (uint8_t)p, (uint8_t)(len - p) };
        if (put_u8(&o->ops, OP_OTHER) < 0 || buf_append(&o->args, a, 2) < 0 ||
            buf_append(&o->text, name + p, len - p) < 0)
            return -ENOMEM;
        return 0;
    }
    for (unsigned k = 0; k < XLFD_FIELDS; k++) {
        const struct fn_value *v = &s->v[s->cur[k]];
        if (v->len == flen[k] && memcmp(s->base + v->off, name + start[k], flen[k]) == 0)
            continue;
        int rc = field_encode(s, o, k, off + start[k], flen[k]);
        if (rc < 0)
            return rc;
    }
    return put_u8(&o->ops, OP_END);
}

int xc_names_encode(const uint8_t *body, uint32_t blen, struct buf *out)
{
    uint32_t count;
    if (!names_fit(body, blen, &count))
        return 1;
    struct fn_state s;
    struct fn_out o = { 0 };
    int rc = fn_init(&s, body);
    uint32_t off = 0, prev_off = 0;
    uint8_t prev_len = 0;
    for (uint32_t i = 0; i < count && rc == 0; i++) {
        uint8_t len = body[off];
        rc = name_encode(&s, &o, off + 1, len, prev_off, prev_len);
        prev_off = off + 1, prev_len = len;
        off += 1u + len;
    }
    if (rc == 0 && (buf_put_varint(out, count) < 0 || buf_put_varint(out, o.ops.len) < 0 ||
                    buf_put_varint(out, o.args.len) < 0 || buf_put_varint(out, o.text.len) < 0 ||
                    buf_append(out, buf_head(&o.ops), o.ops.len) < 0 ||
                    buf_append(out, buf_head(&o.args), o.args.len) < 0 ||
                    buf_append(out, buf_head(&o.text), o.text.len) < 0))
        rc = -ENOMEM;
    fn_free(&s);
    buf_free(&o.ops), buf_free(&o.args), buf_free(&o.text);
    return rc;
}

/* Decoding: the streams are read through their own readers; each name is assembled in
 * the body in place, and new values then point at it, as the encoder's at its input. */
struct fn_in {
    struct rd ops, args, text;
};

static int varint_max(struct rd *r, uint64_t max, uint64_t *v)
{
    return rd_varint(r, v) < 0 || *v > max ? -EBADMSG : 0;
}

/* What a changed field becomes: an existing value (*id) or new text (*p, *len, *id = -1). */
struct fn_change {
    int64_t id;
    const uint8_t *p;
    uint8_t len;
    uint8_t num[9];
};

static int field_decode(const struct fn_state *s, struct fn_in *in, unsigned k, unsigned how, struct fn_change *c)
{
    const struct fn_value *old = &s->v[s->cur[k]];
    uint64_t a;
    c->id = -1;
    if (how == HOW_SUCC) {
        c->id = old->succ;
        return c->id < 0 ? -EBADMSG : 0;
    }
    if (how == HOW_DICT) {
        if (varint_max(&in->args, s->nd[k] - 1u, &a) < 0)
            return -EBADMSG;
        c->id = s->dict[k][a];
        return 0;
    }
    if (how == HOW_NEW)
        return rd_u8(&in->args, &c->len) < 0 || rd_bytes(&in->text, &c->p, c->len) < 0 ? -EBADMSG : 0;
    int64_t n = fn_number(s->base + old->off, old->len);
    if (how != HOW_NUM || n < 0 || varint_max(&in->args, 2ull * NUM_MAX, &a) < 0)
        return -EBADMSG;
    n = a & 1 ? n - (int64_t)((a + 1) / 2) : n + (int64_t)(a / 2);
    if (n < 0 || n > NUM_MAX)
        return -EBADMSG;
    c->len = 0;
    do
        c->num[8 - c->len++] = (uint8_t)('0' + n % 10);
    while ((n /= 10) > 0);
    c->p = c->num + 9 - c->len;
    return 0;
}

/* One XLFD name, its operations up to OP_END, into dst[o + 1 ...] (o: its length byte). */
static int xlfd_decode(struct fn_state *s, struct fn_in *in, uint8_t *dst, uint32_t o, uint32_t end)
{
    struct fn_change c[XLFD_FIELDS];
    bool changed[XLFD_FIELDS] = { false };
    int next_k = 0;
    for (;;) {
        uint8_t op;
        if (rd_u8(&in->ops, &op) < 0)
            return -EBADMSG;
        if (op == OP_END)
            break;
        int k = (op >> 3) - 1;
        if (k < next_k || k >= XLFD_FIELDS || field_decode(s, in, (unsigned)k, op & 7, &c[k]) < 0)
            return -EBADMSG;
        changed[k] = true, next_k = k + 1;
    }
    uint32_t w = o + 1, at[XLFD_FIELDS];
    for (unsigned k = 0; k < XLFD_FIELDS; k++) {
        const struct fn_value *v = &s->v[changed[k] && c[k].id >= 0 ? (uint32_t)c[k].id : s->cur[k]];
        const uint8_t *p = changed[k] && c[k].id < 0 ? c[k].p : s->base + v->off;
        uint8_t len = changed[k] && c[k].id < 0 ? c[k].len : v->len;
        if (w + 1u + len > end || w + 1u + len - (o + 1) > 255)
            return -EBADMSG;
        dst[w++] = '-';
        memmove(dst + w, p, len); /* an old value lies before o; new text in the input */
        at[k] = w, w += len;
    }
    dst[o] = (uint8_t)(w - (o + 1));
    for (unsigned k = 0; k < XLFD_FIELDS; k++) {
        if (!changed[k])
            continue;
        int64_t id = c[k].id;
        if (id < 0 && (id = fn_add(s, k, at[k], c[k].len)) < 0)
            return -ENOMEM;
        fn_set(s, k, (uint32_t)id);
    }
    return 0;
}

/* A name that is not XLFD: a prefix of the previous name, then new text. */
static int other_decode(struct fn_in *in, uint8_t *dst, uint32_t o, uint32_t end, uint32_t prev_off,
                        uint8_t prev_len)
{
    uint8_t a[2];
    const uint8_t *p, *t;
    if (rd_bytes(&in->args, &p, 2) < 0)
        return -EBADMSG;
    memcpy(a, p, 2);
    if (a[0] > prev_len || a[0] + a[1] > 255 || a[0] + a[1] == 0 || o + 1u + a[0] + a[1] > end ||
        rd_bytes(&in->text, &t, a[1]) < 0)
        return -EBADMSG;
    dst[o] = (uint8_t)(a[0] + a[1]);
    memmove(dst + o + 1, dst + prev_off, a[0]);
    memcpy(dst + o + 1 + a[0], t, a[1]);
    return 0;
}

static int streams_read(struct rd *r, struct fn_in *in, uint32_t *count, uint32_t blen)
{
    uint64_t n, len[3];
    if (varint_max(r, blen, &n) < 0)
        return -EBADMSG;
    for (unsigned i = 0; i < 3; i++)
        if (varint_max(r, rd_left(r), &len[i]) < 0)
            return -EBADMSG;
    const uint8_t *p[3];
    for (unsigned i = 0; i < 3; i++)
        if (rd_bytes(r, &p[i], len[i]) < 0)
            return -EBADMSG;
    in->ops = rd_make(p[0], len[0], false);
    in->args = rd_make(p[1], len[1], false);
    in->text = rd_make(p[2], len[2], false);
    *count = (uint32_t)n;
    return 0;
}

int xc_names_decode(uint8_t *dst, uint32_t blen, struct rd *r)
{
    struct fn_in in;
    uint32_t count;
    if (streams_read(r, &in, &count, blen) < 0 || count < NAMES_MIN)
        return -EBADMSG;
    struct fn_state s;
    int rc = fn_init(&s, dst);
    uint32_t o = 0, prev_off = 0;
    uint8_t prev_len = 0;
    for (uint32_t i = 0; i < count && rc == 0; i++) {
        uint8_t op;
        if (rd_u8(&in.ops, &op) < 0) {
            rc = -EBADMSG;
            break;
        }
        if (op == OP_OTHER)
            rc = other_decode(&in, dst, o, blen, prev_off, prev_len);
        else {
            in.ops.pos--; /* the name's first operation */
            rc = xlfd_decode(&s, &in, dst, o, blen);
        }
        if (rc == 0)
            prev_off = o + 1, prev_len = dst[o], o += 1u + dst[o];
    }
    fn_free(&s);
    if (rc < 0)
        return rc;
    if (blen - o > 3 || rd_left(&in.ops) || rd_left(&in.args) || rd_left(&in.text))
        return -EBADMSG;
    memset(dst + o, 0, blen - o);
    return 0;
}
