/* xstream.c -- per-connection X protocol state: sequence numbers, answers owed,
 * extension opcodes learnt from QueryExtension, and the hiding of extensions that
 * cannot cross a link. Runs once per message on both sides; must stay O(1) per message. */
#include "x11/xstream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xproto_tables.h"

/* Extensions that share memory or pass file descriptors: useless across a link, so
 * programs are told they are absent and fall back on the plain protocol. */
static const char *const hidden_extensions[] = {
    "MIT-SHM", "DRI2", "DRI3", "XFree86-DRI", "XVideo-MotionCompensation",
};

bool xstream_extension_hidden(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof hidden_extensions / sizeof *hidden_extensions; i++)
        if (strlen(hidden_extensions[i]) == len && memcmp(hidden_extensions[i], name, len) == 0)
            return true;
    return false;
}

static int find_extension(const uint8_t *name, size_t len)
{
    for (size_t i = 0; i < xp_n_extensions; i++)
        if (strlen(xp_extensions[i].xname) == len && memcmp(xp_extensions[i].xname, name, len) == 0)
            return (int)i;
    return -1;
}

void xstream_init(struct xstream *xs, bool hide_extensions)
{
    memset(xs, 0, sizeof *xs);
    xs->phase = XS_SETUP_REQUEST;
    xs->hide_extensions = hide_extensions;
    for (int i = 0; i < 128; i++)
        xs->ext_by_major[i] = -1;
}

void xstream_free(struct xstream *xs)
{
    free(xs->pending);
    xs->pending = NULL;
}

void xstream_on_setup_request(struct xstream *xs, bool msb)
{
    xs->msb = msb;
    xs->phase = XS_SETUP_REPLY;
}

long xstream_next_server_msg(const struct xstream *xs, const uint8_t *p, size_t n, struct xw_server_msg *m)
{
    if (xs->phase == XS_SETUP_REPLY) {
        long size = xw_setup_reply_size(p, n, xs->msb);
        if (size < 0)
            return size;
        if ((uint64_t)size > XS_MAX_SERVER_MSG_BYTES)
            return -EMSGSIZE;
        *m = (struct xw_server_msg){ .kind = XW_KIND_SETUP, .code = p[0], .size = (uint32_t)size };
        return (size_t)size <= n ? size : -EAGAIN;
    }
    if (xs->phase != XS_RUNNING)
        return -EBADMSG; /* nothing may follow a refused setup */
    return xw_next_server_msg(p, n, xs->msb, XS_MAX_SERVER_MSG_BYTES, m);
}

static const struct xp_extension *ext_of_major(const struct xstream *xs, uint8_t major)
{
    if (major < 128 || xs->ext_by_major[major - 128] < 0)
        return NULL;
    return &xp_extensions[xs->ext_by_major[major - 128]];
}

static void classify_request(const struct xstream *xs, uint8_t major, uint8_t minor, enum msg_kind kind,
                             struct msg_class *cls, bool *has_reply)
{
    *cls = (struct msg_class){ .kind = kind, .major = major, .minor = minor, .query_ext = -1 };
    *has_reply = false;
    if (major < 128) {
        cls->minor = 0;
        cls->name = xp_core_requests[major].name;
        *has_reply = xp_core_requests[major].has_reply;
        cls->pad_mask = xp_core_requests[major].pad_mask;
        return;
    }
    const struct xp_extension *e = ext_of_major(xs, major);
    if (!e)
        return;
    cls->ext = e->xname;
    if (minor < e->n_requests) {
        cls->name = e->requests[minor].name;
        *has_reply = e->requests[minor].has_reply;
        cls->pad_mask = e->requests[minor].pad_mask;
    }
}

static struct xs_pending *pending_at(struct xstream *xs, uint32_t i)
{
    return &xs->pending[(xs->pending_head + i) % xs->pending_cap];
}

