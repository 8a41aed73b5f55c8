/* fontset.c -- a font set in one round trip (fontset.h). */
#include "proxy/fontset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/log.h"
#include "proxy/learnt.h"
#include "proxy/observer.h"
#include "proxy/predict.h"
#include "proxy/session_private.h"
#include "x11/xwire.h"
#include "xproto_wire.h"

#define FONTSET_MAX_PATTERN 255   /* longer patterns are left alone */

/* The charsets of the font sets of libX11's en_US.UTF-8 XLC_LOCALE, in its order, as Xlib
 * spells them in patterns; locale.dir maps some 430 UTF-8 locales to that file. */
static const char *const charsets[] = {
    "ISO8859-1", "ISO8859-2", "ISO8859-3", "ISO8859-4", "ISO8859-5", "KOI8-R",
    "ISO8859-7", "ISO8859-9", "ISO8859-13", "ISO8859-14", "ISO8859-15",
    "JISX0208.1983-0", "KSC5601.1987-0", "GB2312.1980-0", "JISX0201.1976-0", "ISO10646-1",
};
#define N_CHARSETS (sizeof charsets / sizeof charsets[0])

enum base_state { BASE_ONE_CHARSET, BASE_ASKING, BASE_DONE };

struct base {
    uint8_t pattern[FONTSET_MAX_PATTERN];
    size_t len;
    int first;                /* the charset first asked */
    enum base_state state;
};

/* One question asked of the server: the whole request, and a ListFontsWithInfo's replies. */
struct question {
    struct buf req;
    struct buf replies;
    uint8_t kind;             /* LEARNT_LIST_FONTS, LEARNT_LIST_FONTS_WITH_INFO, or LEARNT_FONT (req: its name) */
    bool done;
};

struct fontset {
    struct session *s;
    void (*resume)(struct channel *ch); /* the session's: a held channel goes on */
    struct base bases[FONTSET_MAX_BASES];
    uint32_t n_bases;
    struct question *q;
    uint32_t n_q, cap_q;
    uint32_t outstanding;     /* questions not yet answered */
    uint32_t held[FONTSET_MAX_HELD]; /* channel ids waiting for them */
    uint32_t n_held;
    uint32_t told;
    uint64_t asked_fonts[FONTSET_MAX_HINTED]; /* hashes of the names a hint named */
    uint32_t n_asked_fonts;
    uint64_t hinted_bytes;    /* QueryFont replies told for hints */
    /* The answers told, held until the last: the client waits for its held request until
     * then anyway, and one link write of them all compresses better than one each (their
     * names and properties repeat), and no longer depends on when each came. Each a 32-bit
     * length (host order) and a fact's payload. */
    struct buf facts;
};

size_t fontset_n_charsets(void) { return N_CHARSETS; }
const char *fontset_charset(size_t i) { return i < N_CHARSETS ? charsets[i] : NULL; }

int fontset_new(struct fontset **out, struct session *s, void (*resume)(struct channel *ch))
{
    struct fontset *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->s = s;
    f->resume = resume;
    *out = f;
    return 0;
}

static void clear_questions(struct fontset *f)
{
    for (uint32_t i = 0; i < f->n_q; i++) {
        buf_free(&f->q[i].req);
        buf_free(&f->q[i].replies);
    }
    free(f->q);
    f->q = NULL;
    f->n_q = f->cap_q = 0;
}

void fontset_free(struct fontset *f)
{
    if (!f)
        return;
    clear_questions(f);
    buf_free(&f->facts);
    free(f);
}

int fontset_split(const uint8_t *p, size_t n, size_t *base_len)
{
    /* An XLFD has 14 fields, each after a '-'; the charset is the last two. */
    if (!n || p[0] != '-')
        return -1;
    size_t dashes = 0, at13 = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '-' && ++dashes == 13)
            at13 = i;
    if (dashes != 14)
        return -1;
    for (size_t c = 0; c < N_CHARSETS; c++)
        if (n - at13 - 1 == strlen(charsets[c]) && !memcmp(p + at13 + 1, charsets[c], n - at13 - 1)) {
            *base_len = at13;
            return (int)c;
        }
    return -1;
}

