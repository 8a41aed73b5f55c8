/* pacer.c -- the link's window from its acknowledged delivery rate and round trip (pacer.h).
 * Workload: one call per link write and per ACK, a few per second to a few thousand. */
#include "proxy/pacer.h"

#include <errno.h>
#include <string.h>

void pacer_init(struct pacer *p) { memset(p, 0, sizeof *p); }

void pacer_restart(struct pacer *p, uint64_t at)
{
    pacer_init(p);
    p->sent = p->acked = at;
}

void pacer_on_send(struct pacer *p, uint64_t n, uint64_t now_ns)
{
    if (!n)
        return;
    p->sent += n;
    if (p->rec_len == PACER_RECORDS)
        return; /* the oldest are the next to be acknowledged: keep them, time this one not */
    p->rec[(p->rec_head + p->rec_len) % PACER_RECORDS].end = p->sent;
    p->rec[(p->rec_head + p->rec_len) % PACER_RECORDS].t_ns = now_ns;
    p->rec_len++;
}

void pacer_note_blocked(struct pacer *p) { p->busy = true; }

uint64_t pacer_rate(const struct pacer *p)
{
    uint64_t best = 0;
    for (int i = 0; i < PACER_RATE_SAMPLES; i++)
        if (p->rate_Bps[i] > best)
            best = p->rate_Bps[i];
    return best;
}

uint64_t pacer_rtt_ns(const struct pacer *p) { return p->min_rtt_ns; }

/* The queue a window builds hides the link's own round trip: every 10 s, in flight drops
 * to the margin for a round trip (at least 200 ms) so the minimum can be seen again. */
static void probe_rtt(struct pacer *p, uint64_t now_ns)
{
    if (p->phase != PACER_PROBE_RTT) {
        if (!p->min_rtt_ns || now_ns - p->min_rtt_at_ns <= PACER_RTT_WINDOW_NS || p->phase == PACER_STARTUP)
            return;
        p->phase = PACER_PROBE_RTT;
        p->probe_until_ns = 0;
        p->probe_min_rtt_ns = 0;
        return;
    }
    if (!p->probe_until_ns && p->sent - p->acked <= pacer_window(p)) {
        p->probe_until_ns = now_ns + (p->min_rtt_ns > 200000000u ? p->min_rtt_ns : 200000000u);
        p->probe_min_rtt_ns = 0; /* only samples of the drained link count */
    } else if (p->probe_until_ns && now_ns >= p->probe_until_ns && p->probe_min_rtt_ns) {
        p->phase = PACER_STEADY;
        p->min_rtt_ns = p->probe_min_rtt_ns;
        p->min_rtt_at_ns = now_ns;
    }
}

int pacer_on_ack(struct pacer *p, uint64_t acked, uint64_t now_ns)
{
    if (acked > p->sent || acked < p->acked)
        return -EBADMSG;
    if (!p->measured) {
        p->measured = true;
        p->sample_start_ns = now_ns;
        p->sample_start_acked = acked;
    }
    /* RTT: from the write that this ACK completes. */
    while (p->rec_len && p->rec[p->rec_head].end <= acked) {
        uint64_t rtt = now_ns - p->rec[p->rec_head].t_ns;
        rtt = rtt ? rtt : 1;
        if (p->phase == PACER_PROBE_RTT) {
            if (p->probe_until_ns && (!p->probe_min_rtt_ns || rtt < p->probe_min_rtt_ns))
                p->probe_min_rtt_ns = rtt;
        } else if (!p->min_rtt_ns || rtt <= p->min_rtt_ns) {
            p->min_rtt_ns = rtt;
            p->min_rtt_at_ns = now_ns;
        }
        p->rec_head = (p->rec_head + 1) % PACER_RECORDS;
        p->rec_len--;
    }
    p->acked = acked;
    /* Rate: bytes acknowledged over at least two round trips, 10 ms and 4 KiB (or 1 s: the
     * peer reads and acknowledges in lumps, and a sample of a few lumps is coarse), kept
     * only if the window was full at some point in it: otherwise it measures the
     * application, not the link. */
    uint64_t span = now_ns - p->sample_start_ns, min_span = 2 * p->min_rtt_ns > 10000000u ? 2 * p->min_rtt_ns : 10000000u;
    if (acked - p->sample_start_acked < PACER_SAMPLE_BYTES && span < 1000000000u)
        min_span = UINT64_MAX;
    if (span >= min_span) {
        if (p->busy && p->phase != PACER_PROBE_RTT) {
            uint64_t rate = (acked - p->sample_start_acked) * 1000000000ull / span;
            p->rate_Bps[p->rate_next++ % PACER_RATE_SAMPLES] = rate;
            if (p->phase == PACER_STARTUP) { /* done growing: two samples without a quarter more */
                if (rate > p->full_rate + p->full_rate / 4) {
                    p->full_rate = rate;
                    p->flat_samples = 0;
                } else if (++p->flat_samples >= 2) {
                    p->phase = PACER_STEADY;
                }
            }
        }
        p->sample_start_ns = now_ns;
        p->sample_start_acked = acked;
        p->busy = false;
    }
    probe_rtt(p, now_ns);
    return 0;
}

size_t pacer_window(const struct pacer *p)
{
    uint64_t rate = pacer_rate(p);
    if (p->measured && p->min_rtt_ns && p->min_rtt_ns < PACER_LOCAL_RTT_NS)
        return PACER_MAX_WINDOW; /* a link this close has no queue worth keeping: the kernel's bound will do */
    if (!p->measured || !rate || !p->min_rtt_ns)
        return PACER_START_WINDOW;
    /* One bandwidth-delay product, an eighth more so that a rate the window held back can
     * show (twice it while starting), and a margin of 10 ms of data (at least
     * PACER_MIN_WINDOW) for writes in progress. Every byte beyond the link's own
     * capacity waits in a queue in front of the next key press. */
    uint64_t margin = rate / 100 > PACER_MIN_WINDOW ? rate / 100 : PACER_MIN_WINDOW;
    uint64_t bdp = rate * p->min_rtt_ns / 1000000000ull;
    if (p->phase == PACER_PROBE_RTT) /* half the link's own capacity: whatever queued drains */
        return (size_t)(margin > bdp / 2 ? margin : bdp / 2);
    uint64_t w = (p->phase == PACER_STARTUP ? 2 * bdp : bdp + bdp / PACER_HEADROOM) + margin;
    return w > PACER_MAX_WINDOW ? PACER_MAX_WINDOW : (size_t)w;
}

size_t pacer_allowance(const struct pacer *p)
{
    uint64_t inflight = p->sent - p->acked, w = pacer_window(p);
    return inflight >= w ? 0 : (size_t)(w - inflight);
}
