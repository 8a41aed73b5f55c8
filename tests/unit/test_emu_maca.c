/* test_emu_maca.c -- the MACA model (emu/mac_maca.c) of the PARC 256 kbit/s radio on a
 * virtual clock: packet and exchange timing exactly as the constants imply, defer rules (also
 * with a hidden station), backoff copying, collisions, the base's JAM, unsolicited short DATA,
 * an ACK lost after delivered data answered again without the data, retry limit, throughput. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mac_maca.h"
#include "medium.h"
#include "emu_mac_log.h"
#include "test.h"

#define MS 1000000LL

static void cell(struct emu_medium *m, struct log *l, const struct emu_maca_cfg *c, int n)
{
    memset(l, 0, sizeof *l);
    struct emu_medium_hooks h = { on_deliv, on_drop, on_acked, l };
    emu_medium_init(m, &emu_mac_maca, c, 1, &h);
    for (int i = 1; i <= n; i++) {
        struct emu_station_params p = { 0, 0, 1000 };
        emu_medium_join(m, i, &p);
    }
}

/* --- bulk load: stations send ip_bytes packets to the base; with tcp, the base answers every
 * second one with a 40-byte ack, through its per-destination queues --- */
struct load { struct emu_medium *m; int tcp; uint32_t ip_bytes; uint64_t deliv[EMU_MEDIUM_STATIONS]; };

static void load_deliv(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct load *ld = arg;
    (void)now;
    if (f->src == EMU_MEDIUM_BASE) return;
    if (ld->tcp && ++ld->deliv[f->src] % 2 == 0) emu_medium_send(ld->m, EMU_MEDIUM_BASE, f->src, 40, NULL);
    if (!ld->tcp) ld->deliv[f->src]++;
}
static void load_refill(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct load *ld = arg;
    (void)now;
    if (f->src != EMU_MEDIUM_BASE) emu_medium_send(ld->m, f->src, EMU_MEDIUM_BASE, ld->ip_bytes, NULL);
}
static void load_drop(void *arg, const struct emu_mframe *f, int why, int64_t now) { (void)why; load_refill(arg, f, now); }

static void run_load(int n, int tcp, uint32_t ip_bytes, double secs, double *pkts_per_s, struct emu_maca_counters *k)
{
    struct emu_medium m;
    struct load ld = { &m, tcp, ip_bytes, { 0 } };
    struct emu_medium_hooks h = { load_deliv, load_drop, load_refill, &ld };
    emu_medium_init(&m, &emu_mac_maca, NULL, 7, &h);               /* the defaults: backoff 4..64 */
    for (int i = 1; i <= n; i++) {
        struct emu_station_params p = { 0, 0, 100 };
        emu_medium_join(&m, i, &p);
        for (int j = 0; j < 4; j++) emu_medium_send(&m, i, EMU_MEDIUM_BASE, ip_bytes, NULL);
    }
    emu_medium_run(&m, (int64_t)(secs * 1e9));
    for (int i = 1; i <= n; i++) pkts_per_s[i] = (double)ld.deliv[i] / secs;
    *k = *emu_maca_counters(&m);
    emu_medium_free(&m);
}

