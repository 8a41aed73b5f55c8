/* cell.h -- cell mode: a shared radio cell of network namespaces, a base station and N
 * stations, each joined to the base by its own TUN devices, whose packets share one medium
 * under a MAC model (802.11b DCF or MACA). Needs root. */
#ifndef EMU_CELL_H
#define EMU_CELL_H

#include <stdint.h>
#include <stdio.h>

#include "medium.h"

struct emu_cell_opts {
    const char *mac;                  /* "dcf" or "maca" */
    int n_stations;                   /* 1..EMU_MEDIUM_STATIONS-1 */
    uint64_t rate_bps[EMU_MEDIUM_STATIONS];     /* per station (index 1..); 0: the MAC's default */
    uint32_t loss_ppm[EMU_MEDIUM_STATIONS];
    uint32_t queue_pkts;              /* each station's queue and each of the base's */
    uint32_t mtu;
    int short_preamble;               /* dcf: 96 us PLCP instead of 192 us */
    uint32_t rts_threshold_bytes;     /* dcf: RTS/CTS above this; 0 never */
    int vj;                           /* RFC 1144 (+ timestamps) per stream, reset on a MAC drop */
    int ap_sched;                     /* dcf: the base's queueing, enum emu_ap_sched (--ap-queue) */
    int no_eifs;                      /* dcf: DIFS instead of EIFS after a garbled frame */
    uint32_t deaf[EMU_MEDIUM_STATIONS];   /* maca: bit j of deaf[i]: i cannot hear j (--hidden) */
    struct { int st; int64_t at_ns; int join; } sched[16];   /* --leave I@T, --join I@T */
    int n_sched;
    uint64_t seed;
    const char *info_file, *stats_file;
    int verbose;
};

void emu_cell_opts_default(struct emu_cell_opts *o);
/* Applies one cell option (--mac, --stations, --rate, --station-rate I=R, --loss,
 * --station-loss I=P, --queue, --mtu, --preamble, --rts-threshold, --ap-queue, --hidden,
 * --no-eifs, --seed, --profile).
 * 0, -ENOENT (not a cell option) or -EINVAL. */
int emu_cell_option(struct emu_cell_opts *o, const char *name, const char *value);
int emu_cell_option_is_flag(const char *name);
void emu_cell_help(FILE *out);

/* Runs until SIGTERM/SIGINT on sig_fd; 0 or -errno. */
int emu_cell_run(const struct emu_cell_opts *o, int sig_fd);

#endif
