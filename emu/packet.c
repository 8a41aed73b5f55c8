/* packet.c -- packet mode: reads IP packets from the TUN device of one side, passes them
 * through the link model (framing, header compression, queue, loss, delay) and writes them
 * to the other side's TUN device when due. Must count and drop malformed packets, never
 * forward them. Workload: up to ~1 Gbit/s of MTU-sized packets on one core. */
#include "packet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "ip.h"
#include "netns.h"
#include "pcap.h"
#include "ppp.h"
#include "shaper.h"
#include "stats.h"
#include "vj.h"

#define PKT_BUF_BYTES     65536
#define FRAME_BUF_BYTES   (2 * PKT_BUF_BYTES + 16)   /* worst-case stuffing doubles a packet */
#define READ_BATCH        64
#define STORED_MAX_BYTES  (256u << 20)                /* per direction, packets in the link */
enum { SIDE_A = 0, SIDE_B = 1, TAG_SIGNAL = 2 };

/* A packet in the link, as it travels: a PPP frame, a VJ form, or the IP packet itself.
 * With --vj the packet as sent follows (orig_len bytes), to count decompressor desyncs. */
struct pkt {
    int64_t arrive_ns, deliver_ns;
    uint64_t seq;
    uint32_t len, orig_len;
    uint16_t proto;                   /* PPP protocol number of what data holds */
    uint8_t lost;                     /* lost on the line: only tells the decompressor */
    uint8_t data[];
};

/* One direction: reads side d's TUN device, writes the other's. */
struct pdir {
    struct emu_shaper sh;
    struct emu_dir_stats st;
    struct emu_vj_comp vjc;
    struct emu_vj_decomp vjd;
    struct pkt **heap;                /* min-heap by (deliver_ns, seq) */
    size_t n, cap;
    uint64_t seq, stored_bytes;
};

struct pmode {
    const struct emu_params *p;
    const struct emu_packet_opts *o;
    int ns[2], tun[2], ep, sig_fd;
    int tags[3];
    char dev[2][IFNAMSIZ];
    struct in_addr addr[2];
    struct emu_channel chan[EMU_NDIR];
    struct pdir dir[EMU_NDIR];
    struct emu_pcap pcap;
    uint8_t rbuf[PKT_BUF_BYTES], cbuf[PKT_BUF_BYTES], dbuf[PKT_BUF_BYTES];
    uint8_t fbuf[FRAME_BUF_BYTES];
    _Alignas(16) uint8_t sbuf[sizeof(struct pkt) + FRAME_BUF_BYTES + PKT_BUF_BYTES];   /* delivered at once */
};

/* --- the delivery heap --- */

static int pkt_before(const struct pkt *a, const struct pkt *b)
{
    return a->deliver_ns < b->deliver_ns || (a->deliver_ns == b->deliver_ns && a->seq < b->seq);
}

static int heap_push(struct pdir *pd, struct pkt *k)
{
    if (pd->n == pd->cap) {
        size_t cap = pd->cap ? pd->cap * 2 : 256;
        struct pkt **h = realloc(pd->heap, cap * sizeof *h);
        if (!h) return -ENOMEM;
        pd->heap = h;
        pd->cap = cap;
    }
    size_t i = pd->n++;
    while (i && pkt_before(k, pd->heap[(i - 1) / 2])) {
        pd->heap[i] = pd->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    pd->heap[i] = k;
    return 0;
}

static struct pkt *heap_pop(struct pdir *pd)
{
    struct pkt *top = pd->heap[0], *last = pd->heap[--pd->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= pd->n) break;
        if (c + 1 < pd->n && pkt_before(pd->heap[c + 1], pd->heap[c])) c++;
        if (!pkt_before(pd->heap[c], last)) break;
        pd->heap[i] = pd->heap[c];
        i = c;
    }
    if (pd->n) pd->heap[i] = last;
    return top;
}

static void deliver(struct pmode *m, int d, const struct pkt *k);

/* --- sending side --- */

