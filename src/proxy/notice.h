/* notice.h -- display side: a small window on the real display while the link is lost
 * ("tincan: link lost 12 s ago, reconnecting"), made on the observer's connection and gone
 * when the link is back. */
#ifndef TINCAN_NOTICE_H
#define TINCAN_NOTICE_H

struct session;

/* Shows text (ASCII, at most 120 bytes) in the notice window, making it first. */
void notice_show(struct session *s, const char *text);
/* Takes the window away, if it is there. */
void notice_hide(struct session *s);

#endif
