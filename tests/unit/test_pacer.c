/* test_pacer.c -- the link window (pacer.c) against a simulated path: a sender that writes
 * whatever the window allows, a kernel below it that cuts writes into packets of one MSS
 * (sending a short one at once, as with TCP_NODELAY), a drop-tail-free bottleneck whose rate
 * may follow a trace, a propagation delay each way, and a receiver that acknowledges as
 * session.c does (512 bytes at most every 5 ms, 4 KiB at once, else 50 ms after the first).
 * Judged as bench/latency judges tincan: the link kept busy, and what a pen event would find
 * waiting at the bottleneck (sampled 50 times a second) at most about two packet times. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "proxy/pacer.h"
#include "test.h"

#define MS 1000000ull
#define S 1000000000ull
#define MSS 1448u
#define HDR 52u                      /* TCP/IP header bytes of a packet, with timestamps */
#define QMAX 200000u

struct phase { uint64_t until_ns, rate_Bps; };   /* the bottleneck's rate until until_ns (then the next) */

struct sim {
    uint64_t delay_ns, step_ns;
    const struct phase *trace;       /* repeating; the last phase's until_ns is the period */
    unsigned phases;
    uint64_t kernel_unsent;          /* written, not yet cut into packets (never: NODELAY) */
    /* the bottleneck: packets queued and the one in service */
    struct { uint64_t end, wire, arrive_ns; } q[QMAX];
    size_t qh, ql;
    uint64_t serv_left;              /* wire bytes of the head packet still to send */
    uint64_t credit;                 /* the bottleneck's unspent time, in bytes x 1e9 */
    struct { uint64_t end, at_ns; } fly[QMAX];   /* sent, propagating to the receiver */
    size_t fh, fl;
    uint64_t received, acked_sent, last_ack_ns, first_unacked_ns;
    struct { uint64_t acked, at_ns; } acks[QMAX];
    size_t ah, al;
    /* results */
    uint64_t busy_ns, idle_ns;       /* bottleneck with / without a packet while the sender had data */
    uint64_t samples[100000], n_samples;   /* backlog in ns, every 20 ms */
    uint64_t packets, small_packets;
};

static uint64_t rate_at(const struct sim *s, uint64_t now)
{
    uint64_t period = s->trace[s->phases - 1].until_ns, t = now % period;
    for (unsigned i = 0; i < s->phases; i++)
        if (t < s->trace[i].until_ns)
            return s->trace[i].rate_Bps;
    return s->trace[s->phases - 1].rate_Bps;
}

/* Backlog in ns at the current rate: what a packet arriving now would wait. */
static uint64_t backlog_ns(const struct sim *s, uint64_t now)
{
    uint64_t bytes = s->serv_left;
    for (size_t i = 1; i < s->ql; i++)
        bytes += s->q[(s->qh + i) % QMAX].wire;
    return bytes * S / rate_at(s, now);
}

static void enqueue(struct sim *s, uint64_t end, uint64_t payload, uint64_t now)
{
    if (s->ql == QMAX)
        return;
    s->q[(s->qh + s->ql) % QMAX].end = end;
    s->q[(s->qh + s->ql) % QMAX].wire = payload + HDR;
    s->q[(s->qh + s->ql) % QMAX].arrive_ns = now;
    if (!s->ql)
        s->serv_left = payload + HDR;
    s->ql++;
    s->packets++;
    s->small_packets += payload < MSS / 2;
}

