/* stream.c -- stream mode: relays each accepted connection to the upstream address through
 * a per-direction serialising bottleneck (rate, delay) with bounded buffering, so TCP
 * back-pressure reaches the sender. Must not drop or reorder bytes. Workload: a handful of
 * connections; up to ~1 Gbit/s unlimited. Half-closes travel like data, behind it. */
#include "stream.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/un.h>
#include <sys/socket.h>
#include <unistd.h>

#include "addr.h"
#include "clock.h"
#include "shaper.h"
#include "stats.h"

#define CHUNK_MAX_BYTES   65536u      /* largest read, hence largest chunk */
#define CHUNK_MIN_BYTES   16u
#define DEFAULT_QUEUE_NS  (200 * EMU_NS_PER_MS)   /* back-pressure point without --queue */
#define MAX_EVENTS        64
#define SOCKBUF_AUTO_BYTES (128 * 1024)

enum tag_kind { TAG_LISTEN, TAG_SIGNAL, TAG_CONN };
struct ep_tag { enum tag_kind kind; struct sconn *c; int side; };

/* Bytes read from one side, waiting for their delivery time; eof marks a half-close. */
struct chunk {
    struct chunk *next;
    int64_t arrive_ns, deliver_ns;
    uint32_t len, off;
    int eof;
    uint8_t data[];
};

/* One direction of one connection: reads fd[d], writes fd[1-d]. */
struct sdir {
    struct chunk *head, *tail;
    uint64_t queued_bytes;            /* read and not yet written */
    uint32_t seg_fill;                /* bytes already in the current segment on the line */
    int src_eof;                      /* read returned 0 */
    int done;                         /* the half-close was delivered */
    int blocked_out;                  /* the destination said EAGAIN */
};

struct sconn {
    struct sconn *next, *prev;
    int fd[2];                        /* 0: accepted (listen side), 1: upstream */
    struct ep_tag tag[2];
    uint32_t interest[2];             /* registered epoll events; 0 = not registered */
    struct sdir dir[EMU_NDIR];
    int64_t connect_at_ns;            /* upstream connect pending until then (fd[1] < 0) */
    int connected;                    /* fd[1] finished connecting */
};

struct stream {
    const struct emu_params *p;
    const struct emu_stream_opts *o;
    struct emu_addr listen_addr, connect_addr;
    int ep, lfd, sig_fd;
    struct ep_tag listen_tag, sig_tag;
    struct emu_channel chan[EMU_NDIR];
    struct emu_shaper sh[EMU_NDIR];
    struct emu_dir_stats st[EMU_NDIR];
    struct sconn *conns;
    uint64_t conns_total, conns_failed, conns_reset;
    unsigned conns_open;
    int64_t limit_ns[EMU_NDIR];       /* stop reading when the link backlog reaches this */
    uint64_t cap_bytes[EMU_NDIR];     /* per-connection hard cap of buffered bytes */
    uint32_t chunk_max[EMU_NDIR];
    uint8_t *rbuf;
};

/* --- sizing --- */

static uint64_t rate_bytes_per_s(const struct emu_params *p, int d)
{
    return p->dir[d].rate_bps / p->bits_per_byte;
}

static void size_direction(struct stream *s, int d)
{
    const struct emu_dir_params *dp = &s->p->dir[d];
    uint64_t Bps = rate_bytes_per_s(s->p, d);
    if (!Bps) {
        s->chunk_max[d] = CHUNK_MAX_BYTES;
        s->limit_ns[d] = INT64_MAX;
        s->cap_bytes[d] = dp->delay_ns ? 16u << 20 : 1u << 20;
        return;
    }
    uint64_t c = Bps / 100;                                   /* 10 ms of data per chunk */
    s->chunk_max[d] = (uint32_t)(c < CHUNK_MIN_BYTES ? CHUNK_MIN_BYTES : c > CHUNK_MAX_BYTES ? CHUNK_MAX_BYTES : c);
    int64_t lim = INT64_MAX;
    if (dp->queue_ns) lim = dp->queue_ns;
    if (dp->queue_bytes) { int64_t t = (int64_t)(dp->queue_bytes * EMU_NS_PER_S / Bps); if (t < lim) lim = t; }
    if (dp->queue_pkts) {
        int64_t t = (int64_t)((uint64_t)dp->queue_pkts * s->p->mtu * EMU_NS_PER_S / Bps);
        if (t < lim) lim = t;
    }
    if (lim == INT64_MAX) lim = DEFAULT_QUEUE_NS;
    s->limit_ns[d] = lim;
    /* Room for the queue, the bytes in flight (rate x delay) and a few chunks. */
    uint64_t inflight = Bps * (uint64_t)(dp->delay_ns + dp->jitter_ns) / EMU_NS_PER_S;
    s->cap_bytes[d] = Bps * (uint64_t)lim / EMU_NS_PER_S + inflight + 4ull * s->chunk_max[d];
}

