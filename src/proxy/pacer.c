/* pacer.c -- the link's pacing rate and window from its acknowledged delivery rate and round
 * trip (pacer.h). Must not do I/O or read a clock. Workload: one call per link write and per
 * ACK, and one per loop turn while bulk waits, a few per second to a few thousand. */
#include "proxy/pacer.h"

#include <errno.h>
#include <string.h>

#define NS 1000000000ull

void pacer_init(struct pacer *p) { memset(p, 0, sizeof *p); }

void pacer_restart(struct pacer *p, uint64_t at)
{
    pacer_init(p);
    p->sent = p->acked = at;
}

uint64_t pacer_rate(const struct pacer *p)
{
    uint64_t best = 0;
    for (int i = 0; i < PACER_RATE_SAMPLES; i++)
        if (p->rate_Bps[i] > best)
            best = p->rate_Bps[i];
    return best;
}

uint64_t pacer_rtt_ns(const struct pacer *p) { return p->min_rtt_ns; }

static bool local_link(const struct pacer *p) { return p->measured && p->min_rtt_ns && p->min_rtt_ns < PACER_LOCAL_RTT_NS; }

static uint64_t bdp_bytes(const struct pacer *p) { return pacer_rate(p) * p->min_rtt_ns / NS; }

/* How long a rate sample lasts at rate: a round trip, 10 ms and PACER_SAMPLE_BYTES (pacer_on_ack). */
static uint64_t sample_span_ns(const struct pacer *p, uint64_t rate)
{
    uint64_t span = p->min_rtt_ns > 10000000u ? p->min_rtt_ns : 10000000u, bytes_ns = PACER_SAMPLE_BYTES * NS / rate;
    return span > bytes_ns ? span : bytes_ns < NS ? bytes_ns : NS;
}

uint64_t pacer_pacing_rate(const struct pacer *p)
{
    uint64_t rate = pacer_rate(p);
    if (!p->measured || !rate || !p->min_rtt_ns || local_link(p))
        return 0; /* the window alone: the start's, or none worth keeping */
    if (p->phase == PACER_STARTUP)
        return 2 * rate;
    if (p->phase == PACER_PROBE && !p->since_probe) /* its first sample: probe_bytes more over it */
        return rate + p->probe_bytes * NS / sample_span_ns(p, rate);
    /* A little above the model: what is delivered never exceeds what is sent, so at the
     * model's rate every sample that ran a little short (a late wake-up, an ACK's lump, a
     * retransmission) would pull it down for good; above it the queue grows slowly, and the
     * round trip shows it and drains it. */
    return rate + rate / PACER_CRUISE_EXCESS;
}

size_t pacer_window(const struct pacer *p)
{
    uint64_t rate = pacer_rate(p);
    if (local_link(p))
        return PACER_MAX_WINDOW; /* a link this close has no queue worth keeping: the kernel's bound will do */
    if (!p->measured || !rate || !p->min_rtt_ns)
        return PACER_START_WINDOW;
    /* Only a cap: the clock decides when bytes go. A product and a half (its round trip
     * holds the service of the write it timed and the ACK's lateness) and 5 ms of data and
     * half a packet for the link's lumps: room to keep sending through an ACK's lateness or
     * a retransmission, and a bound on what waits when the rate falls under the model. */
    uint64_t bdp = bdp_bytes(p), margin = rate / 200 + PACER_PACKET / 2;
    uint64_t w = bdp + bdp * 3 / 16 + margin;
    if (p->phase == PACER_STARTUP)
        w = 2 * bdp + margin;
    else if (p->phase == PACER_PROBE)
        w += p->probe_bytes;
    else if (p->phase == PACER_PROBE_RTT)
        w = margin > bdp / 2 ? margin : bdp / 2;
    if (w < PACER_MIN_WINDOW)
        w = PACER_MIN_WINDOW;
    return w > PACER_MAX_WINDOW ? PACER_MAX_WINDOW : (size_t)w;
}

/* Bulk goes in lumps of whole segments: one, or 2 ms at the rate on a fast link (the loop's
 * timer has a millisecond's grain), and never more than half the window at once. A lump of
 * whole segments leaves no short packet behind it (a 1500-byte write is a segment and 52
 * bytes, a header each). */
