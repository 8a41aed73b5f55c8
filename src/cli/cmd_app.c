/* cmd_app.c -- `tincan app`: the half beside the applications. It claims an X display
 * :N, hands its clients a fresh cookie through Xauthority, carries them over the link and,
 * when given a command, runs it on :N and ends with it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "link/transport.h"
#include "proxy/control.h"
#include "x11/xlisten.h"

static const char app_usage[] =
    "usage: tincan app (--link-connect ADDR | --link-listen ADDR | --stdio) [options] [-- COMMAND...]\n"
    "\n"
    "The half of tincan beside the applications: it is X display :N for them and carries\n"
    "them over one link to `tincan display`, beside the real X server.\n"
    "\n"
    "  --link-connect ADDR   connect the link to HOST:PORT or unix:PATH\n"
    "  --link-listen ADDR    wait for the display side on HOST:PORT (default host 127.0.0.1)\n"
    "  --stdio               the link is stdin/stdout (how `tincan ssh` runs it)\n"
    "  --secret-file FILE    the session secret for a TCP link (or set TINCAN_SECRET)\n"
    "  --display-number N    be display :N (default: the first free from :10)\n"
    "  --tcp                 also listen on 127.0.0.1:6000+N\n"
    "  --no-local-answers    send every request's answer across the link (by default, answers\n"
    "                        known exactly, such as QueryExtension's, are given here)\n"
    "  --no-locale-hint      do not read a local client's locale (its LC_ALL, LC_CTYPE or LANG in\n"
    "                        /proc) to have a UTF-8 program's font set asked ahead in one round trip\n"
    "  --no-font-hint        do not read a local client's app-defaults file (by its program's name)\n"
    "                        to have the fonts it names asked ahead; only their names cross\n"
    "  --lossy-images Q      send photo-like images (32-bit PutImage over 16 KiB, many colours)\n"
    "                        as lossy WebP of quality Q (1-100; 75 is a good start); the screen then\n"
    "                        differs from the program's. Default: every image exact\n"
    "  --xauthority FILE     where to write this display's cookie (default $XAUTHORITY or ~/.Xauthority)\n"
    LINK_OPTS_GRACE_HELP
    LINK_OPTS_COMPRESS_HELP
    "  --stats               print statistics at exit (and on SIGUSR1, always)\n"
    "  --log-level LEVEL     error, warn, info (default) or debug\n"
    "\n"
    "With COMMAND, runs it with DISPLAY=:N and exits with its status once it and its windows are gone.\n"
    "Without, prints DISPLAY=:N and serves until the link ends or a signal arrives.\n";

struct app {
    struct loop *loop;
    struct session *session;
    struct control *control;     /* `tincan info` asks it; NULL if it could not be made */
    struct xlisten xl;
    struct watch listen_w[3], sig_w, link_w;
    int sfd, link_lfd;           /* --link-listen: kept open, for a new link after an outage;
                                  * --stdio: the socket `tincan attach` joins a new ssh to */
    char link_path[320];         /* ... a unix socket's file, removed at exit */
    pid_t child;
    int child_status;
    bool child_done, stop;
    uint64_t stop_deadline_ns;   /* after a signal: when to end even if the command lingers */
};

static void on_x_client(struct watch *w, unsigned events)
{
    struct app *a = w->data;
    int fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    session_add_client(a->session, fd);
}

static void on_signal(struct watch *w, unsigned events)
{
    struct app *a = w->data;
    int sig;
    while ((sig = signals_read(a->sfd)) > 0) {
        if (sig == SIGUSR1) {
            session_print_stats(a->session, stderr);
        } else if (sig == SIGCHLD) {
            int st;
            pid_t p;
            while ((p = waitpid(-1, &st, WNOHANG)) > 0)
                if (p == a->child) {
                    a->child_done = true;
                    a->child_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                }
        } else if (!a->stop) {
            /* The command goes first, by the same signal, so it ends as it would on a local
             * display rather than by a broken X connection; the session follows. */
            log_info("signal %d: ending the session", sig);
            a->stop = true;
            a->stop_deadline_ns = clock_ns() + 2000000000u;
            if (a->child > 0 && !a->child_done)
                kill(a->child, sig);
        }
    }
}

/* A new link, after the first (the display side redials after an outage). */
static void on_link_peer(struct watch *w, unsigned events)
{
    struct app *a = w->data;
    char peer[128];
    int fd = transport_accept(w->fd, peer, sizeof peer);
    if (fd < 0)
        return;
    log_info("link: a new link from %s", peer);
    if (session_attach(a->session, fd, fd) < 0)
        log_warn("link: refusing %s: this session takes no new link now", peer);
}

