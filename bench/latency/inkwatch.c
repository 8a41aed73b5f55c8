/* inkwatch.c -- injects pointer motion with XTEST on the real X server and times how long
 * each event takes to come back as "ink" (a square drawn by ink.c) at that same server.
 * Benchmark helper only (bench/latency). It talks to the real display, never through a
 * proxy: injection and detection are both exact and cost the link nothing.
 *
 * usage: inkwatch [INTERVAL_MS [SIZE [DRAIN_MS [MAX_EVENTS]]]]   (defaults 20 320 5000 cells)
 *
 * 1. Selects SubstructureNotify on the root and prints "ready"; the first top-level window
 *    mapped afterwards is taken to be ink's (start ink after "ready", and nothing else).
 * 2. Creates a DAMAGE object at level RawRectangles on that window: the server sends a
 *    DamageNotify carrying the rectangle of every drawing request as it executes it, so the
 *    ink is seen the moment the server draws it, without polling. Prints "watching 0xWIN".
 * 3. On the stdin line "go" it starts injecting: event i is an absolute XTestFakeInput
 *    MotionNotify to the centre-ish pixel (4*col+1, 4*row+1) of cell i (col = i % (SIZE/4),
 *    row = i / (SIZE/4)), one every INTERVAL_MS on a fixed schedule (never in bursts). Its
 *    time is taken right after the request is written. A 4x4 DamageNotify at cell i's
 *    corner is event i's ink; its latency is the time it was read minus the injection time.
 * 4. On the stdin line "stop" (or EOF, or after MAX_EVENTS) it stops injecting, waits up to
 *    DRAIN_MS for outstanding ink, and prints one line per event:
 *      ev INDEX INJECT_NS LATENCY_NS        (LATENCY_NS -1: no ink seen)
 *    then "summary sent=N inked=M late_injections=K" and exits 0.
 * Cells are used once each, so MAX_EVENTS is at most (SIZE/4)^2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

static xcb_extension_t xtest_ext = { "XTEST", 0 };
static xcb_extension_t damage_ext = { "DAMAGE", 0 };

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *m)
{
    fprintf(stderr, "inkwatch: %s\n", m);
    exit(2);
}

/* XTestFakeInput (XTEST minor 2), 36 bytes: a MotionNotify to (x, y) on root. */
static void fake_motion(xcb_connection_t *c, xcb_window_t root, int16_t x, int16_t y)
{
    uint8_t b[36];
    memset(b, 0, sizeof b);
    b[4] = XCB_MOTION_NOTIFY;
    b[5] = 0; /* absolute */
    memcpy(b + 12, &root, 4);
    memcpy(b + 24, &x, 2);
    memcpy(b + 26, &y, 2);
    struct iovec v[3];
    v[2].iov_base = b;
    v[2].iov_len = sizeof b;
    xcb_protocol_request_t req = { .count = 1, .ext = &xtest_ext, .opcode = 2, .isvoid = 1 };
    xcb_send_request(c, 0, v + 2, &req);
}

static void damage_setup(xcb_connection_t *c, xcb_window_t win)
{
    /* DamageQueryVersion (minor 0) 1.1, which the server wants before Create. */
    uint8_t q[12];
    memset(q, 0, sizeof q);
    uint32_t maj = 1, min = 1;
    memcpy(q + 4, &maj, 4);
    memcpy(q + 8, &min, 4);
    struct iovec v[3];
    v[2].iov_base = q;
    v[2].iov_len = sizeof q;
    xcb_protocol_request_t qr = { .count = 1, .ext = &damage_ext, .opcode = 0, .isvoid = 0 };
    unsigned seq = xcb_send_request(c, XCB_REQUEST_CHECKED, v + 2, &qr);
    xcb_generic_error_t *err = NULL;
    void *rep = xcb_wait_for_reply(c, seq, &err);
    if (!rep)
        die("DamageQueryVersion failed");
    free(rep);
    /* DamageCreate (minor 1): damage, drawable, level RawRectangles (0). */
    uint8_t d[16];
    memset(d, 0, sizeof d);
    uint32_t id = xcb_generate_id(c);
    memcpy(d + 4, &id, 4);
    memcpy(d + 8, &win, 4);
    d[12] = 0;
    v[2].iov_base = d;
    v[2].iov_len = sizeof d;
    xcb_protocol_request_t cr = { .count = 1, .ext = &damage_ext, .opcode = 1, .isvoid = 1 };
    xcb_void_cookie_t ck = { xcb_send_request(c, XCB_REQUEST_CHECKED, v + 2, &cr) };
    if ((err = xcb_request_check(c, ck)))
        die("DamageCreate failed");
}

