/* xgrab.c -- a test fixture that grabs the server.
 *   xgrab hold [MS]   GrabServer, a round trip, prints "grabbed"; then waits MS ms (default:
 *                     until killed), UngrabServer, a round trip, prints "ungrabbed", and waits
 *                     until killed (SIGUSR1 ends the wait early).
 *   xgrab loop N      N times: GrabServer, a GetInputFocus round trip, UngrabServer (flushed,
 *                     then 2 ms); then a round trip and prints "done N".
 *   -w MS first     waits MS ms after connecting, before the first grab (so that tincan's
 *                   spare connection, taken by this client, is set up again before it).
 * Lines are flushed as printed. Exits 1 if the display cannot be opened or a reply fails. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xcb/xcb.h>

static volatile sig_atomic_t released;
static void on_usr1(int sig) { (void)sig; released = 1; }

static int round_trip(xcb_connection_t *c)
{
    xcb_get_input_focus_reply_t *r = xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL);
    if (!r)
        return -1;
    free(r);
    return 0;
}

static void wait_ms(long ms) /* ms < 0: until SIGUSR1 or killed */
{
    struct timespec step = { 0, 10 * 1000000L };
    for (long t = 0; !released && (ms < 0 || t < ms); t += 10)
        nanosleep(&step, NULL);
}

int main(int argc, char **argv)
{
    long wait_first_ms = 0;
    if (argc > 2 && !strcmp(argv[1], "-w")) {
        wait_first_ms = atol(argv[2]);
        argc -= 2;
        argv += 2;
    }
    if (argc < 2 || (strcmp(argv[1], "hold") && strcmp(argv[1], "loop"))) {
        fprintf(stderr, "usage: xgrab [-w MS] hold [MS] | xgrab [-w MS] loop N\n");
        return 2;
    }
    signal(SIGUSR1, on_usr1);
    setvbuf(stdout, NULL, _IOLBF, 0);
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xgrab: cannot open the display\n");
        return 1;
    }
    if (round_trip(c) < 0)
        return 1;
    wait_ms(wait_first_ms);
    if (!strcmp(argv[1], "loop")) {
        int n = argc > 2 ? atoi(argv[2]) : 100;
        for (int i = 0; i < n; i++) {
            xcb_grab_server(c);
            if (round_trip(c) < 0)
                return 1;
            xcb_ungrab_server(c);
            /* Sent alone, and 2 ms before the next grab: else the server takes UngrabServer
             * and the next GrabServer from one read and serves no other client between
             * them, and 100 grabs hold it for 100 round trips on end (directly 3 ms; through
             * a pair under a sanitizer and a busy machine, over 1 s), whatever a proxy does. */
            xcb_flush(c);
            nanosleep(&(struct timespec){ 0, 2 * 1000000L }, NULL);
        }
        if (round_trip(c) < 0)
            return 1;
        printf("done %d\n", n);
        return 0;
    }
    xcb_grab_server(c);
    if (round_trip(c) < 0)
        return 1;
    printf("grabbed\n");
    wait_ms(argc > 2 ? atol(argv[2]) : -1);
    xcb_ungrab_server(c);
    if (round_trip(c) < 0)
        return 1;
    printf("ungrabbed\n");
    released = 0;
    wait_ms(-1);
    xcb_disconnect(c);
    return 0;
}
