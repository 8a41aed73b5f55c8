/* xcodec_private.h -- private to src/xcodec/: the model state both ends keep in step
 * (rings of recent messages per class), the record's bit layout, and the body models. */
#ifndef TINCAN_XCODEC_PRIVATE_H
#define TINCAN_XCODEC_PRIVATE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "xcodec/xcodec.h"
#include "xproto_wire.h"

#define XC_K 7                       /* references kept per class; slot code 7 = none */
#define XC_NCLASS 512                /* requests: 0-127 core majors, 128-511 hashed (major, minor) */
#define XC_REF_MAX (256u << 10)      /* longer messages are never kept as references */
#define XC_STORE_BUDGET XC_STORE_MAX /* bytes of references per coder unless set lower */
#define XC_BIG_BODY 256              /* bodies longer than this carry their encoded size */

/* The selector byte after the first byte of every record. */
#define XC_SEL_SLOT 0x07u   /* reference slot, 0 = newest; 7 = no reference (all zeros) */
#define XC_SEL_SAMELEN 0x08u
#define XC_SEL_EXACT 0x10u  /* equal to the reference but for the sequence number */
#define XC_SEL_B1 0x20u     /* byte 1 differs from the reference; it follows raw */
#define XC_SEL_BIG 0x40u    /* a request in the BIG-REQUESTS form */
#define XC_SEL_NAMED 0x80u  /* alone: a request that is a known extension's name, by index */
#define XC_SEL_ESC 0xffu    /* a message sent verbatim */
#define XC_NOREF 7u

/* The body mode byte: low two bits the mode, bits 2-3 the trimmed zeros of RAW. */
enum { XC_BODY_RAW = 0, XC_BODY_DELTA = 1, XC_BODY_MODEL = 2, XC_BODY_SAME = 3 };

struct xc_slot {
    uint8_t *p;
    uint32_t len, cap;
    uint64_t serial; /* insertion order, for eviction */
};

struct xc_class {
    struct xc_slot slot[XC_K];
    uint8_t head; /* index of the newest slot */
};

/* Font tables coded as such (reply sub-model 4), the latest first: what the next
 * table may be coded against. */
#define XC_FONTTABS 4
#define XC_FONTTAB_MAX 65536u /* charinfos: larger tables are not kept */
struct xc_fonttab {
    uint8_t *ci; /* the charinfos, 12 bytes each */
    uint32_t n;
};
struct xc_fonttabs {
    struct xc_fonttab t[XC_FONTTABS];
    unsigned head;
};

/* Identical on both ends of one channel direction, updated after every whole message. */
struct xc_pix;

/* Recent PutImage bodies (images.c), newest first. */
#define XC_IMGS 64
#define XC_IMGS_BUDGET (2u << 20)
#define XC_IMGS_MIN 64          /* smaller images are not kept */
#define XC_IMGS_MAX (256u << 10) /* nor larger ones */
struct xc_img {
    uint8_t *p;
    uint32_t len;
    uint64_t hash; /* the encoder's, to find it */
};
struct xc_imgs {
    struct xc_img e[XC_IMGS];
    unsigned n;
    size_t bytes;
};
uint64_t xc_imgs_hash(const uint8_t *p, uint32_t len);
/* The index of the entry equal to p, or -1. */
int xc_imgs_find(const struct xc_imgs *c, const uint8_t *p, uint32_t len, uint64_t hash);
/* Moves entry found (>= 0) to the front, or keeps a copy of p there. 0 or -ENOMEM. */
int xc_imgs_push(struct xc_imgs *c, const uint8_t *p, uint32_t len, int found, uint64_t hash);
void xc_imgs_free(struct xc_imgs *c);

struct xc_model;
/* Large 32-bit images as lossless WebP (bigimg.c, PutImage filter byte 9). */
#define XC_FILTER_WEBPLL 9
#define XC_BIGIMG_MIN (16u << 10)      /* bodies over this (smaller ones: the pixel coder) */
#define XC_BIGIMG_HUGE (1u << 20)      /* bodies over this: preset 1 at most (the loop's time) */
#define XC_BIGIMG_LEVEL_UNKNOWN 3      /* the effort while the link's rate is unknown: the smallest */
/* libwebp's lossless preset (0-9) for a link of rate_Bps bytes per second (0: unknown), or
 * -1: none (a link fast enough that coding would cost more time than it saves). */
