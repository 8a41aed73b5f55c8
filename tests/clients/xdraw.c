/* xdraw.c -- a deterministic drawing client for the screen-comparison tests: the drawing
 * requests of an x11perf mix (rectangles, segments, circles, text, tiled fills, window to
 * window copies, small images) plus a PutImage large enough to need BIG-REQUESTS and a
 * 4 MiB one, a GetImage of 1.2 MB whose reply crosses back, all left on screen. The big
 * messages are larger than tincan's per-channel window. Prints "drawn" after a round
 * trip that follows the last request, then waits until killed. Assumes a 24-bit TrueColor
 * default visual (Xvfb -screen 0 WxHx24). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xcb/xcb.h>

#define W 640
#define H 480

static uint32_t color(unsigned i) { return (i * 0x3b1f53u) & 0xffffff; }

int main(void)
{
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xdraw: cannot open the display\n");
        return 1;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    if (scr->root_depth != 24) {
        fprintf(stderr, "xdraw: needs a 24-bit screen\n");
        return 1;
    }
    xcb_window_t w = xcb_generate_id(c);
    uint32_t wv[] = { scr->white_pixel, 1, XCB_EVENT_MASK_EXPOSURE };
    xcb_create_window(c, XCB_COPY_FROM_PARENT, w, scr->root, 20, 20, W, H, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, wv);
    const char *title = "xdraw";
    xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8, strlen(title), title);
    xcb_map_window(c, w);

    xcb_gcontext_t gc = xcb_generate_id(c);
    uint32_t gv[] = { 0, 0 };
    xcb_create_gc(c, gc, w, XCB_GC_FOREGROUND | XCB_GC_GRAPHICS_EXPOSURES, gv);

    /* A 1024x1024 image (4 MiB, BIG-REQUESTS), clipped to the window, under everything else. */
    bool big_ok = xcb_get_maximum_request_length(c) >= (1024 * 1024 + 8) ;
    if (big_ok) {
        uint32_t *huge = malloc(1024 * 1024 * 4);
        for (unsigned k = 0; k < 1024 * 1024; k++)
            huge[k] = ((k % 1024) * 0x000101u + (k / 1024) * 0x010000u) & 0xffffff;
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, 1024, 1024, -200, -300, 0, 24, 1024 * 1024 * 4,
                      (const uint8_t *)huge);
        free(huge);
    }
    /* rect10: a grid of 10x10 rectangles in many colours */
    for (unsigned i = 0; i < 200; i++) {
        uint32_t fg = color(i);
        xcb_change_gc(c, gc, XCB_GC_FOREGROUND, &fg);
        xcb_rectangle_t r = { (int16_t)(5 + (i % 20) * 12), (int16_t)(5 + (i / 20) * 12), 10, 10 };
        xcb_poly_fill_rectangle(c, w, gc, 1, &r);
    }
    /* seg10: 500 short segments in one request */
    xcb_segment_t seg[500];
    for (unsigned i = 0; i < 500; i++)
        seg[i] = (xcb_segment_t){ (int16_t)(260 + (i * 7) % 370), (int16_t)(5 + (i * 13) % 120),
                                  (int16_t)(260 + (i * 7) % 370 + (int16_t)(i % 11) - 5),
                                  (int16_t)(5 + (i * 13) % 120 + 10 - (int16_t)(i % 7)) };
    uint32_t fg = 0x0000c0;
    xcb_change_gc(c, gc, XCB_GC_FOREGROUND, &fg);
    xcb_poly_segment(c, w, gc, 500, seg);
    /* circle10: outlined and filled circles */
    xcb_arc_t arcs[120];
    for (unsigned i = 0; i < 120; i++)
        arcs[i] = (xcb_arc_t){ (int16_t)(5 + (i % 30) * 21), (int16_t)(135 + (i / 30) * 14), 10, 10, 0, 360 * 64 };
    fg = 0xc00000;
    xcb_change_gc(c, gc, XCB_GC_FOREGROUND, &fg);
    xcb_poly_arc(c, w, gc, 60, arcs);
    xcb_poly_fill_arc(c, w, gc, 60, arcs + 60);
    /* ftext: core-font text, image and poly forms */
    xcb_font_t font = xcb_generate_id(c);
    xcb_open_font(c, font, 5, "fixed");
    uint32_t fv[] = { 0x000000, 0xffffc0, font };
    xcb_change_gc(c, gc, XCB_GC_FOREGROUND | XCB_GC_BACKGROUND | XCB_GC_FONT, fv);
    for (int i = 0; i < 8; i++) {
        char line[81];
        for (int k = 0; k < 80; k++)
            line[k] = (char)(' ' + 1 + (i * 80 + k) % 94);
        xcb_image_text_8(c, 80, w, gc, 5, (int16_t)(210 + i * 14), line);
    }
    uint8_t items[2 + 26] = { 26, 0 };
    memcpy(items + 2, "the quick brown fox jumped", 26);
    xcb_poly_text_8(c, w, gc, 5, 330, sizeof items, items);
    /* oddtilerect10: fills with a 17x15 tile */
    xcb_pixmap_t tile = xcb_generate_id(c);
    xcb_create_pixmap(c, 24, tile, w, 17, 15);
    for (int y = 0; y < 15; y++)
        for (int x = 0; x < 17; x++) {
            fg = color((unsigned)(x * y + x + 3 * y));
            xcb_change_gc(c, gc, XCB_GC_FOREGROUND, &fg);
            xcb_point_t pt = { (int16_t)x, (int16_t)y };
            xcb_poly_point(c, XCB_COORD_MODE_ORIGIN, tile, gc, 1, &pt);
        }
    xcb_gcontext_t tgc = xcb_generate_id(c);
    uint32_t tv[] = { XCB_FILL_STYLE_TILED, tile };
    xcb_create_gc(c, tgc, w, XCB_GC_FILL_STYLE | XCB_GC_TILE, tv);
    for (unsigned i = 0; i < 40; i++) {
        xcb_rectangle_t r = { (int16_t)(5 + (i % 20) * 16), (int16_t)(345 + (i / 20) * 14), 10, 10 };
        xcb_poly_fill_rectangle(c, w, tgc, 1, &r);
    }
    /* copywinwin10: copies within the window */
    for (unsigned i = 0; i < 30; i++)
        xcb_copy_area(c, w, w, gc, (int16_t)(5 + i * 7), (int16_t)(5 + i * 3), (int16_t)(340 + (i % 15) * 19),
                      (int16_t)(345 + (i / 15) * 14), 10, 10);
    /* putimage10: small images */
    uint32_t small[10 * 10];
    for (unsigned i = 0; i < 30; i++) {
        for (unsigned k = 0; k < 100; k++)
            small[k] = color(i * 100 + k);
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, 10, 10, (int16_t)(5 + i * 21), 380, 0, 24,
                      sizeof small, (const uint8_t *)small);
    }
    /* one image of 600x80 pixels (192000 bytes, below the 256 KiB core limit) and one of
     * 600x100 (240000 bytes + header: fine) -- then a 620x120 one (297600 bytes) that
     * needs BIG-REQUESTS */
    static uint32_t big[620 * 120];
    for (unsigned k = 0; k < 620 * 120; k++)
        big[k] = ((k % 620) * 0x010203u) ^ ((k / 620) * 0x0a0000u);
    xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, 620, 70, 10, 400, 0, 24, 620 * 70 * 4, (const uint8_t *)big);
    xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, 300, 120, 330, 200, 0, 24, 300 * 120 * 4,
                  (const uint8_t *)big);
    if (xcb_get_maximum_request_length(c) > 65535)
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, 620, 120, 10, 240, 0, 24, 620 * 120 * 4,
                      (const uint8_t *)big);
    /* one of 200x100 whose unused fourth bytes vary, in runs of 0 and 128, as imlib2 (feh)
     * leaves them: the server keeps them and GetImage (xwd) returns them (PutImage filter 9,
     * mode 4) */
    static uint32_t pad[200 * 100];
    for (unsigned k = 0; k < 200 * 100; k++)
        pad[k] = (((k % 200) * 5 + (k / 200) * 3) & 0xff) * 0x010101u ^ (k / 200 % 7) * 0x0d0000u |
                 ((k % 200 / 17 + k / 200 / 9) % 3 ? 0x80000000u : 0);
    xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, 200, 100, 420, 20, 0, 24, sizeof pad, (const uint8_t *)pad);
    /* getimage: read a region back and draw it elsewhere, mirrored in rows */
    xcb_get_image_reply_t *img =
        xcb_get_image_reply(c, xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, 0, 0, 300, 60, ~0u), NULL);
    if (img) {
        uint8_t *data = xcb_get_image_data(img);
        for (int row = 0; row < 60; row++)
            xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, 300, 1, 330, (int16_t)(179 - row), 0, 24, 300 * 4,
                          data + row * 300 * 4);
        free(img);
    }
    /* The whole window read back (a 1.2 MB reply) and put back shifted (a 1.2 MB request). */
    xcb_get_image_reply_t *all =
        xcb_get_image_reply(c, xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, 0, 0, W, H, ~0u), NULL);
    if (all && big_ok) {
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, W, H, W / 2, H / 2, 0, 24,
                      (uint32_t)xcb_get_image_data_length(all), xcb_get_image_data(all));
    }
    free(all);
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    printf("drawn\n");
    fflush(stdout);
    xcb_generic_event_t *ev;
    while ((ev = xcb_wait_for_event(c)))
        free(ev);
    return 0;
}
