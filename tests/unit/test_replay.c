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

/* --- the capture file (bench/xcodec/capture.py): "TCXCAP1\n", then records of
 * conn:u32le dir:u8 (0 client->server, 1 server->client, 2 close) t_ns:u64le len:u32le bytes --- */

struct record {
    uint32_t conn;
    uint8_t dir;
    uint64_t t_ns;
    const uint8_t *data;
    uint32_t len;
};

struct capture {
    uint8_t *file;
    size_t file_len;
    struct record *rec;
    size_t n;
};

static int read_whole(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    struct stat st;
    fstat(fd, &st);
    uint8_t *p = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    ssize_t n;
    while (got < (size_t)st.st_size && (n = read(fd, p + got, (size_t)st.st_size - got)) > 0)
        got += (size_t)n;
    close(fd);
    *out = p;
    *len = got;
    return 0;
}

/* Loads NAME.SIDE.cap.zst (as committed) or NAME.SIDE.cap (fresh from record.sh). */
static int capture_load(struct capture *c, const char *name, const char *side)
{
    char path[512];
    uint8_t *raw;
    size_t raw_len;
    memset(c, 0, sizeof *c);
    snprintf(path, sizeof path, "%s/%s.%s.cap.zst", REPLAY_DIR, name, side);
    if (read_whole(path, &raw, &raw_len) == 0) {
        unsigned long long size = ZSTD_getFrameContentSize(raw, raw_len);
        if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > (1u << 30)) {
            free(raw);
            return -EINVAL;
        }
        c->file = malloc(size);
        size_t n = ZSTD_decompress(c->file, size, raw, raw_len);
        free(raw);
        if (ZSTD_isError(n))
            return -EINVAL;
        c->file_len = n;
    } else {
        snprintf(path, sizeof path, "%s/%s.%s.cap", REPLAY_DIR, name, side);
        if (read_whole(path, &c->file, &c->file_len) < 0)
            return -ENOENT;
    }
    if (c->file_len < 8 || memcmp(c->file, "TCXCAP1\n", 8) != 0)
        return -EINVAL;
    size_t cap = 1024;
    c->rec = malloc(cap * sizeof *c->rec);
    for (size_t p = 8; p + 17 <= c->file_len;) {
        const uint8_t *h = c->file + p;
        struct record r = { .conn = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24,
                            .dir = h[4] };
        for (int i = 0; i < 8; i++)
            r.t_ns |= (uint64_t)h[5 + i] << (8 * i);
        r.len = (uint32_t)h[13] | (uint32_t)h[14] << 8 | (uint32_t)h[15] << 16 | (uint32_t)h[16] << 24;
        p += 17;
        if (r.len > c->file_len - p || r.conn == 0 || r.conn >= MAX_CONNS || r.dir > 2)
            return -EINVAL;
        r.data = c->file + p;
        p += r.len;
        if (c->n == cap)
            c->rec = realloc(c->rec, (cap *= 2) * sizeof *c->rec);
        c->rec[c->n++] = r;
    }
    return 0;
}

static void capture_free(struct capture *c)
{
    free(c->file);
    free(c->rec);
}

/* --- one side of the replay: the scripted programs (the app side's clients) or the scripted
 * server (the display side's upstream connections). `out` is the direction the script writes
 * (client->server for programs, server->client for the server), `in` the one it reads. --- */

static uint64_t fake_now = 1000000000;
static uint64_t replay_start_ns = 1000000000;
static uint64_t fake_clock(void) { return fake_now; }

struct script_conn {
    int fd;                  /* the script's end; -1 before it opens or after it closes */
    bool opened, closed;
    bool eof;                /* the proxy closed its end */
    bool foreign;            /* not the session's (a probe of the command's): its records are skipped */
    uint64_t in_seen;        /* bytes read from the proxy on this connection */
    struct buf expect_in;    /* what the recording says the proxy wrote on it */
    uint64_t in_matching;    /* of in_seen, bytes equal to the recording's at the same offset */
};

struct script {
    const struct capture *cap;
    uint8_t out_dir;                  /* the direction this script writes */
    size_t next;                      /* the next record to play (in recorded order) */
    struct script_conn conn[MAX_CONNS];
    uint64_t *prereq;                 /* per record: bytes its connection must have read first */
    bool *played;                     /* per record: played early (a setup reply) */
    unsigned waited;                  /* turns the next record has waited */
    unsigned stalls;                  /* records played although their prerequisite had not come */
    uint64_t out_bytes, in_bytes, in_expected;
};