int xc_bigimg_level(uint64_t rate_Bps);
/* 1 when the image is not for this coder (or its code would not pay), 0 when its code
 * (filter byte and all) is appended, -ENOMEM. */
int xc_bigimg_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                     struct buf *out);
/* A large 32-bit image (over XC_BIGIMG_MIN) whose palette code (filter byte 3) is at mark
 * to out's end: replaced by tiles of earlier sessions and a WebP of the rest (filter byte 9
 * mode 3) when that costs less than the palette after zstd; either way its tiles noted. 0 or
 * -ENOMEM. */
int xc_bigimg_palette(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb,
                      struct buf *out, size_t mark);
/* A large 32-bit image sent as a palette, at either end: its tiles noted, as a WebP's are
 * (the next session's tiles, this session's ring). 0 or -ENOMEM. */
int xc_bigimg_note_tiles(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb);
/* After the filter byte: exactly blen bytes to dst (m: its recent images); 0, -EAGAIN or -EBADMSG. */
int xc_bigimg_decode(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb, struct rd *r);

/* The last session's pixel bodies (pixcache.c). When p is one of them: 0 and its code then
 * (*code, *code_len) and its index in the set (when index is not NULL); else -1. */
int xc_pixcache_find(struct xc_pixcache *c, const uint8_t *p, uint32_t len, const uint8_t **code, uint32_t *code_len,
                     uint32_t *index);
/* The loaded body of this index, which must be len bytes long: 0, counted as coded again,
 * or -EBADMSG. */
int xc_pixcache_take(struct xc_pixcache *c, uint64_t index, uint32_t len, const uint8_t **p);
/* The loaded body whose code (marker included) this is, which must be len bytes long:
 * 0, counted as coded again, or -EBADMSG. */
int xc_pixcache_get(struct xc_pixcache *c, const uint8_t *code, uint32_t code_len, uint32_t len, const uint8_t **p);
/* The same without counting it: its index, or -1. */
int xc_pixcache_get_quiet(const struct xc_pixcache *c, const uint8_t *code, uint32_t code_len, uint32_t len,
                          const uint8_t **p);
/* A body the pixel coder coded this session (as code, marker included), kept for the next
 * file. 0 or -ENOMEM. */
int xc_pixcache_note(struct xc_pixcache *c, const uint8_t *p, uint32_t len, const uint8_t *code, uint32_t code_len);

/* Tiles of large images (tilecache.c, PutImage filter 9 mode 3): squares of XC_TILE_SIDE
 * pixels on the drawable's grid (its coordinates multiples of the side), 4 bytes a pixel. */
#define XC_TILE_SIDE 16
#define XC_TILE_BYTES (4u * XC_TILE_SIDE * XC_TILE_SIDE)
/* The whole cells of the grid inside an image at (x, y) of w x h: nx by ny, the first at
 * pixel (ox, oy) of the image. */
struct xc_tile_grid {
    uint32_t ox, oy, nx, ny;
};
void xc_tile_grid(int x, int y, uint32_t w, uint32_t h, struct xc_tile_grid *g);
/* The tile at pixel (ox, oy) of an image w pixels wide, into tile[XC_TILE_BYTES]. */
void xc_tile_cut(const uint8_t *body, uint32_t w, uint32_t ox, uint32_t oy, uint8_t *tile);
uint64_t xc_tile_key(const uint8_t *tile);
/* The index of a tile among the loaded ones, or -1. */
int xc_tilecache_find(struct xc_tilecache *c, const uint8_t *tile);
/* The encoder sent n loaded tiles as references (hits). */
void xc_tilecache_sent(struct xc_tilecache *c, size_t n);
/* Loaded tile number index (counted as a hit), or NULL when there is none. */
const uint8_t *xc_tilecache_get(struct xc_tilecache *c, uint64_t index);
/* This session's tiles of a channel direction (the newest XC_TILE_RING not of one colour
 * nor among the loaded ones, of its filter-9 images' whole cells), made on first use. */
