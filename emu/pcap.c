/* pcap.c -- classic pcap output (microsecond timestamps, host byte order, as libpcap writes).
 * Workload: every delivered packet when --pcap is given; buffered by stdio. */
#include "pcap.h"

#include <errno.h>
#include <string.h>

#define PCAP_MAGIC_US   0xa1b2c3d4u
#define LINKTYPE_RAW    101u

struct pcap_file_header {
    uint32_t magic;
    uint16_t version_major, version_minor;
    int32_t thiszone;
    uint32_t sigfigs, snaplen, linktype;
};
struct pcap_rec_header { uint32_t ts_sec, ts_usec, incl_len, orig_len; };
_Static_assert(sizeof(struct pcap_file_header) == 24, "pcap file header is 24 bytes");
_Static_assert(sizeof(struct pcap_rec_header) == 16, "pcap record header is 16 bytes");

int emu_pcap_open(struct emu_pcap *pc, const char *path, uint32_t snaplen)
{
    pc->f = fopen(path, "wb");
    if (!pc->f) return -errno;
    pc->snaplen = snaplen;
    struct pcap_file_header h = { PCAP_MAGIC_US, 2, 4, 0, 0, snaplen, LINKTYPE_RAW };
    if (fwrite(&h, sizeof h, 1, pc->f) != 1) { int e = errno; fclose(pc->f); pc->f = NULL; return -e; }
    return 0;
}

int emu_pcap_write(struct emu_pcap *pc, int64_t realtime_ns, const uint8_t *pkt, size_t len)
{
    if (!pc->f) return 0;
    uint32_t incl = len > pc->snaplen ? pc->snaplen : (uint32_t)len;
    struct pcap_rec_header r = {
        (uint32_t)(realtime_ns / 1000000000), (uint32_t)(realtime_ns % 1000000000 / 1000), incl, (uint32_t)len,
    };
    if (fwrite(&r, sizeof r, 1, pc->f) != 1 || fwrite(pkt, 1, incl, pc->f) != incl) return -EIO;
    return 0;
}

void emu_pcap_flush(struct emu_pcap *pc) { if (pc->f) fflush(pc->f); }

void emu_pcap_close(struct emu_pcap *pc)
{
    if (pc->f) fclose(pc->f);
    pc->f = NULL;
}
