/* xbench.c -- a libxcb client that sends a known X workload and times it (CLOCK_MONOTONIC),
 * for bench/core/overhead.sh: the same binary runs against Xvfb directly and through tincan.
 * Prints one line of key=value pairs per test; every test ends with a GetInputFocus round trip
 * so that all data has been processed by the server before the clock stops. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/xcb.h>
#include <xcb/xproto.h>

static const char usage[] =
    "usage: xbench TEST [options]   (DISPLAY and XAUTHORITY as for any X client)\n"
    "  put  -s SIDE -n REPS   PutImage of SIDExSIDE ZPixmap images into a pixmap; MB/s of request bytes\n"
    "  get  -s SIDE -n REPS   GetImage of SIDExSIDE, -d DEPTH requests in flight; MB/s of reply bytes\n"
    "  rtt  -n COUNT          sequential GetInputFocus round trips; mean, p50, p99 in microseconds\n"
    "  -w REPS                untimed warm-up repetitions first (default: REPS/10, at least 1)\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "xbench: %s\n", what);
    exit(1);
}

/* One round trip: everything sent before it has been handled by the server. */
static void sync_server(xcb_connection_t *c)
{
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    if (xcb_connection_has_error(c))
        die("the X connection broke");
}

/* Any X error that arrived so far is fatal: the numbers would mean nothing. */
static void check_errors(xcb_connection_t *c)
{
    xcb_generic_event_t *ev;
    while ((ev = xcb_poll_for_event(c))) {
        if (ev->response_type == 0) {
            xcb_generic_error_t *e = (xcb_generic_error_t *)ev;
            fprintf(stderr, "xbench: X error %u (request %u.%u)\n", e->error_code, e->major_code, e->minor_code);
            exit(1);
        }
        free(ev);
    }
}

struct target {
    xcb_connection_t *c;
    xcb_screen_t *screen;
    xcb_pixmap_t pixmap;
    xcb_gcontext_t gc;
    uint16_t side;
};

static void target_open(struct target *t, uint16_t side)
{
    int scr;
    t->c = xcb_connect(NULL, &scr);
    if (xcb_connection_has_error(t->c))
        die("cannot connect to $DISPLAY");
    xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(t->c));
    for (; scr > 0 && it.rem; scr--)
        xcb_screen_next(&it);
    t->screen = it.data;
    t->side = side;
    t->pixmap = xcb_generate_id(t->c);
    xcb_create_pixmap(t->c, t->screen->root_depth, t->pixmap, t->screen->root, side, side);
    t->gc = xcb_generate_id(t->c);
    xcb_create_gc(t->c, t->gc, t->pixmap, 0, NULL);
    sync_server(t->c);
    check_errors(t->c);
}

static void put_images(struct target *t, const uint8_t *img, uint32_t len, unsigned reps)
{
    for (unsigned i = 0; i < reps; i++)
        xcb_put_image(t->c, XCB_IMAGE_FORMAT_Z_PIXMAP, t->pixmap, t->gc, t->side, t->side, 0, 0, 0,
                      t->screen->root_depth, len, img);
    sync_server(t->c);
}

static int test_put(uint16_t side, unsigned reps, unsigned warm)
{
    struct target t;
    target_open(&t, side);
    /* Bytes per pixel of the ZPixmap format at the root depth (32 for depth 24 on Xvfb). */
    const xcb_setup_t *setup = xcb_get_setup(t.c);
    unsigned bpp = 0;
    for (xcb_format_iterator_t f = xcb_setup_pixmap_formats_iterator(setup); f.rem; xcb_format_next(&f))
        if (f.data->depth == t.screen->root_depth)
            bpp = f.data->bits_per_pixel;
    if (bpp % 8 || !bpp)
        die("unsupported pixmap format");
    uint32_t len = (uint32_t)side * side * (bpp / 8);
    uint64_t req_bytes = 24 + (uint64_t)len + 4; /* + 4: the BIG-REQUESTS length word */
    if (xcb_get_maximum_request_length(t.c) * 4ull < req_bytes)
        die("image larger than the server's maximum request length");
    if (req_bytes - 4 <= 0xffffu * 4)
        req_bytes -= 4;
    uint8_t *img = malloc(len);
    if (!img)
        die("out of memory");
    for (uint32_t i = 0; i < len; i++) /* not constant: a later compressing tincan must not look better here */
        img[i] = (uint8_t)(i * 2654435761u >> 13);
    put_images(&t, img, len, warm);
    double t0 = now_s();
    put_images(&t, img, len, reps);
    double dt = now_s() - t0;
    check_errors(t.c);
    double bytes = (double)req_bytes * reps;
    printf("test=put side=%u reps=%u bytes=%.0f secs=%.6f MBps=%.2f\n", side, reps, bytes, dt, bytes / dt / 1e6);
    free(img);
    xcb_disconnect(t.c);
    return 0;
}

