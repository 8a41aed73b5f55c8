/* cmd_run.c -- `tincan run -- COMMAND`: the whole chain on one machine, for the demo,
 * the tests and the benchmarks: an X server (the given display, or an embedded Xvfb),
 * the display side, the link emulator, the app side, and COMMAND. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/clock.h"
#include "common/log.h"

static const char run_usage[] =
    "usage: tincan run [options] -- COMMAND...\n"
    "\n"
    "Runs COMMAND through both halves of tincan on this machine, across an emulated link,\n"
    "and prints the statistics of both halves at the end.\n"
    "\n"
    "  --profile NAME       the link to emulate (see `tincan-link --list-profiles`; default radio256)\n"
    "  --no-emulator        join the halves directly, with no emulated link\n"
    "  --compress LEVEL     zstd level for the link, 1-19, 0 for none (default 3)\n"
    "  --max-memory SIZE    memory each half may hold (default 64M; see tincan app --help)\n"
    "  --lossy-images Q     photo-like images as lossy WebP of quality 1-100 (default: exact)\n"
    "  --session            COMMAND is a desktop session script (a window manager and programs):\n"
    "                       it all ends when the script ends\n"
    "  --display NAME       show on this X server (default: $DISPLAY, else an embedded Xvfb)\n"
    "  --xvfb               always use an embedded Xvfb\n"
    "  --duration SECONDS   end COMMAND after this long (default: wait for it)\n"
    "  --screenshot FILE    save the screen (xwd format) before ending\n"
    "  --quiet              no statistics\n";

static char self_dir[4096];

static int start(char *const argv[], int stderr_fd)
{
    int pid = spawn(argv, NULL, stderr_fd);
    if (pid < 0)
        fprintf(stderr, "tincan run: cannot start %s: %s\n", argv[0], strerror(-pid));
    return pid;
}

/* Starts Xvfb on a free display, its messages to log_fd; returns its pid and the display number. */
static int start_xvfb(int *number, int log_fd)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", p[1]);
    char *argv[] = { "Xvfb", "-displayfd", fdarg, "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset",
                     "-extension", "GLX", NULL };
    int pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(log_fd, 2);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        execvp(argv[0], argv);
        dprintf(log_fd, "cannot run Xvfb (apt-get install xvfb): %s\n", strerror(errno));
        _exit(127);
    }
    close(p[1]);
    /* Xvfb writes the number and the newline separately; closing early would kill it. */
    char buf[16] = { 0 };
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && !memchr(buf, '\n', n) && (r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    close(p[0]);
    if (pid < 0 || !memchr(buf, '\n', n)) {
        if (pid > 0)
            kill(pid, SIGTERM);
        return -1;
    }
    *number = atoi(buf);
    return pid;
}

/* Waits until a process has its unix socket listening (bind and listen are back to back). */
static bool wait_socket(const char *addr, int pid, int timeout_ms)
{
    struct stat st;
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        if (stat(addr + strlen("unix:"), &st) == 0 && S_ISSOCK(st.st_mode))
            return true;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return false;
        nanosleep(&(struct timespec){ 0, 10 * 1000000 }, NULL);
    }
    return false;
}

static int wait_exit(int pid, int timeout_ms)
{
    for (int waited = 0;; waited += 20) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0)
            return -1;
        if (waited >= timeout_ms)
            return -2;
        nanosleep(&(struct timespec){ 0, 20 * 1000000 }, NULL);
    }
}

/* One line from the emulator's counters: what crossed the emulated link. */
static void print_link_summary(const char *stats_file, const char *profile)
{
    FILE *f = fopen(stats_file, "r");
    if (!f)
        return;
    unsigned long long up = 0, down = 0, up_wire = 0, down_wire = 0, drops = 0, v;
    char line[256], key[64];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63[^=]=%llu", key, &v) != 2)
            continue;
        if (!strcmp(key, "up_bytes")) up = v;
        else if (!strcmp(key, "down_bytes")) down = v;
        else if (!strcmp(key, "up_wire_bytes")) up_wire = v;
        else if (!strcmp(key, "down_wire_bytes")) down_wire = v;
        else if (!strcmp(key, "up_drops") || !strcmp(key, "down_drops")) drops += v;
    }
    fclose(f);
    fprintf(stderr, "\n== emulated link (%s) ==\napp->display %llu bytes (%llu on the wire), display->app %llu bytes "
            "(%llu on the wire), %llu packets dropped\n", profile, up, up_wire, down, down_wire, drops);
}