/* Packets a chunk of n bytes starts on the line. The bytes of a direction are cut into
 * segments of mtu-40 bytes, as a sender's TCP would while the link is busy; when the link
 * is idle the sender has nothing queued, so the chunk starts a packet of its own. A
 * half-close (n == 0) is a packet too. Each packet pays --segment-overhead and --per-packet. */
static unsigned packets_started(const struct stream *s, struct sdir *sd, int d, uint32_t n, int64_t now)
{
    int64_t seg = s->p->mtu > 80 ? s->p->mtu - 40 : 40;
    if (emu_shaper_backlog_ns(&s->sh[d], now) == 0) sd->seg_fill = 0;
    int64_t first = sd->seg_fill, last = first + (n ? n : 1) - 1;
    int64_t before = first > 0 ? (first - 1) / seg : -1;      /* floor((first - 1) / seg) */
    sd->seg_fill = (uint32_t)((first + n) % seg);
    return (unsigned)(last / seg - before);
}

/* --- connection lifetime --- */

static void conn_unregister(struct stream *s, struct sconn *c, int side)
{
    if (c->interest[side] && c->fd[side] >= 0) epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd[side], NULL);
    c->interest[side] = 0;
}

static void conn_free(struct stream *s, struct sconn *c, int reset)
{
    for (int side = 0; side < 2; side++) {
        conn_unregister(s, c, side);
        if (c->fd[side] < 0) continue;
        if (reset) {
            struct linger lg = { 1, 0 };                      /* close with RST */
            setsockopt(c->fd[side], SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        close(c->fd[side]);
    }
    for (int d = 0; d < EMU_NDIR; d++) {
        struct chunk *ch = c->dir[d].head;
        while (ch) { struct chunk *n = ch->next; free(ch); ch = n; }
    }
    if (c->prev) c->prev->next = c->next; else s->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    s->conns_open--;
    if (reset) s->conns_reset++;
    if (s->o->verbose) fprintf(stderr, "tincan-link: connection %s\n", reset ? "reset" : "closed");
    free(c);
}

static void tune_socket(const struct stream *s, int fd, int d_read)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);   /* fails harmlessly on unix */
    int buf = s->o->sockbuf_bytes;
    /* Small enough that back-pressure reaches the sender soon, large enough for a
     * loopback MSS (64 KiB): below that, TCP's silly-window avoidance stalls the sender. */
    if (buf == 0 && s->p->dir[d_read].rate_bps) buf = SOCKBUF_AUTO_BYTES;
    if (buf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
}

static int conn_start_connect(struct stream *s, struct sconn *c)
{
    int fd = emu_addr_connect(&s->connect_addr);
    if (fd < 0) return fd;
    c->fd[1] = fd;
    c->connect_at_ns = 0;
    tune_socket(s, fd, EMU_DOWN);
    return 0;
}

static void accept_one(struct stream *s, int fd, int64_t now)
{
    struct sconn *c = calloc(1, sizeof *c);
    if (!c) { close(fd); return; }
    c->fd[0] = fd;
    c->fd[1] = -1;
    for (int side = 0; side < 2; side++) c->tag[side] = (struct ep_tag){ TAG_CONN, c, side };
    c->next = s->conns;
    if (s->conns) s->conns->prev = c;
    s->conns = c;
    s->conns_total++;
    s->conns_open++;
    tune_socket(s, fd, EMU_UP);
    /* A real server accepts when the client's ACK arrives, 1.5 RTT after its SYN left. */
    int64_t accept_ns = 2 * s->p->dir[EMU_UP].delay_ns + s->p->dir[EMU_DOWN].delay_ns;
    c->connect_at_ns = now + (s->o->handshake_delay ? accept_ns : 0);
    if (c->connect_at_ns <= now && conn_start_connect(s, c) < 0) {
        s->conns_failed++;
        conn_free(s, c, 1);
    }
}

static void on_listen(struct stream *s, int64_t now)
{
    for (int i = 0; i < 64; i++) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        accept_one(s, fd, now);
    }
}

/* --- data path --- */

