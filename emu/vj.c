/* vj.c -- RFC 1144 header compression and decompression, written from the RFC's text and
 * appendix A's algorithm, plus one extension of ours: TCP timestamp deltas (change bit 0x80).
 * Must not read past any buffer: every input is length-checked.
 * Workload: every TCP/IPv4 packet of a --vj link (serial rates: a few hundred per second). */
#include "vj.h"

#include <errno.h>
#include <string.h>

#include "ip.h"
#include "rd.h"

/* Change-mask bits of a COMPRESSED_TCP header (RFC 1144 3.2.2). */
enum {
    NEW_T = 0x80,                     /* ours, not RFC 1144: TSval and TSecr deltas follow NEW_I's */
    NEW_C = 0x40, NEW_I = 0x20, PUSH = 0x10, NEW_S = 0x08, NEW_A = 0x04, NEW_W = 0x02, NEW_U = 0x01,
    SPECIAL_I = NEW_S | NEW_W | NEW_U,       /* echoed interactive traffic */
    SPECIAL_D = NEW_S | NEW_A | NEW_W | NEW_U, /* unidirectional data */
    SPECIALS = SPECIAL_D,
};
enum { TH_FIN = 0x01, TH_SYN = 0x02, TH_RST = 0x04, TH_PUSH = 0x08, TH_ACK = 0x10, TH_URG = 0x20 };

/* Field offsets inside the stored header: IP at 0, TCP at ihl. */
#define IP_LEN(h)   emu_get_be16((h) + 2)
#define IP_ID(h)    emu_get_be16((h) + 4)
#define IHL(h)      ((unsigned)((h)[0] & 0x0f) * 4)
#define TCP_OFF(t)  ((unsigned)((t)[12] >> 4) * 4)

void emu_vj_comp_init(struct emu_vj_comp *c)
{
    memset(c, 0, sizeof *c);
    c->last_sent = -1;
}

void emu_vj_decomp_init(struct emu_vj_decomp *d)
{
    memset(d, 0, sizeof *d);
    d->last_recv = -1;
    d->toss = 1;                      /* nothing to decompress against yet */
}

void emu_vj_decomp_error(struct emu_vj_decomp *d) { d->toss = 1; }

void emu_vj_comp_lost(struct emu_vj_comp *c)
{
    for (int i = 0; i < EMU_VJ_SLOTS; i++) c->slot[i].hdr_len = 0;
    c->last_sent = -1;
}

/* --- compressor --- */

/* Writes n as one byte (1..255) or 0 followed by 16 bits; zero_long: 0 takes the long form. */
static uint8_t *encode(uint8_t *cp, uint32_t n, int zero_long)
{
    if (n >= 256 || (zero_long && n == 0)) { *cp++ = 0; *cp++ = (uint8_t)(n >> 8); *cp++ = (uint8_t)n; }
    else *cp++ = (uint8_t)n;
    return cp;
}

static int same_connection(const uint8_t *a, const uint8_t *b)
{
    unsigned ia = IHL(a), ib = IHL(b);
    return memcmp(a + 12, b + 12, 8) == 0 && memcmp(a + ia, b + ib, 4) == 0;   /* addrs, ports */
}

static int find_slot(struct emu_vj_comp *c, const uint8_t *pkt, int *fresh)
{
    int lru = 0;
    *fresh = 0;
    for (int i = 0; i < EMU_VJ_SLOTS; i++) {
        if (c->slot[i].hdr_len && same_connection(c->slot[i].hdr, pkt)) return i;
        if (c->slot[i].last_use < c->slot[lru].last_use) lru = i;
    }
    *fresh = 1;
    return lru;
}

/* Offset from the TCP header t (thl bytes) of the timestamp option's TSval, or 0 if it has
 * none. Walks the options as RFC 793 lays them out; a malformed list has no timestamp. */
static unsigned ts_offset(const uint8_t *t, unsigned thl)
{
    unsigned i = 20;
    while (i < thl && t[i] != 0) {                            /* 0: end of option list */
        if (t[i] == 1) { i++; continue; }                     /* no-operation */
        if (i + 1 >= thl || t[i + 1] < 2 || i + t[i + 1] > thl) return 0;
        if (t[i] == 8 && t[i + 1] == 10) return i + 2;
        i += t[i + 1];
    }
    return 0;
}

/* Fields the compressed form assumes unchanged (RFC 1144 3.2.3). TCP options must be the same
 * bytes, except TSval and TSecr of a timestamp option at the same place: their deltas travel
 * with NEW_T. RFC 1144 sends every such packet uncompressed, which made stacks of its era run
 * without timestamps; a stack without them mistakes a deep queue for loss (see EMULATOR.md). */