static uint64_t quantum(const struct pacer *p, uint64_t rate)
{
    uint64_t q = rate * PACER_QUANTUM_NS / NS / PACER_SEGMENT * PACER_SEGMENT, half = pacer_window(p) / 2;
    if (q < PACER_SEGMENT)
        q = PACER_SEGMENT;
    return q < half ? q : half > PACER_MIN_WINDOW / 2 ? half : PACER_MIN_WINDOW / 2;
}

/* The tokens at now: they grow at the pacing rate up to two quanta (an idle link saves no
 * more), and a probe's burst above that is kept until spent. */
static int64_t tokens_at(const struct pacer *p, uint64_t now_ns)
{
    uint64_t rate = pacer_pacing_rate(p);
    if (!rate || now_ns <= p->tokens_ns)
        return p->tokens;
    int64_t cap = (int64_t)(2 * quantum(p, rate));
    if (p->tokens >= cap)
        return p->tokens;
    uint64_t dt = now_ns - p->tokens_ns;
    int64_t t = p->tokens + (int64_t)(rate * (dt < NS ? dt : NS) / NS);
    return t < cap ? t : cap;
}

/* Brings the tokens to now at the current rate: before the rate or the phase changes. */
static void settle(struct pacer *p, uint64_t now_ns)
{
    p->tokens = tokens_at(p, now_ns);
    if (now_ns > p->tokens_ns)
        p->tokens_ns = now_ns;
}

void pacer_on_send(struct pacer *p, uint64_t n, uint64_t now_ns)
{
    if (!n)
        return;
    p->sent += n;
    if (pacer_pacing_rate(p)) {
        /* Every byte is charged, a small write's too: bulk then waits for it. A debt is
         * bounded by two products, so a burst of small writes cannot stall bulk for long. */
        settle(p, now_ns);
        int64_t floor = -(int64_t)(2 * bdp_bytes(p) + PACER_PACKET);
        p->tokens = p->tokens - (int64_t)n < floor ? floor : p->tokens - (int64_t)n;
    }
    if (p->rec_len == PACER_RECORDS)
        return; /* the oldest are the next to be acknowledged: keep them, time this one not */
    p->rec[(p->rec_head + p->rec_len) % PACER_RECORDS].end = p->sent;
    p->rec[(p->rec_head + p->rec_len) % PACER_RECORDS].t_ns = now_ns;
    p->rec[(p->rec_head + p->rec_len) % PACER_RECORDS].len = n;
    p->rec_len++;
}

void pacer_note_blocked(struct pacer *p) { p->busy = true; }

/* A round trip, and the same without the service of the write it timed (its bytes at the
 * rate): a lump's last byte waits for the lump itself, which is no queue. The first sizes
 * the window; the second, against the least of its kind, tells a queue. */
static void rtt_sample(struct pacer *p, uint64_t rtt, uint64_t qrtt, uint64_t now_ns)
{
    if (p->phase == PACER_PROBE_RTT) {
        if (p->probe_until_ns && (!p->probe_min_rtt_ns || rtt < p->probe_min_rtt_ns))
            p->probe_min_rtt_ns = rtt;
        if (p->probe_until_ns && (!p->probe_min_qrtt_ns || qrtt < p->probe_min_qrtt_ns))
            p->probe_min_qrtt_ns = qrtt;
    } else {
        if (!p->min_rtt_ns || rtt <= p->min_rtt_ns) {
            p->min_rtt_ns = rtt;
            p->min_rtt_at_ns = now_ns;
        }
        if (!p->min_qrtt_ns || qrtt < p->min_qrtt_ns)
            p->min_qrtt_ns = qrtt;
    }
    if (!p->sample_qrtt_ns || qrtt < p->sample_qrtt_ns)
        p->sample_qrtt_ns = qrtt;
}

/* A queue that came before the least round trip was seen (the start's window, a drain too
 * small) hides the link's own: every 10 s without a new least, in flight drops to half the
 * model's product (at least its margin) until what was queued has drained, and stays there a
 * round trip (at least 200 ms), so the minimum can be seen again (BBR's ProbeRTT). */
