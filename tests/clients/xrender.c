/* xrender.c -- a deterministic RENDER client for the screen-comparison tests, standing in
 * for rendercheck (not packaged in Debian 12): solid fills with several operators and
 * alpha, an ARGB32 pixmap composited through an A8 mask, anti-aliased trapezoids,
 * glyphs uploaded to a glyph set and drawn; then what the pixel coder sees (PROTOCOL.md
 * 5.4): A8 glyphs of odd widths and subpixel (32-bit) glyphs one per AddGlyphs, drawn by
 * CompositeGlyphs16 with a glyph set switch and CompositeGlyphs32, and many-coloured
 * icons and masks by PutImage, the first drawn again after eight others. Prints "drawn" after a round trip that
 * follows the last request, then waits until killed. Assumes a 24-bit TrueColor screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xcb/render.h>
#include <xcb/xcb.h>

#define W 400
#define H 300

static xcb_render_pictformat_t find_format(const xcb_render_query_pict_formats_reply_t *r, uint8_t depth,
                                           uint16_t alpha_mask, uint16_t red_mask)
{
    xcb_render_pictforminfo_iterator_t it = xcb_render_query_pict_formats_formats_iterator(r);
    for (; it.rem; xcb_render_pictforminfo_next(&it))
        if (it.data->depth == depth && it.data->type == XCB_RENDER_PICT_TYPE_DIRECT &&
            it.data->direct.alpha_mask == alpha_mask && it.data->direct.red_mask == red_mask)
            return it.data->id;
    return 0;
}

static xcb_render_fixed_t fx(double v) { return (xcb_render_fixed_t)(v * 65536); }

/* A8 glyphs of widths 5 to 9 (rows padded to 4 bytes) and 32-bit subpixel glyphs (alpha
 * = green, red and blue its neighbours' coverage), each uploaded alone as Xft does. */
static void more_glyphs(xcb_connection_t *c, xcb_render_picture_t dst, xcb_render_picture_t solid,
                        xcb_render_pictformat_t a8, xcb_render_pictformat_t argb32)
{
    xcb_render_glyphset_t ga = xcb_generate_id(c), gc = xcb_generate_id(c);
    xcb_render_create_glyph_set(c, ga, a8);
    xcb_render_create_glyph_set(c, gc, argb32);
    for (uint32_t g = 0; g < 5; g++) {
        uint16_t gw = (uint16_t)(5 + g), gh = 11, stride = (uint16_t)((gw + 3) & ~3);
        uint8_t bits[12 * 11] = { 0 };
        for (int y = 0; y < gh; y++)
            for (int x = 0; x < gw; x++) {
                int d = abs(x * 2 - gw) + abs(y - 5) * (int)(g + 1) / 2;
                bits[y * stride + x] = (uint8_t)(d < 4 ? 255 : d < 7 ? 255 - (d - 3) * 60 : 0);
            }
        xcb_render_glyphinfo_t info = { gw, gh, 0, 10, (int16_t)(gw + 1), 0 };
        uint32_t id = 100 + g;
        xcb_render_add_glyphs(c, ga, 1, &id, &info, (uint32_t)stride * gh, bits);
        uint32_t px[11 * 11];
        for (int y = 0; y < gh; y++)
            for (int x = 0; x < 11; x++) {
                unsigned cov[3];
                for (int k = 0; k < 3; k++) {
                    int d = abs((x * 3 + k) - 16) + abs(y - 5) * (int)(g + 2);
                    cov[k] = d < 6 ? 255 : d < 20 ? (unsigned)(255 - (d - 5) * 17) : 0;
                }
                px[y * 11 + x] = cov[1] << 24 | cov[0] << 16 | cov[1] << 8 | cov[2];
            }
        xcb_render_glyphinfo_t ci = { 11, gh, 0, 10, 12, 0 };
        xcb_render_add_glyphs(c, gc, 1, &id, &ci, sizeof px, (uint8_t *)px);
    }
    /* 16-bit ids: three glyphs, a switch to the subpixel set, two more */
    uint8_t items[8 + 8 + 12 + 8 + 4] = { 3 };
    int16_t d[2] = { 20, 200 };
    memcpy(items + 4, d, 4);
    uint16_t a[3] = { 100, 102, 104 }, b[2] = { 101, 103 };
    memcpy(items + 8, a, 6);
    items[16] = 255;
    memcpy(items + 24, &gc, 4);
    items[28] = 2;
    d[0] = 5, d[1] = 0;
    memcpy(items + 32, d, 4);
    memcpy(items + 36, b, 4);
    xcb_render_composite_glyphs_16(c, XCB_RENDER_PICT_OP_OVER, solid, dst, a8, ga, 0, 0, sizeof items, items);
    uint8_t items32[8 + 20] = { 5 };
    d[0] = 20, d[1] = 230;
    memcpy(items32 + 4, d, 4);
    for (uint32_t g = 0; g < 5; g++) {
        uint32_t id = 104 - g;
        memcpy(items32 + 8 + 4 * g, &id, 4);
    }
    xcb_render_composite_glyphs_32(c, XCB_RENDER_PICT_OP_OVER, solid, dst, argb32, gc, 0, 0, sizeof items32, items32);
}