/* A ListFonts or ListFontsWithInfo request as Xlib builds it: max-names 1, the pattern, zero padding. */
static int build_request(struct buf *out, uint8_t major, const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
    _Static_assert(XP_LIST_FONTS_REQ_SIZE == XP_LIST_FONTS_WITH_INFO_REQ_SIZE, "the two requests' fixed parts");
    size_t n = a_len + b_len, size = XP_LIST_FONTS_REQ_SIZE + ((n + 3) & ~(size_t)3);
    uint8_t *r = buf_append_space(out, size);
    if (!r)
        return -ENOMEM;
    memset(r, 0, size);
    if (major == XP_OP_LIST_FONTS)
        xp_list_fonts_req_put(r, size, false, &(struct xp_list_fonts_req){
            .length = (uint16_t)(size / 4), .max_names = 1, .pattern_len = (uint16_t)n });
    else
        xp_list_fonts_with_info_req_put(r, size, false, &(struct xp_list_fonts_with_info_req){
            .length = (uint16_t)(size / 4), .max_names = 1, .pattern_len = (uint16_t)n });
    memcpy(r + XP_LIST_FONTS_REQ_SIZE, a, a_len);
    if (b_len)
        memcpy(r + XP_LIST_FONTS_REQ_SIZE + a_len, b, b_len);
    return 0;
}

static void release_held(struct fontset *f)
{
    uint32_t n = f->n_held;
    f->n_held = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct channel *ch = channel_find(f->s, f->held[i]);
        if (ch)
            f->resume(ch);
    }
}

static void finish_bases(struct fontset *f)
{
    for (uint32_t i = 0; i < f->n_bases; i++)
        if (f->bases[i].state == BASE_ASKING)
            f->bases[i].state = BASE_DONE;
}

/* Sends the answers held, in the order they came. */
static void send_facts(struct fontset *f)
{
    struct buf one = { 0 };
    for (size_t at = 0; f->s->observer && at + 4 <= f->facts.len;) {
        uint32_t n;
        memcpy(&n, buf_head(&f->facts) + at, 4);
        if (n > f->facts.len - at - 4)
            break;
        if (buf_append(&one, buf_head(&f->facts) + at + 4, n) == 0)
            observer_send_fact(f->s->observer, &one);
        at += 4 + (size_t)n;
    }
    buf_free(&one);
    buf_free(&f->facts);
}

static void question_done(struct fontset *f)
{
    if (f->outstanding && !--f->outstanding) {
        log_debug("font set: told the app side %u answers ahead of the client's questions", f->told);
        send_facts(f);
        finish_bases(f);
        clear_questions(f);
        release_held(f);
    }
}

void fontset_give_up(struct fontset *f)
{
    if (!f || !f->outstanding)
        return;
    f->outstanding = 0;
    send_facts(f);
    finish_bases(f);
    clear_questions(f);
    release_held(f);
}

static void on_answer(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error, struct buf *fact);

static int ask(struct fontset *f, uint8_t major, const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len);
static bool add_question(struct fontset *f);
static void tell_font(struct fontset *f, struct question *q, const uint8_t *reply, size_t n, struct buf *fact);

/* Xlib asks next the info of the name a ListFonts found, by that name. */
static void ask_info_of(struct fontset *f, const uint8_t *reply, size_t size)
{
    struct xp_list_fonts_reply v; /* its names: counted strings */
    if (!xp_list_fonts_reply_view(reply, size, false, &v) || !v.names_len || !v.rest_len)
        return;
    uint8_t len = v.rest[0];
    if (len && 1u + len <= v.rest_len)
        ask(f, XP_OP_LIST_FONTS_WITH_INFO, v.rest + 1, len, NULL, 0);
}

static int ask(struct fontset *f, uint8_t major, const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
    struct observer *o = f->s->observer;
    if (!o)
        return -EPIPE;
    if (!add_question(f))
        return -ENOMEM;
    struct question *q = &f->q[f->n_q];
    *q = (struct question){ .kind = major == XP_OP_LIST_FONTS ? LEARNT_LIST_FONTS : LEARNT_LIST_FONTS_WITH_INFO };
    int rc = build_request(&q->req, major, a, a_len, b, b_len);
    size_t n;
    const uint8_t *known = rc ? NULL : predict_font_list_answer(f->s->predict, buf_head(&q->req), (uint32_t)q->req.len,
                                                                false, &n);
    if (known) { /* the app side has it already; what Xlib asks next may be new */
        buf_free(&q->req);
        if (major == XP_OP_LIST_FONTS)
            ask_info_of(f, known, n);
        return 0;
    }
    if (!rc)
        rc = observer_ask(o, buf_head(&q->req), (uint32_t)q->req.len, on_answer, f, f->n_q);
    if (rc) {
        buf_free(&q->req);
        return rc;
    }
    f->n_q++;
    f->outstanding++;
    return 0;
}

/* Tells the app side the answer (with the others, once all came), and remembers the
 * question for the next session. */
