/* predict.h -- answers the app side can give without crossing the link, because the
 * server's answer is known exactly: QueryExtension (an extension's presence and opcodes
 * never change while the server runs), InternAtom and GetAtomName (an atom, once
 * interned, keeps its name; the predefined atoms are fixed by the protocol). Both sides
 * learn the same facts from the same replies; the display side computes the same answer
 * and checks the server's real reply against it. AllocColor on the default colormap of a
 * TrueColor screen is arithmetic; the formula is trusted once a real reply has matched it.
 * Version handshakes of extensions (BIG-REQUESTS Enable, XKB UseExtension, RENDER
 * QueryVersion and QueryPictFormats, ...): the reply is a function of the server and of the
 * connection's earlier requests of that extension, all kept as bytes. Fonts: QueryFont of a
 * font opened by a name seen before, ListFonts with the same arguments (facts for the session:
 * only `xset fp` changes them, and the display side verifies every answer); ListFontsWithInfo
 * too, whose answer is several replies. Facts also come
 * from the display side's own connection (FACT frames, docs/PROTOCOL.md 3.2): among them the
 * atom census (InternAtom only-if-exists of a name without an atom is None), a TrueColor map
 * checked against the server (QueryColors, AllocNamedColor, LookupColor of names looked up),
 * fonts that open (OpenFont is then quiet), and XKEYBOARD GetMap until the keyboard changes. */
#ifndef TINCAN_PREDICT_H
#define TINCAN_PREDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "proxy/color_table.h"
#include "x11/xstream.h"

struct predictor;

/* Questions of one channel whose answers will teach us something, by sequence number. */
struct predict_question {
    uint32_t seq;
    uint8_t major;
    uint32_t atom;        /* GetAtomName */
    char *name;           /* InternAtom: the name; exchanges: the key; QueryFont: the font name; owned */
    uint32_t name_len;
    struct buf acc;       /* ListFontsWithInfo: its replies so far */
};
#define PREDICT_MAX_HISTORY 96u   /* bytes of one extension's requests kept per connection */
struct predict_history {          /* a connection's requests of one extension so far */
    bool tainted;                 /* one was not a handshake, or they outgrew the bound */
    bool late;                    /* a handshake came after that: bytes may not say the version */
    uint8_t len;
    uint8_t bytes[PREDICT_MAX_HISTORY];
};
struct predict_font {
    uint32_t fid;
    uint16_t len;
    char *name;
};
#define PREDICT_MAX_BACK_BUFFERS 8u /* emacs: one per frame */
/* One connection's state for the predictor: questions, extension histories, open fonts. */
struct predict_questions {
    struct predict_question *q;
    uint32_t head, len, cap;
    struct predict_history *hist; /* by major opcode - 128; allocated at first use */
    bool hist_lost;               /* allocation failed: no handshake is answered */
    struct predict_font *fonts;
    uint32_t n_fonts, cap_fonts;
    bool have_ids;                /* the connection's resource ids: id_base | (x & id_mask) */
    uint32_t id_base, id_mask;
    uint32_t root;                /* the first screen's root window (0: not known) */
    bool xkb_flags_known;         /* XKEYBOARD's per-client flags, as its requests set them */
    uint8_t xkb_flags;
    /* App side: DOUBLE-BUFFER back buffers of the client's windows, by the AllocateBackBuffer
     * that made each (confirmed: a later request's answer came and no error for it). */
    struct predict_back_buffer {
        uint32_t window, seq;
        bool confirmed;
    } dbe[PREDICT_MAX_BACK_BUFFERS];
    uint8_t n_dbe;
};

int predict_new(struct predictor **out);   /* 0 or -ENOMEM */
void predict_free(struct predictor *p);
void predict_questions_free(struct predict_questions *pq);

/* The server's connection setup reply (any client's): learns its TrueColor colormaps. */
void predict_learn_setup(struct predictor *p, const uint8_t *setup, size_t size, bool msb);
/* This connection's own setup reply: its resource-id range. */
void predict_learn_connection(struct predict_questions *pq, const uint8_t *setup, size_t size, bool msb);
/* Whether a request without a reply is quiet: it only creates, changes or draws on the
 * client's own resources (ids in its range), from a fixed list, so only a bug of the client
 * or the server's running out of memory can make it fail. Later requests may be answered
 * at the app side before the server has carried it out (docs/PROTOCOL.md 3.2). */
