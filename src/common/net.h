/* net.h -- stream-socket plumbing shared by the link transport and X display code:
 * connect to a TCP host:port (each address in turn), connect to or bind a unix socket. */
#ifndef TINCAN_NET_H
#define TINCAN_NET_H

/* Each returns a connected (or listening) fd with close-on-exec, or -errno. */
int net_tcp_connect(const char *host, const char *port);
/* flags: SOCK_NONBLOCK to return at once with the connection under way (the first address
 * only, then: a write or read on the fd tells how it went). */
int net_tcp_connect_flags(const char *host, const char *port, int flags);
int net_tcp_listen(const char *host, const char *port, int backlog);
/* abstract: a name in the abstract namespace (Linux), not a file. */
int net_unix_connect(const char *path, int abstract);
int net_unix_listen(const char *path, int backlog);
/* Makes fd non-blocking. 0 or -errno. */
int net_set_nonblock(int fd);

#endif
