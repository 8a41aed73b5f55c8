/* replay_script.h -- test_replay's two scripts: the programs, which write their recorded
 * requests in lockstep with what they read, and the server, which answers requests by the
 * recorded answers to identical ones. For test_replay.c only: its definitions are static,
 * and it expects the fake clock (fake_now, replay_start_ns), STALL_TURNS and MAX_CONNS. */
#ifndef TINCAN_REPLAY_SCRIPT_H
#define TINCAN_REPLAY_SCRIPT_H

#include "replay_capture.h"

/* --- one side of the replay: the scripted programs (the app side's clients) or the scripted
 * server (the display side's upstream connections). `out` is the direction the script writes
 * (client->server for programs, server->client for the server), `in` the one it reads. --- */


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

#endif
