/* predict_exchange.c -- replies known from their question, kept as bytes: keyed by requests
 * (version handshakes after the connection's earlier ones, state queries of watched extensions,
 * font lists; padding zeroed) or by a font's name (QueryFont). At most PREDICT_MAX_EXCHANGES. */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"

/* The request table entry of a request of this server (an extension's by its major opcode). */
static const struct xp_request *request_entry(const struct predictor *p, const uint8_t *req)
{
    if (req[0] < 128)
        return &xp_core_requests[req[0]];
    for (size_t i = 0; p->ext && i < xp_n_extensions; i++)
        if (p->ext[i].known && p->ext[i].body[0] && p->ext[i].body[1] == req[0])
            return req[1] < xp_extensions[i].n_requests ? &xp_extensions[i].requests[req[1]] : NULL;
    return NULL;
}

/* A key of requests with what the server ignores zeroed: the padding xcb-proto describes,
 * and a font pattern's padding, which libraries (Xlib, libXext) leave as they find them, so
 * the same question from two clients is one question. */
static void zero_padding(const struct predictor *p, uint8_t *key, size_t len, bool msb)
{
    for (size_t at = 0; at + 4 <= len;) {
        size_t n = 4u * ld16(key + at + 2, msb);
        if (n < 4 || at + n > len)
            return;
        const struct xp_request *r = request_entry(p, key + at);
        for (unsigned b = 0; r && b < 32 && b < n; b++)
            if (r->pad_mask & (1u << b))
                key[at + b] = 0;
        if ((key[at] == XP_OP_LIST_FONTS || key[at] == XP_OP_LIST_FONTS_WITH_INFO) && n >= 8 &&
            8u + ld16(key + at + 6, msb) <= n)
            memset(key + at + 8 + ld16(key + at + 6, msb), 0, n - 8 - ld16(key + at + 6, msb));
        at += n;
    }
}

/* A copy of key with its padding zeroed: in small (of `cap` bytes) when it fits, or on the
 * heap (*heap, to be freed). NULL: no memory. */
static const uint8_t *normalized_key(const struct predictor *p, const uint8_t *key, size_t len, bool msb, uint8_t *small,
                                     size_t cap, uint8_t **heap)
{
    uint8_t *k = len <= cap ? small : (*heap = malloc(len));
    if (!k)
        return NULL;
    memcpy(k, key, len);
    zero_padding(p, k, len, msb);
    return k;
}

const struct exchange *pd_exchange_find(const struct predictor *p, uint8_t kind, bool msb, const uint8_t *key,
                                            size_t key_len)
{
    uint8_t small[512], *heap = NULL;
    if (kind == EX_REQ && !(key = normalized_key(p, key, key_len, msb, small, sizeof small, &heap)))
        return NULL;
    const struct exchange *found = NULL;
    for (uint32_t i = 0; i < p->n_ex && !found; i++) {
        const struct exchange *e = &p->ex[i];
        if (e->kind == kind && e->msb == msb && e->key_len == key_len && memcmp(e->key, key, key_len) == 0)
            found = e;
    }
    free(heap);
    return found;
}

/* One or more whole replies (ListFontsWithInfo has several): type 1, lengths adding up. */
bool pd_reply_whole(const uint8_t *r, size_t n, bool msb)
{
    if (n < 32 || n > PREDICT_MAX_REPLY)
        return false;
    for (size_t at = 0; at < n; at += 32 + 4 * (size_t)ld32(r + at + 4, msb))
        if (n - at < 32 || r[at] != 1 || 32 + 4 * (uint64_t)ld32(r + at + 4, msb) > n - at)
            return false;
    return true;
}

/* Sets the sequence number of each reply in r (whole, as above). */
static void replies_seq(uint8_t *r, size_t n, uint16_t seq, bool msb)
{
    for (size_t at = 0; at < n; at += 32 + 4 * (size_t)ld32(r + at + 4, msb))
        st16(r + at + 2, seq, msb);
}

