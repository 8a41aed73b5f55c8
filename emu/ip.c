/* ip.c -- IP and TCP header validation of packets read from the TUN devices.
 * Must not trust any length field before checking it against the buffer. Workload: per packet. */
#include "ip.h"

#include <errno.h>

#include "rd.h"

uint16_t emu_ip_checksum(const uint8_t *p, size_t len)
{
    uint32_t sum = 0;
    size_t i = 0;
    for (; i + 1 < len; i += 2) sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (i < len) sum += (uint32_t)p[i] << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static void parse_tcp(const uint8_t *p, struct emu_ip_info *out)
{
    unsigned l4_len = out->total_len - out->ip_hdr_len;
    const uint8_t *tcp = p + out->ip_hdr_len;
    if (out->is_fragment || l4_len < 20) return;
    unsigned off = (unsigned)(tcp[12] >> 4) * 4;
    if (off < 20 || off > l4_len) return;
    out->tcp_hdr_len = off;
    out->tcp_flags = tcp[13];
}

static int parse_v4(const uint8_t *p, size_t len, struct emu_ip_info *out)
{
    if (len < 20) return -EBADMSG;
    unsigned ihl = (unsigned)(p[0] & 0x0f) * 4;
    unsigned total = emu_get_be16(p + 2);
    if (ihl < 20 || total < ihl || total > len) return -EBADMSG;
    if (emu_ip_checksum(p, ihl) != 0) return -EBADMSG;
    out->ip_hdr_len = ihl;
    out->total_len = total;
    out->proto = p[9];
    out->is_fragment = (emu_get_be16(p + 6) & 0x3fff) != 0;
    if (out->proto == EMU_IPPROTO_TCP) parse_tcp(p, out);
    return 0;
}

static int parse_v6(const uint8_t *p, size_t len, struct emu_ip_info *out)
{
    if (len < 40) return -EBADMSG;
    unsigned payload = emu_get_be16(p + 4);
    if (40 + (size_t)payload > len) return -EBADMSG;
    out->ip_hdr_len = 40;
    out->total_len = 40 + payload;
    out->proto = p[6];
    if (out->proto == EMU_IPPROTO_TCP) parse_tcp(p, out);
    return 0;
}

int emu_ip_parse(const uint8_t *p, size_t len, struct emu_ip_info *out)
{
    *out = (struct emu_ip_info){ 0 };
    if (len < 1) return -EBADMSG;
    out->version = p[0] >> 4;
    if (out->version == 4) return parse_v4(p, len, out);
    if (out->version == 6) return parse_v6(p, len, out);
    return -EBADMSG;
}
