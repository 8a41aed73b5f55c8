/* test_emu_dcf.c -- the shared medium (emu/medium.c) under the 802.11b DCF model
 * (emu/mac_dcf.c) on a virtual clock: frame airtime and exchange timing exactly as the
 * constants imply, deferring and frozen backoff, collisions, retry limit, leaving stations,
 * saturated throughput, TCP-like goodput of one station and the performance anomaly; EIFS;
 * the access point's FIFO, round robin and airtime fairness. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mac_dcf.h"
#include "mac_maca.h"
#include "medium.h"
#include "emu_mac_log.h"
#include "test.h"

#define US 1000LL
#define MS 1000000LL

static void cell(struct emu_medium *m, struct log *l, const struct emu_dcf_cfg *c, int n, const uint64_t *rates)
{
    memset(l, 0, sizeof *l);
    struct emu_medium_hooks h = { on_deliv, on_drop, on_acked, l };
    emu_medium_init(m, &emu_mac_dcf, c, 1, &h);
    for (int i = 1; i <= n; i++) {
        struct emu_station_params p = { rates[i - 1], 0, 1000 };
        emu_medium_join(m, i, &p);
    }
    struct emu_station_params bp = { 0, 0, 1000 };
    emu_medium_join(m, EMU_MEDIUM_BASE, &bp);
}

/* --- saturated and TCP-like traffic --- */

struct load {
    struct emu_medium *m;
    int tcp;                          /* base answers every second data frame with a 52-byte ack */
    int n_sta;
    uint64_t data_deliv[EMU_MEDIUM_STATIONS];
    uint32_t ip_bytes;
};

static void load_deliv(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct load *ld = arg;
    (void)now;
    if (f->src == EMU_MEDIUM_BASE) return;            /* a TCP ack reached its station */
    ld->data_deliv[f->src]++;
    if (ld->tcp && ld->data_deliv[f->src] % 2 == 0) emu_medium_send(ld->m, EMU_MEDIUM_BASE, f->src, 52, NULL);
}
/* Keeps each station's queue non-empty: a bulk sender with a large window. */
static void load_acked(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct load *ld = arg;
    (void)now;
    if (f->src != EMU_MEDIUM_BASE) emu_medium_send(ld->m, f->src, EMU_MEDIUM_BASE, ld->ip_bytes, NULL);
}
static void load_drop(void *arg, const struct emu_mframe *f, int why, int64_t now)
{
    load_acked(arg, f, now);
    (void)why;
}

/* Runs n stations at rates for secs of virtual time; fills bps[i] with data goodput per
 * station counting payload_bytes per delivered frame. */
static void run_load(const struct emu_dcf_cfg *c, int n, const uint64_t *rates, int tcp, uint32_t ip_bytes,
                     uint32_t payload_bytes, double secs, double *bps, uint64_t seed)
{
    struct emu_medium m;
    struct load ld = { &m, tcp, n, { 0 }, ip_bytes };
    struct emu_medium_hooks h = { load_deliv, load_drop, load_acked, &ld };
    emu_medium_init(&m, &emu_mac_dcf, c, seed, &h);
    for (int i = 1; i <= n; i++) {
        struct emu_station_params p = { rates[i - 1], 0, 100 };
        emu_medium_join(&m, i, &p);
        for (int k = 0; k < 4; k++) emu_medium_send(&m, i, EMU_MEDIUM_BASE, ip_bytes, NULL);
    }
    emu_medium_run(&m, (int64_t)(secs * 1e9));
    for (int i = 1; i <= n; i++) bps[i] = (double)ld.data_deliv[i] * payload_bytes * 8 / secs;
    emu_medium_free(&m);
}


/* --- the access point's queueing: downlink to stations kept backlogged --- */

struct down {
    struct emu_medium *m;
    uint64_t deliv[EMU_MEDIUM_STATIONS];
    int64_t first_ns[EMU_MEDIUM_STATIONS];    /* first delivery to each station */
    int refill;                               /* keep every destination's queue non-empty */
};

