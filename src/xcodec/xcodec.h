/* xcodec.h -- structure-aware encoding of one X connection's messages, one direction
 * per coder, before the link's general compressor (docs/PROTOCOL.md section 5).
 * Owns per-channel model state; does no I/O; never trusts the encoded stream. */
#ifndef TINCAN_XCODEC_H
#define TINCAN_XCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

enum xc_dir {
    XC_REQUESTS = 0, /* client -> server: requests (after the setup request) */
    XC_SERVER = 1,   /* server -> client: the setup reply first, then replies, events, errors */
};

#define XC_MAX_REQUEST (16u << 20)       /* BIG-REQUESTS' ceiling, as xstream enforces */
#define XC_MAX_SERVER_MSG (256u << 20)   /* as xstream enforces for server messages */

struct xenc; /* one direction of one channel, sending side */
struct xdec; /* the same, receiving side */

/* Memory that body models keep per channel direction (the pixel coder's statistics,
 * recent images, kept font tables) is reserved from a budget the session shares among
 * its encoders: a channel direction takes its most (XC_HEAVY_MAX) at its first such body,
 * or, when the budget cannot give that, never codes such bodies with a model (they cross
 * as raw bytes for zstd). The decoding side keeps only what the encoder's codes make it
 * keep, so it is bounded by the peer's budget. */
struct xc_budget {
    size_t cap, used;
};
size_t xc_heavy_max(enum xc_dir dir);

/* The recent messages a channel direction keeps as references (the encoder's and, the
 * same, the decoder's) are bounded per channel: at most XC_STORE_MAX, in units of
 * XC_STORE_UNIT, chosen by the app side from its budget and told in OPEN (PROTOCOL.md 3.1),
 * since both ends must evict the same. Set before the first message. */
#define XC_STORE_UNIT (64u << 10)
#define XC_STORE_MAX (64u * XC_STORE_UNIT)
/* A channel direction with a store (not 0) also keeps its recent Trapezoids, at most this. */
#define XC_STORE_TRAPS (64u << 10)

/* The pixel bodies of the last session, shared by a link's coders (pixcache.c, PROTOCOL.md
 * 2.2 and 5.1): loaded at link start from a cache file both ends hold, read-only for the
 * session; the bodies coded in it are collected for the next file. */
struct xc_pixcache;
#define XC_PIXCACHE_BYTES (4u << 20) /* bodies in a file, at most; budget may be lower */
#define XC_PIXCACHE_ITEMS 16384u
#define XC_PIXCACHE_MIN 16u          /* every pixel-coded body (an AddGlyphs of one glyph is 20) */
#define XC_PIXCACHE_MAX (256u << 10)
#define XC_PIXCACHE_IMAGE_MAX (64u << 10) /* palettes and WebPs kept, bodies at most (putimage.c) */
#define XC_PIXCACHE_CODE_MAX(len) (2 * (len) + 64) /* a code kept for a body of len bytes */
/* A cached body whose code is at least this long is sent as its index in the set (PutImage
 * filter byte 11, AddGlyphs sub-model 3; a sender's choice), a shorter one as its code. */
#define XC_PIXCACHE_REF_MIN 48u
#define XC_PIXCACHE_FILE_MAX (4 + 8ull * XC_PIXCACHE_ITEMS + 3ull * XC_PIXCACHE_BYTES + 64ull * XC_PIXCACHE_ITEMS)
/* budget: bytes of bodies kept for the next file (at most XC_PIXCACHE_BYTES); the set
 * held in memory is at most twice that plus a loaded file. 0 or -ENOMEM. */
int xc_pixcache_new(struct xc_pixcache **out, size_t budget);
void xc_pixcache_free(struct xc_pixcache *c);
/* A saved set (the content of a verified cache file): 0, -EBADMSG (never trusts it), -ENOMEM. */
int xc_pixcache_load(struct xc_pixcache *c, const uint8_t *p, size_t n);
/* Appends the set to save: the same bytes at both ends when they coded the same bodies.
 * Nothing when there is nothing to keep. 0 or -ENOMEM. */
