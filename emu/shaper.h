/* shaper.h -- the timing and loss model of one direction of the emulated link:
 * given a packet's wire size and arrival time, when it starts and ends on the channel,
 * when it arrives, or why it is dropped. Pure computation over the clock it is given:
 * no I/O, no sleeping. Workload: once per packet (packet mode) or per chunk (stream mode). */
#ifndef EMU_SHAPER_H
#define EMU_SHAPER_H

#include <stdint.h>

#include "params.h"
#include "trace.h"

/* The channel: one per direction, or one shared by both on a half-duplex link. */
struct emu_channel {
    int64_t busy_until_ns;            /* when the last admitted packet leaves the channel */
    emu_nbits trace_pos;              /* with a trace: the capacity used so far (trace.h) */
};

enum emu_verdict {
    EMU_PASS = 0,
    EMU_DROP_QUEUE,                   /* drop-tail: queue full on arrival */
    EMU_DROP_LOSS,                    /* random or Gilbert-Elliott loss on the line */
    EMU_DROP_PATTERN,                 /* --drop-list */
    EMU_VERDICTS
};

struct emu_sched {
    int64_t arrive_ns, start_ns, finish_ns, deliver_ns;
};

struct emu_qent { int64_t start_ns; uint32_t wire_bytes; };

struct emu_shaper {
    const struct emu_params *link;
    const struct emu_dir_params *p;
    struct emu_channel *chan;
    uint64_t rng;                     /* splitmix64 state */
    int ge_bad;                       /* Gilbert-Elliott state */
    uint64_t n_offered;               /* packets offered so far, for --drop-list */
    int64_t last_deliver_ns;          /* keeps delivery in order unless --reorder */
    struct emu_qent *q;               /* admitted packets that have not started (ring) */
    uint32_t q_cap, q_head, q_len;
    uint64_t q_bytes;
};

/* Prepares s for direction dir of link, on channel chan (borrowed, may be shared).
 * Returns 0 or -ENOMEM. */
int emu_shaper_init(struct emu_shaper *s, const struct emu_params *link, int dir, struct emu_channel *chan);
void emu_shaper_free(struct emu_shaper *s);

/* Channel time of wire_bytes in n_pkts packets: bits at the rate plus per-packet access time. */
int64_t emu_shaper_ser_ns(const struct emu_shaper *s, uint32_t wire_bytes, unsigned n_pkts);

/* Packet mode: offers a packet of wire_bytes arriving at now_ns. Fills *out (start, finish,
 * deliver) unless the verdict is EMU_DROP_QUEUE; a lost packet still used the channel. */
enum emu_verdict emu_shaper_offer(struct emu_shaper *s, int64_t now_ns, uint32_t wire_bytes,
                                  struct emu_sched *out);

/* Would a packet of wire_bytes arriving at now_ns find the queue full? Changes nothing that
 * matters: lets a caller decide before work it cannot undo (header compression). */
int emu_shaper_would_drop(struct emu_shaper *s, int64_t now_ns, uint32_t wire_bytes);

/* Stream mode: schedules wire_bytes in n_pkts packets with rate, delay and jitter only
 * (never drops). */
void emu_shaper_schedule(struct emu_shaper *s, int64_t now_ns, uint32_t wire_bytes, unsigned n_pkts,
                         struct emu_sched *out);

/* How long a packet arriving now would wait before it starts (0 if the channel is free). */
int64_t emu_shaper_backlog_ns(const struct emu_shaper *s, int64_t now_ns);

/* Packets and bytes admitted that have not started by now_ns. */
void emu_shaper_queue(struct emu_shaper *s, int64_t now_ns, uint32_t *pkts, uint64_t *bytes);

/* Uniform random number in [0, 1e6), from the shaper's generator. */
uint32_t emu_shaper_rand_ppm(struct emu_shaper *s);

const char *emu_verdict_name(enum emu_verdict v);

#endif