/* Runs dur_ns from t0; the sender always has data. Returns the bytes the receiver read. */
static uint64_t run(struct sim *s, struct pacer *p, uint64_t dur_ns, uint64_t t0, bool measure)
{
    uint64_t step = s->step_ns;
    for (uint64_t now = t0; now < t0 + dur_ns; now += step) {
        /* the sender: all the window allows, in one write; the kernel cuts it into packets */
        size_t allow = pacer_allowance(p);
        if (allow) {
            if (allow > 65536)
                allow = 65536;
            pacer_on_send(p, allow, now);
            uint64_t start = p->sent - allow;
            while (start < p->sent) {
                uint64_t n = p->sent - start < MSS ? p->sent - start : MSS;
                start += n;
                enqueue(s, start, n, now);
            }
        }
        pacer_note_blocked(p);       /* bulk: there is always more than the window */
        /* the bottleneck serves step_ns worth of bytes */
        s->credit += rate_at(s, now) * step;
        uint64_t budget = s->credit / S;
        s->credit %= S;
        if (!s->ql)
            s->credit = 0;           /* an idle line saves nothing */
        if (measure) {
            if (s->ql)
                s->busy_ns += step;
            else
                s->idle_ns += step;
            if (now % (20 * MS) < step && s->n_samples < 100000)
                s->samples[s->n_samples++] = backlog_ns(s, now);
        }
        while (s->ql && budget) {
            uint64_t b = budget < s->serv_left ? budget : s->serv_left;
            s->serv_left -= b;
            budget -= b;
            if (!s->serv_left) {
                s->fly[(s->fh + s->fl) % QMAX].end = s->q[s->qh].end;
                s->fly[(s->fh + s->fl++) % QMAX].at_ns = now + s->delay_ns;
                s->qh = (s->qh + 1) % QMAX;
                if (--s->ql)
                    s->serv_left = s->q[s->qh].wire;
            }
        }
        while (s->fl && s->fly[s->fh].at_ns <= now) {
            s->received = s->fly[s->fh].end;
            s->fh = (s->fh + 1) % QMAX;
            s->fl--;
        }
        /* the receiver's ACK rule (session.c send_ack) */
        uint64_t pending = s->received - s->acked_sent;
        if (pending && !s->first_unacked_ns)
            s->first_unacked_ns = now;
        if (pending && (pending >= 8 * 512 || (pending >= 512 && now - s->last_ack_ns >= 5 * MS) ||
                        now - s->first_unacked_ns >= 50 * MS)) {
            s->acks[(s->ah + s->al) % QMAX].acked = s->received;
            s->acks[(s->ah + s->al++) % QMAX].at_ns = now + s->delay_ns;
            s->acked_sent = s->received;
            s->last_ack_ns = now;
            s->first_unacked_ns = 0;
        }
        while (s->al && s->acks[s->ah].at_ns <= now) {
            CHECK(pacer_on_ack(p, s->acks[s->ah].acked, now) == 0);
            s->ah = (s->ah + 1) % QMAX;
            s->al--;
        }
    }
    return s->received;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Capacity of [t0, t0 + dur) in payload bytes (packets of MSS + HDR). */
static uint64_t capacity(const struct sim *s, uint64_t t0, uint64_t dur)
{
    double bytes = 0;
    for (uint64_t t = t0; t < t0 + dur; t += MS)
        bytes += (double)rate_at(s, t) * MS / S;
    return (uint64_t)(bytes * MSS / (MSS + HDR));
}

/* Warms up for warm_ms, then measures for meas_ms: the share of the capacity delivered and the
 * p99 of the backlog a pen event would find, against the limits given. */
static void judge(const char *what, const struct phase *trace, unsigned phases, uint64_t delay_ms, uint64_t warm_ms,
                  uint64_t meas_ms, double min_share, double max_p99_packets)
{
    static struct sim s;
    struct pacer p;
    pacer_init(&p);
    s = (struct sim){ .delay_ns = delay_ms * MS, .trace = trace, .phases = phases };
    uint64_t slowest = trace[0].rate_Bps;
    for (unsigned i = 0; i < phases; i++)
        slowest = trace[i].rate_Bps < slowest ? trace[i].rate_Bps : slowest;
    s.step_ns = slowest > 2000000 ? 10000 : 100000;        /* 10 us or 0.1 ms */
    run(&s, &p, warm_ms * MS, 0, false);
    uint64_t got0 = s.received;
    run(&s, &p, meas_ms * MS, warm_ms * MS, true);
    double share = (double)(s.received - got0) / (double)capacity(&s, warm_ms * MS, meas_ms * MS);
    qsort(s.samples, s.n_samples, sizeof s.samples[0], cmp_u64);
    uint64_t p99 = s.samples[s.n_samples * 99 / 100], p50 = s.samples[s.n_samples / 2];
    double pkt_ns = (double)(MSS + HDR) * S / (double)slowest;
    printf("  %s: %.3f of the capacity; backlog p50 %.1f ms, p99 %.1f ms (%.2f packets of the slowest rate); "
           "rate %llu B/s, rtt %.1f ms, window %zu; %llu of %llu packets short; %llu queued samples\n",
           what, share, p50 / 1e6, p99 / 1e6, p99 / pkt_ns, (unsigned long long)pacer_rate(&p), pacer_rtt_ns(&p) / 1e6,
           pacer_window(&p), (unsigned long long)s.small_packets, (unsigned long long)s.packets, (unsigned long long)p.queued_samples);
    CHECK(share >= min_share);
    CHECK(p99 / pkt_ns <= max_p99_packets);
}

static const struct phase r256k[] = { { 1 * S, 32000 } };
static const struct phase r9600[] = { { 1 * S, 1200 } };
static const struct phase r1m[] = { { 1 * S, 125000 } };
static const struct phase r100m[] = { { 1 * S, 12500000 } };
static const struct phase five[] = { { 4 * S, 125000 }, { 8 * S, 25000 } };   /* 1 Mbit/s, 200 kbit/s */

/* emu/traces/cellular.trace (bench/latency's cellular link) as phases; 0 if unreadable. */
static struct phase cell[700];
static unsigned load_trace(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[128];
    unsigned n = 0;
    unsigned long long ms, bps, last = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f) && n < 700) {
        if (sscanf(line, "%llu %llu", &ms, &bps) == 2) {
            if (n)
                cell[n - 1].until_ns = ms * MS;
            cell[n].rate_Bps = bps / 8;
            n++;
        } else if (sscanf(line, "%llu loop", &ms) == 1) {
            last = ms;
        }
    }
    fclose(f);
    if (!n || !last)
        return 0;
    cell[n - 1].until_ns = last * MS;
    return n;
}

