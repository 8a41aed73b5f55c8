/* xwire.h -- X11 message framing in both byte orders: connection setup, requests
 * (with BIG-REQUESTS lengths), replies, events (with GenericEvent) and errors.
 * Pure functions over bytes; no state, no I/O. Decoders return the size of one complete
 * message, -EAGAIN when more bytes are needed, -EBADMSG or -EMSGSIZE on bad input. */
#ifndef TINCAN_XWIRE_H
#define TINCAN_XWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "xproto_wire.h"

/* xcb-proto's names under the ones other files use (until they use XP_* themselves). */
#define XW_SETUP_HEADER_SIZE XP_SETUP_REQUEST_SIZE
#define XW_EVENT_SIZE XP_SERVER_MSG_SIZE
#define XW_GENERIC_EVENT XP_EV_GE_GENERIC
#define XW_KEYMAP_NOTIFY XP_EV_KEYMAP_NOTIFY
#define XW_OP_QUERY_EXTENSION XP_OP_QUERY_EXTENSION
#define XW_OP_LIST_EXTENSIONS XP_OP_LIST_EXTENSIONS
#define XW_OP_NO_OPERATION XP_OP_NO_OPERATION

/* The client's connection-setup request. Pointers point into the parsed bytes. */
struct xw_setup_request {
    bool msb;                  /* 'B': most significant byte first */
    uint16_t major, minor;     /* protocol version */
    const uint8_t *auth_name;
    uint16_t auth_name_len;
    const uint8_t *auth_data;
    uint16_t auth_data_len;
};

/* -EPROTONOSUPPORT: a well-formed request for another protocol version (msb and major set). */
long xw_parse_setup_request(const uint8_t *p, size_t n, struct xw_setup_request *out);
int xw_build_setup_request(struct buf *out, bool msb, uint16_t major, uint16_t minor,
                           const char *auth_name, size_t auth_name_len,
                           const uint8_t *auth_data, size_t auth_data_len);
/* The size of the server's setup reply (Success, Failed or Authenticate) once 8 bytes are in. */
long xw_setup_reply_size(const uint8_t *p, size_t n, bool msb);
/* A "Failed" setup reply with a reason, as a server would refuse a client. */
int xw_build_setup_failed(struct buf *out, bool msb, const char *reason);

struct xw_request {
    uint8_t major;        /* major opcode */
    uint8_t data;         /* second byte: the minor opcode for extension requests */
    uint32_t size;        /* whole request, in bytes */
    uint8_t header_size;  /* 4, or 8 with a BIG-REQUESTS length */
};

/* big: BIG-REQUESTS is enabled on this connection. max_size: the largest request accepted. */
long xw_next_request(const uint8_t *p, size_t n, bool msb, bool big, uint32_t max_size, struct xw_request *out);

enum xw_kind { XW_KIND_ERROR = 0, XW_KIND_REPLY = 1, XW_KIND_EVENT = 2, XW_KIND_SETUP = 3 /* the setup reply */ };

struct xw_server_msg {
    enum xw_kind kind;
    uint8_t code;       /* event code without the SendEvent bit, error code, or the reply's data byte */
    bool has_seq;       /* every message but KeymapNotify carries a sequence number */
    uint16_t seq;
    uint32_t size;      /* whole message, in bytes */
};

long xw_next_server_msg(const uint8_t *p, size_t n, bool msb, uint32_t max_size, struct xw_server_msg *out);

static inline size_t xw_pad4(size_t n) { return (4 - (n & 3)) & 3; }

#endif
