/* zrelay.c -- one half of a zlib-compressed byte relay, the way `ssh -C` carries X.
 * Benchmark helper only: two instances back to back, a byte counter between them.
 * Workload: a handful of X connections, bursts of KB; one process, one poll loop. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zlib.h>

/*
 * usage: zrelay --listen ADDR --connect ADDR --zside listen|connect [--level N] [--ready-file F]
 *
 * Every connection accepted on --listen is paired with a new connection to --connect.
 * Bytes travelling towards the --zside socket are deflated (one stream per connection
 * and direction, Z_SYNC_FLUSH after every read, as OpenSSH does per packet); bytes
 * arriving from the --zside socket are inflated. ADDR is unix:PATH or HOST:PORT.
 * The client-side instance uses --zside connect, the server-side one --zside listen.
 */

enum { MAX_PAIRS = 64, READ_BYTES = 65536, OUT_LIMIT_BYTES = 1 << 20 };

struct obuf {
    unsigned char *p;
    size_t len, cap;
};

struct pair {
    int fd[2];                  /* 0: accepted (listen side), 1: dialled (connect side) */
    struct obuf out[2];         /* bytes waiting to be written to fd[i] */
    z_stream def, inf;          /* def: towards the z side, inf: from the z side */
    int eof[2];                 /* fd[i] reached end of file or failed */
    int used;
};

struct relay {
    int zside;                  /* 0 or 1: which fd of each pair carries zlib */
    int level;
    int lfd;
    struct pair pairs[MAX_PAIRS];
};

static int obuf_reserve(struct obuf *b, size_t more)
{
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) return -ENOMEM;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* Parse unix:PATH or HOST:PORT into a sockaddr. Returns its length or -EINVAL. */
static int parse_addr(const char *s, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (!strncmp(s, "unix:", 5)) {
        struct sockaddr_un *un = (struct sockaddr_un *)ss;
        const char *path = s + 5;
        if (strlen(path) >= sizeof un->sun_path) return -EINVAL;
        un->sun_family = AF_UNIX;
        strcpy(un->sun_path, path);
        return (int)sizeof *un;
    }
    const char *colon = strrchr(s, ':');
    if (!colon) return -EINVAL;
    char host[256];
    size_t hl = (size_t)(colon - s);
    if (hl >= sizeof host) return -EINVAL;
    memcpy(host, s, hl);
    host[hl] = 0;
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, hl ? host : "127.0.0.1", &in->sin_addr) != 1) return -EINVAL;
    return (int)sizeof *in;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static void pair_close(struct pair *p)
{
    for (int i = 0; i < 2; i++) {
        if (p->fd[i] >= 0) close(p->fd[i]);
        free(p->out[i].p);
    }
    deflateEnd(&p->def);
    inflateEnd(&p->inf);
    memset(p, 0, sizeof *p);
    p->fd[0] = p->fd[1] = -1;
}

/* Deflate n bytes into out with a sync flush. Returns 0 or -EIO. */
static int z_deflate(z_stream *z, const unsigned char *in, size_t n, struct obuf *out)
{
    z->next_in = (unsigned char *)in;
    z->avail_in = (uInt)n;
    do {
        if (obuf_reserve(out, 16384) < 0) return -ENOMEM;
        z->next_out = out->p + out->len;
        z->avail_out = (uInt)(out->cap - out->len);
        int rc = deflate(z, Z_SYNC_FLUSH);
        if (rc != Z_OK && rc != Z_BUF_ERROR) return -EIO;
        out->len = out->cap - z->avail_out;
    } while (z->avail_out == 0 || z->avail_in > 0);
    return 0;
}

/* Inflate n bytes into out. Returns 0 or -EIO on a corrupt stream. */
static int z_inflate(z_stream *z, const unsigned char *in, size_t n, struct obuf *out)
{
    z->next_in = (unsigned char *)in;
    z->avail_in = (uInt)n;
    do {
        if (obuf_reserve(out, 65536) < 0) return -ENOMEM;
        z->next_out = out->p + out->len;
        z->avail_out = (uInt)(out->cap - out->len);
        int rc = inflate(z, Z_SYNC_FLUSH);
        if (rc != Z_OK && rc != Z_BUF_ERROR && rc != Z_STREAM_END) return -EIO;
        out->len = out->cap - z->avail_out;
        if (rc == Z_BUF_ERROR && z->avail_in == 0) break;
    } while (z->avail_out == 0 || z->avail_in > 0);
    return 0;
}

static int dial(const char *addr)
{
    struct sockaddr_storage ss;
    int len = parse_addr(addr, &ss);
    if (len < 0) return len;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&ss, (socklen_t)len) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (ss.ss_family == AF_INET) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static void on_accept(struct relay *r, const char *connect_addr)
{
    int cfd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (cfd < 0) return;
    struct pair *p = NULL;
    for (int i = 0; i < MAX_PAIRS; i++)
        if (!r->pairs[i].used) { p = &r->pairs[i]; break; }
    int ufd = p ? dial(connect_addr) : -1;
    if (!p || ufd < 0) {
        fprintf(stderr, "zrelay: cannot pair a new connection: %s\n", p ? strerror(-ufd) : "too many");
        close(cfd);
        return;
    }
    int one = 1;
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  /* fails harmlessly on unix */
    memset(p, 0, sizeof *p);
    p->used = 1;
    p->fd[0] = cfd;
    p->fd[1] = ufd;
    set_nonblock(cfd);
    set_nonblock(ufd);
    if (deflateInit(&p->def, r->level) != Z_OK || inflateInit(&p->inf) != Z_OK) {
        fprintf(stderr, "zrelay: zlib init failed\n");
        pair_close(p);
    }
}

