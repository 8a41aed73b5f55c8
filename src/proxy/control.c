/* control.c -- the control socket of a running half (control.h): accepts `tincan info`,
 * refuses other users, reads its one-line request and writes the answer (info.c) without
 * blocking the session's loop. */
#include "proxy/control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/version.h"
#include "link/handshake.h"

struct control_peer {
    struct control *c;
    int fd;                       /* -1: a free slot */
    struct watch w;
    char req[CONTROL_MAX_REQUEST];
    size_t req_len;
    char *out;                    /* the answer, once asked (open_memstream's) */
    size_t out_len, out_off;
    uint64_t since_ns;            /* when accepted: the oldest is displaced first */
    bool refused;                 /* another user: its request is read (closing on unread
                                   * bytes would reset the connection before our answer), and
                                   * the answer is a refusal */
};

struct control {
    struct loop *loop;
    const char *side;
    struct session *const *session;
    int lfd;
    struct watch lw;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct control_peer peers[CONTROL_MAX_PEERS];
};

int control_dir(char *buf, size_t cap, bool create)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n = xdg && xdg[0] == '/' ? snprintf(buf, cap, "%s/tincan", xdg)
                                 : snprintf(buf, cap, "/tmp/tincan-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    if (create && mkdir(buf, 0700) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (lstat(buf, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        return -EPERM;
    return 0;
}

static void peer_close(struct control_peer *p)
{
    if (p->fd < 0)
        return;
    loop_unwatch(p->c->loop, &p->w);
    close(p->fd);
    p->fd = -1;
    free(p->out);
    p->out = NULL;
    p->req_len = p->out_len = p->out_off = 0;
}

/* The answer to a request: the session's state, or what this half is doing without one. */
static int answer(struct control_peer *p, bool json)
{
    FILE *f = open_memstream(&p->out, &p->out_len);
    if (!f)
        return -ENOMEM;
    struct session *s = *p->c->session;
    if (s)
        session_write_info(s, f, json);
    else if (json)
        fprintf(f, "{\"pid\": %ld, \"side\": \"%s\", \"version\": \"%s\", \"protocol\": %d, \"state\": \"waiting\"}\n",
                (long)getpid(), p->c->side, TINCAN_VERSION, LINK_PROTOCOL_VERSION);
    else
        fprintf(f, "tincan %s side, pid %ld: waiting for the other side (no session yet)\n", p->c->side,
                (long)getpid());
    return fclose(f) == 0 ? 0 : -ENOMEM;
}

static void on_peer(struct watch *w, unsigned events)
{
    struct control_peer *p = w->data;
    if (!p->out) {
        ssize_t n = recv(p->fd, p->req + p->req_len, sizeof p->req - p->req_len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) {
            peer_close(p);
            return;
        }
        p->req_len += (size_t)n;
        char *nl = memchr(p->req, '\n', p->req_len);
        if (!nl) {
            if (p->req_len == sizeof p->req)
                peer_close(p);
            return;
        }
        *nl = 0;
        static const char refused[] = "refused: this session belongs to another user\n";
        if (p->refused) {
            if (!(p->out = strdup(refused))) {
                peer_close(p);
                return;
            }
            p->out_len = sizeof refused - 1;
        } else if ((strcmp(p->req, "json") && strcmp(p->req, "text")) || answer(p, !strcmp(p->req, "json")) < 0) {
            peer_close(p);
            return;
        }
        loop_want(p->c->loop, &p->w, LOOP_WRITE);
    }
    while (p->out_off < p->out_len) {
        ssize_t n = send(p->fd, p->out + p->out_off, p->out_len - p->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0)
            break;
        p->out_off += (size_t)n;
    }
    peer_close(p);
}

static void on_accept(struct watch *w, unsigned events)
{
    struct control *c = w->data;
    int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    struct ucred cr;
    socklen_t len = sizeof cr;
    /* The directory and the socket's mode keep others out; this holds even if they are
     * changed, and against root, who passes both. */
    bool refused = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof cr || cr.uid != geteuid();
    if (refused)
        log_warn("control: refused `tincan info` from uid %ld: not this session's user", len == sizeof cr ? (long)cr.uid : -1L);
    struct control_peer *p = &c->peers[0];
    for (int i = 0; i < CONTROL_MAX_PEERS; i++) {
        if (c->peers[i].fd < 0) {
            p = &c->peers[i];
            break;
        }
        if (c->peers[i].since_ns < p->since_ns)
            p = &c->peers[i];
    }
    peer_close(p);
    p->fd = fd;
    p->since_ns = clock_ns();
    p->refused = refused;
    if (loop_watch(c->loop, &p->w, fd, LOOP_READ, on_peer, p) < 0) {
        close(fd);
        p->fd = -1;
    }
}

int control_open(struct control **out, struct loop *loop, const char *side, struct session *const *session)
{
    *out = NULL;
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int rc = control_dir(dir, sizeof dir, true);
    if (rc < 0)
        return rc;
    struct control *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->loop = loop;
    c->side = side;
    c->session = session;
    for (int i = 0; i < CONTROL_MAX_PEERS; i++)
        c->peers[i] = (struct control_peer){ .c = c, .fd = -1 };
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    int n = snprintf(a.sun_path, sizeof a.sun_path, "%s/%s-%ld.sock", dir, side, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof a.sun_path) {
        free(c);
        return -ENAMETOOLONG;
    }
    memcpy(c->path, a.sun_path, sizeof c->path);
    unlink(c->path); /* a stale socket of an earlier process with our pid */
    c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* The directory is 0700, so the moment between bind and chmod exposes nothing. */
    if (c->lfd < 0 || bind(c->lfd, (struct sockaddr *)&a, sizeof a) < 0 || chmod(c->path, 0600) < 0 ||
        listen(c->lfd, CONTROL_MAX_PEERS) < 0 || loop_watch(loop, &c->lw, c->lfd, LOOP_READ, on_accept, c) < 0) {
        rc = -errno;
        if (c->lfd >= 0)
            close(c->lfd);
        unlink(c->path);
        free(c);
        return rc ? rc : -EIO;
    }
    *out = c;
    return 0;
}

void control_free(struct control *c)
{
    if (!c)
        return;
    for (int i = 0; i < CONTROL_MAX_PEERS; i++)
        peer_close(&c->peers[i]);
    loop_unwatch(c->loop, &c->lw);
    close(c->lfd);
    unlink(c->path);
    free(c);
}
