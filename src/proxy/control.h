/* control.h -- a running half's control socket, which `tincan info` asks for the live state
 * of the session: one unix socket per process in the user's runtime directory (the
 * directory 0700, the socket 0600), and a peer of another uid is refused (SO_PEERCRED).
 * Requests are rare (a person or a script asking); answers are a few KiB, sent without blocking. */
#ifndef TINCAN_CONTROL_H
#define TINCAN_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "loop/loop.h"
#include "proxy/session.h"

#define CONTROL_MAX_PEERS 4      /* askers served at once; a fifth displaces the oldest */
#define CONTROL_MAX_REQUEST 16u  /* bytes of a request line: "json\n" or "text\n" */
#define CONTROL_MAX_ANSWER (8u << 20) /* what `tincan info` reads of an answer at most */

struct control;

/* Listens on DIR/SIDE-PID.sock (control_dir). *session is read at each request: it may
 * be NULL (a listener waiting for its peer) or change. 0 or -errno; without a control
 * socket the session runs as before. */
int control_open(struct control **out, struct loop *loop, const char *side, struct session *const *session);
/* Closes the socket and removes its file. NULL is fine. */
void control_free(struct control *c);
/* The directory of the control sockets into buf: $XDG_RUNTIME_DIR/tincan, else
 * /tmp/tincan-UID. With create, makes it (0700). -EPERM unless it is a directory of this
 * user that nobody else may enter (another user could have made /tmp/tincan-UID first). */
int control_dir(char *buf, size_t cap, bool create);

#endif
