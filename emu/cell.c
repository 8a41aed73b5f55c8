/* cell.c -- cell mode: builds the base's and the stations' namespaces and TUN devices, reads
 * IP packets, hands them to the shared medium (medium.c) on a clock that runs with real time,
 * and writes each to its receiver when the MAC model delivers it. No link logic of its own.
 * Workload: up to a few thousand packets a second (an 11 Mbit/s cell). */
#include "cell.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "ip.h"
#include "mac_dcf.h"
#include "mac_maca.h"
#include "netns.h"
#include "params.h"
#include "stats.h"
#include "vj.h"

#define N EMU_MEDIUM_STATIONS
#define PKT_BUF_BYTES 65536
#define READ_BATCH 32
enum { TAG_BASE = 0, TAG_STA = 1, TAG_SIGNAL = 2 };

/* A packet in the cell: the medium's frame carries a pointer to it. With VJ, data holds the
 * compressed form (len bytes, type vj) and then the packet as sent (orig_len), to count desyncs. */
struct cpkt { int64_t in_ns; uint32_t len, orig_len; int vj_type; uint8_t data[]; };

/* One direction of one station: [0] station -> base, [1] base -> station. */
struct cdir {
    uint64_t pkts_in, pkts, bytes, drops;
    struct emu_hist one_way;
    struct emu_vj_comp vjc;           /* at the sender */
    struct emu_vj_decomp vjd;         /* at the receiver */
    struct emu_vj_counters vj;
};

struct cmode {
    const struct emu_cell_opts *o;
    struct emu_medium med;
    int med_ready;
    int64_t t0_ns;
    int ns[N], tun_base[N], tun_sta[N];       /* ns[0] is the base's; [i] station i's */
    int ep, sig_fd;
    struct in_addr addr[N];
    struct cdir dir[2][N];                    /* [0] up: station i -> base, [1] down */
    uint64_t write_errors, malformed;
    struct emu_hist lateness;         /* a packet written - its delivery on the medium's clock */
    uint8_t rbuf[PKT_BUF_BYTES], cbuf[PKT_BUF_BYTES], dbuf[PKT_BUF_BYTES];
    uint32_t sched_done;              /* bit k: --leave/--join entry k has happened */
};

/* --- options --- */

void emu_cell_opts_default(struct emu_cell_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mac = "dcf";
    o->n_stations = 1;
    o->queue_pkts = 50;
    o->mtu = 1500;
    o->seed = 1;
}

static int station_index(const char *v, const char **rest)
{
    char *end;
    long i = strtol(v, &end, 10);
    if (end == v || *end != '=' || i < 1 || i >= N) return -EINVAL;
    *rest = end + 1;
    return (int)i;
}

/* Cell profiles: a MAC model with its rates. Sources in docs/EMULATOR.md. */
static int apply_profile(struct emu_cell_opts *o, const char *name)
{
    uint64_t rate;
    if (strcmp(name, "mpad") == 0) { o->mac = "maca"; rate = 256000; o->short_preamble = 0; }
    else if (strcmp(name, "dot11b") == 0) { o->mac = "dcf"; rate = 11000000; o->short_preamble = 0; }
    else if (strcmp(name, "dot11b-short") == 0) { o->mac = "dcf"; rate = 11000000; o->short_preamble = 1; }
    else return -EINVAL;
    for (int i = 1; i < N; i++) o->rate_bps[i] = rate;
    return 0;
}

/* --hidden I-J[,I-J...]: stations I and J (1..) cannot hear each other. */
static int parse_hidden(struct emu_cell_opts *o, const char *v)
{
    const char *p = v;
    for (;;) {
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p || *end != '-') return -EINVAL;
        p = end + 1;
        long b = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || a < 1 || b < 1 || a >= N || b >= N || a == b) return -EINVAL;
        o->deaf[a] |= 1u << b;
        o->deaf[b] |= 1u << a;
        if (!*end) return 0;
        p = end + 1;
    }
}

int emu_cell_option_is_flag(const char *name)
{
    return strcmp(name, "-v") == 0 || strcmp(name, "--verbose") == 0 || strcmp(name, "--vj") == 0 ||
           strcmp(name, "--no-eifs") == 0;
}

