/* mapwait.c -- waits on the real X server for the next top-level window to map.
 * Benchmark helper only (bench/latency; the same job as bench/compare/mapwait.c). It talks
 * to the real display, never through a proxy, so it adds nothing to the link it times.
 *
 * usage: mapwait [TIMEOUT_MS]
 * Prints "ready" once it watches the root window, then "mapped 0xWINDOW" at the first
 * MapNotify of a child of the root and exits 0; prints "timeout" and exits 1 after
 * TIMEOUT_MS (default 60000).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <xcb/xcb.h>

int main(int argc, char **argv)
{
    int timeout_ms = argc > 1 ? atoi(argv[1]) : 60000;
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "mapwait: cannot open display\n");
        return 2;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    uint32_t mask = XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY;
    xcb_generic_error_t *err = xcb_request_check(
        c, xcb_change_window_attributes_checked(c, scr->root, XCB_CW_EVENT_MASK, &mask));
    if (err) {
        fprintf(stderr, "mapwait: cannot select on the root window\n");
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    struct pollfd p = { .fd = xcb_get_file_descriptor(c), .events = POLLIN };
    for (;;) {
        xcb_generic_event_t *ev;
        while ((ev = xcb_poll_for_event(c))) {
            if ((ev->response_type & 0x7f) == XCB_MAP_NOTIFY) {
                xcb_map_notify_event_t *m = (void *)ev;
                printf("mapped 0x%x\n", (unsigned)m->window);
                fflush(stdout);
                return 0;
            }
            free(ev);
        }
        if (xcb_connection_has_error(c))
            return 2;
        if (poll(&p, 1, timeout_ms) == 0) {
            printf("timeout\n");
            return 1;
        }
    }
}
