/* xflood.c -- a test fixture: floods its display with PutImage requests of WIDTHxHEIGHT
 * pixels (depth 24, 4 bytes a pixel; over 256 KiB they need BIG-REQUESTS), each with new
 * pixels, never waiting for a reply. Prints "sent N" after each request, so a test sees
 * whether it is alive and how fast it goes; runs until killed or the display goes away.
 * usage: xflood [WIDTH HEIGHT] (default 256 256) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <xcb/xcb.h>

int main(int argc, char **argv)
{
    int w = argc > 2 ? atoi(argv[1]) : 256, h = argc > 2 ? atoi(argv[2]) : 256;
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c) || w <= 0 || h <= 0) {
        fprintf(stderr, "xflood: cannot open the display\n");
        return 1;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    xcb_pixmap_t pm = xcb_generate_id(c);
    xcb_create_pixmap(c, scr->root_depth, pm, scr->root, (uint16_t)w, (uint16_t)h);
    xcb_gcontext_t gc = xcb_generate_id(c);
    xcb_create_gc(c, gc, pm, 0, NULL);
    size_t n = (size_t)w * (size_t)h * 4;
    if ((uint64_t)xcb_get_maximum_request_length(c) * 4 < n + 64) {
        fprintf(stderr, "xflood: the display takes requests of at most %u bytes\n",
                xcb_get_maximum_request_length(c) * 4);
        return 1;
    }
    uint32_t *px = malloc(n), x = 2463534242u;
    for (unsigned long sent = 1; px; sent++) {
        for (size_t i = 0; i < n / 4; i += 64) { /* new pixels in every request, some repeats */
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            for (size_t j = i; j < i + 64 && j < n / 4; j++)
                px[j] = x + (uint32_t)(j & 7);
        }
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, pm, gc, (uint16_t)w, (uint16_t)h, 0, 0, 0, scr->root_depth,
                      (uint32_t)n, (const uint8_t *)px);
        if (xcb_flush(c) <= 0)
            break;
        printf("sent %lu\n", sent);
        fflush(stdout);
    }
    xcb_disconnect(c);
    return 0;
}
