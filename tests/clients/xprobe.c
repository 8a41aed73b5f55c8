/* xprobe.c -- a test fixture: a direct client of the real X server that makes a
 * GetInputFocus round trip every INTERVAL ms (default 250) and prints, for each, a line
 * "START_MS END_MS" (CLOCK_REALTIME, ms), so a test can tell whether the server answered
 * within 1 s throughout; a round trip still unanswered after 1 s also prints "late START_MS".
 * Runs until killed or its server goes away. Usage: xprobe [INTERVAL_MS] */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h> /* xcb_poll_for_reply */

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
    int interval_ms = argc > 1 ? atoi(argv[1]) : 250;
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xprobe: cannot open the display\n");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    for (;;) {
        long long start = now_ms();
        xcb_get_input_focus_cookie_t ck = xcb_get_input_focus(c);
        xcb_flush(c);
        int late = 0;
        void *reply = NULL;
        xcb_generic_error_t *err = NULL;
        /* Wait for the reply without blocking inside xcb, so a late one is reported. */
        while (!xcb_poll_for_reply(c, ck.sequence, &reply, &err)) {
            if (xcb_connection_has_error(c))
                return 0;
            struct pollfd pfd = { .fd = xcb_get_file_descriptor(c), .events = POLLIN };
            poll(&pfd, 1, 100);
            if (!late && now_ms() - start > 1000) {
                printf("late %lld\n", start);
                late = 1;
            }
        }
        free(reply);
        free(err);
        printf("%lld %lld\n", start, now_ms());
        struct timespec nap = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
        nanosleep(&nap, NULL);
    }
}
