/* cmd_info.c -- `tincan info`: asks the running sessions of this user, over their control
 * sockets (proxy/control.h), for their live state, and prints it as text or as one JSON
 * object. Reads only; removes the sockets of processes that are gone. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "proxy/control.h"

static const char info_usage[] =
    "usage: tincan info [--json] [--socket PATH] [PID]\n"
    "\n"
    "Asks each running tincan session of this user for its live state, over the control\n"
    "socket each half keeps in $XDG_RUNTIME_DIR/tincan (else /tmp/tincan-UID): the link's\n"
    "measured rate and round-trip time, its outages, compression, memory against the bound,\n"
    "each client (its program and pid, where known) with its bytes and round trips, and the\n"
    "bytes and messages per message class. Another user's sessions refuse to answer.\n"
    "A client's bytes are its DATA on the link (after the structured encoding, before zstd);\n"
    "its round trips are the answers it may have waited for, counted at the app side, which\n"
    "alone knows the clients' programs. JSON sizes are in bytes, times in ms (rtt_ms) or s.\n"
    "\n"
    "  --json          one JSON object, {\"sessions\": [...]}, for scripts\n"
    "  --socket PATH   ask the half whose control socket is PATH, and no other\n"
    "  PID             ask only the half that runs as process PID\n"
    "\n"
    "Exit status: 0 when a session answered; 1 when none did (none running, or refused).\n";

#define ASK_TIMEOUT_S 5  /* a session answers from its loop: at once, unless it is stuck */

/* Asks one control socket; the answer in *out (malloc'd). 0, -ECONNREFUSED (nobody
 * listens: a stale socket), -EACCES (not ours), -EPERM (refused by the session), -errno. */
static int ask(const char *path, bool json, char **out, size_t *len)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    *out = NULL;
    *len = 0;
    if (strlen(path) >= sizeof a.sun_path)
        return -ENAMETOOLONG;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct timeval tv = { .tv_sec = ASK_TIMEOUT_S };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const char *req = json ? "json\n" : "text\n";
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 || send(fd, req, 5, MSG_NOSIGNAL) != 5)
        rc = -errno;
    size_t cap = 0;
    while (!rc) {
        if (*len + 4096 > cap) {
            char *more = cap < CONTROL_MAX_ANSWER ? realloc(*out, cap = cap ? cap * 2 : 65536) : NULL;
            if (!more) {
                rc = -EFBIG;
                break;
            }
            *out = more;
        }
        ssize_t n = recv(fd, *out + *len, cap - *len - 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = -errno;
        if (n <= 0)
            break;
        *len += (size_t)n;
    }
    close(fd);
    if (!rc && *len == 0)
        rc = -EIO;
    if (!rc) {
        (*out)[*len] = 0;
        if (!strncmp(*out, "refused:", 8))
            rc = -EPERM;
    }
    if (rc && rc != -EPERM) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The control sockets in dir (of process pid only, when pid > 0), sorted; NULL-terminated. */
static char **list_sockets(const char *dir, long pid, size_t *n)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    *n = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".sock"))
            continue;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "-%ld.sock", pid);
        if (pid > 0 && (l < strlen(suffix) || strcmp(e->d_name + l - strlen(suffix), suffix)))
            continue;
        char **more = realloc(v, (*n + 2) * sizeof *v);
        if (!more)
            break;
        v = more;
        size_t need = strlen(dir) + l + 2;
        if (!(v[*n] = malloc(need)))
            break;
        snprintf(v[*n], need, "%s/%s", dir, e->d_name);
        v[++*n] = NULL;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof *v, by_name);
    return v;
}

int cmd_info(int argc, char **argv)
{
    bool json = false;
    const char *socket_path = NULL;
    long pid = 0;
    for (int i = 0; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(info_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
            socket_path = argv[++i];
        } else if (argv[i][0] != '-' && (pid = strtol(argv[i], &end, 10)) > 0 && !*end) {
            continue;
        } else {
            fprintf(stderr, "tincan info: unknown argument %s\n\n%s", argv[i], info_usage);
            return 2;
        }
    }
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char **paths = NULL;
    size_t n = 0;
    if (socket_path) {
        paths = calloc(2, sizeof *paths);
        if (!paths || !(paths[0] = strdup(socket_path)))
            return 1;
        n = 1;
    } else {
        int rc = control_dir(dir, sizeof dir, false);
        if (rc == -EPERM) {
            fprintf(stderr, "tincan info: %s is not private (it must be a directory of yours, mode 0700)\n", dir);
            return 1;
        }
        if (rc == 0)
            paths = list_sockets(dir, pid, &n);
    }
    int answered = 0;
    if (json)
        fputs("{\"sessions\": [\n", stdout);
    for (size_t i = 0; i < n; i++) {
        char *out;
        size_t len;
        int rc = ask(paths[i], json, &out, &len);
        if (rc == -ECONNREFUSED && !socket_path) {
            unlink(paths[i]); /* its process is gone (the directory is ours: checked above) */
        } else if (rc == -EPERM) {
            fprintf(stderr, "tincan info: %s: %s", paths[i], out); /* "refused: why\n" */
            free(out);
        } else if (rc == -EACCES) {
            fprintf(stderr, "tincan info: %s: refused: permission denied (another user's session)\n", paths[i]);
        } else if (rc < 0) {
            fprintf(stderr, "tincan info: %s: %s\n", paths[i], strerror(-rc));
        } else {
            if (json)
                fputs(answered ? ",\n" : "", stdout);
            else if (answered)
                fputc('\n', stdout);
            fwrite(out, 1, len, stdout);
            answered++;
            free(out);
        }
    }
    if (json)
        fputs("]}\n", stdout);
    if (!answered && !socket_path && n == 0) {
        if (pid > 0)
            fprintf(stderr, "tincan info: no tincan session runs as process %ld\n", pid);
        else
            fprintf(stderr, "tincan info: no tincan session is running (no control socket in %s)\n", dir);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return answered ? 0 : 1;
}
