/* packet.h -- packet mode: two network namespaces (or one and the host) joined by TUN
 * devices, with real IP packets moved between them through the emulated link. Needs root. */
#ifndef EMU_PACKET_H
#define EMU_PACKET_H

#include "params.h"

struct emu_packet_opts {
    const char *addr_a, *addr_b;      /* IPv4 addresses of the two ends (default 10.77.0.1/.2) */
    int host_b;                       /* side B is the calling namespace, not a new one */
    const char *info_file;            /* written when ready: pid, namespace paths, addresses */
    const char *stats_file;           /* key=value report on SIGUSR1 and at exit */
    const char *pcap_file;            /* every delivered packet, LINKTYPE_RAW */
    int keep_ipv6;                    /* leave IPv6 on the TUN devices */
    int no_tcp_timestamps;            /* net.ipv4.tcp_timestamps=0 in the new namespaces */
    int verbose;
};

/* Runs until SIGTERM/SIGINT arrives on sig_fd; 0 or -errno. */
int emu_packet_run(const struct emu_params *p, const struct emu_packet_opts *o, int sig_fd);

#endif
