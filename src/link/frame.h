/* frame.h -- the frames that carry every X client over the one link (docs/PROTOCOL.md).
 * A frame is: type (1 byte), channel (varint), payload length (varint), payload.
 * Encoding appends to a buf; decoding never consumes a partial frame. */
#ifndef TINCAN_FRAME_H
#define TINCAN_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

enum frame_type {
    FRAME_AUTH_NONCE = 0x01,  /* channel 0; 32 random bytes */
    FRAME_AUTH_PROOF = 0x02,  /* channel 0; HMAC-SHA256 proof of the shared secret */
    FRAME_DICT_OFFER = 0x03,  /* channel 0, in the handshake; the cached dictionaries' hashes (dict.h) */
    FRAME_SESSION = 0x04,     /* channel 0, in the handshake: which session this link is for (handshake.h) */
    FRAME_RESUME = 0x05,      /* channel 0, in a resuming handshake: varint stream bytes received */
    FRAME_OPEN = 0x10,        /* app -> display: a new X client; payload: byte order, protocol version */
    FRAME_DATA = 0x11,        /* X protocol bytes of one channel */
    FRAME_CLOSE = 0x12,       /* the sender has closed the channel; payload: a reason for the log */
    FRAME_WINDOW = 0x13,      /* flow-control credit; payload: varint bytes */
    FRAME_PREDICTED = 0x14,   /* app -> display: request (varint sequence number) answered at the app side */
    FRAME_FACT = 0x15,        /* display -> app: what the app side needs to answer locally (below) */
    FRAME_ACK = 0x16,         /* channel 0; varint: link bytes read from the peer so far */
    FRAME_SPARE = 0x17,       /* channel 0, display -> app: a connection set up ahead (spare.h) */
    FRAME_HINT = 0x18,        /* app -> display: what the app side read of a new client on its machine (hint.h) */
    FRAME_PING = 0x19,        /* channel 0, no payload: the link has been quiet; the peer answers with ACK */
    FRAME_GOODBYE = 0x20,     /* channel 0; the session ends cleanly; payload: varint stream bytes received */
};

/* FRAME_FACT payload: a kind byte, then its fields. Every kind is here, one table
 * (docs/PROTOCOL.md 3.1 lists them with their sections); an unknown kind is a corrupt frame. */
enum fact_kind {
    /* On a client's channel: */
    FACT_WINDOW = 1,     /* varint window, u8 clean, varint width, varint height, varint as_of (expose.h) */
    FACT_OWN_PROPERTY = 10, /* varint window, varint atom (0: every property): changed by another client (ownwin.h) */
    FACT_OWN_WINDOW = 11,   /* varint window, u8 what (OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES): ditto */
    FACT_OWN_WATCH = 12,    /* varint observer mask (0: not watching), varint root, u8 redirect */
    /* Channel 0, session-wide facts from the display side's own connection: */
    FACT_EXTENSION = 2,  /* u8 name length, name, 24 bytes: a QueryExtension reply's bytes 8..31 */
    FACT_ATOMS = 3,      /* repeated: varint atom, varint name length, name */
    FACT_EXCHANGE = 4,   /* u8 msb, varint key length, key (requests' bytes), varint length, replies */
    FACT_PROPERTY = 5,   /* varint root, varint property, u8 state; value: varint type, u8 format, varint length, data */
    FACT_KEYBOARD = 6,   /* u8 known; known: u8 min, max keycode, keysyms per keycode, u32le keysyms,
                          * u8 keycodes per modifier, 8 x that many keycodes */
    FACT_ATOM_CENSUS = 7, /* varint next: every atom below it has been told (docs/PROTOCOL.md 3.2) */
    FACT_COLORS = 8,     /* a TrueColor default colormap checked against the server, and colour names */
    FACT_FONTS = 9,      /* repeated: u8 name length, name: fonts that open */
    FACT_FONT = 13,      /* u8 msb, varint name length, font name, varint length, QueryFont reply (learnt.h) */
    FACT_ATOM_HASHES = 14, /* varint first, then repeated u16le: the name hashes of atoms first, first+1, ... */
    FACT_STATE = 15,     /* u8 name length, an extension's name, u8 watched: its state queries (docs/PROTOCOL.md 3.2) */
    FACT_COLOR_TABLE = 16, /* u64le table hash, varint size, then ascending varint entries not answered */
    FACT_SELECTION = 17, /* varint selection, varint owner (0: None): a watched selection's owner now */
};

#define FRAME_MAX_PAYLOAD (1u << 20)  /* 1 MiB: senders cut larger data into pieces */
#define FRAME_MAX_HEADER 11           /* type + two varints of at most 5 bytes each */
/* Each side may send this many DATA bytes on a channel beyond the credit the receiver
 * has returned in WINDOW frames. Fixed by the protocol so both sides agree. */
#define FRAME_CHANNEL_WINDOW (256u * 1024)

struct frame {
    uint8_t type;
    uint32_t channel;
    const uint8_t *payload;  /* points into the decoded bytes */
    uint32_t len;
};

/* Returns the size of the complete frame at p, -EAGAIN if incomplete, -EBADMSG if corrupt. */
long frame_decode(const uint8_t *p, size_t n, struct frame *f);
MUST_USE int frame_encode(struct buf *out, uint8_t type, uint32_t channel, const void *payload, size_t len);
/* Only the header, for a payload the caller appends itself. */
MUST_USE int frame_encode_header(struct buf *out, uint8_t type, uint32_t channel, size_t len);
const char *frame_type_name(uint8_t type);

/* FRAME_OPEN's payload. */
struct frame_open {
    uint8_t msb;
    uint16_t major, minor;
    uint32_t spare;          /* the spare connection the client took, or 0 */
    uint8_t refs;            /* the channel's reference store, in 64 KiB units (xcodec.h) */
};
#define FRAME_OPEN_SIZE 7    /* with no spare */
#define FRAME_OPEN_REFS_MAX 64
int frame_open_parse(const struct frame *f, struct frame_open *o);
MUST_USE int frame_open_encode(struct buf *out, uint32_t channel, const struct frame_open *o);

/* FRAME_HINT's payload: flags, then the font names of the client's app-defaults. */
#define HINT_FONT_SET 0x1    /* the client's locale makes font sets of libX11's UTF-8 charsets */
#define HINT_MAX_FONTS 8
struct frame_hint {
    uint8_t flags;
    uint8_t n_fonts;
    uint8_t font_len[HINT_MAX_FONTS];       /* 1..255 */
    const uint8_t *font[HINT_MAX_FONTS];    /* printable ASCII, pointing into the payload */
};
/* Any flag but HINT_FONT_SET, an empty or unprintable name, or more than HINT_MAX_FONTS
 * names: -EBADMSG. */
int frame_hint_parse(const struct frame *f, struct frame_hint *h);
MUST_USE int frame_hint_encode(struct buf *out, uint32_t channel, const struct frame_hint *h);

/* FRAME_FACT's payload, kind FACT_WINDOW (the session-wide kinds are parsed by predict.c). */
struct frame_fact_window {
    uint32_t window, as_of;
    uint16_t width, height;
    bool clean;
};
int frame_fact_window_parse(const struct frame *f, struct frame_fact_window *w);
MUST_USE int frame_fact_window_encode(struct buf *out, uint32_t channel, const struct frame_fact_window *w);

#endif
