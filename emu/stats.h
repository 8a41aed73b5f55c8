/* stats.h -- per-direction counters and latency histograms, and their key=value report.
 * Must not allocate (lives inside the mode's state); adding a sample is O(1). */
#ifndef EMU_STATS_H
#define EMU_STATS_H

#include <stdint.h>
#include <stdio.h>

#define EMU_HIST_BUCKETS 512

/* Log-linear histogram of durations: 16 sub-buckets per power of two of microseconds
 * (about 6% resolution), from 0 to over an hour. */
struct emu_hist {
    uint64_t count;
    int64_t max_ns, sum_ns;
    uint64_t bucket[EMU_HIST_BUCKETS];
};

void emu_hist_add(struct emu_hist *h, int64_t ns);
/* The q-quantile (0..1) in ns, as the middle of its bucket; 0 when empty. */
int64_t emu_hist_quantile_ns(const struct emu_hist *h, double q);

enum emu_drop_cause {
    EMU_DC_QUEUE = 0, EMU_DC_LOSS, EMU_DC_PATTERN,   /* same order as enum emu_verdict - 1 */
    EMU_DC_MALFORMED, EMU_DC_MTU, EMU_DC_VJ_TOSS, EMU_DC_MEMORY, EMU_DC_N
};
const char *emu_drop_cause_name(enum emu_drop_cause c);

struct emu_vj_counters {
    uint64_t tcp_pkts;                /* TCP/IPv4 packets offered to the compressor */
    uint64_t compressed;              /* sent as COMPRESSED_TCP */
    uint64_t uncompressed;            /* sent as UNCOMPRESSED_TCP (resync or new connection) */
    uint64_t hdr_bytes_in;            /* TCP/IP header bytes before compression */
    uint64_t hdr_bytes_out;           /* header bytes after (compressed or not) */
    uint64_t tossed;                  /* packets the decompressor threw away */
    uint64_t desync;                  /* delivered packets that differ from what was sent */
    uint64_t comp_resets;             /* compressor state dropped after a loss it was told of */
};

struct emu_dir_stats {
    uint64_t pkts_in, bytes_in;       /* offered to the link (IP bytes, or stream bytes) */
    uint64_t pkts_out, bytes_out;     /* delivered at the far end */
    uint64_t wire_bytes;              /* bytes counted on the line (after framing, VJ) */
    uint64_t drops[EMU_DC_N];
    struct emu_hist queue_delay;      /* waiting before the channel (start - arrival) */
    struct emu_hist one_way;          /* delivery - arrival, as actually delivered */
    struct emu_hist lateness;         /* actual delivery - scheduled: the emulator's own latency */
    struct emu_vj_counters vj;
};

/* Prints "PREFIX_key=value" lines for one direction. */
void emu_dir_stats_print(FILE *out, const char *prefix, const struct emu_dir_stats *s);



/* Writes a report through fn into path atomically (temporary file, then rename). 0 or -errno. */
int emu_report_write(const char *path, void (*fn)(FILE *out, void *arg), void *arg);
#endif
