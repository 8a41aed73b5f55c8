/* learnt.c -- questions remembered across sessions (learnt.h): the store (most recent
 * first, bounded), its file in the cache directory, and asking them again at the observer's
 * start. It never keeps an answer for use: only a short hash, to notice a changed one.
 * Workload: up to 256 questions of a few dozen bytes; the file is read when the observer
 * first connects and written when the session empties or ends. */
#include "proxy/learnt.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "link/dict.h"
#include "link/frame.h"
#include "proxy/observer.h"
#include "xproto_wire.h"

#define LEARNT_FILE_VERSION 1

/* File layout (little-endian):
 *   magic "TINCLRNT" | version u32 | count u32 | body length u32 | server identity[32] |
 *   checksum[32]: BLAKE2b-256 of a label, the identity and the body | body
 * body: count x (kind u8 | 0 u8 | length u16 | answer hash[8] | bytes), most recent first. */
static const uint8_t file_magic[8] = { 'T', 'I', 'N', 'C', 'L', 'R', 'N', 'T' };
_Static_assert(8 + 4 + 4 + 4 + LEARNT_ID_SIZE + 32 == LEARNT_HEADER_SIZE, "header layout");
_Static_assert(4 + LEARNT_ANSWER_SIZE == LEARNT_ENTRY_HEADER, "entry layout");

struct asked {                /* a question put to the server at this observer's start */
    struct learnt_question q;
    bool done;
    struct buf acc;           /* ListFontsWithInfo: its replies so far */
};

struct learnt {
    const struct xdisplay_addr *display; /* the server's name, for its identity (learnt_listen) */
    char dir[512];            /* empty: memory only */
    char file[64];            /* this server's file name; empty until its identity is known */
    uint8_t id[LEARNT_ID_SIZE];
    bool have_id;
    bool dirty;               /* questions or answers changed since the file was written */
    bool reordered;           /* ... or only which were asked last */
    struct learnt_question *q; /* most recent first */
    uint32_t n;
    size_t bytes;             /* sum over q of LEARNT_ENTRY_HEADER + len */
    uint32_t id_base, id_mask; /* the observer's resource ids: for the fonts it opens to ask */
    struct asked *asked;
    uint32_t n_asked, asked_left, told, dropped;
};

int learnt_new(struct learnt **out, const char *dir)
{
    if (sodium_init() < 0)
        return -EIO;
    struct learnt *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    if (dir && strlen(dir) >= sizeof l->dir) {
        free(l);
        return -ENAMETOOLONG;
    }
    if (dir)
        strcpy(l->dir, dir);
    *out = l;
    return 0;
}

static void clear_questions(struct learnt *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        free(l->q[i].bytes);
    free(l->q);
    l->q = NULL;
    l->n = 0;
    l->bytes = 0;
}

static void clear_asked(struct learnt *l)
{
    for (uint32_t i = 0; i < l->n_asked; i++) {
        free(l->asked[i].q.bytes);
        buf_free(&l->asked[i].acc);
    }
    free(l->asked);
    l->asked = NULL;
    l->n_asked = l->asked_left = l->told = l->dropped = 0;
}

void learnt_free(struct learnt *l)
{
    if (!l)
        return;
    clear_questions(l);
    clear_asked(l);
    free(l);
}

/* ---------------------------------------------------------------- the store */

/* Whether bytes can be a question of that kind: a request is whole, LSB, as the client sent it. */
static bool question_valid(uint8_t kind, const uint8_t *b, size_t len)
{
    struct xp_request_header h;
    struct xp_list_fonts_req lf;
    struct xp_list_fonts_with_info_req lfi;
    if (!len || len > LEARNT_MAX_QUESTION)
        return false;
    switch (kind) {
    case LEARNT_FONT:
        return true;
    case LEARNT_LIST_FONTS:
        return xp_request_header_view(b, len, false, &h) && h.major == XP_OP_LIST_FONTS && h.length * 4u == len &&
               xp_list_fonts_req_view(b, len, false, &lf) && lf.pattern;
    case LEARNT_LIST_FONTS_WITH_INFO:
        return xp_request_header_view(b, len, false, &h) && h.major == XP_OP_LIST_FONTS_WITH_INFO &&
               h.length * 4u == len && xp_list_fonts_with_info_req_view(b, len, false, &lfi) && lfi.pattern;
    default:
        return false;
    }
}

