/* xrtloop.c -- a test fixture: N round trips (GetImage of 16x16 pixels of the root), one
 * every INTERVAL ms (default 50), each waiting for its reply. Prints "done N" and exits 0
 * when all came; exits 1 on an error or a lost connection. With -t, prints each reply's
 * CLOCK_REALTIME in seconds as it comes (for bench/outage).
 * usage: xrtloop N [INTERVAL_MS [-t]] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <xcb/xcb.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, interval_ms = argc > 2 ? atoi(argv[2]) : 50;
    int stamps = argc > 3 && argv[3][0] == '-' && argv[3][1] == 't';
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xrtloop: cannot open the display\n");
        return 1;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    int done = 0;
    for (; done < n; done++) {
        xcb_get_image_reply_t *r = xcb_get_image_reply(
            c, xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, scr->root, 0, 0, 16, 16, ~0u), NULL);
        if (!r)
            break;
        free(r);
        if (stamps) {
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            printf("%d %.3f\n", done, (double)t.tv_sec + t.tv_nsec / 1e9);
            fflush(stdout);
        }
        nanosleep(&(struct timespec){ interval_ms / 1000, (interval_ms % 1000) * 1000000L }, NULL);
    }
    printf("done %d\n", done);
    return done == n ? 0 : 1;
}
