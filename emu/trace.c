/* trace.c -- capacity over time from a trace file (trace.h): parsing, and the capacity
 * function and its inverse that the shaper asks per packet. Nothing here sleeps or reads a
 * clock: times come in as arguments. Workload: two binary searches per packet. */
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "params.h"

#define TRACE_FILE_MAX (256u << 20)   /* bytes of a trace file, at most */

void emu_trace_free(struct emu_trace *t)
{
    free(t->pt);
    memset(t, 0, sizeof *t);
}

/* The point at t_ns: the last one if it is there already, else a new one that keeps the rate. */
static struct emu_trace_point *point_at(struct emu_trace *t, uint32_t *cap, int64_t t_ns)
{
    if (t->pt[t->n - 1].t_ns == t_ns) return &t->pt[t->n - 1];
    if (t->n == EMU_TRACE_POINTS_MAX) return NULL;
    if (t->n == *cap) {
        struct emu_trace_point *np = realloc(t->pt, (size_t)*cap * 2 * sizeof *np);
        if (!np) return NULL;
        t->pt = np;
        *cap *= 2;
    }
    t->pt[t->n] = (struct emu_trace_point){ t_ns, t->pt[t->n - 1].rate_bps, 0, 0 };
    return &t->pt[t->n++];
}

/* One line's words: time in ms (decimals allowed), then nothing, a rate, or "loop". */
static int parse_line(char *line, double *ms, char **what)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *save = NULL, *a = strtok_r(line, " \t\r", &save);
    if (!a) return 0;
    *what = strtok_r(NULL, " \t\r", &save);
    if (strtok_r(NULL, " \t\r", &save)) return -EINVAL;
    char *end;
    *ms = strtod(a, &end);
    if (*end || end == a || !isfinite(*ms) || *ms < 0 || *ms > 1e12) return -EINVAL;
    return 1;
}

int emu_trace_parse(struct emu_trace *t, const char *text, char *err, unsigned err_len)
{
    memset(t, 0, sizeof *t);
    uint32_t cap = 256;
    t->pt = calloc(cap, sizeof *t->pt);
    if (!t->pt) return -ENOMEM;
    t->n = 1;                          /* pt[0]: time 0, rate 0, nothing given */
    int64_t loop_ns = -1, last_ns = 0;
    int rates = 0, opportunities = 0, rc = 0;
    const char *p = text;
    for (uint32_t lineno = 1; *p; lineno++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[256];
        double ms;
        char *what = NULL;
        int got = len < sizeof line ? 0 : -EINVAL;
        if (!got) {
            memcpy(line, p, len);
            line[len] = 0;
            got = parse_line(line, &ms, &what);
        }
        p += len + (nl ? 1 : 0);
        if (got == 0) continue;
        int64_t ns = got > 0 ? (int64_t)llround(ms * EMU_NS_PER_MS) : 0;
        const char *why = got < 0 ? "not TIME_MS [RATE|loop]" : loop_ns >= 0 ? "a line after loop"
                        : ns < last_ns ? "time goes back" : NULL;
        uint64_t bps = 0;
        if (!why && what && strcmp(what, "loop") != 0 && emu_parse_rate_bps(what, &bps)) why = "bad rate";
        struct emu_trace_point *pt = why ? NULL : point_at(t, &cap, ns);
        if (!why && !pt) why = "too many points, or out of memory";
        if (why) {
            snprintf(err, err_len, "line %u: %s", lineno, why);
            rc = -EINVAL;
            break;
        }
        last_ns = ns;
        t->lines++;
        if (!what) {
            pt->jump += (emu_nbits)EMU_TRACE_OPPORTUNITY_BYTES * 8 * EMU_NS_PER_S;
            opportunities++;
        } else if (strcmp(what, "loop") == 0) {
            loop_ns = ns;
        } else {
            pt->rate_bps = bps;
            rates++;
        }
    }
    if (!rc && !rates && !opportunities) {
        snprintf(err, err_len, "no opportunity and no rate");
        rc = -EINVAL;
    }
    if (!rc && loop_ns < 0 && !rates) loop_ns = last_ns;   /* Mahimahi's: repeats after its last line */
    if (!rc && loop_ns == 0) {
        snprintf(err, err_len, "a trace that repeats must last longer than 0 ms");
        rc = -EINVAL;
    }
    if (rc) { emu_trace_free(t); return rc; }
    if (loop_ns > 0) {
        /* What is given at the period's end is given at the next period's start. */
        struct emu_trace_point *end = &t->pt[t->n - 1];
        if (end->t_ns == loop_ns && t->n > 1) {
            t->pt[0].jump += end->jump;
            end->jump = 0;
        } else {
            end = point_at(t, &cap, loop_ns);
            if (!end) { emu_trace_free(t); return -ENOMEM; }
        }
        t->period_ns = loop_ns;
    }
    t->pt[0].c = t->pt[0].jump;
    for (uint32_t i = 1; i < t->n; i++)
        t->pt[i].c = t->pt[i - 1].c + (emu_nbits)t->pt[i - 1].rate_bps * (uint64_t)(t->pt[i].t_ns - t->pt[i - 1].t_ns)
                   + t->pt[i].jump;
    const struct emu_trace_point *last = &t->pt[t->n - 1];
    if (t->period_ns) {
        t->period_c = last->c;
        t->mean_bps = (uint64_t)(t->period_c / (uint64_t)t->period_ns);
        if (!t->period_c) {
            snprintf(err, err_len, "a period without capacity");
            emu_trace_free(t);
            return -EINVAL;
        }
    } else {
        t->mean_bps = last->rate_bps ? last->rate_bps : last->t_ns ? (uint64_t)(last->c / (uint64_t)last->t_ns) : 0;
    }
    if (!t->mean_bps) t->mean_bps = 1;
    return 0;
}

