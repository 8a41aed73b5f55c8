/* main.c -- tincan-link's command line: picks the mode, parses options into the mode's
 * settings, sets up signals (through a signalfd), and runs the mode. No link logic here. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>

#include "cell.h"
#include "clock.h"
#include "packet.h"
#include "params.h"
#include "stream.h"
#include "trace.h"

static void usage(FILE *out)
{
    fprintf(out,
"usage: tincan-link stream --listen ADDR --connect ADDR [--profile NAME] [LINK OPTIONS]\n"
"       tincan-link packet [--profile NAME] [LINK OPTIONS] [PACKET OPTIONS]   (root)\n"
"       tincan-link cell [CELL OPTIONS]                                       (root)\n"
"       tincan-link --list-profiles\n"
"\n"
"An emulated bad link for tests, benchmarks and demos.\n"
"  stream  relays every connection accepted on --listen to --connect, applying the\n"
"          link's rate (serialisation) and one-way delay per direction, with bounded\n"
"          buffering so back-pressure reaches the sender. No root needed. Loss is not\n"
"          applied (a byte stream cannot lose bytes); use packet mode for loss.\n"
"  packet  creates two network namespaces A and B joined through TUN devices and moves\n"
"          real IP packets between them through the emulated link. Run programs inside\n"
"          with: nsenter --net=/proc/PID/fd/N (paths in --info-file and on stderr).\n"
"          Namespaces and devices vanish with the process, even on SIGKILL.\n"
"  cell    creates a shared radio cell: a base namespace and N station namespaces whose\n"
"          packets share one medium under an 802.11b DCF or a MACA model (10.78.0.1 is\n"
"          the base, 10.78.0.1+I station I; the base forwards between stations).\n"
"  \"up\" is the direction listen -> connect (stream) or A -> B (packet); \"down\" the other.\n"
"\n"
"ADDR: HOST:PORT, [V6ADDR]:PORT, unix:PATH, unix:@ABSTRACT\n"
"\n"
"Link options (a profile sets some; options given after it override them):\n");
    emu_params_help(out);
    fprintf(out,
"\n"
"Stream options:\n"
"  --listen ADDR, --connect ADDR\n"
"  --stats-file F        key=value counters (up_bytes=N, down_bytes=N, ...) written\n"
"                        on SIGUSR1 and at exit; also printed on stderr\n"
"  --ready-file F        written once listening: listen=ADDR (port 0 picks one), pid=N\n"
"  --sockbuf N           SO_RCVBUF of the relay's sockets (default: small when rate-limited)\n"
"  --no-handshake-delay  connect upstream at once, not 1.5 RTT later as TCP would\n"
"\n"
"Packet options:\n"
"  --addr-a IP, --addr-b IP   addresses of the two ends (default 10.77.0.1, 10.77.0.2)\n"
"  --host-b              side B is the current (host) namespace instead of a new one\n"
"  --info-file F         written when ready: pid, ns_a, ns_b, dev_a, dev_b, addr_a, addr_b\n"
"  --stats-file F        as above, with per-direction drops by cause and delay percentiles\n"
"  --pcap F              write every delivered packet to F (pcap, raw IP)\n"
"  --ipv6                keep IPv6 on the TUN devices (off by default: no stray traffic)\n"
"  --no-tcp-timestamps   net.ipv4.tcp_timestamps=0 in the namespaces (a stack of RFC 1144's era)\n"
"\n"
"\n");
    emu_cell_help(out);
    fprintf(out,
"\n"
"Common: -v (verbose), -h/--help, --list-profiles\n"
"Signals: SIGTERM/SIGINT stop (report, clean up); SIGUSR1 writes the report.\n");
}

struct cli {
    const char *mode;
    struct emu_params params;
    struct emu_stream_opts stream;
    struct emu_packet_opts packet;
};

typedef int (*opt_fn)(struct cli *c, const char *value);

static int o_listen(struct cli *c, const char *v) { c->stream.listen = v; return 0; }
static int o_connect(struct cli *c, const char *v) { c->stream.connect = v; return 0; }
static int o_stats(struct cli *c, const char *v) { c->stream.stats_file = c->packet.stats_file = v; return 0; }
static int o_ready(struct cli *c, const char *v) { c->stream.ready_file = v; return 0; }
static int o_sockbuf(struct cli *c, const char *v)
{
    uint64_t n;
    if (emu_parse_u64(v, &n) || n > (1u << 30)) return -EINVAL;
    c->stream.sockbuf_bytes = n ? (int)n : -1;
    return 0;
}
static int o_no_hs(struct cli *c, const char *v) { c->stream.handshake_delay = false; return 0; }
static int o_addr_a(struct cli *c, const char *v) { c->packet.addr_a = v; return 0; }
static int o_addr_b(struct cli *c, const char *v) { c->packet.addr_b = v; return 0; }
static int o_host_b(struct cli *c, const char *v) { c->packet.host_b = 1; return 0; }
static int o_info(struct cli *c, const char *v) { c->packet.info_file = v; return 0; }
static int o_pcap(struct cli *c, const char *v) { c->packet.pcap_file = v; return 0; }
static int o_ipv6(struct cli *c, const char *v) { c->packet.keep_ipv6 = 1; return 0; }
static int o_no_ts(struct cli *c, const char *v) { c->packet.no_tcp_timestamps = 1; return 0; }
static int o_verbose(struct cli *c, const char *v) { c->stream.verbose = c->packet.verbose = 1; return 0; }

struct mode_opt { const char *name; const char *mode; int flag; opt_fn fn; };
static const struct mode_opt mode_opts[] = {
    { "--listen", "stream", 0, o_listen },
    { "--connect", "stream", 0, o_connect },
    { "--ready-file", "stream", 0, o_ready },
    { "--sockbuf", "stream", 0, o_sockbuf },
    { "--no-handshake-delay", "stream", 1, o_no_hs },
    { "--stats-file", NULL, 0, o_stats },
    { "--addr-a", "packet", 0, o_addr_a },
    { "--addr-b", "packet", 0, o_addr_b },
    { "--host-b", "packet", 1, o_host_b },
    { "--info-file", "packet", 0, o_info },
    { "--pcap", "packet", 0, o_pcap },
    { "--ipv6", "packet", 1, o_ipv6 },
    { "--no-tcp-timestamps", "packet", 1, o_no_ts },
    { "-v", NULL, 1, o_verbose },
    { "--verbose", NULL, 1, o_verbose },
    { NULL, NULL, 0, NULL },
};

static const struct mode_opt *find_mode_opt(const char *name)
{
    for (const struct mode_opt *m = mode_opts; m->name; m++)
        if (strcmp(m->name, name) == 0) return m;
    return NULL;
}

/* Applies one option name (with its value, or NULL for a flag). 0 or -EINVAL. */
static int apply_option(struct cli *c, const char *name, const char *value)
{
    if (strcmp(name, "--profile") == 0) {
        if (emu_params_apply_profile(&c->params, value) == 0) return 0;
        fprintf(stderr, "tincan-link: unknown profile '%s' (see --list-profiles)\n", value);
        return -EINVAL;
    }
    const struct mode_opt *m = find_mode_opt(name);
    if (m) {
        if (m->mode && strcmp(m->mode, c->mode) != 0) {
            fprintf(stderr, "tincan-link: %s is an option of %s mode only\n", name, m->mode);
            return -EINVAL;
        }
        if (m->fn(c, value) == 0) return 0;
        fprintf(stderr, "tincan-link: bad value '%s' for %s\n", value, name);
        return -EINVAL;
    }
    return emu_params_set(&c->params, name, value);
}

