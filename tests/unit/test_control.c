/* test_control.c -- the control socket (control.c): where it lives and when that place is
 * refused, its mode, and one request and answer through the loop, with no session yet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proxy/control.h"
#include "test.h"

/* Asks path with req and turns the loop until the answer is whole (the peer closes). */
static int ask(struct loop *l, const char *path, const char *req, char *out, size_t cap)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        return -errno;
    if (send(fd, req, strlen(req), 0) != (ssize_t)strlen(req))
        return -EIO;
    size_t len = 0;
    for (int turn = 0; turn < 50; turn++) {
        loop_run_once(l, 10);
        ssize_t n = recv(fd, out + len, cap - 1 - len, 0);
        if (n == 0)
            break;
        if (n > 0)
            len += (size_t)n;
    }
    out[len] = 0;
    close(fd);
    return (int)len;
}

int main(void)
{
    char tmp[] = "/tmp/tincan-test-control.XXXXXX", dir[108], want[64];
    if (!mkdtemp(tmp))
        return 1;
    setenv("XDG_RUNTIME_DIR", tmp, 1);
    snprintf(want, sizeof want, "%s/tincan", tmp);
    struct stat st;

    TEST("That the directory is $XDG_RUNTIME_DIR/tincan, made 0700 when asked") {
        CHECK_EQ(control_dir(dir, sizeof dir, false), -ENOENT);
        CHECK_EQ(control_dir(dir, sizeof dir, true), 0);
        CHECK(!strcmp(dir, want));
        CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    }
    TEST("That a directory others may enter, or a symbolic link, is refused") {
        chmod(want, 0711);
        CHECK_EQ(control_dir(dir, sizeof dir, true), -EPERM);
        chmod(want, 0700);
        char moved[160];
        snprintf(moved, sizeof moved, "%s/real", tmp);
        rename(want, moved);
        CHECK(symlink(moved, want) == 0);
        CHECK_EQ(control_dir(dir, sizeof dir, true), -EPERM);
        unlink(want);
        rename(moved, want);
        CHECK_EQ(control_dir(dir, sizeof dir, false), 0);
    }
    TEST("That without $XDG_RUNTIME_DIR (or a relative one) it is /tmp/tincan-UID") {
        char expect[64];
        snprintf(expect, sizeof expect, "/tmp/tincan-%u", (unsigned)geteuid());
        setenv("XDG_RUNTIME_DIR", "relative", 1);
        control_dir(dir, sizeof dir, false);
        CHECK(!strcmp(dir, expect));
        unsetenv("XDG_RUNTIME_DIR");
        control_dir(dir, sizeof dir, false);
        CHECK(!strcmp(dir, expect));
        setenv("XDG_RUNTIME_DIR", tmp, 1);
    }
    TEST("That a path too long for a unix socket is refused") {
        char longer[300];
        memset(longer, 'x', sizeof longer - 1);
        longer[0] = '/';
        longer[sizeof longer - 1] = 0;
        setenv("XDG_RUNTIME_DIR", longer, 1);
        CHECK_EQ(control_dir(dir, sizeof dir, true), -ENAMETOOLONG);
        setenv("XDG_RUNTIME_DIR", tmp, 1);
    }

    struct loop *l;
    struct session *none = NULL;
    struct control *c;
    char path[100], answer[4096];
    snprintf(path, sizeof path, "%s/display-%ld.sock", want, (long)getpid());
    TEST("That control_open listens on SIDE-PID.sock, mode 0600") {
        CHECK_EQ(loop_new(&l), 0);
        CHECK_EQ(control_open(&c, l, "display", &none), 0);
        CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600);
    }
    TEST("That with no session yet it answers that it waits, as text and as JSON") {
        CHECK(ask(l, path, "text\n", answer, sizeof answer) > 0);
        CHECK(strstr(answer, "tincan display side, pid ") && strstr(answer, "waiting for the other side"));
        CHECK(ask(l, path, "json\n", answer, sizeof answer) > 0);
        char expect[96];
        snprintf(expect, sizeof expect, "{\"pid\": %ld, \"side\": \"display\"", (long)getpid());
        CHECK(!strncmp(answer, expect, strlen(expect)) && strstr(answer, "\"state\": \"waiting\"}\n"));
    }
    TEST("That an unknown request, or one too long, is closed without an answer") {
        CHECK_EQ(ask(l, path, "help\n", answer, sizeof answer), 0);
        CHECK_EQ(ask(l, path, "jsonjsonjsonjsonjson", answer, sizeof answer), 0);
        CHECK(ask(l, path, "text\n", answer, sizeof answer) > 0); /* and it still serves */
    }
    TEST("That more askers than its slots at once displace the oldest, and it goes on") {
        int fds[CONTROL_MAX_PEERS + 2];
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
        for (int i = 0; i < CONTROL_MAX_PEERS + 2; i++) {
            fds[i] = socket(AF_UNIX, SOCK_STREAM, 0);
            CHECK(connect(fds[i], (struct sockaddr *)&a, sizeof a) == 0);
            loop_run_once(l, 10);
        }
        CHECK(ask(l, path, "text\n", answer, sizeof answer) > 0);
        for (int i = 0; i < CONTROL_MAX_PEERS + 2; i++)
            close(fds[i]);
    }
    TEST("That control_free removes the socket") {
        control_free(c);
        CHECK(stat(path, &st) < 0 && errno == ENOENT);
        control_free(NULL);
        loop_free(l);
    }
    rmdir(want);
    rmdir(tmp);
    return test_summary();
}