static void probe_rtt(struct pacer *p, uint64_t now_ns)
{
    if (p->phase != PACER_PROBE_RTT) {
        if (!p->min_rtt_ns || now_ns - p->min_rtt_at_ns <= PACER_RTT_WINDOW_NS || p->phase == PACER_STARTUP)
            return;
        p->phase = PACER_PROBE_RTT;
        p->probe_until_ns = 0;
        p->probe_min_rtt_ns = p->probe_min_qrtt_ns = 0;
        return;
    }
    if (!p->probe_until_ns && p->sent - p->acked <= pacer_window(p)) {
        p->probe_until_ns = now_ns + (p->min_rtt_ns > 200000000u ? p->min_rtt_ns : 200000000u);
        p->probe_min_rtt_ns = p->probe_min_qrtt_ns = 0; /* only samples of the drained link count */
    } else if (p->probe_until_ns && now_ns >= p->probe_until_ns && p->probe_min_rtt_ns) {
        p->phase = PACER_CRUISE;
        p->since_probe = 0;
        p->min_rtt_ns = p->probe_min_rtt_ns;
        p->min_qrtt_ns = p->probe_min_qrtt_ns;
        p->min_rtt_at_ns = now_ns;
    }
}

/* A packet's time at the rate, and the queue that counts as one: the least round trip of a
 * sample this far above the path's own means data waits somewhere. */
static uint64_t queue_limit_ns(uint64_t rate)
{
    uint64_t pkt_ns = rate ? PACER_PACKET * NS / rate : 0;
    uint64_t lim = pkt_ns + pkt_ns / 2;
    return lim > 10000000u ? lim : 10000000u;
}

/* A debt of the bytes a queue of excess_ns holds at rate: bulk waits until they have drained. */
static void drain(struct pacer *p, uint64_t excess_ns, uint64_t rate)
{
    int64_t q = (int64_t)(rate * excess_ns / NS / 2), floor = -(int64_t)(2 * bdp_bytes(p) + PACER_PACKET);
    int64_t t = (p->tokens < 0 ? p->tokens : 0) - q;
    p->tokens = t < floor ? floor : t;
    p->drained = q > 0;
}

static void start_probe(struct pacer *p, uint64_t bytes)
{
    p->phase = PACER_PROBE;
    p->since_probe = 0;
    p->probe_base_Bps = pacer_rate(p);
    p->probe_bytes = bytes; /* sent beyond the rate over one sample: its delivery shows whether the link had room */
}

/* One rate sample of span_ns ended, the link having been busy: the model moves. */
static void on_rate_sample(struct pacer *p, uint64_t rate, uint64_t span_ns, bool draining)
{
    uint64_t before = pacer_rate(p), excess = p->sample_qrtt_ns > p->min_qrtt_ns ? p->sample_qrtt_ns - p->min_qrtt_ns : 0;
    bool queued = p->min_qrtt_ns && excess > queue_limit_ns(before);
    if (queued && p->phase != PACER_STARTUP && !draining) {
        /* A queue: the rate believed is more than the link now carries (it slowed down, or
         * another flow shares it). Believe what was delivered (the link was full), and hold
         * back what waits. The sample after is spent draining: its queue is the same one. */
        p->queued_samples++;
        if (rate < before - before / PACER_SLOWER) /* the link slowed down: believe it at once */
            for (int i = 0; i < PACER_RATE_SAMPLES; i++)
                p->rate_Bps[i] = rate;
        drain(p, excess, rate);
        p->phase = PACER_CRUISE;
        p->since_probe = 0;
        return;
    }
    p->rate_Bps[p->rate_next++ % PACER_RATE_SAMPLES] = rate;
    uint64_t bdp = bdp_bytes(p);
    switch (p->phase) {
    case PACER_STARTUP: /* done growing: two samples without a quarter more */
        if (rate > p->full_rate + p->full_rate / 4) {
            p->full_rate = rate;
            p->flat_samples = 0;
        } else if (++p->flat_samples >= 2 || queued) {
            p->phase = PACER_CRUISE;
            drain(p, excess, rate); /* what startup's 2x put in the queue */
        }
        break;
    case PACER_PROBE:
        /* The probe's bytes were delivered on top of the rate within its sample or the one
         * after (half of them at least): the link had room. Probe again, twice as far (an
         * exponential search, as slow start); else cruise: a queue the probe left is seen
         * by the round trip and drained. */
        if (rate > p->probe_base_Bps + p->probe_bytes * NS / span_ns / 2) {
            /* twice as far, but at most the rate's own worth over a sample (a gain of 2) */
            uint64_t next = 2 * p->probe_bytes, most = rate * sample_span_ns(p, rate) / NS;
            start_probe(p, next < most ? next : most > PACER_MIN_WINDOW ? most : PACER_MIN_WINDOW);
        } else if (++p->since_probe >= 2) {
            p->phase = PACER_CRUISE;
            p->since_probe = 0;
        }
        break;
    case PACER_PROBE_RTT:
        break;
    case PACER_CRUISE:
        if (++p->since_probe >= PACER_PROBE_EVERY) {
            /* A quarter product (BBR's gain of 1.25), but at most two packets: on a long
             * link a quarter product is a long queue in front of a key press. */
            uint64_t b = bdp / 4;
            b = b > 2 * PACER_PACKET ? 2 * PACER_PACKET : b < PACER_MIN_WINDOW ? PACER_MIN_WINDOW : b;
            start_probe(p, b);
        }
        break;
    }
}

