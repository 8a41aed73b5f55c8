/* xownwin.c -- a client that asks about its own windows, for the tests of answers given at
 * tincan's app side (docs/PROTOCOL.md 3.4). Modes:
 *   xownwin replies          creates windows, sets, changes and deletes properties, moves,
 *                            resizes, maps and restacks them, makes and frees pixmaps, and
 *                            prints every reply (GetGeometry, GetWindowAttributes,
 *                            GetProperty, QueryTree, TranslateCoordinates) as hex, errors by
 *                            code: run on a server directly and through tincan, the outputs
 *                            must match.
 *   xownwin watched          creates a window with a property, prints "window 0x..", then for
 *                            each line read on stdin ("go"), polls until another client's
 *                            change is seen (up to 10 s) and prints "seen property", "seen
 *                            children" and "seen geometry", or "stale ..." on timeout.
 *   xownwin foreign WINDOW CHILD  that other client: changes WINDOW's property and CHILD's
 *                            position, and makes a window of its own in WINDOW (it stays
 *                            until that client's connection closes: the watcher has seen it). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/xcb.h>

static xcb_connection_t *c;
static xcb_screen_t *screen;

static void hex(const char *label, const void *p, size_t n)
{
    const uint8_t *b = p;
    printf("%s:", label);
    for (size_t i = 0; i < n; i++)
        printf("%s%02x", i % 4 ? "" : " ", b[i]);
    printf("\n");
}

static void geometry(const char *label, xcb_window_t w)
{
    xcb_generic_error_t *e = NULL;
    xcb_get_geometry_reply_t *r = xcb_get_geometry_reply(c, xcb_get_geometry(c, w), &e);
    if (r)
        hex(label, r, sizeof *r);
    else
        printf("%s: error %u\n", label, e ? e->error_code : 0);
    free(r);
    free(e);
}

static void attributes(const char *label, xcb_window_t w)
{
    xcb_generic_error_t *e = NULL;
    xcb_get_window_attributes_reply_t *r = xcb_get_window_attributes_reply(c, xcb_get_window_attributes(c, w), &e);
    if (r) {
        /* all-event-masks holds tincan's observer's selection too: printed apart */
        uint32_t all = r->all_event_masks;
        r->all_event_masks = 0;
        hex(label, r, sizeof *r);
        printf("%s: all-event-masks hold your-event-mask: %s\n", label,
               (all & r->your_event_mask) == r->your_event_mask ? "yes" : "no");
    } else {
        printf("%s: error %u\n", label, e ? e->error_code : 0);
    }
    free(r);
    free(e);
}

static void property(const char *label, xcb_window_t w, xcb_atom_t prop, xcb_atom_t type, uint32_t offset,
                     uint32_t length, uint8_t del)
{
    xcb_generic_error_t *e = NULL;
    xcb_get_property_reply_t *r = xcb_get_property_reply(c, xcb_get_property(c, del, w, prop, type, offset, length), &e);
    if (r)
        hex(label, r, 32 + 4u * r->length);
    else
        printf("%s: error %u\n", label, e ? e->error_code : 0);
    free(r);
    free(e);
}

static void change(xcb_window_t w, uint8_t mode, xcb_atom_t prop, xcb_atom_t type, uint8_t format, uint32_t units,
                   const void *data)
{
    xcb_change_property(c, mode, w, prop, type, format, units, data);
}

static xcb_atom_t atom(const char *name)
{
    xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, (uint16_t)strlen(name), name), NULL);
    xcb_atom_t a = r ? r->atom : 0;
    free(r);
    return a;
}

static void tree(const char *label, xcb_window_t w)
{
    xcb_generic_error_t *e = NULL;
    xcb_query_tree_reply_t *r = xcb_query_tree_reply(c, xcb_query_tree(c, w), &e);
    if (r)
        hex(label, r, sizeof *r + 4 * (size_t)r->children_len);
    else
        printf("%s: error %u\n", label, e ? e->error_code : 0);
    free(r);
    free(e);
}

static void translate(const char *label, xcb_window_t src, xcb_window_t dst, int16_t x, int16_t y)
{
    xcb_generic_error_t *e = NULL;
    xcb_translate_coordinates_reply_t *r =
        xcb_translate_coordinates_reply(c, xcb_translate_coordinates(c, src, dst, x, y), &e);
    if (r)
        hex(label, r, sizeof *r);
    else
        printf("%s: error %u\n", label, e ? e->error_code : 0);
    free(r);
    free(e);
}