/* Icons of 16 x 16 32-bit pixels (gradients, many colours) and 13 x 12 masks (rows
 * padded to 16 bytes) put into pixmaps and composited; the first icon again at the end. */
static void icons(xcb_connection_t *c, xcb_window_t w, xcb_render_picture_t dst, xcb_render_pictformat_t argb32,
                  xcb_render_pictformat_t a8)
{
    xcb_pixmap_t pm = xcb_generate_id(c), mpm = xcb_generate_id(c);
    xcb_create_pixmap(c, 32, pm, w, 16, 16);
    xcb_create_pixmap(c, 8, mpm, w, 13, 12);
    xcb_gcontext_t gc = xcb_generate_id(c), mgc = xcb_generate_id(c);
    xcb_create_gc(c, gc, pm, 0, NULL);
    xcb_create_gc(c, mgc, mpm, 0, NULL);
    xcb_render_picture_t src = xcb_generate_id(c), mask = xcb_generate_id(c);
    xcb_render_create_picture(c, src, pm, argb32, 0, NULL);
    xcb_render_create_picture(c, mask, mpm, a8, 0, NULL);
    for (int i = 0; i < 10; i++) {
        int k = i == 9 ? 0 : i;
        uint32_t px[16 * 16];
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 16; x++) {
                unsigned al = (unsigned)(255 - (abs(x - 8) + abs(y - 8)) * 12), f = al / 2;
                px[y * 16 + x] = al << 24 | (f * (unsigned)x / 16 + (unsigned)k * 9) % al << 16 |
                                 (f * (unsigned)y / 16) << 8 | (unsigned)(k * 20) % al;
            }
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, pm, gc, 16, 16, 0, 0, 0, 32, sizeof px, (uint8_t *)px);
        uint8_t m[16 * 12] = { 0 };
        for (int y = 0; y < 12; y++)
            for (int x = 0; x < 13; x++)
                m[y * 16 + x] = (uint8_t)(255 - ((x - 6) * (x - 6) + (y - 6) * (y - 6) + k) * 4);
        xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, mpm, mgc, 13, 12, 0, 0, 0, 8, sizeof m, m);
        xcb_render_composite(c, XCB_RENDER_PICT_OP_OVER, src, mask, dst, 0, 0, 0, 0, (int16_t)(20 + i * 36), 260, 16,
                             16);
    }
}