static void script_init(struct script *s, const struct capture *cap, uint8_t out_dir)
{
    memset(s, 0, sizeof *s);
    s->cap = cap;
    s->out_dir = out_dir;
    s->prereq = calloc(cap->n + 1, sizeof *s->prereq);
    s->played = calloc(cap->n + 1, sizeof *s->played);
    uint64_t seen[MAX_CONNS] = { 0 };
    for (size_t i = 0; i < cap->n; i++) {
        const struct record *r = &cap->rec[i];
        s->prereq[i] = seen[r->conn];
        if (r->dir != out_dir && r->dir != 2) {
            seen[r->conn] += r->len;
            CHECK_EQ(buf_append(&s->conn[r->conn].expect_in, r->data, r->len), 0);
            s->in_expected += r->len;
        }
    }
    for (int i = 0; i < MAX_CONNS; i++)
        s->conn[i].fd = -1;
}

static void script_free(struct script *s)
{
    for (int i = 0; i < MAX_CONNS; i++) {
        if (s->conn[i].fd >= 0)
            close(s->conn[i].fd);
        buf_free(&s->conn[i].expect_in);
    }
    free(s->prereq);
    free(s->played);
}

/* Reads what the proxy wrote on every open connection; returns the byte count. */
static size_t script_read(struct script *s)
{
    size_t total = 0;
    uint8_t tmp[65536];
    for (int i = 0; i < MAX_CONNS; i++) {
        struct script_conn *c = &s->conn[i];
        ssize_t n;
        while (c->fd >= 0 && !c->eof && (n = read(c->fd, tmp, sizeof tmp)) >= 0) {
            if (n == 0) {
                c->eof = true;
                break;
            }
            for (ssize_t k = 0; k < n; k++) {
                uint64_t at = c->in_seen + (uint64_t)k;
                if (at < c->expect_in.len && buf_head(&c->expect_in)[at] == tmp[k])
                    c->in_matching++;
            }
            c->in_seen += (uint64_t)n;
            total += (size_t)n;
        }
    }
    s->in_bytes += total;
    return total;
}

/* Plays the records whose turn has come. open_conn gives a program's connection its fd (the
 * server's are opened by the proxy, through connect_upstream). Returns records played. */
static size_t script_play(struct script *s, int (*open_conn)(void *ctx, uint32_t conn), void *ctx)
{
    size_t played = 0;
    while (s->next < s->cap->n) {
        const struct record *r = &s->cap->rec[s->next];
        struct script_conn *c = &s->conn[r->conn];
        if ((r->dir != s->out_dir && r->dir != 2) || c->foreign || s->played[s->next]) { /* the proxy's part: only a prerequisite */
            s->next++;
            continue;
        }
        if (fake_now - replay_start_ns < r->t_ns)
            break; /* not yet: records play at their recorded times, or later */
        if (!c->opened) {
            if (!open_conn || open_conn(ctx, r->conn) < 0)
                break; /* the server's: waits for the proxy to connect */
        }
        /* The recording does not say who closed a connection. A program's close is the
         * program's; an X server closes a client's connection only when told to, so a
         * recorded close on the server's side was the proxy's: it is awaited. */
        bool ready = c->fd < 0 || c->eof ||
                     (c->in_seen >= s->prereq[s->next] && !(r->dir == 2 && s->out_dir == 1));
        /* No program sends a request before its setup reply: that wait has no end. */
        bool before_setup = c->fd >= 0 && !c->eof && s->prereq[s->next] > 0 && c->in_seen < 8;
        if (!ready && (before_setup || ++s->waited < STALL_TURNS))
            break;
        if (!ready)
            s->stalls++;
        s->waited = 0;
        if (r->dir == 2) {
            if (c->fd >= 0) {
                close(c->fd);
                c->fd = -1;
            }
            c->closed = true;
        } else if (c->fd >= 0) {
            size_t off = 0;
            while (off < r->len) {
                ssize_t n = write(c->fd, r->data + off, r->len - off);
                if (n <= 0)
                    break; /* the proxy closed it, or its buffer is full: what is left is lost */
                off += (size_t)n;
            }
            s->out_bytes += off;
        }
        s->next++;
        played++;
    }
    return played;
}

