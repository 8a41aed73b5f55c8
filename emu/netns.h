/* netns.h -- the plumbing of packet mode: anonymous network namespaces, TUN devices and
 * their addresses. Everything it creates is tied to file descriptors of this process, so it
 * all vanishes when the process ends, however it ends (even SIGKILL). Needs CAP_NET_ADMIN
 * and CAP_SYS_ADMIN. Never touches the calling namespace except to add a TUN device there
 * when asked (host side), and never its routes other than that device's own peer route. */
#ifndef EMU_NETNS_H
#define EMU_NETNS_H

#include <netinet/in.h>
#include <stdint.h>

struct emu_tun_cfg {
    const char *name;                 /* device name */
    struct in_addr local, peer;       /* point-to-point addresses */
    uint32_t mtu;
    int default_route;                /* add a default route through the device (new namespaces only) */
    int keep_ipv6;
    int no_tcp_timestamps;            /* new namespaces only: a stack of RFC 1144's era */
    int forward;                      /* new namespaces only: loopback up, IPv4 forwarding on (a cell's base) */
};

/* Creates a new, unnamed network namespace and returns an fd to it (or -errno). The calling
 * thread stays in its own namespace. */
int emu_netns_new(void);

/* Creates a TUN device (IFF_TUN | IFF_NO_PI, non-blocking) inside namespace ns_fd (-1: the
 * current one), configures it and brings it and loopback up. Returns the device fd or -errno. */
int emu_tun_create(int ns_fd, const struct emu_tun_cfg *cfg);

#endif