static void tell(struct fontset *f, struct question *q, const uint8_t *reply, size_t n)
{
    struct buf fact = { 0 };
    size_t mark = f->facts.len;
    uint32_t len;
    int rc = predict_fact_reply(&fact, FACT_EXCHANGE, false, buf_head(&q->req), q->req.len, reply, n);
    if (rc == 0) {
        len = (uint32_t)fact.len;
        rc = buf_append(&f->facts, &len, 4);
    }
    if (rc == 0)
        rc = buf_append(&f->facts, buf_head(&fact), fact.len);
    buf_free(&fact);
    if (rc < 0) {
        f->facts.len = mark;
        return;
    }
    f->told++;
    if (f->s->learnt) {
        uint8_t hash[LEARNT_ANSWER_SIZE];
        learnt_answer_hash(NULL, 0, reply, n, hash);
        learnt_note(f->s->learnt, q->kind, buf_head(&q->req), q->req.len, hash);
    }
}

static void on_answer(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error, struct buf *fact)
{
    struct fontset *f = ctx;
    struct question *q = tag < f->n_q ? &f->q[tag] : NULL;
    if (!q || q->done)
        return;
    if (q->kind == LEARNT_FONT) {
        if (!error)
            tell_font(f, q, msg, size, fact);
    } else if (!error && q->kind == LEARNT_LIST_FONTS_WITH_INFO) {
        if (q->replies.len + size > LEARNT_MAX_ANSWER || buf_append(&q->replies, msg, size) < 0) {
            q->done = true; /* too large to tell: the client asks the server */
            question_done(f);
            return;
        }
        struct xp_server_header h; /* a ListFontsWithInfo reply's data byte: its name's length */
        if (xp_server_header_view(msg, size, false, &h) && h.data)
            return; /* not yet the last reply */
        tell(f, q, buf_head(&q->replies), q->replies.len);
    } else if (!error && size >= 32) {
        tell(f, q, msg, size);
        ask_info_of(f, msg, size); /* realloc: q is stale after this */
    }
    f->q[tag].done = true;
    question_done(f);
}

/* ---------------------------------------------------------------- fonts a hint names */

static uint64_t name_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

static bool add_question(struct fontset *f)
{
    if (f->n_q < f->cap_q)
        return true;
    uint32_t cap = f->cap_q ? 2 * f->cap_q : 2 * N_CHARSETS;
    struct question *n = realloc(f->q, cap * sizeof *n);
    if (!n)
        return false;
    f->q = n;
    f->cap_q = cap;
    return true;
}

/* OpenFont, QueryFont, CloseFont of one name on the observer's connection, one font id
 * reused (the server does them in order); a name that does not open fails its QueryFont. */
static int ask_font(struct fontset *f, struct observer *o, const uint8_t *name, uint8_t len)
{
    uint32_t fid = observer_font_id(o);
    if (!fid || !add_question(f))
        return -ENOMEM;
    struct question *q = &f->q[f->n_q];
    *q = (struct question){ .kind = LEARNT_FONT };
    if (buf_append(&q->req, name, len) < 0)
        return -ENOMEM;
    uint8_t open[XP_OPEN_FONT_REQ_SIZE + 255 + 3] = { 0 };
    uint32_t open_size = XP_OPEN_FONT_REQ_SIZE + ((len + 3u) & ~3u);
    xp_open_font_req_put(open, sizeof open, false, &(struct xp_open_font_req){
        .length = (uint16_t)(open_size / 4), .fid = fid, .name_len = len });
    memcpy(open + XP_OPEN_FONT_REQ_SIZE, name, len);
    uint8_t query[XP_QUERY_FONT_REQ_SIZE], close[XP_CLOSE_FONT_REQ_SIZE];
    xp_query_font_req_put(query, sizeof query, false, &(struct xp_query_font_req){ .length = sizeof query / 4, .font = fid });
    xp_close_font_req_put(close, sizeof close, false, &(struct xp_close_font_req){ .length = sizeof close / 4, .font = fid });
    if (observer_ask(o, open, open_size, NULL, NULL, 0) || observer_ask(o, query, sizeof query, on_answer, f, f->n_q) ||
        observer_ask(o, close, sizeof close, NULL, NULL, 0)) {
        buf_free(&q->req);
        return -EPIPE;
    }
    f->n_q++;
    f->outstanding++;
    return 0;
}

void fontset_ask_fonts(struct fontset *f, struct observer *o, const struct frame_hint *h)
{
    if (!f || !o || !f->s->predict)
        return;
    uint32_t asked = 0;
    for (uint8_t i = 0; i < h->n_fonts; i++) {
        uint64_t hash = name_hash(h->font[i], h->font_len[i]);
        bool seen = predict_font_known(f->s->predict, h->font[i], h->font_len[i]);
        for (uint32_t k = 0; k < f->n_asked_fonts && !seen; k++)
            seen = f->asked_fonts[k] == hash;
        if (seen || f->n_asked_fonts == FONTSET_MAX_HINTED || f->hinted_bytes >= FONTSET_HINT_BUDGET)
            continue; /* told, or asked, already; or enough of them this session */
        f->asked_fonts[f->n_asked_fonts++] = hash;
        if (ask_font(f, o, h->font[i], h->font_len[i]) < 0)
            break;
        asked++;
    }
    if (asked)
        log_debug("fonts: a client's app-defaults name %u fonts: asking the server ahead", asked);
}

