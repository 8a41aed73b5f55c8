/* fontset.h -- a font set in one round trip (display side). Xlib's XCreateFontSet asks,
 * one after another, ListFonts of one base pattern for each charset of the locale, then
 * ListFontsWithInfo of each name found: in a UTF-8 locale 16 + 16 round trips, for one
 * font set, before the program can map its first window. When a client asks the second
 * charset of one base pattern, the display side asks the server the rest (the charsets of
 * libX11's UTF-8 locale, which hundreds of locales share) and each found name's info, on
 * the observer's connection, and sends the answers as FACT_EXCHANGE facts; it holds that
 * client's request until they are sent, so its later questions find their answers at the
 * app side. A base pattern is asked once per session; the first charset alone does not
 * start it, so a program in a single-charset locale (LANG=C) costs nothing. */
#ifndef TINCAN_FONTSET_H
#define TINCAN_FONTSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FONTSET_MAX_BASES 16      /* base patterns asked about per session */
#define FONTSET_MAX_HELD 64       /* channels held at once; more are not held */
#define FONTSET_MAX_HINTED 128    /* font names of hints asked per session */
#define FONTSET_MAX_FONT_REPLY (16u * 1024)  /* a hinted font's QueryFont reply told: fonts of one-byte characters */
#define FONTSET_HINT_BUDGET (256u * 1024)    /* ... and all of them in a session */

struct fontset;
struct session;
struct channel;
struct observer;
struct learnt;
struct frame_hint;

/* resume: lets a channel whose QueryFont waited for a prefetch (fontset_hold) go on. */
int fontset_new(struct fontset **out, struct session *s, void (*resume)(struct channel *ch));
void fontset_free(struct fontset *f);

/* A client's whole request (req[0..size)), about to be written to the server: true if it
 * must wait for the prefetch it belongs to (the channel is resumed when that ends). */
bool fontset_hold(struct fontset *f, struct observer *o, struct channel *ch, const uint8_t *req, uint32_t size,
                  bool msb);
/* A new client's hint (hint.h): asks the server about the fonts it names (those not known
 * yet), and sends the answers as FACT_FONT; a client's QueryFont waits for them meanwhile. */
void fontset_ask_fonts(struct fontset *f, struct observer *o, const struct frame_hint *h);
/* The observer can no longer answer: whatever waits goes on without the answers. */
void fontset_give_up(struct fontset *f);
/* How the observer tells it that it can no longer answer (observer.h). */
struct observer_listener;
void fontset_listen(struct fontset *f, struct observer_listener *out);

/* The pattern's charset (its last two XLFD fields) as an index of the known charsets, and
 * the length of what comes before it ("-*-*-*-R-*-*-*-120-*-*-*-*"); -1 if it has no known
 * charset. Pure, for tests. */
int fontset_split(const uint8_t *pattern, size_t n, size_t *base_len);
size_t fontset_n_charsets(void);
const char *fontset_charset(size_t i);

#endif