static int dir_wants_read(const struct stream *s, const struct sconn *c, int d, int64_t now)
{
    const struct sdir *sd = &c->dir[d];
    if (sd->src_eof || c->fd[d] < 0 || (d == EMU_DOWN && !c->connected)) return 0;
    if (sd->queued_bytes >= s->cap_bytes[d]) return 0;
    return emu_shaper_backlog_ns(&s->sh[d], now) < s->limit_ns[d];
}

static void enqueue(struct stream *s, struct sconn *c, int d, const uint8_t *data, uint32_t n, int64_t now)
{
    struct chunk *ch = malloc(sizeof *ch + n);
    if (!ch) return;                                          /* treated as a reset below */
    struct emu_sched sc;
    struct sdir *sd = &c->dir[d];
    unsigned pkts = packets_started(s, sd, d, n, now);
    uint32_t wire = n + pkts * s->p->segment_overhead_bytes;
    emu_shaper_schedule(&s->sh[d], now, wire, pkts, &sc);
    *ch = (struct chunk){ NULL, now, sc.deliver_ns, n, 0, n == 0 };
    memcpy(ch->data, data, n);
    if (sd->tail) sd->tail->next = ch; else sd->head = ch;
    sd->tail = ch;
    sd->queued_bytes += n;
    s->st[d].pkts_in += n > 0;
    s->st[d].bytes_in += n;
    s->st[d].wire_bytes += wire;
    emu_hist_add(&s->st[d].queue_delay, sc.start_ns - now);
}

/* Returns 0, or -1 when the connection must be reset. */
static int on_readable(struct stream *s, struct sconn *c, int d, int64_t now)
{
    if (!dir_wants_read(s, c, d, now)) return 0;
    ssize_t n = recv(c->fd[d], s->rbuf, s->chunk_max[d], 0);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (n == 0) c->dir[d].src_eof = 1;
    struct chunk *tail = c->dir[d].tail;
    enqueue(s, c, d, s->rbuf, (uint32_t)n, now);
    return c->dir[d].tail == tail ? -1 : 0;                   /* allocation failed */
}

/* Writes every chunk of direction d that is due. Returns 0, or -1 to reset. */
static int flush_due(struct stream *s, struct sconn *c, int d, int64_t now)
{
    struct sdir *sd = &c->dir[d];
    int dst = c->fd[1 - d];
    if (d == EMU_UP && !c->connected) return 0;
    sd->blocked_out = 0;
    while (sd->head && sd->head->deliver_ns <= now + EMU_EARLY_NS) {
        struct chunk *ch = sd->head;
        if (ch->eof) {
            shutdown(dst, SHUT_WR);
            sd->done = 1;
        } else {
            ssize_t w = send(dst, ch->data + ch->off, ch->len - ch->off, MSG_NOSIGNAL);
            if (w < 0 && (errno == EAGAIN || errno == EINTR)) { sd->blocked_out = 1; return 0; }
            if (w < 0) return -1;
            ch->off += (uint32_t)w;
            if (ch->off < ch->len) { sd->blocked_out = 1; return 0; }
            s->st[d].pkts_out++;
            s->st[d].bytes_out += ch->len;
            emu_hist_add(&s->st[d].one_way, now - ch->arrive_ns);
            emu_hist_add(&s->st[d].lateness, now - ch->deliver_ns);
        }
        sd->queued_bytes -= ch->len;
        sd->head = ch->next;
        if (!sd->head) sd->tail = NULL;
        free(ch);
    }
    return 0;
}

static int on_connected(struct stream *s, struct sconn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
        if (s->o->verbose) fprintf(stderr, "tincan-link: connect upstream: %s\n", strerror(err ? err : errno));
        s->conns_failed++;
        return -1;
    }
    c->connected = 1;
    return 0;
}

/* Re-registers the fds of c for what it waits for now. */
static void conn_update_interest(struct stream *s, struct sconn *c, int64_t now)
{
    for (int side = 0; side < 2; side++) {
        if (c->fd[side] < 0) continue;
        uint32_t ev = 0;
        if (side == 1 && !c->connected) ev = EPOLLOUT;
        else {
            if (dir_wants_read(s, c, side, now)) ev |= EPOLLIN;
            if (c->dir[1 - side].blocked_out) ev |= EPOLLOUT;
        }
        if (ev == c->interest[side]) continue;
        struct epoll_event e = { .events = ev, .data.ptr = &c->tag[side] };
        if (!ev) conn_unregister(s, c, side);
        else epoll_ctl(s->ep, c->interest[side] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd[side], &e);
        c->interest[side] = ev;
    }
}

