/* handshake.h -- the start of a link: each side sends a banner naming the protocol
 * version, its role and capabilities; then, when the link is not already secured (e.g. by
 * ssh), both prove knowledge of the session secret by HMAC-SHA256 over fresh nonces; then
 * both name the session the link is for (a new one, or one to resume after a lost link).
 * No X data is accepted or sent before hs_feed() returns 1. Pure: bytes in, bytes out. */
#ifndef TINCAN_HANDSHAKE_H
#define TINCAN_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "link/dict.h"

#define LINK_PROTOCOL_VERSION 14
#define HS_NONCE_SIZE 32
#define HS_PROOF_SIZE 32
#define HS_MAX_BANNER 128
#define HS_MAX_SECRET 1024
#define HS_WINDOW_LOG_DEFAULT 24   /* the zstd window of a peer whose banner names none */
#define HS_WINDOW_LOG_MIN 17       /* a smaller one refuses the peer */

#define HS_TOKEN_SIZE 16

enum link_role { ROLE_APP, ROLE_DISPLAY };

/* Returned by hs_feed on a resuming link once the peer has named this session: the caller
 * judges resume.generation_peer, stops reading the old link, sets resume.received_self,
 * and calls hs_feed again. */
#define HS_RESUME_READY 2

/* Which session a link is for (FRAME_SESSION). Each side draws its token at the session's
 * start; a resuming link must name both tokens and the number of links attached so far. */
struct hs_resume {
    bool resume;                     /* set by the caller: this link resumes a session */
    uint8_t token_self[HS_TOKEN_SIZE];   /* set by the caller */
    uint8_t token_peer[HS_TOKEN_SIZE];   /* resuming: set by the caller; new: learnt from the peer */
    uint64_t generation;             /* set by the caller: links attached before this one */
    uint64_t generation_peer;        /* resuming, at HS_RESUME_READY: the peer's; the caller
                                      * refuses a stale one (the handshake does not) */
    uint64_t received_self;          /* resuming: set by the caller at HS_RESUME_READY */
    uint64_t received_peer;          /* resuming, after success: where our stream resumes */
    bool sent_session, got_session, ready, sent_resume, got_resume; /* ready: HS_RESUME_READY returned */
};

/* Capability bits of the banner; a session uses those both sides offer. */
enum link_caps {
    CAP_ZSTD = 0x1,   /* everything after the handshake is a zstd stream in each direction */
    CAP_XCODEC = 0x2, /* DATA carries X messages in the structured encoding (PROTOCOL.md 5) */
    CAP_DICT = 0x4,   /* the handshake ends with DICT_OFFER: cached dictionaries to prime the streams */
    CAP_SMALL = 0x8,  /* with CAP_ZSTD: the streams are chunks, small writes through their own coder */
    CAP_BUILTIN = 0x10, /* with CAP_ZSTD: a stream no cached dictionary primes starts from the built-in one */
    CAP_SPARE = 0x20, /* the display side offers connections set up ahead (SPARE, PROTOCOL.md 3.5) */
};

struct handshake {
    enum link_role role;
    bool auth;                       /* this side requires proof of the secret */
    uint8_t secret[HS_MAX_SECRET];
    size_t secret_len;
    uint32_t caps;                   /* capabilities offered; after success, those both offered */
    int window_log;                  /* zstd window offered (set before hs_start, default 24);
                                      * after the banners, the smaller of both (PROTOCOL.md 1) */
    uint8_t nonce_self[HS_NONCE_SIZE], nonce_peer[HS_NONCE_SIZE];
    bool got_banner, got_nonce, got_proof;
    struct dict_offer offer_self;    /* set by the caller before hs_feed(); sent with CAP_DICT */
    struct dict_offer offer_peer;    /* after success with CAP_DICT: the peer's */
    bool sent_offer, got_offer;
    struct hs_resume session;        /* FRAME_SESSION and FRAME_RESUME (set .token_self first) */
    char error[200];                 /* why the handshake failed, for the log */
};

/* secret may be NULL (no authentication: the link is secured by other means). */
int hs_init(struct handshake *hs, enum link_role role, const uint8_t *secret, size_t secret_len, uint32_t caps);
/* Appends our banner (and nonce) to out. */
int hs_start(struct handshake *hs, struct buf *out);
/* Consumes handshake bytes from in and may append our replies to out. Returns 1 when the
 * peer is accepted (frames follow in `in`), 0 when more bytes are needed, HS_RESUME_READY
 * (resuming links), -EPROTO (or -EACCES for a failed proof or a session that is not ours)
 * with hs->error set when the peer must be refused. After authentication: SESSION frames;
 * then, resuming, RESUME frames; else, with CAP_DICT on both sides, DICT_OFFER frames. */
int hs_feed(struct handshake *hs, struct buf *in, struct buf *out);
void hs_wipe(struct handshake *hs);

/* Reads a secret from a file (trailing whitespace dropped). 0 or -errno; at least 16 bytes. */
int secret_load_file(const char *path, uint8_t *out, size_t *len);
/* Creates path (mode 0600, must not exist) holding a fresh random secret in hex. */
int secret_create_file(const char *path);

#endif
