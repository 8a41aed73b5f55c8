/* test_emu_trace.c -- trace-driven links (emu/trace.c, and the shaper with --trace): the file
 * format, capacity over time and its inverse, when packets leave a channel whose rate moves,
 * Mahimahi's delivery opportunities, repeating, and drop-tail in time on such a link. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "params.h"
#include "shaper.h"
#include "test.h"
#include "trace.h"

#define MS EMU_NS_PER_MS
#define NB(bits) ((emu_nbits)(bits) * EMU_NS_PER_S)   /* bits as nanobits */

static int parse(struct emu_trace *t, const char *text)
{
    char err[200] = "";
    int rc = emu_trace_parse(t, text, err, sizeof err);
    if (rc) fprintf(stderr, "  (parse: %s)\n", err);
    return rc;
}

static void test_format(void)
{
    struct emu_trace t;
    char err[200];
    TEST("That rate lines, opportunities, comments and a loop line parse") {
        CHECK(parse(&t, "# a trace\n0 1M\n\n1000 200k   # slower\n1500\n1500\n2000 loop\n") == 0);
        CHECK_EQ(t.lines, 5);
        CHECK_EQ(t.period_ns, 2000 * MS);
        /* 1 s at 1 Mbit/s + 1 s at 200 kbit/s + 2 x 12000 bits, over 2 s */
        CHECK_EQ(t.mean_bps, (1000000 + 200000 + 24000) / 2);
        emu_trace_free(&t);
    }
    TEST("That a trace of opportunities alone repeats after its last line, as Mahimahi's do") {
        CHECK(parse(&t, "1\n1\n2\n") == 0);
        CHECK_EQ(t.period_ns, 2 * MS);
        CHECK_EQ(t.mean_bps, 3 * 12000 / 2 * 1000);   /* 3 packets every 2 ms */
        emu_trace_free(&t);
    }
    TEST("That a trace of rates without a loop line keeps its last rate") {
        CHECK(parse(&t, "0 100k\n500 300k\n") == 0);
        CHECK_EQ(t.period_ns, 0);
        CHECK_EQ(t.mean_bps, 300000);
        CHECK(emu_trace_capacity_right(&t, 10000 * MS) == NB(50000) + NB(300000) * 19 / 2);
        emu_trace_free(&t);
    }
    TEST("That bad traces are refused with the line named") {
        CHECK(emu_trace_parse(&t, "0 1M\n5 2M\n3 1M\n", err, sizeof err) == -EINVAL && strstr(err, "line 3"));
        CHECK(emu_trace_parse(&t, "0 1M\n10 fast\n", err, sizeof err) == -EINVAL && strstr(err, "line 2"));
        CHECK(emu_trace_parse(&t, "0 1M\n10 loop\n20 1M\n", err, sizeof err) == -EINVAL && strstr(err, "line 3"));
        CHECK(emu_trace_parse(&t, "0 1M 3\n", err, sizeof err) == -EINVAL);
        CHECK(emu_trace_parse(&t, "-1\n", err, sizeof err) == -EINVAL);
        CHECK(emu_trace_parse(&t, "# nothing\n", err, sizeof err) == -EINVAL);
        CHECK(emu_trace_parse(&t, "0 0\n100 loop\n", err, sizeof err) == -EINVAL);   /* no capacity */
        CHECK(emu_trace_parse(&t, "0\n", err, sizeof err) == -EINVAL);             /* period 0 */
    }
}

