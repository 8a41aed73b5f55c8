/* predict_private.h -- private to predict*.c: the predictor's state and what its files
 * share. The facts are split by kind (atoms, exchanges, colours, facts from the display
 * side, quiet requests); predict.h is the interface. */
#ifndef TINCAN_PREDICT_PRIVATE_H
#define TINCAN_PREDICT_PRIVATE_H

#include "proxy/predict.h"

#include "xproto_tables.h"
#include "xproto_wire.h"

#define QE_BODY 24                 /* QueryExtension reply bytes 8..31, as FACT_EXTENSION carries them */
_Static_assert(QE_BODY == XP_QUERY_EXTENSION_REPLY_SIZE - XP_REPLY_HEADER_SIZE, "FACT_EXTENSION's body is wire-frozen");
#define PREDICT_MAX_ATOMS 32768u   /* atoms remembered per session */
#define PREDICT_MAX_NAME 1024u     /* longer atom names are not remembered */
#define PREDICT_MAX_EXCHANGES 1024u              /* handshakes, fonts, font lists remembered */
#define PREDICT_MAX_EXCHANGE_BYTES (32u << 20)   /* their replies, in all */
#define PREDICT_MAX_REPLY (4u << 20)             /* one reply kept at most */
#define PREDICT_MAX_FONTS 256u                   /* open fonts remembered per connection */
#define PREDICT_MAX_KEY 65536u                   /* a key: requests' bytes or a font name */
#define PREDICT_MAX_ROOT_PROPS 512u              /* root properties remembered */
#define PREDICT_MAX_OTHER_EXT 32u                /* extensions xcb-proto does not name */
#define PREDICT_MAX_PROP_BYTES (256u * 1024)     /* one property's value at most */
#define PREDICT_MAX_COLORMAPS 16u  /* default colormaps of TrueColor screens */
#define PREDICT_MAX_COLOR_NAMES 64u /* colour names the display side looked up */
#define PREDICT_MAX_FONTS_OK 16u   /* font names the display side opened */
#define PREDICT_MAX_SELECTIONS 32u /* selections whose owner the display side watches, or a client here set */
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
    bool color_table_on;           /* the display side checked the colour table (FACT_COLOR_TABLE) */
    uint8_t color_table_off[COLOR_TABLE_OFF_BYTES]; /* bit i: entry i not answered (unknown or another value) */
    struct {
        uint8_t len;
        char name[255];
    } fonts_ok[PREDICT_MAX_FONTS_OK]; /* fonts the display side opened */
    uint32_t n_fonts_ok;
    uint32_t census_next;          /* every atom below it was told (FACT_ATOM_CENSUS); 0: no census */
    struct {                       /* selections' owners (FACT_SELECTION) */
        uint32_t atom, owner;
        bool set_here;             /* a client of this session set its owner: never answered again */
    } sels[PREDICT_MAX_SELECTIONS];
    uint32_t n_sels;
    bool sels_full;                /* a client set the owner of one more: none is answered */
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

/* predict_atoms.c: atoms by name and id, and those told by the hash of their name */
bool pd_unnamed_has(const struct predictor *p, uint32_t atom);
bool pd_unnamed_may_be(const struct predictor *p, const char *name, size_t len);
const struct atom *pd_atom_by_name(const struct predictor *p, const char *name, size_t len);
const struct atom *pd_atom_by_id(const struct predictor *p, uint32_t id);
void pd_atom_add(struct predictor *p, uint32_t id, const char *name, size_t len);
void pd_unnamed_add(struct predictor *p, uint32_t id, uint16_t hash);
bool pd_census_current(const struct predictor *p);

/* predict.c: selections' owners (FACT_SELECTION) */
void pd_selection_told(struct predictor *p, uint32_t selection, uint32_t owner);

/* predict_exchange.c: replies known from their questions (handshakes, state queries, fonts) */
const struct exchange *pd_exchange_find(const struct predictor *p, uint8_t kind, bool msb, const uint8_t *key,
                                            size_t key_len);
bool pd_reply_whole(const uint8_t *r, size_t n, bool msb);
void pd_exchange_add(struct predictor *p, uint8_t kind, bool msb, const uint8_t *key, size_t key_len,
                         const uint8_t *reply, size_t reply_len);
bool pd_xkb_get_map(const struct msg_class *cls);
uint32_t pd_exchange_get_map_at(const struct exchange *e, uint8_t major);
/* Where an exchange's last request starts, when it is the extension query `minor` of major
 * (any extension's if 0) after that extension's handshake; 0 if it is not. */
uint32_t pd_exchange_ext_query_at(const struct exchange *e, uint8_t major, uint8_t minor);
void pd_forget_keyboard(struct predictor *p);
bool pd_state_changing(const struct predictor *p, const struct msg_class *cls, const uint8_t *req, uint32_t size);
void pd_forget_state(struct predictor *p, int i, uint32_t minors);
/* XKEYBOARD PerClientFlags (predict_quiet.c): the connection's flags as its requests set
 * them, and its answer from them and the display side's own question's reply. */
void pd_track_xkb_flags(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                        bool msb);
bool pd_answer_xkb_flags(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                         const uint8_t *req, uint32_t size, uint16_t seq, bool msb, struct buf *out);
uint8_t *pd_state_key(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                          const uint8_t *req, uint32_t size, uint32_t *key_len);
uint8_t *pd_handshake_key(const struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                              uint32_t size, uint32_t *key_len);
bool pd_answer_exchange(const struct exchange *e, uint16_t seq, bool msb, struct buf *out);
int pd_find_extension(const uint8_t *name, size_t len);

/* predict_color.c: TrueColor arithmetic */
bool pd_answer_color(const struct predictor *p, uint8_t major, const uint8_t *req, uint32_t size, uint16_t seq,
                         bool msb, bool any_trust, struct buf *out);
void pd_learn_alloc_color(struct predictor *p, const struct predict_question *q, const uint8_t *reply, bool msb);
int pd_fact_colors(struct predictor *p, struct rd *r);
int pd_fact_color_table(struct predictor *p, struct rd *r);

/* predict.c: root properties, replies */
void pd_prop_set(struct predictor *p, uint32_t window, uint32_t property, uint8_t state, uint32_t type,
                     uint8_t format, const uint8_t *data, uint32_t len);
/* Room for a reply of 32 + extra bytes, zeroed, at the end of out (the caller puts its fixed part); NULL: no memory. */
uint8_t *pd_reply_space(struct buf *out, size_t extra);

#endif
