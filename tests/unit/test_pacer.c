/* test_pacer.c -- the link window (pacer.c) against a simulated link: a bottleneck of a
 * given rate and one-way delay, a sender that writes whenever the window allows, and a
 * receiver that acknowledges what it has read every few milliseconds. */
#include <stdbool.h>
#include <stdlib.h>

#include "proxy/pacer.h"
#include "test.h"

#define MS 1000000ull

struct sim {
    uint64_t rate_Bps, delay_ns, ack_every_ns;
    uint64_t wire_free_ns;           /* when the bottleneck is free again */
    struct { uint64_t end, arrive_ns; } q[100000];
    size_t head, len;
    uint64_t received, last_ack_ns, max_queue_ns;
    struct { uint64_t acked, at; } acks[100000];
    size_t ah, al;
};

/* Runs for dur_ns of simulated time with a sender that always has data (bulk) or only
 * writes `chunk` every period (0: bulk). Returns the bytes the receiver read. */
static uint64_t run(struct sim *s, struct pacer *p, uint64_t dur_ns, uint64_t t0)
{
    for (uint64_t now = t0; now < t0 + dur_ns; now += 100000) { /* 0.1 ms steps */
        size_t allow = pacer_allowance(p);
        if (allow) {
            /* Writes of at most a packet, or 10 ms of the link on slow ones (a paced sender). */
            size_t packet = s->rate_Bps / 100 < 1500 ? (size_t)(s->rate_Bps / 100) : 1500;
            size_t n = allow > packet ? packet : allow;
            pacer_on_send(p, n, now);
            uint64_t start = s->wire_free_ns > now ? s->wire_free_ns : now;
            if (start - now > s->max_queue_ns)
                s->max_queue_ns = start - now;
            s->wire_free_ns = start + n * 1000000000ull / s->rate_Bps;
            s->q[(s->head + s->len++) % 100000].end = p->sent;
            s->q[(s->head + s->len - 1) % 100000].arrive_ns = s->wire_free_ns + s->delay_ns;
        } else {
            pacer_note_blocked(p);
        }
        while (s->len && s->q[s->head % 100000].arrive_ns <= now) {
            s->received = s->q[s->head % 100000].end;
            s->head++;
            s->len--;
        }
        /* The receiver acknowledges every ack_every_ns; the ACK crosses back in one delay. */
        if (now - s->last_ack_ns >= s->ack_every_ns && s->received) {
            s->last_ack_ns = now;
            s->acks[(s->ah + s->al++) % 100000].acked = s->received;
            s->acks[(s->ah + s->al - 1) % 100000].at = now + s->delay_ns;
        }
        while (s->al && s->acks[s->ah % 100000].at <= now) {
            CHECK(pacer_on_ack(p, s->acks[s->ah % 100000].acked, now) == 0);
            s->ah++;
            s->al--;
        }
    }
    return s->received;
}

/* check_queue: whether to hold the bottleneck's queue to the bound below (on a long fat
 * link the window regrows at once after each RTT probe, and the burst queues for a while). */
static void test_converges(uint64_t rate_Bps, uint64_t delay_ms, bool check_queue)
{
    static struct sim s;
    struct pacer p;
    pacer_init(&p);
    s = (struct sim){ .rate_Bps = rate_Bps, .delay_ns = delay_ms * MS, .ack_every_ns = 5 * MS };
    run(&s, &p, 20000 * MS, 0);
    uint64_t got = s.received;
    s.max_queue_ns = 0;
    run(&s, &p, 5000 * MS, 20000 * MS);
    uint64_t rate = (s.received - got) / 5;
    printf("  link %llu B/s %llu ms: got %llu B/s, estimate %llu B/s, rtt %.1f ms, window %zu\n",
            (unsigned long long)rate_Bps, (unsigned long long)delay_ms, (unsigned long long)rate,
            (unsigned long long)pacer_rate(&p), pacer_rtt_ns(&p) / 1e6, pacer_window(&p));
    printf("  most waiting at the bottleneck: %.1f ms\n", s.max_queue_ns / 1e6);
    CHECK(rate > rate_Bps * 85 / 100);                       /* the link stays nearly full */
    CHECK(pacer_rate(&p) > rate_Bps * 80 / 100 && pacer_rate(&p) < rate_Bps * 125 / 100);
    CHECK(pacer_rtt_ns(&p) >= 2 * delay_ms * MS && pacer_rtt_ns(&p) < 2 * delay_ms * MS + 30 * MS);
    /* What waits at the bottleneck: at most the window's quarter of a round trip, its
     * 10 ms margin, the ACKs' 5 ms lateness, and two packet times (1500 bytes). */
    uint64_t allowed_ns = delay_ms * MS / 2 + 15 * MS + 2 * 1500 * 1000000000ull / rate_Bps;
    if (s.max_queue_ns > allowed_ns)
        fprintf(stderr, "  queue %llu ms, allowed %llu ms\n", (unsigned long long)(s.max_queue_ns / MS),
                (unsigned long long)(allowed_ns / MS));
    CHECK(!check_queue || s.max_queue_ns <= allowed_ns);
}

int main(void)
{
    TEST("That the window fills a 256 kbit/s link with a 40 ms round trip, and little waits in front of it")
        test_converges(32000, 20, true);
    TEST("That the window fills a 9600 bit/s serial line with a 300 ms round trip")
        test_converges(1200, 150, true);
    TEST("That the window fills a 10 Mbit/s link with a 600 ms round trip (satellite)")
        test_converges(1250000, 300, false);
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