int emu_cell_option(struct emu_cell_opts *o, const char *name, const char *v)
{
    uint64_t u;
    uint32_t ppm;
    const char *rest;
    int i;
    if (strcmp(name, "--vj") == 0) { o->vj = 1; return 0; }
    if (strcmp(name, "--no-eifs") == 0) { o->no_eifs = 1; return 0; }
    if (emu_cell_option_is_flag(name)) { o->verbose = 1; return 0; }
    if (!v) return -EINVAL;
    if (strcmp(name, "--profile") == 0) return apply_profile(o, v);
    if (strcmp(name, "--mac") == 0) {
        if (strcmp(v, "dcf") && strcmp(v, "maca")) return -EINVAL;
        o->mac = strcmp(v, "dcf") == 0 ? "dcf" : "maca";
        return 0;
    }
    if (strcmp(name, "--stations") == 0) {
        if (emu_parse_u64(v, &u) || u < 1 || u >= N) return -EINVAL;
        o->n_stations = (int)u;
        return 0;
    }
    if (strcmp(name, "--rate") == 0) {
        if (emu_parse_rate_bps(v, &u)) return -EINVAL;
        for (i = 1; i < N; i++) o->rate_bps[i] = u;
        return 0;
    }
    if (strcmp(name, "--station-rate") == 0) {
        if ((i = station_index(v, &rest)) < 0 || emu_parse_rate_bps(rest, &u)) return -EINVAL;
        o->rate_bps[i] = u;
        return 0;
    }
    if (strcmp(name, "--loss") == 0) {
        if (emu_parse_ppm(v, &ppm)) return -EINVAL;
        for (i = 1; i < N; i++) o->loss_ppm[i] = ppm;
        return 0;
    }
    if (strcmp(name, "--station-loss") == 0) {
        if ((i = station_index(v, &rest)) < 0 || emu_parse_ppm(rest, &ppm)) return -EINVAL;
        o->loss_ppm[i] = ppm;
        return 0;
    }
    if (strcmp(name, "--queue") == 0) {
        size_t n = strlen(v);
        if (n && v[n - 1] == 'p') n--;
        char buf[32];
        if (n == 0 || n >= sizeof buf) return -EINVAL;
        memcpy(buf, v, n);
        buf[n] = 0;
        if (emu_parse_u64(buf, &u) || u < 1 || u > 100000) return -EINVAL;
        o->queue_pkts = (uint32_t)u;
        return 0;
    }
    if (strcmp(name, "--mtu") == 0) {
        if (emu_parse_u64(v, &u) || u < 68 || u > 9000) return -EINVAL;
        o->mtu = (uint32_t)u;
        return 0;
    }
    if (strcmp(name, "--preamble") == 0) {
        if (strcmp(v, "long") && strcmp(v, "short")) return -EINVAL;
        o->short_preamble = strcmp(v, "short") == 0;
        return 0;
    }
    if (strcmp(name, "--rts-threshold") == 0) {
        if (emu_parse_u64(v, &u) || u > 65535) return -EINVAL;
        o->rts_threshold_bytes = (uint32_t)u;
        return 0;
    }
    if (strcmp(name, "--leave") == 0 || strcmp(name, "--join") == 0) {
        char *end;
        long st = strtol(v, &end, 10);
        int64_t t;
        if (end == v || *end != '@' || st < 1 || st >= N || o->n_sched >= 16 || emu_parse_time_ns(end + 1, &t))
            return -EINVAL;
        o->sched[o->n_sched].st = (int)st;
        o->sched[o->n_sched].at_ns = t;
        o->sched[o->n_sched++].join = name[2] == 'j';
        return 0;
    }
    if (strcmp(name, "--ap-queue") == 0) {
        if (strcmp(v, "fifo") == 0) o->ap_sched = EMU_AP_FIFO;
        else if (strcmp(v, "rr") == 0) o->ap_sched = EMU_AP_RR;
        else if (strcmp(v, "airtime") == 0) o->ap_sched = EMU_AP_AIRTIME;
        else return -EINVAL;
        return 0;
    }
    if (strcmp(name, "--hidden") == 0) return parse_hidden(o, v);
    if (strcmp(name, "--seed") == 0) return emu_parse_u64(v, &o->seed) ? -EINVAL : 0;
    if (strcmp(name, "--info-file") == 0) { o->info_file = v; return 0; }
    if (strcmp(name, "--stats-file") == 0) { o->stats_file = v; return 0; }
    return -ENOENT;
}