#define XC_TILE_RING 1024u
struct xc_tile_ring;
void xc_tile_ring_free(struct xc_tile_ring *r);
uint32_t xc_tile_ring_count(const struct xc_tile_ring *r);
/* How many tiles back (0: the newest) tile is, or -1. */
int xc_tile_ring_find(const struct xc_tile_ring *r, const uint8_t *tile, uint64_t key);
const uint8_t *xc_tile_ring_get(const struct xc_tile_ring *r, uint32_t back);
/* After a filter-9 image: its new tiles, in cell order. 0 or -ENOMEM. */
int xc_tile_ring_push_image(struct xc_tile_ring **rp, struct xc_tilecache *c, const uint8_t *body, int x, int y,
                            uint32_t w, uint32_t h);
/* Notes the whole tiles of an image coded or decoded with filter 9 for the next file. */
int xc_tilecache_note_image(struct xc_tilecache *c, const uint8_t *body, int x, int y, uint32_t w, uint32_t h);

struct xc_model {
    enum xc_dir dir;
    bool msb;
    bool setup_done;   /* XC_SERVER: the setup reply has gone by */
    uint16_t last_seq; /* XC_SERVER: the last sequence number sent */
    uint64_t serial;
    size_t stored;     /* bytes held by slots */
    size_t store_cap;  /* ... at most (xenc_set_store): the oldest are evicted */
    struct xc_class cls[XC_NCLASS];
    struct xc_pix *pix;     /* pixel coder statistics, made on first use */
    struct xc_imgs *imgs;   /* recent PutImage bodies, made on first use */
    struct xc_pixcache *pc; /* XC_REQUESTS: the last session's pixel bodies (shared), or NULL */
    struct xc_tilecache *tc; /* XC_REQUESTS: tiles of earlier sessions' large images (shared), or NULL */
    struct xc_tile_ring *ring; /* XC_REQUESTS: this session's tiles of the channel, made on first use */
    struct xc_sent_codes *sent; /* encoder only (bigimg.c): hashes of the latest WebPs sent */
    int lossy_q;            /* encoder: WebP quality for photo-like images; 0: none */
    bool lossy_last;        /* the body just coded was lossy: the message is not kept */
    int bigimg_level;       /* encoder: WebP-lossless effort for large images (bigimg.c); -1: none */
    struct xc_fonttabs fonts; /* XC_SERVER */
    struct xc_traps *traps;           /* XC_REQUESTS: recent Trapezoids bodies, made on first use */
    struct xc_trap_hints *trap_hints; /* encoder only (trapmotion.c), made on first use */
};

/* What the header of a message implies, from its first bytes and its length. */
struct xc_shape {
    unsigned cls;       /* class index */
    unsigned head;      /* bytes coded as 16-bit word deltas */
    bool has_seq;       /* XC_SERVER: bytes 2-3 are the sequence number */
    bool len32;         /* bytes 4-7 are a length (replies, GenericEvent, BIG requests) */
    const struct xc_body_model *body; /* NULL: RAW, DELTA or SAME only */
};

/* A model of a message body: elements of 16-bit fields, or image rows. */
struct xc_body_model {
    uint8_t kind;     /* XC_BM_ELEMS or XC_BM_IMAGE */
    uint8_t words;    /* fields per element, at most XC_BM_WORDS */
    uint8_t base[20]; /* per field: 0xff = same field of the previous element, else a field before it */
};
enum { XC_BM_ELEMS = 1, XC_BM_IMAGE = 2, XC_BM_REPLY = 3, XC_BM_GLYPHS = 4, XC_BM_TRAPS = 5, XC_BM_ITEMS = 6,
       XC_BM_ICONS = 7 };
