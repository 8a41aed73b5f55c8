/* common.c -- option handling, secrets, signals and process spawning shared by the
 * sub-commands. */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "link/dict.h"
#include "link/transport.h"

int link_opts_take(struct link_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char **slot = NULL;
    if (!strcmp(a, "--link-listen"))
        slot = &o->listen;
    else if (!strcmp(a, "--link-connect"))
        slot = &o->connect;
    else if (!strcmp(a, "--secret-file"))
        slot = &o->secret_file;
    else if (!strcmp(a, "--cache-dir"))
        slot = &o->cache_dir;
    else if (!strcmp(a, "--no-cache"))
        return o->no_cache = true, 1;
    else if (!strcmp(a, "--link-speed")) {
        if (*i + 1 >= argc || (o->link_speed = parse_link_speed(argv[*i + 1])) < 0)
            return -1;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--max-memory")) {
        if (*i + 1 >= argc || !(o->max_memory = parse_memory_size(argv[*i + 1])))
            return -1;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--grace")) {
        char *end = NULL;
        long v = *i + 1 < argc ? strtol(argv[*i + 1], &end, 10) : -1;
        if (!end || *end || v < 0 || v > 7 * 86400) {
            fprintf(stderr, "tincan: --grace takes a number of seconds, 0 to 604800\n");
            return -1;
        }
        o->grace_s = v;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--stdio"))
        return o->stdio = true, 1;
    else if (!strcmp(a, "--stats"))
        return o->stats = true, 1;
    else if (!strcmp(a, "--compress")) {
        if (*i + 1 >= argc || (o->compress_level = parse_compress_level(argv[*i + 1])) < 0)
            return -1;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--log-level")) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "tincan: --log-level needs error, warn, info or debug\n");
            return -1;
        }
        parse_log_level(argv[++*i]);
        return 1;
    } else
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "tincan: %s needs a value\n", a);
        return -1;
    }
    *slot = argv[++*i];
    return 1;
}

int parse_compress_level(const char *s)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : -1;
    if (!s || *end || v < 0 || v > 19) {
        fprintf(stderr, "tincan: --compress takes a zstd level from 1 to 19, or 0 for none\n");
        return -1;
    }
    return (int)v;
}

uint64_t parse_memory_size(const char *s)
{
    char *end;
    unsigned long long v = s && *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
    int shift = 0;
    if (v && (*end == 'K' || *end == 'k'))
        shift = 10, end++;
    else if (v && (*end == 'M' || *end == 'm'))
        shift = 20, end++;
    else if (v && (*end == 'G' || *end == 'g'))
        shift = 30, end++;
    if (!v || *end || v > (1ull << 40) >> shift || (v << shift) < (16u << 20)) {
        fprintf(stderr, "tincan: --max-memory takes a size of at least 16M, such as 64M or 1G\n");
        return 0;
    }
    return (uint64_t)v << shift;
}

int parse_link_speed(const char *s)
{
    int v = s ? codec_speed_parse(s) : -1;
    if (v < 0)
        fprintf(stderr, "tincan: --link-speed takes modem, isdn, adsl, lan or auto\n");
    return v;
}

uint32_t link_opts_grace(const struct link_opts *o)
{
    if (o->grace_s >= 0)
        return (uint32_t)o->grace_s;
    return o->stdio ? 0 : LINK_GRACE_DEFAULT_S;
}

#define REDIAL_FIRST_NS (200u * 1000000ull)
#define REDIAL_MAX_NS (2000u * 1000000ull) /* a dial is a packet or two: cheap, and the link is back sooner */

void redial_tick(struct redial *r, struct session *s, const char *addr)
{
    uint64_t now = clock_ns();
    if (session_state(s) != SESSION_DETACHED) {
        r->next_ns = 0;
        r->backoff_ns = REDIAL_FIRST_NS;
        return;
    }
    if (session_attaching(s) || now < r->next_ns)
        return;
    int fd = transport_dial(addr);
    if (fd >= 0)
        session_attach(s, fd, fd);
    else
        log_debug("link: redialling %s: %s", addr, strerror(-fd));
    r->next_ns = now + r->backoff_ns;
    r->backoff_ns = r->backoff_ns * 2 > REDIAL_MAX_NS ? REDIAL_MAX_NS : r->backoff_ns * 2;
}

const char *link_opts_cache_dir(const struct link_opts *o, char *buf, size_t cap)
{
    if (o->no_cache)
        return NULL;
    if (o->cache_dir)
        return o->cache_dir;
    return dict_default_dir(buf, cap) == 0 ? buf : NULL;
}

void parse_log_level(const char *s)
{
    static const char *const names[] = { "error", "warn", "info", "debug" };
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            log_setup((enum log_level)i, NULL);
}

int link_opts_finish(struct link_opts *o, uint8_t *secret, size_t *secret_len, bool *use_secret)
{
    int modes = !!o->listen + !!o->connect + o->stdio;
    if (modes != 1) {
        fprintf(stderr, "tincan: give exactly one of --link-listen ADDR, --link-connect ADDR or --stdio\n");
        return -1;
    }
    const char *addr = o->listen ? o->listen : o->connect;
    *use_secret = false;
    const char *env = getenv("TINCAN_SECRET");
    if (o->secret_file) {
        int rc = secret_load_file(o->secret_file, secret, secret_len);
        if (rc < 0) {
            fprintf(stderr, "tincan: cannot use secret file %s: %s\n", o->secret_file,
                    rc == -EINVAL ? "it holds fewer than 16 bytes" : strerror(-rc));
            return -1;
        }
        *use_secret = true;
    } else if (env && *env) {
        if (strlen(env) < 16 || strlen(env) > HS_MAX_SECRET) {
            fprintf(stderr, "tincan: TINCAN_SECRET must hold 16 to %d bytes\n", HS_MAX_SECRET);
            return -1;
        }
        *secret_len = strlen(env);
        memcpy(secret, env, *secret_len);
        *use_secret = true;
    }
    if (!o->stdio && !transport_is_local(addr) && !*use_secret) {
        fprintf(stderr,
                "tincan: a TCP link needs a session secret, or anyone who reaches %s could read your keystrokes.\n"
                "        Give both sides the same --secret-file FILE (create one with `tincan secret FILE`)\n"
                "        or set TINCAN_SECRET; or carry the link over ssh (`tincan ssh`).\n",
                addr);
        return -1;
    }
    return 0;
}

int signals_open(void)
{
    sigset_t set;
    sigemptyset(&set);
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGCHLD };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&set, sigs[i]);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return -errno;
    signal(SIGPIPE, SIG_IGN);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int signals_read(int sfd)
{
    struct signalfd_siginfo si;
    ssize_t n = read(sfd, &si, sizeof si);
    return n == (ssize_t)sizeof si ? (int)si.ssi_signo : 0;
}

int spawn(char *const argv[], const char *const env[], int stderr_fd)
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (stderr_fd >= 0)
            dup2(stderr_fd, 2);
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execvp(argv[0], argv);
        fprintf(stderr, "tincan: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}