void emu_cell_help(FILE *out)
{
    fprintf(out,
"Cell options:\n"
"  --profile mpad|dot11b|dot11b-short   MACA at 256 kbit/s; 802.11b DCF at 11 Mbit/s,\n"
"                        long or short preamble (see docs/EMULATOR.md)\n"
"  --mac dcf|maca        the MAC model (default dcf)\n"
"  --stations N          stations besides the base (default 1)\n"
"  --rate R              every station's data rate; --station-rate I=R one station's\n"
"  --loss P              every station's frame error rate; --station-loss I=P one's\n"
"  --queue N             packets in each station's queue and each of the base's (default 50)\n"
"  --mtu N               of every TUN device (default 1500)\n"
"  --preamble long|short, --rts-threshold B     (dcf)\n"
"  --ap-queue fifo|rr|airtime   (dcf) the base's queueing: one FIFO for all stations\n"
"                        (default), a queue per station served round robin, or by\n"
"                        deficit round robin of airtime (1 ms quantum)\n"
"  --no-eifs             (dcf) DIFS, not EIFS (364 us), after a garbled frame\n"
"  --hidden I-J[,I-J...] (maca) stations I and J cannot hear each other\n"
"  --vj                  header compression per station and direction; the compressor\n"
"                        forgets when the MAC drops a packet\n"
"  --leave I@T, --join I@T   station I leaves or (re)joins T after the start (e.g. 5s)\n"
"  --seed N, --info-file F, --stats-file F, -v\n");
}

/* --- the medium's hooks --- */

static struct cdir *dir_of(struct cmode *c, const struct emu_mframe *f)
{
    return &c->dir[f->src == EMU_MEDIUM_BASE][emu_mframe_peer(f)];
}

static void on_delivered(void *arg, const struct emu_mframe *f, int64_t now_ns)
{
    struct cmode *c = arg;
    const struct cpkt *k = f->user;
    struct cdir *d = dir_of(c, f);
    const uint8_t *out = k->data;
    size_t len = k->len;
    if (c->o->vj) {
        long n = emu_vj_decompress(&d->vjd, (enum emu_vj_type)k->vj_type, k->data, k->len, c->dbuf, sizeof c->dbuf);
        if (n < 0) { d->vj.tossed++; d->drops++; return; }
        out = c->dbuf;
        len = (size_t)n;
        if (len != k->orig_len || memcmp(out, k->data + k->len, len) != 0) d->vj.desync++;
    }
    int fd = f->dst == EMU_MEDIUM_BASE ? c->tun_base[f->src] : c->tun_sta[f->dst];
    if (write(fd, out, len) != (ssize_t)len) { c->write_errors++; return; }
    d->pkts++;
    d->bytes += len;
    emu_hist_add(&d->one_way, now_ns - k->in_ns);
    int64_t late = emu_now_ns() - c->t0_ns - now_ns;   /* the loop runs events up to 50 us early */
    emu_hist_add(&c->lateness, late > 0 ? late : 0);
}

/* The sender's queue lets go of a frame only here or in on_dropped: the packet is freed then. */
static void on_acked(void *arg, const struct emu_mframe *f, int64_t now_ns)
{
    (void)arg; (void)now_ns;
    free(f->user);
}

/* A packet the compressor saw will never arrive: the compressor forgets, so the next packet
 * of each connection goes uncompressed and the decompressor never applies a delta to a header
 * it did not get. (One that was delivered but whose ACK never came costs only that.) */
static void on_dropped(void *arg, const struct emu_mframe *f, int why, int64_t now_ns)
{
    struct cmode *c = arg;
    struct cdir *d = dir_of(c, f);
    (void)why; (void)now_ns;
    d->drops++;
    if (c->o->vj) { emu_vj_comp_lost(&d->vjc); d->vj.comp_resets++; }
    free(f->user);
}

/* --- input --- */

