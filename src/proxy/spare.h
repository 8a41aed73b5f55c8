/* spare.h -- a connection to the X server set up before any client needs it.
 *
 * Display side: one upstream connection is kept open with its setup reply read; the reply
 * crosses the link ahead (FRAME_SPARE) and the connection waits. App side: a client whose
 * setup request the spare can serve (same byte order, protocol 11.0, the display's cookie)
 * gets that reply at once, and its OPEN names the spare, which the display side hands to the
 * new channel. The client's resource-id base is the real one, because it is the spare's.
 * A new client therefore costs no link round trip to connect (docs/PROTOCOL.md 3.5). */
#ifndef TINCAN_SPARE_H
#define TINCAN_SPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"

struct session;
struct frame;

/* Display side: opens a spare if there is none (after the link is up, and again after each
 * claim). Failure is logged; clients then connect the ordinary way. */
void spare_open(struct session *s);
/* Display side: sends a ready spare's setup reply once nothing must precede it (the
 * observer's first facts). Called when the reply is read and when the probes finish. */
void spare_offer(struct session *s);
/* Display side: takes spare `id` for a new channel: its socket, and in `setup` the server's
 * setup reply the client already has. -ENOENT if that spare is gone (closed meanwhile). */
int spare_claim(struct session *s, uint32_t id, int *fd, struct buf *setup);
void spare_free(struct session *s);
/* Display side, before each sleep: a spare on offer is checked against the server about
 * once a second (the root's size and event masks are in its setup reply and may change). */
void spare_tick(struct session *s);
/* The observer's reading of screen 0's root: a spare whose setup reply says otherwise is
 * replaced. */
void spare_check_root(struct session *s, uint32_t root, uint32_t masks, uint16_t width, uint16_t height);
/* How the observer tells it of those (observer.h): its first probes answered (the spare may
 * be offered), and the root read (spare_check_root). */
struct observer_listener;
void spare_listen(struct session *s, struct observer_listener *out);

/* App side: whether new clients should wait for the first SPARE frame (briefly, after the
 * link comes up: it follows the display side's first facts, and a client that waits for it
 * connects and starts without crossing the link). */
bool spare_awaited(const struct session *s);
/* App side, once the link is up: how long new clients may wait for the first spare. */
void spare_expect(struct session *s);

/* App side: FRAME_SPARE received. 0 or -EBADMSG. */
int spare_on_frame(struct session *s, const struct frame *f);
/* App side: whether a client's setup request (byte order, version) can take the spare. */
bool spare_fits(const struct session *s, bool msb, uint16_t major, uint16_t minor);
/* App side: takes the spare: its id, and its setup reply appended to `setup`. */
uint32_t spare_take(struct session *s, struct buf *setup);

/* FRAME_SPARE's payload: varint id, u8 msb, the setup reply (empty: withdrawn). */
int spare_frame_encode(struct buf *out, uint32_t id, bool msb, const uint8_t *setup, size_t len);
int spare_frame_parse(const struct frame *f, uint32_t *id, bool *msb, const uint8_t **setup, size_t *len);
/* ... or, when it is shorter, as the changes from base, the setup reply of the last SPARE
 * (docs/PROTOCOL.md 3.5: u8 2 + msb, then runs of varint skip, varint length, bytes). */
int spare_frame_encode_delta(struct buf *out, uint32_t id, bool msb, const uint8_t *base, size_t base_len,
                             const uint8_t *setup, size_t len);
/* Either form: the id, byte order and whole setup reply (appended to setup; empty:
 * withdrawn). 0 or -EBADMSG (a delta with no base, or not fitting it), -ENOMEM. */
int spare_frame_read(const struct frame *f, const uint8_t *base, size_t base_len, uint32_t *id, bool *msb,
                     struct buf *setup);

#endif
