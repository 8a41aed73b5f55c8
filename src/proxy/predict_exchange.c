/* predict_exchange.c -- replies known from their question, kept as bytes: keyed by requests
 * (version handshakes after the connection's earlier ones, state queries of watched extensions,
 * font lists; padding zeroed) or by a font's name (QueryFont). At most PREDICT_MAX_EXCHANGES. */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"

/* The request table entry of a request of this server (an extension's by its major opcode). */
static const struct xp_request *request_entry(const struct predictor *p, const struct xp_request_header *h)
{
    if (h->major < 128)
        return &xp_core_requests[h->major];
    for (size_t i = 0; p->ext && i < xp_n_extensions; i++)
        if (p->ext[i].known && p->ext[i].body[0] && p->ext[i].body[1] == h->major)
            return h->data < xp_extensions[i].n_requests ? &xp_extensions[i].requests[h->data] : NULL;
    return NULL;
}

/* The size of the request at key + at (a key is whole requests, in plain form), or 0 when
 * none starts there or it runs past the key. */
static size_t key_request(const uint8_t *key, size_t len, size_t at, bool msb, struct xp_request_header *h)
{
    if (at > len || !xp_request_header_view(key + at, len - at, msb, h) || 4u * h->length > len - at)
        return 0;
    return 4u * h->length;
}

/* A key of requests with what the server ignores zeroed: the padding xcb-proto describes,
 * and a font pattern's padding, which libraries (Xlib, libXext) leave as they find them, so
 * the same question from two clients is one question. */
