/* session.h -- one tincan session: the link to the other half and every X client
 * carried over it as a channel. The same engine runs on both sides; the role decides
 * which way requests flow. Owns the channels and their sockets; does not own the link fds'
 * creation (the caller connects or accepts them) but closes them when the session ends. */
#ifndef TINCAN_SESSION_H
#define TINCAN_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "link/handshake.h"
#include "loop/loop.h"
#include "proxy/stats.h"
#include "x11/xdisplay.h"

struct session_config {
    enum link_role role;
    const uint8_t *secret;          /* NULL: the link is secured by other means (ssh) */
    size_t secret_len;
    struct xdisplay_addr upstream;  /* display side: the real X server */
    uint8_t cookie[XAUTH_COOKIE_SIZE]; /* app side: what our clients must present */
    uint32_t handshake_timeout_ms;
    int compress_level;             /* zstd level offered for the link; 0: no compression;
                                     * CODEC_LEVEL_AUTO (-1): by link_speed */
    int link_speed;                 /* enum codec_speed: the preset, or auto (0) */
    const char *cache_dir;          /* the compression cache (warm start); NULL: none */
    bool no_local_answers;          /* app side: send every request's answer across the link */
    bool no_locale_hint;            /* app side: do not read a client's locale (FRAME_HINT, hint.h) */
    bool no_font_hint;              /* app side: do not read the fonts of a client's app-defaults */
    bool observe;                   /* display side: open X connections of our own (the observer, spares) */
    bool no_xcodec;                 /* do not offer the structured X encoding (CAP_XCODEC) */
    int lossy_images;               /* app side: WebP quality (1-100) for photo-like PutImage; 0: lossless */
    uint64_t max_memory;            /* bytes this side may hold (codec and buffers); 0: 64 MiB */
    uint32_t grace_s;               /* a lost link may be replaced (session_attach) this long; 0: a
                                     * lost link ends the session at once */
    const uint8_t *token;           /* HS_TOKEN_SIZE bytes naming the session (PROTOCOL.md 1.2); NULL:
                                     * drawn at random (the caller sets it to name a socket after it) */
    uint64_t (*clock)(void);        /* monotonic ns for the flush policy; NULL: clock_ns (tests set one) */
    /* Display side: opens an upstream connection; returns an fd or -errno. NULL: connect
     * to `upstream` (tests give a socketpair to a scripted X server instead). */
    int (*connect_upstream)(void *ctx);
    void *connect_ctx;
};

/* DETACHED: the link was lost; every channel waits for a new one (session_attach), for up
 * to the grace period. */
enum session_state { SESSION_HANDSHAKE, SESSION_UP, SESSION_DETACHED, SESSION_ENDED };

struct session;

/* Takes ownership of link_in/link_out (they may be the same fd; made non-blocking). */
int session_new(struct session **out, struct loop *loop, const struct session_config *cfg, int link_in, int link_out);
void session_free(struct session *s);
/* A new link for a session that is up or detached: it must prove the secret and name this
 * session (PROTOCOL.md 1.3); then it replaces the old link and both streams resume where
 * the peer's stopped. Takes ownership of the fds (closed when refused). 0 or -errno. */
int session_attach(struct session *s, int link_in, int link_out);
/* How many links are in their handshake for this session (session_attach). */
unsigned session_attaching(const struct session *s);
/* The first 8 bytes of this side's session token (peer: the other side's, known once the
 * link is up) in hex, into out (17 bytes at least): how a new link finds a detached app
 * side (`tincan attach`). 0, or -ENOTCONN when not yet known. */
int session_token_hex(const struct session *s, bool peer, char *out, size_t cap);
/* App side: the status its command exited with, told to the peer in GOODBYE (PROTOCOL.md 4). */
void session_set_exit_status(struct session *s, int status);
/* Display side: the status the app side's command exited with (from its GOODBYE), or -1. */
int session_peer_exit_status(const struct session *s);
/* App side: a newly accepted X client. Takes ownership of fd. */
int session_add_client(struct session *s, int fd);
/* Ends the session cleanly: tells the peer, flushes, then ends. */
void session_goodbye(struct session *s);
/* Call once per loop turn: checks timeouts. */
void session_tick(struct session *s);
enum session_state session_state(const struct session *s);
/* Why the session ended: NULL for a clean end. */
const char *session_end_reason(const struct session *s);
/* True if the peer refused us or we refused it during the handshake. */
bool session_refused(const struct session *s);
size_t session_channel_count(const struct session *s);
/* Bytes held in buffers (as of the last loop turn), and whether reading X peers is paused
 * to keep under the memory bound. */
uint64_t session_memory_held(const struct session *s);
bool session_reading_paused(const struct session *s);
struct stats *session_stats(struct session *s);
void session_print_stats(struct session *s, FILE *f);
/* The live state `tincan info` shows (info.c): as text, or as one JSON object. 0 or -EIO. */
int session_write_info(struct session *s, FILE *f, bool json);

#endif