#define XC_BM_WORDS 20
#define XC_EXT_TRAPEZOIDS 10 /* the minor of RENDER's Trapezoids (any extension's minor 10: below) */
#define XC_EXT_ADDGLYPHS 20  /* RENDER's AddGlyphs, as any extension's minor 20 */
#define XC_EXT_ADDTRAPS 32   /* RENDER's AddTraps, as any extension's minor 32 */
#define XC_EXT_GLYPHS8 23    /* RENDER's CompositeGlyphs8; 16 and 32 follow */
/* These minors are wire-frozen (PROTOCOL.md 5): a newer xcb-proto may not move them. */
_Static_assert(XC_EXT_TRAPEZOIDS == XP_RENDER_OP_TRAPEZOIDS && XC_EXT_ADDGLYPHS == XP_RENDER_OP_ADD_GLYPHS &&
               XC_EXT_ADDTRAPS == XP_RENDER_OP_ADD_TRAPS && XC_EXT_GLYPHS8 == XP_RENDER_OP_COMPOSITE_GLYPHS8 &&
               XC_EXT_GLYPHS8 + 1 == XP_RENDER_OP_COMPOSITE_GLYPHS16 && XC_EXT_GLYPHS8 + 2 == XP_RENDER_OP_COMPOSITE_GLYPHS32,
               "xcodec's RENDER minors are wire-frozen");

void xc_model_init(struct xc_model *m, enum xc_dir dir, bool msb);
void xc_model_free(struct xc_model *m);
unsigned xc_class_of(const struct xc_model *m, uint8_t byte0, uint8_t minor);
/* Fills the shape of a message of class cls, first byte byte0, length len, BIG form big. */
void xc_shape_of(const struct xc_model *m, uint8_t byte0, uint8_t minor, uint32_t len, bool big,
                 struct xc_shape *s);
/* The reference in slot i (0 = newest) of a class, or NULL when empty. */
const struct xc_slot *xc_ref(const struct xc_model *m, unsigned cls, unsigned i);
/* Keeps msg as the newest reference of its class. 0 or -ENOMEM. */
int xc_remember(struct xc_model *m, unsigned cls, const uint8_t *msg, uint32_t len);

/* Word k of the head of a message (ref may be shorter: zeros beyond). */
static inline uint16_t xc_word(const uint8_t *p, uint32_t len, unsigned k, bool msb)
{
    uint32_t o = 2u * k;
    if (o + 2 > len)
        return 0;
    return msb ? (uint16_t)(p[o] << 8 | p[o + 1]) : (uint16_t)(p[o + 1] << 8 | p[o]);
}
/* What word k of the head is predicted to be: the reference's, except that the event
 * coordinates of input events (KeyPress..LeaveNotify) move with the root coordinates.
 * cur holds the words before k, already known to both ends. */
static inline uint16_t xc_predict(const struct xc_model *m, const uint8_t *rp, uint32_t rlen, uint8_t byte0,
                                  const uint16_t *cur, unsigned k)
{
    uint16_t r = rp ? xc_word(rp, rlen, k, m->msb) : 0;
    unsigned code = byte0 & 0x7f;
    if (m->dir == XC_SERVER && code >= 2 && code <= 8 && (k == 12 || k == 13))
        return (uint16_t)(r + cur[k - 2] - (rp ? xc_word(rp, rlen, k - 2, m->msb) : 0));
    return r;
}

/* Whether word k of the head is implied (never coded). */
static inline bool xc_word_implied(const struct xc_shape *s, enum xc_dir dir, unsigned k)
{
    if (k == 0) return true;                       /* the first byte, and byte 1 by flag */
    if (k == 1) return dir == XC_REQUESTS || s->has_seq; /* length, or the sequence number */
    if (k == 2 || k == 3) return s->len32;
    return false;
}

/* Zigzag for 16-bit deltas: small magnitudes of either sign become small varints. */
static inline uint64_t xc_zz16(uint16_t d) { return (uint16_t)((uint32_t)d << 1) ^ (uint16_t)(0u - (d >> 15)); }
static inline uint16_t xc_unzz16(uint64_t v) { return (uint16_t)((uint32_t)(v >> 1) ^ (0u - (uint32_t)(v & 1))); }

