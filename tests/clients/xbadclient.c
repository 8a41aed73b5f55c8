/* xbadclient.c -- a misbehaving X client for the integration tests. Each mode does one
 * bad thing to $DISPLAY and reports what the server (here: tincan's app side) did.
 *
 *   garbage       connect and send bytes that are not an X connection setup
 *   bad-version   a well-formed setup request for protocol version 99
 *   truncated     connect properly, send half a request, then close
 *   hold-partial  connect properly, send half a request, print "ready" and wait (to be SIGKILLed)
 *   bigreq        connect properly, enable BIG-REQUESTS, announce a 1 GiB request
 *   unread        connect properly, ask for 100 replies, exit without reading them: the
 *                 kernel resets the connection (what a client killed while busy does)
 *
 * garbage, bad-version and bigreq exit 0 when the peer closed the connection within
 * 10 s (printing "closed after N bytes"), 1 if it did not. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <xcb/bigreq.h>
#include <xcb/xcb.h>

#define WAIT_MS 10000

static int connect_raw(void)
{
    const char *d = getenv("DISPLAY");
    const char *colon = d ? strrchr(d, ':') : NULL;
    if (!colon) {
        fprintf(stderr, "xbadclient: DISPLAY must be :N\n");
        exit(2);
    }
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof sa.sun_path, "/tmp/.X11-unix/X%d", atoi(colon + 1));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("xbadclient: connect");
        exit(2);
    }
    return fd;
}

static xcb_connection_t *connect_xcb(void)
{
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xbadclient: cannot open the display\n");
        exit(2);
    }
    return c;
}

static void write_all(int fd, const void *p, size_t n)
{
    if (write(fd, p, n) != (ssize_t)n) {
        perror("xbadclient: write");
        exit(2);
    }
}

/* Reads until the peer closes; 0 if it did within WAIT_MS. */
static int wait_closed(int fd)
{
    size_t total = 0;
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        int r = poll(&p, 1, WAIT_MS);
        if (r <= 0) {
            printf("still open after %d ms (%zu bytes received)\n", WAIT_MS, total);
            return 1;
        }
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) {
            printf("closed after %zu bytes%s\n", total, n < 0 ? " (reset)" : "");
            return 0;
        }
        total += (size_t)n;
    }
}

/* The first 12 bytes of a PolyFillRectangle claiming 100 words: a request cut short. */
static void send_half_request(int fd)
{
    uint8_t rq[12] = { 70 /* PolyFillRectangle */, 0 };
    uint16_t words = 100;
    memcpy(rq + 2, &words, 2); /* xcb speaks the host's byte order */
    write_all(fd, rq, sizeof rq);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "garbage")) {
        int fd = connect_raw();
        static const char junk[] = "GET / HTTP/1.0\r\nHost: tincan\r\n\r\n";
        write_all(fd, junk, sizeof junk - 1);
        return wait_closed(fd);
    }
    if (!strcmp(mode, "bad-version")) {
        int fd = connect_raw();
        uint8_t rq[12] = { 'l', 0, 99, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        write_all(fd, rq, sizeof rq);
        return wait_closed(fd);
    }
    if (!strcmp(mode, "truncated") || !strcmp(mode, "hold-partial")) {
        xcb_connection_t *c = connect_xcb();
        int fd = xcb_get_file_descriptor(c);
        send_half_request(fd);
        if (!strcmp(mode, "truncated"))
            return 0; /* exit closes the socket mid-request */
        printf("ready\n");
        for (;;)
            pause();
    }
    if (!strcmp(mode, "bigreq")) {
        xcb_connection_t *c = connect_xcb();
        uint32_t max = xcb_get_maximum_request_length(c); /* sends BigReqEnable */
        if (max <= 65535) {
            fprintf(stderr, "xbadclient: BIG-REQUESTS is not available (max %u words)\n", max);
            return 2;
        }
        int fd = xcb_get_file_descriptor(c);
        uint8_t rq[8 + 64] = { 70 /* PolyFillRectangle */, 0, 0, 0 };
        uint32_t words = 0x10000000; /* 1 GiB, far beyond any server's limit */
        memcpy(rq + 4, &words, 4);
        write_all(fd, rq, sizeof rq);
        return wait_closed(fd);
    }
    if (!strcmp(mode, "unread")) {
        xcb_connection_t *c = connect_xcb();
        for (int i = 0; i < 100; i++)
            xcb_get_input_focus(c);
        xcb_flush(c);
        struct pollfd p = { xcb_get_file_descriptor(c), POLLIN, 0 };
        if (poll(&p, 1, WAIT_MS) != 1)
            return 1;
        usleep(200 * 1000); /* let all 100 replies arrive */
        return 0;           /* exit with them unread */
    }
    fprintf(stderr, "usage: xbadclient garbage|bad-version|truncated|hold-partial|bigreq|unread\n");
    return 2;
}