/* Remembers a reply; the first one learnt stays (both sides learn in the same order). */
void pd_exchange_add(struct predictor *p, uint8_t kind, bool msb, const uint8_t *key, size_t key_len,
                         const uint8_t *reply, size_t reply_len)
{
    if (!key_len || key_len > PREDICT_MAX_KEY || !pd_reply_whole(reply, reply_len, msb) || p->n_ex >= PREDICT_MAX_EXCHANGES ||
        p->ex_bytes + reply_len + key_len > PREDICT_MAX_EXCHANGE_BYTES || pd_exchange_find(p, kind, msb, key, key_len))
        return;
    struct exchange e = { .kind = kind, .msb = msb, .key_len = (uint32_t)key_len, .reply_len = (uint32_t)reply_len,
                          .key = malloc(key_len), .reply = malloc(reply_len) };
    if (!e.key || !e.reply) {
        free(e.key);
        free(e.reply);
        return;
    }
    memcpy(e.key, key, key_len);
    if (kind == EX_REQ)
        zero_padding(p, e.key, key_len, msb);
    memcpy(e.reply, reply, reply_len);
    replies_seq(e.reply, reply_len, 0, msb);
    p->ex[p->n_ex++] = e;
    p->ex_bytes += reply_len + key_len;
}

/* Requests whose reply depends only on the server (fixed while it runs) and on the
 * connection's earlier requests of the same extension: version handshakes, and RENDER's
 * formats (whose subpixel list depends on the version the client announced). */
static const struct {
    const char *ext;
    uint8_t minor;
} handshakes[] = {
    { "BIG-REQUESTS", 0 }, { "XKEYBOARD", 0 }, { "XKEYBOARD", 8 /* GetMap: from facts only */ }, { "RENDER", 0 }, { "RENDER", 1 }, { "XFIXES", 0 }, { "SHAPE", 0 },
    { "Composite", 0 }, { "DAMAGE", 0 }, { "SYNC", 0 }, { "RANDR", 0 }, { "Generic Event Extension", 0 },
    { "XInputExtension", 1 }, { "XInputExtension", 47 }, { "MIT-SCREEN-SAVER", 0 }, { "DPMS", 0 }, { "XTEST", 0 },
    { "XINERAMA", 0 }, { "DOUBLE-BUFFER", 0 }, { "RECORD", 0 }, { "Present", 0 }, { "XC-MISC", 0 },
};

bool predict_is_handshake(const char *ext, uint8_t minor)
{
    for (size_t i = 0; ext && i < sizeof handshakes / sizeof *handshakes; i++)
        if (handshakes[i].minor == minor && !strcmp(handshakes[i].ext, ext))
            return true;
    return false;
}

bool pd_xkb_get_map(const struct msg_class *cls)
{
    return cls->ext && cls->minor == 8 && !strcmp(cls->ext, "XKEYBOARD");
}

/* Where the GetMap request a key ends with starts (of this major opcode, or of any when
 * major is 0), or 0 when it does not end with one: such replies hold the keyboard's mapping.
 * (A GetMap is never first: UseExtension comes before it.) */
uint32_t pd_exchange_get_map_at(const struct exchange *e, uint8_t major)
{
    uint32_t at = 0, last = 0;
    while (at + 4 <= e->key_len) {
        uint32_t n = 4u * ld16(e->key + at + 2, e->msb);
        if (!n || n > e->key_len - at)
            return 0;
        last = at;
        at += n;
    }
    bool get_map = e->kind == EX_REQ && at == e->key_len && last && e->key[last] >= 128 &&
                   (!major || e->key[last] == major) && e->key[last + 1] == 8 && e->key[0] == e->key[last];
    return get_map ? last : 0;
}

/* The keyboard is changing: its GetMap replies are no longer known (both sides, in step). */
void pd_forget_keyboard(struct predictor *p)
{
    p->kb.known = false;
    for (uint32_t i = 0; i < p->n_ex;) {
        struct exchange *e = &p->ex[i];
        if (pd_exchange_get_map_at(e, 0)) {
            p->ex_bytes -= e->key_len + e->reply_len;
            free(e->key);
            free(e->reply);
            *e = p->ex[--p->n_ex];
        } else {
            i++;
        }
    }
}

/* Queries of an extension's state: their replies depend on the server's state of that
 * extension, which the display side watches through its events, and on the version the
 * connection agreed, which its first requests (handshakes) say. delete_at: the offset of a
 * "delete" flag that must be 0, or 0 when there is none. */