/* GetImage, pipelined: `depth` requests in flight, so the link's bandwidth, not its latency, counts. */
static double get_images(struct target *t, unsigned reps, unsigned depth)
{
    xcb_get_image_cookie_t ring[64];
    double bytes = 0;
    unsigned sent = 0, done = 0;
    while (done < reps) {
        while (sent < reps && sent - done < depth)
            ring[sent++ % 64] = xcb_get_image(t->c, XCB_IMAGE_FORMAT_Z_PIXMAP, t->pixmap, 0, 0, t->side, t->side, ~0u);
        xcb_get_image_reply_t *r = xcb_get_image_reply(t->c, ring[done++ % 64], NULL);
        if (!r)
            die("GetImage failed");
        bytes += 32 + 4.0 * r->length;
        free(r);
    }
    sync_server(t->c);
    return bytes;
}

static int test_get(uint16_t side, unsigned reps, unsigned warm, unsigned depth)
{
    struct target t;
    target_open(&t, side);
    get_images(&t, warm, depth);
    double t0 = now_s();
    double bytes = get_images(&t, reps, depth);
    double dt = now_s() - t0;
    check_errors(t.c);
    printf("test=get side=%u reps=%u depth=%u bytes=%.0f secs=%.6f MBps=%.2f\n", side, reps, depth, bytes, dt,
           bytes / dt / 1e6);
    xcb_disconnect(t.c);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int test_rtt(unsigned count, unsigned warm)
{
    struct target t;
    target_open(&t, 1);
    for (unsigned i = 0; i < warm; i++)
        sync_server(t.c);
    double *us = malloc(count * sizeof *us), sum = 0;
    if (!us)
        die("out of memory");
    for (unsigned i = 0; i < count; i++) {
        double t0 = now_s();
        sync_server(t.c);
        us[i] = (now_s() - t0) * 1e6;
        sum += us[i];
    }
    check_errors(t.c);
    qsort(us, count, sizeof *us, cmp_double);
    printf("test=rtt count=%u mean_us=%.2f p50_us=%.2f p99_us=%.2f min_us=%.2f max_us=%.2f\n", count, sum / count,
           us[count / 2], us[(size_t)(count * 0.99)], us[0], us[count - 1]);
    free(us);
    xcb_disconnect(t.c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *test = argv[1];
    unsigned side = 512, reps = 100, depth = 8;
    long warm = -1;
    for (int i = 2; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (v < 0)
            die("negative option value");
        if (!strcmp(argv[i], "-s"))
            side = (unsigned)v;
        else if (!strcmp(argv[i], "-n"))
            reps = (unsigned)v;
        else if (!strcmp(argv[i], "-d"))
            depth = (unsigned)v;
        else if (!strcmp(argv[i], "-w"))
            warm = v;
        else
            die("unknown option (see xbench --help)");
    }
    if (side < 1 || side > 4096 || reps < 1 || depth < 1 || depth > 64)
        die("option out of range (side 1..4096, reps >= 1, depth 1..64)");
    unsigned w = warm >= 0 ? (unsigned)warm : (reps / 10 ? reps / 10 : 1);
    if (!strcmp(test, "put"))
        return test_put((uint16_t)side, reps, w);
    if (!strcmp(test, "get"))
        return test_get((uint16_t)side, reps, w, depth);
    if (!strcmp(test, "rtt"))
        return test_rtt(reps, w);
    fputs(usage, stderr);
    return 2;
}
