/* test_replay.c -- a recorded session replayed through both halves in one process, and the
 * link streams it produces compared with the digest kept beside the recording.
 *
 * Why: the proxy is restructured from time to time (files split, calls turned into
 * listeners); the link streams of a real session must stay byte for byte what they were.
 * tests/replay/record.sh records a real session (twm, xterm, xlogo, xcalc on an Xvfb) at
 * both ends: the programs' connections to the app side (NAME.client.cap) and the display
 * side's connections to the server (NAME.server.cap). Here, scripted programs write the
 * recorded requests and a scripted server answers with the recorded replies and events, in
 * lockstep: a recorded record is written once its connection has received what preceded it
 * in the recording, and records go in their recorded order across connections. The
 * sessions run on a fake clock advanced per turn, with everything that draws at random or
 * reads the environment fixed, so that the streams are a pure function of the recording
 * and the code. NAME.links holds the streams' lengths and digests.
 *
 * When the link's wire format changes on purpose (a new protocol version), the digest is
 * written again: `build/tests/test_replay --bless` (and the commit says why). Any other
 * change of the digest is a change of behaviour.
 *
 * Usage: test_replay [--bless] [--dump DIR] [NAME...]   (default: every recording in tests/replay) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/buf.h"
#include "common/log.h"
#include "link/codec.h"
#include "proxy/session.h"
#include "test.h"

#define REPLAY_DIR "tests/replay"
#define MAX_CONNS 64
#define STALL_TURNS 300   /* a record whose prerequisite has not come after this many turns goes anyway */
#define QUIET_TURNS 400   /* the end: this many turns without a byte moving */
#define TURN_NS 1000000u  /* the fake clock advances 1 ms a turn */

static uint64_t fake_now = 1000000000;
static uint64_t replay_start_ns = 1000000000;
static uint64_t fake_clock(void) { return fake_now; }

#include "replay_script.h"

/* --- the rig: both halves, the link between them teed --- */

struct replay {
    struct loop *app_loop, *disp_loop;
    struct session *app, *disp;
    int tee_app, tee_disp;            /* the tee's ends of the halves' links */
    struct buf to_disp, to_app;       /* what crossed the link, each way */
    struct script programs;
    struct server_conn srv[MAX_CONNS]; /* recorded server connections, in the order they opened */
    unsigned n_srv;
    struct live_conn live[MAX_CONNS];  /* the display side's connections, in the order it opened them */
    unsigned n_live;
    struct server_conn *observer_conn; /* the recorded connection the observer opened (the second) */
};

/* The display side connects upstream. The n-th connection gets the n-th recorded one's
 * setup reply (its resource-id base), written at once: the observer reads its setup reply
 * before its loop runs (a bounded wait). Its requests are then answered from any recorded
 * connection that has them (a spare may be claimed by another client than in the recording). */
static int replay_connect(void *ctx)
{
    struct replay *rp = ctx;
    if (rp->n_live == rp->n_srv || rp->n_live == MAX_CONNS)
        return -ECONNREFUSED;
    struct server_conn *c = &rp->srv[rp->n_live];
    struct live_conn *l = &rp->live[rp->n_live++];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
        return -errno;
    l->fd = sv[1];
    l->msb = c->msb;
    l->affinity = c;
    c->live = l;
    live_send(l, buf_head(&c->s2c), c->setup_reply_len);
    return sv[0];
}

static int program_open(void *ctx, uint32_t conn)
{
    struct replay *rp = ctx;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
        return -errno;
    rp->programs.conn[conn].fd = sv[1];
    rp->programs.conn[conn].opened = true;
    session_add_client(rp->app, sv[0]);
    return 0;
}

