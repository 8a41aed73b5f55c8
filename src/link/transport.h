/* transport.h -- the byte pipe under the link: TCP ("HOST:PORT", loopback by default)
 * or a unix socket ("unix:PATH"). Knows nothing of frames. */
#ifndef TINCAN_TRANSPORT_H
#define TINCAN_TRANSPORT_H

#include <stdbool.h>

/* Returns a listening fd, or -errno. A bare ":PORT" or "PORT" binds 127.0.0.1. */
int transport_listen(const char *addr);
/* Connects, retrying for up to timeout_ms while nobody listens yet. Returns an fd or -errno. */
int transport_connect(const char *addr, int timeout_ms);
/* Accepts one peer (blocking), describing it in peer (for logs). Returns an fd or -errno. */
int transport_accept(int lfd, char *peer, int peer_len);
/* Bytes written to a TCP link but not yet sent by the kernel; -1 where unknown (not TCP). */
int transport_unsent(int fd);

/* TCP links keep at most this much unsent data in the kernel: the rest waits in tincan,
 * where it can still be scheduled (TCP_NOTSENT_LOWAT; writability means "below this"). */
#define TRANSPORT_NOTSENT_LOWAT (16 * 1024)

/* True for unix sockets: nobody beyond this machine's permissions can reach them. */
bool transport_is_local(const char *addr);

#endif