/* --- the scripted server. The display side's requests to the server depend on timing (its
 * observer asks when windows appear), so the server is not replayed byte for byte: it
 * answers each request with the replies the recording gave to an identical request on that
 * connection (the first unanswered one), its sequence number rewritten; and it sends the
 * recorded events at their recorded times, once the requests recorded before them have been
 * matched, and always before a reply recorded after them. --- */

struct x_msg {                 /* a message the recorded server sent */
    const uint8_t *data;
    uint32_t len;
    uint64_t t_ns;
    uint32_t after_requests;   /* requests the server had read when it sent this */
    int64_t request;           /* a reply or error: the recorded request it answers; an event: -1 */
    bool sent;
};

struct x_req {                 /* a request the recorded server read */
    const uint8_t *data;
    uint32_t len;
    uint64_t t_ns;             /* when the server had read it whole */
    uint32_t first_msg, n_msgs;  /* its replies and errors, in x_msg order (indices into replies[]) */
    bool answered;
};

struct server_conn {           /* a connection of the recorded server */
    uint32_t id;               /* the recording's connection number */
    bool msb;
    struct buf c2s, s2c;       /* the recorded streams */
    struct x_req *req;
    uint32_t n_req;
    struct x_msg *msg;
    uint32_t n_msg;
    uint32_t *replies;         /* message indices of replies and errors, grouped by request */
    uint32_t setup_reply_len;
    uint32_t matched_upto;     /* its requests up to here have been matched (the latest match + 1) */
    uint32_t next_event;       /* its first event not yet sent */
    unsigned event_waited;     /* turns that event has been due by its time */
    struct live_conn *live;    /* where its events go: the replay's connection that matched it last */
};

struct live_conn {             /* a connection the display side opened in the replay */
    int fd;                    /* -1: closed */
    bool eof;
    bool msb;
    struct buf in;             /* what the display side wrote, not yet parsed */
    bool setup_read;
    uint32_t seq;              /* requests read */
    struct server_conn *affinity; /* the recorded connection its last request matched */
    uint64_t requests, unmatched;
};