/* Errors of requests without replies arrive as events: printed by code. */
static void drain_errors(const char *label)
{
    xcb_generic_event_t *ev;
    while ((ev = xcb_poll_for_event(c))) {
        if (ev->response_type == 0)
            printf("%s: error %u\n", label, ((xcb_generic_error_t *)ev)->error_code);
        free(ev);
    }
}

static int replies(void)
{
    xcb_atom_t greeting = atom("TINCAN_TEST_GREETING"), numbers = atom("TINCAN_TEST_NUMBERS");
    xcb_atom_t shorts = atom("TINCAN_TEST_SHORTS"), never = atom("TINCAN_TEST_NEVER_SET");
    xcb_window_t top = xcb_generate_id(c), child = xcb_generate_id(c), input = xcb_generate_id(c);
    uint32_t top_values[2] = { screen->white_pixel, XCB_EVENT_MASK_EXPOSURE | XCB_EVENT_MASK_STRUCTURE_NOTIFY };
    xcb_create_window(c, XCB_COPY_FROM_PARENT, top, screen->root, 10, 20, 200, 100, 1, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK, top_values);
    uint32_t child_values[2] = { XCB_GRAVITY_NORTH_WEST, XCB_EVENT_MASK_BUTTON_PRESS };
    xcb_create_window(c, XCB_COPY_FROM_PARENT, child, top, 5, 6, 50, 40, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, XCB_CW_WIN_GRAVITY | XCB_CW_EVENT_MASK, child_values);
    xcb_create_window(c, 0, input, top, 0, 0, 30, 30, 0, XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, 0, NULL);
    geometry("geometry top", top);
    geometry("geometry child", child);
    geometry("geometry input-only", input);
    attributes("attributes top", top);
    attributes("attributes child", child);
    attributes("attributes input-only", input);

    /* the tree: children bottom first; points translated into the top-level, whose topmost
     * mapped child holding the point is named (the input-only is above the child); into
     * the root (every client's children: the server's); after a restack (the server's) */
    tree("tree top", top);
    tree("tree child", child);
    translate("root to top, none mapped", screen->root, top, 0, 0);
    xcb_map_window(c, child);
    xcb_map_window(c, input);
    translate("root to top, over both", screen->root, top, 20, 30);
    translate("root to top, over the child", screen->root, top, 50, 30);
    translate("child to root", child, screen->root, 1, 2);
    translate("child to top", child, top, 1, 2);
    translate("top to child", top, child, -3, 400);
    uint32_t above = XCB_STACK_MODE_ABOVE;
    xcb_configure_window(c, child, XCB_CONFIG_WINDOW_STACK_MODE, &above);
    tree("tree top restacked", top);
    translate("root to top restacked", screen->root, top, 20, 30);
    tree("tree child after", child);

    /* pixmaps: of the window's screen, of another pixmap's, of the root's; one of a depth
     * the screen lacks (BadValue, then BadDrawable); one freed (BadDrawable) */
    xcb_pixmap_t pix = xcb_generate_id(c), pix32 = xcb_generate_id(c), bitmap = xcb_generate_id(c);
    xcb_pixmap_t odd = xcb_generate_id(c);
    xcb_create_pixmap(c, screen->root_depth, pix, top, 22, 26);
    geometry("pixmap", pix);
    xcb_create_pixmap(c, 32, pix32, pix, 5, 7);
    geometry("pixmap of a pixmap", pix32);
    xcb_create_pixmap(c, 1, bitmap, screen->root, 9, 3);
    geometry("bitmap", bitmap);
    xcb_free_pixmap(c, pix);
    geometry("pixmap freed", pix);
    geometry("pixmap of a freed pixmap", pix32);
    xcb_free_pixmap(c, pix32);
    xcb_free_pixmap(c, bitmap);
    xcb_create_pixmap(c, 7, odd, top, 4, 4);
    geometry("pixmap of depth 7", odd);
    drain_errors("pixmaps");

    property("absent", top, greeting, XCB_ATOM_STRING, 0, 100, 0);
    property("absent any type", top, greeting, XCB_ATOM_ANY, 0, 100, 0);
    property("never set", top, never, XCB_ATOM_ANY, 5, 0, 0);
    change(top, XCB_PROP_MODE_REPLACE, greeting, XCB_ATOM_STRING, 8, 11, "hello world");
    property("string", top, greeting, XCB_ATOM_STRING, 0, 100, 0);
    property("string any type", top, greeting, XCB_ATOM_ANY, 0, 100, 0);
    property("string other type", top, greeting, XCB_ATOM_INTEGER, 0, 100, 0);
    property("string offset 1 length 1", top, greeting, XCB_ATOM_STRING, 1, 1, 0);
    property("string length 0", top, greeting, XCB_ATOM_STRING, 0, 0, 0);
    property("string offset to the end", top, greeting, XCB_ATOM_STRING, 2, 5, 0);
    property("string offset beyond", top, greeting, XCB_ATOM_STRING, 3, 5, 0);
    property("string other type offset beyond", top, greeting, XCB_ATOM_INTEGER, 30, 5, 0);
    change(top, XCB_PROP_MODE_APPEND, greeting, XCB_ATOM_STRING, 8, 6, " again");
    change(top, XCB_PROP_MODE_PREPEND, greeting, XCB_ATOM_STRING, 8, 4, "oh, ");
    property("string appended and prepended", top, greeting, XCB_ATOM_ANY, 0, 0x7fffffff, 0);
    change(top, XCB_PROP_MODE_APPEND, greeting, XCB_ATOM_INTEGER, 8, 1, "x"); /* BadMatch */
    property("string after a bad append", top, greeting, XCB_ATOM_ANY, 0, 100, 0);
    drain_errors("bad append");

    uint32_t nums[7] = { 1, 2, 3, 0xdeadbeef, 5, 6, 7 };
    change(top, XCB_PROP_MODE_REPLACE, numbers, XCB_ATOM_CARDINAL, 32, 5, nums);
    change(top, XCB_PROP_MODE_APPEND, numbers, XCB_ATOM_CARDINAL, 32, 2, nums + 5);
    property("numbers", top, numbers, XCB_ATOM_CARDINAL, 0, 0x12, 0);
    property("numbers from 3", top, numbers, XCB_ATOM_CARDINAL, 3, 2, 0);
    property("numbers other type", top, numbers, XCB_ATOM_WINDOW, 0, 0x12, 0);
    uint16_t sh[3] = { 0x1234, 0xabcd, 7 };
    change(child, XCB_PROP_MODE_REPLACE, shorts, XCB_ATOM_INTEGER, 16, 3, sh);
    property("shorts", child, shorts, XCB_ATOM_INTEGER, 0, 1, 0);
    property("shorts rest", child, shorts, XCB_ATOM_ANY, 1, 1, 0);
    change(child, XCB_PROP_MODE_REPLACE, shorts, XCB_ATOM_INTEGER, 16, 0, sh);
    property("shorts emptied", child, shorts, XCB_ATOM_ANY, 0, 10, 0);
    change(input, XCB_PROP_MODE_REPLACE, greeting, XCB_ATOM_STRING, 8, 5, "input");
    property("on the input-only window", input, greeting, XCB_ATOM_ANY, 0, 10, 0);

    static uint8_t big[70000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7);
    change(top, XCB_PROP_MODE_REPLACE, never, XCB_ATOM_STRING, 8, sizeof big, big);
    property("large", top, never, XCB_ATOM_STRING, 17000, 3, 0);
    change(top, XCB_PROP_MODE_REPLACE, never, XCB_ATOM_STRING, 8, 3, "abc");
    property("large replaced", top, never, XCB_ATOM_STRING, 0, 3, 0);

    xcb_delete_property(c, top, numbers);
    property("deleted", top, numbers, XCB_ATOM_CARDINAL, 0, 10, 0);
    xcb_delete_property(c, top, numbers);
    property("deleted twice", top, numbers, XCB_ATOM_ANY, 0, 10, 0);
    property("delete partly", top, greeting, XCB_ATOM_STRING, 0, 1, 1);
    property("after a partial delete", top, greeting, XCB_ATOM_STRING, 0, 100, 0);
    property("delete whole", top, greeting, XCB_ATOM_STRING, 0, 100, 1);
    property("after a delete", top, greeting, XCB_ATOM_STRING, 0, 100, 0);

    uint32_t move[4] = { 7, 8, 60, 30 };
    xcb_configure_window(c, child, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y | XCB_CONFIG_WINDOW_WIDTH |
                         XCB_CONFIG_WINDOW_HEIGHT, move);
    geometry("child moved", child);
    uint32_t border = 3;
    xcb_configure_window(c, child, XCB_CONFIG_WINDOW_BORDER_WIDTH, &border);
    geometry("child border", child);
    uint32_t top_move[3] = { (uint32_t)-5, 300, 250 };
    xcb_configure_window(c, top, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y | XCB_CONFIG_WINDOW_WIDTH, top_move);
    geometry("top moved", top);
    geometry("child of the moved top", child);

    xcb_map_window(c, child);
    attributes("child mapped, top not", child);
    xcb_map_window(c, top);
    attributes("top mapped", top);
    attributes("child viewable", child);
    uint32_t attrs[3] = { XCB_GRAVITY_STATIC, 1, XCB_EVENT_MASK_KEY_PRESS | XCB_EVENT_MASK_PROPERTY_CHANGE };
    xcb_change_window_attributes(c, child, XCB_CW_BIT_GRAVITY | XCB_CW_BACKING_STORE | XCB_CW_EVENT_MASK, attrs);
    attributes("child changed", child);
    xcb_unmap_subwindows(c, top);
    attributes("child unmapped", child);
    xcb_destroy_subwindows(c, top);
    geometry("child destroyed", child);
    property("property of a destroyed window", child, shorts, XCB_ATOM_ANY, 0, 1, 0);
    xcb_destroy_window(c, top);
    geometry("top destroyed", top);
    drain_errors("end");
    printf("done\n");
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int watched(void)
{
    xcb_atom_t prop = atom("TINCAN_TEST_WATCHED");
    xcb_window_t top = xcb_generate_id(c), child = xcb_generate_id(c);
    xcb_create_window(c, XCB_COPY_FROM_PARENT, top, screen->root, 0, 0, 100, 100, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, 0, NULL);
    xcb_create_window(c, XCB_COPY_FROM_PARENT, child, top, 1, 2, 30, 30, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, 0, NULL);
    change(top, XCB_PROP_MODE_REPLACE, prop, XCB_ATOM_STRING, 8, 4, "mine");
    property("before", top, prop, XCB_ATOM_STRING, 0, 10, 0);
    geometry("before", child);
    printf("window 0x%x 0x%x\n", top, child);
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin))
        return 1;
    bool seen_prop = false, seen_geom = false, seen_kids = false;
    for (double until = now_s() + 10; now_s() < until && !(seen_prop && seen_geom && seen_kids);) {
        xcb_get_property_reply_t *p = xcb_get_property_reply(c, xcb_get_property(c, 0, top, prop, XCB_ATOM_STRING, 0, 10), NULL);
        seen_prop |= p && xcb_get_property_value_length(p) == 6 && !memcmp(xcb_get_property_value(p), "theirs", 6);
        free(p);
        xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(c, xcb_get_geometry(c, child), NULL);
        seen_geom |= g && g->x == 77;
        free(g);
        xcb_query_tree_reply_t *t = xcb_query_tree_reply(c, xcb_query_tree(c, top), NULL);
        seen_kids |= t && t->children_len == 2;
        free(t);
        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    }
    printf("%s property\n%s children\n%s geometry\n", seen_prop ? "seen" : "stale", seen_kids ? "seen" : "stale",
           seen_geom ? "seen" : "stale");
    return 0;
}