static int find(const struct learnt *l, uint8_t kind, const uint8_t *b, size_t len)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->q[i].kind == kind && l->q[i].len == len && !memcmp(l->q[i].bytes, b, len))
            return (int)i;
    return -1;
}

static void remove_at(struct learnt *l, uint32_t i)
{
    l->bytes -= LEARNT_ENTRY_HEADER + l->q[i].len;
    free(l->q[i].bytes);
    memmove(&l->q[i], &l->q[i + 1], (l->n - i - 1) * sizeof *l->q);
    l->n--;
    l->dirty = true;
}

bool learnt_note(struct learnt *l, uint8_t kind, const uint8_t *b, size_t len, const uint8_t answer[LEARNT_ANSWER_SIZE])
{
    int i = question_valid(kind, b, len) ? find(l, kind, b, len) : -2;
    if (i == -2 || (i < 0 && !answer))
        return false;
    struct learnt_question e;
    if (i >= 0) {
        e = l->q[i];
        memmove(&l->q[1], &l->q[0], (size_t)i * sizeof *l->q); /* first: the most recently used */
    } else {
        struct learnt_question *nq = realloc(l->q, (l->n + 1) * sizeof *nq);
        if (!nq)
            return false;
        l->q = nq;
        e = (struct learnt_question){ .kind = kind, .len = (uint16_t)len, .bytes = malloc(len) };
        if (!e.bytes)
            return false;
        memcpy(e.bytes, b, len);
        memmove(&l->q[1], &l->q[0], l->n * sizeof *l->q);
        l->n++;
        l->bytes += LEARNT_ENTRY_HEADER + len;
    }
    bool changed = i < 0;
    if (answer && (!e.known || memcmp(e.answer, answer, LEARNT_ANSWER_SIZE))) {
        memcpy(e.answer, answer, LEARNT_ANSWER_SIZE);
        e.known = true;
        changed = true;
    }
    l->q[0] = e;
    if (changed)
        l->dirty = true;
    else if (i > 0)
        l->reordered = true;
    while (l->n > LEARNT_MAX_QUESTIONS || LEARNT_HEADER_SIZE + l->bytes > LEARNT_MAX_BYTES)
        remove_at(l, l->n - 1); /* the least recently used */
    return l->n && l->q[0].bytes == e.bytes;
}

void learnt_drop(struct learnt *l, uint8_t kind, const uint8_t *b, size_t len)
{
    int i = find(l, kind, b, len);
    if (i >= 0)
        remove_at(l, (uint32_t)i);
}

size_t learnt_count(const struct learnt *l) { return l->n; }

const struct learnt_question *learnt_at(const struct learnt *l, size_t i) { return i < l->n ? &l->q[i] : NULL; }

void learnt_set_identity(struct learnt *l, const uint8_t id[LEARNT_ID_SIZE])
{
    memcpy(l->id, id, LEARNT_ID_SIZE);
    l->have_id = true;
}

/* Hashes whole replies with their sequence numbers left out (so answers to different
 * requests compare); anything after the last whole reply is hashed as it is. */
static void hash_replies(crypto_generichash_state *st, const uint8_t *p, size_t n)
{
    size_t at = 0;
    struct xp_server_header h;
    while (n - at >= XP_SERVER_MSG_SIZE && xp_server_header_view(p + at, n - at, false, &h)) {
        uint64_t size = XP_SERVER_MSG_SIZE + 4ull * h.length;
        if (size > n - at)
            break;
        crypto_generichash_update(st, p + at, 2);  /* code and data byte; then all after the sequence number */
        crypto_generichash_update(st, p + at + XP_REPLY_LENGTH_AT, (size_t)size - XP_REPLY_LENGTH_AT);
        at += (size_t)size;
    }
    crypto_generichash_update(st, p + at, n - at);
}

