/* ppp.c -- RFC 1662 HDLC-like framing: FCS-16 (table-driven), stuffing, unstuffing.
 * Must not allocate. Workload: every packet of a serial-line profile (slow lines: cheap). */
#include "ppp.h"

#include <errno.h>

/* RFC 1662 appendix C.2: fcstab[b] for the reflected polynomial 0x8408 (checked by a test
 * against the bitwise definition). */
static const uint16_t fcs_table[256] = {
    0x0000, 0x1189, 0x2312, 0x329b, 0x4624, 0x57ad, 0x6536, 0x74bf,
    0x8c48, 0x9dc1, 0xaf5a, 0xbed3, 0xca6c, 0xdbe5, 0xe97e, 0xf8f7,
    0x1081, 0x0108, 0x3393, 0x221a, 0x56a5, 0x472c, 0x75b7, 0x643e,
    0x9cc9, 0x8d40, 0xbfdb, 0xae52, 0xdaed, 0xcb64, 0xf9ff, 0xe876,
    0x2102, 0x308b, 0x0210, 0x1399, 0x6726, 0x76af, 0x4434, 0x55bd,
    0xad4a, 0xbcc3, 0x8e58, 0x9fd1, 0xeb6e, 0xfae7, 0xc87c, 0xd9f5,
    0x3183, 0x200a, 0x1291, 0x0318, 0x77a7, 0x662e, 0x54b5, 0x453c,
    0xbdcb, 0xac42, 0x9ed9, 0x8f50, 0xfbef, 0xea66, 0xd8fd, 0xc974,
    0x4204, 0x538d, 0x6116, 0x709f, 0x0420, 0x15a9, 0x2732, 0x36bb,
    0xce4c, 0xdfc5, 0xed5e, 0xfcd7, 0x8868, 0x99e1, 0xab7a, 0xbaf3,
    0x5285, 0x430c, 0x7197, 0x601e, 0x14a1, 0x0528, 0x37b3, 0x263a,
    0xdecd, 0xcf44, 0xfddf, 0xec56, 0x98e9, 0x8960, 0xbbfb, 0xaa72,
    0x6306, 0x728f, 0x4014, 0x519d, 0x2522, 0x34ab, 0x0630, 0x17b9,
    0xef4e, 0xfec7, 0xcc5c, 0xddd5, 0xa96a, 0xb8e3, 0x8a78, 0x9bf1,
    0x7387, 0x620e, 0x5095, 0x411c, 0x35a3, 0x242a, 0x16b1, 0x0738,
    0xffcf, 0xee46, 0xdcdd, 0xcd54, 0xb9eb, 0xa862, 0x9af9, 0x8b70,
    0x8408, 0x9581, 0xa71a, 0xb693, 0xc22c, 0xd3a5, 0xe13e, 0xf0b7,
    0x0840, 0x19c9, 0x2b52, 0x3adb, 0x4e64, 0x5fed, 0x6d76, 0x7cff,
    0x9489, 0x8500, 0xb79b, 0xa612, 0xd2ad, 0xc324, 0xf1bf, 0xe036,
    0x18c1, 0x0948, 0x3bd3, 0x2a5a, 0x5ee5, 0x4f6c, 0x7df7, 0x6c7e,
    0xa50a, 0xb483, 0x8618, 0x9791, 0xe32e, 0xf2a7, 0xc03c, 0xd1b5,
    0x2942, 0x38cb, 0x0a50, 0x1bd9, 0x6f66, 0x7eef, 0x4c74, 0x5dfd,
    0xb58b, 0xa402, 0x9699, 0x8710, 0xf3af, 0xe226, 0xd0bd, 0xc134,
    0x39c3, 0x284a, 0x1ad1, 0x0b58, 0x7fe7, 0x6e6e, 0x5cf5, 0x4d7c,
    0xc60c, 0xd785, 0xe51e, 0xf497, 0x8028, 0x91a1, 0xa33a, 0xb2b3,
    0x4a44, 0x5bcd, 0x6956, 0x78df, 0x0c60, 0x1de9, 0x2f72, 0x3efb,
    0xd68d, 0xc704, 0xf59f, 0xe416, 0x90a9, 0x8120, 0xb3bb, 0xa232,
    0x5ac5, 0x4b4c, 0x79d7, 0x685e, 0x1ce1, 0x0d68, 0x3ff3, 0x2e7a,
    0xe70e, 0xf687, 0xc41c, 0xd595, 0xa12a, 0xb0a3, 0x8238, 0x93b1,
    0x6b46, 0x7acf, 0x4854, 0x59dd, 0x2d62, 0x3ceb, 0x0e70, 0x1ff9,
    0xf78f, 0xe606, 0xd49d, 0xc514, 0xb1ab, 0xa022, 0x92b9, 0x8330,
    0x7bc7, 0x6a4e, 0x58d5, 0x495c, 0x3de3, 0x2c6a, 0x1ef1, 0x0f78,
};