static void on_packet(struct cmode *c, int from_base, int i, const uint8_t *pkt, size_t len)
{
    struct emu_ip_info ip;
    struct cdir *d = &c->dir[from_base][i];
    int src = from_base ? EMU_MEDIUM_BASE : i, dst = from_base ? i : EMU_MEDIUM_BASE;
    d->pkts_in++;
    if (emu_ip_parse(pkt, len, &ip) < 0 || ip.total_len != len) { c->malformed++; return; }
    emu_medium_run(&c->med, emu_now_ns() - c->t0_ns);
    if (emu_medium_would_drop(&c->med, src, dst)) { d->drops++; return; }   /* before compressing */
    const uint8_t *data = pkt;
    size_t n = len, orig = 0;
    int type = EMU_VJ_TYPE_IP;
    if (c->o->vj) {
        enum emu_vj_type t = EMU_VJ_TYPE_IP;
        unsigned h_in = 0, h_out = 0;
        long r = ip.version == 4 ? emu_vj_compress(&d->vjc, pkt, len, &t, c->cbuf, sizeof c->cbuf, &h_in, &h_out) : -1;
        if (r >= 0) { data = c->cbuf; n = (size_t)r; type = (int)t; }
        if (h_in) {
            d->vj.tcp_pkts++;
            d->vj.compressed += t == EMU_VJ_TYPE_COMPRESSED;
            d->vj.uncompressed += t == EMU_VJ_TYPE_UNCOMPRESSED;
            d->vj.hdr_bytes_in += h_in;
            d->vj.hdr_bytes_out += h_out;
        }
        orig = len;
    }
    struct cpkt *k = malloc(sizeof *k + n + orig);
    if (!k) { d->drops++; if (c->o->vj) emu_vj_comp_lost(&d->vjc); return; }
    *k = (struct cpkt){ emu_now_ns() - c->t0_ns, (uint32_t)n, (uint32_t)orig, type };
    memcpy(k->data, data, n);
    if (orig) memcpy(k->data + n, pkt, orig);
    if (emu_medium_send(&c->med, src, dst, (uint32_t)n, k) < 0) {
        d->drops++;
        if (c->o->vj) emu_vj_comp_lost(&d->vjc);
        free(k);
    }
}

static void on_readable(struct cmode *c, int tag, int i)
{
    int fd = tag == TAG_BASE ? c->tun_base[i] : c->tun_sta[i];
    for (int n = 0; n < READ_BATCH; n++) {
        ssize_t r = read(fd, c->rbuf, sizeof c->rbuf);
        if (r <= 0) return;
        on_packet(c, tag == TAG_BASE, i, c->rbuf, (size_t)r);
    }
}

/* --- report --- */

static void print_dir(FILE *out, const char *pfx, const struct cdir *d)
{
    fprintf(out, "%s_pkts_in=%llu\n%s_pkts=%llu\n%s_bytes=%llu\n%s_drops=%llu\n", pfx,
            (unsigned long long)d->pkts_in, pfx, (unsigned long long)d->pkts, pfx,
            (unsigned long long)d->bytes, pfx, (unsigned long long)d->drops);
    fprintf(out, "%s_one_way_p50_us=%lld\n%s_one_way_p99_us=%lld\n", pfx,
            (long long)(emu_hist_quantile_ns(&d->one_way, 0.5) / 1000), pfx,
            (long long)(emu_hist_quantile_ns(&d->one_way, 0.99) / 1000));
    if (d->vj.tcp_pkts)
        fprintf(out, "%s_vj_compressed=%llu\n%s_vj_uncompressed=%llu\n%s_vj_tossed=%llu\n%s_vj_desync=%llu\n"
                "%s_vj_comp_resets=%llu\n%s_vj_hdr_bytes_in=%llu\n%s_vj_hdr_bytes_out=%llu\n",
                pfx, (unsigned long long)d->vj.compressed, pfx, (unsigned long long)d->vj.uncompressed,
                pfx, (unsigned long long)d->vj.tossed, pfx, (unsigned long long)d->vj.desync,
                pfx, (unsigned long long)d->vj.comp_resets, pfx, (unsigned long long)d->vj.hdr_bytes_in,
                pfx, (unsigned long long)d->vj.hdr_bytes_out);
}

