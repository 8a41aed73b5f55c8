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
/* True for unix sockets: nobody beyond this machine's permissions can reach them. */
bool transport_is_local(const char *addr);

#endif