/* The answer to a hinted font's QueryFont: told if small (a font of one-byte characters;
 * the large tables of two-byte fonts cost more than a round trip when not used). */
static void tell_font(struct fontset *f, struct question *q, const uint8_t *reply, size_t n, struct buf *fact)
{
    if (n > FONTSET_MAX_FONT_REPLY || f->hinted_bytes + n > FONTSET_HINT_BUDGET ||
        predict_font_known(f->s->predict, buf_head(&q->req), q->req.len))
        return; /* too large, or a client's own QueryFont of it was answered meanwhile */
    if (predict_fact_reply(fact, FACT_FONT, false, buf_head(&q->req), q->req.len, reply, n) < 0)
        return;
    f->hinted_bytes += n;
    f->told++;
    if (f->s->learnt) {
        uint8_t hash[LEARNT_ANSWER_SIZE];
        learnt_answer_hash(NULL, 0, reply, n, hash);
        learnt_note(f->s->learnt, LEARNT_FONT, buf_head(&q->req), q->req.len, hash);
    }
}

static bool hold_channel(struct fontset *f, const struct channel *ch)
{
    for (uint32_t i = 0; i < f->n_held; i++)
        if (f->held[i] == ch->id)
            return true;
    if (f->n_held == FONTSET_MAX_HELD)
        return false;
    f->held[f->n_held++] = ch->id;
    return true;
}

static void start(struct fontset *f, struct base *b)
{
    b->state = BASE_ASKING;
    uint32_t before = f->outstanding;
    for (size_t c = 0; c < N_CHARSETS; c++) {
        char tail[32] = "-";
        strcat(tail, charsets[c]);
        if (ask(f, XP_OP_LIST_FONTS, b->pattern, b->len, (const uint8_t *)tail, strlen(tail)) < 0)
            break;
    }
    log_debug("font set: a client asks the charsets of %.*s one by one: asking the server %u ahead",
              (int)b->len, (const char *)b->pattern, f->outstanding - before);
}

bool fontset_hold(struct fontset *f, struct observer *o, struct channel *ch, const uint8_t *req, uint32_t size,
                  bool msb)
{
    struct xp_request_header h;
    struct xp_list_fonts_req v;
    if (!xp_request_header_view(req, size, msb, &h))
        return false;
    if (f && f->outstanding && h.major == XP_OP_QUERY_FONT)
        return hold_channel(f, ch); /* perhaps of a font asked ahead: its answer goes first */
    if (!f || !o || !f->s->predict || msb || h.major != XP_OP_LIST_FONTS || !xp_list_fonts_req_view(req, size, false, &v) ||
        v.length * 4u != size || v.max_names != 1)
        return false;
    size_t n = v.pattern_len, base_len;
    if (n > FONTSET_MAX_PATTERN || !v.pattern)
        return false;
    int c = fontset_split(v.pattern, n, &base_len);
    size_t known;
    if (c < 0 || predict_font_list_answer(f->s->predict, req, size, false, &known))
        return false; /* not a font set's, or answered already (an earlier session's, learnt.h) */
    struct base *b = NULL;
    for (uint32_t i = 0; i < f->n_bases && !b; i++)
        if (f->bases[i].len == base_len && !memcmp(f->bases[i].pattern, v.pattern, base_len))
            b = &f->bases[i];
    if (!b) {
        if (f->n_bases == FONTSET_MAX_BASES)
            return false;
        b = &f->bases[f->n_bases++];
        memcpy(b->pattern, v.pattern, base_len);
        b->len = base_len;
        b->first = c;
        b->state = BASE_ONE_CHARSET;
        if (!ch->font_set_hint)
            return false;
    }
    /* The second charset; or the first, when the client's locale says it asks them all (hint.h). */
    if (b->state == BASE_ONE_CHARSET && (c != b->first || ch->font_set_hint))
        start(f, b);
    if (b->state != BASE_ASKING)
        return false;
    if (!f->outstanding) { /* nothing could be asked */
        b->state = BASE_DONE;
        return false;
    }
    return hold_channel(f, ch);
}

static void listen_broken(void *ctx, struct observer *o)
{
    (void)o;
    fontset_give_up(ctx);
}

void fontset_listen(struct fontset *f, struct observer_listener *out)
{
    *out = (struct observer_listener){ .ctx = f, .on_broken = listen_broken };
}
