/* params.c -- named link profiles and the parsing of link options into struct emu_params.
 * Must not touch sockets or devices. Workload: runs once at start-up. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "trace.h"

/* Profiles are option strings, so a profile means exactly what its options mean,
 * and docs/EMULATOR.md can quote them. Sources and reasoning are in docs/EMULATOR.md. */
static const struct emu_profile profiles[] = {
    { "none", "no limits at all (for measuring the emulator itself)", "" },
    { "serial9600", "9600 bit/s async serial line, PPP (RFC 1662) framing, 10 bits per byte",
      "--rate 9600 --bits-per-byte 10 --framing ppp --mtu 296 --delay 1ms --queue 8p "
      "--segment-overhead 48" },
    { "serial38400", "38400 bit/s async serial line, PPP (RFC 1662) framing, 10 bits per byte",
      "--rate 38400 --bits-per-byte 10 --framing ppp --mtu 576 --delay 1ms --queue 8p "
      "--segment-overhead 48" },
    { "radio256", "point-to-point stand-in for the 256 kbit/s radio, half duplex, 1% loss (a cell: cell --profile mpad)",
      "--rate 256k --half-duplex --delay 3ms --jitter 1ms --loss 1% --overhead 30 "
      "--per-packet 2ms --mtu 1500 --queue 32p --segment-overhead 70" },
    { "wifi11", "point-to-point stand-in for 802.11b: mean DCF access time per packet (a cell: cell --profile dot11b)",
      "--rate 11M --half-duplex --delay 1ms --jitter 500us --overhead 34 --per-packet 760us "
      "--mtu 1500 --queue 100p --segment-overhead 74" },
    { "wifi11-lossy", "11 Mbit/s 802.11b cell at the edge: 3% loss in bursts (Gilbert-Elliott)",
      "--rate 11M --half-duplex --delay 1ms --jitter 1ms --overhead 34 --per-packet 760us "
      "--loss-ge 1%,30% --mtu 1500 --queue 100p --segment-overhead 74" },
    { "cell3g", "3G-like cellular (HSPA): 1.5 Mbit/s down, 384 kbit/s up, 60 ms, deep buffers",
      "--rate-up 384k --rate-down 1500k --delay 60ms --jitter 10ms --loss 0.2% "
      "--queue 1s --mtu 1500 --segment-overhead 52" },
    { "satellite", "geostationary satellite hop: 1 Mbit/s down, 256 kbit/s up, 300 ms each way",
      "--rate-up 256k --rate-down 1M --delay 300ms --loss 0.1% --queue 1500ms "
      "--mtu 1500 --segment-overhead 52" },
    { NULL, NULL, NULL },
};

void emu_params_default(struct emu_params *p)
{
    memset(p, 0, sizeof *p);
    p->mtu = 1500;
    p->bits_per_byte = 8;
    p->seed = 1;
    for (int d = 0; d < EMU_NDIR; d++) p->dir[d].ge.bad_loss_ppm = EMU_PPM;
    snprintf(p->profile, sizeof p->profile, "none");
}

const struct emu_profile *emu_profiles(void) { return profiles; }

const struct emu_profile *emu_profile_find(const char *name)
{
    for (const struct emu_profile *pr = profiles; pr->name; pr++)
        if (strcmp(pr->name, name) == 0) return pr;
    return NULL;
}

void emu_profiles_print(FILE *out)
{
    for (const struct emu_profile *pr = profiles; pr->name; pr++)
        fprintf(out, "%-13s %s\n%-13s   = %s\n", pr->name, pr->summary, "", pr->options[0] ? pr->options : "(no options)");
}

/* --- unit parsers --- */

/* Parses a decimal number with an optional fraction; *end points past it. */
static int parse_number(const char *s, double *v, const char **end)
{
    char *e;
    if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+') return -EINVAL;
    errno = 0;
    *v = strtod(s, &e);
    if (e == s || errno || !isfinite(*v) || *v < 0) return -EINVAL;
    if (*e == 'x' || *e == 'X' || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) return -EINVAL;
    *end = e;
    return 0;
}

