/* net.c -- socket plumbing with errors as -errno; no policy (options, retries) here. */
#include "common/net.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int net_tcp_connect(const char *host, const char *port) { return net_tcp_connect_flags(host, port, 0); }

int net_tcp_connect_flags(const char *host, const char *port, int flags)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -EHOSTUNREACH;
    int rc = -ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | flags, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || ((flags & SOCK_NONBLOCK) && errno == EINPROGRESS)) {
            freeaddrinfo(res);
            return fd;
        }
        rc = -errno;
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

int net_tcp_listen(const char *host, const char *port, int backlog)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -EINVAL;
    int rc = -EADDRNOTAVAIL;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0) {
            freeaddrinfo(res);
            return fd;
        }
        rc = -errno;
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

int net_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static int unix_address(const char *path, int abstract, struct sockaddr_un *sa, socklen_t *len)
{
    size_t n = strlen(path);
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (n + (abstract ? 1 : 0) >= sizeof sa->sun_path)
        return -ENAMETOOLONG;
    memcpy(sa->sun_path + (abstract ? 1 : 0), path, n);
    *len = abstract ? (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n) : (socklen_t)sizeof *sa;
    return 0;
}

int net_unix_connect(const char *path, int abstract)
{
    struct sockaddr_un sa;
    socklen_t len;
    int rc = unix_address(path, abstract, &sa, &len);
    if (rc < 0)
        return rc;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, len) == 0)
        return fd;
    rc = -errno;
    close(fd);
    return rc;
}

int net_unix_listen(const char *path, int backlog)
{
    struct sockaddr_un sa;
    socklen_t len;
    int rc = unix_address(path, 0, &sa, &len);
    if (rc < 0)
        return rc;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, backlog) < 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}