static void report(FILE *out, void *arg)
{
    const struct cmode *c = arg;
    fprintf(out, "mode=cell\nmac=%s\nstations=%d\nmalformed=%llu\nwrite_errors=%llu\n", c->o->mac,
            c->o->n_stations, (unsigned long long)c->malformed, (unsigned long long)c->write_errors);
    fprintf(out, "lateness_p50_us=%lld\nlateness_p99_us=%lld\nlateness_max_us=%lld\n",
            (long long)(emu_hist_quantile_ns(&c->lateness, 0.5) / 1000),
            (long long)(emu_hist_quantile_ns(&c->lateness, 0.99) / 1000),
            (long long)(emu_hist_quantile_ns(&c->lateness, 1.0) / 1000));
    for (int i = 0; i <= c->o->n_stations; i++) {
        const struct emu_station *s = &c->med.st[i];
        char pfx[32];
        if (i) snprintf(pfx, sizeof pfx, "sta%d", i); else snprintf(pfx, sizeof pfx, "base");
        fprintf(out, "%s_rate_bps=%llu\n%s_attempts=%llu\n%s_collisions=%llu\n%s_noise_losses=%llu\n", pfx,
                (unsigned long long)s->p.rate_bps, pfx, (unsigned long long)s->c.attempts, pfx,
                (unsigned long long)s->c.collisions, pfx, (unsigned long long)s->c.noise_losses);
        fprintf(out, "%s_drop_queue=%llu\n%s_drop_retry=%llu\n%s_airtime_us=%lld\n", pfx,
                (unsigned long long)s->c.drop_queue, pfx, (unsigned long long)s->c.drop_retry, pfx,
                (long long)(s->c.airtime_ns / 1000));
        if (!i) continue;
        char d[40];
        snprintf(d, sizeof d, "sta%d_up", i);
        print_dir(out, d, &c->dir[0][i]);
        snprintf(d, sizeof d, "sta%d_down", i);
        print_dir(out, d, &c->dir[1][i]);
    }
    if (strcmp(c->o->mac, "maca") == 0) {
        const struct emu_maca_counters *k = emu_maca_counters(&c->med);
        fprintf(out, "maca_rts=%llu\nmaca_cts=%llu\nmaca_data=%llu\nmaca_ack=%llu\nmaca_jams=%llu\n"
                "maca_re_acks=%llu\nmaca_missed_cts=%llu\nmaca_missed_ack=%llu\n",
                (unsigned long long)k->sent[EMU_MACA_RTS], (unsigned long long)k->sent[EMU_MACA_CTS],
                (unsigned long long)k->sent[EMU_MACA_DATA], (unsigned long long)k->sent[EMU_MACA_ACK],
                (unsigned long long)k->jams, (unsigned long long)k->re_acks,
                (unsigned long long)k->missed_cts, (unsigned long long)k->missed_ack);
    }
    fflush(out);
}

static void info(FILE *out, void *arg)
{
    const struct cmode *c = arg;
    int pid = (int)getpid();
    char a[INET_ADDRSTRLEN];
    fprintf(out, "pid=%d\nmac=%s\nstations=%d\n", pid, c->o->mac, c->o->n_stations);
    inet_ntop(AF_INET, &c->addr[0], a, sizeof a);
    fprintf(out, "ns_base=/proc/%d/fd/%d\naddr_base=%s\n", pid, c->ns[0], a);
    for (int i = 1; i <= c->o->n_stations; i++) {
        inet_ntop(AF_INET, &c->addr[i], a, sizeof a);
        fprintf(out, "ns_%d=/proc/%d/fd/%d\naddr_%d=%s\n", i, pid, c->ns[i], i, a);
    }
    fflush(out);
}

/* --- set-up --- */