static void zero_padding(const struct predictor *p, uint8_t *key, size_t len, bool msb)
{
    struct xp_request_header h;
    for (size_t at = 0, n; (n = key_request(key, len, at, msb, &h)); at += n) {
        const struct xp_request *r = request_entry(p, &h);
        for (unsigned b = 0; r && b < 32 && b < n; b++)
            if (r->pad_mask & (1u << b))
                key[at + b] = 0;
        /* ListFontsWithInfo lays out its pattern as ListFonts does */
        struct xp_list_fonts_req lf;
        if ((h.major == XP_OP_LIST_FONTS || h.major == XP_OP_LIST_FONTS_WITH_INFO) &&
            xp_list_fonts_req_view(key + at, n, msb, &lf) && lf.pattern)
            memset(key + at + XP_LIST_FONTS_REQ_SIZE + lf.pattern_len, 0, lf.rest_len - lf.pattern_len);
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
    struct xp_server_header h;
    if (n < XP_SERVER_MSG_SIZE || n > PREDICT_MAX_REPLY)
        return false;
    for (size_t at = 0; at < n; at += XP_SERVER_MSG_SIZE + 4 * (size_t)h.length)
        if (n - at < XP_SERVER_MSG_SIZE || !xp_server_header_view(r + at, n - at, msb, &h) || h.code != XP_REPLY ||
            XP_SERVER_MSG_SIZE + 4 * (uint64_t)h.length > n - at)
            return false;
    return true;
}

/* Sets the sequence number of each reply in r (whole, as above). */
static void replies_seq(uint8_t *r, size_t n, uint16_t seq, bool msb)
{
    struct xp_server_header h;
    for (size_t at = 0; at < n && xp_server_header_view(r + at, n - at, msb, &h); at += XP_SERVER_MSG_SIZE + 4 * (size_t)h.length)
        xp_server_set_sequence(r + at, seq, msb);
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
    { "BIG-REQUESTS", XP_BIGREQ_OP_ENABLE }, { "XKEYBOARD", XP_XKB_OP_USE_EXTENSION }, { "RENDER", XP_RENDER_OP_QUERY_VERSION },
    { "RENDER", XP_RENDER_OP_QUERY_PICT_FORMATS }, { "XFIXES", XP_XFIXES_OP_QUERY_VERSION },
    { "SHAPE", XP_SHAPE_OP_QUERY_VERSION }, { "Composite", XP_COMPOSITE_OP_QUERY_VERSION },
    { "DAMAGE", XP_DAMAGE_OP_QUERY_VERSION }, { "SYNC", XP_SYNC_OP_INITIALIZE }, { "RANDR", XP_RANDR_OP_QUERY_VERSION },
    { "Generic Event Extension", XP_GE_OP_QUERY_VERSION }, { "XInputExtension", XP_XINPUT_OP_GET_EXTENSION_VERSION },
    { "XInputExtension", XP_XINPUT_OP_XI_QUERY_VERSION }, { "MIT-SCREEN-SAVER", XP_SCREENSAVER_OP_QUERY_VERSION },
    { "DPMS", XP_DPMS_OP_GET_VERSION }, { "XTEST", XP_XTEST_OP_GET_VERSION }, { "XINERAMA", XP_XINERAMA_OP_QUERY_VERSION },
    { "DOUBLE-BUFFER", XP_DBE_OP_QUERY_VERSION }, { "RECORD", XP_RECORD_OP_QUERY_VERSION },
    { "Present", XP_PRESENT_OP_QUERY_VERSION }, { "XC-MISC", XP_XC_MISC_OP_GET_VERSION },
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
    return cls->ext && cls->minor == XP_XKB_OP_GET_MAP && !strcmp(cls->ext, "XKEYBOARD");
}

/* Where the GetMap request a key ends with starts (of this major opcode, or of any when
 * major is 0), or 0 when it does not end with one: such replies hold the keyboard's mapping.
 * (A GetMap is never first: UseExtension comes before it.) */
uint32_t pd_exchange_ext_query_at(const struct exchange *e, uint8_t major, uint8_t minor)
{
    uint32_t at = 0, last = 0;
    struct xp_request_header h, first = { 0 };
    for (size_t n; (n = key_request(e->key, e->key_len, at, e->msb, &h)); at += (uint32_t)n) {
        if (!at)
            first = h;
        last = at;
    }
    if (at != e->key_len || !last || !key_request(e->key, e->key_len, last, e->msb, &h))
        return 0;
    bool query = e->kind == EX_REQ && h.major >= 128 && (!major || h.major == major) && h.data == minor &&
                 first.major == h.major;
    return query ? last : 0;
}

uint32_t pd_exchange_get_map_at(const struct exchange *e, uint8_t major)
{
    return pd_exchange_ext_query_at(e, major, XP_XKB_OP_GET_MAP);
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
 * connection agreed, which its first requests (handshakes) say. Property reads count only
 * without their "delete" flag. */
static const struct {
    const char *ext;
    uint8_t minor;
} state_queries[] = {
    { "RANDR", XP_RANDR_OP_GET_SCREEN_SIZE_RANGE }, { "RANDR", XP_RANDR_OP_GET_OUTPUT_INFO },
    { "RANDR", XP_RANDR_OP_GET_OUTPUT_PROPERTY }, { "RANDR", XP_RANDR_OP_GET_CRTC_INFO },
    { "RANDR", XP_RANDR_OP_GET_SCREEN_RESOURCES_CURRENT }, { "RANDR", XP_RANDR_OP_GET_OUTPUT_PRIMARY },
    { "RANDR", XP_RANDR_OP_GET_MONITORS },
    { "XInputExtension", XP_XINPUT_OP_XI_QUERY_DEVICE }, { "XInputExtension", XP_XINPUT_OP_XI_GET_PROPERTY },
    /* the keyboard's state, controls, map and names: XKEYBOARD's StateNotify, ControlsNotify,
     * MapNotify, NamesNotify and NewKeyboardNotify say their changes */
    { "XKEYBOARD", XP_XKB_OP_GET_STATE }, { "XKEYBOARD", XP_XKB_OP_GET_CONTROLS }, { "XKEYBOARD", XP_XKB_OP_GET_MAP },
    { "XKEYBOARD", XP_XKB_OP_GET_NAMES },
};

/* Whether ext is one whose state the display side may watch (statewatch.h). */
static bool watchable(const char *ext)
{
    return !strcmp(ext, "RANDR") || !strcmp(ext, "XInputExtension") || !strcmp(ext, "XKEYBOARD");
}

/* Whether a property read deletes (or is cut short: then it is not a query either). */
static bool deletes(const struct msg_class *cls, const uint8_t *req, uint32_t size)
{
    struct xp_randr_get_output_property_req r;
    struct xp_xinput_xi_get_property_req x;
    if (!strcmp(cls->ext, "RANDR") && cls->minor == XP_RANDR_OP_GET_OUTPUT_PROPERTY)
        return !xp_randr_get_output_property_req_view(req, size, false, &r) || r.delete;
    if (!strcmp(cls->ext, "XInputExtension") && cls->minor == XP_XINPUT_OP_XI_GET_PROPERTY)
        return !xp_xinput_xi_get_property_req_view(req, size, false, &x) || x.delete;
    return false;
}

static int state_query_index(const struct msg_class *cls, const uint8_t *req, uint32_t size)
{
    for (size_t i = 0; cls->ext && i < sizeof state_queries / sizeof *state_queries; i++)
        if (state_queries[i].minor == cls->minor && !strcmp(state_queries[i].ext, cls->ext))
            return deletes(cls, req, size) ? -1 : (int)i;
    return -1;
}

bool predict_is_state_query(const struct msg_class *cls, const uint8_t *req, uint32_t size, bool msb)
{
    (void)msb;
    if (cls->kind == MSG_REQUEST && !cls->ext && cls->major == XP_OP_GET_SELECTION_OWNER)
        return true; /* statewatch.h's selections */
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
                                         "Open", "Close", "Latch" };
    const char *name = minor < xp_extensions[i].n_requests ? xp_extensions[i].requests[minor].name : NULL;
    if (!name)
        return true;
    if (!strncmp(name, "XI", 2) && name[2] >= 'A' && name[2] <= 'Z')
        name += 2; /* XInput 2's: XIChangeProperty */
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++)
        if (!strncmp(name, verbs[v], strlen(verbs[v])))
            return true;
    return !strcmp(name, "GetScreenResources") || !strcmp(name, "GetKbdByName") /* loads a keymap */ ||
           (!strncmp(name, "Get", 3) && strstr(name, "Property"));
}