/* Earliest moment c needs attention without an fd event; INT64_MAX if none. */
static int64_t conn_deadline(const struct stream *s, const struct sconn *c, int64_t now)
{
    int64_t t = INT64_MAX;
    if (c->fd[1] < 0) t = c->connect_at_ns;
    for (int d = 0; d < EMU_NDIR; d++) {
        const struct sdir *sd = &c->dir[d];
        if (sd->head && !sd->blocked_out && (d == EMU_DOWN || c->connected) && sd->head->deliver_ns < t)
            t = sd->head->deliver_ns;
        if (!sd->src_eof && c->fd[d] >= 0 && s->limit_ns[d] != INT64_MAX &&
            emu_shaper_backlog_ns(&s->sh[d], now) >= s->limit_ns[d]) {
            int64_t wake = s->sh[d].chan->busy_until_ns - s->limit_ns[d] + 1;
            if (wake < t) t = wake;
        }
    }
    return t;
}

/* Timers and deliveries for one connection; 0, or -1 to reset it, 1 when it finished. */
static int conn_service(struct stream *s, struct sconn *c, int64_t now)
{
    if (c->fd[1] < 0 && c->connect_at_ns <= now && conn_start_connect(s, c) < 0) {
        s->conns_failed++;
        return -1;
    }
    for (int d = 0; d < EMU_NDIR; d++)
        if (flush_due(s, c, d, now) < 0) return -1;
    return c->dir[EMU_UP].done && c->dir[EMU_DOWN].done ? 1 : 0;
}

static void on_conn_event(struct stream *s, struct sconn *c, int side, uint32_t ev, int64_t now)
{
    int rc = 0;
    if (side == 1 && !c->connected) {
        rc = on_connected(s, c);
    } else {
        if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) rc = on_readable(s, c, side, now);
        if (rc == 0 && (ev & (EPOLLOUT | EPOLLERR))) rc = flush_due(s, c, 1 - side, now);
    }
    if (rc < 0) conn_free(s, c, 1);
}

/* --- report --- */

static void report(FILE *out, void *arg)
{
    const struct stream *s = arg;
    fprintf(out, "mode=stream\nprofile=%s\n", s->p->profile);
    fprintf(out, "connections=%llu\nconnections_open=%u\nconnections_failed=%llu\nconnections_reset=%llu\n",
            (unsigned long long)s->conns_total, s->conns_open, (unsigned long long)s->conns_failed,
            (unsigned long long)s->conns_reset);
    emu_dir_stats_print(out, "up", &s->st[EMU_UP]);
    emu_dir_stats_print(out, "down", &s->st[EMU_DOWN]);
    fflush(out);
}

static void emit_report(struct stream *s)
{
    report(stderr, s);
    if (s->o->stats_file && emu_report_write(s->o->stats_file, report, s) < 0)
        fprintf(stderr, "tincan-link: cannot write %s: %s\n", s->o->stats_file, strerror(errno));
}

/* Returns 1 to stop. */
static int on_signal(struct stream *s)
{
    struct signalfd_siginfo si;
    int stop = 0;
    while (read(s->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGUSR1) emit_report(s);
        else stop = 1;
    }
    return stop;
}

/* --- set-up and loop --- */

static int write_ready_file(const struct stream *s)
{
    char a[200];
    if (!s->o->ready_file) return 0;
    emu_addr_format(&s->listen_addr, a, sizeof a);
    FILE *f = fopen(s->o->ready_file, "w");
    if (!f) return -errno;
    fprintf(f, "listen=%s\npid=%d\n", a, (int)getpid());
    return fclose(f) == 0 ? 0 : -errno;
}