static const struct {
    const char *ext;
    uint8_t minor, delete_at;
} state_queries[] = {
    { "RANDR", 6, 0 },   /* GetScreenSizeRange */
    { "RANDR", 9, 0 },   /* GetOutputInfo */
    { "RANDR", 15, 24 }, /* GetOutputProperty */
    { "RANDR", 20, 0 },  /* GetCrtcInfo */
    { "RANDR", 25, 0 },  /* GetScreenResourcesCurrent */
    { "RANDR", 31, 0 },  /* GetOutputPrimary */
    { "RANDR", 42, 0 },  /* GetMonitors */
    { "XInputExtension", 48, 0 }, /* XIQueryDevice */
    { "XInputExtension", 59, 6 }, /* XIGetProperty */
};

static int state_query_index(const struct msg_class *cls, const uint8_t *req, uint32_t size)
{
    for (size_t i = 0; cls->ext && i < sizeof state_queries / sizeof *state_queries; i++)
        if (state_queries[i].minor == cls->minor && !strcmp(state_queries[i].ext, cls->ext))
            return !state_queries[i].delete_at || (size > state_queries[i].delete_at && !req[state_queries[i].delete_at])
                       ? (int)i : -1;
    return -1;
}

bool predict_is_state_query(const struct msg_class *cls, const uint8_t *req, uint32_t size, bool msb)
{
    (void)msb;
    return cls->kind == MSG_REQUEST && state_query_index(cls, req, size) >= 0;
}

/* Whether a request of extension i may change its state, by its name in xcb-proto: one
 * that sets, changes, deletes, creates, destroys, adds, configures, frees, opens or closes
 * (XInput 2's names after their "XI");
 * RANDR's GetScreenResources (which may poll the hardware); and property reads other than
 * the queries above (which may delete). Queries, selections and grabs leave it. */
static bool state_changing_name(int i, uint8_t minor)
{
    static const char *const verbs[] = { "Set", "Change", "Delete", "Create", "Destroy", "Add", "Configure", "Free",
                                         "Open", "Close" };
    const char *name = minor < xp_extensions[i].n_requests ? xp_extensions[i].requests[minor].name : NULL;
    if (!name)
        return true;
    if (!strncmp(name, "XI", 2) && name[2] >= 'A' && name[2] <= 'Z')
        name += 2; /* XInput 2's: XIChangeProperty */
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++)
        if (!strncmp(name, verbs[v], strlen(verbs[v])))
            return true;
    return !strcmp(name, "GetScreenResources") || (!strncmp(name, "Get", 3) && strstr(name, "Property"));
}

/* Whether a request of a watched extension may change its state. */
bool pd_state_changing(const struct predictor *p, const struct msg_class *cls, const uint8_t *req, uint32_t size)
{
    if (strcmp(cls->ext, "RANDR") && strcmp(cls->ext, "XInputExtension"))
        return false;
    int i = pd_find_extension((const uint8_t *)cls->ext, strlen(cls->ext));
    return i >= 0 && p->ext[i].watched && state_query_index(cls, req, size) < 0 && state_changing_name(i, cls->minor);
}

/* Forgets what is known of the state of extension i (its queries' replies). */
void pd_forget_state(struct predictor *p, int i)
{
    if (i < 0 || !p->ext[i].known || !p->ext[i].body[0])
        return;
    uint8_t major = p->ext[i].body[1];
    for (uint32_t k = 0; k < p->n_ex;) {
        struct exchange *e = &p->ex[k];
        uint32_t at = 0, last = 0;
        while (at + 4 <= e->key_len && ld16(e->key + at + 2, e->msb)) {
            last = at;
            at += 4u * ld16(e->key + at + 2, e->msb);
        }
        struct msg_class c = { .kind = MSG_REQUEST, .ext = xp_extensions[i].xname };
        bool state = e->kind == EX_REQ && at == e->key_len && e->key[last] == major && (c.minor = e->key[last + 1], true) &&
                     state_query_index(&c, e->key + last, e->key_len - last) >= 0;
        if (state) {
            p->ex_bytes -= e->key_len + e->reply_len;
            free(e->key);
            free(e->reply);
            *e = p->ex[--p->n_ex];
        } else {
            k++;
        }
    }
}

/* The key of a state query: the connection's handshakes of the extension (which say the
 * version it agreed), then the query. NULL when the extension is not watched. */