/* CopyArea or CopyPlane between the client's own drawables with its own GC: quiet when the
 * server sends no event for it (the GC's exposures off) or its NoExpose is answered here
 * (expose.h): channel_app.c knows which. */
bool predict_copy_own(const struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                      bool msb);
bool predict_quiet(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                   const uint8_t *req, uint32_t size, bool msb);
/* DOUBLE-BUFFER AllocateBackBuffer on the client's InputOutput window of that visual (the
 * caller's model of its windows says; ownwin.h), of its own buffer id, a defined swap action,
 * the window's first: quiet when a GetVisualInfo reply lists the visual (else BadMatch). */
bool predict_quiet_back_buffer(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                               const uint8_t *req, uint32_t size, bool msb, uint32_t visual);
/* App side, every request (number seq) after the above: DOUBLE-BUFFER's back buffers made and
 * lost (a DeallocateBackBuffer, DestroyWindow or DestroySubwindows forgets them all). */
void predict_track_back_buffers(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                                uint32_t size, uint32_t seq, bool msb);
/* ... and every message from the server, once seq_done is its number: an error for an
 * AllocateBackBuffer forgets its buffer, a later number confirms it. */
void predict_back_buffers_seen(struct predict_questions *pq, bool error, uint32_t seq_done);
/* A request crossing to the server (number seq): remembers what it asks, if we can learn from it. */
void predict_ask(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                 uint32_t seq, bool msb);
/* A reply (to request seq) as the client sees it: learns what it tells. */
void predict_learn(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, uint32_t seq,
                   const uint8_t *reply, uint32_t size, bool msb);
/* If the request's answer is known, appends the reply the server would send to out. */
bool predict_answer(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                    const uint8_t *req, uint32_t size, uint16_t seq, bool msb, struct buf *out);
/* After the above: the request is part of the connection's history (both sides, every
 * request), and a request that changes a root window's properties makes them unknown. */
void predict_track(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req,
                   uint32_t size, bool msb);

/* The known answer to this ListFonts or ListFontsWithInfo request (a whole request; its
 * replies with sequence numbers 0), or NULL. */
const uint8_t *predict_font_list_answer(const struct predictor *p, const uint8_t *req, uint32_t size, bool msb,
                                        size_t *len);

/* Whether a font's QueryFont answer, by its name, is known (a FACT_FONT or a reply seen). */
bool predict_font_known(const struct predictor *p, const uint8_t *name, size_t len);

/* FACT frames on channel 0 (kinds 2..4): learns one; 0 or -EBADMSG. Both sides call it on the
 * same payload (the display side as it sends it), so both learn the same. */
int predict_on_fact(struct predictor *p, const uint8_t *payload, size_t len);
/* Encoders for those payloads (display side). 0 or -ENOMEM. */
int predict_fact_extension(struct buf *out, const char *name, size_t name_len, const uint8_t reply[32]);
int predict_fact_atom(struct buf *out, uint32_t atom, const char *name, size_t name_len); /* appends one */
/* FACT_ATOM_HASHES: appends an atom told by the hash of its name only (the atom census's
 * looks: 2 bytes, not its name); the atoms of one fact must follow each other from the first. */
int predict_fact_atom_hash(struct buf *out, uint32_t atom, const char *name, size_t name_len);
/* FACT_ATOMS: appends an atom p knows, with its name; -ENOENT if it does not know it. */
int predict_fact_known_atom(const struct predictor *p, struct buf *out, uint32_t atom);
int predict_fact_exchange(struct buf *out, bool msb, const uint8_t *key, size_t key_len, const uint8_t *reply,
                          size_t reply_len);
/* FACT_STATE: the display side watches (or no longer watches) the state of an extension
 * whose queries are answered from replies seen while it watches: "watched" also says that
 * the state changed, so what was known is forgotten. */
int predict_fact_state(struct buf *out, const char *ext, bool watched);
/* ... forgetting only the answers to the queries whose minor opcodes are bits of minors
 * (0: all of them; XKEYBOARD's change events each say which of its state they change). */
int predict_fact_state_of(struct buf *out, const char *ext, bool watched, uint32_t minors);
/* FACT_SELECTION: a selection's owner (0: None), as the display side's watch of it saw it
 * last (statewatch.h). The app side answers GetSelectionOwner of it from then on, unless a
 * client of the session sets that selection's owner: then not again in the session. */
