/* pacer.c -- the link's window from its acknowledged delivery rate and round trip (pacer.h).
 * Must not do I/O or read a clock. Workload: one call per link write and per ACK, a few per
 * second to a few thousand. */
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

static void rtt_sample(struct pacer *p, uint64_t rtt, uint64_t now_ns)
{
    if (p->phase == PACER_PROBE_RTT) {
        if (p->probe_until_ns && (!p->probe_min_rtt_ns || rtt < p->probe_min_rtt_ns))
            p->probe_min_rtt_ns = rtt;
    } else if (!p->min_rtt_ns || rtt <= p->min_rtt_ns) {
        p->min_rtt_ns = rtt;
        p->min_rtt_at_ns = now_ns;
    }
    if (!p->sample_rtt_ns || rtt < p->sample_rtt_ns)
        p->sample_rtt_ns = rtt;
}

/* The queue a window builds hides the link's own round trip: every 10 s, in flight drops
 * to half the model's product (at least its margin) until what was queued has drained, and
 * stays there a round trip (at least 200 ms), so the minimum can be seen again (BBR's
 * ProbeRTT). */
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
        p->phase = PACER_CRUISE;
        p->since_probe = 0;
        p->min_rtt_ns = p->probe_min_rtt_ns;
        p->min_rtt_at_ns = now_ns;
    }
}

/* A packet's time at the rate, and the queue that counts as one: the least round trip of a
 * sample this far above the path's own means data waits somewhere. */
static uint64_t queue_limit_ns(const struct pacer *p, uint64_t rate)
{
    uint64_t pkt_ns = rate ? PACER_PACKET * 1000000000ull / rate : 0;
    uint64_t lim = pkt_ns + pkt_ns / 2;
    return lim > 10000000u ? lim : 10000000u;
}

/* One rate sample ended, the link having been busy: the model moves. */
static void on_rate_sample(struct pacer *p, uint64_t rate)
{
    uint64_t before = pacer_rate(p);
    bool queued = p->min_rtt_ns && p->sample_rtt_ns > p->min_rtt_ns + queue_limit_ns(p, before);
    if (queued && p->phase != PACER_STARTUP) {
        /* A queue: the rate believed is more than the link now carries (it slowed down, or
         * another flow shares it). Believe what was delivered, and drain what waits. */
        p->queued_samples++;
        for (int i = 0; i < PACER_RATE_SAMPLES; i++)
            p->rate_Bps[i] = rate;
        p->phase = PACER_DRAIN;
        p->since_probe = 0;
        return;
    }
    p->rate_Bps[p->rate_next++ % PACER_RATE_SAMPLES] = rate;
    switch (p->phase) {
    case PACER_STARTUP: /* done growing: two samples without a quarter more */
        if (rate > p->full_rate + p->full_rate / 4) {
            p->full_rate = rate;
            p->flat_samples = 0;
        } else if (++p->flat_samples >= 2 || queued) {
            p->phase = PACER_DRAIN; /* what startup's 2x put in the queue */
        }
        break;
    case PACER_PROBE:
        /* Found more (the delivery rate rose by half of what the probe could give): probe
         * again, twice as far; else take the probe's queue back and wait. */
        if (p->min_rtt_ns && rate > p->probe_base_Bps + p->probe_bytes * 1000000000ull / p->min_rtt_ns / 2) {
            p->probe_bytes *= 2;
            p->probe_base_Bps = rate;
        } else {
            p->phase = PACER_DRAIN;
            p->since_probe = 0;
        }
        break;
    case PACER_DRAIN:
        p->phase = PACER_CRUISE;
        break;
    case PACER_CRUISE:
        if (++p->since_probe >= PACER_PROBE_EVERY) {
            p->phase = PACER_PROBE;
            p->probe_base_Bps = pacer_rate(p);
            /* A quarter product (BBR's gain of 1.25), but at most two packets: on a long
             * link a quarter product is a long queue in front of a key press. */
            p->probe_bytes = p->probe_base_Bps * p->min_rtt_ns / 1000000000ull / 4;
            if (p->probe_bytes > 2 * PACER_PACKET)
                p->probe_bytes = 2 * PACER_PACKET;
            if (p->probe_bytes < PACER_MIN_WINDOW)
                p->probe_bytes = PACER_MIN_WINDOW;
        }
        break;
    case PACER_PROBE_RTT:
        break;
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
        rtt_sample(p, rtt ? rtt : 1, now_ns);
        p->rec_head = (p->rec_head + 1) % PACER_RECORDS;
        p->rec_len--;
    }
    p->acked = acked;
    /* Rate: bytes acknowledged over at least a round trip, 10 ms and 4 KiB (or 1 s: the peer
     * reads and acknowledges in lumps, and a sample of a few lumps is coarse), kept only if
     * the window was full at some point in it: otherwise it measures the application, not
     * the link. */
    uint64_t span = now_ns - p->sample_start_ns, min_span = p->min_rtt_ns > 10000000u ? p->min_rtt_ns : 10000000u;
    if (acked - p->sample_start_acked < PACER_SAMPLE_BYTES && span < 1000000000u)
        min_span = UINT64_MAX;
    if (span >= min_span) {
        if (p->busy && p->phase != PACER_PROBE_RTT)
            on_rate_sample(p, (acked - p->sample_start_acked) * 1000000000ull / span);
        p->sample_start_ns = now_ns;
        p->sample_start_acked = acked;
        p->sample_rtt_ns = 0;
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
    /* One bandwidth-delay product (its round trip holds the service of the write it timed
     * and the ACK's lateness) and a packet, or 2 ms of data on a fast link, for the link's
     * lumps: every byte beyond waits in a queue in front of the next key press. */
    uint64_t bdp = rate * p->min_rtt_ns / 1000000000ull;
    uint64_t margin = rate / 200 + PACER_PACKET / 2;
    uint64_t w = bdp + bdp / PACER_HEADROOM + margin;
    switch (p->phase) {
    case PACER_PROBE_RTT: w = margin > bdp / 2 ? margin : bdp / 2; break;
    case PACER_STARTUP: w = 2 * bdp + margin; break;
    case PACER_PROBE: w += p->probe_bytes; break;
    case PACER_DRAIN: w = bdp + margin; break;
    case PACER_CRUISE: break;
    }
    if (w < PACER_MIN_WINDOW)
        w = PACER_MIN_WINDOW;
    return w > PACER_MAX_WINDOW ? PACER_MAX_WINDOW : (size_t)w;
}

size_t pacer_allowance(const struct pacer *p)
{
    uint64_t inflight = p->sent - p->acked, w = pacer_window(p);
    if (inflight >= w)
        return 0;
    return (size_t)(w - inflight);
}

size_t pacer_allowance_small(const struct pacer *p)
{
    uint64_t inflight = p->sent - p->acked, w = pacer_window(p) + PACER_SMALL_RESERVE;
    return inflight >= w ? 0 : (size_t)(w - inflight);
}