static uint16_t vj_proto(enum emu_vj_type t)
{
    return t == EMU_VJ_TYPE_COMPRESSED ? EMU_PPP_PROTO_VJ_COMP
         : t == EMU_VJ_TYPE_UNCOMPRESSED ? EMU_PPP_PROTO_VJ_UNCOMP : EMU_PPP_PROTO_IP;
}

static void drop(struct pdir *pd, enum emu_drop_cause c) { pd->st.drops[c]++; }

/* Wire bytes of a payload under the link's framing. */
static uint32_t wire_len(const struct pmode *m, uint16_t proto, const uint8_t *payload, size_t len)
{
    size_t n = m->p->framing == EMU_FRAMING_PPP ? emu_ppp_frame_len(proto, payload, len, EMU_PPP_ACCM_ALL) : len;
    return (uint32_t)(n + m->p->overhead_bytes);
}

/* Header compression, when on: returns the payload to send and sets *proto. */
static const uint8_t *compress(struct pmode *m, struct pdir *pd, const uint8_t *pkt, size_t *len, uint16_t *proto)
{
    enum emu_vj_type type;
    unsigned h_in, h_out;
    long n = emu_vj_compress(&pd->vjc, pkt, *len, &type, m->cbuf, sizeof m->cbuf, &h_in, &h_out);
    if (n < 0) return pkt;
    if (h_in) {
        pd->st.vj.tcp_pkts++;
        pd->st.vj.hdr_bytes_in += h_in;
        pd->st.vj.hdr_bytes_out += h_out;
        pd->st.vj.compressed += type == EMU_VJ_TYPE_COMPRESSED;
        pd->st.vj.uncompressed += type == EMU_VJ_TYPE_UNCOMPRESSED;
    }
    *proto = vj_proto(type);
    *len = (size_t)n;
    return m->cbuf;
}

/* What the line carries (data, len) and, with VJ, the packet as sent (orig, orig_len). */
struct carried { const uint8_t *data, *orig; size_t len, orig_len; uint16_t proto; };

static void fill(struct pkt *k, struct pdir *pd, const struct emu_sched *sc, const struct carried *c, int lost)
{
    *k = (struct pkt){ sc->arrive_ns, sc->deliver_ns, pd->seq++, (uint32_t)c->len, (uint32_t)c->orig_len,
                       c->proto, (uint8_t)lost };
    if (c->len) memcpy(k->data, c->data, c->len);
    if (c->orig_len) memcpy(k->data + c->len, c->orig, c->orig_len);
}

static int store(struct pdir *pd, const struct emu_sched *sc, const struct carried *c, int lost)
{
    size_t bytes = c->len + c->orig_len;
    if (pd->stored_bytes + bytes > STORED_MAX_BYTES) return -ENOBUFS;
    struct pkt *k = malloc(sizeof *k + bytes);
    if (!k) return -ENOMEM;
    fill(k, pd, sc, c, lost);
    if (heap_push(pd, k) < 0) { free(k); return -ENOMEM; }
    pd->stored_bytes += bytes;
    return 0;
}

/* A packet the compressor saw will not reach the decompressor: the compressor must forget. */
static void drop_compressed(struct pmode *m, struct pdir *pd, enum emu_drop_cause c)
{
    drop(pd, c);
    if (m->p->vj) { emu_vj_comp_lost(&pd->vjc); pd->st.vj.comp_resets++; }
}

/* Order matters for header compression: the queue decides first, with the uncompressed size,
 * and only an admitted packet is compressed. In this one FIFO an admitted packet always goes
 * onto the line, in admission order, so compressing at admission is compressing as it goes
 * onto the line: no queue drop can desynchronise the decompressor (vj_desync counts it). */
