/* netns.c -- namespaces and TUN devices of packet mode, configured with plain ioctls (no
 * iproute2 needed). Must leave the calling thread in the namespace it started in, even on
 * error. Workload: runs once at start-up. */
#include "netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <net/route.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int open_current_ns(void)
{
    int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int emu_netns_new(void)
{
    int home = open_current_ns();
    if (home < 0) return home;
    int rc = 0, fd = -1;
    if (unshare(CLONE_NEWNET) < 0) rc = -errno;
    else {
        fd = open_current_ns();
        if (setns(home, CLONE_NEWNET) < 0) rc = -errno;       /* should never fail */
        if (fd < 0) rc = fd;
    }
    close(home);
    if (rc < 0 && fd >= 0) close(fd);
    return rc < 0 ? rc : fd;
}

static void set_sin(struct sockaddr *sa, struct in_addr a)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = a };
    memcpy(sa, &sin, sizeof sin);
}

static int ifioctl(int sock, unsigned long req, struct ifreq *ifr)
{
    return ioctl(sock, req, ifr) < 0 ? -errno : 0;
}

static int link_up(int sock, const char *name)
{
    struct ifreq ifr = { 0 };
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    int rc = ifioctl(sock, SIOCGIFFLAGS, &ifr);
    if (rc) return rc;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    return ifioctl(sock, SIOCSIFFLAGS, &ifr);
}

/* Writes a sysctl of the current namespace; a missing one (no IPv6 at all) is fine. */
static int write_sysctl(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -errno;
    int rc = write(fd, value, strlen(value)) == (ssize_t)strlen(value) ? 0 : -errno;
    close(fd);
    return rc;
}

static int disable_ipv6(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/disable_ipv6", name);
    return write_sysctl(path, "1");
}

static int add_default_route(int sock, const char *name)
{
    struct rtentry rt = { 0 };
    struct in_addr any = { 0 };
    char dev[IFNAMSIZ];
    snprintf(dev, sizeof dev, "%s", name);
    set_sin(&rt.rt_dst, any);
    set_sin(&rt.rt_genmask, any);
    set_sin(&rt.rt_gateway, any);
    rt.rt_flags = RTF_UP;
    rt.rt_dev = dev;
    return ioctl(sock, SIOCADDRT, &rt) < 0 ? -errno : 0;
}

/* Addresses, MTU, queue length, up; in the current namespace. */
static int configure(const struct emu_tun_cfg *cfg)
{
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return -errno;
    struct ifreq ifr = { 0 };
    struct in_addr all = { .s_addr = 0xffffffffu };
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", cfg->name);
    int rc = 0;
    set_sin(&ifr.ifr_addr, cfg->local);
    if (!rc) rc = ifioctl(sock, SIOCSIFADDR, &ifr);
    set_sin(&ifr.ifr_netmask, all);
    if (!rc) rc = ifioctl(sock, SIOCSIFNETMASK, &ifr);
    set_sin(&ifr.ifr_dstaddr, cfg->peer);
    if (!rc) rc = ifioctl(sock, SIOCSIFDSTADDR, &ifr);
    ifr.ifr_mtu = (int)cfg->mtu;
    if (!rc) rc = ifioctl(sock, SIOCSIFMTU, &ifr);
    ifr.ifr_qlen = 1000;
    if (!rc) rc = ifioctl(sock, SIOCSIFTXQLEN, &ifr);
    if (!rc && !cfg->keep_ipv6) rc = disable_ipv6(cfg->name);
    if (!rc) rc = link_up(sock, cfg->name);
    if (!rc && cfg->default_route) {
        link_up(sock, "lo");
        rc = add_default_route(sock, cfg->name);
        if (!rc && cfg->no_tcp_timestamps) rc = write_sysctl("/proc/sys/net/ipv4/tcp_timestamps", "0");
    }
    if (!rc && cfg->forward) {
        link_up(sock, "lo");
        rc = write_sysctl("/proc/sys/net/ipv4/ip_forward", "1");
    }
    close(sock);
    return rc;
}

static int open_tun(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct ifreq ifr = { 0 };
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int emu_tun_create(int ns_fd, const struct emu_tun_cfg *cfg)
{
    int home = -1, fd, rc = 0;
    if (ns_fd >= 0) {
        home = open_current_ns();
        if (home < 0) return home;
        if (setns(ns_fd, CLONE_NEWNET) < 0) { rc = -errno; close(home); return rc; }
    }
    fd = open_tun(cfg->name);
    if (fd >= 0) {
        rc = configure(cfg);
        if (rc < 0) { close(fd); fd = rc; }
    }
    if (home >= 0) {
        if (setns(home, CLONE_NEWNET) < 0 && fd >= 0) { close(fd); fd = -errno; }
        close(home);
    }
    return fd;
}
