/* ink.c -- the input-latency client: draws a 4x4 "ink" square for each MotionNotify.
 * Benchmark helper only (bench/latency); runs through the path under test.
 *
 * usage: ink [SIZE]
 * Maps an override-redirect window of SIZExSIZE (default 256) at 0,0 with a white
 * background and prints "ready" at its first Expose. For each MotionNotify at (x, y) it
 * fills the 4x4 cell containing (x, y) in black; after handling every queued event it
 * flushes once, as an Xlib program does. The square's position is the event's own
 * position, so a watcher on the real display can tell which injected event it answers.
 * Runs until killed or until the connection ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <xcb/xcb.h>

int main(int argc, char **argv)
{
    uint16_t size = argc > 1 ? (uint16_t)atoi(argv[1]) : 256;
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "ink: cannot open display\n");
        return 1;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    xcb_window_t win = xcb_generate_id(c);
    uint32_t wvals[] = { scr->white_pixel, 1,
                         XCB_EVENT_MASK_EXPOSURE | XCB_EVENT_MASK_POINTER_MOTION |
                         XCB_EVENT_MASK_STRUCTURE_NOTIFY };
    xcb_create_window(c, XCB_COPY_FROM_PARENT, win, scr->root, 0, 0, size, size, 0,
                      XCB_WINDOW_CLASS_INPUT_OUTPUT, scr->root_visual,
                      XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, wvals);
    static const char title[] = "tincan-ink";
    xcb_change_property(c, XCB_PROP_MODE_REPLACE, win, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                        sizeof title - 1, title);
    xcb_gcontext_t gc = xcb_generate_id(c);
    uint32_t gvals[] = { scr->black_pixel };
    xcb_create_gc(c, gc, win, XCB_GC_FOREGROUND, gvals);
    xcb_map_window(c, win);
    xcb_flush(c);

    int ready = 0;
    unsigned long motion = 0;
    for (;;) {
        xcb_generic_event_t *ev = xcb_wait_for_event(c);
        if (!ev)
            break;
        while (ev) {
            switch (ev->response_type & 0x7f) {
            case XCB_EXPOSE:
                if (!ready) {
                    ready = 1;
                    printf("ready\n");
                    fflush(stdout);
                }
                break;
            case XCB_MOTION_NOTIFY: {
                xcb_motion_notify_event_t *m = (void *)ev;
                xcb_rectangle_t r = { (int16_t)(m->event_x & ~3), (int16_t)(m->event_y & ~3), 4, 4 };
                xcb_poly_fill_rectangle(c, win, gc, 1, &r);
                motion++;
                break;
            }
            default:
                break;
            }
            free(ev);
            ev = xcb_poll_for_queued_event(c);
        }
        xcb_flush(c);
    }
    fprintf(stderr, "ink: connection ended after %lu motion events\n", motion);
    return 0;
}