/* Pixel coder (pixel.c): an image's bytes as an arithmetic code (`size:varint code` for
 * bodies up to XC_BIG_BODY; larger ones' codes are the rest of the body's code), with
 * statistics that carry over from image to image of the same channel direction. */
enum { XC_PIX_GLYPHS_A8, XC_PIX_GLYPHS_ARGB, XC_PIX_PLANE, XC_PIX_ARGB, XC_PIX_BITS };
struct xc_pix_image {
    uint8_t kind;
    bool msb;
    uint32_t blen;         /* bytes of the image (glyphs: of the whole AddGlyphs body) */
    uint32_t w, h, stride; /* PLANE: stride bytes per row, w of them samples; ARGB: 4w;
                            * BITS: stride bytes per row, each of 8 one-bit samples */
    uint32_t n;            /* GLYPHS: the glyph count */
    const uint8_t *comp;   /* BITS, ARGB: an earlier image of blen bytes whose samples are context, or NULL */
};
#define XC_PIX_MIN_DIV 1024     /* an AddGlyphs MODEL code is at least B / this */
#define XC_PIX_MAX_BODY (1u << 20) /* nor is it used on larger bodies: its time per byte */
struct xc_pix *xc_pix_new(void);
size_t xc_pix_size(void); /* what one holds */
void xc_pix_free(struct xc_pix *x);
bool xc_pix_shape_ok(const struct xc_pix_image *im);
/* The longest code a decoder accepts for an image of blen bytes: a bit costs at most 12. */
static inline uint64_t xc_pix_max_code(uint32_t blen) { return 12ull * blen + 64; }
/* Appends the code of im's bytes p, at least min bytes (zero bytes end the code then).
 * The statistics learn from it. */
int xc_pix_encode(struct xc_pix *x, const struct xc_pix_image *im, const uint8_t *p, size_t min, struct buf *out);
int xc_pix_decode(struct xc_pix *x, const struct xc_pix_image *im, uint8_t *dst, struct rd *r);

/* Body models (body.c). The encoders append to out (1: no sub-model of a reply fits); the decoders write exactly blen bytes
 * to dst from the reader, returning 0, -EAGAIN or -EBADMSG. fixed is the message as if
 * without BIG-REQUESTS (its fixed part is complete whenever there is a body). */
int xc_body_encode(struct xc_model *m, const struct xc_body_model *bm, const uint8_t *fixed, const uint8_t *body,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct buf *out);
bool xc_body_fits(const struct xc_body_model *bm, const uint8_t *fixed, uint32_t blen, bool msb);
/* The least code size a MODEL body of blen bytes may have (its size field is checked). */
uint32_t xc_body_min_code(const struct xc_body_model *bm, uint32_t blen);
int xc_body_decode(struct xc_model *m, const struct xc_body_model *bm, const uint8_t *fixed, uint8_t *dst,
                   uint32_t blen, bool msb, const uint8_t *rlast, struct rd *r);

/* NAMED records (extnames.c): a request that is a known extension's name. The index of
 * msg's name in the table, or -1 when msg is not such a request; and the request of a
 * record (byte0, minor, index) appended to out, its length in *len: 0, -EBADMSG or -ENOMEM. */
bool xc_named_op(uint8_t byte0);
int xc_named_index(const uint8_t *msg, size_t len, bool msb);
int xc_named_build(uint8_t byte0, uint8_t minor, uint8_t index, bool msb, struct buf *out, uint32_t *len);

/* Replies' sub-models (the body of a reply longer than XC_BIG_BODY), as xc_body_encode
 * and xc_body_decode but with the font tables of the model: 1 when none fits. */
