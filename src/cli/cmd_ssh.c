/* cmd_ssh.c -- `tincan ssh [ssh options] HOST COMMAND...`: runs `tincan app --stdio`
 * on HOST through ssh, carries the link over that ssh connection (ssh secures it), and
 * serves the display side here. Exits with the remote command's status. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/clock.h"
#include "common/log.h"
#include "link/dict.h"
#include "proxy/control.h"

static const char ssh_usage[] =
    "usage: tincan ssh [tincan options] [ssh options] HOST COMMAND...\n"
    "\n"
    "Runs COMMAND on HOST with its windows shown here, carried by tincan over ssh.\n"
    "\n"
    "  --ssh PROGRAM          the ssh client to run (default: ssh)\n"
    "  --remote-tincan PATH   tincan on HOST (default: tincan)\n"
    "  --display NAME         show on this X display (default $DISPLAY)\n"
    "  --link-speed SPEED     modem, isdn, adsl, lan or auto (default): where compression starts\n"
    "  --compress LEVEL       a fixed zstd level instead, 1-19, 0 for none\n"
    "  --no-cache             no compression cache (warm start) nor font questions kept, either side\n"
    "  --max-memory SIZE      memory each side may hold (default 64M; see tincan app --help)\n"
    "  --grace SECONDS        when ssh's connection is lost, keep COMMAND and its windows and run\n"
    "                         ssh again (`tincan attach` there) for up to this long (default 1200;\n"
    "                         0: end with the connection)\n"
    "  --stats                print statistics of both halves at exit\n"
    "  --log-level LEVEL      error, warn, info (default) or debug\n"
    "Every other option before HOST goes to ssh.\n"
    "\n"
    "Exit status: the remote command's; 125 if tincan is missing on HOST or speaks another\n"
    "link protocol version (a message says what to install); 255 if ssh fails.\n";

/* ssh options that take an argument (from ssh(1)). */
static bool ssh_option_takes_arg(const char *opt)
{
    return opt[0] == '-' && opt[1] && !opt[2] && strchr("BbcDEeFIiJLlmOopQRSWw", opt[1]);
}

/* Appends arg to out, quoted for the remote shell. */
static int shell_quote(char *out, size_t cap, size_t *len, const char *arg)
{
    size_t need = 3;
    for (const char *p = arg; *p; p++)
        need += *p == '\'' ? 4 : 1;
    if (*len + need + 1 >= cap)
        return -1;
    char *o = out + *len;
    *o++ = ' ';
    *o++ = '\'';
    for (const char *p = arg; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = 0;
    *len = (size_t)(o - out);
    return 0;
}

struct ssh_run {
    int sfd;
    pid_t ssh;                 /* the ssh of the current link */
    int ssh_status;
    bool ssh_done, stop;
    struct session *session;
    char **sargv;              /* ssh, its options and HOST; the remote command goes after */
    int n_sargv;
};

/* Runs ssh with the remote command; its stdin and stdout are *fd's peer. The pid, or -1. */
static pid_t spawn_ssh(struct ssh_run *r, char *remote_cmd, int *fd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    r->sargv[r->n_sargv] = remote_cmd;
    r->sargv[r->n_sargv + 1] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        execvp(r->sargv[0], r->sargv);
        fprintf(stderr, "tincan ssh: cannot run %s: %s\n", r->sargv[0], strerror(errno));
        _exit(255);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return -1;
    }
    *fd = sv[0];
    return pid;
}

/* The line the remote shell prints on the link instead of a banner when it finds no tincan. */
#define REMOTE_MISSING "tincan-not-found"

/* Before the session starts: waits for the remote side's first line on the link, without
 * taking it (the handshake reads it again), and explains the two failures a new user meets:
 * no tincan on HOST, or one that speaks another protocol version. 0 to go on (also when
 * ssh ended first: its status says why), SSH_EXIT_REMOTE_TINCAN after a message, or
 * 128 + the signal that stopped the wait. */
