/* main.c -- the tincan command: picks the sub-command. Each lives in src/cli/. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "link/handshake.h"
#include "xproto_tables.h"

/* `tincan version [--porcelain]`: --porcelain is for scripts, and for `tincan ssh` asking
 * what the other machine runs. */
static int cmd_version(int argc, char **argv)
{
    bool porcelain = argc == 1 && !strcmp(argv[0], "--porcelain");
    if (argc > 1 || (argc == 1 && !porcelain)) {
        bool help = !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h");
        fputs("usage: tincan version [--porcelain]\n"
              "\n"
              "Prints the release and the link protocol version (both sides of a session must speak\n"
              "the same).\n"
              "  --porcelain           one \"key value\" per line: version, protocol, xcb-proto\n",
              help ? stdout : stderr);
        return help ? 0 : 2;
    }
    if (porcelain)
        printf("version %s\nprotocol %d\nxcb-proto %s\n", TINCAN_VERSION, LINK_PROTOCOL_VERSION, XP_XCB_PROTO_VERSION);
    else
        printf("tincan %s (link protocol %d, X tables from xcb-proto %s)\n", TINCAN_VERSION, LINK_PROTOCOL_VERSION,
               XP_XCB_PROTO_VERSION);
    return 0;
}

static const char usage[] =
    "usage: tincan COMMAND [options]\n"
    "\n"
    "tincan carries X11 programs over slow, lossy, high-latency links.\n"
    "\n"
    "  tincan ssh [ssh options] HOST COMMAND...   run COMMAND on HOST, shown on this display\n"
    "  tincan run [options] -- COMMAND...         run COMMAND through tincan on this machine,\n"
    "                                             over an emulated link (a demo and a benchmark)\n"
    "  tincan app [options] [-- COMMAND...]       the half beside the applications\n"
    "  tincan display [options]                   the half beside the X server\n"
    "  tincan secret FILE                         create a session secret for a TCP link\n"
    "  tincan info [--json] [PID]                 the live state of this user's running sessions\n"
    "  tincan version [--porcelain]               the release and the link protocol version\n"
    "  tincan attach ID                           join stdin/stdout to a detached session here\n"
    "                                             (what tincan ssh runs to bring one back)\n"
    "\n"
    "`tincan COMMAND --help` describes each.\n";

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* Buffers of 128 KiB and more get their own mappings, returned when freed. glibc would
     * otherwise raise this threshold after each such free (up to 32 MiB) and keep freed
     * message buffers in its heap: memory the session's bound (--max-memory) no longer counts. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "app"))
        return cmd_app(argc - 2, argv + 2);
    if (!strcmp(cmd, "display"))
        return cmd_display(argc - 2, argv + 2);
    if (!strcmp(cmd, "ssh"))
        return cmd_ssh(argc - 2, argv + 2);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "attach"))
        return cmd_attach(argc - 2, argv + 2);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version"))
        return cmd_version(argc - 2, argv + 2);
    if (!strcmp(cmd, "secret")) {
        if (argc != 3) {
            fprintf(stderr, "usage: tincan secret FILE\n");
            return 2;
        }
        int rc = secret_create_file(argv[2]);
        if (rc < 0) {
            fprintf(stderr, "tincan: cannot create %s: %s\n", argv[2], strerror(-rc));
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "tincan: unknown command \"%s\"\n\n%s", cmd, usage);
    return 2;
}
