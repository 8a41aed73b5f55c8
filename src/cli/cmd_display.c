/* cmd_display.c -- `tincan display`: the half beside the real X server. It opens one
 * upstream connection per client the app side announces, presenting the user's own
 * Xauthority cookie. With --link-listen it admits only a peer that proves the secret. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/log.h"
#include "link/transport.h"
#include "proxy/control.h"

static const char display_usage[] =
    "usage: tincan display (--link-listen ADDR | --link-connect ADDR | --stdio) [options]\n"
    "\n"
    "The half of tincan beside the real X server: it shows on DISPLAY the programs that\n"
    "`tincan app` carries over the link.\n"
    "\n"
    "  --link-listen ADDR    wait for the app side on HOST:PORT (default host 127.0.0.1) or unix:PATH\n"
    "  --link-connect ADDR   connect the link to HOST:PORT or unix:PATH\n"
    "  --stdio               the link is stdin/stdout\n"
    "  --secret-file FILE    the session secret for a TCP link (or set TINCAN_SECRET)\n"
    "  --display NAME        the X server to show on (default $DISPLAY)\n"
    LINK_OPTS_GRACE_HELP
    LINK_OPTS_COMPRESS_HELP
    "  --stats               print statistics at exit (and on SIGUSR1, always)\n"
    "  --log-level LEVEL     error, warn, info (default) or debug\n"
    "\n"
    "A listener serves one session: peers that fail authentication are refused and logged,\n"
    "and it exits when the first accepted session ends. Up to 4 peers may be in their\n"
    "handshake at once, so an idle connection cannot keep the right peer out. After an outage\n"
    "the app side comes back on a new link (it redials, from any address) that must prove the\n"
    "secret and name this session; the programs' windows stay on the screen meanwhile.\n";

#define MAX_PENDING 4  /* peers still proving the secret */

struct display {
    struct loop *loop;
    struct session *session;           /* the accepted session, once a peer is up */
    struct session *pending[MAX_PENDING]; /* listener: peers still in their handshake */
    struct control *control;           /* `tincan info` asks it; NULL if it could not be made */
    struct watch listen_w, sig_w;
    int lfd, sfd;
    struct session_config cfg;
    bool stop;
};

static void on_peer(struct watch *w, unsigned events)
{
    struct display *d = w->data;
    char peer[128];
    int fd = transport_accept(d->lfd, peer, sizeof peer);
    if (fd < 0)
        return;
    int slot = 0;
    while (slot < MAX_PENDING && d->pending[slot])
        slot++;
    if (d->session) { /* a new link for it, after an outage (or to replace one that died silently) */
        log_info("link: a new link from %s", peer);
        if (session_attach(d->session, fd, fd) < 0)
            log_warn("link: refusing %s: a session is already running, with links in their handshake", peer);
        return;
    }
    if (slot == MAX_PENDING) {
        log_warn("link: refusing %s: too many peers in their handshake", peer);
        close(fd);
        return;
    }
    log_info("link: peer connected from %s", peer);
    if (session_new(&d->pending[slot], d->loop, &d->cfg, fd, fd) < 0)
        log_error("cannot start a session for %s", peer);
}

/* Listener: the first pending peer to finish its handshake becomes the session; the
 * others are let go. Peers that fail are logged and forgotten. */
static void promote_pending(struct display *d)
{
    for (int i = 0; i < MAX_PENDING; i++) {
        struct session *p = d->pending[i];
        if (!p)
            continue;
        session_tick(p);
        enum session_state st = session_state(p);
        if (st == SESSION_UP && !d->session) {
            d->session = p;
            d->pending[i] = NULL;
        } else if (st == SESSION_ENDED || (st == SESSION_UP && d->session)) {
            const char *why = session_end_reason(p);
            log_warn("link: peer refused (%s); still listening", st == SESSION_UP ? "a session is already running"
                                                                   : why ? why : "?");
            session_free(p);
            d->pending[i] = NULL;
        }
    }
}

static void on_signal(struct watch *w, unsigned events)
{
    struct display *d = w->data;
    int sig;
    while ((sig = signals_read(d->sfd)) > 0) {
        if (sig == SIGUSR1) {
            if (d->session)
                session_print_stats(d->session, stderr);
        } else if (sig != SIGCHLD) {
            log_info("signal %d: ending the session", sig);
            d->stop = true;
            if (d->session)
                session_goodbye(d->session);
        }
    }
}