static size_t tee_move(int from, int to, struct buf *log)
{
    uint8_t tmp[65536];
    ssize_t n;
    size_t total = 0;
    while ((n = read(from, tmp, sizeof tmp)) > 0) {
        size_t off = 0;
        while (off < (size_t)n) {
            ssize_t w = write(to, tmp + off, (size_t)n - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        CHECK_EQ(buf_append(log, tmp, (size_t)n), 0);
        total += (size_t)n;
    }
    return total;
}

/* The cookie the recorded programs present: from the first setup request. */
static void recorded_cookie(const struct capture *c, uint8_t cookie[16])
{
    memset(cookie, 0, 16);
    for (size_t i = 0; i < c->n; i++) {
        const struct record *r = &c->rec[i];
        if (r->dir != 0 || r->len < 12)
            continue;
        bool msb = r->data[0] == 'B';
        uint16_t nlen = msb ? (uint16_t)(r->data[6] << 8 | r->data[7]) : (uint16_t)(r->data[7] << 8 | r->data[6]);
        uint16_t dlen = msb ? (uint16_t)(r->data[8] << 8 | r->data[9]) : (uint16_t)(r->data[9] << 8 | r->data[8]);
        size_t at = 12 + (((size_t)nlen + 3) & ~(size_t)3);
        if (dlen == 16 && at + 16 <= r->len)
            memcpy(cookie, r->data + at, 16);
        return;
    }
}

static uint64_t fnv1a(const struct buf *b)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < b->len; i++)
        h = (h ^ buf_head(b)[i]) * 0x100000001b3ull;
    return h;
}

struct outcome {
    uint64_t to_disp_len, to_disp_hash, to_app_len, to_app_hash;
    double programs_read;    /* of what the programs read in the recording, the share they read here */
    uint64_t observer_matched; /* requests of the observer's recorded connection matched */
    double server_unmatched; /* of the requests the server read, the share the recording does not answer */
    double events_sent;      /* of the recorded events, the share sent */
    unsigned stalls;
    size_t records, played_programs;
};

