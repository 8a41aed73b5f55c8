/* pen.c -- a drawing client for the pen workload: one line per MotionNotify it receives.
 * Benchmark helper only; prints how many motion events reached it, so a proxy that
 * coalesces motion shows it. Workload: ~300 motion events at 100 Hz, one window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xcb/xcb.h>

/*
 * usage: pen [WIDTH HEIGHT]
 * Maps a window at 0,0; prints "ready" once it is exposed. Each MotionNotify draws a
 * line from the previous point; the first ButtonRelease ends it. Prints
 * "motion=N press=N lines=N" after a round trip that ensures every line was drawn.
 */

int main(int argc, char **argv)
{
    uint16_t w = argc > 2 ? (uint16_t)atoi(argv[1]) : 600, h = argc > 2 ? (uint16_t)atoi(argv[2]) : 400;
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "pen: cannot open display\n");
        return 1;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    xcb_window_t win = xcb_generate_id(c);
    uint32_t wvals[] = { scr->white_pixel, 1,
                         XCB_EVENT_MASK_EXPOSURE | XCB_EVENT_MASK_BUTTON_PRESS |
                         XCB_EVENT_MASK_BUTTON_RELEASE | XCB_EVENT_MASK_BUTTON_MOTION |
                         XCB_EVENT_MASK_STRUCTURE_NOTIFY };
    xcb_create_window(c, XCB_COPY_FROM_PARENT, win, scr->root, 0, 0, w, h, 0,
                      XCB_WINDOW_CLASS_INPUT_OUTPUT, scr->root_visual,
                      XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, wvals);
    static const char title[] = "tincan-pen";
    xcb_change_property(c, XCB_PROP_MODE_REPLACE, win, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                        sizeof title - 1, title);
    xcb_gcontext_t gc = xcb_generate_id(c);
    uint32_t gvals[] = { scr->black_pixel, 2 };
    xcb_create_gc(c, gc, win, XCB_GC_FOREGROUND | XCB_GC_LINE_WIDTH, gvals);
    xcb_map_window(c, win);
    xcb_flush(c);

    unsigned motion = 0, press = 0, lines = 0;
    int ready = 0, down = 0, done = 0;
    xcb_point_t last = { 0, 0 };
    while (!done) {
        xcb_generic_event_t *ev = xcb_wait_for_event(c);
        /* Handle everything queued, then flush once, as an Xlib program does. */
        while (ev) {
            switch (ev->response_type & 0x7f) {
            case XCB_EXPOSE:
                if (!ready) {
                    ready = 1;
                    printf("ready\n");
                    fflush(stdout);
                }
                break;
            case XCB_BUTTON_PRESS: {
                xcb_button_press_event_t *e = (void *)ev;
                press++;
                down = 1;
                last = (xcb_point_t){ e->event_x, e->event_y };
                break;
            }
            case XCB_MOTION_NOTIFY: {
                xcb_motion_notify_event_t *e = (void *)ev;
                motion++;
                xcb_point_t pts[2] = { last, { e->event_x, e->event_y } };
                if (down) {
                    xcb_poly_line(c, XCB_COORD_MODE_ORIGIN, win, gc, 2, pts);
                    lines++;
                }
                last = pts[1];
                break;
            }
            case XCB_BUTTON_RELEASE:
                done = 1;
                break;
            default:
                break;
            }
            free(ev);
            ev = xcb_poll_for_event(c);
        }
        xcb_flush(c);
        if (xcb_connection_has_error(c)) {
            fprintf(stderr, "pen: connection lost\n");
            return 1;
        }
    }
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    printf("motion=%u press=%u lines=%u\n", motion, press, lines);
    fflush(stdout);
    xcb_disconnect(c);
    return 0;
}
