/* xgetflood.c -- a test fixture, a hostile client: asks for the whole root window's pixels
 * (GetImage) as fast as it can and never reads a byte of the replies. It writes the requests
 * to the connection's socket itself, since xcb would read replies to keep from blocking.
 * Prints "sent N" every 100 requests; exits 2 once the connection is closed on it.
 * usage: xgetflood */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xcb/xcb.h>

int main(void)
{
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xgetflood: cannot open the display\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    int fd = xcb_get_file_descriptor(c);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* xcb's is non-blocking: wait for room */
    /* GetImage (73), ZPixmap, 5 units: drawable, x, y, width, height, plane mask; host order
     * is the byte order xcb announced */
    uint8_t rq[20] = { 73, 2 };
    uint16_t units = 5, w = scr->width_in_pixels, h = scr->height_in_pixels, zero = 0;
    uint32_t planes = ~0u;
    memcpy(rq + 2, &units, 2);
    memcpy(rq + 4, &scr->root, 4);
    memcpy(rq + 8, &zero, 2);
    memcpy(rq + 10, &zero, 2);
    memcpy(rq + 12, &w, 2);
    memcpy(rq + 14, &h, 2);
    memcpy(rq + 16, &planes, 4);
    for (unsigned long n = 1;; n++) {
        if (write(fd, rq, sizeof rq) != (ssize_t)sizeof rq) {
            printf("cut off after %lu requests (%s)\n", n - 1, strerror(errno));
            return 2;
        }
        if (n % 100 == 0) {
            printf("sent %lu\n", n);
            fflush(stdout);
        }
    }
}