static int replay_run(const char *name, bool observe, const char *dump_dir, struct outcome *out)
{
    struct capture cl, sv;
    int rc;
    if ((rc = capture_load(&cl, name, "client")) < 0 || (rc = capture_load(&sv, name, "server")) < 0) {
        fprintf(stderr, "  %s: cannot load its recording (%s)\n", name, strerror(-rc));
        return rc;
    }
    struct replay *rp = calloc(1, sizeof *rp);
    script_init(&rp->programs, &cl, 0);
    /* Connections in the order they opened (capture.py numbers them so). One closed before
     * its first byte is the display command's check that the server is there (cmd_display.c),
     * not the session's. */
    for (uint32_t id = 1; id < MAX_CONNS; id++) {
        bool data = false;
        for (size_t i = 0; i < sv.n && !data; i++)
            data = sv.rec[i].conn == id && sv.rec[i].dir != 2;
        if (data) {
            rp->srv[rp->n_srv].id = id;
            server_conn_parse(&rp->srv[rp->n_srv++], &sv);
        }
    }

    all_conns = rp->srv;
    n_all_conns = rp->n_srv;
    rp->observer_conn = rp->n_srv > 1 ? &rp->srv[1] : NULL; /* session.c: the spare, then the observer */
    int app_link[2], disp_link[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, app_link);
    socketpair(AF_UNIX, SOCK_STREAM, 0, disp_link);
    rp->tee_app = app_link[1];
    rp->tee_disp = disp_link[1];
    fcntl(rp->tee_app, F_SETFL, O_NONBLOCK);
    fcntl(rp->tee_disp, F_SETFL, O_NONBLOCK);
    loop_new(&rp->app_loop);
    loop_new(&rp->disp_loop);
    uint8_t app_token[HS_TOKEN_SIZE], disp_token[HS_TOKEN_SIZE];
    memset(app_token, 0xa1, sizeof app_token);
    memset(disp_token, 0xd2, sizeof disp_token);
    fake_now = replay_start_ns;
    struct session_config ac = { .role = ROLE_APP, .compress_level = 3, .link_speed = CODEC_SPEED_ADSL,
                                 .no_locale_hint = true, .no_font_hint = true, .clock = fake_clock,
                                 .token = app_token };
    recorded_cookie(&cl, ac.cookie);
    struct session_config dc = { .role = ROLE_DISPLAY, .compress_level = 3, .link_speed = CODEC_SPEED_ADSL,
                                 .observe = observe, .clock = fake_clock, .token = disp_token,
                                 .connect_upstream = replay_connect, .connect_ctx = rp };
    session_new(&rp->app, rp->app_loop, &ac, app_link[0], app_link[0]);
    session_new(&rp->disp, rp->disp_loop, &dc, disp_link[0], disp_link[0]);

    unsigned quiet = 0;
    for (long turn = 0; turn < 2000000 && quiet < QUIET_TURNS; turn++) {
        size_t moved = 0;
        moved += script_play(&rp->programs, program_open, rp);
        loop_run_once(rp->app_loop, 0);
        moved += tee_move(rp->tee_app, rp->tee_disp, &rp->to_disp);
        loop_run_once(rp->disp_loop, 0);
        moved += tee_move(rp->tee_disp, rp->tee_app, &rp->to_app);
        session_tick(rp->app);
        session_tick(rp->disp);
        moved += script_read(&rp->programs);
        for (unsigned i = 0; i < rp->n_live; i++) {
            struct live_conn *l = &rp->live[i];
            moved += live_turn(l, rp->srv, rp->n_srv);
            if (l->eof && l->fd >= 0) {
                close(l->fd);
                l->fd = -1;
            }
        }
        for (unsigned i = 0; i < rp->n_srv; i++)
            moved += server_send_events(&rp->srv[i], -1);
        fake_now += TURN_NS;
        bool done = rp->programs.next == cl.n;
        quiet = moved || !done ? 0 : quiet + 1;
    }

    uint64_t pr = 0, requests = 0, unmatched = 0, events = 0, events_sent = 0, observer_matched = 0;
    for (int i = 0; i < MAX_CONNS; i++) {
        const struct script_conn *c = &rp->programs.conn[i];
        pr += c->in_seen < c->expect_in.len ? c->in_seen : c->expect_in.len;
        if (getenv("REPLAY_VERBOSE") && (c->opened || c->expect_in.len))
            fprintf(stderr, "  program %d: read %llu of %zu recorded bytes, %llu matching\n", i,
                    (unsigned long long)c->in_seen, c->expect_in.len, (unsigned long long)c->in_matching);
    }
    for (unsigned i = 0; i < rp->n_srv; i++) {
        const struct server_conn *c = &rp->srv[i];
        uint32_t ev = 0, ev_sent = 0, answered = 0;
        for (uint32_t k = 0; k < c->n_msg; k++)
            if (c->msg[k].request < 0) {
                ev++;
                ev_sent += c->msg[k].sent;
            }
        for (uint32_t k = 0; k < c->n_req; k++)
            answered += c->req[k].answered;
        events += ev;
        events_sent += ev_sent;
        if (c == rp->observer_conn)
            observer_matched = answered;
        if (getenv("REPLAY_VERBOSE"))
            fprintf(stderr, "  recorded server connection %u: %u of %u requests matched; %u of %u events sent\n", c->id,
                    answered, c->n_req, ev_sent, ev);
    }
    for (unsigned i = 0; i < rp->n_live; i++) {
        struct live_conn *l = &rp->live[i];
        requests += l->requests;
        unmatched += l->unmatched;
        if (getenv("REPLAY_VERBOSE"))
            fprintf(stderr, "  replayed server connection %u: %llu requests, %llu unmatched\n", i,
                    (unsigned long long)l->requests, (unsigned long long)l->unmatched);
        if (l->fd >= 0)
            close(l->fd);
        buf_free(&l->in);
    }
    *out = (struct outcome){
        .to_disp_len = rp->to_disp.len, .to_disp_hash = fnv1a(&rp->to_disp),
        .to_app_len = rp->to_app.len, .to_app_hash = fnv1a(&rp->to_app),
        .programs_read = rp->programs.in_expected ? (double)pr / (double)rp->programs.in_expected : 1,
        .observer_matched = observer_matched,
        .server_unmatched = requests ? (double)unmatched / (double)requests : 1,
        .events_sent = events ? (double)events_sent / (double)events : 1,
        .stalls = rp->programs.stalls,
        .records = cl.n, .played_programs = rp->programs.next,
    };
    if (dump_dir) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.%s.to-display", dump_dir, name, observe ? "observer" : "no-observer");
        FILE *f = fopen(path, "wb");
        if (f) { fwrite(buf_head(&rp->to_disp), 1, rp->to_disp.len, f); fclose(f); }
        snprintf(path, sizeof path, "%s/%s.%s.to-app", dump_dir, name, observe ? "observer" : "no-observer");
        if ((f = fopen(path, "wb"))) { fwrite(buf_head(&rp->to_app), 1, rp->to_app.len, f); fclose(f); }
    }

    session_free(rp->app);
    session_free(rp->disp);
    loop_free(rp->app_loop);
    loop_free(rp->disp_loop);
    close(rp->tee_app);
    close(rp->tee_disp);
    script_free(&rp->programs);
    for (unsigned i = 0; i < rp->n_srv; i++)
        server_conn_free(&rp->srv[i]);
    buf_free(&rp->to_disp);
    buf_free(&rp->to_app);
    free(rp);
    capture_free(&cl);
    capture_free(&sv);
    return 0;
}

