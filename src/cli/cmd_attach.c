/* cmd_attach.c -- `tincan attach ID`: joins its stdin and stdout to the link socket of a
 * detached app side (named by its session, in the user's runtime directory), so that
 * `tincan ssh` brings a session back over a new ssh connection. A relay, no more: it
 * ends when either side closes. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/net.h"
#include "proxy/control.h"

static const char attach_usage[] =
    "usage: tincan attach ID\n"
    "\n"
    "Joins stdin and stdout to the app side of session ID on this machine, whose link was\n"
    "lost (what `tincan ssh` runs on HOST over a new ssh connection to bring a session back).\n"
    "Exit status: 0 when the link ends; 1 if no such session waits here.\n";

/* Copies what fd `from` has to fd `to`; false at its end or on an error. */
static bool pass(int from, int to)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0)
        return false;
    for (ssize_t at = 0; at < n;) {
        ssize_t w = write(to, buf + at, (size_t)(n - at));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        at += w;
    }
    return true;
}

int cmd_attach(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
        fputs(attach_usage, stdout);
        return 0;
    }
    if (argc != 1 || strlen(argv[0]) != 16 || strspn(argv[0], "0123456789abcdef") != 16) {
        fputs(attach_usage, stderr);
        return 2;
    }
    char dir[256], path[320];
    if (control_dir(dir, sizeof dir, false) < 0) {
        fprintf(stderr, "tincan attach: no runtime directory of this user: no session waits here\n");
        return 1;
    }
    snprintf(path, sizeof path, "%s/link-%s.sock", dir, argv[0]);
    int fd = net_unix_connect(path, 0);
    if (fd < 0) {
        fprintf(stderr, "tincan attach: no session %s waits here (%s)\n", argv[0], strerror(-fd));
        return 1;
    }
    struct pollfd p[2] = { { 0, POLLIN, 0 }, { fd, POLLIN, 0 } };
    while (poll(p, 2, -1) >= 0 || errno == EINTR) {
        if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !pass(0, fd))
            break;
        if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) && !pass(fd, 1))
            break;
    }
    close(fd);
    return 0;
}