static int takes_value(const char *name)
{
    const struct mode_opt *m = find_mode_opt(name);
    if (m) return !m->flag;
    if (strcmp(name, "--profile") == 0) return 1;
    return !emu_params_is_flag(name);
}

/* An argument NAME or NAME=VALUE: its name into name (cut to 63 bytes); returns the '=' or NULL. */
static const char *split_option(const char *arg, char name[64])
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n > 63) n = 63;
    memcpy(name, arg, n);
    name[n] = 0;
    return eq;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        char name[64];
        const char *arg = argv[i], *eq = split_option(arg, name), *value = NULL;
        if (strcmp(name, "--profile") != 0 && !find_mode_opt(name) && !emu_params_knows(name)) {
            fprintf(stderr, "tincan-link: unknown option '%s' (see --help)\n", arg);
            return -EINVAL;
        }
        if (eq) value = eq + 1;
        else if (takes_value(name)) {
            if (i + 1 >= argc) { fprintf(stderr, "tincan-link: %s needs a value\n", name); return -EINVAL; }
            value = argv[++i];
        }
        if (apply_option(c, name, value) < 0) return -EINVAL;
    }
    return 0;
}

/* Cell mode has its own options (cell.c); same NAME VALUE / NAME=VALUE forms. */
static int parse_cell_args(struct emu_cell_opts *o, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        char name[64];
        const char *arg = argv[i], *eq = split_option(arg, name), *value = NULL;
        if (eq) value = eq + 1;
        else if (!emu_cell_option_is_flag(name)) {
            if (i + 1 >= argc) { fprintf(stderr, "tincan-link: %s needs a value\n", name); return -EINVAL; }
            value = argv[++i];
        }
        int rc = emu_cell_option(o, name, value);
        if (rc == -ENOENT) { fprintf(stderr, "tincan-link: unknown cell option '%s' (see --help)\n", arg); return rc; }
        if (rc < 0) { fprintf(stderr, "tincan-link: bad value '%s' for %s\n", value, name); return rc; }
    }
    return 0;
}