int xc_pixcache_save(const struct xc_pixcache *c, struct buf *out);
size_t xc_pixcache_loaded(const struct xc_pixcache *c);
/* Bodies coded again with a loaded code (the pixel coder not run on them). */
uint64_t xc_pixcache_hits(const struct xc_pixcache *c);

/* Tiles of large images of earlier sessions, shared by a link's coders (tilecache.c,
 * PROTOCOL.md 2.2, 5.1 and 5.2 filter 9 mode 3): loaded at link start from a cache file
 * both ends hold, read-only for the session; the session's own tiles are collected for the
 * next file, at most XC_TILES_MAX tiles of 1 KiB. */
struct xc_tilecache;
#define XC_TILES_MAX 8192u
/* budget: bytes of tiles in the file saved (at most XC_TILES_MAX tiles). Held: the loaded
 * file and up to 9/8 of the budget plus one tile for this session. 0 or -ENOMEM. */
int xc_tilecache_new(struct xc_tilecache **out, size_t budget);
void xc_tilecache_free(struct xc_tilecache *c);
/* A saved set (a verified cache file's content): 0, -EBADMSG (never trusts it), -ENOMEM. */
int xc_tilecache_load(struct xc_tilecache *c, const uint8_t *p, size_t n);
/* Appends the set to save (nothing when empty): the same bytes at both ends when they
 * coded the same large images, in any order. 0 or -ENOMEM. */
int xc_tilecache_save(const struct xc_tilecache *c, struct buf *out);
size_t xc_tilecache_loaded(const struct xc_tilecache *c);
/* Tiles sent or received as references to loaded ones. */
uint64_t xc_tilecache_hits(const struct xc_tilecache *c);

/* msb: the connection's byte order ('B'). 0 or -ENOMEM. */
int xenc_new(struct xenc **out, enum xc_dir dir, bool msb);
/* The session's budget (it must outlive the encoder); NULL: no bound. */
void xenc_set_budget(struct xenc *e, struct xc_budget *b);
void xenc_set_store(struct xenc *e, size_t cap);
/* Both ends' coders of a channel direction must be given the same set, or none. */
void xenc_set_pixcache(struct xenc *e, struct xc_pixcache *c);
void xenc_set_tilecache(struct xenc *e, struct xc_tilecache *c); /* the same: both ends, or none */
/* quality 1-100: photo-like 32-bit PutImage bodies over 16 KiB are sent as lossy WebP (the
 * receiver draws an approximation; PROTOCOL.md 5.2, filter byte 8). 0 (the default): none. */
void xenc_set_lossy(struct xenc *e, int quality);
/* The link's measured rate in bytes per second (0: unknown), whenever it changes: large
 * images are coded harder on slower links (bigimg.c), never on links where that costs
 * more time than it saves. Only the sender's choice: nothing changes for the decoder. */
void xenc_set_link_rate(struct xenc *e, uint64_t rate_Bps);
void xenc_free(struct xenc *e);
/* Encodes one whole X message (as framed by xstream) and appends it to out.
 * Any bytes are accepted (malformed ones cross verbatim). 0, -EMSGSIZE or -ENOMEM. */
int xenc_message(struct xenc *e, const uint8_t *msg, size_t len, struct buf *out);

int xdec_new(struct xdec **out, enum xc_dir dir, bool msb);
void xdec_free(struct xdec *d);
void xdec_set_store(struct xdec *d, size_t cap);
void xdec_set_pixcache(struct xdec *d, struct xc_pixcache *c);
void xdec_set_tilecache(struct xdec *d, struct xc_tilecache *c);
/* Decodes as many whole messages as in[0, n) holds, appending their exact original bytes
 * to out. Returns the bytes consumed (the caller keeps the rest and calls again with
 * more), -EBADMSG for a corrupt stream (the decoder is then unusable) or -ENOMEM. */
long xdec_feed(struct xdec *d, const uint8_t *in, size_t n, struct buf *out);
/* The setup reply reached the client another way (a spare connection's, PROTOCOL.md 3.4):
 * what follows is encoded as after it. */
void xdec_setup_seen(struct xdec *d);

#endif