void learnt_answer_hash(const uint8_t *prefix, size_t prefix_len, const uint8_t *reply, size_t n,
                        uint8_t out[LEARNT_ANSWER_SIZE])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, LEARNT_ANSWER_SIZE);
    if (prefix_len)
        hash_replies(&st, prefix, prefix_len);
    hash_replies(&st, reply, n);
    crypto_generichash_final(&st, out, LEARNT_ANSWER_SIZE);
}

/* ---------------------------------------------------------------- the file */

static void checksum(const uint8_t id[LEARNT_ID_SIZE], const uint8_t *body, size_t n, uint8_t out[32])
{
    static const char label[] = "tincan learnt v1";
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 32);
    crypto_generichash_update(&st, (const uint8_t *)label, sizeof label);
    crypto_generichash_update(&st, id, LEARNT_ID_SIZE);
    crypto_generichash_update(&st, body, n);
    crypto_generichash_final(&st, out, 32);
}

int learnt_encode(const struct learnt *l, struct buf *out)
{
    size_t start = out->len;
    uint8_t *h = buf_append_space(out, LEARNT_HEADER_SIZE);
    if (!h)
        return -ENOMEM;
    for (uint32_t i = 0; i < l->n; i++) {
        uint8_t *e = buf_append_space(out, LEARNT_ENTRY_HEADER + l->q[i].len);
        if (!e)
            return -ENOMEM;
        e[0] = l->q[i].kind;
        e[1] = 0;
        st16(e + 2, l->q[i].len, false);
        memcpy(e + 4, l->q[i].answer, LEARNT_ANSWER_SIZE);
        memcpy(e + LEARNT_ENTRY_HEADER, l->q[i].bytes, l->q[i].len);
    }
    h = out->data + out->off + start; /* the buffer may have moved */
    size_t body = out->len - start - LEARNT_HEADER_SIZE;
    memcpy(h, file_magic, sizeof file_magic);
    st32(h + 8, LEARNT_FILE_VERSION, false);
    st32(h + 12, l->n, false);
    st32(h + 16, (uint32_t)body, false);
    memcpy(h + 20, l->id, LEARNT_ID_SIZE);
    checksum(l->id, h + LEARNT_HEADER_SIZE, body, h + 20 + LEARNT_ID_SIZE);
    return 0;
}

int learnt_parse(struct learnt *l, const uint8_t *file, size_t n)
{
    struct rd r = rd_make(file, n, false);
    const uint8_t *magic, *id, *sum;
    uint32_t version, count, body_len;
    uint8_t want[32];
    if (rd_bytes(&r, &magic, sizeof file_magic) || memcmp(magic, file_magic, sizeof file_magic) ||
        rd_u32(&r, &version) || version != LEARNT_FILE_VERSION || rd_u32(&r, &count) || count > LEARNT_MAX_QUESTIONS ||
        rd_u32(&r, &body_len) || body_len > LEARNT_MAX_BYTES - LEARNT_HEADER_SIZE || rd_bytes(&r, &id, LEARNT_ID_SIZE) ||
        rd_bytes(&r, &sum, 32) || rd_left(&r) != body_len || sodium_memcmp(id, l->id, LEARNT_ID_SIZE))
        return -EBADMSG;
    checksum(id, file + r.pos, body_len, want);
    if (sodium_memcmp(want, sum, 32))
        return -EBADMSG;
    struct learnt parsed = { 0 };
    memcpy(parsed.id, l->id, LEARNT_ID_SIZE);
    int rc = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        uint8_t kind, pad;
        uint16_t len;
        const uint8_t *answer, *b;
        rc = rd_u8(&r, &kind) || rd_u8(&r, &pad) || pad || rd_u16(&r, &len) ||
             rd_bytes(&r, &answer, LEARNT_ANSWER_SIZE) || rd_bytes(&r, &b, len) || !question_valid(kind, b, len) ||
             find(&parsed, kind, b, len) >= 0 ? -EBADMSG : 0;
        if (rc)
            break;
        /* Kept in the file's order, most recent first: each appended after the others. */
        struct learnt_question *nq = realloc(parsed.q, (parsed.n + 1) * sizeof *nq);
        if (nq)
            parsed.q = nq;
        uint8_t *copy = nq ? malloc(len) : NULL;
        if (!copy) {
            rc = -ENOMEM;
            break;
        }
        memcpy(copy, b, len);
        parsed.q[parsed.n] = (struct learnt_question){ .kind = kind, .len = len, .bytes = copy };
        memcpy(parsed.q[parsed.n++].answer, answer, LEARNT_ANSWER_SIZE);
        parsed.bytes += LEARNT_ENTRY_HEADER + len;
    }
    if (!rc && rd_left(&r))
        rc = -EBADMSG;
    if (rc) {
        clear_questions(&parsed);
        return rc;
    }
    clear_questions(l);
    l->q = parsed.q;
    l->n = parsed.n;
    l->bytes = parsed.bytes;
    l->dirty = false;
    return 0;
}