static void on_packet(struct pmode *m, int d, const uint8_t *pkt, size_t len, int64_t now)
{
    struct pdir *pd = &m->dir[d];
    struct emu_ip_info ip;
    pd->st.pkts_in++;
    pd->st.bytes_in += len;
    if (emu_ip_parse(pkt, len, &ip) < 0 || ip.total_len != len) { drop(pd, EMU_DC_MALFORMED); return; }
    if (len > m->p->mtu) { drop(pd, EMU_DC_MTU); return; }
    uint16_t proto = ip.version == 6 ? EMU_PPP_PROTO_IPV6 : EMU_PPP_PROTO_IP;
    if (emu_shaper_would_drop(&pd->sh, now, wire_len(m, proto, pkt, len))) { drop(pd, EMU_DC_QUEUE); return; }
    struct carried c = { pkt, NULL, len, 0, proto };
    if (m->p->vj) {
        c.orig = pkt;
        c.orig_len = len;
        if (ip.version == 4) c.data = compress(m, pd, pkt, &c.len, &c.proto);
    }
    if (m->p->framing == EMU_FRAMING_PPP) {
        long n = emu_ppp_frame(c.proto, c.data, c.len, EMU_PPP_ACCM_ALL, m->fbuf, sizeof m->fbuf);
        if (n < 0) { drop_compressed(m, pd, EMU_DC_MEMORY); return; }
        c.data = m->fbuf;
        c.len = (size_t)n;
    }
    uint32_t wire = (uint32_t)c.len + m->p->overhead_bytes;
    struct emu_sched sc;
    enum emu_verdict v = emu_shaper_offer(&pd->sh, now, wire, &sc);
    if (v == EMU_DROP_QUEUE) { drop_compressed(m, pd, EMU_DC_QUEUE); return; }
    pd->st.wire_bytes += wire;
    emu_hist_add(&pd->st.queue_delay, sc.start_ns - now);
    if (v != EMU_PASS) {
        drop(pd, v == EMU_DROP_LOSS ? EMU_DC_LOSS : EMU_DC_PATTERN);
        struct carried none = { NULL, NULL, 0, 0, c.proto };
        if (m->p->vj && store(pd, &sc, &none, 1) < 0)          /* the receiver notices the gap */
            drop_compressed(m, pd, EMU_DC_MEMORY);
        return;
    }
    if (sc.deliver_ns <= now && pd->n == 0) {                 /* due already: skip the heap */
        struct pkt *k = (struct pkt *)m->sbuf;
        fill(k, pd, &sc, &c, 0);
        deliver(m, d, k);
        return;
    }
    if (store(pd, &sc, &c, 0) < 0) drop_compressed(m, pd, EMU_DC_MEMORY);
}

/* --- receiving side --- */

/* Delivers what the line carried: unframes, decompresses, writes to the far TUN device. */
static void deliver(struct pmode *m, int d, const struct pkt *k)
{
    struct pdir *pd = &m->dir[d];
    const uint8_t *out = k->data;
    size_t len = k->len;
    uint16_t proto = k->proto;
    if (k->lost) { emu_vj_decomp_error(&pd->vjd); return; }
    if (m->p->framing == EMU_FRAMING_PPP) {
        long n = emu_ppp_unframe(k->data, k->len, &proto, m->fbuf, sizeof m->fbuf);
        if (n < 0) { drop(pd, EMU_DC_MALFORMED); emu_vj_decomp_error(&pd->vjd); return; }
        out = m->fbuf;
        len = (size_t)n;
    }
    if (m->p->vj && proto != EMU_PPP_PROTO_IPV6) {
        enum emu_vj_type t = proto == EMU_PPP_PROTO_VJ_COMP ? EMU_VJ_TYPE_COMPRESSED
                           : proto == EMU_PPP_PROTO_VJ_UNCOMP ? EMU_VJ_TYPE_UNCOMPRESSED : EMU_VJ_TYPE_IP;
        long n = emu_vj_decompress(&pd->vjd, t, out, len, m->dbuf, sizeof m->dbuf);
        if (n < 0) { drop(pd, EMU_DC_VJ_TOSS); pd->st.vj.tossed++; return; }
        out = m->dbuf;
        len = (size_t)n;
    }
    /* A desynchronised decompressor delivers a wrong packet, as a real one would (the far
     * TCP's checksum refuses it); counted, since it must never happen. */
    if (k->orig_len && (len != k->orig_len || memcmp(out, k->data + k->len, len) != 0)) pd->st.vj.desync++;
    int64_t done = emu_now_ns();        /* the far kernel's work in write() is the link's, not ours */
    if (write(m->tun[1 - d], out, len) != (ssize_t)len) { drop(pd, EMU_DC_MEMORY); return; }
    pd->st.pkts_out++;
    pd->st.bytes_out += len;
    emu_hist_add(&pd->st.one_way, done - k->arrive_ns);
    emu_hist_add(&pd->st.lateness, done - k->deliver_ns);
    if (m->pcap.f) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        emu_pcap_write(&m->pcap, (int64_t)ts.tv_sec * EMU_NS_PER_S + ts.tv_nsec, out, len);
    }
}

