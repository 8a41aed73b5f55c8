/* predict.c -- the facts behind local answers, and the answers themselves. Only facts
 * that cannot change during a server's life are kept: nothing here is a guess.
 * Workload: a few hundred atoms and a few dozen extensions per session, a few dozen fonts
 * and handshakes; lookups per request of the kinds below only. Memory is bounded
 * (PREDICT_MAX_ATOMS, PREDICT_MAX_EXCHANGES, PREDICT_MAX_EXCHANGE_BYTES). */
#include "proxy/predict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"
#include "xproto_tables.h"

#define QE_BODY 24                 /* QueryExtension reply bytes 8..31 */
#define PREDICT_MAX_ATOMS 32768u   /* atoms remembered per session */
#define PREDICT_MAX_NAME 1024u     /* longer atom names are not remembered */
#define OP_INTERN_ATOM 16
#define OP_GET_ATOM_NAME 17
#define OP_ALLOC_COLOR 84
#define OP_OPEN_FONT 45
#define OP_CLOSE_FONT 46
#define OP_QUERY_FONT 47
#define OP_LIST_FONTS 49
#define OP_LIST_FONTS_WITH_INFO 50
#define PREDICT_MAX_EXCHANGES 1024u              /* handshakes, fonts, font lists remembered */
#define PREDICT_MAX_EXCHANGE_BYTES (32u << 20)   /* their replies, in all */
#define PREDICT_MAX_REPLY (4u << 20)             /* one reply kept at most */
#define PREDICT_MAX_FONTS 256u                   /* open fonts remembered per connection */
#define PREDICT_MAX_KEY 65536u                   /* a key: requests' bytes or a font name */
#define PREDICT_MAX_ROOT_PROPS 512u              /* root properties remembered */
#define PREDICT_MAX_OTHER_EXT 32u                /* extensions xcb-proto does not name */
#define PREDICT_MAX_PROP_BYTES (256u * 1024)     /* one property's value at most */
#define OP_CHANGE_PROPERTY 18
#define OP_DELETE_PROPERTY 19
#define OP_GET_PROPERTY 20
#define OP_ROTATE_PROPERTIES 114
#define OP_CHANGE_KEYBOARD_MAPPING 100
#define OP_GET_KEYBOARD_MAPPING 101
#define OP_SET_MODIFIER_MAPPING 118
#define OP_GET_MODIFIER_MAPPING 119
#define PREDICT_MAX_COLORMAPS 16u  /* default colormaps of TrueColor screens */
#define PREDICT_MAX_COLOR_NAMES 64u /* colour names the display side looked up */
#define PREDICT_MAX_FONTS_OK 16u   /* font names the display side opened */
#define OP_ALLOC_NAMED_COLOR 85
#define OP_QUERY_COLORS 91
#define OP_LOOKUP_COLOR 92
#define PREDICT_MAX_QUERY_COLORS 4096u /* pixels in one QueryColors answered at most */

struct atom {
    uint32_t atom;
    uint16_t len;
    char *name;
};

/* A colormap whose AllocColor answer is arithmetic: a TrueColor visual's default map.
 * The formula is the sample server's (mi); it is trusted only once a real reply has
 * matched it, and never again after one has not. */
struct truecolor_map {
    uint32_t colormap;
    uint32_t red_mask, green_mask, blue_mask;
    uint8_t bits_per_rgb, depth;
    bool verified, broken;
};

/* A colour name the display side looked up (LookupColor), with its exact value. */
struct color_name {
    uint8_t len;
    char name[255];               /* lower case: the server compares without case */
    uint16_t rgb[3];
};

/* A reply known from its question: EX_REQ, keyed by request bytes (an extension's: the
 * connection's earlier handshakes of it first); EX_FONT, keyed by a font's name. */
enum { EX_REQ, EX_FONT };
struct exchange {
    uint8_t kind;
    bool msb;
    uint32_t key_len, reply_len;
    uint8_t *key, *reply;          /* the reply with sequence number 0 */
};

/* A property of a root window, as the display side's connection watches it. */
struct root_prop {
    uint32_t window, property, type;
    uint8_t state, format;
    uint32_t len;
    uint8_t *data;
};

struct predictor {
    struct {                       /* QueryExtension answers for names xcb-proto does not know */
        uint8_t len;
        char name[255];
        uint8_t body[QE_BODY];
    } other_ext[PREDICT_MAX_OTHER_EXT];
    uint32_t n_other_ext;
    struct {                       /* the keyboard mapping and the modifier mapping, together */
        bool known;
        uint8_t min, max, per_keycode, per_modifier;
        uint32_t *keysyms;         /* (max - min + 1) * per_keycode */
        uint8_t modifiers[8 * 255];
    } kb;
    struct root_prop *props;       /* property 0: the window's unnamed properties */
    uint32_t n_props;
    struct exchange *ex;
    uint32_t n_ex;
    size_t ex_bytes;
    struct truecolor_map cmaps[PREDICT_MAX_COLORMAPS];
    uint32_t n_cmaps;
    struct color_name colors[PREDICT_MAX_COLOR_NAMES];
    uint32_t n_colors;
    struct {
        uint8_t len;
        char name[255];
    } fonts_ok[PREDICT_MAX_FONTS_OK]; /* fonts the display side opened */
    uint32_t n_fonts_ok;
    uint32_t census_next;          /* every atom below it was told (FACT_ATOM_CENSUS); 0: no census */
    uint32_t max_atom;             /* the largest atom known, or told by its hash */
    struct {                       /* atoms told by the hash of their name (FACT_ATOM_HASHES) */
        uint32_t *ids;             /* ... and not known by name: ascending */
        uint32_t n, cap;
        uint8_t *bits;             /* every hash told (2^16 bits, never cleared): a name whose
                                    * hash is here may be one of them */
    } unnamed;
    bool setup_learnt;
    struct {
        bool known;
        bool watched;              /* its state queries are answered (FACT_STATE) */
        uint8_t body[QE_BODY];
    } *ext;                        /* by xp_extensions index */
    struct atom *atoms;            /* learnt and predefined, in no order */
    uint32_t n_atoms;
    uint32_t *by_name, *by_id;     /* open addressing: index + 1 into atoms, 0 empty */
    uint32_t slots;                /* a power of two, over twice PREDICT_MAX_ATOMS */
};

