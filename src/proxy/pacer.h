/* pacer.h -- how much the link may carry now, so that data waits inside tincan (where
 * the scheduler can still put a key press ahead of an image) and not in a queue beyond
 * it: the kernel's socket buffers, a relay's, a modem's or a router's. The peer
 * acknowledges the link bytes it has read (ACK frames); from the acknowledgements the
 * pacer models the path as BBR does (the bottleneck's delivery rate and the least round
 * trip), keeps about one bandwidth-delay product and a packet in flight, probes for more
 * rate with small steps that grow while they find it, and drops its rate to what was
 * delivered when the round trip shows a queue (a delay signal, as in LEDBAT and Copa).
 * Pure: no I/O, times are given. docs/DESIGN.md, "The pacer", says why. */
#ifndef TINCAN_PACER_H
#define TINCAN_PACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PACER_RECORDS 256            /* writes remembered for RTT samples */
#define PACER_RATE_SAMPLES 4         /* rate: the highest of the last samples */
#define PACER_START_WINDOW (4u * 1024)  /* in flight before the rate is measured */
#define PACER_MIN_WINDOW 256u         /* never less in flight */
#define PACER_MAX_WINDOW (64u << 20)
#define PACER_LOCAL_RTT_NS 2000000u   /* a round trip under 2 ms: no pacing (a LAN, this machine) */
#define PACER_SAMPLE_BYTES 4096u     /* a rate sample spans this much at least (or 1 s) */
#define PACER_PACKET 1500u           /* a packet: the margin's unit, the least probe, the queue that counts */
#define PACER_RTT_WINDOW_NS (10ull * 1000000000ull) /* min RTT: forgotten after 10 s */
#define PACER_HEADROOM 8              /* steady window: BDP + BDP / this + margin */
#define PACER_SMALL_RESERVE 512u     /* small writes (a pen, a key) may pass a full window by this much */
#define PACER_PROBE_EVERY 4          /* a probe every 4 samples while none finds more rate */

enum pacer_phase { PACER_STARTUP, PACER_CRUISE, PACER_PROBE, PACER_DRAIN, PACER_PROBE_RTT };

struct pacer {
    uint64_t sent, acked;            /* link bytes written / acknowledged by the peer */
    bool measured;                   /* an ACK has arrived: the window applies */
    struct { uint64_t end, t_ns; } rec[PACER_RECORDS];
    uint32_t rec_head, rec_len;
    uint64_t min_rtt_ns, min_rtt_at_ns; /* the least round trip, and when it was seen */
    uint64_t probe_until_ns;         /* probe_rtt: when it ends (0: not yet drained) */
    uint64_t probe_min_rtt_ns;       /* ... the least round trip seen in it */
    uint64_t sample_rtt_ns;          /* the least round trip in the current rate sample */
    uint64_t rate_Bps[PACER_RATE_SAMPLES];
    uint32_t rate_next;
    uint64_t sample_start_ns, sample_start_acked;
    bool busy;                       /* data was waiting while the window was full: rate samples count */
    enum pacer_phase phase;
    uint64_t full_rate;              /* startup: the rate that has not grown by a quarter since */
    unsigned flat_samples;           /* ... for this many samples */
    unsigned since_probe;            /* samples since the last probe */
    uint64_t probe_bytes;            /* in flight beyond the model while probing (and less while draining) */
    uint64_t probe_base_Bps;         /* the rate before the probe */
    uint64_t queued_samples;         /* samples that showed a queue (statistics) */
};

void pacer_init(struct pacer *p);
/* A new link, perhaps another path: nothing measured, `at` bytes written and acknowledged. */
void pacer_restart(struct pacer *p, uint64_t at);
/* n link bytes were written at now_ns. */
void pacer_on_send(struct pacer *p, uint64_t n, uint64_t now_ns);
/* The peer says it has read `acked` link bytes (a running total). -EBADMSG if impossible. */
int pacer_on_ack(struct pacer *p, uint64_t acked, uint64_t now_ns);
/* The scheduler wanted to send more than the window allowed. */
void pacer_note_blocked(struct pacer *p);
/* Link bytes that may be written now (beyond those in flight). */
size_t pacer_allowance(const struct pacer *p);
/* ... for channels with little queued, served first (a key press, a pen's drawing): the
 * window and PACER_SMALL_RESERVE, so that they need not wait for the next ACK behind bulk. */
size_t pacer_allowance_small(const struct pacer *p);
/* The estimates, 0 until measured. */
uint64_t pacer_rate(const struct pacer *p);
uint64_t pacer_rtt_ns(const struct pacer *p);
size_t pacer_window(const struct pacer *p);

#endif