static void down_deliv(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct down *d = arg;
    if (!d->deliv[f->dst]++) d->first_ns[f->dst] = now;
}
static void down_acked(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct down *d = arg;
    (void)now;
    if (d->refill) emu_medium_send(d->m, EMU_MEDIUM_BASE, f->dst, f->bytes, NULL);
}

/* The base sends 1500-byte frames to station 1 at 1 Mbit/s and station 2 at 11 Mbit/s, each
 * queue given 20 frames, for secs of virtual time under scheduler sched. */
static void run_down(int sched, int refill, double secs, struct down *d)
{
    static struct emu_medium m;
    memset(d, 0, sizeof *d);
    d->m = &m;
    d->refill = refill;
    struct emu_medium_hooks h = { down_deliv, NULL, down_acked, d };
    emu_medium_init(&m, &emu_mac_dcf, NULL, 5, &h);
    struct emu_station_params slow = { 1000000, 0, 100 }, fast = { 11000000, 0, 100 }, bp = { 0, 0, 100 };
    emu_medium_join(&m, 1, &slow);
    emu_medium_join(&m, 2, &fast);
    emu_medium_join(&m, EMU_MEDIUM_BASE, &bp);
    CHECK_EQ(emu_medium_set_ap_sched(&m, sched), 0);
    for (int k = 0; k < 20; k++) emu_medium_send(&m, EMU_MEDIUM_BASE, 1, 1500, NULL);
    for (int k = 0; k < 20; k++) emu_medium_send(&m, EMU_MEDIUM_BASE, 2, 1500, NULL);
    emu_medium_run(&m, (int64_t)(secs * 1e9));
    emu_medium_free(&m);
}