static int add_fd(struct cmode *c, int fd, int tag, int i)
{
    struct epoll_event e = { .events = EPOLLIN, .data.u64 = (uint64_t)tag << 32 | (uint32_t)i };
    return epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

static int medium_setup(struct cmode *c)
{
    const struct emu_cell_opts *o = c->o;
    struct emu_medium_hooks h = { on_delivered, on_dropped, on_acked, c };
    int rc;
    int hidden = 0;
    for (int i = 0; i < N; i++) hidden |= o->deaf[i] != 0;
    if (strcmp(o->mac, "maca") == 0) {
        if (o->ap_sched != EMU_AP_FIFO) {
            fprintf(stderr, "tincan-link: --ap-queue is for --mac dcf (MACA keeps a queue per destination)\n");
            return -EINVAL;
        }
        static struct emu_maca_cfg mc;        /* 1 KiB of hears[][]: not on the stack */
        emu_maca_default(&mc);
        mc.hidden = hidden;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) mc.hears[i][j] = !(o->deaf[i] >> j & 1);
        rc = emu_medium_init(&c->med, &emu_mac_maca, &mc, o->seed, &h);
    } else {
        if (hidden) {
            fprintf(stderr, "tincan-link: --hidden needs --mac maca (the DCF model has every station hear every other)\n");
            return -EINVAL;
        }
        struct emu_dcf_cfg dc;
        emu_dcf_default(&dc);
        if (o->short_preamble) dc.plcp_ns = 96000;
        dc.rts_threshold_bytes = o->rts_threshold_bytes;
        if (o->no_eifs) dc.eifs_ns = 0;
        rc = emu_medium_init(&c->med, &emu_mac_dcf, &dc, o->seed, &h);
        if (rc == 0) rc = emu_medium_set_ap_sched(&c->med, o->ap_sched);
    }
    if (rc < 0) return rc;
    c->med_ready = 1;
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 2; k++) {
            emu_vj_comp_init(&c->dir[k][i].vjc);
            emu_vj_decomp_init(&c->dir[k][i].vjd);
        }
    uint64_t dflt = strcmp(o->mac, "maca") == 0 ? 256000 : 11000000;
    struct emu_station_params bp = { 0, 0, o->queue_pkts };
    emu_medium_join(&c->med, EMU_MEDIUM_BASE, &bp);
    for (int i = 1; i <= o->n_stations; i++) {
        struct emu_station_params p = { o->rate_bps[i] ? o->rate_bps[i] : dflt, o->loss_ppm[i], o->queue_pkts };
        emu_medium_join(&c->med, i, &p);
    }
    return 0;
}

static int cell_setup(struct cmode *c)
{
    const struct emu_cell_opts *o = c->o;
    int rc = medium_setup(c);
    if (rc < 0) return rc;
    inet_pton(AF_INET, "10.78.0.1", &c->addr[0]);
    c->ns[0] = emu_netns_new();
    if (c->ns[0] < 0) return c->ns[0];
    for (int i = 1; i <= o->n_stations; i++) {
        c->addr[i].s_addr = htonl(ntohl(c->addr[0].s_addr) + (uint32_t)i);
        c->ns[i] = emu_netns_new();
        if (c->ns[i] < 0) return c->ns[i];
        char bname[IFNAMSIZ];
        snprintf(bname, sizeof bname, "cs%d", i);
        struct emu_tun_cfg bc = { bname, c->addr[0], c->addr[i], o->mtu, 0, 0, 0, 1 };
        c->tun_base[i] = emu_tun_create(c->ns[0], &bc);
        if (c->tun_base[i] < 0) return c->tun_base[i];
        struct emu_tun_cfg sc = { "cell0", c->addr[i], c->addr[0], o->mtu, 1, 0, 0, 0 };
        c->tun_sta[i] = emu_tun_create(c->ns[i], &sc);
        if (c->tun_sta[i] < 0) return c->tun_sta[i];
    }
    c->ep = epoll_create1(EPOLL_CLOEXEC);
    if (c->ep < 0) return -errno;
    for (int i = 1; i <= o->n_stations; i++)
        if ((rc = add_fd(c, c->tun_base[i], TAG_BASE, i)) < 0 || (rc = add_fd(c, c->tun_sta[i], TAG_STA, i)) < 0)
            return rc;
    return add_fd(c, c->sig_fd, TAG_SIGNAL, 0);
}