/* --stdio: a link lost with ssh comes back through `tincan attach ID` over a new ssh
 * connection, joined to this socket, named after the session (its file in the user's own
 * runtime directory, which nobody else may enter). 0 or -errno. */
static int stdio_link_socket(struct app *a, const uint8_t *token)
{
    char dir[256], hex[17];
    int rc = control_dir(dir, sizeof dir, true);
    if (rc < 0)
        return rc;
    sodium_bin2hex(hex, sizeof hex, token, 8);
    snprintf(a->link_path, sizeof a->link_path, "%s/link-%s.sock", dir, hex);
    unlink(a->link_path);
    a->link_lfd = net_unix_listen(a->link_path, 4);
    if (a->link_lfd < 0) {
        a->link_path[0] = 0;
        return a->link_lfd;
    }
    return 0;
}

/* The link: given, connected, or the first peer to connect to our listener (*lfd: the
 * listener, kept for the links that follow an outage). */
static int open_link(const struct link_opts *o, int sfd, int *in, int *out, int *lfd_out)
{
    if (o->stdio) {
        *in = fcntl(0, F_DUPFD_CLOEXEC, 3);
        *out = fcntl(1, F_DUPFD_CLOEXEC, 3);
        /* Nothing else may touch the link: the command gets /dev/null and our stderr. */
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            close(null);
        }
        dup2(2, 1);
        return *in >= 0 && *out >= 0 ? 0 : -1;
    }
    if (o->connect) {
        int fd = transport_connect(o->connect, 10000);
        if (fd < 0) {
            log_error("cannot connect the link to %s: %s", o->connect, strerror(-fd));
            return -1;
        }
        *in = *out = fd;
        return 0;
    }
    int lfd = transport_listen(o->listen);
    if (lfd < 0) {
        log_error("cannot listen on %s: %s", o->listen, strerror(-lfd));
        return -1;
    }
    log_info("waiting for the display side on %s", o->listen);
    struct pollfd p[2] = { { lfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
    while (poll(p, 2, -1) >= 0 && !(p[1].revents & POLLIN)) {
        char peer[128];
        int fd = transport_accept(lfd, peer, sizeof peer);
        if (fd >= 0) {
            log_info("display side connected from %s", peer);
            *lfd_out = lfd;
            *in = *out = fd;
            return 0;
        }
    }
    close(lfd);
    return -1;
}

int cmd_app(int argc, char **argv)
{
    struct link_opts lo = LINK_OPTS_INIT;
    int number = -1, cmd_at = -1;
    bool tcp = false, no_local_answers = false, no_locale_hint = false, no_font_hint = false;
    int lossy = 0;
    const char *xauthority = NULL;
    for (int i = 0; i < argc; i++) {
        int r = link_opts_take(&lo, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(app_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--display-number") && i + 1 < argc) {
            number = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--no-local-answers")) {
            no_local_answers = true;
        } else if (!strcmp(argv[i], "--no-locale-hint")) {
            no_locale_hint = true;
        } else if (!strcmp(argv[i], "--no-font-hint")) {
            no_font_hint = true;
        } else if (!strcmp(argv[i], "--lossy-images")) {
            char *end = NULL;
            long q = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (!end || *end || q < 1 || q > 100) {
                fprintf(stderr, "tincan app: --lossy-images takes a quality from 1 to 100\n");
                return 2;
            }
            lossy = (int)q;
            i++;
        } else if (!strcmp(argv[i], "--tcp")) {
            tcp = true;
        } else if (!strcmp(argv[i], "--xauthority") && i + 1 < argc) {
            xauthority = argv[++i];
        } else if (!strcmp(argv[i], "--")) {
            cmd_at = i + 1;
            break;
        } else {
            fprintf(stderr, "tincan app: unknown option %s\n\n%s", argv[i], app_usage);
            return 2;
        }
    }
    uint8_t secret[HS_MAX_SECRET];
    size_t secret_len = 0;
    bool use_secret;
    if (link_opts_finish(&lo, secret, &secret_len, &use_secret) < 0)
        return 2;
    if (cmd_at >= 0 && cmd_at >= argc) {
        fprintf(stderr, "tincan app: nothing to run after --\n");
        return 2;
    }
    log_setup(log_get_level(), "app");
    if (sodium_init() < 0)
        return 1;

    struct app a = { .child = -1, .link_lfd = -1 };
    int rc = 1, lin = -1, lout = -1;
    a.sfd = signals_open();
    if ((rc = xlisten_open(&a.xl, number, tcp)) < 0) {
        log_error("cannot be X display :%d: %s", number, rc == -EADDRINUSE ? "already in use" : strerror(-rc));
        return 1;
    }
    rc = 1;
    char cache_buf[512];
    struct session_config cfg = { .role = ROLE_APP, .secret = use_secret ? secret : NULL, .secret_len = secret_len,
                                  .compress_level = lo.compress_level, .no_local_answers = no_local_answers,
                                  .no_locale_hint = no_locale_hint, .no_font_hint = no_font_hint,
                                  .lossy_images = lossy,
                                  .link_speed = lo.link_speed, .max_memory = lo.max_memory,
                                  .grace_s = link_opts_grace(&lo),
                                  .cache_dir = link_opts_cache_dir(&lo, cache_buf, sizeof cache_buf) };
    randombytes_buf(cfg.cookie, sizeof cfg.cookie);
    uint8_t token[HS_TOKEN_SIZE];
    randombytes_buf(token, sizeof token);
    cfg.token = token;
    if (!xauthority)
        xauthority = xauth_file();
    int xrc = xauthority ? xauth_add(xauthority, a.xl.number, cfg.cookie, tcp) : -ENOENT;
    if (xrc < 0) {
        log_error("cannot write the cookie for :%d to %s: %s", a.xl.number, xauthority ? xauthority : "(no file)",
                  strerror(-xrc));
        goto out;
    }
    if (open_link(&lo, a.sfd, &lin, &lout, &a.link_lfd) < 0)
        goto out;
    if (a.link_lfd >= 0 && transport_is_local(lo.listen))
        snprintf(a.link_path, sizeof a.link_path, "%s", lo.listen + 5);
    if (lo.stdio && cfg.grace_s == 0 && lo.grace_s != 0)
        cfg.grace_s = stdio_link_socket(&a, token) == 0 ? LINK_GRACE_DEFAULT_S : 0;
    else if (lo.stdio && cfg.grace_s && stdio_link_socket(&a, token) < 0)
        cfg.grace_s = 0; /* nobody could bring the link back */
    if (loop_new(&a.loop) < 0 || session_new(&a.session, a.loop, &cfg, lin, lout) < 0) {
        log_error("cannot start the session");
        goto out;
    }
    for (int i = 0; i < 3; i++)
        if (a.xl.fds[i] >= 0)
            loop_watch(a.loop, &a.listen_w[i], a.xl.fds[i], LOOP_READ, on_x_client, &a);
    if ((rc = control_open(&a.control, a.loop, "app", &a.session)) < 0)
        log_warn("no control socket (tincan info): %s", strerror(-rc));
    rc = 1;
    loop_watch(a.loop, &a.sig_w, a.sfd, LOOP_READ, on_signal, &a);
    if (a.link_lfd >= 0)
        loop_watch(a.loop, &a.link_w, a.link_lfd, LOOP_READ, on_link_peer, &a);
    char display_env[32], xauth_env[4200];
    snprintf(display_env, sizeof display_env, "DISPLAY=:%d", a.xl.number);
    snprintf(xauth_env, sizeof xauth_env, "XAUTHORITY=%s", xauthority);
    log_info("serving X display :%d", a.xl.number);
    if (cmd_at >= 0) {
        const char *env[] = { display_env, xauth_env, NULL };
        a.child = spawn(argv + cmd_at, env, -1);
        if (a.child < 0) {
            log_error("cannot start %s: %s", argv[cmd_at], strerror(-a.child));
            goto out;
        }
    } else if (!lo.stdio) {
        printf("%s\n", display_env);
        fflush(stdout);
    }
    struct redial redial = { 0 };
    while (session_state(a.session) != SESSION_ENDED) {
        loop_run_once(a.loop, 250);
        session_tick(a.session);
        if (lo.connect)
            redial_tick(&redial, a.session, lo.connect);
        bool command_gone = a.child < 0 || (a.child_done && session_channel_count(a.session) == 0);
        if ((a.child >= 0 && command_gone) || (a.stop && (command_gone || clock_ns() > a.stop_deadline_ns)))
        {
            if (a.child_done)
                session_set_exit_status(a.session, a.child_status);
            session_goodbye(a.session);
        }
    }
    const char *why = session_end_reason(a.session);
    if (why && !a.stop)
        log_error("%s", why);
    rc = a.child >= 0 ? (a.child_done ? a.child_status : 1) : (why && !a.stop ? 1 : 0);
    if (a.child >= 0 && !a.child_done)
        kill(a.child, SIGHUP);
out:
    if (a.session && lo.stats)
        session_print_stats(a.session, stderr);
    control_free(a.control);
    session_free(a.session);
    if (a.link_lfd >= 0) {
        loop_unwatch(a.loop, &a.link_w);
        close(a.link_lfd);
        if (a.link_path[0])
            unlink(a.link_path);
    }
    loop_free(a.loop);
    if (xauthority)
        xauth_remove(xauthority, a.xl.number);
    xlisten_close(&a.xl);
    sodium_memzero(secret, sizeof secret);
    return rc;
}
