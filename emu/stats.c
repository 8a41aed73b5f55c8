/* stats.c -- histograms and the key=value report of per-direction counters.
 * Report keys are a stable interface used by benchmarks: add keys, never rename. */
#include "stats.h"

#include <errno.h>
#include <unistd.h>

#include "clock.h"

static unsigned bucket_of(int64_t ns)
{
    uint64_t us = ns > 0 ? (uint64_t)ns / 1000 : 0;
    if (us < 16) return (unsigned)us;
    unsigned e = 63 - (unsigned)__builtin_clzll(us);          /* >= 4 */
    unsigned idx = 16 + (e - 4) * 16 + (unsigned)((us >> (e - 4)) & 15);
    return idx < EMU_HIST_BUCKETS ? idx : EMU_HIST_BUCKETS - 1;
}

/* Middle of a bucket, in ns. */
static int64_t bucket_mid_ns(unsigned idx)
{
    if (idx < 16) return (int64_t)idx * 1000 + 500;
    unsigned e = (idx - 16) / 16 + 4, sub = (idx - 16) % 16;
    uint64_t lo = (1ULL << e) + ((uint64_t)sub << (e - 4)), width = 1ULL << (e - 4);
    return (int64_t)((lo * 2 + width) * 500);
}

void emu_hist_add(struct emu_hist *h, int64_t ns)
{
    if (ns < 0) ns = 0;
    h->count++;
    h->sum_ns += ns;
    if (ns > h->max_ns) h->max_ns = ns;
    h->bucket[bucket_of(ns)]++;
}

int64_t emu_hist_quantile_ns(const struct emu_hist *h, double q)
{
    if (!h->count) return 0;
    uint64_t rank = (uint64_t)(q * (double)(h->count - 1)) + 1, seen = 0;
    for (unsigned i = 0; i < EMU_HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            int64_t mid = bucket_mid_ns(i);
            return mid < h->max_ns ? mid : h->max_ns;
        }
    }
    return h->max_ns;
}

const char *emu_drop_cause_name(enum emu_drop_cause c)
{
    static const char *const names[EMU_DC_N] = {
        "queue", "loss", "pattern", "malformed", "mtu", "vj_toss", "memory",
    };
    return (unsigned)c < EMU_DC_N ? names[c] : "?";
}

static void print_hist(FILE *out, const char *prefix, const char *name, const struct emu_hist *h)
{
    fprintf(out, "%s_%s_count=%llu\n", prefix, name, (unsigned long long)h->count);
    fprintf(out, "%s_%s_mean_us=%.1f\n", prefix, name, h->count ? (double)h->sum_ns / (double)h->count / 1e3 : 0.0);
    static const struct { const char *key; double q; } qs[] = {
        { "p50", 0.50 }, { "p90", 0.90 }, { "p99", 0.99 },
    };
    for (unsigned i = 0; i < sizeof qs / sizeof qs[0]; i++)
        fprintf(out, "%s_%s_%s_us=%.1f\n", prefix, name, qs[i].key, emu_hist_quantile_ns(h, qs[i].q) / 1e3);
    fprintf(out, "%s_%s_max_us=%.1f\n", prefix, name, h->max_ns / 1e3);
}

void emu_dir_stats_print(FILE *out, const char *prefix, const struct emu_dir_stats *s)
{
    fprintf(out, "%s_pkts_in=%llu\n%s_bytes_in=%llu\n", prefix, (unsigned long long)s->pkts_in,
            prefix, (unsigned long long)s->bytes_in);
    fprintf(out, "%s_pkts=%llu\n%s_bytes=%llu\n", prefix, (unsigned long long)s->pkts_out,
            prefix, (unsigned long long)s->bytes_out);
    fprintf(out, "%s_wire_bytes=%llu\n", prefix, (unsigned long long)s->wire_bytes);
    uint64_t total = 0;
    for (int c = 0; c < EMU_DC_N; c++) {
        fprintf(out, "%s_drop_%s=%llu\n", prefix, emu_drop_cause_name(c), (unsigned long long)s->drops[c]);
        total += s->drops[c];
    }
    fprintf(out, "%s_drops=%llu\n", prefix, (unsigned long long)total);
    print_hist(out, prefix, "queue_delay", &s->queue_delay);
    print_hist(out, prefix, "one_way", &s->one_way);
    print_hist(out, prefix, "lateness", &s->lateness);
    if (s->vj.tcp_pkts) {
        const struct emu_vj_counters *v = &s->vj;
        fprintf(out, "%s_vj_tcp_pkts=%llu\n%s_vj_compressed=%llu\n%s_vj_uncompressed=%llu\n",
                prefix, (unsigned long long)v->tcp_pkts, prefix, (unsigned long long)v->compressed,
                prefix, (unsigned long long)v->uncompressed);
        fprintf(out, "%s_vj_hdr_bytes_in=%llu\n%s_vj_hdr_bytes_out=%llu\n%s_vj_tossed=%llu\n",
                prefix, (unsigned long long)v->hdr_bytes_in, prefix, (unsigned long long)v->hdr_bytes_out,
                prefix, (unsigned long long)v->tossed);
        fprintf(out, "%s_vj_desync=%llu\n%s_vj_comp_resets=%llu\n",
                prefix, (unsigned long long)v->desync, prefix, (unsigned long long)v->comp_resets);
    }
}

int emu_report_write(const char *path, void (*fn)(FILE *out, void *arg), void *arg)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return -ENAMETOOLONG;
    FILE *f = fopen(tmp, "w");
    if (!f) return -errno;
    fn(f, arg);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    return 0;
}
