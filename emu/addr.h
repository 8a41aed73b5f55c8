/* addr.h -- socket addresses of stream mode: "HOST:PORT", "[V6]:PORT", "unix:PATH",
 * "unix:@NAME" (abstract). Parsing and non-blocking listen/connect helpers. */
#ifndef EMU_ADDR_H
#define EMU_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

struct emu_addr {
    struct sockaddr_storage ss;
    socklen_t len;
    int family;                       /* AF_INET, AF_INET6, AF_UNIX */
};

/* Parses text into *a (numeric hosts only, or "localhost"). 0 or -EINVAL. */
int emu_addr_parse(const char *text, struct emu_addr *a);
/* Formats *a as text parseable by emu_addr_parse. */
void emu_addr_format(const struct emu_addr *a, char *buf, size_t size);

/* A non-blocking listening socket on *a (a unix path is replaced if it is a stale
 * socket); fills *a with the bound address (port 0 -> actual port). fd or -errno. */
int emu_addr_listen(struct emu_addr *a);
/* Starts a non-blocking connect: fd (maybe still connecting) or -errno. */
int emu_addr_connect(const struct emu_addr *a);

#endif
