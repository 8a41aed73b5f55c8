/* xwire.c -- X11 framing. Reads only through xcb-proto's views (xproto_wire.h); every length
 * is checked against the bytes present and against the caller's limit before it is trusted. */
#include "x11/xwire.h"

#include <errno.h>
#include <string.h>

long xw_parse_setup_request(const uint8_t *p, size_t n, struct xw_setup_request *out)
{
    if (n < 1)
        return -EAGAIN;
    if (p[0] != 'B' && p[0] != 'l')
        return -EBADMSG;
    struct xp_setup_request v;
    bool msb = p[0] == 'B';
    if (!xp_setup_request_view(p, n, msb, &v))
        return -EAGAIN;
    out->major = v.protocol_major_version;
    out->minor = v.protocol_minor_version;
    out->msb = msb;
    if (out->major != 11)
        return -EPROTONOSUPPORT; /* well formed, but not X11: refused with a reason */
    uint16_t name_len = v.authorization_protocol_name_len, data_len = v.authorization_protocol_data_len;
    size_t data_at = name_len + xw_pad4(name_len), end = data_at + data_len + xw_pad4(data_len);
    out->auth_name_len = name_len;
    out->auth_data_len = data_len;
    if (end > v.rest_len)
        return -EAGAIN;
    out->auth_name = v.rest;
    out->auth_data = v.rest + data_at;
    return (long)(XP_SETUP_REQUEST_SIZE + end);
}

int xw_build_setup_request(struct buf *out, bool msb, uint16_t major, uint16_t minor,
                           const char *auth_name, size_t auth_name_len,
                           const uint8_t *auth_data, size_t auth_data_len)
{
    if (auth_name_len > 0xffff || auth_data_len > 0xffff)
        return -EINVAL;
    size_t total = XW_SETUP_HEADER_SIZE + auth_name_len + xw_pad4(auth_name_len) + auth_data_len + xw_pad4(auth_data_len);
    uint8_t *p = buf_append_space(out, total);
    if (!p)
        return -ENOMEM;
    memset(p, 0, total);
    xp_setup_request_put(p, total, msb, &(struct xp_setup_request){
        .byte_order = msb ? 'B' : 'l', .protocol_major_version = major, .protocol_minor_version = minor,
        .authorization_protocol_name_len = (uint16_t)auth_name_len,
        .authorization_protocol_data_len = (uint16_t)auth_data_len });
    if (auth_name_len)
        memcpy(p + XP_SETUP_REQUEST_SIZE, auth_name, auth_name_len);
    if (auth_data_len)
        memcpy(p + XP_SETUP_REQUEST_SIZE + auth_name_len + xw_pad4(auth_name_len), auth_data, auth_data_len);
    return 0;
}

long xw_setup_reply_size(const uint8_t *p, size_t n, bool msb)
{
    uint16_t length; /* in the same place in Failed, Success and Authenticate */
    _Static_assert((int)XP_SETUP_LENGTH_AT == (int)XP_SETUP_FAILED_LENGTH_AT, "setup replies' lengths");
    if (n < XP_SETUP_PREFIX_SIZE)
        return -EAGAIN;
    if (p[0] > 2) /* 0 Failed, 1 Success, 2 Authenticate */
        return -EBADMSG;
    xp_peek16(p, n, XP_SETUP_LENGTH_AT, msb, &length);
    return XP_SETUP_PREFIX_SIZE + 4 * (long)length;
}

int xw_build_setup_failed(struct buf *out, bool msb, const char *reason)
{
    size_t len = strlen(reason);
    if (len > 255)
        len = 255;
    size_t total = XP_SETUP_FAILED_SIZE + len + xw_pad4(len);
    uint8_t *p = buf_append_space(out, total);
    if (!p)
        return -ENOMEM;
    memset(p, 0, total);
    xp_setup_failed_put(p, total, msb, &(struct xp_setup_failed){
        .status = 0, .reason_len = (uint8_t)len, .protocol_major_version = 11, .protocol_minor_version = 0,
        .length = (uint16_t)((len + xw_pad4(len)) / 4) });
    memcpy(p + XP_SETUP_FAILED_SIZE, reason, len);
    return 0;
}

long xw_next_request(const uint8_t *p, size_t n, bool msb, bool big, uint32_t max_size, struct xw_request *out)
{
    struct xp_request_header h;
    if (!xp_request_header_view(p, n, msb, &h))
        return -EAGAIN;
    out->major = h.major;
    out->data = h.data;
    uint64_t size = (uint64_t)h.length * 4;
    out->header_size = XP_REQUEST_HEADER_SIZE;
    if (h.length == 0) {
        if (!big)
            return -EBADMSG; /* a zero length is only legal as the BIG-REQUESTS escape */
        if (n < XP_BIG_REQUEST_HEADER_SIZE)
            return -EAGAIN;
        if (h.big_length < 2)
            return -EBADMSG;
        size = (uint64_t)h.big_length * 4;
        out->header_size = XP_BIG_REQUEST_HEADER_SIZE;
    }
    if (size > max_size)
        return -EMSGSIZE;
    out->size = (uint32_t)size;
    return size <= n ? (long)size : -EAGAIN;
}

long xw_next_server_msg(const uint8_t *p, size_t n, bool msb, uint32_t max_size, struct xw_server_msg *out)
{
    struct xp_server_header h;
    if (n < XP_SERVER_MSG_SIZE || !xp_server_header_view(p, n, msb, &h))
        return -EAGAIN;
    uint64_t size = XP_SERVER_MSG_SIZE;
    out->code = h.code & 0x7f;
    out->has_seq = true;
    if (h.code == XP_ERROR) {
        out->kind = XW_KIND_ERROR;
        out->code = h.data;
    } else if (h.code == XP_REPLY) {
        out->kind = XW_KIND_REPLY;
        out->code = h.data;
        size += (uint64_t)h.length * 4;
    } else {
        out->kind = XW_KIND_EVENT;
        if (out->code == XP_EV_GE_GENERIC)
            size += (uint64_t)h.length * 4;
        else if (out->code == XP_EV_KEYMAP_NOTIFY)
            out->has_seq = false;
    }
    out->seq = out->has_seq ? h.sequence : 0;
    if (size > max_size)
        return -EMSGSIZE;
    out->size = (uint32_t)size;
    return size <= n ? (long)size : -EAGAIN;
}
