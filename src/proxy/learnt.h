/* learnt.h -- "learn once": the display side remembers, across sessions and per X server,
 * the questions clients asked whose answers are facts of the server (QueryFont of a font
 * opened by a name, ListFonts and ListFontsWithInfo by their bytes), in a small file of the
 * cache directory. Only questions are kept, never answers: at the next session's start the
 * observer asks them again and sends the fresh answers as FACT frames (docs/PROTOCOL.md 3.2).
 * The file comes from disk and may be corrupt, truncated or another server's: it is
 * verified (checksum, server identity, every field bounded) and otherwise ignored. */
#ifndef TINCAN_LEARNT_H
#define TINCAN_LEARNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "proxy/predict.h"
#include "x11/xdisplay.h"
#include "x11/xstream.h"

#define LEARNT_MAX_QUESTIONS 256u         /* per server; the least recently used go first */
#define LEARNT_MAX_BYTES (64u * 1024)     /* the questions' bytes in one file, headers included */
#define LEARNT_MAX_QUESTION 1024u         /* one question's bytes (a font name, a request) */
#define LEARNT_MAX_ANSWER (960u * 1024)   /* a larger answer is not sent as a fact (FRAME_MAX_PAYLOAD) */
#define LEARNT_MAX_FILES 16u              /* servers remembered in one cache directory */
#define LEARNT_ID_SIZE 32                 /* BLAKE2b-256 of the server's identity */
#define LEARNT_ANSWER_SIZE 8              /* a short hash of the last answer seen */
#define LEARNT_HEADER_SIZE 84
#define LEARNT_ENTRY_HEADER 12
#define LEARNT_FILE_SUFFIX ".tcl"

enum learnt_kind {
    LEARNT_FONT = 1,                      /* bytes: a font's name; asked as OpenFont + QueryFont */
    LEARNT_LIST_FONTS = 2,                /* bytes: the whole ListFonts request (LSB) */
    LEARNT_LIST_FONTS_WITH_INFO = 3,      /* bytes: the whole ListFontsWithInfo request (LSB) */
};

struct learnt_question {
    uint8_t kind;
    uint16_t len;
    uint8_t *bytes;                       /* owned */
    uint8_t answer[LEARNT_ANSWER_SIZE];   /* hash of the answer, sequence numbers zeroed */
    bool known;                           /* both sides' predictors have the answer this session */
};

struct learnt;
struct observer;

/* dir: the cache directory (created if needed when saving); NULL: kept in memory only. */
int learnt_new(struct learnt **out, const char *dir);
void learnt_free(struct learnt *l);

/* The server's connection setup reply (the observer's): its identity, from the display's
 * name, vendor and release; then the file of that server is read (a bad one: one warning). */
void learnt_on_setup(struct learnt *l, const struct xdisplay_addr *display, const uint8_t *setup, size_t n);
/* Writes the file if a question or an answer changed, or with order_too if only the order
 * of the last asked did (atomically), then bounds the files of the directory. 0 or -errno. */
int learnt_save(struct learnt *l, bool order_too);

/* The store itself (pure, for tests and the fuzzer). */
void learnt_set_identity(struct learnt *l, const uint8_t id[LEARNT_ID_SIZE]);
/* Replaces the questions by a file's; 0, or -EBADMSG (corrupt, truncated, foreign: nothing changes). */
int learnt_parse(struct learnt *l, const uint8_t *file, size_t n);
int learnt_encode(const struct learnt *l, struct buf *out);   /* 0 or -ENOMEM */
/* Adds a question (or moves it first) with its answer's hash, learnt this session by both
 * sides (so not to be told again); answer NULL: only moves a question already there.
 * The least recently used are dropped beyond the bounds. Returns whether it is kept. */
bool learnt_note(struct learnt *l, uint8_t kind, const uint8_t *bytes, size_t len,
                 const uint8_t answer[LEARNT_ANSWER_SIZE]);
void learnt_drop(struct learnt *l, uint8_t kind, const uint8_t *bytes, size_t len);
size_t learnt_count(const struct learnt *l);
const struct learnt_question *learnt_at(const struct learnt *l, size_t i); /* 0: most recent */
/* The hash of one or more whole replies, their sequence numbers left out. */
void learnt_answer_hash(const uint8_t *prefix, size_t prefix_len, const uint8_t *reply, size_t n,
                        uint8_t out[LEARNT_ANSWER_SIZE]);

/* Session hooks, display side. A client's request (touches a known question), and a reply
 * from the server that was not answered at the app side (learns the question), before
 * predict_learn sees it. */
void learnt_on_request(struct learnt *l, const struct predict_questions *pq, const struct msg_class *cls,
                       const uint8_t *req, uint32_t size, bool msb);
void learnt_on_reply(struct learnt *l, const struct predict_questions *pq, const struct msg_class *cls, uint32_t seq,
                     const uint8_t *reply, uint32_t size, bool msb);
/* At the observer's start: asks the server every question remembered; the answers become
 * FACT frames (observer_ask), and clients' setup replies wait for them. */
void learnt_probe(struct learnt *l, struct observer *o);
/* How the observer tells it of those (observer.h): its setup reply (the server's identity,
 * with display's name) and the start of its probes. */
struct observer_listener;
void learnt_listen(struct learnt *l, const struct xdisplay_addr *display, struct observer_listener *out);

#endif
