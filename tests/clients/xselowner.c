/* xselowner.c -- test client for selections' owners answered at the app side (PROTOCOL.md
 * 3.2, SELECTION facts). Prints each GetSelectionOwner answer as "owner=WHAT", WHAT being
 * none, self (a window of this client) or other, so that runs through tincan and directly
 * print the same. NAME is a selection's name (interned).
 *   xselowner ask NAME N        asks once; then, 0.5 s later, N times more
 *   xselowner own NAME          makes a window the owner, prints "owned", stays (until killed)
 *   xselowner take NAME         makes a window the owner and asks at once (it must be its own)
 *   xselowner wait NAME         asks every 10 ms until another client owns NAME: "asks=N",
 *                               or exits 1 after 5 s */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xcb/xcb.h>

static xcb_connection_t *c;
static xcb_screen_t *screen;

static xcb_atom_t intern(const char *name)
{
    xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, (uint16_t)strlen(name), name), NULL);
    if (!r)
        exit(1);
    xcb_atom_t a = r->atom;
    free(r);
    return a;
}

static const char *ask(xcb_atom_t sel)
{
    xcb_get_selection_owner_reply_t *r = xcb_get_selection_owner_reply(c, xcb_get_selection_owner(c, sel), NULL);
    if (!r)
        exit(1);
    const xcb_setup_t *s = xcb_get_setup(c);
    const char *what = r->owner == XCB_NONE ? "none"
                       : (r->owner & ~s->resource_id_mask) == s->resource_id_base ? "self" : "other";
    free(r);
    return what;
}

static void own(xcb_atom_t sel)
{
    xcb_window_t w = xcb_generate_id(c);
    xcb_create_window(c, XCB_COPY_FROM_PARENT, w, screen->root, 0, 0, 10, 10, 0, XCB_WINDOW_CLASS_INPUT_ONLY,
                      screen->root_visual, 0, NULL);
    xcb_set_selection_owner(c, w, sel, XCB_CURRENT_TIME);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xselowner: cannot open display\n");
        return 1;
    }
    screen = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    const char *mode = argv[1];
    xcb_atom_t sel = intern(argv[2]);
    if (!strcmp(mode, "ask") && argc > 3) {
        printf("owner=%s\n", ask(sel));
        nanosleep(&(struct timespec){ 0, 500000000 }, NULL);
        for (int i = atoi(argv[3]); i > 0; i--)
            printf("owner=%s\n", ask(sel));
    } else if (!strcmp(mode, "own")) {
        own(sel);
        printf("owned %s\n", ask(sel));
        fflush(stdout);
        pause();
    } else if (!strcmp(mode, "take")) {
        printf("owner=%s\n", ask(sel));
        own(sel);
        printf("owner=%s\n", ask(sel));
    } else if (!strcmp(mode, "wait")) {
        for (int n = 1; n <= 500; n++) {
            if (!strcmp(ask(sel), "other")) {
                printf("asks=%d\n", n);
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
