/* addr.c -- parsing and opening of stream-mode socket addresses.
 * Never resolves names through DNS: addresses are numeric (or "localhost"). */
#include "addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int parse_unix(const char *path, struct emu_addr *a)
{
    struct sockaddr_un *un = (struct sockaddr_un *)&a->ss;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof un->sun_path) return -EINVAL;
    memset(&a->ss, 0, sizeof a->ss);
    un->sun_family = AF_UNIX;
    memcpy(un->sun_path, path, n);
    if (path[0] == '@') un->sun_path[0] = 0;                 /* abstract namespace */
    a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
    a->family = AF_UNIX;
    return 0;
}

static int parse_port(const char *s, uint16_t *port)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (!*s || *e || errno || v < 0 || v > 65535) return -EINVAL;
    *port = (uint16_t)v;
    return 0;
}

int emu_addr_parse(const char *text, struct emu_addr *a)
{
    char host[128];
    const char *colon;
    uint16_t port;
    if (strncmp(text, "unix:", 5) == 0) return parse_unix(text + 5, a);
    memset(a, 0, sizeof *a);
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof host) return -EINVAL;
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = 0;
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon || (size_t)(colon - text) >= sizeof host) return -EINVAL;
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = 0;
    }
    if (parse_port(colon + 1, &port)) return -EINVAL;
    if (strcmp(host, "localhost") == 0 || !host[0]) strcpy(host, "127.0.0.1");
    struct sockaddr_in *in4 = (struct sockaddr_in *)&a->ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        a->len = sizeof *in4;
        a->family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        a->len = sizeof *in6;
        a->family = AF_INET6;
        return 0;
    }
    return -EINVAL;
}

void emu_addr_format(const struct emu_addr *a, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN];
    if (a->family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;
        size_t n = a->len - offsetof(struct sockaddr_un, sun_path);
        if (n && un->sun_path[0] == 0)
            snprintf(buf, size, "unix:@%.*s", (int)(n - 1), un->sun_path + 1);
        else
            snprintf(buf, size, "unix:%s", un->sun_path);
    } else if (a->family == AF_INET) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)&a->ss;
        inet_ntop(AF_INET, &in4->sin_addr, host, sizeof host);
        snprintf(buf, size, "%s:%u", host, ntohs(in4->sin_port));
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
    }
}

/* Removes a leftover unix socket file, never any other kind of file. */
static void unlink_stale_socket(const struct emu_addr *a)
{
    const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;
    struct stat st;
    if (un->sun_path[0] && stat(un->sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) unlink(un->sun_path);
}

int emu_addr_listen(struct emu_addr *a)
{
    int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int one = 1;
    if (a->family == AF_UNIX) unlink_stale_socket(a);
    else setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a->ss, a->len) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (a->family != AF_UNIX) {
        socklen_t len = sizeof a->ss;
        getsockname(fd, (struct sockaddr *)&a->ss, &len);
        a->len = len;
    }
    return fd;
}

int emu_addr_connect(const struct emu_addr *a)
{
    int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}
