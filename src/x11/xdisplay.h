/* xdisplay.h -- X display names, connecting to a display, and Xauthority files
 * (through libXau): the cookie the display side presents upstream and the cookie
 * the app side hands to its own clients. */
#ifndef TINCAN_XDISPLAY_H
#define TINCAN_XDISPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XAUTH_COOKIE_NAME "MIT-MAGIC-COOKIE-1"
#define XAUTH_COOKIE_SIZE 16

struct xdisplay_addr {
    bool tcp;
    char host[256];   /* TCP host; empty for a local socket */
    int number;       /* display number N of ":N" */
};

/* Accepts ":N", ":N.S", "unix:N", "host:N", "host:N.S". 0 or -EINVAL. */
int xdisplay_parse(const char *name, struct xdisplay_addr *out);
/* Connects (blocking; local or loopback displays answer at once). Returns an fd or -errno. */
int xdisplay_connect(const struct xdisplay_addr *a);

/* The MIT-MAGIC-COOKIE-1 for a display from the user's Xauthority file; 0, or -ENOENT. */
int xauth_lookup(const struct xdisplay_addr *a, uint8_t *cookie, size_t *cookie_len, size_t cap);
/* A connection setup request for display a (byte order msb, protocol major.minor) with the
 * user's cookie for it, or none if there is none; appended to out. 0 or -ENOMEM. */
struct buf;
int xdisplay_setup_request(const struct xdisplay_addr *a, struct buf *out, bool msb, uint16_t major, uint16_t minor);
/* $XAUTHORITY, else ~/.Xauthority. */
const char *xauth_file(void);
/* Replaces the entries for local display N (and 127.0.0.1:N when tcp) in file with cookie. */
int xauth_add(const char *file, int number, const uint8_t cookie[XAUTH_COOKIE_SIZE], bool tcp);
/* Removes the entries add() made. */
int xauth_remove(const char *file, int number);

#endif