static int constant_fields_changed(const uint8_t *old, const uint8_t *pkt, unsigned ihl, unsigned thl)
{
    const uint8_t *ot = old + IHL(old), *t = pkt + ihl;
    if (IHL(old) != ihl || TCP_OFF(ot) != thl) return 1;
    if (memcmp(old, pkt, 2) != 0) return 1;                   /* version, IHL, TOS */
    if (memcmp(old + 6, pkt + 6, 4) != 0) return 1;           /* fragment field, TTL, protocol */
    if (ihl > 20 && memcmp(old + 20, pkt + 20, ihl - 20) != 0) return 1;
    if (thl > 20 && memcmp(ot + 20, t + 20, thl - 20) != 0) {
        unsigned ts = ts_offset(t, thl);
        if (!ts || ts != ts_offset(ot, thl)) return 1;
        if (memcmp(ot + 20, t + 20, ts - 20) != 0 || memcmp(ot + ts + 8, t + ts + 8, thl - ts - 8) != 0) return 1;
    }
    return 0;
}

/* Appends the timestamp deltas to cp if they changed; returns the end, or NULL when a delta
 * does not fit 16 bits (sent uncompressed then). Zero is encoded in the long form, since
 * either of the two may be zero and a lone 0 byte means "16 bits follow". */
static uint8_t *encode_ts(const uint8_t *ot, const uint8_t *t, uint8_t *cp, int *changes)
{
    unsigned ts = ts_offset(t, TCP_OFF(t));
    if (!ts) return cp;
    uint32_t dv = emu_get_be32(t + ts) - emu_get_be32(ot + ts);
    uint32_t de = emu_get_be32(t + ts + 4) - emu_get_be32(ot + ts + 4);
    if (!dv && !de) return cp;
    if (dv > 0xffff || de > 0xffff) return NULL;
    cp = encode(cp, dv, 1);
    cp = encode(cp, de, 1);
    *changes |= NEW_T;
    return cp;
}

/* Builds the change mask and deltas into buf; returns the end, or NULL to send uncompressed. */
static uint8_t *encode_deltas(const uint8_t *old, const uint8_t *pkt, unsigned hlen, uint8_t *buf, int *changes)
{
    const uint8_t *ot = old + IHL(old), *t = pkt + IHL(pkt);
    uint8_t *cp = buf;
    int ch = 0;
    if (t[13] & TH_URG) { cp = encode(cp, emu_get_be16(t + 18), 1); ch |= NEW_U; }
    else if (emu_get_be16(t + 18) != emu_get_be16(ot + 18)) return NULL;
    uint16_t dw = (uint16_t)(emu_get_be16(t + 14) - emu_get_be16(ot + 14));
    if (dw) { cp = encode(cp, dw, 0); ch |= NEW_W; }
    uint32_t da = emu_get_be32(t + 8) - emu_get_be32(ot + 8);
    if (da) { if (da > 0xffff) return NULL; cp = encode(cp, da, 0); ch |= NEW_A; }
    uint32_t ds = emu_get_be32(t + 4) - emu_get_be32(ot + 4);
    if (ds) { if (ds > 0xffff) return NULL; cp = encode(cp, ds, 0); ch |= NEW_S; }
    uint32_t last_data = IP_LEN(old) - hlen;
    switch (ch) {
    case 0:      /* nothing changed: data after a pure ack is fine; anything else is a retransmit */
        if (IP_LEN(pkt) != IP_LEN(old) && IP_LEN(old) == hlen) break;
        return NULL;
    case SPECIAL_I:
    case SPECIAL_D:
        return NULL;                  /* the real changes look like a special code */
    case NEW_S | NEW_A:
        if (ds == da && ds == last_data) { ch = SPECIAL_I; cp = buf; }
        break;
    case NEW_S:
        if (ds == last_data) { ch = SPECIAL_D; cp = buf; }
        break;
    }
    uint16_t di = (uint16_t)(IP_ID(pkt) - IP_ID(old));
    if (di != 1) { cp = encode(cp, di, 1); ch |= NEW_I; }
    cp = encode_ts(ot, t, cp, &ch);
    if (!cp) return NULL;
    if (t[13] & TH_PUSH) ch |= PUSH;
    *changes = ch;
    return cp;
}

static long send_as_ip(const uint8_t *pkt, size_t len, enum emu_vj_type *type, uint8_t *out)
{
    memmove(out, pkt, len);
    *type = EMU_VJ_TYPE_IP;
    return (long)len;
}