static uint32_t hash_name(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static uint32_t hash_id(uint32_t a) { return a * 2654435761u; }

/* The 16-bit hash of FACT_ATOM_HASHES (docs/PROTOCOL.md 3.2): FNV-1a, folded. */
static uint16_t name_hash16(const char *s, size_t n)
{
    uint32_t h = hash_name(s, n);
    return (uint16_t)(h ^ h >> 16);
}

/* Where atom is, or would go, in the ascending list of atoms told by hash only. */
static uint32_t unnamed_at(const struct predictor *p, uint32_t atom)
{
    uint32_t lo = 0, hi = p->unnamed.n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->unnamed.ids[mid] < atom)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool unnamed_has(const struct predictor *p, uint32_t atom)
{
    uint32_t i = unnamed_at(p, atom);
    return i < p->unnamed.n && p->unnamed.ids[i] == atom;
}

/* Whether a name without a known atom may still have one: its hash was told for an atom
 * whose name is not known. */
static bool unnamed_may_be(const struct predictor *p, const char *name, size_t len)
{
    uint16_t h = name_hash16(name, len);
    return p->unnamed.n && p->unnamed.bits && (p->unnamed.bits[h >> 3] >> (h & 7) & 1);
}

static const struct atom *atom_by_name(const struct predictor *p, const char *name, size_t len)
{
    for (uint32_t i = hash_name(name, len) & (p->slots - 1);; i = (i + 1) & (p->slots - 1)) {
        uint32_t e = p->by_name[i];
        if (!e)
            return NULL;
        const struct atom *a = &p->atoms[e - 1];
        if (a->len == len && memcmp(a->name, name, len) == 0)
            return a;
    }
}

static const struct atom *atom_by_id(const struct predictor *p, uint32_t id)
{
    for (uint32_t i = hash_id(id) & (p->slots - 1);; i = (i + 1) & (p->slots - 1)) {
        uint32_t e = p->by_id[i];
        if (!e)
            return NULL;
        if (p->atoms[e - 1].atom == id)
            return &p->atoms[e - 1];
    }
}

static void atom_add(struct predictor *p, uint32_t id, const char *name, size_t len)
{
    if (!id || len > PREDICT_MAX_NAME || p->n_atoms >= PREDICT_MAX_ATOMS || atom_by_id(p, id) ||
        atom_by_name(p, name, len))
        return;
    char *copy = malloc(len + 1);
    if (!copy)
        return;
    memcpy(copy, name, len);
    copy[len] = 0;
    p->atoms[p->n_atoms] = (struct atom){ id, (uint16_t)len, copy };
    uint32_t e = ++p->n_atoms, i;
    for (i = hash_name(name, len) & (p->slots - 1); p->by_name[i]; i = (i + 1) & (p->slots - 1))
        ;
    p->by_name[i] = e;
    for (i = hash_id(id) & (p->slots - 1); p->by_id[i]; i = (i + 1) & (p->slots - 1))
        ;
    p->by_id[i] = e;
    if (id > p->max_atom)
        p->max_atom = id;
    uint32_t u = unnamed_at(p, id);
    if (u < p->unnamed.n && p->unnamed.ids[u] == id) { /* its name, at last */
        memmove(p->unnamed.ids + u, p->unnamed.ids + u + 1, (p->unnamed.n - u - 1) * sizeof *p->unnamed.ids);
        p->unnamed.n--;
    }
    while (p->census_next && (atom_by_id(p, p->census_next) || unnamed_has(p, p->census_next)))
        p->census_next++; /* learnt in order: the census still covers them all */
}

/* An atom told by its name's hash: it counts for the census; a name with that hash is not
 * answered None. Beyond the bound it is not counted, so the census is not current. */
static void unnamed_add(struct predictor *p, uint32_t id, uint16_t hash)
{
    if (!p->unnamed.bits && !(p->unnamed.bits = calloc(1, 65536 / 8)))
        return;
    p->unnamed.bits[hash >> 3] |= (uint8_t)(1u << (hash & 7));
    uint32_t u = unnamed_at(p, id);
    if (atom_by_id(p, id) || (u < p->unnamed.n && p->unnamed.ids[u] == id) ||
        p->n_atoms + p->unnamed.n >= PREDICT_MAX_ATOMS)
        return;
    if (p->unnamed.n == p->unnamed.cap) {
        uint32_t cap = p->unnamed.cap ? 2 * p->unnamed.cap : 256;
        uint32_t *ids = realloc(p->unnamed.ids, cap * sizeof *ids);
        if (!ids)
            return;
        p->unnamed.ids = ids;
        p->unnamed.cap = cap;
    }
    memmove(p->unnamed.ids + u + 1, p->unnamed.ids + u, (p->unnamed.n - u) * sizeof *p->unnamed.ids);
    p->unnamed.ids[u] = id;
    p->unnamed.n++;
    if (id > p->max_atom)
        p->max_atom = id;
    while (p->census_next && (atom_by_id(p, p->census_next) || unnamed_has(p, p->census_next)))
        p->census_next++;
}

/* Whether the atoms known (by name or by hash) are exactly 1..census_next-1 and nothing
 * beyond: then a name not among them, and not of a hash told, has no atom (as of the display
 * side's last look, docs/PROTOCOL.md 3.2). */
static bool census_current(const struct predictor *p)
{
    return p->census_next > 1 && p->max_atom < p->census_next && p->n_atoms + p->unnamed.n == p->census_next - 1;
}

int predict_new(struct predictor **out)
{
    struct predictor *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->slots = 1;
    while (p->slots < 2 * PREDICT_MAX_ATOMS)
        p->slots <<= 1;
    p->ext = calloc(xp_n_extensions, sizeof *p->ext);
    p->atoms = calloc(PREDICT_MAX_ATOMS, sizeof *p->atoms);
    p->by_name = calloc(p->slots, sizeof *p->by_name);
    p->by_id = calloc(p->slots, sizeof *p->by_id);
    p->ex = calloc(PREDICT_MAX_EXCHANGES, sizeof *p->ex);
    p->props = calloc(PREDICT_MAX_ROOT_PROPS, sizeof *p->props);
    if (!p->ext || !p->atoms || !p->by_name || !p->by_id || !p->ex || !p->props) {
        predict_free(p);
        return -ENOMEM;
    }
    for (uint32_t a = 1; a <= XP_N_PREDEFINED_ATOMS; a++)
        if (xp_predefined_atoms[a])
            atom_add(p, a, xp_predefined_atoms[a], strlen(xp_predefined_atoms[a]));
    *out = p;
    return 0;
}

void predict_free(struct predictor *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; p->atoms && i < p->n_atoms; i++)
        free(p->atoms[i].name);
    free(p->atoms);
    free(p->unnamed.ids);
    free(p->unnamed.bits);
    free(p->by_name);
    free(p->by_id);
    free(p->ext);
    for (uint32_t i = 0; p->ex && i < p->n_ex; i++) {
        free(p->ex[i].key);
        free(p->ex[i].reply);
    }
    free(p->ex);
    for (uint32_t i = 0; p->props && i < p->n_props; i++)
        free(p->props[i].data);
    free(p->props);
    free(p->kb.keysyms);
    free(p);
}

static void question_drop(struct predict_questions *pq)
{
    free(pq->q[pq->head].name);
    buf_free(&pq->q[pq->head].acc);
    pq->head = (pq->head + 1) % pq->cap;
    pq->len--;
}

void predict_questions_free(struct predict_questions *pq)
{
    while (pq->len)
        question_drop(pq);
    free(pq->q);
    free(pq->hist);
    for (uint32_t i = 0; i < pq->n_fonts; i++)
        free(pq->fonts[i].name);
    free(pq->fonts);
    *pq = (struct predict_questions){ 0 };
}