static uint16_t get16(bool msb, const uint8_t *p) { return msb ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]); }
static uint32_t get32(bool msb, const uint8_t *p)
{
    return msb ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
               : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* The length of the setup request at p, or 0 if incomplete. */
static size_t setup_request_size(const uint8_t *p, size_t n)
{
    if (n < 12)
        return 0;
    bool msb = p[0] == 'B';
    size_t sz = 12 + ((get16(msb, p + 6) + 3u) & ~3u) + ((get16(msb, p + 8) + 3u) & ~3u);
    return sz <= n ? sz : 0;
}

/* The length of the request at p (BIG-REQUESTS too), or 0 if incomplete or impossible. */
static size_t request_size(bool msb, const uint8_t *p, size_t n)
{
    if (n < 4)
        return 0;
    uint64_t sz = 4ull * get16(msb, p + 2);
    if (sz == 0) {
        if (n < 8)
            return 0;
        sz = 4ull * get32(msb, p + 4);
        if (sz < 8)
            return 0;
    }
    return sz <= n ? (size_t)sz : 0;
}

/* The length of the server message at p, or 0 if incomplete. */
static size_t server_msg_size(bool msb, const uint8_t *p, size_t n)
{
    if (n < 32)
        return 0;
    size_t sz = 32;
    if (p[0] == 1 || (p[0] & 0x7f) == 35)
        sz += 4ull * get32(msb, p + 4);
    return sz <= n ? sz : 0;
}

/* Splits a recorded server connection into requests and messages. */
static void server_conn_parse(struct server_conn *c, const struct capture *cap)
{
    /* per s2c byte offset: requests read by then, and the record's time */
    struct mark { uint64_t s2c_end, c2s_before, t_ns; } *marks = calloc(cap->n + 1, sizeof *marks);
    struct mark *c2s_marks = calloc(cap->n + 1, sizeof *c2s_marks); /* s2c_end: the c2s end */
    size_t n_marks = 0, n_c2s_marks = 0;
    for (size_t i = 0; i < cap->n; i++) {
        const struct record *r = &cap->rec[i];
        if (r->conn != c->id)
            continue;
        if (r->dir == 0) {
            CHECK_EQ(buf_append(&c->c2s, r->data, r->len), 0);
            c2s_marks[n_c2s_marks++] = (struct mark){ c->c2s.len, 0, r->t_ns };
        }
        else if (r->dir == 1) {
            CHECK_EQ(buf_append(&c->s2c, r->data, r->len), 0);
            marks[n_marks++] = (struct mark){ c->s2c.len, c->c2s.len, r->t_ns };
        }
    }
    const uint8_t *in = buf_head(&c->c2s);
    size_t setup = setup_request_size(in, c->c2s.len);
    c->msb = c->c2s.len && in[0] == 'B';
    /* request ends, to count how many were read before a given c2s offset */
    uint64_t *req_end = calloc(c->c2s.len / 4 + 2, sizeof *req_end);
    c->req = calloc(c->c2s.len / 4 + 2, sizeof *c->req);
    for (size_t at = setup, sz; setup && at < c->c2s.len && (sz = request_size(c->msb, in + at, c->c2s.len - at));
         at += sz) {
        size_t m = 0;
        while (m + 1 < n_c2s_marks && c2s_marks[m].s2c_end < at + sz)
            m++;
        c->req[c->n_req] = (struct x_req){ .data = in + at, .len = (uint32_t)sz, .t_ns = c2s_marks[m].t_ns };
        req_end[c->n_req++] = at + sz;
    }
    const uint8_t *out = buf_head(&c->s2c);
    c->msg = calloc(c->s2c.len / 8 + 2, sizeof *c->msg);
    c->replies = calloc(c->s2c.len / 8 + 2, sizeof *c->replies);
    size_t at = 0, mark = 0;
    if (c->s2c.len >= 8) { /* the setup reply */
        at = 8 + 4ull * get16(c->msb, out + 6);
        c->setup_reply_len = (uint32_t)(at <= c->s2c.len ? at : c->s2c.len);
        at = c->setup_reply_len;
    }
    uint32_t read_reqs = 0;
    for (size_t sz; at < c->s2c.len && (sz = server_msg_size(c->msb, out + at, c->s2c.len - at)); at += sz) {
        while (mark + 1 < n_marks && marks[mark].s2c_end <= at)
            mark++;
        while (read_reqs < c->n_req && req_end[read_reqs] <= marks[mark].c2s_before)
            read_reqs++;
        struct x_msg m = { .data = out + at, .len = (uint32_t)sz, .t_ns = marks[mark].t_ns,
                           .after_requests = read_reqs, .request = -1 };
        if (out[at] <= 1) { /* a reply or an error: the latest request read with its sequence number */
            uint16_t seq = get16(c->msb, out + at + 2);
            for (int64_t j = (int64_t)read_reqs - 1; j >= 0; j--)
                if ((uint16_t)(j + 1) == seq) {
                    m.request = j;
                    break;
                }
        }
        c->msg[c->n_msg++] = m;
    }
    /* replies[] grouped by request: a counting sort */
    for (uint32_t i = 0; i < c->n_msg; i++)
        if (c->msg[i].request >= 0)
            c->req[c->msg[i].request].n_msgs++;
    uint32_t pos = 0;
    for (uint32_t j = 0; j < c->n_req; j++) {
        c->req[j].first_msg = pos;
        pos += c->req[j].n_msgs;
        c->req[j].n_msgs = 0;
    }
    for (uint32_t i = 0; i < c->n_msg; i++)
        if (c->msg[i].request >= 0) {
            struct x_req *q = &c->req[c->msg[i].request];
            c->replies[q->first_msg + q->n_msgs++] = i;
        }
    free(req_end);
    free(marks);
    free(c2s_marks);
}

static void server_conn_free(struct server_conn *c)
{
    buf_free(&c->c2s);
    buf_free(&c->s2c);
    free(c->req);
    free(c->msg);
    free(c->replies);
}

static void live_send(struct live_conn *l, const uint8_t *p, size_t n)
{
    size_t off = 0;
    ssize_t w;
    while (l->fd >= 0 && off < n && (w = write(l->fd, p + off, n - off)) > 0)
        off += (size_t)w;
}

/* A message as this replay's server sends it: the sequence number its own. */
static void live_send_msg(struct live_conn *l, struct x_msg *m)
{
    uint8_t head[32];
    memcpy(head, m->data, 32);
    if ((head[0] & 0x7f) != 11) { /* KeymapNotify has no sequence number */
        head[2] = l->msb ? (uint8_t)(l->seq >> 8) : (uint8_t)l->seq;
        head[3] = l->msb ? (uint8_t)l->seq : (uint8_t)(l->seq >> 8);
    }
    live_send(l, head, 32);
    live_send(l, m->data + 32, m->len - 32);
    m->sent = true;
}

/* The recorded connection's events whose time has come and whose preceding requests have
 * been matched; with `before` set, every unsent one recorded before message `before` too. */
static struct server_conn *all_conns;
static unsigned n_all_conns;

/* Whether every request the recorded server had read before t, on any connection, has been
 * matched (or passed over): an event is an effect of the requests before it. */
static bool caused_by_then(uint64_t t)
{
    for (unsigned i = 0; i < n_all_conns; i++) {
        const struct server_conn *c = &all_conns[i];
        if (c->matched_upto < c->n_req && c->req[c->matched_upto].t_ns < t)
            return false;
    }
    return true;
}

static size_t server_send_events(struct server_conn *c, int64_t before)
{
    size_t sent = 0;
    while (c->live && c->next_event < c->n_msg) {
        struct x_msg *m = &c->msg[c->next_event];
        if (m->request >= 0 || m->sent) {
            c->next_event++;
            continue;
        }
        /* An event whose time has come waits for the requests recorded before it, but not
         * for ever: the display side may ask those only once it has seen the event. */
        bool time_due = fake_now - replay_start_ns >= m->t_ns;
        bool due = time_due && ((c->matched_upto >= m->after_requests && caused_by_then(m->t_ns)) ||
                                ++c->event_waited > STALL_TURNS);
        if (!due && (before < 0 || (int64_t)c->next_event > before))
            break;
        c->event_waited = 0;
        live_send_msg(c->live, m);
        c->next_event++;
        sent++;
    }
    return sent;
}

/* The first unanswered recorded request equal to rq: on `first` from its last match on,
 * then anywhere on it, then on every other recorded connection. */
static struct server_conn *find_request(struct server_conn *all, unsigned n_all, struct server_conn *first,
                                        const uint8_t *rq, size_t sz, uint32_t *index)
{
    for (unsigned k = 0; k <= n_all; k++) {
        struct server_conn *c = k == 0 ? first : &all[k - 1];
        if (!c || (k > 0 && c == first))
            continue;
        for (uint32_t pass = 0; pass < 2; pass++)
            for (uint32_t j = pass ? 0 : c->matched_upto; j < (pass ? c->matched_upto : c->n_req); j++)
                if (!c->req[j].answered && c->req[j].len == sz && memcmp(c->req[j].data, rq, sz) == 0) {
                    *index = j;
                    return c;
                }
    }
    return NULL;
}

/* Reads and answers what the display side wrote on l. Returns bytes read plus messages sent. */
static size_t live_turn(struct live_conn *l, struct server_conn *all, unsigned n_all)
{
    size_t moved = 0;
    uint8_t tmp[65536];
    ssize_t n;
    while (l->fd >= 0 && !l->eof && (n = read(l->fd, tmp, sizeof tmp)) >= 0) {
        if (n == 0)
            l->eof = true;
        CHECK_EQ(buf_append(&l->in, tmp, (size_t)n), 0);
        moved += (size_t)n;
    }
    if (!l->setup_read) {
        size_t sz = setup_request_size(buf_head(&l->in), l->in.len);
        if (!sz)
            return moved;
        l->msb = buf_head(&l->in)[0] == 'B';
        buf_consume(&l->in, sz);
        l->setup_read = true;
    }
    for (size_t sz; (sz = request_size(l->msb, buf_head(&l->in), l->in.len)); buf_consume(&l->in, sz)) {
        l->seq++;
        l->requests++;
        uint32_t j;
        struct server_conn *c = find_request(all, n_all, l->affinity, buf_head(&l->in), sz, &j);
        if (!c) {
            l->unmatched++;
            continue;
        }
        struct x_req *q = &c->req[j];
        q->answered = true;
        if (j + 1 > c->matched_upto)
            c->matched_upto = j + 1;
        l->affinity = c;
        c->live = l;
        for (uint32_t k = 0; k < q->n_msgs; k++) {
            moved += server_send_events(c, c->replies[q->first_msg + k]);
            live_send_msg(l, &c->msg[c->replies[q->first_msg + k]]);
            moved++;
        }
    }
    return moved;
}

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