/* NAME.links: a line per replay, "VARIANT to-display LEN HASH to-app LEN HASH" (hex hashes). */
static const char *const variant_name[2] = { "no-observer", "observer" };

static int digest_read(const char *name, struct outcome want[2])
{
    char path[512], variant[32];
    snprintf(path, sizeof path, "%s/%s.links", REPLAY_DIR, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -ENOENT;
    unsigned long long a, b, c, d;
    int found = 0;
    while (fscanf(f, "%31s to-display %llu %llx to-app %llu %llx\n", variant, &a, &b, &c, &d) == 5)
        for (int v = 0; v < 2; v++)
            if (strcmp(variant, variant_name[v]) == 0) {
                want[v] = (struct outcome){ .to_disp_len = a, .to_disp_hash = b, .to_app_len = c, .to_app_hash = d };
                found |= 1 << v;
            }
    fclose(f);
    return found == 3 ? 0 : -EINVAL;
}

static int digest_write(const char *name, const struct outcome got[2])
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.links", REPLAY_DIR, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    for (int v = 0; v < 2; v++)
        fprintf(f, "%s to-display %llu %016llx to-app %llu %016llx\n", variant_name[v],
                (unsigned long long)got[v].to_disp_len, (unsigned long long)got[v].to_disp_hash,
                (unsigned long long)got[v].to_app_len, (unsigned long long)got[v].to_app_hash);
    return fclose(f) == 0 ? 0 : -EIO;
}

static bool same_streams(const struct outcome *a, const struct outcome *b)
{
    return a->to_disp_len == b->to_disp_len && a->to_disp_hash == b->to_disp_hash && a->to_app_len == b->to_app_len &&
           a->to_app_hash == b->to_app_hash;
}

/* Two replays of each recording. Without the observer the scripted server answers every
 * request: the whole session is carried, and checked to be. With it, the observer's
 * start-up probes (hundreds of requests) are answered, but its later questions depend on
 * the order of events across connections, which a recording cannot reproduce exactly: its
 * probes then wait, clients' setups with them, and what this replay checks is the
 * start-up and the clients' requests coded onto the link. Both are deterministic. */