/* Delivers what is due; returns the next deadline or INT64_MAX. */
static int64_t deliver_due(struct pmode *m, int64_t now)
{
    int64_t next = INT64_MAX;
    for (int d = 0; d < EMU_NDIR; d++) {
        struct pdir *pd = &m->dir[d];
        while (pd->n && pd->heap[0]->deliver_ns <= now + EMU_EARLY_NS) {
            struct pkt *k = heap_pop(pd);
            pd->stored_bytes -= k->len + k->orig_len;
            deliver(m, d, k);
            free(k);
        }
        if (pd->n && pd->heap[0]->deliver_ns < next) next = pd->heap[0]->deliver_ns;
    }
    return next;
}

static void on_readable(struct pmode *m, int side)
{
    for (int i = 0; i < READ_BATCH; i++) {
        ssize_t n = read(m->tun[side], m->rbuf, sizeof m->rbuf);
        if (n <= 0) return;
        on_packet(m, side, m->rbuf, (size_t)n, emu_now_ns());
    }
}

/* --- report --- */

static void report(FILE *out, void *arg)
{
    const struct pmode *m = arg;
    fprintf(out, "mode=packet\nprofile=%s\n", m->p->profile);
    emu_dir_stats_print(out, "up", &m->dir[EMU_UP].st);
    emu_dir_stats_print(out, "down", &m->dir[EMU_DOWN].st);
    fflush(out);
}

static void emit_report(struct pmode *m)
{
    report(stderr, m);
    if (m->o->stats_file && emu_report_write(m->o->stats_file, report, m) < 0)
        fprintf(stderr, "tincan-link: cannot write %s\n", m->o->stats_file);
    emu_pcap_flush(&m->pcap);
}

static void info(FILE *out, void *arg)
{
    const struct pmode *m = arg;
    int pid = (int)getpid();
    fprintf(out, "pid=%d\n", pid);
    for (int side = 0; side < 2; side++) {
        char a[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &m->addr[side], a, sizeof a);
        if (m->ns[side] >= 0) fprintf(out, "ns_%c=/proc/%d/fd/%d\n", "ab"[side], pid, m->ns[side]);
        else fprintf(out, "ns_%c=host\n", "ab"[side]);
        fprintf(out, "dev_%c=%s\naddr_%c=%s\n", "ab"[side], m->dev[side], "ab"[side], a);
    }
    fflush(out);
}

/* --- set-up --- */

static int parse_addr(const char *text, const char *dflt, struct in_addr *a)
{
    if (inet_pton(AF_INET, text ? text : dflt, a) == 1) return 0;
    fprintf(stderr, "tincan-link: bad IPv4 address '%s'\n", text);
    return -EINVAL;
}

static int make_side(struct pmode *m, int side)
{
    int host = side == SIDE_B && m->o->host_b;
    if (host) snprintf(m->dev[side], IFNAMSIZ, "tlb%d", (int)getpid() % 1000000);
    else snprintf(m->dev[side], IFNAMSIZ, "tl%c", "ab"[side]);
    if (!host) {
        m->ns[side] = emu_netns_new();
        if (m->ns[side] < 0) return m->ns[side];
    }
    struct emu_tun_cfg cfg = { m->dev[side], m->addr[side], m->addr[1 - side], m->p->mtu, !host,
                               m->o->keep_ipv6, m->o->no_tcp_timestamps };
    m->tun[side] = emu_tun_create(m->ns[side], &cfg);
    return m->tun[side] < 0 ? m->tun[side] : 0;
}