int main(int argc, char **argv)
{
    int interval_ms = argc > 1 ? atoi(argv[1]) : 20;
    int size = argc > 2 ? atoi(argv[2]) : 320;
    int drain_ms = argc > 3 ? atoi(argv[3]) : 5000;
    int cols = size / 4, cells = cols * cols;
    int max_events = argc > 4 ? atoi(argv[4]) : cells;
    if (interval_ms < 1 || cols < 1 || max_events < 1 || max_events > cells)
        die("bad arguments");

    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c))
        die("cannot open display");
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    const xcb_query_extension_reply_t *xt = xcb_get_extension_data(c, &xtest_ext);
    const xcb_query_extension_reply_t *dm = xcb_get_extension_data(c, &damage_ext);
    if (!xt || !xt->present)
        die("the X server has no XTEST");
    if (!dm || !dm->present)
        die("the X server has no DAMAGE");
    uint8_t damage_notify = dm->first_event;

    uint32_t mask = XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY;
    if (xcb_request_check(c, xcb_change_window_attributes_checked(c, scr->root, XCB_CW_EVENT_MASK, &mask)))
        die("cannot select on the root window");
    printf("ready\n");
    fflush(stdout);

    xcb_window_t win = 0;
    while (!win) {
        xcb_generic_event_t *ev = xcb_wait_for_event(c);
        if (!ev)
            die("connection lost");
        if ((ev->response_type & 0x7f) == XCB_MAP_NOTIFY)
            win = ((xcb_map_notify_event_t *)ev)->window;
        free(ev);
    }
    mask = 0;
    xcb_change_window_attributes(c, scr->root, XCB_CW_EVENT_MASK, &mask);
    damage_setup(c, win);
    printf("watching 0x%x\n", (unsigned)win);
    fflush(stdout);

    int64_t *t_inj = calloc((size_t)cells, sizeof *t_inj), *lat = calloc((size_t)cells, sizeof *lat);
    for (int i = 0; i < cells; i++)
        lat[i] = -1;
    int sent = 0, inked = 0, late = 0, injecting = 0, stopped = 0, stdin_open = 1;
    int64_t next = 0, drain_end = 0;
    char line[256];
    size_t llen = 0;
    struct pollfd p[2] = { { .fd = xcb_get_file_descriptor(c), .events = POLLIN },
                           { .fd = 0, .events = POLLIN } };
    for (;;) {
        xcb_generic_event_t *ev;
        while ((ev = xcb_poll_for_event(c))) {
            int64_t t = now_ns();
            if ((ev->response_type & 0x7f) == damage_notify) {
                const uint8_t *e = (const uint8_t *)ev;
                int16_t x, y;
                uint16_t w, h;
                memcpy(&x, e + 16, 2);
                memcpy(&y, e + 18, 2);
                memcpy(&w, e + 20, 2);
                memcpy(&h, e + 22, 2);
                if (w == 4 && h == 4 && x >= 0 && y >= 0 && x % 4 == 0 && y % 4 == 0) {
                    int i = (y / 4) * cols + x / 4;
                    if (i < sent && lat[i] < 0) {
                        lat[i] = t - t_inj[i];
                        inked++;
                    }
                }
            } else if (ev->response_type == 0) {
                fprintf(stderr, "inkwatch: X error %u\n", ((xcb_generic_error_t *)ev)->error_code);
            }
            free(ev);
        }
        if (xcb_connection_has_error(c))
            die("connection lost");
        int64_t t = now_ns();
        if (injecting && t >= next) {
            int col = sent % cols, row = sent / cols;
            fake_motion(c, scr->root, (int16_t)(col * 4 + 1), (int16_t)(row * 4 + 1));
            xcb_flush(c);
            t_inj[sent++] = now_ns();
            next += (int64_t)interval_ms * 1000000;
            if (t_inj[sent - 1] > next) { /* more than an interval late: keep the pace, no burst */
                late++;
                next = t_inj[sent - 1] + (int64_t)interval_ms * 1000000;
            }
            if (sent >= max_events)
                injecting = 0, stopped = 1, drain_end = now_ns() + (int64_t)drain_ms * 1000000;
            continue;
        }
        if (stopped && (inked == sent || t >= drain_end))
            break;
        int timeout = -1;
        if (injecting)
            timeout = (int)((next - t) / 1000000) + 1;
        else if (stopped)
            timeout = (int)((drain_end - t) / 1000000) + 1;
        p[1].fd = stdin_open ? 0 : -1;
        int n = poll(p, 2, timeout);
        if (n < 0 && errno != EINTR)
            die("poll failed");
        if (stdin_open && (p[1].revents & (POLLIN | POLLHUP))) {
            ssize_t r = read(0, line + llen, sizeof line - 1 - llen);
            if (r <= 0) {
                stdin_open = 0;
                if (!stopped)
                    injecting = 0, stopped = 1, drain_end = now_ns() + (int64_t)drain_ms * 1000000;
                continue;
            }
            llen += (size_t)r;
            line[llen] = 0;
            char *nl;
            while ((nl = strchr(line, '\n'))) {
                *nl = 0;
                if (!strcmp(line, "go") && !injecting && !stopped) {
                    injecting = 1;
                    next = now_ns();
                } else if (!strcmp(line, "stop") && !stopped) {
                    injecting = 0, stopped = 1;
                    drain_end = now_ns() + (int64_t)drain_ms * 1000000;
                }
                llen -= (size_t)(nl + 1 - line);
                memmove(line, nl + 1, llen + 1);
            }
            if (llen >= sizeof line - 1)
                llen = 0;
        }
    }
    for (int i = 0; i < sent; i++)
        printf("ev %d %lld %lld\n", i, (long long)t_inj[i], (long long)lat[i]);
    printf("summary sent=%d inked=%d late_injections=%d\n", sent, inked, late);
    fflush(stdout);
    return 0;
}