enum { XC_REPLY_PALETTE = 2, XC_REPLY_NAMES = 3, XC_REPLY_FONTTAB = 4 };
int xc_reply_encode(const struct xc_fonttabs *ft, const uint8_t *body, uint32_t blen, bool msb, struct buf *out);
int xc_reply_decode(const struct xc_fonttabs *ft, uint8_t *dst, uint32_t blen, bool msb, struct rd *r);
/* Font tables (fonttab.c): the QueryFont shape (fixed: bytes before the charinfos). */
bool xc_fonttab_shape(const uint8_t *body, uint32_t blen, bool msb, uint32_t *fixed, uint32_t *nci);
int xc_fonttab_encode(const struct xc_fonttabs *ft, const uint8_t *body, uint32_t blen, bool msb, struct buf *out);
int xc_fonttab_decode(const struct xc_fonttabs *ft, uint8_t *dst, uint32_t blen, bool msb, struct rd *r);
/* Keeps a reply body coded as a font table (sub-model 4). 0 or -ENOMEM. */
int xc_fonttab_remember(struct xc_fonttabs *ft, const uint8_t *body, uint32_t blen, bool msb);
void xc_fonttabs_free(struct xc_fonttabs *ft);
/* Whether a MODEL body's code (its first byte, the sub-model) is a reply's font table. */
static inline bool xc_reply_is_fonttab(const struct xc_shape *s, const uint8_t *code)
{
    return s->body && s->body->kind == XC_BM_REPLY && code[0] == XC_REPLY_FONTTAB;
}

/* 32-bit values: zigzag, as varints. */
static inline uint64_t xc_zz32(uint32_t d) { return (uint32_t)(d << 1) ^ (0u - (d >> 31)); }
static inline uint32_t xc_unzz32(uint32_t v) { return (v >> 1) ^ (0u - (v & 1)); }
static inline unsigned xc_varint_len(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80)
        v >>= 7, n++;
    return n;
}
/* Whether the 32-bit value at byte at of a Trapezoids body is a y (fields 0, 1, 3, 5, 7
 * and 9 of each trapezoid of 40 bytes) rather than an x. */
static inline unsigned xc_trap_axis_y(uint32_t at)
{
    unsigned f = at % 40 / 4;
    return f < 2 || f % 2 == 1;
}

/* Trapezoids sub-model 3 (trapmotion.c): each value against earlier trapezoids, of recent
 * bodies or of this one. The encoder keeps its code in out (from mark) when shorter than
 * what is there and at least min bytes; its guesses live in m->trap_hints. */
#define XC_TRAPS_MOTION 3
#define XC_TRAPS_KEPT 64          /* recent Trapezoids bodies kept */
#define XC_TRAPS_MAX 1024         /* of 40 to this many bytes */
_Static_assert(XC_TRAPS_KEPT * XC_TRAPS_MAX <= XC_STORE_TRAPS, "recent trapezoids beyond what a store counts");
struct xc_traps {
    uint8_t *p[XC_TRAPS_KEPT];    /* each as long as its body (a clock's tick: 120 bytes) */
    uint32_t len[XC_TRAPS_KEPT];
    unsigned head, n;             /* the newest entry's index; entries held */
};
int xc_traps_motion_encode(struct xc_model *m, const uint8_t *body, uint32_t blen, bool msb, struct buf *out,
                           size_t mark, uint32_t min);
int xc_traps_motion_decode(const struct xc_model *m, uint8_t *dst, uint32_t blen, bool msb, struct rd *r);
/* Keeps a Trapezoids body coded MODEL as the newest recent one. 0 or -ENOMEM. */
int xc_traps_keep(struct xc_model *m, const uint8_t *body, uint32_t blen);
void xc_trap_hints_free(struct xc_model *m); /* and the recent bodies */

/* The CJK Unified Ideographs (U+4E00-U+9FFF) of JIS X 0208, GB 2312 and KS X 1001, as
 * bits (cjk_sets.c, generated): what a CJK font table's present glyphs are coded against. */
#define XC_CJK_FIRST 0x4E00u
#define XC_CJK_SETS 3
#define XC_CJK_BYTES ((0x9FFFu - XC_CJK_FIRST + 1) / 8)
extern const uint8_t xc_cjk_sets[XC_CJK_SETS][XC_CJK_BYTES];

/* Font name lists (ListFonts replies' bodies), fontnames.c: 1 when the body is not one. */
int xc_names_encode(const uint8_t *body, uint32_t blen, struct buf *out);
int xc_names_decode(uint8_t *dst, uint32_t blen, struct rd *r);

