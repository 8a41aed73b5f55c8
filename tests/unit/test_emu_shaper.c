/* test_emu_shaper.c -- the link model (emu/shaper.c) and option parsing (emu/params.c),
 * driven with a fake clock: serialisation, delay, jitter order, drop-tail limits, loss rates. */
#include <errno.h>
#include <stdlib.h>

#include "clock.h"
#include "params.h"
#include "shaper.h"
#include "stats.h"
#include "test.h"

#define MS EMU_NS_PER_MS
#define US EMU_NS_PER_US

static void link_with(struct emu_params *p, const char *opts)
{
    emu_params_default(p);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", opts);
    char *save = NULL;
    for (char *o = strtok_r(buf, " ", &save); o; o = strtok_r(NULL, " ", &save)) {
        const char *v = emu_params_is_flag(o) ? NULL : strtok_r(NULL, " ", &save);
        if (emu_params_set(p, o, v) != 0) fprintf(stderr, "  bad test option %s\n", o);
    }
}

static void test_parsers(void)
{
    uint64_t bps, n;
    int64_t ns;
    uint32_t ppm;
    TEST("That rates parse with k, M and G suffixes") {
        CHECK(emu_parse_rate_bps("9600", &bps) == 0 && bps == 9600);
        CHECK(emu_parse_rate_bps("256k", &bps) == 0 && bps == 256000);
        CHECK(emu_parse_rate_bps("1.5M", &bps) == 0 && bps == 1500000);
        CHECK(emu_parse_rate_bps("11Mbit", &bps) == 0 && bps == 11000000);
        CHECK(emu_parse_rate_bps("1G", &bps) == 0 && bps == 1000000000);
    }
    TEST("That bad rates are refused") {
        CHECK(emu_parse_rate_bps("", &bps) < 0);
        CHECK(emu_parse_rate_bps("-5", &bps) < 0);
        CHECK(emu_parse_rate_bps("10q", &bps) < 0);
        CHECK(emu_parse_rate_bps("0x10", &bps) < 0);
        CHECK(emu_parse_rate_bps("nan", &bps) < 0);
    }
    TEST("That times parse in s, ms, us and ns, bare numbers meaning ms") {
        CHECK(emu_parse_time_ns("20ms", &ns) == 0 && ns == 20 * MS);
        CHECK(emu_parse_time_ns("0.3s", &ns) == 0 && ns == 300 * MS);
        CHECK(emu_parse_time_ns("500us", &ns) == 0 && ns == 500 * US);
        CHECK(emu_parse_time_ns("7", &ns) == 0 && ns == 7 * MS);
        CHECK(emu_parse_time_ns("5 ms", &ns) < 0);
    }
    TEST("That loss parses as a percentage or a fraction") {
        CHECK(emu_parse_ppm("1%", &ppm) == 0 && ppm == 10000);
        CHECK(emu_parse_ppm("0.5%", &ppm) == 0 && ppm == 5000);
        CHECK(emu_parse_ppm("0.01", &ppm) == 0 && ppm == 10000);
        CHECK(emu_parse_ppm("101%", &ppm) < 0);
        CHECK(emu_parse_u64("64k", &n) == 0 && n == 64000);
    }
}