int main(void)
{
    xcb_connection_t *c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xrender: cannot open the display\n");
        return 1;
    }
    xcb_screen_t *scr = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
    xcb_render_query_pict_formats_reply_t *pf =
        xcb_render_query_pict_formats_reply(c, xcb_render_query_pict_formats(c), NULL);
    xcb_render_pictformat_t rgb24 = pf ? find_format(pf, 24, 0, 0xff) : 0, argb32 = pf ? find_format(pf, 32, 0xff, 0xff) : 0,
                            a8 = pf ? find_format(pf, 8, 0xff, 0) : 0;
    if (!rgb24 || !argb32 || !a8) {
        fprintf(stderr, "xrender: the server lacks RENDER or its standard formats\n");
        return 1;
    }
    xcb_window_t w = xcb_generate_id(c);
    uint32_t wv[] = { scr->black_pixel, 1 };
    xcb_create_window(c, 24, w, scr->root, 700, 20, W, H, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT, scr->root_visual,
                      XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT, wv);
    xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8, 7, "xrender");
    xcb_map_window(c, w);
    xcb_render_picture_t dst = xcb_generate_id(c);
    xcb_render_create_picture(c, dst, w, rgb24, 0, NULL);

    /* Solid fills: Src, then Over and Add with translucent colours. */
    uint8_t ops[] = { XCB_RENDER_PICT_OP_SRC, XCB_RENDER_PICT_OP_OVER, XCB_RENDER_PICT_OP_ADD };
    for (int i = 0; i < 12; i++) {
        xcb_render_color_t col = { (uint16_t)(i * 0x1500), (uint16_t)(0xffff - i * 0x1100), (uint16_t)(i * 0x0900),
                                   (uint16_t)(0x4000 + i * 0x1000) };
        xcb_rectangle_t r = { (int16_t)(10 + i * 20), (int16_t)(10 + i * 7), 60, 40 };
        xcb_render_fill_rectangles(c, ops[i % 3], dst, col, 1, &r);
    }

    /* An ARGB32 pixmap composited through an A8 mask. */
    xcb_pixmap_t src_pm = xcb_generate_id(c), mask_pm = xcb_generate_id(c);
    xcb_create_pixmap(c, 32, src_pm, w, 64, 64);
    xcb_create_pixmap(c, 8, mask_pm, w, 64, 64);
    xcb_render_picture_t src = xcb_generate_id(c), mask = xcb_generate_id(c);
    xcb_render_create_picture(c, src, src_pm, argb32, 0, NULL);
    xcb_render_create_picture(c, mask, mask_pm, a8, 0, NULL);
    for (int i = 0; i < 8; i++) {
        xcb_render_color_t col = { (uint16_t)(i * 0x2000), 0x8000, (uint16_t)(0xffff - i * 0x2000), (uint16_t)(0x2000 * i + 0x1fff) };
        xcb_rectangle_t r = { (int16_t)(i * 8), 0, 8, 64 };
        xcb_render_fill_rectangles(c, XCB_RENDER_PICT_OP_SRC, src, col, 1, &r);
        xcb_render_color_t m = { 0, 0, 0, (uint16_t)(0xffff - i * 0x1c00) };
        xcb_rectangle_t mr = { 0, (int16_t)(i * 8), 64, 8 };
        xcb_render_fill_rectangles(c, XCB_RENDER_PICT_OP_SRC, mask, m, 1, &mr);
    }
    for (int i = 0; i < 4; i++)
        xcb_render_composite(c, XCB_RENDER_PICT_OP_OVER, src, mask, dst, 0, 0, 0, 0, (int16_t)(20 + i * 80), 120, 64, 64);

    /* Anti-aliased trapezoids with a solid source. */
    xcb_render_picture_t solid = xcb_generate_id(c);
    xcb_render_color_t yellow = { 0xffff, 0xe000, 0x2000, 0xc000 };
    xcb_render_create_solid_fill(c, solid, yellow);
    xcb_render_trapezoid_t traps[3];
    for (int i = 0; i < 3; i++) {
        double x = 30 + i * 110.3, y = 200.25;
        traps[i] = (xcb_render_trapezoid_t){ fx(y), fx(y + 70.5),
                                             { { fx(x + 20.7), fx(y) }, { fx(x), fx(y + 70.5) } },
                                             { { fx(x + 60.2), fx(y) }, { fx(x + 90.9), fx(y + 70.5) } } };
    }
    xcb_render_trapezoids(c, XCB_RENDER_PICT_OP_OVER, solid, dst, a8, 0, 0, 3, traps);

    /* Glyphs: four 12x16 A8 glyphs with a pattern, drawn as a line of text. */
    xcb_render_glyphset_t gs = xcb_generate_id(c);
    xcb_render_create_glyph_set(c, gs, a8);
    uint32_t ids[4] = { 'a', 'b', 'c', 'd' };
    xcb_render_glyphinfo_t info[4];
    uint8_t bits[4 * 12 * 16];
    for (int g = 0; g < 4; g++) {
        info[g] = (xcb_render_glyphinfo_t){ 12, 16, 0, 14, 13, 0 };
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 12; x++)
                bits[g * 192 + y * 12 + x] = (uint8_t)(((x * (g + 1) + y * 3) % 7) * 40);
    }
    xcb_render_add_glyphs(c, gs, 4, ids, info, sizeof bits, bits);
    uint8_t cmds[4 + 4 + 8] = { 8, 0, 0, 0 };
    int16_t dx = 250, dy = 30;
    memcpy(cmds + 4, &dx, 2);
    memcpy(cmds + 6, &dy, 2);
    memcpy(cmds + 8, "abcdabcd", 8);
    xcb_render_composite_glyphs_8(c, XCB_RENDER_PICT_OP_OVER, solid, dst, a8, gs, 0, 0, sizeof cmds, cmds);

    more_glyphs(c, dst, solid, a8, argb32);
    icons(c, w, dst, argb32, a8);

    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    free(pf);
    printf("drawn\n");
    fflush(stdout);
    for (;;)
        pause();
}
