/* fuzz_emu_ip.c -- feeds untrusted bytes to the IP/TCP header parser (emu/ip.c) and checks
 * that what it accepts is consistent with the buffer it was given.
 * Includes the emu source it tests so it links on its own (see emu/emu.mk). */
#include <stdint.h>
#include <stdlib.h>

#include "../../emu/ip.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct emu_ip_info ip;
    if (emu_ip_parse(data, size, &ip) < 0) return 0;
    if (ip.total_len > size || ip.ip_hdr_len > ip.total_len) abort();
    if (ip.tcp_hdr_len && (ip.tcp_hdr_len < 20 || ip.ip_hdr_len + ip.tcp_hdr_len > ip.total_len)) abort();
    if (ip.version == 4 && emu_ip_checksum(data, ip.ip_hdr_len) != 0) abort();
    return 0;
}
