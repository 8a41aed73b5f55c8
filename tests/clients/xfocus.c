/* xfocus.c -- test client for GetInputFocus answered at the app side (PROTOCOL.md 3.2).
 * Prints each GetInputFocus answer as "focus=WHAT revert=N", WHAT being none, pointerroot,
 * root, self (a window of this client) or other (a window of another), so that runs through
 * tincan and directly (other resource ids) print the same.
 *   xfocus pair          two GetInputFocus, one after the other's answer (XSync twice)
 *   xfocus event         one; then a PropertyNotify of its own window; then another
 *   xfocus unmap         maps a window, gives it the focus, asks; unmaps it, asks
 *   xfocus query         asks; then a GetGeometry of the root and one of a window that is
 *                        not there (an error); asks again
 *   xfocus destroy       maps a window, gives it the focus, asks; destroys it, asks
 *   xfocus window        maps a window and prints its id, then stays (until killed)
 *   xfocus give WINDOW   gives WINDOW the focus
 *   xfocus poll WINDOW   asks every 10 ms until WINDOW has the focus: "polls=N", or exits 1 after 5 s */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xcb/xcb.h>

static xcb_connection_t *c;
static xcb_screen_t *screen;

static uint32_t ask(int print)
{
    xcb_get_input_focus_reply_t *r = xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL);
    if (!r)
        exit(1);
    uint32_t f = r->focus;
    if (print) {
        const xcb_setup_t *s = xcb_get_setup(c);
        const char *what = f == XCB_NONE ? "none" : f == XCB_INPUT_FOCUS_POINTER_ROOT ? "pointerroot"
                         : f == screen->root ? "root"
                         : (f & ~s->resource_id_mask) == s->resource_id_base ? "self" : "other";
        printf("focus=%s revert=%u\n", what, r->revert_to);
        fflush(stdout);
    }
    free(r);
    return f;
}

static xcb_window_t mapped_window(uint32_t events)
{
    xcb_window_t w = xcb_generate_id(c);
    uint32_t mask = events | XCB_EVENT_MASK_STRUCTURE_NOTIFY;
    xcb_create_window(c, XCB_COPY_FROM_PARENT, w, screen->root, 10, 10, 50, 50, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      screen->root_visual, XCB_CW_EVENT_MASK, &mask);
    xcb_map_window(c, w);
    xcb_flush(c);
    for (xcb_generic_event_t *e; (e = xcb_wait_for_event(c));) { /* viewable: it may take the focus */
        int mapped = (e->response_type & 0x7f) == XCB_MAP_NOTIFY;
        free(e);
        if (mapped)
            break;
    }
    return w;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xfocus: cannot open display\n");
        return 1;
    }
    screen = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    const char *mode = argv[1];
    if (!strcmp(mode, "pair")) {
        ask(1);
        ask(1);
    } else if (!strcmp(mode, "event")) {
        xcb_window_t w = mapped_window(XCB_EVENT_MASK_PROPERTY_CHANGE);
        ask(1);
        xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8, 5, "xtest");
        xcb_flush(c);
        for (xcb_generic_event_t *e; (e = xcb_wait_for_event(c));) {
            int prop = (e->response_type & 0x7f) == XCB_PROPERTY_NOTIFY;
            free(e);
            if (prop)
                break;
        }
        ask(1);
    } else if (!strcmp(mode, "unmap")) {
        xcb_window_t w = mapped_window(0);
        xcb_set_input_focus(c, XCB_INPUT_FOCUS_POINTER_ROOT, w, XCB_CURRENT_TIME);
        ask(1);
        xcb_unmap_window(c, w); /* the focus reverts (to the pointer root) */
        ask(1);
    } else if (!strcmp(mode, "query")) {
        ask(1);
        xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(c, xcb_get_geometry(c, screen->root), NULL);
        printf("root %ux%u\n", g ? g->width : 0, g ? g->height : 0);
        free(g);
        xcb_generic_error_t *err = NULL;
        g = xcb_get_geometry_reply(c, xcb_get_geometry(c, xcb_generate_id(c)), &err);
        printf("missing window: error %u\n", err ? err->error_code : 0);
        free(g);
        free(err);
        ask(1);
    } else if (!strcmp(mode, "destroy")) {
        xcb_window_t w = mapped_window(0);
        xcb_set_input_focus(c, XCB_INPUT_FOCUS_PARENT, w, XCB_CURRENT_TIME);
        ask(1);
        xcb_destroy_window(c, w); /* the focus reverts (to the parent, the root) */
        ask(1);
    } else if (!strcmp(mode, "window")) {
        xcb_window_t w = mapped_window(0);
        printf("%u\n", w);
        fflush(stdout);
        pause();
    } else if (!strcmp(mode, "give") && argc > 2) {
        xcb_set_input_focus(c, XCB_INPUT_FOCUS_POINTER_ROOT, (xcb_window_t)strtoul(argv[2], NULL, 0), XCB_CURRENT_TIME);
        ask(0);
    } else if (!strcmp(mode, "poll") && argc > 2) {
        uint32_t want = (uint32_t)strtoul(argv[2], NULL, 0);
        for (int n = 1; n <= 500; n++) {
            if (ask(0) == want) {
                printf("polls=%d\n", n);
                return 0;
            }
            nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
        }
        return 1;
    } else
        return 2;
    xcb_disconnect(c);
    return 0;
}
