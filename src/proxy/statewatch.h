/* statewatch.h -- the display side's watch of state that toolkits ask about at every start
 * (GTK 3 and Qt: RANDR's screens, outputs, CRTCs and monitors; XInput 2's devices; GTK 3 and
 * Xlib: XKEYBOARD's state, controls, map and names, each part forgotten by its own event). Once
 * the observer's own handshakes of RANDR and XInputExtension are answered, it selects
 * their change events on the root and asks those queries itself; the answers go to the app
 * side as EXCHANGE facts keyed by the observer's handshakes and the query, after a STATE
 * fact that says the extension is watched (docs/PROTOCOL.md 3.2). A change event makes it
 * send STATE again (both sides forget what they knew) and ask again. Replies and events come
 * in order on the observer's one connection, so what it tells is never older than a change
 * it has not told yet.
 * Selections' owners likewise: once a client asks the owner of a selection, the observer
 * selects XFIXES' selection events for it, asks it, and tells each owner as a SELECTION
 * fact (emacs asks the owner of _XSETTINGS_S0 six times at start); the four toolkits ask at
 * start (GTK's settings and compositing manager, the clipboard and its manager) from the
 * session's start, when their atoms exist. */
#ifndef TINCAN_STATEWATCH_H
#define TINCAN_STATEWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct statewatch;
struct observer;

int statewatch_new(struct statewatch **out);
void statewatch_free(struct statewatch *w);

/* The observer's handshakes of ext ("RANDR", "XInputExtension") are answered: key holds
 * their requests (LSB), major and first_event the extension's numbers, root screen 0's root. */
void statewatch_start(struct statewatch *w, struct observer *o, const char *ext, const uint8_t *key, size_t key_len,
                      uint8_t major, uint8_t first_event, uint32_t root);
/* A client's request on its way to the server (GetSelectionOwner starts a watch). */
struct msg_class;
void statewatch_on_request(struct statewatch *w, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                           bool msb);
/* An event on the observer's connection (32 bytes, or a GenericEvent's whole length). */
void statewatch_on_event(struct statewatch *w, struct observer *o, const uint8_t *ev, size_t size);
/* How the observer tells it of those (observer.h). */
struct observer_listener;
void statewatch_listen(struct statewatch *w, struct observer_listener *out);

#endif
