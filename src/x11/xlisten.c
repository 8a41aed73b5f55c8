/* xlisten.c -- claims a display number the way X servers do, so that clients and
 * other servers agree on who owns :N. Stale locks of dead processes are taken over. */
#include "x11/xlisten.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int take_lock(const char *path)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd >= 0) {
            char pid[16];
            int n = snprintf(pid, sizeof pid, "%10d\n", (int)getpid());
            int ok = write(fd, pid, (size_t)n) == n;
            close(fd);
            return ok ? 0 : -EIO;
        }
        if (errno != EEXIST)
            return -errno;
        char buf[32] = { 0 };
        int rfd = open(path, O_RDONLY | O_CLOEXEC);
        if (rfd < 0)
            return -EADDRINUSE;
        ssize_t r = read(rfd, buf, sizeof buf - 1);
        close(rfd);
        long owner = r > 0 ? strtol(buf, NULL, 10) : 0;
        if (owner > 0 && (kill((pid_t)owner, 0) == 0 || errno == EPERM))
            return -EADDRINUSE;
        unlink(path); /* its owner died: the lock is stale */
    }
    return -EADDRINUSE;
}

static int bind_unix(const char *path, bool abstract)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    socklen_t len;
    if (abstract) {
        size_t n = strlen(path);
        memcpy(sa.sun_path + 1, path, n);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    } else {
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        unlink(path);
        len = sizeof sa;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 64) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static int bind_tcp(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static int try_number(struct xlisten *xl, int n, bool tcp)
{
    snprintf(xl->lock_path, sizeof xl->lock_path, "/tmp/.X%d-lock", n);
    snprintf(xl->sock_path, sizeof xl->sock_path, "/tmp/.X11-unix/X%d", n);
    int rc = take_lock(xl->lock_path);
    if (rc < 0)
        return rc;
    xl->number = n;
    /* The abstract name first: libxcb tries it first, and a clash means :N is taken. */
    if ((rc = xl->fds[1] = bind_unix(xl->sock_path, true)) < 0 ||
        (rc = xl->fds[0] = bind_unix(xl->sock_path, false)) < 0 ||
        (tcp && (rc = xl->fds[2] = bind_tcp(6000 + n)) < 0)) {
        xlisten_close(xl);
        return rc == -EADDRINUSE ? -EADDRINUSE : rc;
    }
    return 0;
}

int xlisten_open(struct xlisten *xl, int number, bool tcp)
{
    memset(xl, 0, sizeof *xl);
    xl->fds[0] = xl->fds[1] = xl->fds[2] = -1;
    mkdir("/tmp/.X11-unix", 01777);
    if (number >= 0)
        return try_number(xl, number, tcp);
    for (int n = 10; n < 1000; n++) {
        int rc = try_number(xl, n, tcp);
        if (rc != -EADDRINUSE)
            return rc;
    }
    return -EADDRINUSE;
}

void xlisten_close(struct xlisten *xl)
{
    if (xl->fds[0] >= 0) /* only a socket file we made is ours to remove */
        unlink(xl->sock_path);
    for (int i = 0; i < 3; i++)
        if (xl->fds[i] >= 0) {
            close(xl->fds[i]);
            xl->fds[i] = -1;
        }
    if (xl->lock_path[0])
        unlink(xl->lock_path);
    xl->sock_path[0] = xl->lock_path[0] = 0;
}