struct unit { const char *suffix; double scale; };

static int parse_with_units(const char *s, const struct unit *units, double *out)
{
    double v;
    const char *e;
    if (parse_number(s, &v, &e)) return -EINVAL;
    for (const struct unit *u = units; u->suffix; u++) {
        if (strcmp(e, u->suffix) == 0) { *out = v * u->scale; return 0; }
    }
    return -EINVAL;
}

int emu_parse_rate_bps(const char *s, uint64_t *bps)
{
    static const struct unit units[] = {
        { "", 1 }, { "bit", 1 }, { "bps", 1 },
        { "k", 1e3 }, { "K", 1e3 }, { "kbit", 1e3 }, { "kbps", 1e3 },
        { "M", 1e6 }, { "m", 1e6 }, { "Mbit", 1e6 }, { "Mbps", 1e6 },
        { "G", 1e9 }, { "g", 1e9 }, { "Gbit", 1e9 }, { "Gbps", 1e9 }, { NULL, 0 },
    };
    double v;
    if (parse_with_units(s, units, &v) || v > 1e12) return -EINVAL;
    *bps = (uint64_t)llround(v);
    return 0;
}

int emu_parse_time_ns(const char *s, int64_t *ns)
{
    static const struct unit units[] = {
        { "", 1e6 }, { "ms", 1e6 }, { "s", 1e9 }, { "us", 1e3 }, { "ns", 1 }, { NULL, 0 },
    };
    double v;
    if (parse_with_units(s, units, &v) || v > 3600e9) return -EINVAL;
    *ns = (int64_t)llround(v);
    return 0;
}

int emu_parse_ppm(const char *s, uint32_t *ppm)
{
    static const struct unit units[] = { { "%", 1e4 }, { "", 1e6 }, { NULL, 0 } };
    double v;
    if (parse_with_units(s, units, &v) || v > 1e6) return -EINVAL;
    *ppm = (uint32_t)llround(v);
    return 0;
}

int emu_parse_u64(const char *s, uint64_t *v)
{
    static const struct unit units[] = {
        { "", 1 }, { "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { NULL, 0 },
    };
    double d;
    if (parse_with_units(s, units, &d) || d > 1e15 || d != floor(d)) return -EINVAL;
    *v = (uint64_t)d;
    return 0;
}

/* --- option table --- */

typedef int (*dir_setter)(struct emu_dir_params *d, const char *v);
typedef int (*link_setter)(struct emu_params *p, const char *v);

static int set_rate(struct emu_dir_params *d, const char *v) { return emu_parse_rate_bps(v, &d->rate_bps); }
static int set_delay(struct emu_dir_params *d, const char *v) { return emu_parse_time_ns(v, &d->delay_ns); }
static int set_jitter(struct emu_dir_params *d, const char *v) { return emu_parse_time_ns(v, &d->jitter_ns); }
static int set_loss(struct emu_dir_params *d, const char *v) { return emu_parse_ppm(v, &d->loss_ppm); }

/* "p,r[,bad_loss[,good_loss]]", each a percentage or a fraction. */
static int set_loss_ge(struct emu_dir_params *d, const char *v)
{
    char buf[128];
    uint32_t val[4] = { 0, 0, EMU_PPM, 0 };
    if (strlen(v) >= sizeof buf) return -EINVAL;
    strcpy(buf, v);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == 4 || emu_parse_ppm(tok, &val[n])) return -EINVAL;
        n++;
    }
    if (n == 1 && val[0] == 0) { d->ge.on = false; return 0; }   /* "0" turns it off */
    if (n < 2) return -EINVAL;
    d->ge = (struct emu_ge_params){ true, val[0], val[1], val[2], val[3] };
    return 0;
}

