/* session_rig.h -- both halves of a session in one process, joined by a socketpair or a
 * relay that can be cut, with X clients and a scripted X server on socketpairs: no ports,
 * no sleeps. Shared by test_session.c and test_session_outage.c; its definitions are static. */
#ifndef TINCAN_SESSION_RIG_H
#define TINCAN_SESSION_RIG_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "link/codec.h"
#include "link/frame.h"
#include "proxy/session.h"
#include "test.h"
#include "x11/xwire.h"

#define MAX_UPSTREAM 8

struct rig {
    struct loop *app_loop, *disp_loop;
    struct session *app, *disp;
    int link_app, link_disp;        /* the link's two ends, before the sessions take them */
    int upstream[MAX_UPSTREAM];     /* the scripted server's ends, one per connection */
    int n_upstream;
    uint8_t cookie[16];
};

static inline int fake_connect(void *ctx)
{
    struct rig *r = ctx;
    int sv[2];
    if (r->n_upstream == MAX_UPSTREAM || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
        return -ECONNREFUSED;
    r->upstream[r->n_upstream++] = sv[1];
    return sv[0];
}

/* A relay between the halves, as a router or ssh is: it holds bytes in flight, and when cut
 * (an outage) what it held and what the halves had written to it are lost. */
struct relay {
    int app, disp;                /* its ends of the halves' links; -1: cut */
    bool stalled;                 /* out of radio range: nothing moves, nothing closes */
};
static struct relay *rig_relay;   /* pump() moves its bytes when set */

static inline void relay_open(struct relay *y, int *app_end, int *disp_end)
{
    int a[2], d[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a);
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, d);
    y->app = a[1];
    y->disp = d[1];
    y->stalled = false;
    *app_end = a[0];
    *disp_end = d[0];
}

/* Moves at most a packet's worth each way: the rest stays in flight. A half that has
 * closed its end loses what comes (the tests compare what arrives). */
static inline void relay_move(struct relay *y)
{
    if (y->app < 0 || y->stalled)
        return;
    uint8_t tmp[1500];
    ssize_t n, w;
    if ((n = read(y->app, tmp, sizeof tmp)) > 0)
        w = write(y->disp, tmp, (size_t)n);
    if ((n = read(y->disp, tmp, sizeof tmp)) > 0)
        w = write(y->app, tmp, (size_t)n);
    (void)w;
}

static inline void relay_cut(struct relay *y)
{
    close(y->app);
    close(y->disp);
    y->app = y->disp = -1;
}

static int rig_compress; /* zstd level both sides offer: every test runs with and without */
static int rig_speed;    /* enum codec_speed of both sides */
static uint64_t rig_max_memory;
static uint64_t fake_now = 1000000000; /* the sessions' clock (the flush policy's deadlines) */
static uint64_t fake_clock(void) { return fake_now; }
static uint32_t rig_grace_s; /* the sessions' grace period: 0, a lost link ends them */
static int rig_link_sndbuf;  /* when set: the link's socket buffers, small to make writes partial */

static inline void rig_start(struct rig *r, const uint8_t *app_secret, const uint8_t *disp_secret)
{
    memset(r, 0, sizeof *r);
    memset(r->cookie, 0x5a, sizeof r->cookie);
    int sv[2];
    if (rig_relay)
        relay_open(rig_relay, &sv[0], &sv[1]);
    else
        socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    for (int i = 0; i < 2 && rig_link_sndbuf; i++)
        setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &rig_link_sndbuf, sizeof rig_link_sndbuf);
    loop_new(&r->app_loop);
    loop_new(&r->disp_loop);
    struct session_config ac = { .role = ROLE_APP, .secret = app_secret, .secret_len = app_secret ? 20 : 0,
                                 .compress_level = rig_compress, .link_speed = rig_speed,
                                 .max_memory = rig_max_memory, .clock = fake_clock, .grace_s = rig_grace_s };
    memcpy(ac.cookie, r->cookie, 16);
    struct session_config dc = { .role = ROLE_DISPLAY, .secret = disp_secret, .secret_len = disp_secret ? 20 : 0,
                                 .connect_upstream = fake_connect, .connect_ctx = r, .compress_level = rig_compress,
                                 .link_speed = rig_speed, .max_memory = rig_max_memory, .clock = fake_clock,
                                 .grace_s = rig_grace_s };
    session_new(&r->app, r->app_loop, &ac, sv[0], sv[0]);
    session_new(&r->disp, r->disp_loop, &dc, sv[1], sv[1]);
}