/* Read what fd[i] has, transform it, queue it for fd[1-i]. Returns -1 to drop the pair. */
static int on_readable(struct relay *r, struct pair *p, int i)
{
    unsigned char buf[READ_BYTES];
    ssize_t n = read(p->fd[i], buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (n <= 0) {
        p->eof[i] = 1;
        return 0;
    }
    int rc = (1 - i) == r->zside ? z_deflate(&p->def, buf, (size_t)n, &p->out[1 - i])
                                 : z_inflate(&p->inf, buf, (size_t)n, &p->out[1 - i]);
    return rc < 0 ? -1 : 0;
}

static int on_writable(struct pair *p, int i)
{
    struct obuf *b = &p->out[i];
    while (b->len) {
        ssize_t n = write(p->fd[i], b->p, b->len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        if (n <= 0) return -1;
        memmove(b->p, b->p + n, b->len - (size_t)n);
        b->len -= (size_t)n;
    }
    return 0;
}

static int run(struct relay *r, const char *connect_addr)
{
    struct pollfd pfd[1 + 2 * MAX_PAIRS];
    struct pair *owner[1 + 2 * MAX_PAIRS];
    int side[1 + 2 * MAX_PAIRS];
    for (;;) {
        int n = 0;
        pfd[n++] = (struct pollfd){ .fd = r->lfd, .events = POLLIN };
        for (int k = 0; k < MAX_PAIRS; k++) {
            struct pair *p = &r->pairs[k];
            if (!p->used) continue;
            /* A pair ends once one side has gone and what it sent has been delivered. */
            if ((p->eof[0] && !p->out[1].len) || (p->eof[1] && !p->out[0].len)) {
                pair_close(p);
                continue;
            }
            for (int i = 0; i < 2; i++) {
                short ev = 0;
                if (!p->eof[i] && p->out[1 - i].len < OUT_LIMIT_BYTES) ev |= POLLIN;
                if (p->out[i].len) ev |= POLLOUT;
                owner[n] = p;
                side[n] = i;
                pfd[n++] = (struct pollfd){ .fd = p->fd[i], .events = ev };
            }
        }
        if (poll(pfd, (nfds_t)n, -1) < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (pfd[0].revents & POLLIN) on_accept(r, connect_addr);
        for (int k = 1; k < n; k++) {
            struct pair *p = owner[k];
            int i = side[k];
            if (!p->used || !pfd[k].revents) continue;
            int bad = 0;
            if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) bad |= on_readable(r, p, i) < 0;
            if (!bad && (pfd[k].revents & POLLOUT)) bad |= on_writable(p, i) < 0;
            if (!bad && (pfd[k].revents & (POLLERR | POLLNVAL))) p->eof[i] = 1;
            if (bad) {
                p->eof[0] = p->eof[1] = 1;
                p->out[0].len = p->out[1].len = 0;
            }
        }
    }
}

int main(int argc, char **argv)
{
    const char *listen_addr = NULL, *connect_addr = NULL, *ready_file = NULL, *zside = NULL;
    struct relay r = { .level = 6, .lfd = -1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) goto usage;
        if (!strcmp(a, "--listen")) listen_addr = v;
        else if (!strcmp(a, "--connect")) connect_addr = v;
        else if (!strcmp(a, "--zside")) zside = v;
        else if (!strcmp(a, "--level")) r.level = atoi(v);
        else if (!strcmp(a, "--ready-file")) ready_file = v;
        else goto usage;
        i++;
    }
    if (!listen_addr || !connect_addr || !zside) goto usage;
    if (!strcmp(zside, "listen")) r.zside = 0;
    else if (!strcmp(zside, "connect")) r.zside = 1;
    else goto usage;
    for (int k = 0; k < MAX_PAIRS; k++) r.pairs[k].fd[0] = r.pairs[k].fd[1] = -1;
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_storage ss;
    int len = parse_addr(listen_addr, &ss);
    if (len < 0) goto usage;
    if (ss.ss_family == AF_UNIX) unlink(((struct sockaddr_un *)&ss)->sun_path);
    r.lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (r.lfd >= 0) setsockopt(r.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (r.lfd < 0 || bind(r.lfd, (struct sockaddr *)&ss, (socklen_t)len) < 0 || listen(r.lfd, 64) < 0) {
        fprintf(stderr, "zrelay: cannot listen on %s: %s\n", listen_addr, strerror(errno));
        return 1;
    }
    if (ready_file) {
        FILE *f = fopen(ready_file, "w");
        if (f) {
            fprintf(f, "pid=%d\n", (int)getpid());
            fclose(f);
        }
    }
    int rc = run(&r, connect_addr);
    fprintf(stderr, "zrelay: %s\n", strerror(-rc));
    return 1;

usage:
    fprintf(stderr, "usage: zrelay --listen ADDR --connect ADDR --zside listen|connect "
                    "[--level N] [--ready-file F]\n");
    return 2;
}
