/* pcap.h -- a writer of classic pcap files (LINKTYPE_RAW: IPv4/IPv6 packets, no link
 * header), readable by tcpdump and tshark. Write-only; never parses. */
#ifndef EMU_PCAP_H
#define EMU_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct emu_pcap {
    FILE *f;
    uint32_t snaplen;
};

/* Creates path and writes the file header. 0 or -errno. */
int emu_pcap_open(struct emu_pcap *pc, const char *path, uint32_t snaplen);
/* Appends one packet seen at wall-clock time realtime_ns. 0 or -errno. */
int emu_pcap_write(struct emu_pcap *pc, int64_t realtime_ns, const uint8_t *pkt, size_t len);
void emu_pcap_flush(struct emu_pcap *pc);
void emu_pcap_close(struct emu_pcap *pc);

#endif