int emu_trace_load(struct emu_trace *t, const char *path, char *err, unsigned err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        snprintf(err, err_len, "%s: %s", path, strerror(e));
        return -e;
    }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    int rc = text ? 0 : -ENOMEM;
    while (!rc) {
        if (len + 1 >= cap) {
            char *nt = cap < TRACE_FILE_MAX ? realloc(text, cap * 2) : NULL;
            if (!nt) { rc = -EFBIG; break; }
            text = nt;
            cap *= 2;
        }
        size_t got = fread(text + len, 1, cap - 1 - len, f);
        if (!got) break;
        len += got;
    }
    if (!rc && ferror(f)) rc = -EIO;
    fclose(f);
    if (rc) {
        snprintf(err, err_len, "%s: %s", path, strerror(-rc));
        free(text);
        return rc;
    }
    text[len] = 0;
    char why[200];
    rc = emu_trace_parse(t, text, why, sizeof why);
    if (rc) snprintf(err, err_len, "%s: %s", path, why);
    free(text);
    return rc;
}

/* The last point at or before trace time r. */
static uint32_t point_before(const struct emu_trace *t, int64_t r)
{
    uint32_t lo = 0, hi = t->n;            /* pt[lo].t_ns <= r < pt[hi].t_ns */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->pt[mid].t_ns <= r) lo = mid;
        else hi = mid;
    }
    return lo;
}

static emu_nbits capacity(const struct emu_trace *t, int64_t now_ns, int left)
{
    int64_t r = now_ns - t->epoch_ns;
    if (r < 0) return 0;
    emu_nbits base = 0;
    if (t->period_ns) {
        base = (emu_nbits)(uint64_t)(r / t->period_ns) * t->period_c;
        r %= t->period_ns;
    }
    const struct emu_trace_point *p = &t->pt[point_before(t, r)];
    emu_nbits c = base + p->c + (emu_nbits)p->rate_bps * (uint64_t)(r - p->t_ns);
    return left && p->t_ns == r ? c - p->jump : c;
}

emu_nbits emu_trace_capacity_left(const struct emu_trace *t, int64_t now_ns) { return capacity(t, now_ns, 1); }
emu_nbits emu_trace_capacity_right(const struct emu_trace *t, int64_t now_ns) { return capacity(t, now_ns, 0); }

static int64_t ceil_div(emu_nbits a, uint64_t b) { return (int64_t)((a + b - 1) / b); }

int64_t emu_trace_time_of(const struct emu_trace *t, emu_nbits c)
{
    if (!c) return t->epoch_ns;
    emu_nbits k = 0;
    if (t->period_ns) {
        k = (c - 1) / t->period_c;
        c -= k * t->period_c;              /* 1..period_c */
        if (k > (emu_nbits)(INT64_MAX / 2 / t->period_ns)) return INT64_MAX;
    }
    const struct emu_trace_point *last = &t->pt[t->n - 1];
    int64_t r;
    if (c > last->c) {                     /* beyond a trace that does not repeat */
        if (!last->rate_bps) return INT64_MAX;
        r = last->t_ns + ceil_div(c - last->c, last->rate_bps);
    } else {
        uint32_t lo = 0, hi = t->n - 1;    /* the first point whose capacity reaches c */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (t->pt[mid].c >= c) hi = mid;
            else lo = mid + 1;
        }
        const struct emu_trace_point *p = &t->pt[lo];
        r = p->t_ns;
        if (lo > 0 && p->c - p->jump >= c) /* reached on the way there, at the rate before it */
            r = p[-1].t_ns + ceil_div(c - p[-1].c, p[-1].rate_bps);
    }
    return t->epoch_ns + (int64_t)k * t->period_ns + r;
}

int64_t emu_trace_finish(const struct emu_trace *t, emu_nbits *pos, int64_t start_ns, uint64_t bits)
{
    emu_nbits c0 = emu_trace_capacity_left(t, start_ns);
    if (*pos > c0) c0 = *pos;
    *pos = c0 + (emu_nbits)bits * EMU_NS_PER_S;
    int64_t end = emu_trace_time_of(t, *pos);
    return end < start_ns ? start_ns : end;
}