static int packet_setup(struct pmode *m)
{
    if (parse_addr(m->o->addr_a, "10.77.0.1", &m->addr[SIDE_A]) < 0 ||
        parse_addr(m->o->addr_b, "10.77.0.2", &m->addr[SIDE_B]) < 0)
        return -EINVAL;
    for (int side = 0; side < 2; side++) {
        int rc = make_side(m, side);
        if (rc < 0) {
            fprintf(stderr, "tincan-link: cannot create side %c: %s%s\n", "AB"[side], strerror(-rc),
                    rc == -EPERM ? " (packet mode needs root: CAP_SYS_ADMIN and CAP_NET_ADMIN)" : "");
            return rc;
        }
    }
    for (int d = 0; d < EMU_NDIR; d++) {
        struct emu_channel *ch = m->p->half_duplex ? &m->chan[0] : &m->chan[d];
        if (emu_shaper_init(&m->dir[d].sh, m->p, d, ch) < 0) return -ENOMEM;
        emu_vj_comp_init(&m->dir[d].vjc);
        emu_vj_decomp_init(&m->dir[d].vjd);
    }
    if (m->o->pcap_file && emu_pcap_open(&m->pcap, m->o->pcap_file, PKT_BUF_BYTES) < 0) {
        fprintf(stderr, "tincan-link: cannot create %s: %s\n", m->o->pcap_file, strerror(errno));
        return -EIO;
    }
    m->ep = epoll_create1(EPOLL_CLOEXEC);
    if (m->ep < 0) return -errno;
    int fds[3] = { m->tun[SIDE_A], m->tun[SIDE_B], m->sig_fd };
    for (int i = 0; i < 3; i++) {
        m->tags[i] = i;
        struct epoll_event e = { .events = EPOLLIN, .data.ptr = &m->tags[i] };
        if (epoll_ctl(m->ep, EPOLL_CTL_ADD, fds[i], &e) < 0) return -errno;
    }
    return 0;
}

static void packet_teardown(struct pmode *m)
{
    for (int d = 0; d < EMU_NDIR; d++) {
        struct pdir *pd = &m->dir[d];
        for (size_t i = 0; i < pd->n; i++) free(pd->heap[i]);
        free(pd->heap);
        emu_shaper_free(&pd->sh);
    }
    for (int side = 0; side < 2; side++) {
        if (m->tun[side] >= 0) close(m->tun[side]);
        if (m->ns[side] >= 0) close(m->ns[side]);
    }
    if (m->ep >= 0) close(m->ep);
    emu_pcap_close(&m->pcap);
}

/* Returns 1 to stop. */
static int on_signal(struct pmode *m)
{
    struct signalfd_siginfo si;
    int stop = 0;
    while (read(m->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGUSR1) emit_report(m);
        else stop = 1;
    }
    return stop;
}

int emu_packet_run(const struct emu_params *p, const struct emu_packet_opts *o, int sig_fd)
{
    struct pmode *m = calloc(1, sizeof *m);
    if (!m) return -ENOMEM;
    *m = (struct pmode){ .p = p, .o = o, .ns = { -1, -1 }, .tun = { -1, -1 }, .ep = -1, .sig_fd = sig_fd };
    int rc = packet_setup(m);
    if (rc == 0) {
        info(stderr, m);
        if (o->verbose) emu_params_describe(p, stderr);
        if (o->info_file && emu_report_write(o->info_file, info, m) < 0)
            fprintf(stderr, "tincan-link: cannot write %s\n", o->info_file);
    }
    struct epoll_event evs[8];
    for (int stop = rc < 0; !stop;) {
        int64_t now = emu_now_ns();
        int64_t next = deliver_due(m, now);
        struct timespec ts = emu_ns_to_timespec(next == INT64_MAX ? EMU_NS_PER_S : next - now - EMU_EARLY_NS);
        int n = epoll_pwait2(m->ep, evs, 8, &ts, NULL);
        if (n < 0 && errno != EINTR) { rc = -errno; break; }
        for (int i = 0; i < n; i++) {
            int tag = *(int *)evs[i].data.ptr;
            if (tag == TAG_SIGNAL) stop |= on_signal(m);
            else on_readable(m, tag);
        }
    }
    if (rc == 0) emit_report(m);
    if (o->info_file) unlink(o->info_file);
    packet_teardown(m);
    free(m);
    return rc;
}
