/* xkeeper.c -- a test fixture: covers the screen with a window that has no background,
 * so what other clients drew stays on screen after their windows are gone (x11perf).
 * Prints "ready" once the window is mapped; runs until killed or its server goes away. */
#include <stdio.h>
#include <stdlib.h>
#include <xcb/xcb.h>

int main(void)
{
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xkeeper: cannot open the display\n");
        return 1;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    xcb_window_t w = xcb_generate_id(c);
    uint32_t values[] = { XCB_BACK_PIXMAP_NONE, 1 /* override-redirect */ };
    xcb_create_window(c, XCB_COPY_FROM_PARENT, w, scr->root, 0, 0, scr->width_in_pixels, scr->height_in_pixels, 0,
                      XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT,
                      XCB_CW_BACK_PIXMAP | XCB_CW_OVERRIDE_REDIRECT, values);
    xcb_map_window(c, w);
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL)); /* a round trip: mapped */
    printf("ready\n");
    fflush(stdout);
    xcb_generic_event_t *ev;
    while ((ev = xcb_wait_for_event(c)))
        free(ev);
    xcb_disconnect(c);
    return 0;
}