/* "3,7,10-12": 1-based packet numbers dropped in this direction; "" or "none" clears. */
static int set_drop_list(struct emu_dir_params *d, const char *v)
{
    char buf[512];
    if (strlen(v) >= sizeof buf) return -EINVAL;
    strcpy(buf, v);
    d->n_drop = 0;
    if (strcmp(v, "none") == 0 || !*v) return 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t a, b;
        char *dash = strchr(tok, '-');
        if (dash) *dash = 0;
        if (emu_parse_u64(tok, &a) || a == 0) return -EINVAL;
        b = a;
        if (dash && (emu_parse_u64(dash + 1, &b) || b < a)) return -EINVAL;
        if (d->n_drop == EMU_DROP_RANGES_MAX) return -EINVAL;
        d->drop[d->n_drop++] = (struct emu_drop_range){ a, b };
    }
    return 0;
}

/* "100p", "64kB" / "65536B", "200ms"; a comma-separated list sets several kinds. */
static int set_queue(struct emu_dir_params *d, const char *v)
{
    char buf[128];
    if (strlen(v) >= sizeof buf) return -EINVAL;
    strcpy(buf, v);
    d->queue_pkts = 0; d->queue_bytes = 0; d->queue_ns = 0;
    if (strcmp(v, "none") == 0 || strcmp(v, "0") == 0) return 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(tok);
        uint64_t x;
        if (n > 1 && tok[n - 1] == 'p') {
            tok[n - 1] = 0;
            if (emu_parse_u64(tok, &x) || x == 0 || x > 1000000) return -EINVAL;
            d->queue_pkts = (uint32_t)x;
        } else if (n > 1 && tok[n - 1] == 'B') {
            tok[n - 1] = 0;
            if (emu_parse_u64(tok, &x) || x == 0) return -EINVAL;
            d->queue_bytes = x;
        } else if (emu_parse_time_ns(tok, &d->queue_ns) || d->queue_ns == 0 ||
                   !(strstr(tok, "s"))) {
            return -EINVAL;
        }
    }
    return 0;
}

/* A trace file (trace.h) for the direction; its mean rate stands for --rate where a rate
 * sizes something (stream mode's chunks and limits). "none" goes back to --rate. */
static int set_trace(struct emu_dir_params *d, const char *v)
{
    if (d->trace) { emu_trace_free(d->trace); free(d->trace); d->trace = NULL; }
    if (strcmp(v, "none") == 0) return 0;
    struct emu_trace *t = malloc(sizeof *t);
    char err[300];
    if (!t || emu_trace_load(t, v, err, sizeof err) < 0) {
        if (t) fprintf(stderr, "tincan-link: trace %s\n", err);
        free(t);
        return -EINVAL;
    }
    d->trace = t;
    d->rate_bps = t->mean_bps;
    return 0;
}

static int set_u32(uint32_t *dst, const char *v, uint64_t min, uint64_t max)
{
    uint64_t x;
    if (emu_parse_u64(v, &x) || x < min || x > max) return -EINVAL;
    *dst = (uint32_t)x;
    return 0;
}
static int set_mtu(struct emu_params *p, const char *v) { return set_u32(&p->mtu, v, 68, 65535); }
static int set_overhead(struct emu_params *p, const char *v) { return set_u32(&p->overhead_bytes, v, 0, 4096); }
static int set_segment_overhead(struct emu_params *p, const char *v)
{
    return set_u32(&p->segment_overhead_bytes, v, 0, 4096);
}
static int set_bpb(struct emu_params *p, const char *v)
{
    uint32_t x;
    if (set_u32(&x, v, 1, 16)) return -EINVAL;
    p->bits_per_byte = x;
    return 0;
}
static int set_per_packet(struct emu_params *p, const char *v) { return emu_parse_time_ns(v, &p->per_packet_ns); }
static int set_framing(struct emu_params *p, const char *v)
{
    if (strcmp(v, "none") == 0) p->framing = EMU_FRAMING_NONE;
    else if (strcmp(v, "ppp") == 0) p->framing = EMU_FRAMING_PPP;
    else return -EINVAL;
    return 0;
}
static int set_seed(struct emu_params *p, const char *v) { return emu_parse_u64(v, &p->seed); }
static int set_half_duplex(struct emu_params *p, const char *v) { p->half_duplex = true; return 0; }
static int set_full_duplex(struct emu_params *p, const char *v) { p->half_duplex = false; return 0; }
static int set_reorder(struct emu_params *p, const char *v) { p->reorder = true; return 0; }
static int set_vj(struct emu_params *p, const char *v) { p->vj = true; return 0; }
static int set_no_vj(struct emu_params *p, const char *v) { p->vj = false; return 0; }