static int check_remote(struct ssh_run *r, int fd, const char *host, const char *remote)
{
    char line[128];
    ssize_t n = 0;
    for (;;) {
        struct pollfd p[2] = { { fd, POLLIN, 0 }, { r->sfd, POLLIN, 0 } };
        if (poll(p, 2, 100) < 0 && errno != EINTR)
            return 0;
        n = recv(fd, line, sizeof line - 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return 0;
        if (n > 0 && (memchr(line, '\n', (size_t)n) || n == (ssize_t)sizeof line - 1))
            break;
        if (r->ssh_done)
            return 0;
        int sig;
        while ((sig = signals_read(r->sfd)) > 0) {
            int st;
            if (sig != SIGCHLD)
                return 128 + sig;
            if (waitpid(r->ssh, &st, WNOHANG) == r->ssh) { /* it may have left its line behind: peek again */
                r->ssh_done = true;
                r->ssh_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            }
        }
    }
    line[n] = 0;
    int version;
    if (!strncmp(line, REMOTE_MISSING "\n", strlen(REMOTE_MISSING) + 1)) {
        fprintf(stderr,
                "tincan ssh: tincan is not installed on %s (a non-interactive shell there found no \"%s\").\n"
                "  Install tincan %s (link protocol %d) on %s: from the package (apt install ./tincan_%s_*.deb)\n"
                "  or from source (make && sudo make install); or give its path with --remote-tincan PATH.\n",
                host, remote, TINCAN_VERSION, LINK_PROTOCOL_VERSION, host, TINCAN_VERSION);
        return SSH_EXIT_REMOTE_TINCAN;
    }
    if (sscanf(line, "TINCAN %d ", &version) == 1 && version != LINK_PROTOCOL_VERSION) {
        fprintf(stderr,
                "tincan ssh: tincan on %s speaks link protocol %d; this tincan (%s) speaks %d.\n"
                "  Install the same tincan release on both machines (`tincan version` prints it);\n"
                "  the older side needs the upgrade.\n",
                host, version, TINCAN_VERSION, LINK_PROTOCOL_VERSION);
        return SSH_EXIT_REMOTE_TINCAN;
    }
    return 0;
}

static void on_signal(struct watch *w, unsigned events)
{
    struct ssh_run *r = w->data;
    int sig;
    while ((sig = signals_read(r->sfd)) > 0) {
        if (sig == SIGUSR1) {
            session_print_stats(r->session, stderr);
        } else if (sig == SIGCHLD) {
            int st;
            pid_t p;
            while ((p = waitpid(-1, &st, WNOHANG)) > 0) /* an ssh of a lost link, or the current one */
                if (p == r->ssh) {
                    r->ssh_done = true;
                    r->ssh_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                }
        } else {
            r->stop = true;
            kill(r->ssh, sig);
            session_goodbye(r->session); /* at once when the link is lost: nobody to wait for */
        }
    }
}

int cmd_ssh(int argc, char **argv)
{
    const char *ssh = "ssh", *remote = "tincan", *display = getenv("DISPLAY"), *log_level = NULL;
    bool stats = false;
    int level = CODEC_LEVEL_AUTO, speed = CODEC_SPEED_AUTO;
    bool no_cache = false;
    const char *max_memory = NULL;
    long grace = LINK_GRACE_DEFAULT_S;
    int i = 0;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(ssh_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--ssh") && i + 1 < argc) {
            ssh = argv[++i];
        } else if (!strcmp(argv[i], "--remote-tincan") && i + 1 < argc) {
            remote = argv[++i];
        } else if (!strcmp(argv[i], "--display") && i + 1 < argc) {
            display = argv[++i];
        } else if (!strcmp(argv[i], "--compress") && i + 1 < argc) {
            if ((level = parse_compress_level(argv[++i])) < 0)
                return 2;
        } else if (!strcmp(argv[i], "--link-speed") && i + 1 < argc) {
            if ((speed = parse_link_speed(argv[++i])) < 0)
                return 2;
        } else if (!strcmp(argv[i], "--no-cache")) {
            no_cache = true;
        } else if (!strcmp(argv[i], "--max-memory") && i + 1 < argc) {
            if (!parse_memory_size(max_memory = argv[++i]))
                return 2;
        } else if (!strcmp(argv[i], "--grace") && i + 1 < argc) {
            char *end;
            grace = strtol(argv[++i], &end, 10);
            if (*end || grace < 0 || grace > 7 * 86400) {
                fprintf(stderr, "tincan ssh: --grace takes a number of seconds, 0 to 604800\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--stats")) {
            stats = true;
        } else if (!strcmp(argv[i], "--log-level") && i + 1 < argc) {
            log_level = argv[++i];
            parse_log_level(log_level);
        } else {
            break;
        }
    }
    /* ssh's own options, then HOST, then the command. */
    int ssh_opts = i;
    while (i < argc && argv[i][0] == '-')
        i += ssh_option_takes_arg(argv[i]) ? 2 : 1;
    if (i + 1 >= argc) {
        fprintf(stderr, "tincan ssh: give a HOST and a COMMAND\n\n%s", ssh_usage);
        return 2;
    }
    int host_at = i;
    char cache_buf[512];
    struct session_config cfg = { .role = ROLE_DISPLAY, .observe = true, .compress_level = level, .link_speed = speed,
                                  .max_memory = max_memory ? parse_memory_size(max_memory) : 0,
                                  .grace_s = (uint32_t)grace,
                                  .cache_dir = no_cache || dict_default_dir(cache_buf, sizeof cache_buf) ? NULL : cache_buf };
    if (!display || xdisplay_parse(display, &cfg.upstream) < 0) {
        fprintf(stderr, "tincan ssh: no usable X display here (set DISPLAY or give --display)\n");
        return 2;
    }
    log_setup(log_get_level(), "display");

    char remote_cmd[65536];
    /* The remote app side gets the same compression choice (a fixed level, or the preset). */
    static const char *const speeds[] = { "auto", "modem", "isdn", "adsl", "lan" };
    char how[160];
    if (level == CODEC_LEVEL_AUTO)
        snprintf(how, sizeof how, "--link-speed %s", speeds[speed]);
    else
        snprintf(how, sizeof how, "--compress %d", level);
    if (max_memory) /* the same bound there: both sides size the window from it */
        snprintf(how + strlen(how), sizeof how - strlen(how), " --max-memory %llu",
                 (unsigned long long)parse_memory_size(max_memory));
    snprintf(how + strlen(how), sizeof how - strlen(how), " --grace %ld", grace);
    /* The remote command runs under sh, whatever the login shell, so that a missing tincan
     * is told apart from a missing COMMAND (both would be status 127): check_remote(). */
    char inner[65536];
    size_t ilen = 0, len = 0;
    if (shell_quote(inner, sizeof inner, &ilen, remote) < 0)
        goto too_long;
    char quoted_remote[4200];
    if (ilen >= sizeof quoted_remote)
        goto too_long;
    memcpy(quoted_remote, inner, ilen + 1);
    ilen = (size_t)snprintf(inner, sizeof inner,
                            "command -v%s >/dev/null 2>&1 || { echo " REMOTE_MISSING "; exit %d; }; exec%s app --stdio %s%s%s%s%s --",
                            quoted_remote, SSH_EXIT_REMOTE_TINCAN, quoted_remote, how, no_cache ? " --no-cache" : "",
                            stats ? " --stats" : "", log_level ? " --log-level " : "", log_level ? log_level : "");
    for (int k = host_at + 1; k < argc; k++)
        if (shell_quote(inner, sizeof inner, &ilen, argv[k]) < 0)
            goto too_long;
    memcpy(remote_cmd, "sh -c", 6);
    len = 5;
    if (shell_quote(remote_cmd, sizeof remote_cmd, &len, inner) < 0)
        goto too_long;
    /* ssh -x: no ssh X forwarding of its own; -T: no terminal, the link is binary. */
    struct ssh_run r = { .sfd = signals_open() };
    r.sargv = calloc((size_t)argc + 8, sizeof *r.sargv);
    r.sargv[r.n_sargv++] = (char *)ssh;
    r.sargv[r.n_sargv++] = "-x";
    r.sargv[r.n_sargv++] = "-T";
    for (int k = ssh_opts; k <= host_at; k++)
        r.sargv[r.n_sargv++] = argv[k];
    int link_fd;
    r.ssh = spawn_ssh(&r, remote_cmd, &link_fd);
    if (r.ssh < 0) {
        perror("tincan ssh: cannot start ssh");
        free(r.sargv);
        return 1;
    }
    int checked = check_remote(&r, link_fd, argv[host_at], remote);
    if (checked != 0) {
        if (!r.ssh_done) {
            kill(r.ssh, SIGTERM);
            waitpid(r.ssh, NULL, 0);
        }
        close(link_fd);
        free(r.sargv);
        return checked;
    }
    struct loop *loop;
    struct watch sig_w;
    if (loop_new(&loop) < 0 || session_new(&r.session, loop, &cfg, link_fd, link_fd) < 0)
        return 1;
    loop_watch(loop, &sig_w, r.sfd, LOOP_READ, on_signal, &r);
    struct control *control;
    int crc = control_open(&control, loop, "display", &r.session);
    if (crc < 0)
        log_warn("no control socket (tincan info): %s", strerror(-crc));
    /* The remote app side outlives its ssh: a lost link comes back through a new ssh
     * running `tincan attach ID` there, joined to the app side's link socket. */
    char attach_cmd[4400];
    uint64_t redial_ns = 0, backoff_ns = 500000000ull;
    while (session_state(r.session) != SESSION_ENDED) {
        loop_run_once(loop, 250);
        session_tick(r.session);
        char id[17];
        /* ssh exits with 255 when its connection fails, and dies of a signal when killed: the
         * remote side may live on. With another status the remote side itself has ended. */
        if (session_state(r.session) == SESSION_DETACHED && r.ssh_done && r.ssh_status != 255 && r.ssh_status < 128) {
            log_info("ssh ended with status %d: the remote side has ended", r.ssh_status);
            session_goodbye(r.session);
            continue;
        }
        if (session_state(r.session) != SESSION_DETACHED || session_attaching(r.session) || r.stop ||
            clock_ns() < redial_ns || session_token_hex(r.session, true, id, sizeof id) < 0) {
            if (session_state(r.session) == SESSION_UP)
                backoff_ns = 500000000ull;
            continue;
        }
        if (!r.ssh_done)
            kill(r.ssh, SIGTERM); /* the lost link's ssh, if it lingers */
        char attach_inner[4300];
        size_t alen = 5;
        snprintf(attach_inner, sizeof attach_inner, "exec%s attach %s", quoted_remote, id);
        memcpy(attach_cmd, "sh -c", 6);
        if (shell_quote(attach_cmd, sizeof attach_cmd, &alen, attach_inner) < 0)
            break;
        pid_t pid = spawn_ssh(&r, attach_cmd, &link_fd);
        if (pid > 0) {
            r.ssh = pid;
            r.ssh_done = false;
            session_attach(r.session, link_fd, link_fd);
            log_info("link: ssh %s again, to bring the session back", argv[host_at]);
        }
        redial_ns = clock_ns() + backoff_ns;
        backoff_ns = backoff_ns * 2 > 10000000000ull ? 10000000000ull : backoff_ns * 2;
    }
    for (int waited_ms = 0; !r.ssh_done; waited_ms += 250) {
        if (waited_ms == 5000)
            kill(r.ssh, SIGTERM); /* the link is gone; ssh has no reason to linger */
        loop_run_once(loop, 250);
    }
    const char *why = session_end_reason(r.session);
    if (why && r.ssh_status == 0)
        log_error("%s", why);
    if (stats)
        session_print_stats(r.session, stderr);
    /* After a reattach the status is the app side's (its GOODBYE); ssh's is attach's. */
    int status = session_peer_exit_status(r.session) >= 0 ? session_peer_exit_status(r.session) : r.ssh_status;
    control_free(control);
    session_free(r.session);
    loop_free(loop);
    free(r.sargv);
    return status;
too_long:
    fprintf(stderr, "tincan ssh: command too long\n");
    return 2;
}