static void load(struct learnt *l)
{
    char path[600];
    uint8_t *p;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", l->dir, l->file);
    int rc = dict_read_file(path, LEARNT_MAX_BYTES, &p, &n);
    if (rc == -ENOENT)
        return;
    if (!rc) {
        rc = learnt_parse(l, p, n);
        free(p);
    }
    if (rc < 0)
        log_warn("learnt questions: ignoring %s (%s)", path,
                 rc == -EBADMSG || rc == -EFBIG ? "corrupt, truncated, or another server's" : strerror(-rc));
    else
        log_debug("learnt questions: %u from %s", l->n, path);
}

/* The server's identity: the display's name, the vendor, the release and protocol version. */
void learnt_on_setup(struct learnt *l, const struct xdisplay_addr *display, const uint8_t *setup, size_t n)
{
    struct xp_setup v;
    if (!xp_setup_view(setup, n, false, &v) || v.status != 1 || !v.vendor)
        return;
    l->id_base = v.resource_id_base;
    l->id_mask = v.resource_id_mask;
    char name[300];
    snprintf(name, sizeof name, "%s:%d", display->tcp ? display->host : "", display->number);
    static const char label[] = "tincan learnt server v1";
    uint8_t id[LEARNT_ID_SIZE];
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, LEARNT_ID_SIZE);
    crypto_generichash_update(&st, (const uint8_t *)label, sizeof label);
    crypto_generichash_update(&st, (const uint8_t *)name, strlen(name) + 1);
    crypto_generichash_update(&st, setup + XP_SETUP_PROTOCOL_MAJOR_VERSION_AT, 4); /* protocol version, as sent */
    crypto_generichash_update(&st, setup + XP_SETUP_RELEASE_NUMBER_AT, 4);         /* release */
    crypto_generichash_update(&st, v.vendor, v.vendor_len);
    crypto_generichash_final(&st, id, LEARNT_ID_SIZE);
    if (l->have_id && !memcmp(id, l->id, LEARNT_ID_SIZE))
        return; /* the same server again in this session: what is in memory is newer */
    learnt_save(l, true);
    clear_questions(l);
    learnt_set_identity(l, id);
    char hex[17];
    sodium_bin2hex(hex, sizeof hex, id, 8);
    snprintf(l->file, sizeof l->file, "learnt-%s" LEARNT_FILE_SUFFIX, hex);
    if (l->dir[0])
        load(l);
}

int learnt_save(struct learnt *l, bool order_too)
{
    if (!(l->dirty || (order_too && l->reordered)) || !l->dir[0] || !l->file[0])
        return 0;
    struct buf b = { 0 };
    int rc = dict_make_dir(l->dir);
    if (!rc)
        rc = learnt_encode(l, &b);
    if (!rc) {
        const uint8_t *parts[1] = { buf_head(&b) };
        size_t lens[1] = { b.len };
        rc = dict_write_file(l->dir, l->file, parts, lens, 1);
    }
    buf_free(&b);
    if (!rc)
        rc = dict_bound_files(l->dir, LEARNT_FILE_SUFFIX, LEARNT_MAX_FILES, (uint64_t)LEARNT_MAX_FILES * LEARNT_MAX_BYTES);
    if (rc < 0)
        log_warn("learnt questions: cannot save them in %s: %s", l->dir, strerror(-rc));
    else
        l->dirty = l->reordered = false;
    return rc;
}

