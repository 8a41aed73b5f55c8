/* upload.c -- the load of the latency benchmarks: PutImage of incompressible pixels.
 * Benchmark helper only (bench/latency); runs through the path under test.
 *
 * usage: upload total BYTES [SIDE]     PutImage SIDExSIDE images (default 128) until at
 *                                      least BYTES of pixels are sent, then a round trip
 *        upload flood SECONDS [SIDE]   PutImage without end (until killed or SECONDS)
 * Maps a 256x256 override-redirect window at 400,0 and draws every image into it. Pixels
 * come from xorshift64, never repeated, so no compressor or cache can shrink them.
 * Prints "start" once the window exists (after a round trip), then after each PutImage
 * has been written to the socket "put N BYTES SECONDS" (N images, BYTES of request so far,
 * seconds since start), and at the end "done images=N bytes=B seconds=S" (total mode:
 * after a GetInputFocus round trip, so the server has drawn everything).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/xcb.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "total") && strcmp(argv[1], "flood"))) {
        fprintf(stderr, "usage: upload total BYTES [SIDE] | upload flood SECONDS [SIDE]\n");
        return 2;
    }
    int flood = !strcmp(argv[1], "flood");
    double limit = atof(argv[2]);
    uint16_t side = argc > 3 ? (uint16_t)atoi(argv[3]) : 128;
    if (side < 1 || side > 256)
        side = 128;
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "upload: cannot open display\n");
        return 1;
    }
    const xcb_setup_t *setup = xcb_get_setup(c);
    xcb_screen_t *scr = xcb_setup_roots_iterator(setup).data;
    int bpp = 0;
    for (xcb_format_iterator_t f = xcb_setup_pixmap_formats_iterator(setup); f.rem; xcb_format_next(&f))
        if (f.data->depth == scr->root_depth)
            bpp = f.data->bits_per_pixel;
    if (bpp != 32) {
        fprintf(stderr, "upload: needs a depth with 32 bits per pixel (root depth %u has %d)\n", scr->root_depth, bpp);
        return 1;
    }
    xcb_window_t win = xcb_generate_id(c);
    uint32_t wvals[] = { scr->black_pixel, 1 };
    xcb_create_window(c, XCB_COPY_FROM_PARENT, win, scr->root, 400, 0, 256, 256, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      scr->root_visual, XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT, wvals);
    xcb_gcontext_t gc = xcb_generate_id(c);
    xcb_create_gc(c, gc, win, 0, NULL);
    xcb_map_window(c, win);
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    printf("start\n");
    fflush(stdout);

    size_t len = (size_t)side * side * 4;
    uint64_t *px = malloc(len), s = 0x9e3779b97f4a7c15ull;
    double t0 = now_s();
    unsigned long n = 0;
    unsigned long long bytes = 0, pixels = 0;
    int per_row = 256 / side;
    for (;;) {
        if (flood ? now_s() - t0 >= limit : (double)pixels >= limit)
            break;
        for (size_t i = 0; i < len / 8; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            px[i] = s;
        }
        int16_t x = (int16_t)((n % (unsigned)(per_row * per_row)) % (unsigned)per_row * side);
        int16_t y = (int16_t)((n % (unsigned)(per_row * per_row)) / (unsigned)per_row * side);
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, win, gc, side, side, x, y, 0, scr->root_depth,
                      (uint32_t)len, (const uint8_t *)px);
        xcb_flush(c);
        if (xcb_connection_has_error(c)) {
            fprintf(stderr, "upload: connection lost after %lu images\n", n);
            return 1;
        }
        n++;
        pixels += len;
        bytes += len + 24;
        printf("put %lu %llu %.3f\n", n, bytes, now_s() - t0);
        fflush(stdout);
    }
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    printf("done images=%lu bytes=%llu seconds=%.3f\n", n, bytes, now_s() - t0);
    fflush(stdout);
    return 0;
}