static void test_capacity(void)
{
    struct emu_trace t;
    TEST("That capacity grows at each rate and repeats with the period") {
        CHECK(parse(&t, "0 1M\n1000 200k\n2000 loop\n") == 0);
        t.epoch_ns = 5 * MS;
        CHECK(emu_trace_capacity_right(&t, 0) == 0);                     /* before the epoch */
        CHECK(emu_trace_capacity_right(&t, 505 * MS) == NB(500000));
        CHECK(emu_trace_capacity_right(&t, 1505 * MS) == NB(1000000 + 100000));
        CHECK(emu_trace_capacity_right(&t, 2005 * MS) == NB(1200000));
        CHECK(emu_trace_capacity_right(&t, 4505 * MS) == NB(2 * 1200000 + 500000));
        emu_trace_free(&t);
    }
    TEST("That the time a capacity is reached is the least such time, also across periods") {
        CHECK(parse(&t, "0 1M\n1000 200k\n1200\n1200\n2000 loop\n") == 0);
        t.epoch_ns = 3;
        int bad = 0;
        uint64_t x = 88172645463325252ull;
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            emu_nbits c = (emu_nbits)(x % (6000000ull * EMU_NS_PER_S)) + 1;
            int64_t at = emu_trace_time_of(&t, c);
            if (emu_trace_capacity_right(&t, at) < c || emu_trace_capacity_right(&t, at - 1) >= c) bad++;
        }
        CHECK_EQ(bad, 0);
        /* the opportunities at 1200 ms: capacity jumps there */
        CHECK_EQ(emu_trace_time_of(&t, NB(1000000 + 40000 + 1)), 3 + 1200 * MS);
        CHECK_EQ(emu_trace_time_of(&t, NB(1000000 + 40000 + 24000)), 3 + 1200 * MS);
        CHECK_EQ(emu_trace_time_of(&t, NB(1000000 + 40000 + 24000 + 200)), 3 + 1201 * MS);
        emu_trace_free(&t);
    }
}

static void test_finish(void)
{
    struct emu_trace t;
    TEST("That a packet crossing a rate change takes each rate's time for its part") {
        CHECK(parse(&t, "0 1M\n1000 200k\n2000 loop\n") == 0);
        emu_nbits pos = 0;
        CHECK_EQ(emu_trace_finish(&t, &pos, 0, 12000), 12 * MS);          /* 1500 B at 1 Mbit/s */
        CHECK_EQ(emu_trace_finish(&t, &pos, 12 * MS, 12000), 24 * MS);    /* back to back */
        /* 5000 bits at 1 Mbit/s until 1000 ms, 7000 at 200 kbit/s: 35 ms more */
        CHECK_EQ(emu_trace_finish(&t, &pos, 995 * MS, 12000), 1035 * MS);
        CHECK_EQ(emu_trace_finish(&t, &pos, 1500 * MS, 12000), 1560 * MS);
        CHECK_EQ(emu_trace_finish(&t, &pos, 2000 * MS, 12000), 2012 * MS); /* the next period */
        emu_trace_free(&t);
    }
    TEST("That opportunities carry 1500 bytes each, shared by the packets waiting, lost when none waits") {
        CHECK(parse(&t, "5\n5\n10\n") == 0);          /* 3000 B at 5 ms, 1500 B at 10 ms = 0 */
        emu_nbits pos = 0;
        CHECK_EQ(emu_trace_finish(&t, &pos, 1 * MS, 800), 5 * MS);
        CHECK_EQ(emu_trace_finish(&t, &pos, 5 * MS, 8000), 5 * MS);        /* the same lump */
        CHECK_EQ(emu_trace_finish(&t, &pos, 5 * MS, 16000), 10 * MS);      /* its rest, then 10 ms's */
        CHECK_EQ(emu_trace_finish(&t, &pos, 10 * MS, 12000), 15 * MS);     /* 10 ms's rest, then 15 ms's */
        CHECK_EQ(emu_trace_finish(&t, &pos, 16 * MS, 800), 20 * MS);       /* 15 ms's rest is gone */
        emu_trace_free(&t);
    }
}