long emu_vj_compress(struct emu_vj_comp *c, const uint8_t *pkt, size_t len, enum emu_vj_type *type,
                     uint8_t *out, size_t cap, unsigned *hdr_in, unsigned *hdr_out)
{
    struct emu_ip_info ip;
    if (cap < len) return -EINVAL;
    if (hdr_in) *hdr_in = 0;
    if (hdr_out) *hdr_out = 0;
    if (emu_ip_parse(pkt, len, &ip) < 0 || ip.version != 4 || ip.proto != EMU_IPPROTO_TCP || !ip.tcp_hdr_len ||
        ip.total_len != len || (ip.tcp_flags & (TH_SYN | TH_FIN | TH_RST | TH_ACK)) != TH_ACK)
        return send_as_ip(pkt, len, type, out);
    unsigned hlen = ip.ip_hdr_len + ip.tcp_hdr_len;
    if (hlen > EMU_VJ_HDR_MAX) return send_as_ip(pkt, len, type, out);
    if (hdr_in) *hdr_in = hlen;
    int fresh, changes = 0;
    int id = find_slot(c, pkt, &fresh);
    struct emu_vj_slot *s = &c->slot[id];
    s->last_use = ++c->clock;
    uint8_t deltas[40], *end = NULL;
    if (!fresh && !constant_fields_changed(s->hdr, pkt, ip.ip_hdr_len, ip.tcp_hdr_len))
        end = encode_deltas(s->hdr, pkt, hlen, deltas, &changes);
    memcpy(s->hdr, pkt, hlen);
    s->hdr_len = hlen;
    if (!end) {                       /* UNCOMPRESSED_TCP: the protocol byte carries the slot */
        memmove(out, pkt, len);
        out[9] = (uint8_t)id;
        c->last_sent = id;
        *type = EMU_VJ_TYPE_UNCOMPRESSED;
        if (hdr_out) *hdr_out = hlen;
        return (long)len;
    }
    const uint8_t *tcp = pkt + ip.ip_hdr_len;
    uint8_t *cp = out;
    int explicit = c->last_sent != id;
    *cp++ = (uint8_t)(changes | (explicit ? NEW_C : 0));
    if (explicit) *cp++ = (uint8_t)id;
    *cp++ = tcp[16];                  /* the TCP checksum travels as is */
    *cp++ = tcp[17];
    memcpy(cp, deltas, (size_t)(end - deltas));
    cp += end - deltas;
    c->last_sent = id;
    if (hdr_out) *hdr_out = (unsigned)(cp - out);
    memmove(cp, pkt + hlen, len - hlen);   /* out has room: compressed header < hlen */
    *type = EMU_VJ_TYPE_COMPRESSED;
    return (long)(cp - out) + (long)(len - hlen);
}

/* --- decompressor --- */

static long toss(struct emu_vj_decomp *d)
{
    d->toss = 1;
    return -EBADMSG;
}

/* Reads an encoded number: one byte, or 0 then 16 bits. */
static int decode(struct emu_rd *r, uint32_t *v)
{
    uint8_t b;
    uint16_t w;
    if (emu_rd_u8(r, &b) < 0) return -EBADMSG;
    if (b) { *v = b; return 0; }
    if (emu_rd_be16(r, &w) < 0) return -EBADMSG;
    *v = w;
    return 0;
}

static long take_uncompressed(struct emu_vj_decomp *d, const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    if (len < 40) return toss(d);
    unsigned ihl = IHL(in);
    if ((in[0] >> 4) != 4 || ihl < 20 || len < ihl + 20) return toss(d);
    unsigned hlen = ihl + TCP_OFF(in + ihl);
    unsigned id = in[9];
    if (id >= EMU_VJ_SLOTS || TCP_OFF(in + ihl) < 20 || hlen > len || hlen > EMU_VJ_HDR_MAX) return toss(d);
    if (IP_LEN(in) != len) return toss(d);
    if (cap < len) return -ENOSPC;
    memcpy(out, in, len);
    out[9] = EMU_IPPROTO_TCP;
    memcpy(d->slot[id].hdr, out, hlen);
    d->slot[id].hdr_len = hlen;
    d->last_recv = (int)id;
    d->toss = 0;
    return (long)len;
}