struct option_entry {
    const char *name;
    dir_setter per_dir;       /* accepts NAME, NAME-up, NAME-down */
    link_setter link;
    bool flag;                /* takes no value */
    const char *help;
};

static const struct option_entry options[] = {
    { "--rate", set_rate, NULL, false, "R        bottleneck rate in bit/s (9600, 256k, 11M); 0 = unlimited" },
    { "--delay", set_delay, NULL, false, "T       one-way propagation delay (20ms, 0.3s, 500us)" },
    { "--jitter", set_jitter, NULL, false, "T      uniform jitter +-T around the delay; no reordering unless --reorder" },
    { "--loss", set_loss, NULL, false, "P        random loss (1%, 0.5%, 0.01)" },
    { "--loss-ge", set_loss_ge, NULL, false, "p,r[,h,k] Gilbert-Elliott bursty loss: p good->bad, r bad->good,\n"
      "                       loss in bad state (default 100%), loss in good state (default 0%)" },
    { "--drop-list", set_drop_list, NULL, false, "L   drop exactly these packets (1-based): 3,7,10-12" },
    { "--trace", set_trace, NULL, false, "F       capacity over time from file F (docs/EMULATOR.md), repeating; instead of --rate" },
    { "--queue", set_queue, NULL, false, "Q       drop-tail queue limit: 100p (packets), 64000B (bytes), 200ms; comma list" },
    { "--mtu", NULL, set_mtu, false, "N         MTU of the emulated link (packet mode)" },
    { "--bits-per-byte", NULL, set_bpb, false, "N line bits per byte: 10 for async serial (start+stop bits)" },
    { "--framing", NULL, set_framing, false, "F     per-packet framing counted on the wire: none | ppp (RFC 1662)" },
    { "--overhead", NULL, set_overhead, false, "N    extra bytes per packet on the wire (link headers)" },
    { "--per-packet", NULL, set_per_packet, false, "T  channel time per packet besides its bytes (medium access)" },
    { "--segment-overhead", NULL, set_segment_overhead, false, "N stream mode: wire bytes charged per MTU-40 bytes of payload" },
    { "--half-duplex", NULL, set_half_duplex, true, "     both directions share one channel (radio)" },
    { "--full-duplex", NULL, set_full_duplex, true, "     each direction has its own channel (default)" },
    { "--reorder", NULL, set_reorder, true, "         let jitter reorder packets" },
    { "--vj", NULL, set_vj, true, "              Van Jacobson TCP/IP header compression (RFC 1144) on the line" },
    { "--no-vj", NULL, set_no_vj, true, "           no header compression (default)" },
    { "--seed", NULL, set_seed, false, "N        seed of the loss and jitter generator (default 1)" },
    { NULL, NULL, NULL, false, NULL },
};

/* Finds the entry for name; *dir is -1 (both), EMU_UP or EMU_DOWN. */
static const struct option_entry *find_option(const char *name, int *dir)
{
    size_t n = strlen(name);
    *dir = -1;
    for (const struct option_entry *o = options; o->name; o++) {
        size_t k = strlen(o->name);
        if (strcmp(name, o->name) == 0) return o;
        if (!o->per_dir || n <= k || strncmp(name, o->name, k) != 0) continue;
        if (strcmp(name + k, "-up") == 0) { *dir = EMU_UP; return o; }
        if (strcmp(name + k, "-down") == 0) { *dir = EMU_DOWN; return o; }
    }
    return NULL;
}