int main(void)
{
    struct emu_dcf_cfg c;
    emu_dcf_default(&c);
    struct emu_medium m;
    struct log l;
    const uint64_t r11[2] = { 11000000, 11000000 };

    TEST("That a 1500-byte packet's frame at 11 Mbit/s takes 192 us of PLCP plus 1536 bytes of bits") {
        CHECK_EQ(emu_dcf_frame_ns(&c, 1536, 11000000), 192000 + 1117091);   /* 12288 bits / 11 Mbit/s, rounded up */
        CHECK_EQ(emu_dcf_frame_ns(&c, 1536, 1000000), 192000 + 12288000);
        CHECK_EQ(emu_dcf_frame_ns(&c, 14, 2000000), 192000 + 56000);        /* the ACK at 2 Mbit/s */
        CHECK_EQ(emu_dcf_ctrl_rate(&c, 11000000), 2000000);
        CHECK_EQ(emu_dcf_ctrl_rate(&c, 1000000), 1000000);
        CHECK_EQ(emu_dcf_exchange_ns(&c, 1500, 11000000), 1309091 + 10000 + 248000);
        CHECK_EQ(emu_dcf_exchange_ns(&c, 1500, 1000000), 12480000 + 10000 + 304000);
        struct emu_dcf_cfg s = c;
        s.plcp_ns = 96000;
        CHECK_EQ(emu_dcf_exchange_ns(&s, 1500, 11000000), 96000 + 1117091 + 10000 + 96000 + 56000);
        s = c;
        s.rts_threshold_bytes = 500;                  /* RTS 20 B and CTS 14 B at 2 Mbit/s first */
        CHECK_EQ(emu_dcf_exchange_ns(&s, 1500, 11000000), 272000 + 10000 + 248000 + 10000 + 1567091);
        CHECK_EQ(emu_dcf_exchange_ns(&s, 100, 11000000), emu_dcf_exchange_ns(&c, 100, 11000000));
    }
    TEST("That a frame offered to a cell idle for DIFS goes at once and is acked an exchange later") {
        cell(&m, &l, &c, 1, r11);
        emu_medium_run(&m, 1 * MS);
        CHECK_EQ(emu_medium_send(&m, 1, 0, 1500, NULL), 0);
        emu_medium_run(&m, 10 * MS);
        CHECK_EQ(l.n_deliv, 1);
        CHECK_EQ(l.deliv_ns[0], 1 * MS + 1309091);
        CHECK_EQ(l.acked_ns[0], 1 * MS + 1567091);
        CHECK_EQ(m.st[1].c.airtime_ns, 1567091);
        emu_medium_free(&m);
    }
    TEST("That a station whose frame arrives while the medium is busy waits DIFS and its backoff after it") {
        cell(&m, &l, &c, 2, r11);
        emu_medium_run(&m, 1 * MS);
        emu_medium_send(&m, 1, 0, 1500, NULL);
        emu_medium_run(&m, 1 * MS + 100 * US);
        emu_medium_send(&m, 2, 0, 1500, NULL);
        emu_dcf_set_backoff(&m, 2, 3);
        emu_medium_run(&m, 20 * MS);
        CHECK_EQ(l.n_deliv, 2);
        CHECK_EQ(l.deliv_src[1], 2);
        CHECK_EQ(l.deliv_ns[1], 1 * MS + 1567091 + 50 * US + 3 * 20 * US + 1309091);
        emu_medium_free(&m);
    }
    TEST("That backoff counters freeze while another station transmits and resume after DIFS") {
        cell(&m, &l, &c, 2, r11);
        emu_dcf_set_backoff(&m, 1, 3);
        emu_dcf_set_backoff(&m, 2, 5);
        emu_medium_send(&m, 1, 0, 1500, NULL);
        emu_medium_send(&m, 2, 0, 1500, NULL);
        emu_medium_run(&m, 20 * MS);
        CHECK_EQ(l.n_deliv, 2);
        int64_t t1 = 50 * US + 3 * 20 * US;                      /* DIFS after time 0, then 3 slots */
        CHECK_EQ(l.deliv_ns[0], t1 + 1309091);
        CHECK_EQ(l.deliv_ns[1], t1 + 1567091 + 50 * US + 2 * 20 * US + 1309091);   /* 5 - 3 slots left */
        CHECK_EQ(m.st[1].c.collisions + m.st[2].c.collisions, 0);
        emu_medium_free(&m);
    }
    TEST("That counters reaching zero in the same slot collide, double the window and retransmit") {
        cell(&m, &l, &c, 2, r11);
        emu_dcf_set_backoff(&m, 1, 4);
        emu_dcf_set_backoff(&m, 2, 4);
        emu_medium_send(&m, 1, 0, 1500, NULL);
        emu_medium_send(&m, 2, 0, 1500, NULL);
        emu_medium_run(&m, 130 * US + 1567091);                  /* the collided attempt ends here */
        CHECK_EQ(l.n_deliv, 0);
        CHECK_EQ(m.st[1].c.collisions, 1);
        CHECK_EQ(m.st[2].c.collisions, 1);
        CHECK_EQ(emu_dcf_cw(&m, 1), 63);
        CHECK_EQ(emu_dcf_cw(&m, 2), 63);
        emu_medium_run(&m, 100 * MS);
        CHECK_EQ(l.n_deliv, 2);
        CHECK_EQ(emu_dcf_cw(&m, 1), 31);
        CHECK_EQ(m.st[1].c.attempts + m.st[2].c.attempts, 2 + m.st[1].c.collisions + m.st[2].c.collisions);
        emu_medium_free(&m);
    }
    TEST("That with RTS/CTS a collision costs only the RTS and the CTS wait") {
        struct emu_dcf_cfg s = c;
        s.rts_threshold_bytes = 500;
        cell(&m, &l, &s, 2, r11);
        emu_dcf_set_backoff(&m, 1, 4);
        emu_dcf_set_backoff(&m, 2, 4);
        emu_medium_send(&m, 1, 0, 1500, NULL);
        emu_medium_send(&m, 2, 0, 1500, NULL);
        emu_dcf_set_backoff(&m, 1, 4);
        emu_medium_run(&m, 130 * US + 272000 + 10000 + 248000 - 1);
        CHECK_EQ(m.st[1].c.airtime_ns, 272000 + 10000 + 248000);
        emu_medium_free(&m);
    }
    TEST("That after a garbled frame the others wait EIFS (364 us) from its end, its sender DIFS after the ACK timeout") {
        /* Station 1's frame is lost to noise and, with a retry limit of 1, dropped; station 2's
         * frame arrived meanwhile with a counter of 0. It may start EIFS after the garbled
         * frame's end: 1309091 + 364000 ns after station 1 started; with EIFS off, DIFS after
         * the ACK timeout: 1567091 + 50000. */
        for (int on = 1; on >= 0; on--) {
            struct emu_dcf_cfg s = c;
            s.retry_limit = 1;
            s.eifs_ns = on ? 364000 : 0;
            cell(&m, &l, &s, 2, r11);
            m.st[1].p.loss_ppm = 1000000;
            emu_medium_run(&m, 1 * MS);
            emu_medium_send(&m, 1, 0, 1500, NULL);             /* idle for DIFS: goes at once */
            emu_medium_run(&m, 1 * MS + 100 * US);
            emu_medium_send(&m, 2, 0, 1500, NULL);
            emu_dcf_set_backoff(&m, 2, 0);
            emu_medium_run(&m, 20 * MS);
            CHECK_EQ(m.st[1].c.noise_losses, 1);
            CHECK_EQ(l.n_drop, 1);
            CHECK_EQ(l.n_deliv, 1);
            CHECK_EQ(l.deliv_src[0], 2);
            CHECK_EQ(l.deliv_ns[0], 1 * MS + (on ? 1309091 + 364000 : 1567091 + 50000) + 1309091);
            emu_medium_free(&m);
        }
        emu_dcf_default(&c);
        CHECK_EQ(c.eifs_ns, c.sifs_ns + emu_dcf_frame_ns(&c, c.ack_bytes, 1000000) + c.difs_ns);
    }
    TEST("That the sender of a collided frame waits DIFS after its ACK timeout, a bystander EIFS after the frame") {
        /* Stations 1 and 2 collide at slot 4; station 3's frame arrives during the collision
         * with a counter of 0; 1 and 2 are given counters of 30 so that 3 goes first. */
        const uint64_t r3[3] = { 11000000, 11000000, 11000000 };
        cell(&m, &l, &c, 3, r3);
        emu_dcf_set_backoff(&m, 1, 4);
        emu_dcf_set_backoff(&m, 2, 4);
        emu_medium_send(&m, 1, 0, 1500, NULL);
        emu_medium_send(&m, 2, 0, 1500, NULL);
        emu_medium_run(&m, 130 * US + 1000);
        emu_medium_send(&m, 3, 0, 100, NULL);
        emu_dcf_set_backoff(&m, 3, 0);
        emu_medium_run(&m, 130 * US + 1567091);                  /* the ACK timeout ends */
        emu_dcf_set_backoff(&m, 1, 30);
        emu_dcf_set_backoff(&m, 2, 30);
        emu_medium_run(&m, 100 * MS);
        CHECK_EQ(l.deliv_src[0], 3);
        CHECK_EQ(l.deliv_ns[0], 130 * US + 1309091 + 364000 + emu_dcf_frame_ns(&c, 136, 11000000));
        emu_medium_free(&m);
    }
    TEST("That one FIFO at the access point holds a fast station's frames behind a slow one's") {
        struct down d;
        run_down(EMU_AP_FIFO, 0, 2.0, &d);
        CHECK_EQ(d.deliv[1], 20);
        CHECK_EQ(d.deliv[2], 20);
        /* 20 frames of ~12.8 ms at 1 Mbit/s go first: the fast station's first frame waits them */
        CHECK(d.first_ns[2] > 20 * (12480000 + 10000 + 304000));
    }
    TEST("That round robin at the access point alternates destinations, frame by frame") {
        struct down d;
        run_down(EMU_AP_RR, 0, 2.0, &d);
        CHECK_EQ(d.deliv[1], 20);
        CHECK_EQ(d.deliv[2], 20);
        CHECK(d.first_ns[2] < 2 * (12480000 + 10000 + 304000) + 2 * MS);   /* after one slow frame */
        run_down(EMU_AP_RR, 1, 10.0, &d);            /* kept backlogged: equal frames each */
        printf("  AP round robin, 1 + 11 Mbit/s backlogged, 10 s: %llu and %llu frames\n",
               (unsigned long long)d.deliv[1], (unsigned long long)d.deliv[2]);
        CHECK(d.deliv[2] >= d.deliv[1] && d.deliv[2] <= d.deliv[1] + 1);
    }
    TEST("That airtime deficit round robin gives each backlogged destination the same airtime") {
        struct down d;
        run_down(EMU_AP_AIRTIME, 1, 10.0, &d);
        double slow_air = (double)d.deliv[1] * (12480000 + 10000 + 304000);
        double fast_air = (double)d.deliv[2] * 1567091;
        printf("  AP airtime fairness, 1 + 11 Mbit/s backlogged, 10 s: %llu and %llu frames, airtime %.2f s and %.2f s\n",
               (unsigned long long)d.deliv[1], (unsigned long long)d.deliv[2], slow_air / 1e9, fast_air / 1e9);
        CHECK(fast_air > slow_air * 0.9 && fast_air < slow_air * 1.1);
        CHECK(d.deliv[2] > 5 * d.deliv[1]);           /* the fast one gets its rate's worth, not the slow one's */
        struct emu_medium mm;
        emu_medium_init(&mm, &emu_mac_maca, NULL, 1, NULL);
        CHECK_EQ(emu_medium_set_ap_sched(&mm, EMU_AP_RR), -EINVAL);   /* MACA has its own per destination */
        emu_medium_free(&mm);
    }
    TEST("That a frame lost to noise on every try is dropped after the retry limit of 7 transmissions") {
        cell(&m, &l, &c, 1, r11);
        m.st[1].p.loss_ppm = 1000000;
        emu_medium_send(&m, 1, 0, 1500, NULL);
        emu_medium_run(&m, 1000 * MS);
        CHECK_EQ(l.n_deliv, 0);
        CHECK_EQ(l.n_drop, 1);
        CHECK_EQ(l.last_drop_why, EMU_MDROP_RETRY);
        CHECK_EQ(m.st[1].c.attempts, 7);
        CHECK_EQ(m.st[1].c.noise_losses, 7);
        CHECK_EQ(m.st[1].c.drop_retry, 1);
        CHECK_EQ(emu_dcf_cw(&m, 1), 31);
        emu_medium_free(&m);
    }
    TEST("That a station leaving drops the frames queued at it and for it at the access point") {
        cell(&m, &l, &c, 2, r11);
        for (int i = 0; i < 3; i++) emu_medium_send(&m, 1, 0, 1500, NULL);
        for (int i = 0; i < 2; i++) emu_medium_send(&m, 0, 1, 1500, NULL);
        emu_medium_send(&m, 0, 2, 1500, NULL);
        CHECK_EQ(emu_medium_leave(&m, 1), 0);
        CHECK_EQ(l.n_drop, 5);
        CHECK_EQ(emu_medium_send(&m, 1, 0, 100, NULL), -EINVAL);
        emu_medium_run(&m, 100 * MS);
        CHECK(l.n_deliv >= 1 && l.deliv_src[l.n_deliv - 1] == 0);   /* the frame for station 2 still goes */
        struct emu_station_params p = { 11000000, 0, 10 };
        CHECK_EQ(emu_medium_join(&m, 1, &p), 0);
        CHECK_EQ(emu_medium_send(&m, 1, 0, 100, NULL), 0);
        emu_medium_free(&m);
    }
    TEST("That a station leaving while the access point sends to it does not deliver the next frame in its place") {
        cell(&m, &l, &c, 2, r11);
        emu_medium_run(&m, 1 * MS);
        emu_medium_send(&m, 0, 1, 1500, NULL);                  /* on the air at once */
        emu_medium_send(&m, 0, 2, 1500, NULL);                  /* behind it in the one FIFO */
        emu_medium_run(&m, 1 * MS + 500 * US);
        CHECK_EQ(emu_medium_leave(&m, 1), 0);
        emu_medium_run(&m, 100 * MS);
        CHECK_EQ(l.n_deliv, 1);                                 /* station 2's frame, once */
        CHECK(l.deliv_ns[0] > 1 * MS + 1567091);                /* in an exchange of its own */
        emu_medium_free(&m);
    }
    TEST("That a full station queue refuses the packet and counts it") {
        cell(&m, &l, &c, 1, r11);
        m.st[1].p.queue_pkts = 2;
        CHECK_EQ(emu_medium_send(&m, 1, 0, 1500, NULL), 0);    /* goes onto the air at once */
        CHECK_EQ(emu_medium_send(&m, 1, 0, 1500, NULL), 0);
        CHECK_EQ(emu_medium_send(&m, 1, 0, 1500, NULL), -ENOBUFS);
        CHECK_EQ(m.st[1].c.drop_queue, 1);
        emu_medium_free(&m);
    }
    double bps[EMU_MEDIUM_STATIONS];
    TEST("That one saturated station at 11 Mbit/s gets 1500 B per DIFS + mean backoff + exchange") {
        run_load(&c, 1, r11, 0, 1500, 1500, 20.0, bps, 1);
        double expect = 1500 * 8 / ((50 + 15.5 * 20) * 1e-6 + 1567091e-9);
        printf("  saturated UDP, 1 station, 11 Mbit/s: %.3f Mbit/s (expected %.3f)\n", bps[1] / 1e6, expect / 1e6);
        CHECK(bps[1] > expect * 0.99 && bps[1] < expect * 1.01);
    }
    TEST("That TCP-like bulk traffic of one 11 Mbit/s station gets 5.65 Mbit/s within 5% (short preamble)") {
        struct emu_dcf_cfg s = c;
        s.plcp_ns = 96000;
        run_load(&s, 1, r11, 1, 1500, 1448, 20.0, bps, 1);
        double short_bps = bps[1];
        run_load(&c, 1, r11, 1, 1500, 1448, 20.0, bps, 1);
        printf("  TCP-like, 1 station, 11 Mbit/s, 1448 B payload, ack per 2 segments: short preamble %.3f Mbit/s,"
               " long %.3f Mbit/s\n", short_bps / 1e6, bps[1] / 1e6);
        CHECK(short_bps > 5.65e6 * 0.95 && short_bps < 5.65e6 * 1.05);
    }
    TEST("That a 1 Mbit/s station drags an 11 Mbit/s one down to about its own rate (performance anomaly)") {
        const uint64_t pair[2] = { 1000000, 11000000 };
        run_load(&c, 2, pair, 0, 1500, 1500, 20.0, bps, 3);
        double slow = bps[1], fast = bps[2];
        run_load(&c, 2, r11, 0, 1500, 1500, 20.0, bps, 3);
        printf("  saturated UDP, 1 + 11 Mbit/s: %.3f and %.3f Mbit/s; 11 + 11: %.3f and %.3f Mbit/s\n",
               slow / 1e6, fast / 1e6, bps[1] / 1e6, bps[2] / 1e6);
        CHECK(fast < 1.0e6);                          /* not 11/12 of the airtime, as a per-time share would give */
        CHECK(fast > slow * 0.85 && fast < slow * 1.15);   /* equal chances per frame, so equal throughput */
        CHECK(bps[2] > 2.5e6);
    }
    return test_summary();
}
