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
    "  --display NAME       show on this X server (default: $DISPLAY, else an embedded Xvfb)\n"
    "  --xvfb               always use an embedded Xvfb\n"
    "  --duration SECONDS   end COMMAND after this long (default: wait for it)\n"
    "  --screenshot FILE    save the screen (xwd format) before ending\n"
    "  --quiet              no statistics\n";

static char self_dir[4096];

static int start(char *const argv[])
{
    int pid = spawn(argv, NULL);
    if (pid < 0)
        fprintf(stderr, "tincan run: cannot start %s: %s\n", argv[0], strerror(-pid));
    return pid;
}

/* Starts Xvfb on a free display; returns its pid and the display number. */
static int start_xvfb(int *number)
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
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "tincan run: cannot run Xvfb (apt-get install xvfb): %s\n", strerror(errno));
        _exit(127);
    }
    close(p[1]);
    char buf[16] = { 0 };
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    if (pid < 0 || n <= 0) {
        if (pid > 0)
            kill(pid, SIGTERM);
        return -1;
    }
    *number = atoi(buf);
    return pid;
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
    int cmd_at = -1;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(run_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
            profile = argv[++i];
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
    char dir[] = "/tmp/tincan-run.XXXXXX", secret[64], dsock[64], lsock[64], disp[32];
    if (!mkdtemp(dir)) {
        perror("tincan run: mkdtemp");
        return 1;
    }
    snprintf(secret, sizeof secret, "%s/secret", dir);
    snprintf(dsock, sizeof dsock, "unix:%s/display.sock", dir);
    snprintf(lsock, sizeof lsock, "unix:%s/link.sock", dir);
    if (secret_create_file(secret) < 0)
        goto out;
    if (xvfb || !display || !*display) {
        int n;
        xvfb_pid = start_xvfb(&n);
        if (xvfb_pid < 0) {
            fprintf(stderr, "tincan run: cannot start Xvfb\n");
            goto out;
        }
        snprintf(disp, sizeof disp, ":%d", n);
        display = disp;
        fprintf(stderr, "tincan run: started Xvfb on %s\n", display);
    }
    char *dargv[] = { self, "display", "--link-listen", dsock, "--secret-file", secret, "--display", (char *)display,
                      quiet ? "--log-level" : "--stats", quiet ? "warn" : NULL, NULL };
    if ((display_pid = start(dargv)) < 0)
        goto out;
    const char *app_link = dsock;
    if (emulator) {
        char *eargv[] = { emu, "stream", "--listen", lsock, "--connect", dsock, "--profile", (char *)profile, NULL };
        if ((emu_pid = start(eargv)) < 0)
            goto out;
        app_link = lsock;
    }
    size_t n_cmd = (size_t)(argc - cmd_at);
    char **aargv = calloc(n_cmd + 12, sizeof *aargv);
    int k = 0;
    aargv[k++] = self;
    aargv[k++] = "app";
    aargv[k++] = "--link-connect";
    aargv[k++] = (char *)app_link;
    aargv[k++] = "--secret-file";
    aargv[k++] = secret;
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
    app_pid = start(aargv);
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
    }
    app_pid = -1;
    if (!quiet)
        fprintf(stderr, "tincan run: %s ended (status %d) after %.2f s\n", argv[cmd_at], app_rc,
                (double)(clock_ns() - t0) / 1e9);
    rc = app_rc < 0 ? 1 : app_rc;
    wait_exit(display_pid, 5000);
out:
    stop(app_pid, SIGTERM);
    stop(display_pid, SIGTERM);
    stop(emu_pid, SIGTERM);
    stop(xvfb_pid, SIGTERM);
    unlink(secret);
    unlink(dsock + 5);
    unlink(lsock + 5);
    rmdir(dir);
    return rc;
}
