/* notice.c -- the outage notice on the real display (notice.h): an override-redirect window
 * at the screen's bottom left, above the others, with one line of text in the server's
 * default font. Its contents are kept by the server (backing store) and redrawn each second.
 * Must not touch the clients' windows. */
#include "proxy/notice.h"

#include <string.h>

#include "common/buf.h"
#include "proxy/session_private.h"
#include "xproto_tables.h"
#include "xproto_wire.h"

#define NOTICE_WINDOW 0x200u   /* resource ids above the observer's base: window, GC, font */
#define NOTICE_GC 0x201u
#define NOTICE_FONT 0x202u
#define NOTICE_MAX_TEXT 120u
#define NOTICE_CHAR_W 6        /* "fixed" is 6x13 */
#define NOTICE_H 20

static void make(struct session *s, struct observer *o, uint32_t root, uint32_t base, uint32_t white, uint32_t black,
                 uint16_t height)
{
    /* back pixel, border pixel, backing store, override redirect: their values in that order */
    const uint32_t mask = XP_CW_BACK_PIXEL | XP_CW_BORDER_PIXEL | XP_CW_BACKING_STORE | XP_CW_OVERRIDE_REDIRECT;
    const uint32_t values[] = { black, white, XP_BACKING_STORE_ALWAYS, 1 };
    uint8_t b[XP_CREATE_WINDOW_BODY_SIZE + sizeof values];
    xp_create_window_body_put(b, sizeof b, false, &(struct xp_create_window_body){
        .wid = base + NOTICE_WINDOW, .parent = root, .x = 8,
        .y = (int16_t)(height > NOTICE_H + 10 ? height - NOTICE_H - 10 : 0),
        .width = NOTICE_MAX_TEXT * NOTICE_CHAR_W / 2, .height = NOTICE_H, .border_width = 1,
        .class = XP_WINDOW_CLASS_INPUT_OUTPUT, .visual = 0 /* CopyFromParent */, .value_mask = mask });
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        xp_card32_put(b + XP_CREATE_WINDOW_BODY_SIZE, sizeof values, i, values[i], false);
    observer_send_quiet(o, XP_OP_CREATE_WINDOW, 0, b, sizeof b);
    uint8_t f[XP_OPEN_FONT_BODY_SIZE + 8] = { 0 };
    xp_open_font_body_put(f, sizeof f, false, &(struct xp_open_font_body){ .fid = base + NOTICE_FONT, .name_len = 5 });
    memcpy(f + XP_OPEN_FONT_BODY_SIZE, "fixed", 5);
    observer_send_quiet(o, XP_OP_OPEN_FONT, 0, f, sizeof f);
    const uint32_t gc_values[] = { white, black, base + NOTICE_FONT }; /* foreground, background, font */
    uint8_t g[XP_CREATE_GC_BODY_SIZE + sizeof gc_values];
    xp_create_gc_body_put(g, sizeof g, false, &(struct xp_create_gc_body){
        .cid = base + NOTICE_GC, .drawable = base + NOTICE_WINDOW, .value_mask = XP_GC_FOREGROUND | XP_GC_BACKGROUND | XP_GC_FONT });
    for (size_t i = 0; i < sizeof gc_values / sizeof *gc_values; i++)
        xp_card32_put(g + XP_CREATE_GC_BODY_SIZE, sizeof gc_values, i, gc_values[i], false);
    observer_send_quiet(o, XP_OP_CREATE_GC, 0, g, sizeof g);
    uint8_t w[XP_MAP_WINDOW_BODY_SIZE];
    xp_map_window_body_put(w, sizeof w, false, &(struct xp_map_window_body){ .window = base + NOTICE_WINDOW });
    observer_send_quiet(o, XP_OP_MAP_WINDOW, 0, w, sizeof w);
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
    uint8_t c[XP_CLEAR_AREA_BODY_SIZE]; /* ClearArea of the whole window (no exposures), then the line */
    xp_clear_area_body_put(c, sizeof c, false, &(struct xp_clear_area_body){ .window = base + NOTICE_WINDOW });
    observer_send_quiet(o, XP_OP_CLEAR_AREA, 0, c, sizeof c);
    uint8_t stack[XP_CONFIGURE_WINDOW_BODY_SIZE + 4] = { 0 }; /* ConfigureWindow: stack mode Above, over what came since */
    xp_configure_window_body_put(stack, sizeof stack, false, &(struct xp_configure_window_body){
        .window = base + NOTICE_WINDOW, .value_mask = XP_CONFIG_WINDOW_STACK_MODE });
    xp_card32_put(stack + XP_CONFIGURE_WINDOW_BODY_SIZE, 4, 0, XP_STACK_MODE_ABOVE, false);
    observer_send_quiet(o, XP_OP_CONFIGURE_WINDOW, 0, stack, sizeof stack);
    uint8_t t[XP_IMAGE_TEXT8_REQ_SIZE + NOTICE_MAX_TEXT] = { 0 }; /* the whole request; its body is sent */
    xp_image_text8_req_put(t, sizeof t, false, &(struct xp_image_text8_req){
        .string_len = (uint8_t)n, .drawable = base + NOTICE_WINDOW, .gc = base + NOTICE_GC, .x = 6, .y = 14 /* baseline */ });
    memcpy(t + XP_IMAGE_TEXT8_REQ_SIZE, text, n);
    observer_send_quiet(o, XP_OP_IMAGE_TEXT8, (uint8_t)n, t + XP_REQUEST_HEADER_SIZE,
                        (uint16_t)(XP_IMAGE_TEXT8_REQ_SIZE - XP_REQUEST_HEADER_SIZE + n));
}

void notice_hide(struct session *s)
{
    uint32_t root, base, white, black;
    uint16_t height;
    if (!s->notice_shown || !s->observer || !observer_screen(s->observer, &root, &base, &white, &black, &height))
        return;
    uint8_t b[XP_FREE_GC_BODY_SIZE];
    xp_free_gc_body_put(b, sizeof b, false, &(struct xp_free_gc_body){ .gc = base + NOTICE_GC });
    observer_send_quiet(s->observer, XP_OP_FREE_GC, 0, b, sizeof b);
    uint8_t f[XP_CLOSE_FONT_BODY_SIZE];
    xp_close_font_body_put(f, sizeof f, false, &(struct xp_close_font_body){ .font = base + NOTICE_FONT });
    observer_send_quiet(s->observer, XP_OP_CLOSE_FONT, 0, f, sizeof f);
    uint8_t w[XP_DESTROY_WINDOW_BODY_SIZE];
    xp_destroy_window_body_put(w, sizeof w, false, &(struct xp_destroy_window_body){ .window = base + NOTICE_WINDOW });
    observer_send_quiet(s->observer, XP_OP_DESTROY_WINDOW, 0, w, sizeof w);
    s->notice_shown = false;
}