static void replay_one(const char *name, bool bless, const char *dump_dir)
{
    struct outcome got[2] = { 0 }, again = { 0 }, want[2] = { 0 };
    static char sentence[256];
    for (int v = 0; v < 2; v++) {
        struct outcome *o = &got[v];
        snprintf(sentence, sizeof sentence, "That the recorded session %s replays through both halves (%s)", name,
                 variant_name[v]);
        TEST(sentence) {
            CHECK_EQ(replay_run(name, v == 1, dump_dir, o), 0);
            printf("  %s, %s: %zu of %zu program records played, %u stalls; link %llu B to the display side, %llu B "
                   "to the app side; the programs read %.1f%% of the bytes they read in the recording; the server "
                   "found no recorded answer for %.1f%% of its requests and sent %.1f%% of the recorded events; "
                   "%llu of the observer's recorded requests matched\n",
                   name, variant_name[v], o->played_programs, o->records, o->stalls,
                   (unsigned long long)o->to_disp_len, (unsigned long long)o->to_app_len, 100 * o->programs_read,
                   100 * o->server_unmatched, 100 * o->events_sent, (unsigned long long)o->observer_matched);
            /* The replay must carry the session, not derail into noise. */
            CHECK(o->played_programs == o->records);
            CHECK(o->server_unmatched < 0.01);
            CHECK(o->to_disp_len > 10000);
            if (v == 0) {
                CHECK(o->programs_read > 0.95);
                CHECK(o->events_sent > 0.95);
                CHECK(o->to_app_len > 5000);
            } else {
                CHECK(o->observer_matched > 500);
            }
        }
        snprintf(sentence, sizeof sentence, "That replaying %s twice gives the same link streams (%s)", name,
                 variant_name[v]);
        TEST(sentence) {
            CHECK_EQ(replay_run(name, v == 1, NULL, &again), 0);
            CHECK(same_streams(&again, o));
        }
    }
    if (bless) {
        TEST("That the link streams' digest is written (--bless)")
            CHECK_EQ(digest_write(name, got), 0);
        return;
    }
    snprintf(sentence, sizeof sentence, "That %s's link streams are byte for byte those of %s.links", name, name);
    TEST(sentence) {
        CHECK_EQ(digest_read(name, want), 0);
        for (int v = 0; v < 2; v++) {
            CHECK(same_streams(&got[v], &want[v]));
            if (!same_streams(&got[v], &want[v]))
                fprintf(stderr, "  %s (%s): the link streams changed. If the wire format changed on purpose, run\n"
                                "  `build/tests/test_replay --bless %s` from the top of the tree and say why in the\n"
                                "  commit; `--dump DIR` writes the streams\n",
                        name, variant_name[v], name);
        }
    }
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN); /* a closed connection's write fails with EPIPE, as in tincan */
    setenv("XAUTHORITY", "/nonexistent", 1); /* no cookie of the machine's may enter the streams */
    if (getenv("REPLAY_VERBOSE"))
        log_setup(LOG_DEBUG, "tincan");
    bool bless = false;
    const char *dump_dir = NULL;
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (strcmp(argv[first], "--bless") == 0)
            bless = true;
        else if (strcmp(argv[first], "--dump") == 0 && first + 1 < argc)
            dump_dir = argv[++first];
        else {
            fprintf(stderr, "usage: test_replay [--bless] [--dump DIR] [NAME...]\n");
            return 2;
        }
    }
    if (first < argc) {
        for (int i = first; i < argc; i++)
            replay_one(argv[i], bless, dump_dir);
        return test_summary();
    }
    DIR *d = opendir(REPLAY_DIR);
    TEST("That the recordings are found (run from the source tree's top)")
        CHECK(d != NULL);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        const char *suffix = ".client.cap.zst";
        size_t sl = strlen(suffix);
        if (n > sl && strcmp(e->d_name + n - sl, suffix) == 0) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(n - sl), e->d_name);
            replay_one(name, bless, dump_dir);
        }
    }
    if (d)
        closedir(d);
    return test_summary();
}
