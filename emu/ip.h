/* ip.h -- bounds-checked parsing of the IPv4/IPv6 and TCP headers of untrusted packets,
 * and the Internet checksum. Decides what is malformed; never writes to the packet. */
#ifndef EMU_IP_H
#define EMU_IP_H

#include <stddef.h>
#include <stdint.h>

#define EMU_IPPROTO_TCP 6

struct emu_ip_info {
    int version;                      /* 4 or 6 */
    unsigned ip_hdr_len;              /* bytes of the IP header (v4: IHL*4, v6: 40) */
    unsigned total_len;               /* the packet's own length field, <= the buffer */
    uint8_t proto;                    /* v4 protocol or v6 next header */
    int is_fragment;                  /* v4: MF set or offset != 0 */
    unsigned tcp_hdr_len;             /* 0 unless an unfragmented TCP segment with a sane header */
    uint8_t tcp_flags;
};

/* Parses p[0..len): 0, or -EBADMSG for a packet that a link must not carry (bad version,
 * header length, total length, or IPv4 header checksum). */
int emu_ip_parse(const uint8_t *p, size_t len, struct emu_ip_info *out);

/* One's-complement sum of len bytes, folded and complemented (the Internet checksum). */
uint16_t emu_ip_checksum(const uint8_t *p, size_t len);

#endif