int pacer_on_ack(struct pacer *p, uint64_t acked, uint64_t now_ns)
{
    if (acked > p->sent || acked < p->acked)
        return -EBADMSG;
    settle(p, now_ns); /* at the rate until now, whatever the ACK changes */
    if (!p->measured) {
        p->measured = true;
        p->sample_start_ns = now_ns;
        p->sample_start_acked = acked;
    }
    /* RTT: from the write that this ACK completes. */
    uint64_t rate = pacer_rate(p);
    while (p->rec_len && p->rec[p->rec_head].end <= acked) {
        uint64_t rtt = now_ns - p->rec[p->rec_head].t_ns, serve = rate ? p->rec[p->rec_head].len * NS / rate : 0;
        rtt = rtt ? rtt : 1;
        /* at most half the round trip: a rate believed too low (the link just sped up) must
         * not make every round trip look like none */
        rtt_sample(p, rtt, rtt - (serve < rtt / 2 ? serve : rtt / 2), now_ns);
        p->rec_head = (p->rec_head + 1) % PACER_RECORDS;
        p->rec_len--;
    }
    p->acked = acked;
    /* Rate: bytes acknowledged over at least a round trip, 10 ms and 4 KiB (or 1 s: the peer
     * reads and acknowledges in lumps, and a sample of a few lumps is coarse), kept only if
     * bulk waited on the pacer at some point in it: otherwise it measures the application,
     * not the link. */
    uint64_t span = now_ns - p->sample_start_ns, min_span = p->min_rtt_ns > 10000000u ? p->min_rtt_ns : 10000000u;
    if (acked - p->sample_start_acked < PACER_SAMPLE_BYTES && span < NS)
        min_span = UINT64_MAX;
    if (span >= min_span) {
        bool draining = p->drained;
        p->drained = false;
        if (p->busy && p->phase != PACER_PROBE_RTT)
            on_rate_sample(p, (acked - p->sample_start_acked) * NS / span, span, draining);
        p->sample_start_ns = now_ns;
        p->sample_start_acked = acked;
        p->sample_qrtt_ns = 0;
        p->busy = false;
    }
    probe_rtt(p, now_ns);
    return 0;
}

size_t pacer_allowance(const struct pacer *p, uint64_t now_ns)
{
    uint64_t inflight = p->sent - p->acked, w = pacer_window(p), rate = pacer_pacing_rate(p);
    if (inflight >= w)
        return 0;
    uint64_t room = w - inflight;
    if (!rate)
        return (size_t)room;
    int64_t t = tokens_at(p, now_ns), q = (int64_t)quantum(p, rate);
    if (t < q)
        return 0; /* not a lump yet: pacer_next_send_ns */
    t = q >= PACER_SEGMENT ? t / PACER_SEGMENT * PACER_SEGMENT : t; /* whole segments */
    return (size_t)((uint64_t)t < room ? (uint64_t)t : room);
}

size_t pacer_allowance_small(const struct pacer *p)
{
    uint64_t inflight = p->sent - p->acked, w = pacer_window(p) + PACER_SMALL_RESERVE;
    return inflight >= w ? 0 : (size_t)(w - inflight);
}

uint64_t pacer_next_send_ns(const struct pacer *p, uint64_t now_ns)
{
    uint64_t rate = pacer_pacing_rate(p);
    if (!rate)
        return 0;
    int64_t t = tokens_at(p, now_ns), q = (int64_t)quantum(p, rate);
    if (t >= q)
        return 0;
    return now_ns + ((uint64_t)(q - t) * NS + rate - 1) / rate;
}