static void test_options(void)
{
    struct emu_params p;
    TEST("That every profile applies cleanly and names itself") {
        for (const struct emu_profile *pr = emu_profiles(); pr->name; pr++) {
            emu_params_default(&p);
            CHECK(emu_params_apply_profile(&p, pr->name) == 0);
            CHECK(strcmp(p.profile, pr->name) == 0);
        }
        CHECK(emu_params_apply_profile(&p, "nonesuch") == -ENOENT);
    }
    TEST("That the serial profiles count 10 bits per byte and PPP framing") {
        emu_params_default(&p);
        emu_params_apply_profile(&p, "serial9600");
        CHECK_EQ(p.dir[EMU_UP].rate_bps, 9600);
        CHECK_EQ(p.bits_per_byte, 10);
        CHECK(p.framing == EMU_FRAMING_PPP);
    }
    TEST("That options after a profile override it, per direction with -up/-down") {
        emu_params_default(&p);
        emu_params_apply_profile(&p, "satellite");
        CHECK(emu_params_set(&p, "--rate-down", "2M") == 0);
        CHECK_EQ(p.dir[EMU_DOWN].rate_bps, 2000000);
        CHECK_EQ(p.dir[EMU_UP].rate_bps, 256000);
        CHECK_EQ(p.dir[EMU_UP].delay_ns, 300 * MS);
        CHECK(emu_params_set(&p, "--delay", "10ms") == 0);
        CHECK_EQ(p.dir[EMU_UP].delay_ns, 10 * MS);
        CHECK_EQ(p.dir[EMU_DOWN].delay_ns, 10 * MS);
    }
    TEST("That queue limits parse in packets, bytes and time") {
        emu_params_default(&p);
        CHECK(emu_params_set(&p, "--queue", "100p,64000B,200ms") == 0);
        CHECK_EQ(p.dir[EMU_UP].queue_pkts, 100);
        CHECK_EQ(p.dir[EMU_UP].queue_bytes, 64000);
        CHECK_EQ(p.dir[EMU_DOWN].queue_ns, 200 * MS);
        CHECK(emu_params_set(&p, "--queue", "100") == -EINVAL);
    }
    TEST("That drop lists and Gilbert-Elliott parameters parse, and junk is refused") {
        emu_params_default(&p);
        CHECK(emu_params_set(&p, "--drop-list-up", "3,7,10-12") == 0);
        CHECK_EQ(p.dir[EMU_UP].n_drop, 3);
        CHECK_EQ(p.dir[EMU_UP].drop[2].last, 12);
        CHECK_EQ(p.dir[EMU_DOWN].n_drop, 0);
        CHECK(emu_params_set(&p, "--drop-list", "5-2") == -EINVAL);
        CHECK(emu_params_set(&p, "--loss-ge", "1%,30%") == 0);
        CHECK(p.dir[EMU_DOWN].ge.on && p.dir[EMU_DOWN].ge.bad_loss_ppm == EMU_PPM);
        CHECK(emu_params_set(&p, "--loss-ge", "1%") == -EINVAL);
        CHECK(emu_params_set(&p, "--rate-sideways", "1M") == -ENOENT);
        CHECK(emu_params_set(&p, "--mtu", "20") == -EINVAL);
    }
}

static void test_timing(void)
{
    struct emu_params p;
    struct emu_channel ch = { 0 };
    struct emu_shaper s;
    struct emu_sched sc;
    TEST("That a packet occupies the link n*8/rate and arrives after the delay") {
        link_with(&p, "--rate 1M --delay 20ms");
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        CHECK(emu_shaper_offer(&s, 1000 * MS, 1250, &sc) == EMU_PASS);
        CHECK_EQ(sc.start_ns, 1000 * MS);
        CHECK_EQ(sc.finish_ns - sc.start_ns, 10 * MS);        /* 10000 bits at 1 Mbit/s */
        CHECK_EQ(sc.deliver_ns, sc.finish_ns + 20 * MS);
        CHECK(emu_shaper_offer(&s, 1001 * MS, 1250, &sc) == EMU_PASS);
        CHECK_EQ(sc.start_ns, 1010 * MS);                      /* queued behind the first */
        CHECK_EQ(emu_shaper_backlog_ns(&s, 1001 * MS), 19 * MS);
        emu_shaper_free(&s);
    }
    TEST("That async serial framing counts 10 bits per byte and per-packet time adds") {
        link_with(&p, "--rate 9600 --bits-per-byte 10 --per-packet 1ms");
        ch.busy_until_ns = 0;
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        CHECK_EQ(emu_shaper_ser_ns(&s, 96, 1), 100 * MS + 1 * MS);
        CHECK_EQ(emu_shaper_ser_ns(&s, 96, 3), 100 * MS + 3 * MS);
        emu_shaper_free(&s);
    }
    TEST("That jitter never reorders packets unless asked") {
        link_with(&p, "--delay 50ms --jitter 20ms");
        ch.busy_until_ns = 0;
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        int64_t last = 0, lo = INT64_MAX, hi = 0;
        int in_order = 1;
        for (int i = 0; i < 1000; i++) {
            emu_shaper_offer(&s, i * 100 * US, 100, &sc);
            in_order &= sc.deliver_ns >= last;
            last = sc.deliver_ns;
            int64_t d = sc.deliver_ns - i * 100 * US;
            if (d < lo) lo = d;
            if (d > hi) hi = d;
        }
        CHECK(in_order);
        CHECK(lo >= 30 * MS && hi <= 70 * MS);
        emu_shaper_free(&s);
        link_with(&p, "--delay 50ms --jitter 20ms --reorder");
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        int reordered = 0;
        last = 0;
        for (int i = 0; i < 1000; i++) {
            emu_shaper_offer(&s, i * 100 * US, 100, &sc);
            reordered |= sc.deliver_ns < last;
            last = sc.deliver_ns;
        }
        CHECK(reordered);
        emu_shaper_free(&s);
    }
    TEST("That a half-duplex link makes the two directions wait for each other") {
        link_with(&p, "--rate 1M --half-duplex");
        struct emu_channel shared = { 0 };
        struct emu_shaper up, down;
        emu_shaper_init(&up, &p, EMU_UP, &shared);
        emu_shaper_init(&down, &p, EMU_DOWN, &shared);
        emu_shaper_offer(&up, 0, 1250, &sc);
        emu_shaper_offer(&down, 1 * MS, 1250, &sc);
        CHECK_EQ(sc.start_ns, 10 * MS);
        emu_shaper_free(&up);
        emu_shaper_free(&down);
    }
}

