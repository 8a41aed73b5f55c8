/* xwire.c -- X11 framing. Reads only through struct rd; every length is checked
 * against the bytes present and against the caller's limit before it is trusted. */
#include "x11/xwire.h"

#include <errno.h>
#include <string.h>

long xw_parse_setup_request(const uint8_t *p, size_t n, struct xw_setup_request *out)
{
    if (n < 1)
        return -EAGAIN;
    if (p[0] != 'B' && p[0] != 'l')
        return -EBADMSG;
    struct rd r = rd_make(p, n, p[0] == 'B');
    uint16_t name_len, data_len;
    if (rd_skip(&r, 2) || rd_u16(&r, &out->major) || rd_u16(&r, &out->minor) ||
        rd_u16(&r, &name_len) || rd_u16(&r, &data_len) || rd_skip(&r, 2))
        return -EAGAIN;
    out->msb = r.msb;
    if (out->major != 11)
        return -EPROTONOSUPPORT; /* well formed, but not X11: refused with a reason */
    out->auth_name_len = name_len;
    out->auth_data_len = data_len;
    if (rd_bytes(&r, &out->auth_name, name_len) || rd_skip(&r, xw_pad4(name_len)) ||
        rd_bytes(&r, &out->auth_data, data_len) || rd_skip(&r, xw_pad4(data_len)))
        return -EAGAIN;
    return (long)r.pos;
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
    p[0] = msb ? 'B' : 'l';
    st16(p + 2, major, msb);
    st16(p + 4, minor, msb);
    st16(p + 6, (uint16_t)auth_name_len, msb);
    st16(p + 8, (uint16_t)auth_data_len, msb);
    if (auth_name_len)
        memcpy(p + 12, auth_name, auth_name_len);
    if (auth_data_len)
        memcpy(p + 12 + auth_name_len + xw_pad4(auth_name_len), auth_data, auth_data_len);
    return 0;
}

long xw_setup_reply_size(const uint8_t *p, size_t n, bool msb)
{
    if (n < 8)
        return -EAGAIN;
    if (p[0] > 2) /* 0 Failed, 1 Success, 2 Authenticate */
        return -EBADMSG;
    return 8 + 4 * (long)ld16(p + 6, msb);
}

int xw_build_setup_failed(struct buf *out, bool msb, const char *reason)
{
    size_t len = strlen(reason);
    if (len > 255)
        len = 255;
    size_t total = 8 + len + xw_pad4(len);
    uint8_t *p = buf_append_space(out, total);
    if (!p)
        return -ENOMEM;
    memset(p, 0, total);
    p[0] = 0;
    p[1] = (uint8_t)len;
    st16(p + 2, 11, msb);
    st16(p + 4, 0, msb);
    st16(p + 6, (uint16_t)((len + xw_pad4(len)) / 4), msb);
    memcpy(p + 8, reason, len);
    return 0;
}

long xw_next_request(const uint8_t *p, size_t n, bool msb, bool big, uint32_t max_size, struct xw_request *out)
{
    struct rd r = rd_make(p, n, msb);
    uint16_t len16;
    if (rd_u8(&r, &out->major) || rd_u8(&r, &out->data) || rd_u16(&r, &len16))
        return -EAGAIN;
    uint64_t size = (uint64_t)len16 * 4;
    out->header_size = 4;
    if (len16 == 0) {
        if (!big)
            return -EBADMSG; /* a zero length is only legal as the BIG-REQUESTS escape */
        uint32_t len32;
        if (rd_u32(&r, &len32))
            return -EAGAIN;
        if (len32 < 2)
            return -EBADMSG;
        size = (uint64_t)len32 * 4;
        out->header_size = 8;
    }
    if (size > max_size)
        return -EMSGSIZE;
    out->size = (uint32_t)size;
    return size <= n ? (long)size : -EAGAIN;
}

long xw_next_server_msg(const uint8_t *p, size_t n, bool msb, uint32_t max_size, struct xw_server_msg *out)
{
    if (n < XW_EVENT_SIZE)
        return -EAGAIN;
    uint8_t type = p[0];
    uint64_t size = XW_EVENT_SIZE;
    out->code = type & 0x7f;
    out->has_seq = true;
    if (type == 0) {
        out->kind = XW_KIND_ERROR;
        out->code = p[1];
    } else if (type == 1) {
        out->kind = XW_KIND_REPLY;
        out->code = p[1];
        size += (uint64_t)ld32(p + 4, msb) * 4;
    } else {
        out->kind = XW_KIND_EVENT;
        if (out->code == XW_GENERIC_EVENT)
            size += (uint64_t)ld32(p + 4, msb) * 4;
        else if (out->code == XW_KEYMAP_NOTIFY)
            out->has_seq = false;
    }
    out->seq = out->has_seq ? ld16(p + 2, msb) : 0;
    if (size > max_size)
        return -EMSGSIZE;
    out->size = (uint32_t)size;
    return size <= n ? (long)size : -EAGAIN;
}
