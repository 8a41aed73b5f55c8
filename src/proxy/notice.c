/* notice.c -- the outage notice on the real display (notice.h): an override-redirect window
 * at the screen's bottom left, above the others, with one line of text in the server's
 * default font. Its contents are kept by the server (backing store) and redrawn each second.
 * Must not touch the clients' windows. */
#include "proxy/notice.h"

#include <string.h>

#include "common/buf.h"
#include "proxy/session_private.h"
#include "xproto_tables.h"

#define NOTICE_WINDOW 0x200u   /* resource ids above the observer's base: window, GC, font */
#define NOTICE_GC 0x201u
#define NOTICE_FONT 0x202u
#define NOTICE_MAX_TEXT 120u
#define NOTICE_CHAR_W 6        /* "fixed" is 6x13 */
#define NOTICE_H 20

static void put16(uint8_t *p, uint16_t v) { st16(p, v, false); }
static void put32(uint8_t *p, uint32_t v) { st32(p, v, false); }

static void make(struct session *s, struct observer *o, uint32_t root, uint32_t base, uint32_t white, uint32_t black,
                 uint16_t height)
{
    uint8_t b[44] = { 0 };
    put32(b, base + NOTICE_WINDOW);
    put32(b + 4, root);
    put16(b + 8, 8);          /* x */
    put16(b + 10, (uint16_t)(height > NOTICE_H + 10 ? height - NOTICE_H - 10 : 0)); /* y */
    put16(b + 12, NOTICE_MAX_TEXT * NOTICE_CHAR_W / 2);
    put16(b + 14, NOTICE_H);
    put16(b + 16, 1);         /* border */
    put16(b + 18, 1);         /* InputOutput */
    put32(b + 20, 0);         /* CopyFromParent */
    /* back pixel, border pixel, backing store, override redirect */
    put32(b + 24, 0x2 | 0x8 | 0x40 | 0x200);
    put32(b + 28, black);
    put32(b + 32, white);
    put32(b + 36, 2);         /* Always */
    put32(b + 40, 1);
    observer_send_quiet(o, XP_OP_CREATE_WINDOW, 0, b, 44);
    uint8_t f[16] = { 0 };
    put32(f, base + NOTICE_FONT);
    put16(f + 4, 5);
    memcpy(f + 8, "fixed", 5);
    observer_send_quiet(o, XP_OP_OPEN_FONT, 0, f, 16);
    uint8_t g[24];
    put32(g, base + NOTICE_GC);
    put32(g + 4, base + NOTICE_WINDOW);
    put32(g + 8, 0x4 | 0x8 | 0x4000); /* foreground, background, font */
    put32(g + 12, white);
    put32(g + 16, black);
    put32(g + 20, base + NOTICE_FONT);
    observer_send_quiet(o, XP_OP_CREATE_GC, 0, g, 24);
    uint8_t w[4];
    put32(w, base + NOTICE_WINDOW);
    observer_send_quiet(o, XP_OP_MAP_WINDOW, 0, w, 4);
    s->notice_shown = true;
}

void notice_show(struct session *s, const char *text)
{
    struct observer *o = s->observer;
    uint32_t root, base, white, black;
    uint16_t height;
    if (!o || !observer_screen(o, &root, &base, &white, &black, &height))
        return;
    if (!s->notice_shown)
        make(s, o, root, base, white, black, height);
    size_t n = strlen(text) > NOTICE_MAX_TEXT ? NOTICE_MAX_TEXT : strlen(text);
    uint8_t c[16] = { 0 };    /* ClearArea of the whole window, then the line */
    put32(c, base + NOTICE_WINDOW);
    observer_send_quiet(o, XP_OP_CLEAR_AREA, 0, c, 12);
    uint8_t stack[12] = { 0 }; /* ConfigureWindow: stack mode Above, over what came since */
    put32(stack, base + NOTICE_WINDOW);
    put16(stack + 4, 0x40);
    observer_send_quiet(o, XP_OP_CONFIGURE_WINDOW, 0, stack, 12);
    uint8_t t[12 + NOTICE_MAX_TEXT] = { 0 };
    put32(t, base + NOTICE_WINDOW);
    put32(t + 4, base + NOTICE_GC);
    put16(t + 8, 6);          /* x */
    put16(t + 10, 14);        /* baseline */
    memcpy(t + 12, text, n);
    observer_send_quiet(o, XP_OP_IMAGE_TEXT8, (uint8_t)n, t, (uint16_t)(12 + n));
}

void notice_hide(struct session *s)
{
    uint32_t root, base, white, black;
    uint16_t height;
    if (!s->notice_shown || !s->observer || !observer_screen(s->observer, &root, &base, &white, &black, &height))
        return;
    uint8_t b[4];
    put32(b, base + NOTICE_GC);
    observer_send_quiet(s->observer, XP_OP_FREE_GC, 0, b, 4);
    put32(b, base + NOTICE_FONT);
    observer_send_quiet(s->observer, XP_OP_CLOSE_FONT, 0, b, 4);
    put32(b, base + NOTICE_WINDOW);
    observer_send_quiet(s->observer, XP_OP_DESTROY_WINDOW, 0, b, 4);
    s->notice_shown = false;
}
