/* cli.h -- what the sub-commands share: link options, the session secret, signals,
 * and running a session's loop until it ends. */
#ifndef TINCAN_CLI_H
#define TINCAN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/version.h"
#include "link/codec.h"
#include "link/handshake.h"
#include "loop/loop.h"
#include "proxy/session.h"

/* `tincan ssh`'s exit status when tincan on HOST is missing or speaks another link
 * protocol version (documented in its --help and in tincan(1)). */
#define SSH_EXIT_REMOTE_TINCAN 125

struct link_opts {
    const char *listen;       /* --link-listen ADDR */
    const char *connect;      /* --link-connect ADDR */
    bool stdio;               /* --stdio: the link is stdin/stdout (under ssh) */
    const char *secret_file;  /* --secret-file F; else $TINCAN_SECRET */
    bool stats;               /* --stats: print statistics at exit */
    int compress_level;       /* --compress N: zstd level offered, 0 = none; CODEC_LEVEL_AUTO: by link speed */
    int link_speed;           /* --link-speed modem|isdn|adsl|lan|auto (enum codec_speed) */
    const char *cache_dir;    /* --cache-dir DIR; default $XDG_CACHE_HOME/tincan */
    bool no_cache;            /* --no-cache */
    uint64_t max_memory;      /* --max-memory SIZE: bytes this side may hold; 0: the default */
    long grace_s;             /* --grace SECONDS; -1: the default (link_opts_grace) */
};

/* Parses one of the shared options at argv[*i]; returns 1 if it was one, 0 if not, -1 on error. */
#define LINK_OPTS_INIT { .compress_level = CODEC_LEVEL_AUTO, .grace_s = -1 }
#define LINK_GRACE_DEFAULT_S 1200 /* 20 minutes: a lid closed over lunch is not an outage */
int link_opts_take(struct link_opts *o, int argc, char **argv, int *i);
/* Reads --compress's value: 0 (off) to 19. -1 if invalid (message printed). */
int parse_compress_level(const char *s);
/* Checks the combination; loads the secret when the link needs one. 0 or -1 (message printed). */
int link_opts_finish(struct link_opts *o, uint8_t *secret, size_t *secret_len, bool *use_secret);
void parse_log_level(const char *s);
/* Reads --max-memory's value: a byte count with an optional K, M or G (binary), at least
 * 16M. 0 if invalid (message printed). */
uint64_t parse_memory_size(const char *s);
/* Reads --link-speed's value; -1 if invalid (message printed). */
int parse_link_speed(const char *s);
/* How long a lost link may take to come back: --grace, else LINK_GRACE_DEFAULT_S; 0 with
 * --stdio, whose link nobody can bring back yet. */
uint32_t link_opts_grace(const struct link_opts *o);
/* Redials a lost link (the side given --link-connect): once per call when due, with a
 * doubling backoff capped at a few seconds. */
struct redial {
    uint64_t next_ns, backoff_ns;
};
void redial_tick(struct redial *r, struct session *s, const char *addr);
/* The compression cache directory the options ask for, written into buf; NULL for none. */
const char *link_opts_cache_dir(const struct link_opts *o, char *buf, size_t cap);
/* The --help lines of the outage option, shared by the halves. */
#define LINK_OPTS_GRACE_HELP \
    "  --grace SECONDS       when the link is lost, keep every program and wait this long for it to\n" \
    "                        come back (default 1200; 0: end the session at once; with --stdio, 0)\n"
/* The --help lines of the compression options, shared by the sub-commands. */
#define LINK_OPTS_COMPRESS_HELP \
    "  --link-speed SPEED    modem, isdn, adsl, lan or auto (default): the compression level to start\n" \
    "                        at; auto follows the measured link rate and turns compression down when\n" \
    "                        it costs more time than it saves\n" \
    "  --compress LEVEL      a fixed zstd level instead, 1-19, or 0 for none (both sides must offer it)\n" \
    "  --cache-dir DIR       the compression cache: a second session of a program sends references\n" \
    "                        to the first (default $XDG_CACHE_HOME/tincan or ~/.cache/tincan); the\n" \
    "                        display side also keeps there the font questions clients asked, and\n" \
    "                        asks them again at the next session's start (answers are never kept)\n" \
    "  --no-cache            neither use nor write the compression cache nor the font questions\n" \
    "  --max-memory SIZE     memory this side may hold, e.g. 64M (default), 512M: the compression\n" \
    "                        window is sized from it (2 MiB at 64M, 16 MiB from 512M), and above it\n" \
    "                        tincan stops reading from the X programs that flood it until the link\n" \
    "                        catches up (they wait, as on a slow X server)\n"

/* Signals arrive through a signalfd: SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGCHLD. */
int signals_open(void);
/* Reads one pending signal number, 0 if none. */
int signals_read(int sfd);

/* Starts argv with extra environment (NAME=VALUE strings, NULL-terminated), its stderr
 * sent to stderr_fd (-1: ours). Returns a pid or -errno. */
int spawn(char *const argv[], const char *const env[], int stderr_fd);

int cmd_app(int argc, char **argv);
int cmd_display(int argc, char **argv);
int cmd_ssh(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_attach(int argc, char **argv);

#endif
