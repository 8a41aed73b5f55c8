/* upload.c -- the load of the latency benchmarks: PutImage of incompressible pixels.
 * Benchmark helper only (bench/latency); runs through the path under test.
 *
 * usage: upload total BYTES [SIDE]     PutImage SIDExSIDE images (default 128) until at
 *                                      least BYTES of pixels are sent, then a round trip
 *        upload flood SECONDS [SIDE]   PutImage without end (until killed or SECONDS)
 *        upload fill                   (on the real display) a 1024x512 pixmap of such pixels;
 *                                      prints "pixmap 0xID" and keeps it until stdin closes
 *        upload get BYTES SIDE 0xID    GetImage SIDExSIDE tiles of that pixmap (each tile once,
 *                                      four requests in flight) until BYTES of pixels came back
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

static void fill_pixels(uint64_t *px, size_t len, uint64_t *s)
{
    for (size_t i = 0; i < len / 8; i++) {
        *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
        px[i] = *s;
    }
}

/* The download's source, on the real display: incompressible pixels no path has seen. */
static int fill(xcb_connection_t *c, xcb_screen_t *scr)
{
    xcb_pixmap_t pm = xcb_generate_id(c);
    xcb_create_pixmap(c, scr->root_depth, pm, scr->root, 1024, 512);
    xcb_gcontext_t gc = xcb_generate_id(c);
    xcb_create_gc(c, gc, pm, 0, NULL);
    size_t len = 1024 * 16 * 4;
    uint64_t *px = malloc(len), s = 0x2545f4914f6cdd1dull;
    for (int y = 0; y < 512; y += 16) {
        fill_pixels(px, len, &s);
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, pm, gc, 1024, 16, 0, (int16_t)y, 0, scr->root_depth,
                      (uint32_t)len, (const uint8_t *)px);
    }
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    printf("pixmap 0x%x\n", pm);
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin))
        ;
    return 0;
}

/* The download: GetImage of the tiles of pixmap pm, each once, four in flight. */
static int get(xcb_connection_t *c, double limit, uint16_t side, xcb_drawable_t pm)
{
    printf("start\n");
    fflush(stdout);
    unsigned tiles = (1024 / side) * (512 / side), sent = 0, got = 0;
    unsigned long long bytes = 0;
    xcb_get_image_cookie_t ck[4];
    double t0 = now_s();
    while (got < tiles && (double)bytes < limit) {
        while (sent < tiles && sent - got < 4) {
            int16_t x = (int16_t)(sent % (1024 / side) * side), y = (int16_t)(sent / (1024 / side) * side);
            ck[sent++ % 4] = xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, pm, x, y, side, side, ~0u);
        }
        xcb_get_image_reply_t *r = xcb_get_image_reply(c, ck[got++ % 4], NULL);
        if (!r) {
            fprintf(stderr, "upload: GetImage failed after %u tiles\n", got - 1);
            return 1;
        }
        bytes += (unsigned long long)xcb_get_image_data_length(r);
        free(r);
        printf("put %u %llu %.3f\n", got, bytes, now_s() - t0);
        fflush(stdout);
    }
    while (got < sent)
        free(xcb_get_image_reply(c, ck[got++ % 4], NULL));
    printf("done images=%u bytes=%llu seconds=%.3f\n", got, bytes, now_s() - t0);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "total") && strcmp(argv[1], "flood") && strcmp(argv[1], "fill") &&
                     strcmp(argv[1], "get")) || (strcmp(argv[1], "fill") && argc < 3) ||
        (!strcmp(argv[1], "get") && argc < 5)) {
        fprintf(stderr, "usage: upload total BYTES [SIDE] | upload flood SECONDS [SIDE] | upload fill | "
                        "upload get BYTES SIDE 0xPIXMAP\n");
        return 2;
    }
    int flood = !strcmp(argv[1], "flood");
    double limit = argc > 2 ? atof(argv[2]) : 0;
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
    if (!strcmp(argv[1], "fill"))
        return fill(c, scr);
    if (!strcmp(argv[1], "get"))
        return get(c, limit, side, (xcb_drawable_t)strtoul(argv[4], NULL, 0));
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
        fill_pixels(px, len, &s);
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
