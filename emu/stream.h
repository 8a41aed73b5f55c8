/* stream.h -- stream mode: a TCP / unix-socket relay that applies the link's rate and
 * delay per direction to every accepted connection. Needs no privileges. */
#ifndef EMU_STREAM_H
#define EMU_STREAM_H

#include <stdbool.h>

#include "params.h"

struct emu_stream_opts {
    const char *listen;               /* address text, see addr.h */
    const char *connect;
    const char *stats_file;           /* key=value report, rewritten on SIGUSR1 and at exit */
    const char *ready_file;           /* written once listening: "listen=ADDR" */
    int sockbuf_bytes;                /* SO_RCVBUF of read sides; 0: automatic, -1: kernel default */
    bool handshake_delay;             /* connect upstream one RTT late, as TCP's handshake would */
    int verbose;
};

/* Runs until SIGTERM/SIGINT arrives on sig_fd (a signalfd that also carries SIGUSR1).
 * Returns 0, or -errno if it could not start. */
int emu_stream_run(const struct emu_params *p, const struct emu_stream_opts *o, int sig_fd);

#endif