/* ---------------------------------------------------------------- exchanges */

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
        if ((key[at] == OP_LIST_FONTS || key[at] == OP_LIST_FONTS_WITH_INFO) && n >= 8 &&
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

static const struct exchange *exchange_find(const struct predictor *p, uint8_t kind, bool msb, const uint8_t *key,
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
static bool reply_whole(const uint8_t *r, size_t n, bool msb)
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
static void exchange_add(struct predictor *p, uint8_t kind, bool msb, const uint8_t *key, size_t key_len,
                         const uint8_t *reply, size_t reply_len)
{
    if (!key_len || key_len > PREDICT_MAX_KEY || !reply_whole(reply, reply_len, msb) || p->n_ex >= PREDICT_MAX_EXCHANGES ||
        p->ex_bytes + reply_len + key_len > PREDICT_MAX_EXCHANGE_BYTES || exchange_find(p, kind, msb, key, key_len))
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

static bool xkb_get_map(const struct msg_class *cls)
{
    return cls->ext && cls->minor == 8 && !strcmp(cls->ext, "XKEYBOARD");
}

/* Where the GetMap request a key ends with starts (of this major opcode, or of any when
 * major is 0), or 0 when it does not end with one: such replies hold the keyboard's mapping.
 * (A GetMap is never first: UseExtension comes before it.) */
static uint32_t exchange_get_map_at(const struct exchange *e, uint8_t major)
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
static void forget_keyboard(struct predictor *p)
{
    p->kb.known = false;
    for (uint32_t i = 0; i < p->n_ex;) {
        struct exchange *e = &p->ex[i];
        if (exchange_get_map_at(e, 0)) {
            p->ex_bytes -= e->key_len + e->reply_len;
            free(e->key);
            free(e->reply);
            *e = p->ex[--p->n_ex];
        } else {
            i++;
        }
    }
}

static int find_extension(const uint8_t *name, size_t len);

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
static bool state_changing(const struct predictor *p, const struct msg_class *cls, const uint8_t *req, uint32_t size)
{
    if (strcmp(cls->ext, "RANDR") && strcmp(cls->ext, "XInputExtension"))
        return false;
    int i = find_extension((const uint8_t *)cls->ext, strlen(cls->ext));
    return i >= 0 && p->ext[i].watched && state_query_index(cls, req, size) < 0 && state_changing_name(i, cls->minor);
}

/* Forgets what is known of the state of extension i (its queries' replies). */
static void forget_state(struct predictor *p, int i)
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
static uint8_t *state_key(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                          const uint8_t *req, uint32_t size, uint32_t *key_len)
{
    int i = cls->ext ? find_extension((const uint8_t *)cls->ext, strlen(cls->ext)) : -1;
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
static uint8_t *handshake_key(const struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
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

static const struct predict_font *font_find(const struct predict_questions *pq, uint32_t fid)
{
    for (uint32_t i = 0; i < pq->n_fonts; i++)
        if (pq->fonts[i].fid == fid)
            return &pq->fonts[i];
    return NULL;
}

static void font_forget(struct predict_questions *pq, uint32_t fid)
{
    struct predict_font *f = (struct predict_font *)font_find(pq, fid);
    if (!f)
        return;
    free(f->name);
    *f = pq->fonts[--pq->n_fonts];
}

static struct root_prop *prop_find(const struct predictor *p, uint32_t window, uint32_t property)
{
    for (uint32_t i = 0; i < p->n_props; i++)
        if (p->props[i].window == window && p->props[i].property == property)
            return &p->props[i];
    return NULL;
}

/* Sets what is known of a root property; property 0 with PROP_UNKNOWN forgets the window. */
static void prop_set(struct predictor *p, uint32_t window, uint32_t property, uint8_t state, uint32_t type,
                     uint8_t format, const uint8_t *data, uint32_t len)
{
    if (!property && state == PROP_UNKNOWN) {
        for (uint32_t i = 0; i < p->n_props;)
            if (p->props[i].window == window) {
                free(p->props[i].data);
                p->props[i] = p->props[--p->n_props];
            } else {
                i++;
            }
        return;
    }
    struct root_prop *r = prop_find(p, window, property);
    uint8_t *copy = NULL;
    if (state == PROP_VALUE && !(copy = malloc(len ? len : 1)))
        state = PROP_UNKNOWN;
    if (!r) {
        if (p->n_props >= PREDICT_MAX_ROOT_PROPS) {
            free(copy);
            if ((r = prop_find(p, window, 0)))
                r->state = PROP_UNKNOWN; /* no room: nothing unnamed is known either */
            return;
        }
        r = &p->props[p->n_props++];
        *r = (struct root_prop){ .window = window, .property = property };
    }
    free(r->data);
    *r = (struct root_prop){ .window = window, .property = property, .state = state, .type = type,
                             .format = format, .len = copy ? len : 0, .data = copy };
    if (copy && len)
        memcpy(copy, data, len);
}

bool predict_property_known(const struct predictor *p, uint32_t window, uint32_t property)
{
    const struct root_prop *r = prop_find(p, window, property);
    if (!r)
        r = prop_find(p, window, 0);
    return r && r->state != PROP_UNKNOWN;
}

/* A request that changes a root window's properties: what the app side knows of them
 * is no longer current. The same on both sides. */
static void track_property_change(struct predictor *p, const struct msg_class *cls, const uint8_t *req,
                                  uint32_t size, bool msb)
{
    if (size < 12 || !prop_find(p, ld32(req + 4, msb), 0))
        return; /* not a root window we know */
    uint32_t window = ld32(req + 4, msb);
    if (cls->major == OP_ROTATE_PROPERTIES) {
        prop_set(p, window, 0, PROP_UNKNOWN, 0, 0, NULL, 0);
        return;
    }
    if (cls->major == OP_GET_PROPERTY && !req[1])
        return; /* without delete */
    if (predict_property_known(p, window, ld32(req + 8, msb)))
        prop_set(p, window, ld32(req + 8, msb), PROP_UNKNOWN, 0, 0, NULL, 0);
}

void predict_track(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                   uint32_t size, bool msb)
{
    if (cls->kind != MSG_REQUEST || size < 4)
        return;
    /* The keyboard's mappings change: not known until the display side says them again. */
    if ((!cls->ext && (cls->major == OP_CHANGE_KEYBOARD_MAPPING || cls->major == OP_SET_MODIFIER_MAPPING)) ||
        (cls->ext && !strcmp(cls->ext, "XKEYBOARD") && (cls->minor == 9 /* SetMap */ || cls->minor == 23 /* GetKbdByName */)))
        forget_keyboard(p);
    if (!cls->ext && (cls->major == OP_CHANGE_PROPERTY || cls->major == OP_DELETE_PROPERTY ||
                      cls->major == OP_GET_PROPERTY || cls->major == OP_ROTATE_PROPERTIES))
        track_property_change(p, cls, req, size, msb);
    if (cls->ext && state_changing(p, cls, req, size))
        forget_state(p, find_extension((const uint8_t *)cls->ext, strlen(cls->ext)));
    if (cls->ext && req[0] >= 128) {
        if (!pq->hist && !pq->hist_lost && !(pq->hist = calloc(128, sizeof *pq->hist)))
            pq->hist_lost = true; /* no histories: no handshake answers on this connection */
        if (!pq->hist)
            return;
        struct predict_history *h = &pq->hist[req[0] - 128];
        if (h->tainted) {
            h->late = h->late || predict_is_handshake(cls->ext, cls->minor);
            return;
        }
        if (predict_is_handshake(cls->ext, cls->minor) && h->len + size <= PREDICT_MAX_HISTORY) {
            memcpy(h->bytes + h->len, req, size);
            h->len = (uint8_t)(h->len + size);
        } else {
            h->tainted = true; /* anything else may change what later handshakes answer */
        }
        return;
    }
    if (cls->ext)
        return;
    if (cls->major == OP_CLOSE_FONT && size >= 8) {
        font_forget(pq, ld32(req + 4, msb));
    } else if (cls->major == OP_OPEN_FONT && size >= 12) {
        uint32_t fid = ld32(req + 4, msb);
        uint16_t len = ld16(req + 8, msb);
        font_forget(pq, fid);
        if ((uint32_t)len + 12 > size || pq->n_fonts >= PREDICT_MAX_FONTS)
            return;
        if (pq->n_fonts == pq->cap_fonts) {
            uint32_t cap = pq->cap_fonts ? pq->cap_fonts * 2 : 8;
            struct predict_font *n = realloc(pq->fonts, cap * sizeof *n);
            if (!n)
                return;
            pq->fonts = n;
            pq->cap_fonts = cap;
        }
        char *name = malloc(len ? len : 1);
        if (!name)
            return;
        memcpy(name, req + 12, len);
        pq->fonts[pq->n_fonts++] = (struct predict_font){ fid, len, name };
    }
}

/* The name a request carries at offset 8, its length at offset 4 (InternAtom, QueryExtension). */
static bool request_name(const uint8_t *req, uint32_t size, bool msb, const char **name, uint16_t *len)
{
    if (size < 8)
        return false;
    *len = ld16(req + 4, msb);
    *name = (const char *)req + 8;
    return (uint32_t)*len + 8 <= size;
}

void predict_ask(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                 uint32_t seq, bool msb)
{
    if (cls->kind != MSG_REQUEST)
        return;
    struct predict_question q = { .seq = seq, .major = cls->major };
    const char *name;
    const struct predict_font *f;
    if (cls->ext) {
        if (xkb_get_map(cls))
            return; /* the keyboard may have changed since: only the display side's facts are kept */
        if (!(q.name = (char *)handshake_key(pq, cls, req, size, &q.name_len)))
            return;
        q.major = req[0];
    } else if (cls->major == OP_QUERY_FONT) {
        if (size < 8 || !(f = font_find(pq, ld32(req + 4, msb))) || !(q.name = malloc(f->len ? f->len : 1)))
            return;
        memcpy(q.name, f->name, f->len);
        q.name_len = f->len;
    } else if (cls->major == OP_LIST_FONTS || cls->major == OP_LIST_FONTS_WITH_INFO) {
        if (size > PREDICT_MAX_KEY || !(q.name = malloc(size)))
            return;
        memcpy(q.name, req, size);
        q.name_len = size;
    } else if (cls->major != OP_INTERN_ATOM && cls->major != OP_GET_ATOM_NAME && cls->major != OP_ALLOC_COLOR) {
        return; /* QueryExtension answers are learnt through cls->query_ext */
    } else if (cls->major == OP_ALLOC_COLOR) {
        if (size < 16)
            return;
        q.atom = ld32(req + 4, msb); /* the colormap */
        q.name_len = 6;
        if (!(q.name = malloc(6)))
            return;
        memcpy(q.name, req + 8, 6);  /* red, green, blue as sent */
    } else if (cls->major == OP_GET_ATOM_NAME) {
        if (size < 8)
            return;
        q.atom = ld32(req + 4, msb);
    } else {
        uint16_t len;
        if (!request_name(req, size, msb, &name, &len) || len > PREDICT_MAX_NAME || !(q.name = malloc(len ? len : 1)))
            return;
        memcpy(q.name, name, len);
        q.name_len = len;
    }
    if (pq->len == pq->cap) {
        uint32_t cap = pq->cap ? pq->cap * 2 : 16;
        struct predict_question *n = cap <= XS_MAX_PENDING ? malloc(cap * sizeof *n) : NULL;
        if (!n) {
            free(q.name);
            return;
        }
        for (uint32_t i = 0; i < pq->len; i++)
            n[i] = pq->q[(pq->head + i) % pq->cap];
        free(pq->q);
        pq->q = n;
        pq->head = 0;
        pq->cap = cap;
    }
    pq->q[(pq->head + pq->len++) % pq->cap] = q;
}

/* ---------------------------------------------------------------- AllocColor, TrueColor */

static uint8_t *reply_header(struct buf *out, uint16_t seq, bool msb, size_t extra);

static struct truecolor_map *cmap_find(const struct predictor *p, uint32_t colormap)
{
    for (uint32_t i = 0; i < p->n_cmaps; i++)
        if (p->cmaps[i].colormap == colormap)
            return (struct truecolor_map *)&p->cmaps[i];
    return NULL;
}

static unsigned mask_shift(uint32_t mask)
{
    unsigned s = 0;
    while (s < 32 && !(mask >> s & 1))
        s++;
    return s;
}

/* One component as the sample server computes it: the request's value is first rounded to
 * bits_per_rgb bits (miResolveColor), then the nearest of the map's entries is taken
 * (FindBestPixel; the first of equals wins); entry i holds i scaled to 16 bits and
 * rounded to bits_per_rgb the same way (miInitializeColormap). */
static uint16_t resolve(const struct truecolor_map *m, uint16_t v)
{
    return (uint16_t)(((uint32_t)(v >> (16u - m->bits_per_rgb)) * 65535u) / ((1u << m->bits_per_rgb) - 1));
}

/* Entry i of a component's map (miInitializeColormap): what QueryColors says of it. */
static uint16_t entry_value(const struct truecolor_map *m, uint32_t mask, uint32_t i)
{
    uint32_t limc = mask >> mask_shift(mask);
    return resolve(m, (uint16_t)((i * 65535u) / limc));
}

static void component(const struct truecolor_map *m, uint32_t mask, uint16_t want, uint32_t *pixel, uint16_t *got)
{
    uint32_t limc = mask >> mask_shift(mask);
    uint32_t v = resolve(m, want);
    uint32_t best = 0, best_value = 0;
    uint64_t best_d = UINT64_MAX;
    for (uint32_t i = 0; i <= limc; i++) {
        uint32_t e = entry_value(m, mask, i);
        int64_t d = (int64_t)e - (int64_t)v;
        if ((uint64_t)(d * d) < best_d) {
            best_d = (uint64_t)(d * d);
            best = i;
            best_value = e;
        }
    }
    *pixel |= best << mask_shift(mask);
    *got = (uint16_t)best_value;
}

static void truecolor_alloc(const struct truecolor_map *m, const uint8_t rgb[6], bool msb, uint8_t out[12])
{
    uint32_t pixel = 0;
    uint16_t r, g, b;
    component(m, m->red_mask, ld16(rgb, msb), &pixel, &r);
    component(m, m->green_mask, ld16(rgb + 2, msb), &pixel, &g);
    component(m, m->blue_mask, ld16(rgb + 4, msb), &pixel, &b);
    if (m->depth == 32) /* the server sets the bits no colour uses (alpha) */
        pixel |= ~(m->red_mask | m->green_mask | m->blue_mask);
    memset(out, 0, 12);
    st16(out, r, msb);
    st16(out + 2, g, msb);
    st16(out + 4, b, msb);
    st32(out + 8, pixel, msb);
}

/* A plausible TrueColor description: contiguous masks of at most 16 bits, rgb bits 1..16. */
static bool truecolor_sane(const struct truecolor_map *m)
{
    const uint32_t masks[3] = { m->red_mask, m->green_mask, m->blue_mask };
    for (int i = 0; i < 3; i++) {
        uint32_t v = masks[i] ? masks[i] >> mask_shift(masks[i]) : 0;
        if (!v || v > 0xffff || (v & (v + 1)))
            return false;
    }
    return m->bits_per_rgb >= 1 && m->bits_per_rgb <= 16;
}

void predict_learn_setup(struct predictor *p, const uint8_t *setup, size_t size, bool msb)
{
    if (p->setup_learnt || size < 40 || setup[0] != 1)
        return;
    p->setup_learnt = true; /* every client sees the same server */
    struct rd r = rd_make(setup, size, msb);
    uint16_t vendor_len;
    uint8_t n_screens, n_formats;
    if (rd_skip(&r, 24) || rd_u16(&r, &vendor_len) || rd_skip(&r, 2) || rd_u8(&r, &n_screens) ||
        rd_u8(&r, &n_formats) || rd_skip(&r, 10) || rd_skip(&r, vendor_len + xw_pad4(vendor_len)) ||
        rd_skip(&r, 8u * n_formats))
        return;
    for (unsigned sc = 0; sc < n_screens; sc++) {
        uint32_t root, colormap, root_visual;
        uint8_t n_depths;
        if (rd_u32(&r, &root) || rd_u32(&r, &colormap) || rd_skip(&r, 24) || rd_u32(&r, &root_visual) ||
            rd_skip(&r, 3) || rd_u8(&r, &n_depths))
            return;
        for (unsigned d = 0; d < n_depths; d++) {
            uint8_t depth;
            uint16_t n_visuals;
            if (rd_u8(&r, &depth) || rd_skip(&r, 1) || rd_u16(&r, &n_visuals) || rd_skip(&r, 4))
                return;
            for (unsigned v = 0; v < n_visuals; v++) {
                uint32_t id;
                uint8_t class;
                struct truecolor_map m = { .colormap = colormap, .depth = depth };
                if (rd_u32(&r, &id) || rd_u8(&r, &class) || rd_u8(&r, &m.bits_per_rgb) || rd_skip(&r, 2) ||
                    rd_u32(&r, &m.red_mask) || rd_u32(&r, &m.green_mask) || rd_u32(&r, &m.blue_mask) ||
                    rd_skip(&r, 4))
                    return;
                if (id == root_visual && class == 4 /* TrueColor */ && truecolor_sane(&m) &&
                    p->n_cmaps < PREDICT_MAX_COLORMAPS && !cmap_find(p, colormap))
                    p->cmaps[p->n_cmaps++] = m;
            }
        }
    }
}

/* The colormap a colour request names, when its answer is arithmetic: a TrueColor default
 * map, trusted (a real reply or the display side's own check matched the formula) unless
 * any_trust (the display side checking the formula itself). */
static const struct truecolor_map *color_map(const struct predictor *p, const uint8_t *req, uint32_t size, bool msb,
                                             bool any_trust)
{
    const struct truecolor_map *m = size >= 8 ? cmap_find(p, ld32(req + 4, msb)) : NULL;
    return m && !m->broken && (m->verified || any_trust) ? m : NULL;
}

/* QueryColors (dix QueryColors, TrueColor): each pixel's fields index the component maps.
 * A pixel with bits outside the three masks is not answered (the server may call it BadValue). */
static bool answer_query_colors(const struct predictor *p, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                                bool any_trust, struct buf *out)
{
    const struct truecolor_map *m = color_map(p, req, size, msb, any_trust);
    uint32_t n = size >= 8 ? (size - 8) / 4 : 0, all = m ? m->red_mask | m->green_mask | m->blue_mask : 0;
    if (!m || size % 4 || n > PREDICT_MAX_QUERY_COLORS)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (ld32(req + 8 + 4 * i, msb) & ~all)
            return false;
    uint8_t *r = reply_header(out, seq, msb, 8u * n);
    if (!r)
        return false;
    st16(r + 8, (uint16_t)n, msb);
    const uint32_t masks[3] = { m->red_mask, m->green_mask, m->blue_mask };
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pixel = ld32(req + 8 + 4 * i, msb);
        for (int c = 0; c < 3; c++)
            st16(r + 32 + 8 * i + 2 * c, entry_value(m, masks[c], (pixel & masks[c]) >> mask_shift(masks[c])), msb);
    }
    return true;
}

static const struct color_name *color_find(const struct predictor *p, const uint8_t *name, uint16_t len)
{
    for (uint32_t i = 0; i < p->n_colors; i++) {
        const struct color_name *c = &p->colors[i];
        bool same = c->len == len;
        for (uint16_t k = 0; same && k < len; k++) /* ASCII case folding, as strncasecmp in the C locale */
            same = c->name[k] == (name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
        if (same)
            return c;
    }
    return NULL;
}

/* AllocNamedColor (the name's exact value, then AllocColor of it) and LookupColor (the exact
 * value, then the screen's resolution of it), for names the display side looked up. */
static bool answer_named_color(const struct predictor *p, uint8_t major, const uint8_t *req, uint32_t size,
                               uint16_t seq, bool msb, bool any_trust, struct buf *out)
{
    const struct truecolor_map *m = color_map(p, req, size, msb, any_trust);
    uint16_t len = size >= 12 ? ld16(req + 8, msb) : 0;
    const struct color_name *c = m && (uint32_t)len + 12 <= size ? color_find(p, req + 12, len) : NULL;
    uint8_t *r = c ? reply_header(out, seq, msb, 0) : NULL;
    if (!r)
        return false;
    uint8_t *exact = r + (major == OP_ALLOC_NAMED_COLOR ? 12 : 8);
    for (int k = 0; k < 3; k++)
        st16(exact + 2 * k, c->rgb[k], msb);
    if (major == OP_ALLOC_NAMED_COLOR) {
        uint8_t got[12];
        truecolor_alloc(m, exact, msb, got);
        memcpy(r + 18, got, 6);     /* the visual's values */
        memcpy(r + 8, got + 8, 4);  /* the pixel */
    } else {
        for (int k = 0; k < 3; k++)
            st16(r + 14 + 2 * k, resolve(m, c->rgb[k]), msb);
    }
    return true;
}

/* The colour requests with arithmetic answers (AllocColor, QueryColors, AllocNamedColor,
 * LookupColor); any_trust: whether or not the formula has been trusted yet. */
static bool answer_color(const struct predictor *p, uint8_t major, const uint8_t *req, uint32_t size, uint16_t seq,
                         bool msb, bool any_trust, struct buf *out)
{
    if (major == OP_QUERY_COLORS)
        return answer_query_colors(p, req, size, seq, msb, any_trust, out);
    if (major == OP_ALLOC_NAMED_COLOR || major == OP_LOOKUP_COLOR)
        return answer_named_color(p, major, req, size, seq, msb, any_trust, out);
    const struct truecolor_map *m = major == OP_ALLOC_COLOR && size >= 16 ? color_map(p, req, size, msb, any_trust) : NULL;
    uint8_t *r = m ? reply_header(out, seq, msb, 0) : NULL;
    if (!r)
        return false;
    truecolor_alloc(m, req + 8, msb, r + 8);
    return true;
}

bool predict_color_check(const struct predictor *p, const uint8_t *req, uint32_t size, const uint8_t *reply,
                         uint32_t reply_size)
{
    if (size >= 8 && req[0] == OP_LOOKUP_COLOR) {
        /* the exact value is the name's (asked for); the visual one is the arithmetic's */
        const struct truecolor_map *m = color_map(p, req, size, false, true);
        bool ok = m && reply_size == 32 && reply[0] == 1 && !ld32(reply + 4, false);
        for (int k = 0; ok && k < 3; k++)
            ok = ld16(reply + 14 + 2 * k, false) == resolve(m, ld16(reply + 8 + 2 * k, false));
        return ok;
    }
    struct buf want = { 0 };
    bool same = size >= 4 && answer_color(p, req[0], req, size, 0, false, true, &want) && want.len == reply_size &&
                reply_size >= 32 && memcmp(buf_head(&want), reply, 2) == 0 &&
                memcmp(buf_head(&want) + 4, reply + 4, reply_size - 4) == 0; /* all but the sequence number */
    buf_free(&want);
    return same;
}

static void learn_alloc_color(struct predictor *p, const struct predict_question *q, const uint8_t *reply, bool msb)
{
    struct truecolor_map *m = cmap_find(p, q->atom);
    if (!m || m->broken)
        return;
    uint8_t want[12];
    truecolor_alloc(m, (const uint8_t *)q->name, msb, want);
    if (memcmp(want, reply + 8, 12) == 0)
        m->verified = true;
    else
        m->broken = true; /* not the sample server's arithmetic: ask the server from now on */
}

void predict_learn(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, uint32_t seq,
                   const uint8_t *reply, uint32_t size, bool msb)
{
    while (pq->len && pq->q[pq->head].seq < seq)
        question_drop(pq); /* answered by an error, or not by a reply */
    if (cls->kind != MSG_REPLY || size < 32)
        return;
    if (cls->major == XW_OP_QUERY_EXTENSION && cls->query_ext >= 0 && size == 32) {
        p->ext[cls->query_ext].known = true;
        memcpy(p->ext[cls->query_ext].body, reply + 8, QE_BODY);
        return;
    }
    if (!pq->len || pq->q[pq->head].seq != seq || pq->q[pq->head].major != cls->major)
        return;
    struct predict_question *q = &pq->q[pq->head];
    if (q->major == OP_LIST_FONTS_WITH_INFO) {
        /* One reply per font, then one with an empty name: learnt once all are in. */
        if (q->acc.len + size > PREDICT_MAX_REPLY || buf_append(&q->acc, reply, size) < 0) {
            question_drop(pq);
            return;
        }
        if (reply[1])
            return;
        exchange_add(p, EX_REQ, msb, (const uint8_t *)q->name, q->name_len, buf_head(&q->acc), q->acc.len);
    } else if (q->major >= 128 || q->major == OP_LIST_FONTS) {
        exchange_add(p, EX_REQ, msb, (const uint8_t *)q->name, q->name_len, reply, size);
    } else if (q->major == OP_QUERY_FONT) {
        exchange_add(p, EX_FONT, msb, (const uint8_t *)q->name, q->name_len, reply, size);
    } else if (q->major == OP_ALLOC_COLOR) {
        learn_alloc_color(p, q, reply, msb);
    } else if (q->major == OP_INTERN_ATOM) {
        atom_add(p, ld32(reply + 8, msb), q->name, q->name_len);
    } else {
        uint16_t len = ld16(reply + 8, msb);
        if ((uint32_t)len + 32 <= size)
            atom_add(p, q->atom, (const char *)reply + 32, len);
    }
    question_drop(pq);
}

static uint8_t *reply_header(struct buf *out, uint16_t seq, bool msb, size_t extra)
{
    uint8_t *r = buf_append_space(out, 32 + extra);
    if (!r)
        return NULL;
    memset(r, 0, 32 + extra);
    r[0] = 1; /* Reply */
    st16(r + 2, seq, msb);
    st32(r + 4, (uint32_t)(extra / 4), msb);
    return r;
}

/* GetProperty on a root window whose property is known, computed as the protocol says
 * (values are kept in the display side's byte order, LSB: MSB clients are not answered). */
static bool answer_get_property(const struct predictor *p, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                                struct buf *out)
{
    if (size != 24 || msb || req[1] /* delete */)
        return false;
    uint32_t window = ld32(req + 4, msb), property = ld32(req + 8, msb), type = ld32(req + 12, msb);
    uint64_t offset = 4ull * ld32(req + 16, msb), length = 4ull * ld32(req + 20, msb);
    const struct root_prop *r = prop_find(p, window, property);
    if (!r && !(r = prop_find(p, window, 0)))
        return false;
    /* Invalid atoms are errors: answer only for atoms known to exist. */
    if (r->state == PROP_UNKNOWN || !atom_by_id(p, property) || (type && !atom_by_id(p, type)))
        return false;
    uint8_t *o;
    if (r->state == PROP_ABSENT || r->property != property) {
        if (r->state != PROP_ABSENT || !(o = reply_header(out, seq, msb, 0)))
            return false;
        return true; /* type None, format 0, nothing after */
    }
    if (type && type != r->type) {
        if (!(o = reply_header(out, seq, msb, 0)))
            return false;
        o[1] = r->format;
        st32(o + 8, r->type, msb);
        /* The X.Org server gives the size in format units here, not bytes as the protocol
         * document says: answer as the server does (its reply is what we are checked against). */
        st32(o + 12, r->format >= 8 ? r->len / (r->format / 8u) : r->len, msb);
        return true;
    }
    if (offset > r->len)
        return false; /* BadValue */
    uint32_t n = (uint32_t)(r->len - offset < length ? r->len - offset : length);
    unsigned unit = r->format / 8;
    if (!unit || n % unit || !(o = reply_header(out, seq, msb, n + xw_pad4(n))))
        return false;
    o[1] = r->format;
    st32(o + 8, r->type, msb);
    st32(o + 12, (uint32_t)(r->len - offset - n), msb);
    st32(o + 16, n / unit, msb);
    memcpy(o + 32, r->data + offset, n);
    return true;
}

static bool answer_exchange(const struct exchange *e, uint16_t seq, bool msb, struct buf *out)
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
    const struct exchange *e = p ? exchange_find(p, EX_REQ, msb, req, size) : NULL;
    *len = e ? e->reply_len : 0;
    return e ? e->reply : NULL;
}

bool predict_answer(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                    const uint8_t *req, uint32_t size, uint16_t seq, bool msb, struct buf *out)
{
    if (cls->kind != MSG_REQUEST)
        return false;
    uint8_t *r;
    if (cls->ext) {
        uint32_t key_len;
        uint8_t *key = handshake_key(pq, cls, req, size, &key_len);
        if (!key)
            key = state_key(p, pq, cls, req, size, &key_len);
        bool ok = key && answer_exchange(exchange_find(p, EX_REQ, msb, key, key_len), seq, msb, out);
        free(key);
        return ok;
    }
    if (cls->major == OP_LIST_FONTS || cls->major == OP_LIST_FONTS_WITH_INFO) {
        return answer_exchange(exchange_find(p, EX_REQ, msb, req, size), seq, msb, out);
    }
    if (cls->major == OP_GET_PROPERTY)
        return answer_get_property(p, req, size, seq, msb, out);
    if (cls->major == OP_GET_KEYBOARD_MAPPING && p->kb.known && size == 8) {
        /* first keycode, count: out of range is BadValue */
        unsigned first = req[4], count = req[5], n = count * p->kb.per_keycode;
        if (first < p->kb.min || !count || first + count - 1 > p->kb.max || !(r = reply_header(out, seq, msb, 4u * n)))
            return false;
        r[1] = p->kb.per_keycode;
        for (unsigned i = 0; i < n; i++)
            st32(r + 32 + 4 * i, p->kb.keysyms[(first - p->kb.min) * p->kb.per_keycode + i], msb);
        return true;
    }
    if (cls->major == OP_GET_MODIFIER_MAPPING && p->kb.known && size == 4) {
        if (!(r = reply_header(out, seq, msb, 8u * p->kb.per_modifier)))
            return false;
        r[1] = p->kb.per_modifier;
        memcpy(r + 32, p->kb.modifiers, 8u * p->kb.per_modifier);
        return true;
    }
    if (cls->major == OP_QUERY_FONT) {
        const struct predict_font *f = size >= 8 ? font_find(pq, ld32(req + 4, msb)) : NULL;
        return f && answer_exchange(exchange_find(p, EX_FONT, msb, (const uint8_t *)f->name, f->len), seq, msb, out);
    }
    if (cls->major == XW_OP_QUERY_EXTENSION) {
        const uint8_t *body = NULL;
        const char *name;
        uint16_t len;
        if (cls->query_ext >= 0 && p->ext[cls->query_ext].known)
            body = p->ext[cls->query_ext].body;
        for (uint32_t i = 0; cls->query_ext < 0 && i < p->n_other_ext && request_name(req, size, msb, &name, &len); i++)
            if (p->other_ext[i].len == len && !memcmp(p->other_ext[i].name, name, len))
                body = p->other_ext[i].body;
        if (!body || !(r = reply_header(out, seq, msb, 0)))
            return false;
        memcpy(r + 8, body, QE_BODY);
        return true;
    }
    if (cls->major == OP_INTERN_ATOM) {
        const char *name;
        uint16_t len;
        if (!request_name(req, size, msb, &name, &len))
            return false;
        const struct atom *a = atom_by_name(p, name, len);
        /* only-if-exists of a name no atom has: None, while the census is current */
        if (!a && (req[1] != 1 || !len || len > PREDICT_MAX_NAME || !census_current(p) ||
                   unnamed_may_be(p, name, len)))
            return false;
        if (!(r = reply_header(out, seq, msb, 0)))
            return false;
        st32(r + 8, a ? a->atom : 0, msb);
        return true;
    }
    if (cls->major == OP_ALLOC_COLOR || cls->major == OP_QUERY_COLORS || cls->major == OP_ALLOC_NAMED_COLOR ||
        cls->major == OP_LOOKUP_COLOR)
        return answer_color(p, cls->major, req, size, seq, msb, false, out);
    if (cls->major == OP_GET_ATOM_NAME) {
        const struct atom *a = size >= 8 ? atom_by_id(p, ld32(req + 4, msb)) : NULL;
        if (!a || !(r = reply_header(out, seq, msb, a->len + xw_pad4(a->len))))
            return false;
        st16(r + 8, a->len, msb);
        memcpy(r + 32, a->name, a->len);
        return true;
    }
    return false;
}

bool predict_is_atom_none(const struct msg_class *cls, const uint8_t *reply, size_t size, bool msb)
{
    return cls->kind == MSG_REPLY && !cls->ext && cls->major == OP_INTERN_ATOM && size == 32 && !ld32(reply + 8, msb);
}

int predict_atom_none_reply(struct buf *out, uint16_t seq, bool msb)
{
    return reply_header(out, seq, msb, 0) ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------- facts from the display side */

int predict_fact_extension(struct buf *out, const char *name, size_t name_len, const uint8_t reply[32])
{
    uint8_t head[2] = { FACT_EXTENSION, (uint8_t)name_len };
    if (name_len > 255)
        return -EINVAL;
    return buf_append(out, head, 2) || buf_append(out, name, name_len) || buf_append(out, reply + 8, QE_BODY) ? -ENOMEM : 0;
}

int predict_fact_atom(struct buf *out, uint32_t atom, const char *name, size_t name_len)
{
    if (!out->len) {
        uint8_t kind = FACT_ATOMS;
        if (buf_append(out, &kind, 1))
            return -ENOMEM;
    }
    return buf_put_varint(out, atom) || buf_put_varint(out, name_len) || buf_append(out, name, name_len) ? -ENOMEM : 0;
}

int predict_fact_known_atom(const struct predictor *p, struct buf *out, uint32_t atom)
{
    const struct atom *a = p && atom ? atom_by_id(p, atom) : NULL;
    return a ? predict_fact_atom(out, a->atom, a->name, a->len) : -ENOENT;
}

int predict_fact_atom_hash(struct buf *out, uint32_t atom, const char *name, size_t name_len)
{
    if (!out->len) {
        uint8_t kind = FACT_ATOM_HASHES;
        if (buf_append(out, &kind, 1) || buf_put_varint(out, atom))
            return -ENOMEM;
    }
    uint16_t h = name_hash16(name, name_len);
    uint8_t le[2] = { (uint8_t)h, (uint8_t)(h >> 8) };
    return buf_append(out, le, 2) ? -ENOMEM : 0;
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

static int find_extension(const uint8_t *name, size_t len)
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
    int i = find_extension((const uint8_t *)xname, strlen(xname));
    if (i < 0 || !p->ext[i].known || !p->ext[i].body[0])
        return false;
    *major = p->ext[i].body[1];
    *first_event = p->ext[i].body[2];
    return true;
}

int predict_fact_property(struct buf *out, uint32_t window, uint32_t property, uint8_t state, uint32_t type,
                          uint8_t format, const uint8_t *data, size_t len)
{
    uint8_t kind = FACT_PROPERTY;
    if (buf_append(out, &kind, 1) || buf_put_varint(out, window) || buf_put_varint(out, property) ||
        buf_append(out, &state, 1))
        return -ENOMEM;
    if (state != PROP_VALUE)
        return 0;
    return buf_put_varint(out, type) || buf_append(out, &format, 1) || buf_put_varint(out, len) ||
           buf_append(out, data, len) ? -ENOMEM : 0;
}

int predict_fact_keyboard(struct buf *out, bool known, uint8_t min_keycode, uint8_t max_keycode, uint8_t per_keycode,
                          const uint8_t *keysyms, uint8_t per_modifier, const uint8_t *modifiers)
{
    uint8_t head[5] = { FACT_KEYBOARD, known, min_keycode, max_keycode, per_keycode };
    if (!known)
        return buf_append(out, head, 2) ? -ENOMEM : 0;
    size_t n = min_keycode <= max_keycode ? 4u * (max_keycode - min_keycode + 1u) * per_keycode : 0;
    return buf_append(out, head, 5) || buf_append(out, keysyms, n) || buf_append(out, &per_modifier, 1) ||
           buf_append(out, modifiers, 8u * per_modifier) ? -ENOMEM : 0;
}

bool predict_keyboard_known(const struct predictor *p) { return p->kb.known; }

int predict_fact_census(struct buf *out, uint32_t next)
{
    uint8_t kind = FACT_ATOM_CENSUS;
    return buf_append(out, &kind, 1) || buf_put_varint(out, next) ? -ENOMEM : 0;
}

int predict_fact_colors(const struct predictor *p, struct buf *out, uint32_t colormap)
{
    const struct truecolor_map *m = cmap_find(p, colormap);
    uint8_t kind = FACT_COLORS, tail[2] = { m ? m->bits_per_rgb : 0, m ? m->depth : 0 };
    if (!m)
        return -ENOENT;
    return buf_append(out, &kind, 1) || buf_put_varint(out, colormap) || buf_put_varint(out, m->red_mask) ||
           buf_put_varint(out, m->green_mask) || buf_put_varint(out, m->blue_mask) || buf_append(out, tail, 2)
               ? -ENOMEM : 0;
}

int predict_fact_color_name(struct buf *out, const char *name, size_t len, const uint16_t rgb[3])
{
    uint8_t head = (uint8_t)len, v[6];
    if (!len || len > 255)
        return -EINVAL;
    for (int k = 0; k < 3; k++)
        st16(v + 2 * k, rgb[k], false);
    return buf_append(out, &head, 1) || buf_append(out, name, len) || buf_append(out, v, 6) ? -ENOMEM : 0;
}

int predict_fact_font(struct buf *out, const char *name, size_t len)
{
    uint8_t kind = FACT_FONTS, head = (uint8_t)len;
    if (!len || len > 255)
        return -EINVAL;
    return (!out->len && buf_append(out, &kind, 1)) || buf_append(out, &head, 1) || buf_append(out, name, len)
               ? -ENOMEM : 0;
}

uint32_t predict_truecolor_colormap(const struct predictor *p, uint32_t *pixel_mask)
{
    if (!p->n_cmaps)
        return 0;
    *pixel_mask = p->cmaps[0].red_mask | p->cmaps[0].green_mask | p->cmaps[0].blue_mask;
    return p->cmaps[0].colormap;
}

/* FACT_COLORS: the colormap's description (the app side may not have seen a setup reply
 * yet), trusted from now on, and the colour names. */
static int fact_colors(struct predictor *p, struct rd *r)
{
    uint64_t colormap, masks[3];
    uint8_t bits, depth, len;
    const uint8_t *name, *rgb;
    if (rd_varint(r, &colormap) || rd_varint(r, &masks[0]) || rd_varint(r, &masks[1]) || rd_varint(r, &masks[2]) ||
        rd_u8(r, &bits) || rd_u8(r, &depth) || !colormap || colormap > UINT32_MAX || masks[0] > UINT32_MAX ||
        masks[1] > UINT32_MAX || masks[2] > UINT32_MAX)
        return -EBADMSG;
    struct truecolor_map d = { .colormap = (uint32_t)colormap, .red_mask = (uint32_t)masks[0],
                               .green_mask = (uint32_t)masks[1], .blue_mask = (uint32_t)masks[2],
                               .bits_per_rgb = bits, .depth = depth };
    if (!truecolor_sane(&d))
        return -EBADMSG;
    struct color_name names[PREDICT_MAX_COLOR_NAMES];
    uint32_t n = 0;
    while (rd_left(r)) {
        if (rd_u8(r, &len) || !len || rd_bytes(r, &name, len) || rd_bytes(r, &rgb, 6))
            return -EBADMSG;
        if (n == PREDICT_MAX_COLOR_NAMES)
            continue;
        names[n].len = len;
        for (uint8_t k = 0; k < len; k++)
            names[n].name[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
        for (int k = 0; k < 3; k++)
            names[n].rgb[k] = ld16(rgb + 2 * k, false);
        n++;
    }
    struct truecolor_map *m = cmap_find(p, d.colormap);
    if (!m && p->n_cmaps < PREDICT_MAX_COLORMAPS)
        m = &p->cmaps[p->n_cmaps++];
    if (!m)
        return 0;
    bool broken = m->colormap == d.colormap && m->broken;
    *m = d;
    m->broken = broken; /* a real reply that did not match is not outweighed */
    m->verified = true;
    for (uint32_t i = 0; i < n && p->n_colors < PREDICT_MAX_COLOR_NAMES; i++)
        if (!color_find(p, (const uint8_t *)names[i].name, names[i].len))
            p->colors[p->n_colors++] = names[i];
    return 0;
}

int predict_on_fact(struct predictor *p, const uint8_t *payload, size_t len)
{
    struct rd r = rd_make(payload, len, false);
    uint8_t kind, n, msb;
    const uint8_t *name, *body;
    uint64_t a, l, kl;
    if (rd_u8(&r, &kind))
        return -EBADMSG;
    switch (kind) {
    case FACT_EXTENSION: {
        if (rd_u8(&r, &n) || rd_bytes(&r, &name, n) || rd_bytes(&r, &body, QE_BODY) || rd_left(&r))
            return -EBADMSG;
        int i = find_extension(name, n);
        if (i >= 0) {
            p->ext[i].known = true;
            memcpy(p->ext[i].body, body, QE_BODY);
        } else if (p->n_other_ext < PREDICT_MAX_OTHER_EXT) { /* answered by its name */
            p->other_ext[p->n_other_ext].len = n;
            memcpy(p->other_ext[p->n_other_ext].name, name, n);
            memcpy(p->other_ext[p->n_other_ext++].body, body, QE_BODY);
        }
        return 0;
    }
    case FACT_ATOMS:
        while (rd_left(&r)) {
            if (rd_varint(&r, &a) || rd_varint(&r, &l) || a == 0 || a > UINT32_MAX || l > PREDICT_MAX_NAME ||
                rd_bytes(&r, &name, (size_t)l))
                return -EBADMSG;
            atom_add(p, (uint32_t)a, (const char *)name, (size_t)l);
        }
        return 0;
    case FACT_EXCHANGE:
    case FACT_FONT: /* the same fields; keyed by a font's name (learnt.h) */
        if (rd_u8(&r, &msb) || msb > 1 || rd_varint(&r, &kl) || kl == 0 || kl > PREDICT_MAX_KEY ||
            rd_bytes(&r, &name, (size_t)kl) || rd_varint(&r, &l) || l > PREDICT_MAX_REPLY ||
            rd_bytes(&r, &body, (size_t)l) || rd_left(&r) || !reply_whole(body, (size_t)l, msb))
            return -EBADMSG;
        exchange_add(p, kind == FACT_FONT ? EX_FONT : EX_REQ, msb, name, (size_t)kl, body, (size_t)l);
        return 0;
    case FACT_PROPERTY: {
        uint64_t window, property, type = 0;
        uint8_t state, format = 0;
        body = NULL;
        l = 0;
        if (rd_varint(&r, &window) || rd_varint(&r, &property) || rd_u8(&r, &state) || window > UINT32_MAX ||
            property > UINT32_MAX || state > PROP_VALUE || (state == PROP_VALUE && !property))
            return -EBADMSG;
        if (state == PROP_VALUE &&
            (rd_varint(&r, &type) || rd_u8(&r, &format) || rd_varint(&r, &l) || type > UINT32_MAX ||
             (format != 8 && format != 16 && format != 32) || l > PREDICT_MAX_PROP_BYTES || l % (format / 8) ||
             rd_bytes(&r, &body, (size_t)l)))
            return -EBADMSG;
        if (rd_left(&r))
            return -EBADMSG;
        prop_set(p, (uint32_t)window, (uint32_t)property, state, (uint32_t)type, format, body, (uint32_t)l);
        return 0;
    }
    case FACT_KEYBOARD: {
        uint8_t known, min, max, per_keycode, per_modifier;
        const uint8_t *keysyms, *mods;
        if (rd_u8(&r, &known) || known > 1)
            return -EBADMSG;
        if (!known) {
            if (rd_left(&r))
                return -EBADMSG;
            forget_keyboard(p);
            return 0;
        }
        if (rd_u8(&r, &min) || rd_u8(&r, &max) || rd_u8(&r, &per_keycode) || min < 8 || max < min || !per_keycode ||
            rd_bytes(&r, &keysyms, 4u * (max - min + 1u) * per_keycode) || rd_u8(&r, &per_modifier) ||
            rd_bytes(&r, &mods, 8u * per_modifier) || rd_left(&r))
            return -EBADMSG;
        size_t n_ks = (size_t)(max - min + 1u) * per_keycode;
        uint32_t *k = malloc(n_ks * sizeof *k);
        if (!k)
            return 0; /* not known: asked of the server */
        for (size_t i = 0; i < n_ks; i++)
            k[i] = ld32(keysyms + 4 * i, false);
        free(p->kb.keysyms);
        p->kb.keysyms = k;
        p->kb.min = min;
        p->kb.max = max;
        p->kb.per_keycode = per_keycode;
        p->kb.per_modifier = per_modifier;
        memcpy(p->kb.modifiers, mods, 8u * per_modifier);
        p->kb.known = true;
        return 0;
    }
    case FACT_ATOM_CENSUS: {
        uint64_t next;
        if (rd_varint(&r, &next) || !next || next > UINT32_MAX || rd_left(&r))
            return -EBADMSG;
        if (next > p->census_next) /* it may come after replies that taught later atoms */
            p->census_next = (uint32_t)next;
        while (atom_by_id(p, p->census_next) || unnamed_has(p, p->census_next))
            p->census_next++;
        return 0;
    }
    case FACT_STATE: {
        uint8_t watched;
        if (rd_u8(&r, &n) || rd_bytes(&r, &name, n) || rd_u8(&r, &watched) || watched > 1 || rd_left(&r))
            return -EBADMSG;
        int i = find_extension(name, n);
        if (i >= 0) {
            forget_state(p, i);
            p->ext[i].watched = watched;
        }
        return 0;
    }
    case FACT_ATOM_HASHES: {
        uint64_t first;
        if (rd_varint(&r, &first) || !first || !rd_left(&r) || rd_left(&r) % 2 ||
            first + rd_left(&r) / 2 - 1 > UINT32_MAX)
            return -EBADMSG;
        for (uint32_t id = (uint32_t)first; rd_left(&r); id++) {
            const uint8_t *h;
            rd_bytes(&r, &h, 2);
            unnamed_add(p, id, (uint16_t)(h[0] | h[1] << 8));
        }
        return 0;
    }
    case FACT_COLORS:
        return fact_colors(p, &r);
    case FACT_FONTS:
        while (rd_left(&r)) {
            if (rd_u8(&r, &n) || !n || rd_bytes(&r, &name, n))
                return -EBADMSG;
            bool known = false;
            for (uint32_t i = 0; i < p->n_fonts_ok && !known; i++)
                known = p->fonts_ok[i].len == n && !memcmp(p->fonts_ok[i].name, name, n);
            if (!known && p->n_fonts_ok < PREDICT_MAX_FONTS_OK) {
                p->fonts_ok[p->n_fonts_ok].len = n;
                memcpy(p->fonts_ok[p->n_fonts_ok++].name, name, n);
            }
        }
        return 0;
    default:
        return -EBADMSG;
    }
}

/* ---------------------------------------------------------------- quiet requests */

void predict_learn_connection(struct predict_questions *pq, const uint8_t *setup, size_t size, bool msb)
{
    if (size < 20 || setup[0] != 1)
        return;
    pq->id_base = ld32(setup + 12, msb);
    pq->id_mask = ld32(setup + 16, msb);
    pq->have_ids = true;
}

static bool own_id(const struct predict_questions *pq, const uint8_t *req, uint32_t size, uint32_t at, bool msb)
{
    if (!pq->have_ids || size < at + 4)
        return false;
    uint32_t id = ld32(req + at, msb);
    return id && (id & ~pq->id_mask) == pq->id_base;
}

static bool own_or_none(const struct predict_questions *pq, const uint8_t *req, uint32_t size, uint32_t at, bool msb)
{
    return size >= at + 4 && (!ld32(req + at, msb) || own_id(pq, req, size, at, msb));
}

/* The reply the connection got to its first request of this extension, when that request
 * was the handshake `minor` (requests of the extension before it fail or are refused). */
static const struct exchange *ext_opened(const struct predictor *p, const struct predict_questions *pq,
                                         const uint8_t *req, uint8_t minor, bool msb)
{
    const struct predict_history *h = pq->hist && req[0] >= 128 ? &pq->hist[req[0] - 128] : NULL;
    uint32_t first = h && h->len >= 4 ? 4u * ld16(h->bytes + 2, msb) : 0;
    if (!first || first > h->len || h->bytes[1] != minor)
        return NULL;
    return exchange_find(p, EX_REQ, msb, h->bytes, first);
}

/* The core keyboard's XKB device id, from a GetMap reply the display side got for
 * UseCoreKbd (a device id is a byte; 0x100 when not known). */
static uint16_t core_keyboard_id(const struct predictor *p, uint8_t major)
{
    for (uint32_t i = 0; i < p->n_ex; i++) {
        const struct exchange *e = &p->ex[i];
        uint32_t at = exchange_get_map_at(e, major);
        if (at && at + 6 <= e->key_len && ld16(e->key + at + 4, e->msb) == 0x100)
            return e->reply[1];
    }
    return 0x100;
}

/* Extension requests that only create, change or free the client's own resources. Each
 * fails only for a bug of the client (a wrong id, format or value) or for want of memory. */
static bool quiet_extension(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                            const uint8_t *req, uint32_t size, bool msb)
{
    const struct exchange *e;
    if (!strcmp(cls->ext, "XKEYBOARD")) {
        /* SelectEvents on the core keyboard, after UseExtension said yes (else BadAccess) */
        e = ext_opened(p, pq, req, 0, msb);
        if (cls->minor != 1 || size < 16 || !e || e->reply[1] != 1)
            return false;
        return ld16(req + 4, msb) == 0x100 /* UseCoreKbd */ || ld16(req + 4, msb) == core_keyboard_id(p, req[0]);
    }
    if (!strcmp(cls->ext, "XFIXES")) {
        /* XFIXES 2 requests, after QueryVersion agreed on 2 or later (the server refuses
         * requests beyond the version agreed): SetCursorName on its own cursor, */
        e = ext_opened(p, pq, req, 0, msb);
        if (!e || ld32(e->reply + 8, e->msb) < 2 || !own_id(pq, req, size, 4, msb))
            return false;
        /* SelectSelectionInput on its own window, of an atom that exists (else BadAtom), with
         * the three defined event bits (else BadValue): events only when owners change later */
        if (cls->minor == 2)
            return size == 16 && predict_atom_known(p, ld32(req + 8, msb)) && ld32(req + 12, msb) <= 7;
        return cls->minor == 23;
    }
    if (strcmp(cls->ext, "RENDER"))
        return false;
    switch (cls->minor) {
    case 4:                         /* CreatePicture: no alpha map or clip mask (other resources) */
        return own_id(pq, req, size, 4, msb) && own_id(pq, req, size, 8, msb) && size >= 20 &&
               !(ld32(req + 16, msb) & (1u << 1 | 1u << 6));
    case 5:                         /* ChangePicture, likewise */
        return own_id(pq, req, size, 4, msb) && size >= 12 && !(ld32(req + 8, msb) & (1u << 1 | 1u << 6));
    case 6: case 7:                 /* SetPictureClipRectangles, FreePicture */
    case 17: case 19: case 20: case 22: /* Create/FreeGlyphSet, AddGlyphs, FreeGlyphs */
    case 33:                        /* CreateSolidFill */
        return own_id(pq, req, size, 4, msb);
    case 8:                         /* Composite: source, mask (or none), destination */
        return own_id(pq, req, size, 8, msb) && own_or_none(pq, req, size, 12, msb) && own_id(pq, req, size, 16, msb);
    case 26:                        /* FillRectangles */
        return own_id(pq, req, size, 8, msb);
    case 27:                        /* CreateCursor from its own picture */
        return own_id(pq, req, size, 4, msb) && own_id(pq, req, size, 8, msb);
    default:
        return false;
    }
}

bool predict_quiet(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                   const uint8_t *req, uint32_t size, bool msb)
{
    if (cls->kind != MSG_REQUEST || size < 4)
        return false;
    if (cls->ext)
        return req[0] >= 128 && quiet_extension(p, pq, cls, req, size, msb);
    switch (cls->major) {
    case 36: case 37:                                  /* Grab/UngrabServer: no reply, error or event */
        return size == 4;
    case 1: case 2: case 8: case 9: case 10: case 12:  /* Create/ChangeAttributes/Map/MapSub/Unmap/Configure Window */
    case 18: case 19:                                  /* Change/DeleteProperty on its own window */
    case 46:                                           /* CloseFont */
    case 53: case 54: case 55: case 56: case 59: case 60: /* Create/FreePixmap, Create/ChangeGC, SetClipRectangles, FreeGC */
    case 61:                                           /* ClearArea */
    case 93: case 94: case 95: case 96:                /* Create(Glyph)Cursor, FreeCursor, RecolorCursor */
        return own_id(pq, req, size, 4, msb);
    case 28:                                           /* GrabButton on its own window */
        return own_id(pq, req, size, 4, msb) && own_or_none(pq, req, size, 12, msb) && own_or_none(pq, req, size, 16, msb);
    case 64: case 65: case 66: case 67: case 68: case 69: case 70: case 71: /* drawing, own drawable and GC */
    case 72: case 74: case 75: case 76: case 77:       /* PutImage, text */
        return own_id(pq, req, size, 4, msb) && own_id(pq, req, size, 8, msb);
    case OP_OPEN_FONT: {                               /* a font that opened before in this session */
        uint16_t len = size >= 12 ? ld16(req + 8, msb) : 0;
        if (!own_id(pq, req, size, 4, msb) || (uint32_t)len + 12 > size)
            return false;
        for (uint32_t i = 0; i < p->n_fonts_ok; i++)
            if (p->fonts_ok[i].len == len && !memcmp(p->fonts_ok[i].name, req + 12, len))
                return true;
        return exchange_find(p, EX_FONT, msb, req + 12, len);
    }
    default:
        return false;
    }
}

bool predict_atom_known(const struct predictor *p, uint32_t atom)
{
    return p && atom && atom_by_id(p, atom);
}

bool predict_font_known(const struct predictor *p, const uint8_t *name, size_t len)
{
    return p && exchange_find(p, EX_FONT, false, name, len);
}