int main(void)
{
    struct emu_maca_cfg c;
    emu_maca_default(&c);
    c.bo_min = 1;                     /* a quiet cell then waits exactly one slot: exact times */
    const int64_t US = 1000;
    struct emu_medium m;
    struct log l;

    TEST("That a control packet takes 0.75 ms at 256 kbit/s and an RTS-CTS exchange 4 ms") {
        CHECK_EQ(emu_maca_ctrl_ns(&c, 256000), 750000);                 /* 24 bytes */
        CHECK_EQ(emu_maca_data_ns(&c, 0, 256000), 750000);              /* the DATA header alone */
        CHECK_EQ(emu_maca_data_ns(&c, 512, 256000), 16750000);          /* 536 bytes */
        CHECK_EQ(2 * (c.turnaround_ns + emu_maca_ctrl_ns(&c, 256000)), 4 * MS);
        cell(&m, &l, NULL, 1);
        emu_medium_send(&m, 1, 0, 0, NULL);                             /* defaults: slot, backoff 1..4 */
        emu_medium_run(&m, 100 * MS);
        CHECK(l.acked_ns[0] >= 4 * MS + 750 * US && l.acked_ns[0] <= 4 * MS + 4 * 750 * US);
        emu_medium_free(&m);
    }
    TEST("That a 512-byte packet in a quiet cell is delivered at 22.75 ms, acked at 24.75 ms: a slot + 8 ms + DATA") {
        cell(&m, &l, &c, 1);
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_medium_run(&m, 100 * MS);
        CHECK_EQ(l.n_deliv, 1);
        /* slot 0.75 + turn 1.25 + RTS 0.75 + turn 1.25 + CTS 0.75 + turn 1.25 + DATA 16.75 */
        CHECK_EQ(l.deliv_ns[0], 22 * MS + 750 * US);
        CHECK_EQ(l.acked_ns[0], 24 * MS + 750 * US);                    /* + turn 1.25 + ACK 0.75 */
        /* what the 4-way exchange adds beyond the payload's own 16 ms: 8.75 ms (about 10 with the
         * default mean backoff of 2.5 slots) */
        CHECK_EQ(l.acked_ns[0] - 512 * 8 * 1000000000LL / 256000, 8 * MS + 750 * US);
        const struct emu_maca_counters *k = emu_maca_counters(&m);
        CHECK_EQ(k->sent[EMU_MACA_RTS], 1);
        CHECK_EQ(k->sent[EMU_MACA_CTS], 1);
        CHECK_EQ(k->sent[EMU_MACA_DATA], 1);
        CHECK_EQ(k->sent[EMU_MACA_ACK], 1);
        emu_medium_free(&m);
    }
    TEST("That a short packet goes as unsolicited DATA: a 0-byte DATA-ACK takes 4 ms after the backoff") {
        cell(&m, &l, &c, 1);
        emu_medium_send(&m, 1, 0, 0, NULL);
        emu_medium_run(&m, 100 * MS);
        CHECK_EQ(l.deliv_ns[0], 2 * MS + 750 * US);
        CHECK_EQ(l.acked_ns[0], 4 * MS + 750 * US);
        CHECK_EQ(emu_maca_counters(&m)->sent[EMU_MACA_RTS], 0);
        emu_medium_free(&m);
    }
    TEST("That a bystander defers for the CTS after RTS(n), for n bytes after CTS(n), for the ACK after DATA") {
        cell(&m, &l, &c, 2);
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_medium_run(&m, 2 * MS + 750 * US);                         /* the RTS ends */
        CHECK_EQ(emu_maca_defer_until(&m, 2), 4 * MS + 750 * US);
        emu_medium_run(&m, 4 * MS + 750 * US);                         /* the CTS ends */
        CHECK_EQ(emu_maca_defer_until(&m, 2), 22 * MS + 750 * US);
        emu_medium_run(&m, 22 * MS + 750 * US);                        /* the DATA ends */
        CHECK_EQ(emu_maca_defer_until(&m, 2), 24 * MS + 750 * US);
        emu_medium_free(&m);
    }
    TEST("That a station hidden from the sender defers only on the base's CTS") {
        struct emu_maca_cfg h = c;
        h.hidden = 1;
        for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) h.hears[i][j] = 1;
        h.hears[1][2] = h.hears[2][1] = 0;
        cell(&m, &l, &h, 2);
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_medium_run(&m, 2 * MS + 750 * US);
        CHECK_EQ(emu_maca_defer_until(&m, 2), 0);
        emu_medium_run(&m, 4 * MS + 750 * US);
        CHECK_EQ(emu_maca_defer_until(&m, 2), 22 * MS + 750 * US);
        emu_medium_run(&m, 30 * MS);
        CHECK_EQ(emu_maca_defer_until(&m, 2), 22 * MS + 750 * US);     /* it did not hear the DATA */
        emu_medium_free(&m);
    }
    TEST("That a packet offered during another's exchange waits for its end, then a slot") {
        cell(&m, &l, &c, 2);
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_medium_run(&m, 5 * MS);
        emu_medium_send(&m, 2, 0, 512, NULL);
        emu_medium_run(&m, 200 * MS);
        CHECK_EQ(l.n_deliv, 2);
        CHECK_EQ(l.deliv_src[1], 2);
        CHECK_EQ(l.deliv_ns[1], 2 * (22 * MS + 750 * US) + 2 * MS);     /* after the ACK, as if alone */
        emu_medium_free(&m);
    }
    TEST("That every station adopts the backoff carried in the packets it hears (copying)") {
        cell(&m, &l, &c, 2);
        emu_maca_set_backoff(&m, 1, 8);
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_medium_run(&m, 300 * MS);
        CHECK_EQ(l.n_acked, 1);
        CHECK_EQ(emu_maca_backoff(&m, 2), 8);                           /* a bystander: from every packet */
        CHECK_EQ(emu_maca_backoff(&m, 0), 8);                           /* the base: from the RTS and DATA */
        CHECK_EQ(emu_maca_backoff(&m, 1), 7);                           /* copied 8 from the ACK, then - 1 */
        emu_medium_free(&m);
    }
    TEST("That two RTS at once collide at the base: no CTS, both backoffs multiplied, then both delivered") {
        cell(&m, &l, &c, 2);
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_medium_send(&m, 2, 0, 512, NULL);
        emu_medium_run(&m, 4 * MS + 750 * US + 2000);                  /* the CTS timeouts */
        CHECK_EQ(emu_maca_counters(&m)->sent[EMU_MACA_CTS], 0);
        CHECK_EQ(emu_maca_counters(&m)->missed_cts, 2);
        CHECK_EQ(emu_maca_backoff(&m, 1), 2);
        CHECK_EQ(emu_maca_backoff(&m, 2), 2);
        emu_medium_run(&m, 1000 * MS);
        CHECK_EQ(l.n_deliv, 2);
        emu_medium_free(&m);
    }
    TEST("That the base sends a JAM when two of its own processes would collide") {
        cell(&m, &l, &c, 2);
        emu_medium_send(&m, 0, 1, 512, NULL);
        emu_medium_send(&m, 0, 2, 512, NULL);
        emu_medium_run(&m, 750 * US);                                   /* both backoffs end at one slot */
        CHECK_EQ(emu_maca_counters(&m)->jams, 1);
        CHECK_EQ(emu_maca_counters(&m)->sent[EMU_MACA_RTS], 0);
        CHECK_EQ(emu_maca_backoff(&m, 0), 2);
        emu_medium_run(&m, 1000 * MS);
        CHECK(emu_maca_counters(&m)->jams >= 1);
        CHECK_EQ(emu_maca_counters(&m)->sent[EMU_MACA_JAM], emu_maca_counters(&m)->jams);
        CHECK_EQ(l.n_deliv, 2);
        emu_medium_free(&m);
    }
    TEST("That an ACK lost after delivered data is answered again on the next RTS, without the data") {
        cell(&m, &l, &c, 1);
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_maca_lose_next(&m, EMU_MACA_ACK);
        emu_medium_run(&m, 1000 * MS);
        const struct emu_maca_counters *k = emu_maca_counters(&m);
        CHECK_EQ(l.n_deliv, 1);
        CHECK_EQ(l.n_acked, 1);
        CHECK_EQ(k->missed_ack, 1);
        CHECK_EQ(k->re_acks, 1);
        CHECK_EQ(k->sent[EMU_MACA_RTS], 2);
        CHECK_EQ(k->sent[EMU_MACA_DATA], 1);
        CHECK_EQ(k->sent[EMU_MACA_CTS], 1);
        emu_medium_free(&m);
    }
    TEST("That unsolicited DATA whose ACK was lost is resent, acked again and delivered once") {
        cell(&m, &l, &c, 1);
        emu_medium_send(&m, 1, 0, 40, NULL);
        emu_maca_lose_next(&m, EMU_MACA_ACK);
        emu_medium_run(&m, 1000 * MS);
        CHECK_EQ(l.n_deliv, 1);
        CHECK_EQ(l.n_acked, 1);
        CHECK_EQ(emu_maca_counters(&m)->sent[EMU_MACA_DATA], 2);
        CHECK_EQ(emu_maca_counters(&m)->re_acks, 1);
        emu_medium_free(&m);
    }
    TEST("That a packet that never gets through is dropped after 8 attempts") {
        cell(&m, &l, &c, 1);
        m.st[1].p.loss_ppm = 1000000;
        emu_medium_send(&m, 1, 0, 512, NULL);
        emu_medium_run(&m, 10000 * MS);
        CHECK_EQ(l.n_drop, 1);
        CHECK_EQ(m.st[1].c.attempts, 8);
        CHECK_EQ(m.st[1].c.drop_retry, 1);
        emu_medium_free(&m);
    }
    TEST("That bulk data over MACA is paced by the exchanges, not by 256 kbit/s of bytes") {
        double pps[EMU_MEDIUM_STATIONS];
        struct emu_maca_counters k;
        run_load(1, 0, 512, 60, pps, &k);
        double one = pps[1];
        double expect = 1000.0 / (24 + 2.5 * 0.75);                     /* 24 ms + a mean wait of 2.5 slots */
        CHECK(one > expect * 0.98 && one < expect * 1.02);
        run_load(1, 1, 512, 60, pps, &k);
        printf("  1 station, 512 B: %.1f pkt/s alone (%.1f kbit/s of IP), %.1f pkt/s with a TCP ack per 2"
               " (%.1f kbit/s of 472-byte payload); missed CTS %llu, ACK %llu\n", one, one * 512 * 8 / 1000,
               pps[1], pps[1] * 472 * 8 / 1000, (unsigned long long)k.missed_cts, (unsigned long long)k.missed_ack);
        CHECK(pps[1] * 472 * 8 < 150000);
        run_load(4, 1, 512, 60, pps, &k);
        double sum = pps[1] + pps[2] + pps[3] + pps[4], lo = pps[1], hi = pps[1];
        for (int i = 2; i <= 4; i++) { if (pps[i] < lo) lo = pps[i]; if (pps[i] > hi) hi = pps[i]; }
        printf("  4 stations, 512 B, TCP ack per 2: %.1f pkt/s in all (%.1f kbit/s of payload), per station"
               " %.1f..%.1f; missed CTS %llu, jams %llu\n", sum, sum * 472 * 8 / 1000, lo, hi,
               (unsigned long long)k.missed_cts, (unsigned long long)k.jams);
        CHECK(lo > hi * 0.7);                                           /* backoff copying keeps it fair */
    }
    return test_summary();
}
