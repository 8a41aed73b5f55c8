/* observer.h -- the display side's own connection to the X server. When it opens, it asks
 * what clients ask at start (extensions, atoms, handshakes, root properties, the keyboard
 * mappings) and sends the answers as session-wide FACT frames (predict.h); it then watches
 * the root's properties and the keyboard for change. It watches the windows that clients
 * create (visibility, size, mapped children) so the app side can answer a CopyArea's
 * NoExpose without crossing the link (expose.h), and it confirms when a client's window
 * changes have reached the server. It never touches the clients' own connections: what it
 * selects is its own, and X lets many clients select these. */
#ifndef TINCAN_OBSERVER_H
#define TINCAN_OBSERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "link/frame.h"
#include "x11/xstream.h"

struct session;
struct channel;
struct observer;

/* Others that use the observer's connection (learnt.h, fontset.h, statewatch.h, spare.h)
 * are told of what happens on it through these, and the observer knows none of them by
 * name. Any hook may be NULL; listeners are called in the order given. */
struct observer_listener {
    void *ctx;
    /* The connection is set up: the server's setup reply, size bytes. */
    void (*on_setup)(void *ctx, struct observer *o, const uint8_t *reply, size_t size);
    /* The start probes are sent: what a listener asks at start goes behind them. */
    void (*on_probes_sent)(void *ctx, struct observer *o);
    /* An extension's handshakes are probed (key: the requests and replies, key_len bytes);
     * its major opcode and first event; screen 0's root. */
    void (*on_extension)(void *ctx, struct observer *o, const char *ext, const uint8_t *key, size_t key_len,
                         uint8_t major, uint8_t first_event, uint32_t root);
    /* An event on the connection, size bytes. */
    void (*on_event)(void *ctx, struct observer *o, const uint8_t *ev, size_t size);
    /* The first probes are answered: the clients' setups held for them go on. */
    void (*on_probes_done)(void *ctx, struct observer *o);
    /* observer_check_root's answer: the root, its all-event-masks, its size (0 0: unknown). */
    void (*on_root)(void *ctx, uint32_t root, uint32_t masks, uint16_t width, uint16_t height);
    /* The connection is lost or unreadable: nothing that waits on it will be answered. */
    void (*on_broken)(void *ctx, struct observer *o);
    /* A client's setup request held for the first probes (observer_hold_setup) may go. */
    void (*on_setup_released)(void *ctx, struct channel *ch, const struct frame_open *open);
    /* What a client's requests waited for here (a window's watch) is done, or never will be. */
    void (*on_channel_unblocked)(void *ctx, struct channel *ch);
};
#define OBSERVER_MAX_LISTENERS 8

/* Connects (blocking, bounded by a timeout), starts its probes and watches for events,
 * telling the n listeners (copied) of what happens. 0 or -errno. */
int observer_start(struct session *s, const struct observer_listener *listeners, size_t n, struct observer **out);
void observer_free(struct observer *o);

/* While the first probes are unanswered: keeps a new client's setup request back (the
 * facts must reach the app side before its setup reply) and returns true; the observer
 * calls channel_send_setup when they are answered. */
bool observer_hold_setup(struct observer *o, uint32_t channel_id, const struct frame_open *open);
/* Whether the first probes are still unanswered (their facts must precede any setup reply). */
bool observer_probing(const struct observer *o);
/* Reads screen 0's root event masks and size; the answer goes to the listeners' on_root.
 * False if it cannot ask. */
bool observer_check_root(struct observer *o);
/* A request of ch on its way to the server (body: after the request header). */
void observer_on_request(struct observer *o, struct channel *ch, const struct msg_class *cls, const uint8_t *body,
                         uint32_t body_len, uint32_t seq, bool msb);
/* Whether ch's next request must wait for a watch to be in place first (a map). */
bool observer_must_hold(const struct observer *o, const struct channel *ch, uint8_t major);
/* A request on the observer's connection whose answer nobody needs (body: after its header,
 * in the connection's byte order, LSB). */
void observer_send_quiet(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len);
/* Screen 0's root, the connection's resource-id base, the screen's white and black pixels
 * and its height; false when the observer cannot be used. */
bool observer_screen(const struct observer *o, uint32_t *root, uint32_t *id_base, uint32_t *white, uint32_t *black,
                     uint16_t *height);
/* ch holds the server grabbed, so its next request goes on although observer_must_hold says
 * it must wait (the watch cannot be placed until the grab ends): ch's windows whose watch is
 * not in place are no longer answered about at the app side, nor ever called wholly visible. */
void observer_pass_unwatched(struct observer *o, struct channel *ch, uint8_t major);
/* Everything ch had for the server is written: watches of its new windows may start. */
void observer_on_x_drained(struct observer *o, struct channel *ch);
/* The server has reported progress on ch (its seq_done moved). */
void observer_on_progress(struct observer *o, struct channel *ch);
/* A new channel: tells the app side what it watches of the client's own windows (ownwin.h). */
void observer_on_channel_open(struct observer *o, struct channel *ch);
/* The app side has read `acked` link bytes (its ACK). */
void observer_on_ack(struct observer *o, uint64_t acked);
/* The app side closed a channel: its client went away, perhaps before reading every reply. */
void observer_on_peer_close(struct observer *o);
/* ch is going away. */
void observer_forget_channel(struct observer *o, uint32_t channel_id);

/* Sends a session-wide FACT payload (channel 0), learning it here too; clears payload. */
void observer_send_fact(struct observer *o, struct buf *payload);

/* Questions of others on the observer's connection (learnt.h). fn gets each reply (a
 * ListFontsWithInfo's several) or the error, and may fill fact: it is sent on channel 0. */
typedef void (*observer_answer_fn)(void *ctx, uint32_t tag, const uint8_t *msg, uint32_t size, bool error,
                                   struct buf *fact);
/* A font id of the observer's own for questions of others (opened and closed at once). */
uint32_t observer_font_id(const struct observer *o);
/* Sends a whole request (LSB, at most 4 KiB); fn NULL: one without a reply (its error is
 * ignored). Asked during the start probes, clients' setup requests wait for its answer too. 0 or -errno. */
int observer_ask(struct observer *o, const uint8_t *req, uint32_t size, observer_answer_fn fn, void *ctx, uint32_t tag);

#endif