/* Through the shaper, as tincan-link runs it: a file given as --trace. */
static void test_shaper(void)
{
    char path[] = "/tmp/test_emu_trace.XXXXXX";
    int fd = mkstemp(path);
    const char *text = "# 2 Mbit/s for 1 s, 400 kbit/s for 1 s\n0 2M\n1000 400k\n2000 loop\n";
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    struct emu_params p;
    emu_params_default(&p);
    TEST("That --trace loads a file for both directions and its mean stands for the rate") {
        CHECK(emu_params_set(&p, "--trace", path) == 0);
        CHECK(p.dir[EMU_UP].trace && p.dir[EMU_DOWN].trace);
        CHECK_EQ(p.dir[EMU_UP].rate_bps, 1200000);
        CHECK(emu_params_set(&p, "--trace-down", "none") == 0 && !p.dir[EMU_DOWN].trace);
        CHECK(emu_params_set(&p, "--trace", "/nonexistent/trace") == -EINVAL);
        CHECK(emu_params_set(&p, "--trace-up", path) == 0);
        CHECK(emu_params_set(&p, "--queue", "100ms") == 0);
    }
    TEST("That a saturated channel delivers at each rate of the trace, its queue held to 100 ms") {
        struct emu_channel ch = { 0 };
        struct emu_shaper s;
        CHECK(emu_shaper_init(&s, &p, EMU_UP, &ch) == 0);
        uint64_t bits[4] = { 0 }, dropped = 0;
        /* offer 1500-byte packets at 3 Mbit/s for 4 s; count the bits that finish in each second
         * (within a packet: one that began in the second before may end in it) */
        for (int64_t now = 0; now < 4000 * MS; now += 4 * MS) {
            struct emu_sched sc;
            if (emu_shaper_offer(&s, now, 1500, &sc) == EMU_DROP_QUEUE) { dropped++; continue; }
            CHECK(sc.start_ns - now <= 100 * MS + 30 * MS);   /* at most the queue and one packet */
            if (sc.finish_ns < 4000 * MS) bits[sc.finish_ns / (1000 * MS)] += 12000;
        }
        fprintf(stderr, "  bits per second: %llu %llu %llu %llu\n", (unsigned long long)bits[0], (unsigned long long)bits[1], (unsigned long long)bits[2], (unsigned long long)bits[3]);
        CHECK(bits[0] >= 1950000 && bits[0] <= 2012000);
        CHECK(bits[1] >= 380000 && bits[1] <= 420000);
        CHECK(bits[2] >= 1950000 && bits[2] <= 2012000);
        CHECK(bits[3] >= 380000 && bits[3] <= 420000);
        CHECK(dropped > 0);
        emu_shaper_free(&s);
    }
    for (int d = 0; d < EMU_NDIR; d++)
        if (p.dir[d].trace) { emu_trace_free(p.dir[d].trace); free(p.dir[d].trace); }
    unlink(path);
}

/* The traces kept in the repository parse, and say what their generator promised. */
static void test_repo_traces(void)
{
    static const struct { const char *file; uint64_t lo_bps, hi_bps; } tr[] = {
        { "emu/traces/cellular.trace", 300000, 900000 },
        { "emu/traces/wifi-bursts.trace", 1000000, 4000000 },
    };
    for (unsigned i = 0; i < sizeof tr / sizeof tr[0]; i++) {
        char name[160], err[300] = "";
        snprintf(name, sizeof name, "That %s parses and its mean rate is what its model says", tr[i].file);
        TEST(name) {
            struct emu_trace t;
            int rc = emu_trace_load(&t, tr[i].file, err, sizeof err);
            if (rc) fprintf(stderr, "  (%s)\n", err);
            CHECK(rc == 0);
            if (!rc) {
                CHECK(t.mean_bps >= tr[i].lo_bps && t.mean_bps <= tr[i].hi_bps);
                CHECK(t.period_ns >= 30 * EMU_NS_PER_S);
                emu_trace_free(&t);
            }
        }
    }
}

int main(void)
{
    test_format();
    test_capacity();
    test_finish();
    test_shaper();
    test_repo_traces();
    return test_summary();
}
