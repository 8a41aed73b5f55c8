/* transport.h -- the byte pipe under the link: TCP ("HOST:PORT", loopback by default)
 * or a unix socket ("unix:PATH"). Knows nothing of frames. */
#ifndef TINCAN_TRANSPORT_H
#define TINCAN_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

/* Returns a listening fd, or -errno. A bare ":PORT" or "PORT" binds 127.0.0.1. */
int transport_listen(const char *addr);
/* Connects, retrying for up to timeout_ms while nobody listens yet. Returns an fd or -errno. */
int transport_connect(const char *addr, int timeout_ms);
/* Connects without waiting: the fd is returned with a TCP connection still under way
 * (its first write or read fails if it does not succeed). Returns an fd or -errno. */
int transport_dial(const char *addr);
/* Accepts one peer (blocking), describing it in peer (for logs). Returns an fd or -errno. */
int transport_accept(int lfd, char *peer, int peer_len);
/* What the kernel knows of a TCP link's queue. */
struct transport_queue {
    uint32_t unsent;          /* bytes written but not yet sent */
    uint64_t rate_Bps;        /* recent delivery rate, bytes per second (0 until measured) */
    uint32_t rtt_us, min_rtt_us; /* the kernel's smoothed and least round trip (0: none yet) */
    uint32_t unacked;         /* segments sent and not yet acknowledged: in flight */
};
/* 0, or -1 where the kernel does not say (not TCP). */
int transport_queue_info(int fd, struct transport_queue *q);
/* Sets how little unsent data makes a TCP link writable again (TCP_NOTSENT_LOWAT). */
void transport_set_lowat(int fd, uint32_t bytes);

#define TRANSPORT_INITIAL_LOWAT (16 * 1024)

/* True for unix sockets: nobody beyond this machine's permissions can reach them. */
bool transport_is_local(const char *addr);

#endif