int predict_fact_selection(struct buf *out, uint32_t selection, uint32_t owner);
/* An extension the server has (from EXTENSION facts): its major opcode and first event. */
bool predict_extension(const struct predictor *p, const char *xname, uint8_t *major, uint8_t *first_event);
/* Whether this request asks for a watched kind of state (RANDR's screen resources, XInput's
 * devices, a selection's owner): a reply that differs from the app side's answer is a change
 * another client made meanwhile, not a bug. */
bool predict_is_state_query(const struct msg_class *cls, const uint8_t *req, uint32_t size, bool msb);

/* FACT_EXCHANGE, or FACT_FONT (key: a font's name, reply: its QueryFont's). */
int predict_fact_reply(struct buf *out, uint8_t kind, bool msb, const uint8_t *key, size_t key_len,
                       const uint8_t *reply, size_t reply_len);
/* A root window property: state PROP_UNKNOWN, PROP_ABSENT or PROP_VALUE (type, format, data).
 * Property 0: the window's properties not named otherwise (unknown: forget all). */
enum { PROP_UNKNOWN = 0, PROP_ABSENT = 1, PROP_VALUE = 2 };
int predict_fact_property(struct buf *out, uint32_t window, uint32_t property, uint8_t state, uint32_t type,
                          uint8_t format, const uint8_t *data, size_t len);
/* The keyboard and modifier mappings (known), or that they are not known. */
int predict_fact_keyboard(struct buf *out, bool known, uint8_t min_keycode, uint8_t max_keycode, uint8_t per_keycode,
                          const uint8_t *keysyms, uint8_t per_modifier, const uint8_t *modifiers);
bool predict_keyboard_known(const struct predictor *p);
/* Whether an atom is known to exist (predefined, or seen in a reply or fact); p may be NULL. */
bool predict_atom_known(const struct predictor *p, uint32_t atom);
/* Whether a root property's state is known (so a change must be told). */
bool predict_property_known(const struct predictor *p, uint32_t window, uint32_t property);
/* Atoms 1..next-1 have all been told (FACT_ATOM_CENSUS): only-if-exists InternAtom of another
 * name is answered None while no later atom is known. */
int predict_fact_census(struct buf *out, uint32_t next);
/* FACT_COLORS: the TrueColor colormap as this predictor knows it (-ENOENT if it does not),
 * then any number of predict_fact_color_name (a name and its exact value). */
int predict_fact_colors(const struct predictor *p, struct buf *out, uint32_t colormap);
int predict_fact_color_name(struct buf *out, const char *name, size_t len, const uint16_t rgb[3]);
/* FACT_COLOR_TABLE: the built-in colour table (color_table.h) checked against the server,
 * bit i of off set for each entry the server does not know or knows with another value. */
int predict_fact_color_table(struct buf *out, const uint8_t off[COLOR_TABLE_OFF_BYTES]);
/* The colour table's entry of a name (compared without regard to ASCII case, as the
 * server's database does), or -1. */
int predict_color_table_find(const uint8_t *name, uint16_t len);
/* FACT_FONTS: appends a font name that opens (the kind byte first, when out is empty). */
int predict_fact_font(struct buf *out, const char *name, size_t len);
/* The first TrueColor default colormap learnt from a setup reply (and its colour bits), or 0. */
uint32_t predict_truecolor_colormap(const struct predictor *p, uint32_t *pixel_mask);
/* Display side: whether the server's reply to one's own AllocColor, QueryColors or
 * LookupColor (request bytes, LSB) is what the arithmetic says, trusted yet or not. */
bool predict_color_check(const struct predictor *p, const uint8_t *req, uint32_t size, const uint8_t *reply,
                         uint32_t reply_size);
/* An InternAtom reply saying None: the one local answer that may be wrong (an atom created
 * by a client outside tincan since the display side last looked; docs/PROTOCOL.md 3.2). */
bool predict_is_atom_none(const struct msg_class *cls, const uint8_t *reply, size_t size, bool msb);
int predict_atom_none_reply(struct buf *out, uint16_t seq, bool msb);
/* Whether a request of this extension is a version handshake whose reply the predictor may keep. */
bool predict_is_handshake(const char *ext, uint8_t minor);

#endif
