/* frame.c -- link frame encoding and decoding. The decoder reads bytes from the peer,
 * which may be anyone until authenticated: it checks every length before use. */
#include "link/frame.h"

#include <errno.h>

static bool frame_type_known(uint8_t t)
{
    switch (t) {
    case FRAME_AUTH_NONCE: case FRAME_AUTH_PROOF: case FRAME_DICT_OFFER: case FRAME_OPEN: case FRAME_DATA:
    case FRAME_CLOSE: case FRAME_WINDOW: case FRAME_PREDICTED: case FRAME_FACT: case FRAME_ACK: case FRAME_GOODBYE:
    case FRAME_SPARE: case FRAME_HINT: case FRAME_SESSION: case FRAME_RESUME: case FRAME_PING:
        return true;
    }
    return false;
}

const char *frame_type_name(uint8_t t)
{
    switch (t) {
    case FRAME_AUTH_NONCE: return "AUTH_NONCE";
    case FRAME_AUTH_PROOF: return "AUTH_PROOF";
    case FRAME_DICT_OFFER: return "DICT_OFFER";
    case FRAME_SESSION: return "SESSION";
    case FRAME_RESUME: return "RESUME";
    case FRAME_OPEN: return "OPEN";
    case FRAME_DATA: return "DATA";
    case FRAME_CLOSE: return "CLOSE";
    case FRAME_WINDOW: return "WINDOW";
    case FRAME_PREDICTED: return "PREDICTED";
    case FRAME_FACT: return "FACT";
    case FRAME_ACK: return "ACK";
    case FRAME_SPARE: return "SPARE";
    case FRAME_HINT: return "HINT";
    case FRAME_PING: return "PING";
    case FRAME_GOODBYE: return "GOODBYE";
    }
    return "unknown";
}

long frame_decode(const uint8_t *p, size_t n, struct frame *f)
{
    struct rd r = rd_make(p, n, false);
    uint64_t channel, len;
    int rc;
    if ((rc = rd_u8(&r, &f->type)))
        return rc;
    if (!frame_type_known(f->type))
        return -EBADMSG;
    if ((rc = rd_varint(&r, &channel)) || (rc = rd_varint(&r, &len)))
        return rc;
    if (channel > UINT32_MAX || len > FRAME_MAX_PAYLOAD)
        return -EBADMSG;
    f->channel = (uint32_t)channel;
    f->len = (uint32_t)len;
    if ((rc = rd_bytes(&r, &f->payload, f->len)))
        return rc;
    return (long)r.pos;
}

int frame_encode_header(struct buf *out, uint8_t type, uint32_t channel, size_t len)
{
    if (len > FRAME_MAX_PAYLOAD)
        return -EMSGSIZE;
    int rc = buf_append(out, &type, 1);
    if (!rc)
        rc = buf_put_varint(out, channel);
    if (!rc)
        rc = buf_put_varint(out, len);
    return rc;
}

int frame_encode(struct buf *out, uint8_t type, uint32_t channel, const void *payload, size_t len)
{
    int rc = frame_encode_header(out, type, channel, len);
    return rc ? rc : buf_append(out, payload, len);
}

int frame_open_parse(const struct frame *f, struct frame_open *o)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t spare = 0;
    if (rd_u8(&r, &o->msb) || rd_u16(&r, &o->major) || rd_u16(&r, &o->minor) || o->msb > 1 ||
        rd_varint(&r, &spare) || rd_u8(&r, &o->refs) || rd_left(&r) || spare > UINT32_MAX ||
        o->refs > FRAME_OPEN_REFS_MAX)
        return -EBADMSG;
    o->spare = (uint32_t)spare;
    return 0;
}

int frame_hint_parse(const struct frame *f, struct frame_hint *h)
{
    struct rd r = rd_make(f->payload, f->len, false);
    *h = (struct frame_hint){ 0 };
    if (rd_u8(&r, &h->flags) || (h->flags & ~HINT_FONT_SET))
        return -EBADMSG;
    while (rd_left(&r)) {
        uint8_t len;
        const uint8_t *name;
        if (h->n_fonts == HINT_MAX_FONTS || rd_u8(&r, &len) || !len || rd_bytes(&r, &name, len))
            return -EBADMSG;
        for (uint8_t i = 0; i < len; i++)
            if (name[i] < 0x20 || name[i] > 0x7e)
                return -EBADMSG;
        h->font[h->n_fonts] = name;
        h->font_len[h->n_fonts++] = len;
    }
    return 0;
}

int frame_hint_encode(struct buf *out, uint32_t channel, const struct frame_hint *h)
{
    size_t len = 1;
    for (uint8_t i = 0; i < h->n_fonts; i++)
        len += 1u + h->font_len[i];
    int rc = frame_encode_header(out, FRAME_HINT, channel, len);
    if (!rc)
        rc = buf_append(out, &h->flags, 1);
    for (uint8_t i = 0; i < h->n_fonts && !rc; i++)
        if (!(rc = buf_append(out, &h->font_len[i], 1)))
            rc = buf_append(out, h->font[i], h->font_len[i]);
    return rc;
}

int frame_fact_window_parse(const struct frame *f, struct frame_fact_window *w)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint8_t kind, clean;
    uint64_t window, width, height, as_of;
    if (rd_u8(&r, &kind) || kind != FACT_WINDOW || rd_varint(&r, &window) || rd_u8(&r, &clean) ||
        rd_varint(&r, &width) || rd_varint(&r, &height) || rd_varint(&r, &as_of) || rd_left(&r) ||
        window > UINT32_MAX || clean > 1 || width > UINT16_MAX || height > UINT16_MAX || as_of > UINT32_MAX)
        return -EBADMSG;
    *w = (struct frame_fact_window){ (uint32_t)window, (uint32_t)as_of, (uint16_t)width, (uint16_t)height, clean };
    return 0;
}

int frame_fact_window_encode(struct buf *out, uint32_t channel, const struct frame_fact_window *w)
{
    uint8_t p[24];
    struct buf b = { .data = p, .cap = sizeof p }; /* at most 1 + 5 + 1 + 3 + 3 + 5 bytes: never grows */
    uint8_t kind = FACT_WINDOW, clean = w->clean;
    int rc = buf_append(&b, &kind, 1) | buf_put_varint(&b, w->window) | buf_append(&b, &clean, 1) |
             buf_put_varint(&b, w->width) | buf_put_varint(&b, w->height) | buf_put_varint(&b, w->as_of);
    return rc ? -EINVAL : frame_encode(out, FRAME_FACT, channel, p, b.len);
}

int frame_open_encode(struct buf *out, uint32_t channel, const struct frame_open *o)
{
    uint8_t p[FRAME_OPEN_SIZE + 4] = { o->msb };
    struct buf b = { .data = p, .cap = sizeof p, .len = 5 }; /* at most 5 + 5 + 1 bytes: never grows */
    st16(p + 1, o->major, false);
    st16(p + 3, o->minor, false);
    int rc = buf_put_varint(&b, o->spare) | buf_append(&b, &o->refs, 1);
    return rc ? -EINVAL : frame_encode(out, FRAME_OPEN, channel, p, b.len);
}