/* Frees every packet still queued in the medium, then the medium. */
static void cell_teardown(struct cmode *c)
{
    if (c->med_ready) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                struct emu_mqueue *q = &c->med.st[i].q[j];
                for (uint32_t k = 0; k < q->len; k++) free(q->f[(q->head + k) % q->cap].user);
                q->len = 0;
            }
        emu_medium_free(&c->med);
    }
    for (int i = 0; i < N; i++) {
        if (c->tun_base[i] >= 0) close(c->tun_base[i]);
        if (c->tun_sta[i] >= 0) close(c->tun_sta[i]);
        if (c->ns[i] >= 0) close(c->ns[i]);
    }
    if (c->ep >= 0) close(c->ep);
}

static void emit_report(struct cmode *c)
{
    report(stderr, c);
    if (c->o->stats_file && emu_report_write(c->o->stats_file, report, c) < 0)
        fprintf(stderr, "tincan-link: cannot write %s\n", c->o->stats_file);
}

/* Returns 1 to stop. */
static int on_signal(struct cmode *c)
{
    struct signalfd_siginfo si;
    int stop = 0;
    while (read(c->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGUSR1) emit_report(c);
        else stop = 1;
    }
    return stop;
}

/* Stations leaving and joining as --leave/--join asked; returns the next such time. A station
 * that left keeps its namespace; what it sends meanwhile is dropped (staI_up_drops). */
static int64_t run_schedule(struct cmode *c, int64_t now_ns)
{
    int64_t next = INT64_MAX;
    for (int k = 0; k < c->o->n_sched; k++) {
        int st = c->o->sched[k].st;
        if (st > c->o->n_stations) continue;
        if (c->sched_done & (1u << k)) continue;
        if (c->o->sched[k].at_ns > now_ns) { if (c->o->sched[k].at_ns < next) next = c->o->sched[k].at_ns; continue; }
        c->sched_done |= 1u << k;
        if (c->o->sched[k].join) {
            struct emu_station_params p = c->med.st[st].p;
            emu_medium_join(&c->med, st, &p);
        } else {
            emu_medium_leave(&c->med, st);
        }
        if (c->o->verbose) fprintf(stderr, "tincan-link: station %d %s\n", st, c->o->sched[k].join ? "joined" : "left");
    }
    return next;
}

int emu_cell_run(const struct emu_cell_opts *o, int sig_fd)
{
    struct cmode *c = calloc(1, sizeof *c);
    if (!c) return -ENOMEM;
    c->o = o;
    c->ep = -1;
    c->sig_fd = sig_fd;
    for (int i = 0; i < N; i++) c->ns[i] = c->tun_base[i] = c->tun_sta[i] = -1;
    c->t0_ns = emu_now_ns();
    int rc = cell_setup(c);
    if (rc < 0) {
        fprintf(stderr, "tincan-link: cannot set up the cell: %s%s\n", strerror(-rc),
                rc == -EPERM ? " (cell mode needs root: CAP_SYS_ADMIN and CAP_NET_ADMIN)" : "");
    } else {
        info(stderr, c);
        if (o->info_file && emu_report_write(o->info_file, info, c) < 0)
            fprintf(stderr, "tincan-link: cannot write %s\n", o->info_file);
    }
    struct epoll_event evs[16];
    for (int stop = rc < 0; !stop;) {
        int64_t now = emu_now_ns() - c->t0_ns;
        emu_medium_run(&c->med, now + EMU_EARLY_NS);
        int64_t next = run_schedule(c, now);
        if (emu_medium_next_ns(&c->med) < next) next = emu_medium_next_ns(&c->med);
        struct timespec ts = emu_ns_to_timespec(next == INT64_MAX ? EMU_NS_PER_S : next - now - EMU_EARLY_NS);
        int n = epoll_pwait2(c->ep, evs, 16, &ts, NULL);
        if (n < 0 && errno != EINTR) { rc = -errno; break; }
        for (int k = 0; k < n; k++) {
            int tag = (int)(evs[k].data.u64 >> 32), i = (int)(uint32_t)evs[k].data.u64;
            if (tag == TAG_SIGNAL) stop |= on_signal(c);
            else on_readable(c, tag, i);
        }
    }
    if (rc == 0) emit_report(c);
    if (o->info_file) unlink(o->info_file);
    cell_teardown(c);
    free(c);
    return rc;
}