uint8_t *pd_state_key(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                          const uint8_t *req, uint32_t size, uint32_t *key_len)
{
    int i = cls->ext ? pd_find_extension((const uint8_t *)cls->ext, strlen(cls->ext)) : -1;
    if (i < 0 || !p->ext[i].watched || req[0] < 128 || pq->hist_lost || !pq->hist || state_query_index(cls, req, size) < 0)
        return NULL;
    const struct predict_history *h = &pq->hist[req[0] - 128];
    if (!h->len || h->late || h->len + size > PREDICT_MAX_KEY)
        return NULL;
    uint8_t *key = malloc(h->len + size);
    if (!key)
        return NULL;
    memcpy(key, h->bytes, h->len);
    memcpy(key + h->len, req, size);
    *key_len = h->len + size;
    return key;
}

/* The key of an extension request: the connection's earlier requests of the extension,
 * then this one. NULL when they are not all handshakes (or for a request of another kind). */
uint8_t *pd_handshake_key(const struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                              uint32_t size, uint32_t *key_len)
{
    if (!cls->ext || size < 4 || req[0] < 128 || pq->hist_lost || !predict_is_handshake(cls->ext, cls->minor))
        return NULL;
    const struct predict_history *h = pq->hist ? &pq->hist[req[0] - 128] : NULL;
    if (h && h->tainted)
        return NULL;
    uint32_t hl = h ? h->len : 0;
    if (hl + size > PREDICT_MAX_KEY)
        return NULL;
    uint8_t *key = malloc(hl + size);
    if (!key)
        return NULL;
    if (hl)
        memcpy(key, h->bytes, hl);
    memcpy(key + hl, req, size);
    *key_len = hl + size;
    return key;
}

bool pd_answer_exchange(const struct exchange *e, uint16_t seq, bool msb, struct buf *out)
{
    uint8_t *r = e ? buf_append_space(out, e->reply_len) : NULL;
    if (!r)
        return false;
    memcpy(r, e->reply, e->reply_len);
    replies_seq(r, e->reply_len, seq, e->msb);
    return true;
}

const uint8_t *predict_font_list_answer(const struct predictor *p, const uint8_t *req, uint32_t size, bool msb,
                                        size_t *len)
{
    const struct exchange *e = p ? pd_exchange_find(p, EX_REQ, msb, req, size) : NULL;
    *len = e ? e->reply_len : 0;
    return e ? e->reply : NULL;
}

int predict_fact_exchange(struct buf *out, bool msb, const uint8_t *key, size_t key_len, const uint8_t *reply,
                          size_t reply_len)
{
    return predict_fact_reply(out, FACT_EXCHANGE, msb, key, key_len, reply, reply_len);
}

int predict_fact_reply(struct buf *out, uint8_t kind, bool msb, const uint8_t *key, size_t key_len,
                       const uint8_t *reply, size_t reply_len)
{
    uint8_t head[2] = { kind, msb };
    return buf_append(out, head, 2) || buf_put_varint(out, key_len) || buf_append(out, key, key_len) ||
           buf_put_varint(out, reply_len) || buf_append(out, reply, reply_len) ? -ENOMEM : 0;
}

int pd_find_extension(const uint8_t *name, size_t len)
{
    for (size_t i = 0; i < xp_n_extensions; i++)
        if (strlen(xp_extensions[i].xname) == len && memcmp(xp_extensions[i].xname, name, len) == 0)
            return (int)i;
    return -1;
}

int predict_fact_state(struct buf *out, const char *ext, bool watched)
{
    uint8_t head[2] = { FACT_STATE, (uint8_t)strlen(ext) }, w = watched;
    return buf_append(out, head, 2) || buf_append(out, ext, head[1]) || buf_append(out, &w, 1) ? -ENOMEM : 0;
}

bool predict_extension(const struct predictor *p, const char *xname, uint8_t *major, uint8_t *first_event)
{
    int i = pd_find_extension((const uint8_t *)xname, strlen(xname));
    if (i < 0 || !p->ext[i].known || !p->ext[i].body[0])
        return false;
    *major = p->ext[i].body[1];
    *first_event = p->ext[i].body[2];
    return true;
}

bool predict_font_known(const struct predictor *p, const uint8_t *name, size_t len)
{
    return p && pd_exchange_find(p, EX_FONT, false, name, len);
}