bool emu_params_knows(const char *name)
{
    int dir;
    return find_option(name, &dir) != NULL;
}

bool emu_params_is_flag(const char *name)
{
    int dir;
    const struct option_entry *o = find_option(name, &dir);
    return o && o->flag;
}

int emu_params_set(struct emu_params *p, const char *name, const char *value)
{
    int dir;
    const struct option_entry *o = find_option(name, &dir);
    if (!o) return -ENOENT;
    int rc = 0;
    if (o->link) {
        rc = o->link(p, value);
    } else {
        for (int d = 0; d < EMU_NDIR && rc == 0; d++)
            if (dir < 0 || dir == d) rc = o->per_dir(&p->dir[d], value);
    }
    if (rc) fprintf(stderr, "tincan-link: bad value '%s' for %s\n", value ? value : "", name);
    return rc ? -EINVAL : 0;
}

int emu_params_apply_profile(struct emu_params *p, const char *name)
{
    const struct emu_profile *pr = emu_profile_find(name);
    if (!pr) return -ENOENT;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", pr->options);
    char *save = NULL;
    for (char *opt = strtok_r(buf, " ", &save); opt; opt = strtok_r(NULL, " ", &save)) {
        const char *val = emu_params_is_flag(opt) ? NULL : strtok_r(NULL, " ", &save);
        if (emu_params_set(p, opt, val)) return -EINVAL;   /* a bug in the table */
    }
    snprintf(p->profile, sizeof p->profile, "%s", name);
    return 0;
}

void emu_params_help(FILE *out)
{
    for (const struct option_entry *o = options; o->name; o++)
        fprintf(out, "  %s%s %s\n", o->name, o->per_dir ? "[-up|-down]" : "", o->help);
}

static void describe_dir(const struct emu_dir_params *d, FILE *out)
{
    fprintf(out, "rate=%llubit/s delay=%.3fms jitter=%.3fms loss=%.4f%%",
            (unsigned long long)d->rate_bps, d->delay_ns / 1e6, d->jitter_ns / 1e6, d->loss_ppm / 1e4);
    if (d->ge.on)
        fprintf(out, " ge=%.2f%%,%.2f%%,%.2f%%,%.2f%%", d->ge.p_ppm / 1e4, d->ge.r_ppm / 1e4,
                d->ge.bad_loss_ppm / 1e4, d->ge.good_loss_ppm / 1e4);
    if (d->n_drop) fprintf(out, " drop-list=%u ranges", d->n_drop);
    if (d->queue_pkts) fprintf(out, " queue=%up", d->queue_pkts);
    if (d->queue_bytes) fprintf(out, " queue=%lluB", (unsigned long long)d->queue_bytes);
    if (d->queue_ns) fprintf(out, " queue=%.1fms", d->queue_ns / 1e6);
    if (d->trace) fprintf(out, " trace=%u lines, mean %llubit/s, period %.3fs", d->trace->lines,
                          (unsigned long long)d->trace->mean_bps, d->trace->period_ns / 1e9);
}

void emu_params_describe(const struct emu_params *p, FILE *out)
{
    fprintf(out, "profile=%s mtu=%u bits/byte=%u framing=%s overhead=%uB per-packet=%.3fms%s%s%s\n",
            p->profile, p->mtu, p->bits_per_byte, p->framing == EMU_FRAMING_PPP ? "ppp" : "none",
            p->overhead_bytes, p->per_packet_ns / 1e6, p->half_duplex ? " half-duplex" : "",
            p->reorder ? " reorder" : "", p->vj ? " vj" : "");
    fprintf(out, "  up:   "); describe_dir(&p->dir[EMU_UP], out); fputc('\n', out);
    fprintf(out, "  down: "); describe_dir(&p->dir[EMU_DOWN], out); fputc('\n', out);
}