/* ---------------------------------------------------------------- what clients ask */

static uint8_t kind_of(uint8_t major)
{
    return major == XP_OP_QUERY_FONT ? LEARNT_FONT : major == XP_OP_LIST_FONTS ? LEARNT_LIST_FONTS
         : major == XP_OP_LIST_FONTS_WITH_INFO ? LEARNT_LIST_FONTS_WITH_INFO : 0;
}

void learnt_on_request(struct learnt *l, const struct predict_questions *pq, const struct msg_class *cls,
                       const uint8_t *req, uint32_t size, bool msb)
{
    uint8_t kind = kind_of(cls->major);
    if (msb || cls->kind != MSG_REQUEST || cls->ext || !kind)
        return;
    if (kind != LEARNT_FONT) {
        learnt_note(l, kind, req, size, NULL);
        return;
    }
    struct xp_query_font_req v;
    uint32_t fid = xp_query_font_req_view(req, size, false, &v) ? v.font : 0;
    for (uint32_t i = 0; fid && i < pq->n_fonts; i++)
        if (pq->fonts[i].fid == fid)
            learnt_note(l, LEARNT_FONT, (const uint8_t *)pq->fonts[i].name, pq->fonts[i].len, NULL);
}

void learnt_on_reply(struct learnt *l, const struct predict_questions *pq, const struct msg_class *cls, uint32_t seq,
                     const uint8_t *reply, uint32_t size, bool msb)
{
    uint8_t kind = kind_of(cls->major);
    if (msb || cls->kind != MSG_REPLY || cls->ext || !kind || size < 32)
        return;
    const struct predict_question *q = NULL;
    for (uint32_t i = 0; i < pq->len && !q; i++) {
        const struct predict_question *c = &pq->q[(pq->head + i) % pq->cap];
        if (c->seq == seq && c->major == cls->major && c->name)
            q = c;
    }
    if (!q || (kind == LEARNT_LIST_FONTS_WITH_INFO && reply[1]))
        return; /* not a question learnt from, or not yet the last of its replies */
    size_t before = kind == LEARNT_LIST_FONTS_WITH_INFO ? q->acc.len : 0;
    if (before + size > LEARNT_MAX_ANSWER)
        return;
    uint8_t answer[LEARNT_ANSWER_SIZE];
    learnt_answer_hash(before ? buf_head(&q->acc) : NULL, before, reply, size, answer);
    learnt_note(l, kind, (const uint8_t *)q->name, q->name_len, answer);
}

/* ---------------------------------------------------------------- asking again */

static void asked_done(struct learnt *l, struct asked *a)
{
    a->done = true;
    buf_free(&a->acc);
    if (l->asked_left && !--l->asked_left)
        log_debug("learnt questions: told the app side %u answers to questions of earlier sessions, dropped %u",
                  l->told, l->dropped);
}

static void on_answer(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error, struct buf *fact)
{
    struct learnt *l = ctx;
    struct asked *a = tag < l->n_asked ? &l->asked[tag] : NULL;
    if (!a || a->done)
        return;
    const uint8_t *reply = msg;
    size_t n = size;
    if (!error && a->q.kind == LEARNT_LIST_FONTS_WITH_INFO) {
        if (a->acc.len + size > LEARNT_MAX_ANSWER || buf_append(&a->acc, msg, size) < 0) {
            asked_done(l, a); /* too large to tell: the clients ask the server */
            return;
        }
        if (msg[1])
            return; /* more to come */
        reply = buf_head(&a->acc);
        n = a->acc.len;
    }
    uint8_t answer[LEARNT_ANSWER_SIZE];
    if (!error && n <= LEARNT_MAX_ANSWER)
        learnt_answer_hash(NULL, 0, reply, n, answer);
    if (error || n > LEARNT_MAX_ANSWER || memcmp(answer, a->q.answer, LEARNT_ANSWER_SIZE)) {
        /* An error, or not the answer it had: the server has changed (a font path?). */
        learnt_drop(l, a->q.kind, a->q.bytes, a->q.len);
        l->dropped++;
    } else if (predict_fact_reply(fact, a->q.kind == LEARNT_FONT ? FACT_FONT : FACT_EXCHANGE, false, a->q.bytes,
                                  a->q.len, reply, n) == 0) {
        l->told++;
        int i = find(l, a->q.kind, a->q.bytes, a->q.len);
        if (i >= 0)
            l->q[i].known = true; /* the observer may reopen in this session: not told twice */
    }
    asked_done(l, a);
}