static int stream_setup(struct stream *s)
{
    if (emu_addr_parse(s->o->listen, &s->listen_addr) < 0) {
        fprintf(stderr, "tincan-link: bad --listen address '%s'\n", s->o->listen);
        return -EINVAL;
    }
    if (emu_addr_parse(s->o->connect, &s->connect_addr) < 0) {
        fprintf(stderr, "tincan-link: bad --connect address '%s'\n", s->o->connect);
        return -EINVAL;
    }
    for (int d = 0; d < EMU_NDIR; d++) {
        struct emu_channel *ch = s->p->half_duplex ? &s->chan[0] : &s->chan[d];
        if (emu_shaper_init(&s->sh[d], s->p, d, ch) < 0) return -ENOMEM;
        size_direction(s, d);
    }
    s->rbuf = malloc(CHUNK_MAX_BYTES);
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    if (!s->rbuf || s->ep < 0) return -ENOMEM;
    s->lfd = emu_addr_listen(&s->listen_addr);
    if (s->lfd < 0) {
        fprintf(stderr, "tincan-link: cannot listen on %s: %s\n", s->o->listen, strerror(-s->lfd));
        return s->lfd;
    }
    s->listen_tag = (struct ep_tag){ TAG_LISTEN, NULL, 0 };
    s->sig_tag = (struct ep_tag){ TAG_SIGNAL, NULL, 0 };
    struct epoll_event e1 = { .events = EPOLLIN, .data.ptr = &s->listen_tag };
    struct epoll_event e2 = { .events = EPOLLIN, .data.ptr = &s->sig_tag };
    if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &e1) < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->sig_fd, &e2) < 0)
        return -errno;
    int rc = write_ready_file(s);
    if (rc < 0) fprintf(stderr, "tincan-link: cannot write %s: %s\n", s->o->ready_file, strerror(-rc));
    return rc;
}

static void stream_teardown(struct stream *s)
{
    while (s->conns) conn_free(s, s->conns, 0);
    if (s->lfd >= 0) {
        close(s->lfd);
        const char *path = ((struct sockaddr_un *)&s->listen_addr.ss)->sun_path;
        if (s->listen_addr.family == AF_UNIX && path[0]) unlink(path);
    }
    if (s->ep >= 0) close(s->ep);
    for (int d = 0; d < EMU_NDIR; d++) emu_shaper_free(&s->sh[d]);
    free(s->rbuf);
}

/* One turn: service timers of every connection, then compute the next deadline. */
static int64_t service_all(struct stream *s, int64_t now)
{
    int64_t next = INT64_MAX;
    for (struct sconn *c = s->conns, *n; c; c = n) {
        n = c->next;
        int rc = conn_service(s, c, now);
        if (rc != 0) { conn_free(s, c, rc < 0); continue; }
        conn_update_interest(s, c, now);
        int64_t t = conn_deadline(s, c, now);
        if (t < next) next = t;
    }
    /* Rotate: whoever is served first gets first go at a freed shared backlog, so take
     * turns, or the newest connection starves the others of a busy link. */
    struct sconn *first = s->conns;
    if (first && first->next) {
        struct sconn *last = first;
        while (last->next) last = last->next;
        s->conns = first->next;
        s->conns->prev = NULL;
        first->next = NULL;
        first->prev = last;
        last->next = first;
    }
    return next;
}

int emu_stream_run(const struct emu_params *p, const struct emu_stream_opts *o, int sig_fd)
{
    struct stream s = { .p = p, .o = o, .ep = -1, .lfd = -1, .sig_fd = sig_fd };
    int rc = stream_setup(&s);
    if (rc < 0) { stream_teardown(&s); return rc; }
    if (o->verbose) {
        char a[200], b[200];
        emu_addr_format(&s.listen_addr, a, sizeof a);
        emu_addr_format(&s.connect_addr, b, sizeof b);
        fprintf(stderr, "tincan-link: stream %s -> %s\n", a, b);
        emu_params_describe(p, stderr);
    }
    struct epoll_event evs[MAX_EVENTS];
    for (int stop = 0; !stop;) {
        int64_t now = emu_now_ns();
        int64_t next = service_all(&s, now);
        struct timespec ts = emu_ns_to_timespec(next == INT64_MAX ? EMU_NS_PER_S : next - now - EMU_EARLY_NS);
        int n = epoll_pwait2(s.ep, evs, MAX_EVENTS, &ts, NULL);
        if (n < 0 && errno != EINTR) { rc = -errno; break; }
        now = emu_now_ns();
        for (int i = 0; i < n; i++) {
            struct ep_tag *t = evs[i].data.ptr;
            if (t->kind == TAG_LISTEN) on_listen(&s, now);
            else if (t->kind == TAG_SIGNAL) stop |= on_signal(&s);
        }
        /* Connection events last: an accept above may not free what a later event names,
         * but a reset below may; so look each connection up as still linked. */
        for (int i = 0; i < n; i++) {
            struct ep_tag *t = evs[i].data.ptr;
            if (t->kind != TAG_CONN) continue;
            struct sconn *c = t->c;
            int alive = 0;
            for (struct sconn *x = s.conns; x && !alive; x = x->next) alive = x == c;
            if (alive) on_conn_event(&s, c, t->side, evs[i].events, now);
        }
    }
    emit_report(&s);
    stream_teardown(&s);
    return rc;
}