static int pending_push(struct xstream *xs, struct xs_pending e)
{
    if (xs->pending_len == xs->pending_cap) {
        if (xs->pending_cap >= XS_MAX_PENDING || xs->owed_bytes + e.reply_bytes > XS_MAX_OWED_BYTES)
            return -ENOBUFS;
        uint32_t cap = xs->pending_cap ? xs->pending_cap * 2 : 16;
        struct xs_pending *n = malloc(cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        for (uint32_t i = 0; i < xs->pending_len; i++)
            n[i] = *pending_at(xs, i);
        free(xs->pending);
        xs->pending = n;
        xs->pending_cap = cap;
        xs->pending_head = 0;
    }
    *pending_at(xs, xs->pending_len++) = e;
    xs->owed_bytes += e.reply_bytes;
    return 0;
}

int xstream_on_request(struct xstream *xs, const uint8_t *msg, const struct xw_request *rq, struct msg_class *cls)
{
    bool has_reply;
    xs->seq_sent++;
    classify_request(xs, rq->major, rq->data, MSG_REQUEST, cls, &has_reply);
    if (xs->big_requests_major && rq->major == xs->big_requests_major && rq->data == 0)
        xs->big_requests = true; /* BigReqEnable: later requests may use the long length form */
    if (!has_reply)
        return 0;
    struct xs_pending e = { .seq = xs->seq_sent, .major = rq->major, .minor = rq->data, .query_ext = -1,
                            .reply_bytes = xs_reply_bytes(msg, rq, xs->msb) };
    if (xs->owed_bytes + e.reply_bytes > XS_MAX_OWED_BYTES)
        return -ENOBUFS;
    if (rq->major == XP_OP_QUERY_EXTENSION) {
        struct xp_query_extension_req v;
        if (!xp_query_extension_req_view(msg, rq->size, xs->msb, &v) || !v.name)
            return -EBADMSG;
        e.query_ext = (int16_t)find_extension(v.name, v.name_len);
        e.query_hidden = xstream_extension_hidden((const char *)v.name, v.name_len);
        cls->query_ext = e.query_ext;
    }
    return pending_push(xs, e);
}

/* Widens a 16-bit sequence number: the latest request sent that matches it. Clients
 * (Xlib, xcb) never run more than 65535 requests ahead of the server's answers. */
static uint32_t widen_seq(const struct xstream *xs, uint16_t seq16)
{
    uint32_t s = (xs->seq_sent & 0xffff0000u) | seq16;
    if (s > xs->seq_sent && s >= 0x10000)
        s -= 0x10000;
    return s;
}

/* Drops answered entries and returns the one this message answers, or NULL. Its reply
 * (or error) has come: it is owed nothing more. */
static struct xs_pending *pending_for(struct xstream *xs, uint32_t seq)
{
    while (xs->pending_len && pending_at(xs, 0)->seq < seq) {
        xs->owed_bytes -= pending_at(xs, 0)->reply_bytes;
        xs->pending_head = (xs->pending_head + 1) % xs->pending_cap;
        xs->pending_len--;
    }
    if (!xs->pending_len || pending_at(xs, 0)->seq != seq)
        return NULL;
    struct xs_pending *q = pending_at(xs, 0);
    xs->owed_bytes -= q->reply_bytes;
    q->reply_bytes = 0;
    return q;
}

uint32_t xs_reply_bytes(const uint8_t *msg, const struct xw_request *rq, bool msb)
{
    const uint8_t *body = msg + rq->header_size;
    uint32_t len = rq->size - rq->header_size;
    uint16_t width, height;
    if (rq->major != XP_OP_GET_IMAGE || !xp_peek16(body, len, XP_GET_IMAGE_BODY_WIDTH_AT, msb, &width) ||
        !xp_peek16(body, len, XP_GET_IMAGE_BODY_HEIGHT_AT, msb, &height))
        return XP_SERVER_MSG_SIZE;
    uint64_t bytes = XP_SERVER_MSG_SIZE + 4ull * width * height;
    return bytes < XS_MAX_OWED_BYTES ? (uint32_t)bytes : XS_MAX_OWED_BYTES;
}

bool xstream_replies_owed(const struct xstream *xs)
{
    if (!xs->pending_len)
        return false;
    const struct xs_pending *last = &xs->pending[(xs->pending_head + xs->pending_len - 1) % xs->pending_cap];
    /* Entries stay until a later message passes them; one at seq_done has had its reply,
     * unless its request may be answered by several (ListFontsWithInfo). */
    return last->seq > xs->seq_done || (last->seq == xs->seq_done && last->major == XP_OP_LIST_FONTS_WITH_INFO);
}

void xstream_learn_extension(struct xstream *xs, int16_t query_ext, const uint8_t reply[32])
{
    struct xp_query_extension_reply v;
    xp_query_extension_reply_view(reply, XP_QUERY_EXTENSION_REPLY_SIZE, false /* bytes only */, &v);
    uint8_t major = v.major_opcode;
    if (!v.present || major < 128 || query_ext < 0 || (size_t)query_ext >= xp_n_extensions)
        return;
    xs->ext_by_major[major - 128] = query_ext;
    xs->first_event[major - 128] = v.first_event;
    xs->first_error[major - 128] = v.first_error;
    if (strcmp(xp_extensions[query_ext].xname, "BIG-REQUESTS") == 0)
        xs->big_requests_major = major;
}

/* ListExtensions' reply without the hidden names: a list of counted strings after 32 bytes. */
int xstream_filter_list_extensions(const uint8_t *msg, uint32_t size, bool msb, struct buf *out)
{
    struct xp_list_extensions_reply v;
    if (!xp_list_extensions_reply_view(msg, size, msb, &v))
        return -EBADMSG;
    struct rd r = rd_make(v.rest, v.rest_len, msb);
    size_t start = out->len;
    if (buf_append(out, msg, XP_LIST_EXTENSIONS_REPLY_SIZE) < 0)
        return -ENOMEM;
    uint8_t count = v.names_len, kept = 0;
    for (unsigned i = 0; i < count; i++) {
        uint8_t len;
        const uint8_t *name;
        if (rd_u8(&r, &len) || rd_bytes(&r, &name, len))
            return -EBADMSG;
        if (xstream_extension_hidden((const char *)name, len))
            continue;
        if (buf_append(out, &len, 1) < 0 || buf_append(out, name, len) < 0)
            return -ENOMEM;
        kept++;
    }
    size_t body = out->len - start - XP_LIST_EXTENSIONS_REPLY_SIZE;
    static const uint8_t zeros[4];
    if (buf_append(out, zeros, xw_pad4(body)) < 0)
        return -ENOMEM;
    uint8_t *hdr = out->data + out->off + start; /* the server's bytes, but for the count and length */
    hdr[XP_LIST_EXTENSIONS_REPLY_NAMES_LEN_AT] = kept;
    xp_server_set_length(hdr, (uint32_t)((body + xw_pad4(body)) / 4), msb);
    return 0;
}

/* The extension an event or error code belongs to: the one whose first code (in
 * first[], by major opcode) is the greatest not above it. *rel: the code within it. */
static const struct xp_extension *ext_of_code(const struct xstream *xs, const uint8_t first[128], uint8_t code,
                                              unsigned *rel)
{
    int best = -1;
    for (int i = 0; i < 128; i++)
        if (xs->ext_by_major[i] >= 0 && first[i] && first[i] <= code && (best < 0 || first[i] > first[best]))
            best = i;
    if (best < 0)
        return NULL;
    *rel = code - first[best];
    return &xp_extensions[xs->ext_by_major[best]];
}

static void classify_event(const struct xstream *xs, const uint8_t *msg, const struct xw_server_msg *m,
                           struct msg_class *cls)
{
    *cls = (struct msg_class){ .kind = MSG_EVENT, .major = m->code, .query_ext = -1 };
    struct xp_generic_event_header g;
    if (m->code == XP_EV_GE_GENERIC && xp_generic_event_header_view(msg, m->size, xs->msb, &g)) {
        const struct xp_extension *e = ext_of_major(xs, g.extension);
        uint16_t evtype = g.event_type;
        cls->minor = g.extension;
        if (e) {
            cls->ext = e->xname;
            cls->name = evtype < e->n_xge_events ? e->xge_events[evtype] : NULL;
        }
        return;
    }
    if (m->code < XP_N_CORE_EVENTS && m->code < 64) {
        cls->name = xp_core_events[m->code];
        return;
    }
    unsigned rel;
    const struct xp_extension *e = ext_of_code(xs, xs->first_event, m->code, &rel);
    if (e) {
        cls->ext = e->xname;
        cls->name = rel < e->n_events ? e->events[rel] : NULL;
    }
}

static void classify_error(const struct xstream *xs, const struct xw_server_msg *m, struct msg_class *cls)
{
    *cls = (struct msg_class){ .kind = MSG_ERROR, .major = m->code, .query_ext = -1 };
    if (m->code < XP_N_CORE_ERRORS) {
        cls->name = xp_core_errors[m->code];
        return;
    }
    unsigned rel;
    const struct xp_extension *e = ext_of_code(xs, xs->first_error, m->code, &rel);
    if (e) {
        cls->ext = e->xname;
        cls->name = rel < e->n_errors ? e->errors[rel] : NULL;
    }
}

int xstream_on_server_msg(struct xstream *xs, const uint8_t *msg, const struct xw_server_msg *m,
                          struct buf *out, struct msg_class *cls)
{
    if (m->kind == XW_KIND_SETUP) {
        *cls = (struct msg_class){ .kind = MSG_SETUP, .name = "SetupReply", .query_ext = -1 };
        xs->phase = msg[XP_SETUP_STATUS_AT] == 1 /* Success */ ? XS_RUNNING : XS_FAILED;
        return buf_append(out, msg, m->size);
    }
    if (m->has_seq)
        xs->seq_done = widen_seq(xs, m->seq);
    if (m->kind == XW_KIND_EVENT) {
        classify_event(xs, msg, m, cls);
        return buf_append(out, msg, m->size);
    }
    if (m->kind == XW_KIND_ERROR) {
        classify_error(xs, m, cls);
        pending_for(xs, xs->seq_done);
        return buf_append(out, msg, m->size);
    }
    /* A reply: named after the request it answers. */
    struct xs_pending *q = pending_for(xs, xs->seq_done);
    bool has_reply;
    if (q)
        classify_request(xs, q->major, q->minor, MSG_REPLY, cls, &has_reply);
    else
        *cls = (struct msg_class){ .kind = MSG_REPLY, .query_ext = -1 };
    if (q && q->major == XP_OP_QUERY_EXTENSION) {
        cls->query_ext = q->query_ext;
        if (q->query_hidden && xs->hide_extensions) {
            size_t at = out->len;
            if (buf_append(out, msg, m->size) < 0)
                return -ENOMEM;
            memset(out->data + out->off + at + XP_QUERY_EXTENSION_REPLY_PRESENT_AT, 0, 4); /* present, major, first event, first error */
            return 0;
        }
        xstream_learn_extension(xs, q->query_ext, msg);
    } else if (q && q->major == XP_OP_LIST_EXTENSIONS && xs->hide_extensions) {
        return xstream_filter_list_extensions(msg, m->size, xs->msb, out);
    }
    return buf_append(out, msg, m->size);
}

const char *msg_kind_name(enum msg_kind k)
{
    static const char *const names[MSG_KIND_COUNT] = { "request", "reply", "event", "error", "setup" };
    return k < MSG_KIND_COUNT ? names[k] : "?";
}