/* Whether a request of a watched extension may change its state. */
bool pd_state_changing(const struct predictor *p, const struct msg_class *cls, const uint8_t *req, uint32_t size)
{
    if (!watchable(cls->ext))
        return false;
    int i = pd_find_extension((const uint8_t *)cls->ext, strlen(cls->ext));
    return i >= 0 && p->ext[i].watched && state_query_index(cls, req, size) < 0 && state_changing_name(i, cls->minor);
}

/* Forgets what is known of the state of extension i (its queries' replies): of the queries
 * whose minor opcodes are in `minors` (bit n: minor n), or of all when minors is 0. */
void pd_forget_state(struct predictor *p, int i, uint32_t minors)
{
    if (i < 0 || !p->ext[i].known || !p->ext[i].body[0])
        return;
    uint8_t major = p->ext[i].body[1];
    for (uint32_t k = 0; k < p->n_ex;) {
        struct exchange *e = &p->ex[k];
        uint32_t at = 0, last = 0;
        struct xp_request_header h = { 0 };
        for (size_t n; (n = key_request(e->key, e->key_len, at, e->msb, &h)); at += (uint32_t)n)
            last = at;
        struct msg_class c = { .kind = MSG_REQUEST, .ext = xp_extensions[i].xname };
        bool state = e->kind == EX_REQ && at == e->key_len && key_request(e->key, e->key_len, last, e->msb, &h) &&
                     h.major == major && (c.minor = h.data, true) && (!minors || (h.data < 32 && (minors >> h.data & 1))) &&
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
    if (i < 0 || !p->ext[i].watched || cls->major < 128 || pq->hist_lost || !pq->hist || state_query_index(cls, req, size) < 0)
        return NULL;
    const struct predict_history *h = &pq->hist[cls->major - 128];
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
    if (!cls->ext || size < 4 || cls->major < 128 || pq->hist_lost || !predict_is_handshake(cls->ext, cls->minor))
        return NULL;
    const struct predict_history *h = pq->hist ? &pq->hist[cls->major - 128] : NULL;
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

int predict_fact_state_of(struct buf *out, const char *ext, bool watched, uint32_t minors)
{
    uint8_t m[4];
    st32(m, minors, false);
    return predict_fact_state(out, ext, watched) || (minors && buf_append(out, m, 4)) ? -ENOMEM : 0;
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