uint16_t emu_ppp_fcs16(uint16_t fcs, const uint8_t *p, size_t len)
{
    while (len--) fcs = (uint16_t)((fcs >> 8) ^ fcs_table[(fcs ^ *p++) & 0xff]);
    return fcs;
}

static int needs_escape(uint8_t b, uint32_t accm)
{
    return b == EMU_PPP_FLAG || b == EMU_PPP_ESC || (b < 0x20 && (accm >> b) & 1);
}

/* The unstuffed frame body is: ff 03 proto(2) payload fcs(2, least significant first). */
static void frame_head(uint16_t proto, uint8_t head[4])
{
    head[0] = 0xff; head[1] = 0x03; head[2] = (uint8_t)(proto >> 8); head[3] = (uint8_t)proto;
}

static uint16_t frame_fcs(const uint8_t head[4], const uint8_t *payload, size_t len)
{
    uint16_t fcs = emu_ppp_fcs16(EMU_PPP_FCS_INIT, head, 4);
    return (uint16_t)~emu_ppp_fcs16(fcs, payload, len);
}

size_t emu_ppp_frame_len(uint16_t proto, const uint8_t *payload, size_t len, uint32_t accm)
{
    uint8_t head[4], tail[2];
    frame_head(proto, head);
    uint16_t fcs = frame_fcs(head, payload, len);
    tail[0] = (uint8_t)fcs; tail[1] = (uint8_t)(fcs >> 8);
    size_t n = 2 + 4 + len + 2;
    for (int i = 0; i < 4; i++) n += needs_escape(head[i], accm);
    for (size_t i = 0; i < len; i++) n += needs_escape(payload[i], accm);
    for (int i = 0; i < 2; i++) n += needs_escape(tail[i], accm);
    return n;
}

struct out { uint8_t *p; size_t cap, n; int full; };

static void put_stuffed(struct out *o, const uint8_t *p, size_t len, uint32_t accm)
{
    for (size_t i = 0; i < len; i++) {
        if (o->n + 2 > o->cap) { o->full = 1; return; }
        if (needs_escape(p[i], accm)) { o->p[o->n++] = EMU_PPP_ESC; o->p[o->n++] = p[i] ^ 0x20; }
        else o->p[o->n++] = p[i];
    }
}

long emu_ppp_frame(uint16_t proto, const uint8_t *payload, size_t len, uint32_t accm, uint8_t *out, size_t cap)
{
    uint8_t head[4], tail[2];
    frame_head(proto, head);
    uint16_t fcs = frame_fcs(head, payload, len);
    tail[0] = (uint8_t)fcs; tail[1] = (uint8_t)(fcs >> 8);
    struct out o = { out, cap, 0, 0 };
    if (cap < 2) return -ENOSPC;
    o.p[o.n++] = EMU_PPP_FLAG;
    put_stuffed(&o, head, 4, accm);
    put_stuffed(&o, payload, len, accm);
    put_stuffed(&o, tail, 2, accm);
    if (o.full || o.n + 1 > o.cap) return -ENOSPC;
    o.p[o.n++] = EMU_PPP_FLAG;
    return (long)o.n;
}

long emu_ppp_unframe(const uint8_t *in, size_t len, uint16_t *proto, uint8_t *out, size_t cap)
{
    size_t i = 0, end = len, n = 0, n_out = 0;
    uint8_t head[4], fcs_bytes[2];
    if (end && in[0] == EMU_PPP_FLAG) i++;
    if (end > i && in[end - 1] == EMU_PPP_FLAG) end--;
    uint16_t fcs = EMU_PPP_FCS_INIT;
    /* Unstuffed: 4 head bytes, the payload, 2 FCS bytes; the last two seen are held back. */
    for (; i < end; i++, n++) {
        uint8_t b = in[i];
        if (b == EMU_PPP_FLAG) return -EBADMSG;
        if (b == EMU_PPP_ESC) {
            if (++i == end || in[i] == EMU_PPP_FLAG) return -EBADMSG;
            b = in[i] ^ 0x20;
        }
        fcs = emu_ppp_fcs16(fcs, &b, 1);
        if (n < 4) { head[n] = b; continue; }
        if (n < 6) { fcs_bytes[n - 4] = b; continue; }
        if (n_out == cap) return -ENOSPC;
        out[n_out++] = fcs_bytes[0];
        fcs_bytes[0] = fcs_bytes[1];
        fcs_bytes[1] = b;
    }
    if (n < 4 + 2) return -EBADMSG;
    if (fcs != EMU_PPP_FCS_GOOD) return -EBADMSG;
    if (head[0] != 0xff || head[1] != 0x03) return -EBADMSG;
    *proto = (uint16_t)(head[2] << 8 | head[3]);
    return (long)n_out;
}