static inline void pump(struct rig *r, int turns)
{
    for (int i = 0; i < turns; i++) {
        loop_run_once(r->app_loop, 0);
        if (rig_relay)
            relay_move(rig_relay);
        loop_run_once(r->disp_loop, 0);
        if (rig_relay)
            relay_move(rig_relay);
        session_tick(r->app);
        session_tick(r->disp);
    }
}

static inline void rig_stop(struct rig *r)
{
    session_free(r->app);
    session_free(r->disp);
    loop_free(r->app_loop);
    loop_free(r->disp_loop);
    for (int i = 0; i < r->n_upstream; i++)
        close(r->upstream[i]);
}

/* A new X client of the app side: returns the client's end. */
static inline int client_connect(struct rig *r)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
    session_add_client(r->app, sv[0]);
    return sv[1];
}

static inline void client_setup(int fd, const uint8_t *cookie)
{
    struct buf b = { 0 };
    xw_build_setup_request(&b, false, 11, 0, "MIT-MAGIC-COOKIE-1", 18, cookie, 16);
    CHECK_EQ(write(fd, buf_head(&b), b.len), (ssize_t)b.len);
    buf_free(&b);
}

/* Reads what is there (after pumping) into out; returns the byte count. */
static inline size_t drain(struct rig *r, int fd, struct buf *out)
{
    size_t total = 0;
    for (int i = 0; i < 50; i++) {
        pump(r, 2);
        uint8_t tmp[65536];
        ssize_t n;
        while ((n = read(fd, tmp, sizeof tmp)) > 0) {
            CHECK_EQ(buf_append(out, tmp, (size_t)n), 0);
            total += (size_t)n;
        }
    }
    return total;
}

/* The scripted server accepts: reads the setup request and sends a minimal Success. */
static inline void server_accept(struct rig *r, int idx)
{
    struct buf in = { 0 };
    drain(r, r->upstream[idx], &in);
    struct xw_setup_request rq;
    CHECK(xw_parse_setup_request(buf_head(&in), in.len, &rq) > 0);
    uint8_t ok[8] = { 1, 0, 11, 0, 0, 0, 0, 0 };
    CHECK_EQ(write(r->upstream[idx], ok, 8), 8);
    buf_free(&in);
}

/* A client past its connection setup: the scripted server (upstream[idx]) has accepted it. */
static inline int client_ready(struct rig *r, int idx)
{
    struct buf got = { 0 };
    int c = client_connect(r);
    client_setup(c, r->cookie);
    pump(r, 10);
    server_accept(r, idx);
    drain(r, c, &got);
    buf_free(&got);
    return c;
}

/* A round trip through the scripted server (upstream[idx]) for client c: sends req, has
 * the server answer with reply, and returns what the client received. */
static inline void ask_server(struct rig *r, int c, int idx, const uint8_t *req, size_t req_len, const uint8_t reply[32],
                       struct buf *got)
{
    struct buf seen = { 0 };
    write(c, req, req_len);
    drain(r, r->upstream[idx], &seen);
    write(r->upstream[idx], reply, 32);
    buf_free(&seen);
    buf_clear(got);
    drain(r, c, got);
}

static inline bool closed(int fd)
{
    uint8_t c;
    ssize_t n = read(fd, &c, 1);
    return n == 0 || (n < 0 && errno != EAGAIN);
}

/* The link bytes s has written that its peer has not acknowledged (its pacer's, as
 * `tincan info` shows them), or -1 if the answer cannot be read. */
static inline long long rig_in_flight(struct session *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    long long n = -1;
    if (f && session_write_info(s, f, true) == 0 && fflush(f) == 0) {
        const char *at = strstr(text, "\"in_flight_bytes\": ");
        if (at)
            n = strtoll(at + strlen("\"in_flight_bytes\": "), NULL, 10);
    }
    if (f)
        fclose(f);
    free(text);
    return n;
}

/* Moves the sessions' clock on by ms, a millisecond a turn (ACK timers run on it). */
static inline void rig_wait_ms(struct rig *r, int ms)
{
    for (int i = 0; i < ms; i++) {
        fake_now += 1000000;
        pump(r, 1);
    }
}

/* Each test runs twice: on a plain link and on a zstd link. */
#define STEST(sentence) TEST(rig_compress ? sentence " (zstd link)" : sentence)

#endif