int main(void)
{
    /* Limits: what this design reaches, with a little room; the model of 690a1ee (a window of
     * one product and an eighth, no probing) reached 0.61 of the moving link's capacity. */
    TEST("That bulk fills a 256 kbit/s link with a 40 ms round trip, a pen event waiting at most 2 packets")
        judge("256k/20ms", r256k, 1, 20, 20000, 40000, 0.95, 2.0);
    TEST("That bulk fills most of a 9600 bit/s serial line with a 300 ms round trip")
        judge("9600/150ms", r9600, 1, 150, 60000, 60000, 0.70, 2.0);
    TEST("That bulk fills a 1 Mbit/s satellite hop (600 ms round trip), its queue under 0.5 s")
        judge("1M/300ms", r1m, 1, 300, 30000, 40000, 0.90, 42.0);
    TEST("That bulk fills 100 Mbit/s with a 10 ms round trip, its queue under 8 ms")
        judge("100M/5ms", r100m, 1, 5, 5000, 5000, 0.90, 66.0);
    TEST("That bulk follows a rate that moves by 5 times every 4 s, its queue short")
        judge("1M<->200k/20ms", five, 2, 20, 16000, 32000, 0.80, 5.0);
    /* Main's pacer: 0.936 and 1.99 packets (bench/latency's run on the real trace: 1.17 times
     * raw X's time, +94 ms at p99; docs/BENCHMARKS.md): a pacer that does worse here did so
     * over the real trace too (h-pace's clock-paced pacer: 0.888, 2.35; 1.23, +118 ms). */
    TEST("That bulk follows bench/latency's cellular trace (run from the top of the tree), its queue short") {
        unsigned n_cell = load_trace("emu/traces/cellular.trace");
        CHECK(n_cell > 0);
        if (n_cell)
            judge("cellular/20ms", cell, n_cell, 20, 10000, 50000, 0.92, 2.2);
    }
    TEST("That an ACK for bytes never sent, or going back, is refused") {
        struct pacer p;
        pacer_init(&p);
        pacer_on_send(&p, 100, 1);
        CHECK(pacer_on_ack(&p, 101, 2) < 0);
        CHECK(pacer_on_ack(&p, 50, 2) == 0);
        CHECK(pacer_on_ack(&p, 40, 3) < 0);
        CHECK(pacer_allowance(&p) == PACER_START_WINDOW - 50);
    }
    return test_summary();
}
