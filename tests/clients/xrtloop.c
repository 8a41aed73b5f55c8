/* xrtloop.c -- a test fixture: N round trips (GetImage of 16x16 pixels of the root), one
 * every 50 ms, each waiting for its reply. Prints "done N" and exits 0 when all came;
 * exits 1 on an error or a lost connection.
 * usage: xrtloop N */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <xcb/xcb.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
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
        nanosleep(&(struct timespec){ 0, 50 * 1000000 }, NULL);
    }
    printf("done %d\n", done);
    return done == n ? 0 : 1;
}
