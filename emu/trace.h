/* trace.h -- a link whose capacity follows a file over time (docs/EMULATOR.md, "Trace-driven
 * links"): delivery opportunities of 1500 bytes at given milliseconds (Mahimahi's traces) and
 * rates from given milliseconds on, repeating. Pure but for emu_trace_load's read of the file.
 * Workload: a binary search per packet; a trace of up to a few hundred thousand lines. */
#ifndef EMU_TRACE_H
#define EMU_TRACE_H

#include <stdint.h>

#define EMU_TRACE_OPPORTUNITY_BYTES 1500u   /* one Mahimahi delivery opportunity */
#define EMU_TRACE_POINTS_MAX (4u << 20)     /* lines of a trace, at most */

typedef unsigned __int128 emu_nbits;        /* capacity in nanobits: bit/s x ns, exact */

/* From t_ns (trace time) on, the channel runs at rate_bps; jump: capacity given at t_ns at once. */
struct emu_trace_point { int64_t t_ns; uint64_t rate_bps; emu_nbits jump, c; /* c: capacity up to and at t_ns */ };

struct emu_trace {
    struct emu_trace_point *pt;             /* sorted by t_ns, pt[0].t_ns == 0 */
    uint32_t n;                             /* with a loop: pt[n-1] is the end of the period */
    int64_t period_ns;                      /* 0: no repeat, the last rate holds for ever */
    emu_nbits period_c;                     /* capacity of one period */
    int64_t epoch_ns;                       /* monotonic time of trace time 0 */
    uint64_t mean_bps;                      /* over the period, or the last rate if it does not repeat */
    uint32_t lines;
};

/* Parses a trace from text (NUL-terminated): 0, or -EINVAL with a message naming the line in
 * err (err_len bytes). On success *t owns memory: emu_trace_free. */
int emu_trace_parse(struct emu_trace *t, const char *text, char *err, unsigned err_len);
/* Reads and parses a file: 0, -errno, or -EINVAL (message in err). */
int emu_trace_load(struct emu_trace *t, const char *path, char *err, unsigned err_len);
void emu_trace_free(struct emu_trace *t);

/* Capacity up to monotonic time now_ns: just before it (left), or including what it gives at
 * once (right). Before the epoch: 0. */
emu_nbits emu_trace_capacity_left(const struct emu_trace *t, int64_t now_ns);
emu_nbits emu_trace_capacity_right(const struct emu_trace *t, int64_t now_ns);
/* The first monotonic time at which the capacity reaches c; INT64_MAX if never. */
int64_t emu_trace_time_of(const struct emu_trace *t, emu_nbits c);

/* A packet of bits starting at start_ns on a channel whose capacity up to *pos is used:
 * when it has left the channel; *pos moves past its bits. Capacity not used while the channel
 * is idle is lost (as on the real link, and in Mahimahi). */
int64_t emu_trace_finish(const struct emu_trace *t, emu_nbits *pos, int64_t start_ns, uint64_t bits);

#endif