static void test_queue(void)
{
    struct emu_params p;
    struct emu_channel ch = { 0 };
    struct emu_shaper s;
    struct emu_sched sc;
    TEST("That a packet-limited queue drops the tail and keeps its size") {
        link_with(&p, "--rate 1M --queue 5p");
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        int passed = 0, dropped = 0;
        for (int i = 0; i < 20; i++) {                   /* a burst at one instant */
            enum emu_verdict v = emu_shaper_offer(&s, 0, 1000, &sc);
            passed += v == EMU_PASS;
            dropped += v == EMU_DROP_QUEUE;
        }
        CHECK_EQ(passed, 6);                             /* one on the wire, five waiting */
        CHECK_EQ(dropped, 14);
        uint32_t qp; uint64_t qb;
        emu_shaper_queue(&s, 8 * MS + 1, &qp, &qb);     /* the first has left, the second started */
        CHECK_EQ(qp, 4);
        CHECK_EQ(qb, 4000);
        emu_shaper_free(&s);
    }
    TEST("That a full time-limited queue adds the delay its size implies") {
        link_with(&p, "--rate 1M --queue 100ms");
        ch.busy_until_ns = 0;
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        int64_t worst = 0;
        for (int i = 0; i < 1000; i++) {
            if (emu_shaper_offer(&s, i * MS, 1250, &sc) == EMU_PASS && sc.start_ns - sc.arrive_ns > worst)
                worst = sc.start_ns - sc.arrive_ns;
        }
        CHECK(worst >= 90 * MS && worst <= 110 * MS);
        emu_shaper_free(&s);
    }
    TEST("That a byte-limited queue counts wire bytes") {
        link_with(&p, "--rate 1M --queue 3000B");
        ch.busy_until_ns = 0;
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        int passed = 0;
        for (int i = 0; i < 10; i++) passed += emu_shaper_offer(&s, 0, 1000, &sc) == EMU_PASS;
        CHECK_EQ(passed, 4);
        emu_shaper_free(&s);
    }
}

static void test_loss(void)
{
    struct emu_params p;
    struct emu_channel ch = { 0 };
    struct emu_shaper s;
    struct emu_sched sc;
    TEST("That random loss over 100000 packets is within 5% of the setting") {
        link_with(&p, "--loss 2%");
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        int lost = 0;
        for (int i = 0; i < 100000; i++) lost += emu_shaper_offer(&s, i, 100, &sc) == EMU_DROP_LOSS;
        CHECK(lost > 1900 && lost < 2100);
        emu_shaper_free(&s);
    }
    TEST("That Gilbert-Elliott loss comes in bursts of the mean length 1/r") {
        link_with(&p, "--loss-ge 1%,25%");
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        int lost = 0, bursts = 0, prev = 0;
        for (int i = 0; i < 200000; i++) {
            int l = emu_shaper_offer(&s, i, 100, &sc) == EMU_DROP_LOSS;
            lost += l;
            bursts += l && !prev;
            prev = l;
        }
        double mean_burst = (double)lost / bursts, rate = lost / 200000.0;
        CHECK(mean_burst > 3.5 && mean_burst < 4.5);
        CHECK(rate > 0.034 && rate < 0.043);               /* p/(p+r) = 3.85% */
        emu_shaper_free(&s);
    }
    TEST("That the drop list drops exactly the listed packets") {
        link_with(&p, "--drop-list 2,5-6");
        emu_shaper_init(&s, &p, EMU_UP, &ch);
        char got[9] = { 0 };
        for (int i = 0; i < 8; i++) got[i] = emu_shaper_offer(&s, i, 100, &sc) == EMU_DROP_PATTERN ? 'x' : '.';
        CHECK(strcmp(got, ".x..xx..") == 0);
        emu_shaper_free(&s);
    }
}

static void test_hist(void)
{
    TEST("That histogram percentiles land within 7% of the true value") {
        struct emu_hist *h = calloc(1, sizeof *h);
        for (int i = 1; i <= 1000; i++) emu_hist_add(h, i * 100 * US);   /* 0.1 .. 100 ms */
        int64_t p50 = emu_hist_quantile_ns(h, 0.5), p99 = emu_hist_quantile_ns(h, 0.99);
        CHECK(p50 > 46 * MS && p50 < 54 * MS);
        CHECK(p99 > 92 * MS && p99 <= 100 * MS);
        CHECK_EQ(h->max_ns, 100 * MS);
        free(h);
    }
}

int main(void)
{
    test_parsers();
    test_options();
    test_timing();
    test_queue();
    test_loss();
    test_hist();
    return test_summary();
}
