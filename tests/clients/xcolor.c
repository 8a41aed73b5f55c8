/* xcolor.c -- test client: LookupColor (or with -a AllocNamedColor) of each name on the
 * default colormap, one request and its answer at a time, printing
 * "NAME=exact r,g,b visual r,g,b [pixel P]" or "NAME=error E". Names from the arguments,
 * or with -f FILE one a line. usage: xcolor [-a] (-f FILE | NAME...) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xcb/xcb.h>

static void one(xcb_connection_t *c, xcb_colormap_t cmap, int alloc, const char *name)
{
    xcb_generic_error_t *e = NULL;
    uint16_t len = (uint16_t)strlen(name);
    if (alloc) {
        xcb_alloc_named_color_reply_t *r = xcb_alloc_named_color_reply(c, xcb_alloc_named_color(c, cmap, len, name), &e);
        if (r)
            printf("%s=exact %u,%u,%u visual %u,%u,%u pixel %u\n", name, r->exact_red, r->exact_green, r->exact_blue,
                   r->visual_red, r->visual_green, r->visual_blue, r->pixel);
        free(r);
    } else {
        xcb_lookup_color_reply_t *r = xcb_lookup_color_reply(c, xcb_lookup_color(c, cmap, len, name), &e);
        if (r)
            printf("%s=exact %u,%u,%u visual %u,%u,%u\n", name, r->exact_red, r->exact_green, r->exact_blue,
                   r->visual_red, r->visual_green, r->visual_blue);
        free(r);
    }
    if (e)
        printf("%s=error %u\n", name, e->error_code);
    free(e);
}

int main(int argc, char **argv)
{
    int alloc = argc > 1 && !strcmp(argv[1], "-a");
    argv += alloc;
    argc -= alloc;
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xcolor: cannot open display\n");
        return 1;
    }
    xcb_colormap_t cmap = xcb_setup_roots_iterator(xcb_get_setup(c)).data->default_colormap;
    if (argc > 2 && !strcmp(argv[1], "-f")) {
        FILE *f = fopen(argv[2], "r");
        char line[512];
        if (!f) {
            perror(argv[2]);
            return 1;
        }
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (*line)
                one(c, cmap, alloc, line);
        }
        fclose(f);
    } else {
        for (int i = 1; i < argc; i++)
            one(c, cmap, alloc, argv[i]);
    }
    fflush(stdout);
    xcb_disconnect(c);
    return 0;
}