/* Applies the deltas of a compressed header to the slot's stored header h. */
static int apply_deltas(uint8_t *h, unsigned hlen, int changes, struct emu_rd *r)
{
    uint8_t *t = h + IHL(h);
    uint32_t v;
    if (changes & PUSH) t[13] |= TH_PUSH; else t[13] &= (uint8_t)~TH_PUSH;
    switch (changes & SPECIALS) {
    case SPECIAL_I: {
        uint32_t n = IP_LEN(h) - hlen;
        emu_put_be32(t + 8, emu_get_be32(t + 8) + n);
        emu_put_be32(t + 4, emu_get_be32(t + 4) + n);
        break;
    }
    case SPECIAL_D:
        emu_put_be32(t + 4, emu_get_be32(t + 4) + IP_LEN(h) - hlen);
        break;
    default:
        if (changes & NEW_U) {
            if (decode(r, &v) < 0) return -EBADMSG;
            t[13] |= TH_URG;
            emu_put_be16(t + 18, (uint16_t)v);
        } else {
            t[13] &= (uint8_t)~TH_URG;
        }
        if ((changes & NEW_W) && decode(r, &v) == 0) emu_put_be16(t + 14, (uint16_t)(emu_get_be16(t + 14) + v));
        else if (changes & NEW_W) return -EBADMSG;
        if ((changes & NEW_A) && decode(r, &v) == 0) emu_put_be32(t + 8, emu_get_be32(t + 8) + v);
        else if (changes & NEW_A) return -EBADMSG;
        if ((changes & NEW_S) && decode(r, &v) == 0) emu_put_be32(t + 4, emu_get_be32(t + 4) + v);
        else if (changes & NEW_S) return -EBADMSG;
    }
    if (changes & NEW_I) {
        if (decode(r, &v) < 0) return -EBADMSG;
        emu_put_be16(h + 4, (uint16_t)(IP_ID(h) + v));
    } else {
        emu_put_be16(h + 4, (uint16_t)(IP_ID(h) + 1));
    }
    if (changes & NEW_T) {
        unsigned ts = ts_offset(t, hlen - IHL(h));
        uint32_t dv, de;
        if (!ts || decode(r, &dv) < 0 || decode(r, &de) < 0) return -EBADMSG;
        emu_put_be32(t + ts, emu_get_be32(t + ts) + dv);
        emu_put_be32(t + ts + 4, emu_get_be32(t + ts + 4) + de);
    }
    return 0;
}

static long take_compressed(struct emu_vj_decomp *d, const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    struct emu_rd r = emu_rd_init(in, len);
    uint8_t changes, id, ck[2];
    if (emu_rd_u8(&r, &changes) < 0) return toss(d);
    if (changes & NEW_C) {
        if (emu_rd_u8(&r, &id) < 0 || id >= EMU_VJ_SLOTS || !d->slot[id].hdr_len) return toss(d);
        d->last_recv = id;
        d->toss = 0;
    } else if (d->toss || d->last_recv < 0) {
        return -EAGAIN;               /* waiting for a packet that names its slot */
    }
    struct emu_vj_slot *s = &d->slot[d->last_recv];
    if (emu_rd_u8(&r, &ck[0]) < 0 || emu_rd_u8(&r, &ck[1]) < 0) return toss(d);
    uint8_t h[EMU_VJ_HDR_MAX];
    memcpy(h, s->hdr, s->hdr_len);
    if (apply_deltas(h, s->hdr_len, changes, &r) < 0) return toss(d);
    size_t data = emu_rd_left(&r), total = s->hdr_len + data;
    if (total > 0xffff) return toss(d);
    if (cap < total) return -ENOSPC;
    uint8_t *t = h + IHL(h);
    t[16] = ck[0];
    t[17] = ck[1];
    emu_put_be16(h + 2, (uint16_t)total);
    h[10] = h[11] = 0;
    emu_put_be16(h + 10, emu_ip_checksum(h, IHL(h)));
    memcpy(s->hdr, h, s->hdr_len);
    memcpy(out, h, s->hdr_len);
    memcpy(out + s->hdr_len, in + r.off, data);
    return (long)total;
}

long emu_vj_decompress(struct emu_vj_decomp *d, enum emu_vj_type type, const uint8_t *in, size_t len,
                       uint8_t *out, size_t cap)
{
    switch (type) {
    case EMU_VJ_TYPE_IP:
        if (cap < len) return -ENOSPC;
        memcpy(out, in, len);
        return (long)len;
    case EMU_VJ_TYPE_UNCOMPRESSED:
        return take_uncompressed(d, in, len, out, cap);
    case EMU_VJ_TYPE_COMPRESSED:
        return take_compressed(d, in, len, out, cap);
    }
    return -EBADMSG;
}