static int open_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) return -errno;
    signal(SIGPIPE, SIG_IGN);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--list-profiles") == 0 || strcmp(argv[1], "list-profiles") == 0) {
        emu_profiles_print(stdout);
        return 0;
    }
    static struct cli c;
    c.mode = argv[1];
    if (strcmp(c.mode, "stream") != 0 && strcmp(c.mode, "packet") != 0 && strcmp(c.mode, "cell") != 0) {
        fprintf(stderr, "tincan-link: unknown mode '%s': use stream, packet or cell (see --help)\n", c.mode);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) { usage(stdout); return 0; }
    if (strcmp(c.mode, "cell") == 0) {
        static struct emu_cell_opts co;
        emu_cell_opts_default(&co);
        if (parse_cell_args(&co, argc, argv) < 0) return 2;
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        int fd = open_signals();
        if (fd < 0) { fprintf(stderr, "tincan-link: signalfd: %s\n", strerror(-fd)); return 1; }
        return emu_cell_run(&co, fd) < 0 ? 1 : 0;
    }
    emu_params_default(&c.params);
    c.stream.handshake_delay = true;
    if (parse_args(&c, argc, argv) < 0) return 2;
    int64_t t0 = emu_now_ns();                                /* trace time 0: the link starts now */
    for (int d = 0; d < EMU_NDIR; d++)
        if (c.params.dir[d].trace) c.params.dir[d].trace->epoch_ns = t0;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);                   /* wake up on time, to the us */
    int sig_fd = open_signals();
    if (sig_fd < 0) { fprintf(stderr, "tincan-link: signalfd: %s\n", strerror(-sig_fd)); return 1; }
    int rc;
    if (strcmp(c.mode, "stream") == 0) {
        if (!c.stream.listen || !c.stream.connect) {
            fprintf(stderr, "tincan-link: stream mode needs --listen and --connect\n");
            return 2;
        }
        rc = emu_stream_run(&c.params, &c.stream, sig_fd);
    } else {
        rc = emu_packet_run(&c.params, &c.packet, sig_fd);
    }
    return rc < 0 ? 1 : 0;
}