static void stop(int pid, int sig)
{
    if (pid > 0 && wait_exit(pid, 0) == -2) {
        kill(pid, sig);
        if (wait_exit(pid, 3000) == -2) {
            kill(pid, SIGKILL);
            wait_exit(pid, 1000);
        }
    }
}

int cmd_run(int argc, char **argv)
{
    const char *profile = "radio256", *display = getenv("DISPLAY"), *screenshot = NULL;
    bool emulator = true, xvfb = false, quiet = false;
    double duration_s = 0;
    bool desktop = false;
    const char *level = "3", *max_memory = "64M", *lossy = NULL;
    int cmd_at = -1;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(run_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
            profile = argv[++i];
        } else if (!strcmp(argv[i], "--compress") && i + 1 < argc) {
            level = argv[++i];
            if (parse_compress_level(level) < 0)
                return 2;
        } else if (!strcmp(argv[i], "--max-memory") && i + 1 < argc) {
            max_memory = argv[++i];
            if (!parse_memory_size(max_memory))
                return 2;
        } else if (!strcmp(argv[i], "--lossy-images") && i + 1 < argc) {
            lossy = argv[++i];
            char *end;
            long q = strtol(lossy, &end, 10);
            if (*end || q < 1 || q > 100) {
                fprintf(stderr, "tincan run: --lossy-images takes a quality from 1 to 100\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--session")) {
            desktop = true;
        } else if (!strcmp(argv[i], "--no-emulator")) {
            emulator = false;
        } else if (!strcmp(argv[i], "--display") && i + 1 < argc) {
            display = argv[++i];
        } else if (!strcmp(argv[i], "--xvfb")) {
            xvfb = true;
        } else if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
            duration_s = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--screenshot") && i + 1 < argc) {
            screenshot = argv[++i];
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
        } else if (!strcmp(argv[i], "--")) {
            cmd_at = i + 1;
            break;
        } else if (argv[i][0] != '-') {
            cmd_at = i;
            break;
        } else {
            fprintf(stderr, "tincan run: unknown option %s\n\n%s", argv[i], run_usage);
            return 2;
        }
    }
    if (cmd_at < 0 || cmd_at >= argc) {
        fprintf(stderr, "tincan run: give a COMMAND to run\n\n%s", run_usage);
        return 2;
    }
    ssize_t sl = readlink("/proc/self/exe", self_dir, sizeof self_dir - 32);
    if (sl <= 0)
        return 1;
    self_dir[sl] = 0;
    *strrchr(self_dir, '/') = 0;
    char self[4200], emu[4200];
    snprintf(self, sizeof self, "%s/tincan", self_dir);
    snprintf(emu, sizeof emu, "%s/tincan-link", self_dir);
    if (emulator && access(emu, X_OK) != 0) {
        fprintf(stderr, "tincan run: no link emulator at %s (build it with make, or pass --no-emulator)\n", emu);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);

    int rc = 1, xvfb_pid = -1, display_pid = -1, emu_pid = -1, app_pid = -1;
    char dir[] = "/tmp/tincan-run.XXXXXX", secret[64], dsock[64], lsock[64], disp[32], xlog[64], lstats[64];
    int xlog_fd = -1, null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    bool timed_out = false;
    if (!mkdtemp(dir)) {
        perror("tincan run: mkdtemp");
        return 1;
    }
    snprintf(secret, sizeof secret, "%s/secret", dir);
    snprintf(dsock, sizeof dsock, "unix:%s/display.sock", dir);
    snprintf(lsock, sizeof lsock, "unix:%s/link.sock", dir);
    snprintf(xlog, sizeof xlog, "%s/xvfb.log", dir);
    snprintf(lstats, sizeof lstats, "%s/link.stats", dir);
    if (secret_create_file(secret) < 0)
        goto out;
    if (xvfb || !display || !*display) {
        int n;
        xlog_fd = open(xlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        xvfb_pid = start_xvfb(&n, xlog_fd >= 0 ? xlog_fd : 2);
        if (xvfb_pid < 0) {
            fprintf(stderr, "tincan run: cannot start Xvfb; it said:\n");
            char cmd[128];
            snprintf(cmd, sizeof cmd, "cat '%s' >&2", xlog);
            if (system(cmd) != 0)
                fprintf(stderr, "(nothing)\n");
            goto out;
        }
        snprintf(disp, sizeof disp, ":%d", n);
        display = disp;
        fprintf(stderr, "tincan run: started Xvfb on %s\n", display);
    }
    char *dargv[] = { self, "display", "--link-listen", dsock, "--secret-file", secret, "--display", (char *)display,
                      "--compress", (char *)level, "--max-memory", (char *)max_memory,
                      quiet ? "--log-level" : "--stats", quiet ? "warn" : NULL, NULL };
    if ((display_pid = start(dargv, -1)) < 0)
        goto out;
    if (!wait_socket(dsock, display_pid, 10000)) {
        fprintf(stderr, "tincan run: the display side did not start\n");
        goto out;
    }
    const char *app_link = dsock;
    if (emulator) {
        char *eargv[] = { emu, "stream", "--listen", lsock, "--connect", dsock, "--profile", (char *)profile,
                          "--stats-file", lstats, NULL };
        if ((emu_pid = start(eargv, null_fd)) < 0)
            goto out;
        if (!wait_socket(lsock, emu_pid, 10000)) {
            fprintf(stderr, "tincan run: the link emulator did not start\n");
            goto out;
        }
        app_link = lsock;
    }
    size_t n_cmd = (size_t)(argc - cmd_at);
    char **aargv = calloc(n_cmd + 16, sizeof *aargv);
    int k = 0;
    aargv[k++] = self;
    aargv[k++] = "app";
    aargv[k++] = "--link-connect";
    aargv[k++] = (char *)app_link;
    aargv[k++] = "--secret-file";
    aargv[k++] = secret;
    aargv[k++] = "--compress";
    aargv[k++] = (char *)level;
    aargv[k++] = "--max-memory";
    aargv[k++] = (char *)max_memory;
    if (lossy) {
        aargv[k++] = "--lossy-images";
        aargv[k++] = (char *)lossy;
    }
    if (desktop)
        aargv[k++] = "--session";
    if (!quiet)
        aargv[k++] = "--stats";
    else {
        aargv[k++] = "--log-level";
        aargv[k++] = "warn";
    }
    aargv[k++] = "--";
    for (size_t j = 0; j < n_cmd; j++)
        aargv[k++] = argv[cmd_at + (int)j];
    uint64_t t0 = clock_ns();
    app_pid = start(aargv, -1);
    free(aargv);
    if (app_pid < 0)
        goto out;
    int app_rc = wait_exit(app_pid, duration_s > 0 ? (int)(duration_s * 1000) : 1 << 30);
    if (app_rc == -2) {
        if (screenshot) {
            char cmd[8300];
            snprintf(cmd, sizeof cmd, "xwd -root -display '%s' -out '%s'", display, screenshot);
            if (system(cmd) != 0)
                fprintf(stderr, "tincan run: xwd failed (apt-get install x11-apps)\n");
        }
        kill(app_pid, SIGTERM);
        app_rc = wait_exit(app_pid, 5000);
        timed_out = true;
    }
    app_pid = -1;
    if (!quiet)
        fprintf(stderr, "tincan run: %s ended (status %d) after %.2f s\n", argv[cmd_at], app_rc,
                (double)(clock_ns() - t0) / 1e9);
    rc = timed_out ? 0 : app_rc < 0 ? 1 : app_rc;
    wait_exit(display_pid, 5000);
out:
    stop(app_pid, SIGTERM);
    stop(display_pid, SIGTERM);
    stop(emu_pid, SIGTERM);
    if (emu_pid > 0 && !quiet)
        print_link_summary(lstats, profile);
    stop(xvfb_pid, SIGTERM);
    if (xlog_fd >= 0)
        close(xlog_fd);
    if (null_fd >= 0)
        close(null_fd);
    unlink(xlog);
    unlink(lstats);
    unlink(secret);
    unlink(dsock + 5);
    unlink(lsock + 5);
    rmdir(dir);
    return rc;
}
