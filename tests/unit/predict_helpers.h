/* predict_helpers.h -- what the predictor's tests share: message classes, requests and
 * replies built by hand, a fact learnt, an answer asked. Its definitions are static. */
#ifndef TINCAN_PREDICT_HELPERS_H
#define TINCAN_PREDICT_HELPERS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "link/frame.h"
#include "proxy/predict.h"
#include "test.h"
#include "xproto_tables.h"


#define XKB_MAJOR 135

#define RENDER_MAJOR 139

#define ROOT 0x42u

static inline struct msg_class core(uint8_t major)
{
    return (struct msg_class){ .kind = MSG_REQUEST, .major = major, .query_ext = -1 };
}

static inline struct msg_class ext(const char *name, uint8_t major, uint8_t minor)
{
    return (struct msg_class){ .kind = MSG_REQUEST, .major = major, .minor = minor, .ext = name, .query_ext = -1 };
}

static inline struct msg_class reply_of(const struct msg_class *rq)
{
    struct msg_class c = *rq;
    c.kind = MSG_REPLY;
    return c;
}

/* A request: major, minor/data byte, then 32-bit words (little-endian). */
static uint32_t req_len;

static inline uint8_t *request(uint8_t *b, uint8_t major, uint8_t minor, const uint32_t *w, unsigned n)
{
    b[0] = major;
    b[1] = minor;
    st16(b + 2, (uint16_t)(1 + n), false);
    for (unsigned i = 0; i < n; i++)
        st32(b + 4 + 4 * i, w[i], false);
    req_len = 4 + 4 * n;
    return b;
}

/* A reply of 32 + extra bytes, its body filled with a pattern from tag. */
static inline uint8_t *make_reply(uint8_t *r, uint16_t seq, uint32_t extra, uint8_t tag)
{
    memset(r, 0, 32 + extra);
    r[0] = 1;
    r[1] = tag;
    st16(r + 2, seq, false);
    st32(r + 4, extra / 4, false);
    for (uint32_t i = 8; i < 32 + extra; i++)
        r[i] = (uint8_t)(tag + i);
    return r;
}

static inline int learn(struct predictor *p, struct buf *fact)
{
    int rc = predict_on_fact(p, buf_head(fact), fact->len);
    buf_clear(fact);
    return rc;
}

/* Answers req on connection pq; returns the answer's size (0: none) and keeps it in out. */
static inline size_t answer(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                     const uint8_t *req, uint32_t size, uint16_t seq, struct buf *out)
{
    buf_clear(out);
    return predict_answer(p, pq, cls, req, size, seq, false, out) ? out->len : 0;
}

/* OpenFont: fid, name length, name. */
static inline uint8_t *open_font(uint8_t *b, uint32_t fid, const char *name)
{
    size_t n = strlen(name);
    memset(b, 0, 12 + n + 4);
    b[0] = 45;
    st16(b + 2, (uint16_t)(3 + (n + 3) / 4), false);
    st32(b + 4, fid, false);
    st16(b + 8, (uint16_t)n, false);
    memcpy(b + 12, name, n);
    req_len = 12 + (uint32_t)(n + 3) / 4 * 4;
    return b;
}

/* GetProperty: delete, window, property, type, long-offset, long-length. */
static inline uint8_t *get_property(uint8_t *b, bool del, uint32_t window, uint32_t prop, uint32_t type, uint32_t off,
                             uint32_t len)
{
    uint32_t w[5] = { window, prop, type, off, len };
    return request(b, 20, del, w, 5);
}

/* A setup reply with one screen (root ROOT, default colormap 0x20) whose root visual 0x21 is
 * TrueColor, 8 bits per component. */
static inline size_t truecolor_setup(uint8_t *b)
{
    memset(b, 0, 40 + 40 + 8 + 24);
    b[0] = 1;
    b[28] = 1;                          /* screens */
    uint8_t *sc = b + 40;
    st32(sc, ROOT, false);
    st32(sc + 4, 0x20, false);
    st32(sc + 32, 0x21, false);         /* root visual */
    sc[39] = 1;                         /* depths */
    sc[40] = 24;
    st16(sc + 42, 1, false);
    uint8_t *v = sc + 48;
    st32(v, 0x21, false);
    v[4] = 4;                           /* TrueColor */
    v[5] = 8;
    st32(v + 8, 0xff0000, false);
    st32(v + 12, 0xff00, false);
    st32(v + 16, 0xff, false);
    return 40 + 40 + 8 + 24;
}

/* A request carrying a counted name at offset 12 (AllocNamedColor, LookupColor). */
static inline uint8_t *named(uint8_t *b, uint8_t major, uint32_t cmap, const char *name)
{
    size_t n = strlen(name);
    memset(b, 0, 12 + n + 4);
    b[0] = major;
    st16(b + 2, (uint16_t)(3 + (n + 3) / 4), false);
    st32(b + 4, cmap, false);
    st16(b + 8, (uint16_t)n, false);
    memcpy(b + 12, name, n);
    req_len = 12 + (uint32_t)(n + 3) / 4 * 4;
    return b;
}

/* InternAtom: only-if-exists, name. */
static inline uint8_t *intern(uint8_t *b, bool only_if_exists, const char *name)
{
    size_t n = strlen(name);
    memset(b, 0, 8 + n + 4);
    b[0] = 16;
    b[1] = only_if_exists;
    st16(b + 2, (uint16_t)(2 + (n + 3) / 4), false);
    st16(b + 4, (uint16_t)n, false);
    memcpy(b + 8, name, n);
    req_len = 8 + (uint32_t)(n + 3) / 4 * 4;
    return b;
}

/* The hash FACT_ATOM_HASHES carries, as docs/PROTOCOL.md 3.2 defines it. */
static inline uint16_t spec_hash16(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return (uint16_t)(h ^ h >> 16);
}

#endif