/* The last element of the reference's body, where a list continues from (a polyline's
 * next segment starts where the previous one ended); for glyph items the first 12 bytes
 * of the body of the class's newest message (slot 0, whichever reference the head used:
 * lines of text follow each other); or NULL. */
static inline const uint8_t *xc_ref_last_elem(const struct xc_model *m, const struct xc_shape *s,
                                              const struct xc_slot *ref)
{
    if (s->body && s->body->kind == XC_BM_ITEMS) {
        const struct xc_slot *r0 = xc_ref(m, s->cls, 0);
        return r0 && r0->len >= s->head + 12 ? r0->p + s->head : NULL;
    }
    if (!ref || !s->body || (s->body->kind != XC_BM_ELEMS && s->body->kind != XC_BM_TRAPS) || ref->len <= s->head)
        return NULL;
    uint32_t rb = ref->len - s->head, el = 2u * s->body->words;
    return rb % el == 0 ? ref->p + ref->len - el : NULL;
}

/* PutImage bodies (putimage.c), and what glyphs (body.c) share of the pixel coder there. */
#define PIX_FRESH 8 /* added to a pixel code's marker: new, though equal to a cached one's (pixcache) */
/* A PutImage body (fixed: its fixed part) coded, or decoded to exactly blen bytes. 0 or -errno. */
int xc_image_encode(struct xc_model *m, const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, struct buf *out);
/* ChangeProperty of 32-bit icon lists (icons.c): whether the model may apply (its fixed
 * part: format 32), the code (1: the body is not an icon list), its decoding (0, -EBADMSG),
 * and the least code size (as a large image's). */
bool xc_icons_fit(const uint8_t *fixed, uint32_t blen, bool msb);
int xc_icons_encode(struct xc_model *m, const uint8_t *body, uint32_t blen, bool msb, struct buf *out);
int xc_icons_decode(struct xc_model *m, uint8_t *dst, uint32_t blen, bool msb, struct rd *r);
static inline uint32_t xc_icons_min_code(uint32_t blen) { return blen / 256; }
int xc_image_decode(struct xc_model *m, const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb, struct rd *r);
/* Rows of at most PALETTE_MAX distinct pixels of psz bytes, as palette indices. 1: not for it. */
int xc_palette_encode(const uint8_t *body, uint32_t rows, uint32_t stride, unsigned psz, struct buf *out);
int xc_palette_decode(uint8_t *dst, uint32_t rows, uint32_t stride, unsigned psz, struct rd *r);
/* The pixel coder's statistics (made on first use); an image through it (from mark, at least
 * min bytes); a new code noted for the next session, or a code of the last taken as its body. */
struct xc_pix *xc_pix_of(struct xc_model *m);
int xc_pix_put(struct xc_model *m, const struct xc_pix_image *im, const uint8_t *p, struct buf *out, size_t mark, uint32_t min);
int xc_pix_note_new_code(struct xc_model *m, const uint8_t *body, uint32_t blen, struct buf *out, size_t mark);
int xc_pix_take_cached(struct xc_model *m, struct rd *r, uint8_t *dst, uint32_t blen);
/* A cached body by its index (XC_PIXCACHE_REF_MIN): the marker and the index; at r, after
 * the marker, the body to dst (xc_pixcache_take). 0, -EAGAIN or -EBADMSG. */
int xc_pix_put_ref(struct buf *out, uint8_t marker, uint32_t index);
int xc_pix_take_ref(struct xc_model *m, struct rd *r, uint8_t *dst, uint32_t blen);

/* A varint length (at most max) and that many bytes: 0, -EAGAIN (more to come) or -EBADMSG. */
static inline int xc_rd_sized(struct rd *r, uint64_t max, const uint8_t **p, uint64_t *n)
{
    int rc = rd_varint(r, n);
    if (rc == 0 && *n > max)
        rc = -EBADMSG;
    return rc ? rc : rd_bytes(r, p, *n);
}

#endif
