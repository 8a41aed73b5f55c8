/* xatom.c -- test client: InternAtom of each name, printing "NAME=ATOM" (0: None), one
 * request and its reply at a time. usage: xatom [-c] NAME...; -c makes the atoms
 * (only-if-exists false), otherwise only-if-exists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xcb/xcb.h>

int main(int argc, char **argv)
{
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
        free(r);
    }
    xcb_disconnect(c);
    return 0;
}