/* A font to ask QueryFont of: one of the observer's own ids, from the top of its range. */
static bool ask_font(struct learnt *l, struct observer *o, uint32_t i)
{
    const struct learnt_question *q = &l->asked[i].q;
    if ((l->id_mask & (l->id_mask + 1)) || l->id_mask < 0xfff || q->len > LEARNT_MAX_QUESTION)
        return false;
    uint32_t fid = l->id_base | (l->id_mask - i);
    uint8_t open[XP_OPEN_FONT_REQ_SIZE + LEARNT_MAX_QUESTION + 3] = { 0 };
    uint32_t open_size = XP_OPEN_FONT_REQ_SIZE + ((q->len + 3u) & ~3u);
    xp_open_font_req_put(open, sizeof open, false, &(struct xp_open_font_req){
        .length = (uint16_t)(open_size / 4), .fid = fid, .name_len = q->len });
    memcpy(open + XP_OPEN_FONT_REQ_SIZE, q->bytes, q->len);
    uint8_t query[XP_QUERY_FONT_REQ_SIZE], close[XP_CLOSE_FONT_REQ_SIZE];
    xp_query_font_req_put(query, sizeof query, false, &(struct xp_query_font_req){ .length = sizeof query / 4, .font = fid });
    xp_close_font_req_put(close, sizeof close, false, &(struct xp_close_font_req){ .length = sizeof close / 4, .font = fid });
    /* An OpenFont that fails makes the QueryFont fail too: that error drops the question. */
    return observer_ask(o, open, open_size, NULL, NULL, 0) == 0 &&
           observer_ask(o, query, sizeof query, on_answer, l, i) == 0 &&
           observer_ask(o, close, sizeof close, NULL, NULL, 0) == 0;
}

void learnt_probe(struct learnt *l, struct observer *o)
{
    clear_asked(l); /* a previous observer's questions: never to be answered now */
    if (!l->n || !(l->asked = calloc(l->n, sizeof *l->asked)))
        return;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->q[i].known)
            continue;
        struct asked *a = &l->asked[l->n_asked];
        a->q = l->q[i];
        a->q.known = false;
        if (!(a->q.bytes = malloc(a->q.len)))
            break;
        memcpy(a->q.bytes, l->q[i].bytes, a->q.len);
        uint32_t k = l->n_asked++;
        bool sent = a->q.kind == LEARNT_FONT ? ask_font(l, o, k)
                                             : observer_ask(o, a->q.bytes, a->q.len, on_answer, l, k) == 0;
        if (sent)
            l->asked_left++;
        else
            l->asked[k].done = true;
    }
    if (l->asked_left)
        log_debug("learnt questions: asking the server %u remembered from earlier sessions", l->asked_left);
}

static void listen_setup(void *ctx, struct observer *o, const uint8_t *reply, size_t size)
{
    (void)o;
    struct learnt *l = ctx;
    learnt_on_setup(l, l->display, reply, size);
}

static void listen_probes_sent(void *ctx, struct observer *o) { learnt_probe(ctx, o); }

void learnt_listen(struct learnt *l, const struct xdisplay_addr *display, struct observer_listener *out)
{
    l->display = display;
    *out = (struct observer_listener){ .ctx = l, .on_setup = listen_setup, .on_probes_sent = listen_probes_sent };
}
