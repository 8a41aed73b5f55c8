/* xatom.c -- test client: InternAtom of each name, printing "NAME=ATOM" (0: None), one
 * request and its reply at a time. usage: xatom [-s SECONDS] [-c] NAME...; -c makes the
 * atoms (only-if-exists false), otherwise only-if-exists; -s stays connected that long after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xcb/xcb.h>

int main(int argc, char **argv)
{
    unsigned stay = 0;
    if (argc > 2 && !strcmp(argv[1], "-s")) {
        stay = (unsigned)atoi(argv[2]);
        argv += 2;
        argc -= 2;
    }
    int make = argc > 1 && !strcmp(argv[1], "-c");
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xatom: cannot open display\n");
        return 1;
    }
    for (int i = 1 + make; i < argc; i++) {
        xcb_intern_atom_reply_t *r =
            xcb_intern_atom_reply(c, xcb_intern_atom(c, !make, (uint16_t)strlen(argv[i]), argv[i]), NULL);
        if (!r)
            return 1;
        printf("%s=%u\n", argv[i], r->atom);
        fflush(stdout);
        free(r);
    }
    sleep(stay);
    xcb_disconnect(c);
    return 0;
}
