/* xstream.h -- what tincan knows about one X connection, on either side of the link:
 * byte order, setup phase, sequence numbers, BIG-REQUESTS, the extensions the server
 * reported and the requests still owed a reply. Both halves run the same code over the
 * same bytes, so both reach the same state. Extensions that cannot cross a link are hidden
 * by rewriting the server's answers (when hide_extensions is set, on the display side). */
#ifndef TINCAN_XSTREAM_H
#define TINCAN_XSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "x11/xwire.h"

struct xp_extension;

/* What a message is, for accounting. ext is NULL for the core protocol. */
enum msg_kind { MSG_REQUEST, MSG_REPLY, MSG_EVENT, MSG_ERROR, MSG_SETUP, MSG_KIND_COUNT };
struct msg_class {
    enum msg_kind kind;
    uint8_t major, minor;          /* requests and replies: opcodes; events, errors: code */
    const char *ext;               /* extension name or NULL */
    const char *name;              /* message name or NULL when unknown */
    int16_t query_ext;             /* QueryExtension request or reply: xp_extensions index; else -1 */
    uint32_t pad_mask;             /* requests: bit i set when byte i (of the first 32) is padding (xcb-proto) */
};

enum xs_phase { XS_SETUP_REQUEST, XS_SETUP_REPLY, XS_RUNNING, XS_FAILED };

/* A request that will be answered: kept until the server's answer for it arrives. */
struct xs_pending {
    uint32_t seq;
    uint8_t major, minor;
    int16_t query_ext;             /* QueryExtension: index into xp_extensions, -1 unknown name */
    bool query_hidden;             /* QueryExtension of an extension we hide */
    uint32_t reply_bytes;          /* what its reply may take, at most (xs_reply_bytes); 0 once answered */
};

#define XS_MAX_PENDING 65536u         /* a client may have this many answers outstanding */
#define XS_MAX_OWED_BYTES (1u << 30)  /* ... and replies of at most this many bytes in all: an X
                                       * server drops a client that asks for GBs it never reads */
#define XS_MAX_REQUEST_BYTES (16u << 20)   /* BIG-REQUESTS' own ceiling is 16 MiB */
#define XS_MAX_SERVER_MSG_BYTES (256u << 20)

struct xstream {
    enum xs_phase phase;
    bool msb;
    bool big_requests;
    bool hide_extensions;          /* rewrite QueryExtension/ListExtensions answers */
    uint32_t seq_sent;             /* sequence number of the last request parsed */
    uint32_t seq_done;             /* latest sequence number the server has reported */
    uint8_t big_requests_major;    /* 0 until learnt */
    int16_t ext_by_major[128];     /* major opcode - 128 -> xp_extensions index, -1 none */
    uint8_t first_event[128], first_error[128]; /* per major - 128 */
    struct xs_pending *pending;    /* ring buffer */
    uint32_t pending_head, pending_len, pending_cap;
    uint64_t owed_bytes;           /* the pending requests' reply_bytes, summed */
};

void xstream_init(struct xstream *xs, bool hide_extensions);
void xstream_free(struct xstream *xs);

/* True if tincan hides this extension (it passes file descriptors or shared memory). */
bool xstream_extension_hidden(const char *name, size_t len);
/* Appends a ListExtensions reply as clients get it (without the hidden names) to out.
 * 0, -EBADMSG for a reply cut short, -ENOMEM. */
struct buf;
int xstream_filter_list_extensions(const uint8_t *msg, uint32_t size, bool msb, struct buf *out);

/* A complete request, already framed by xw_next_request. Fills *cls.
 * Returns 0, or -EBADMSG if the request is malformed, -ENOBUFS if too many answers are owed
 * (XS_MAX_PENDING, XS_MAX_OWED_BYTES). */
int xstream_on_request(struct xstream *xs, const uint8_t *msg, const struct xw_request *rq, struct msg_class *cls);

/* A complete server message, framed by xw_next_server_msg. Appends it, possibly rewritten,
 * to out. Returns 0, -EBADMSG, or -ENOMEM. */
int xstream_on_server_msg(struct xstream *xs, const uint8_t *msg, const struct xw_server_msg *m,
                          struct buf *out, struct msg_class *cls);

/* Frames the next request in p[0..n): as xw_next_request with this connection's settings. */
static inline long xstream_next_request(const struct xstream *xs, const uint8_t *p, size_t n, struct xw_request *rq)
{
    return xw_next_request(p, n, xs->msb, xs->big_requests, XS_MAX_REQUEST_BYTES, rq);
}
/* Frames the next message from the server: the setup reply first, then the rest. */
long xstream_next_server_msg(const struct xstream *xs, const uint8_t *p, size_t n, struct xw_server_msg *m);

/* The client's setup request has gone (or been made) in this byte order. */
void xstream_on_setup_request(struct xstream *xs, bool msb);

/* Learns an extension's opcodes from a QueryExtension reply given outside the server's
 * stream (a reply the app side gave, known here before the server's arrives), so that
 * requests that follow it are framed and named as the client meant them. */
void xstream_learn_extension(struct xstream *xs, int16_t query_ext, const uint8_t reply[32]);

/* The most bytes the reply to this request may take: a GetImage's pixels at 4 bytes each
 * (depth 32's ZPixmap, the largest), 32 for any other (its fixed part). */
uint32_t xs_reply_bytes(const uint8_t *msg, const struct xw_request *rq, bool msb);

/* Whether the server still owes this connection a reply (every reply-bearing request
 * up to seq_sent answered: false). */
bool xstream_replies_owed(const struct xstream *xs);

/* Names for accounting (never NULL). */
const char *msg_kind_name(enum msg_kind k);

#endif