int cmd_display(int argc, char **argv)
{
    struct link_opts lo = LINK_OPTS_INIT;
    const char *display = getenv("DISPLAY");
    for (int i = 0; i < argc; i++) {
        int r = link_opts_take(&lo, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(display_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--display") && i + 1 < argc) {
            display = argv[++i];
        } else {
            fprintf(stderr, "tincan display: unknown option %s\n\n%s", argv[i], display_usage);
            return 2;
        }
    }
    uint8_t secret[HS_MAX_SECRET];
    size_t secret_len = 0;
    bool use_secret;
    if (link_opts_finish(&lo, secret, &secret_len, &use_secret) < 0)
        return 2;
    log_setup(log_get_level(), "display");
    struct display d = { .lfd = -1 };
    char cache_buf[512];
    d.cfg = (struct session_config){ .role = ROLE_DISPLAY, .observe = true, .secret = use_secret ? secret : NULL, .secret_len = secret_len,
                                     .compress_level = lo.compress_level, .link_speed = lo.link_speed,
                                     .max_memory = lo.max_memory, .grace_s = link_opts_grace(&lo),
                                     .cache_dir = link_opts_cache_dir(&lo, cache_buf, sizeof cache_buf) };
    if (!display || xdisplay_parse(display, &d.cfg.upstream) < 0) {
        fprintf(stderr, "tincan display: %s: give the X server with --display or DISPLAY\n",
                display ? "cannot parse the display name" : "no X display");
        return 2;
    }
    /* Fail early and clearly if the X server cannot be reached at all. */
    int probe = xdisplay_connect(&d.cfg.upstream);
    if (probe < 0) {
        log_error("cannot connect to X display %s: %s", display, strerror(-probe));
        return 1;
    }
    close(probe);
    d.sfd = signals_open();
    if (loop_new(&d.loop) < 0)
        return 1;
    loop_watch(d.loop, &d.sig_w, d.sfd, LOOP_READ, on_signal, &d);
    int rc = control_open(&d.control, d.loop, "display", &d.session);
    if (rc < 0)
        log_warn("no control socket (tincan info): %s", strerror(-rc));
    rc = 0;
    if (lo.listen) {
        d.lfd = transport_listen(lo.listen);
        if (d.lfd < 0) {
            log_error("cannot listen on %s: %s", lo.listen, strerror(-d.lfd));
            return 1;
        }
        loop_watch(d.loop, &d.listen_w, d.lfd, LOOP_READ, on_peer, &d);
        log_info("waiting for the app side on %s", lo.listen);
    } else {
        int in = -1, out = -1;
        if (lo.stdio) {
            in = fcntl(0, F_DUPFD_CLOEXEC, 3);
            out = fcntl(1, F_DUPFD_CLOEXEC, 3);
        } else {
            in = out = transport_connect(lo.connect, 10000);
            if (in < 0) {
                log_error("cannot connect the link to %s: %s", lo.connect, strerror(-in));
                return 1;
            }
        }
        if (session_new(&d.session, d.loop, &d.cfg, in, out) < 0)
            return 1;
    }
    struct redial redial = { 0 };
    for (;;) {
        loop_run_once(d.loop, 250);
        if (lo.listen)
            promote_pending(&d);
        if (d.session && lo.connect)
            redial_tick(&redial, d.session, lo.connect);
        if (!d.session) {
            if (d.stop)
                break;
            continue;
        }
        session_tick(d.session);
        if (session_state(d.session) != SESSION_ENDED)
            continue;
        const char *why = session_end_reason(d.session);
        if (why && !d.stop) {
            log_error("%s", why);
            rc = 1;
        }
        break;
    }
    if (d.session && lo.stats)
        session_print_stats(d.session, stderr);
    control_free(d.control);
    session_free(d.session);
    for (int i = 0; i < MAX_PENDING; i++)
        session_free(d.pending[i]);
    if (d.lfd >= 0) {
        loop_unwatch(d.loop, &d.listen_w);
        close(d.lfd);
        if (transport_is_local(lo.listen))
            unlink(lo.listen + 5);
    }
    loop_free(d.loop);
    return rc;
}