static int foreign(xcb_window_t top, xcb_window_t child)
{
    change(top, XCB_PROP_MODE_REPLACE, atom("TINCAN_TEST_WATCHED"), XCB_ATOM_STRING, 8, 6, "theirs");
    uint32_t x = 77;
    xcb_configure_window(c, child, XCB_CONFIG_WINDOW_X, &x);
    xcb_set_close_down_mode(c, XCB_CLOSE_DOWN_RETAIN_PERMANENT); /* its window outlives it */
    xcb_create_window(c, XCB_COPY_FROM_PARENT, xcb_generate_id(c), top, 3, 3, 5, 5, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, 0, NULL); /* a window of its own in the other's */
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    printf("changed\n");
    return 0;
}

int main(int argc, char **argv)
{
    c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xownwin: cannot connect\n");
        return 1;
    }
    screen = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    int rc = 2;
    if (argc == 2 && !strcmp(argv[1], "replies"))
        rc = replies();
    else if (argc == 2 && !strcmp(argv[1], "watched"))
        rc = watched();
    else if (argc == 4 && !strcmp(argv[1], "foreign"))
        rc = foreign((xcb_window_t)strtoul(argv[2], NULL, 0), (xcb_window_t)strtoul(argv[3], NULL, 0));
    else
        fprintf(stderr, "usage: xownwin replies | watched | foreign WINDOW CHILD\n");
    xcb_disconnect(c);
    return rc;
}
