/* transport.c -- listening on and connecting to link addresses. Link sockets get
 * TCP_NODELAY (tincan decides itself when to write, so Nagle would only add delay) and
 * TCP_NOTSENT_LOWAT (data waits in tincan, not in the kernel, until the link has room). */
#include "link/transport.h"

#include "common/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

bool transport_is_local(const char *addr) { return strncmp(addr, "unix:", 5) == 0; }

static int split_host_port(const char *addr, char *host, size_t cap, char *port, size_t pcap)
{
    const char *colon = strrchr(addr, ':');
    const char *h = "127.0.0.1", *p = addr;
    size_t hlen = strlen(h);
    if (colon) {
        p = colon + 1;
        if (colon > addr) {
            h = addr;
            hlen = (size_t)(colon - addr);
            if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') {
                h++;
                hlen -= 2;
            }
        }
    }
    if (hlen >= cap || strlen(p) >= pcap || !*p)
        return -EINVAL;
    memcpy(host, h, hlen);
    host[hlen] = 0;
    strcpy(port, p);
    return 0;
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    transport_set_lowat(fd, TRANSPORT_INITIAL_LOWAT);
}

void transport_set_lowat(int fd, uint32_t bytes)
{
    int v = (int)bytes;
    setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof v);
}

int transport_queue_info(int fd, struct transport_queue *q)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
        return -1;
    q->unsent = ti.tcpi_notsent_bytes;
    q->rate_Bps = ti.tcpi_delivery_rate;
    q->rtt_us = ti.tcpi_rtt;
    q->min_rtt_us = ti.tcpi_min_rtt;
    q->unacked = ti.tcpi_unacked;
    return 0;
}

int transport_listen(const char *addr)
{
    if (transport_is_local(addr))
        return net_unix_listen(addr + 5, 8);
    char host[256], port[32];
    int rc = split_host_port(addr, host, sizeof host, port, sizeof port);
    return rc < 0 ? rc : net_tcp_listen(host, port, 8);
}

static int connect_once(const char *addr)
{
    if (transport_is_local(addr))
        return net_unix_connect(addr + 5, 0);
    char host[256], port[32];
    int rc = split_host_port(addr, host, sizeof host, port, sizeof port);
    int fd = rc < 0 ? rc : net_tcp_connect(host, port);
    if (fd >= 0)
        tune(fd);
    return fd;
}

int transport_dial(const char *addr)
{
    if (transport_is_local(addr))
        return net_unix_connect(addr + 5, 0);
    char host[256], port[32];
    int rc = split_host_port(addr, host, sizeof host, port, sizeof port);
    int fd = rc < 0 ? rc : net_tcp_connect_flags(host, port, SOCK_NONBLOCK);
    if (fd >= 0)
        tune(fd);
    return fd;
}

int transport_connect(const char *addr, int timeout_ms)
{
    for (int waited = 0;; waited += 50) {
        int fd = connect_once(addr);
        if (fd >= 0 || (fd != -ECONNREFUSED && fd != -ENOENT) || waited >= timeout_ms)
            return fd;
        nanosleep(&(struct timespec){ 0, 50 * 1000000 }, NULL);
    }
}

int transport_accept(int lfd, char *peer, int peer_len)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
    if (fd < 0)
        return -errno;
    snprintf(peer, (size_t)peer_len, "a local process");
    if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) {
        char h[INET6_ADDRSTRLEN] = "?";
        int port = 0;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *in = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &in->sin_addr, h, sizeof h);
            port = ntohs(in->sin_port);
        } else {
            struct sockaddr_in6 *in = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &in->sin6_addr, h, sizeof h);
            port = ntohs(in->sin6_port);
        }
        snprintf(peer, (size_t)peer_len, "%s port %d", h, port);
        tune(fd);
    }
    return fd;
}
