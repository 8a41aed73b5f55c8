/* test_xproto_wire.c -- the typed wire access generated from xcb-proto (xproto_wire.h): views
 * refuse what is cut short, read both byte orders, find lists and what follows, and writers
 * give back what views read; the field places and the shared headers agree with them. */
#include "test.h"
#include "xproto_wire.h"

int main(void)
{
    for (int order = 0; order < 2; order++) {
        bool msb = order == 1;
        TEST(msb ? "That a reply written by its writer reads back through its view (MSB first)"
                 : "That a reply written by its writer reads back through its view (LSB first)") {
            uint8_t m[XP_GET_GEOMETRY_REPLY_SIZE];
            memset(m, 0xee, sizeof m);
            struct xp_get_geometry_reply w = { .sequence = 0x1234, .depth = 24, .root = 0x42, .x = -5, .y = 7,
                                               .width = 640, .height = 480, .border_width = 1 };
            CHECK(!xp_get_geometry_reply_put(m, sizeof m - 1, msb, &w)); /* no room: nothing written */
            CHECK(m[0] == 0xee);
            CHECK(xp_get_geometry_reply_put(m, sizeof m, msb, &w));
            CHECK(m[0] == XP_REPLY && m[1] == 24 && m[22] == 0 && m[31] == 0); /* code set, padding zeroed */
            struct xp_get_geometry_reply r;
            CHECK(xp_get_geometry_reply_view(m, sizeof m, msb, &r));
            CHECK(r.sequence == 0x1234 && r.depth == 24 && r.root == 0x42 && r.x == -5 && r.y == 7 && r.width == 640 &&
                  r.height == 480 && r.border_width == 1 && r.rest_len == 0);
            CHECK(ld16(m + XP_GET_GEOMETRY_REPLY_WIDTH_AT, msb) == 640);
        }
    }

    TEST("That a view refuses a message shorter than its fixed part, and a list that runs past it") {
        uint8_t m[16] = { XP_OP_OPEN_FONT, 0, 4, 0 };
        struct xp_open_font_req v;
        CHECK_EQ(XP_OPEN_FONT_REQ_SIZE, 12);
        CHECK(!xp_open_font_req_view(m, 11, false, &v));
        st32(m + XP_OPEN_FONT_REQ_FID_AT, 0x400001, false);
        st16(m + XP_OPEN_FONT_REQ_NAME_LEN_AT, 4, false);
        memcpy(m + 12, "six6", 4);
        CHECK(xp_open_font_req_view(m, 16, false, &v));
        CHECK(v.fid == 0x400001 && v.name_len == 4 && v.name == m + 12 && v.rest == m + 12 && v.rest_len == 4);
        st16(m + XP_OPEN_FONT_REQ_NAME_LEN_AT, 5, false);
        CHECK(xp_open_font_req_view(m, 16, false, &v) && v.name == NULL); /* the fixed part stands, the name does not */
        uint32_t id;
        CHECK(xp_peek32(m, 8, XP_OPEN_FONT_REQ_FID_AT, false, &id) && id == 0x400001);
        CHECK(!xp_peek32(m, 7, XP_OPEN_FONT_REQ_FID_AT, false, &id));
    }

    TEST("That a request's body view reads the fields after a plain or a BIG-REQUESTS header") {
        uint8_t plain[28] = { XP_OP_COPY_AREA, 0, 7, 0 }, big[32] = { XP_OP_COPY_AREA, 0, 0, 0, 8, 0, 0, 0 };
        for (int i = 0; i < 2; i++) {
            uint8_t *b = i ? big + 8 : plain + 4;
            st32(b + XP_COPY_AREA_BODY_GC_AT, 0x600002, false);
            st16(b + XP_COPY_AREA_BODY_WIDTH_AT, 80, false);
        }
        struct xp_copy_area_body v;
        CHECK(xp_copy_area_body_view(plain + 4, 24, false, &v) && v.gc == 0x600002 && v.width == 80);
        CHECK(xp_copy_area_body_view(big + 8, 24, false, &v) && v.gc == 0x600002 && v.width == 80);
        CHECK(!xp_copy_area_body_view(plain + 4, 23, false, &v));
        struct xp_copy_area_req r;
        CHECK(xp_copy_area_req_view(plain, sizeof plain, false, &r) && r.gc == 0x600002 && r.length == 7);
    }

    TEST("That a value list gives the value of one mask bit, and nothing past its end") {
        uint8_t values[8];
        st32(values, 11, true);
        st32(values + 4, 22, true);
        uint32_t mask = XP_GC_FOREGROUND | XP_GC_GRAPHICS_EXPOSURES, v;
        CHECK(xp_mask_value(mask, XP_GC_FOREGROUND, values, 8, true, &v) && v == 11);
        CHECK(xp_mask_value(mask, XP_GC_GRAPHICS_EXPOSURES, values, 8, true, &v) && v == 22);
        CHECK(!xp_mask_value(mask, XP_GC_BACKGROUND, values, 8, true, &v)); /* not in the mask */
        CHECK(!xp_mask_value(mask, XP_GC_GRAPHICS_EXPOSURES, values, 7, true, &v)); /* cut short */
        CHECK(!xp_mask_value(mask, XP_GC_FOREGROUND | XP_GC_BACKGROUND, values, 8, true, &v)); /* one bit only */
    }

    TEST("That the shared headers read requests, BIG-REQUESTS lengths and replies") {
        uint8_t rq[8] = { XP_OP_PUT_IMAGE, 2, 0, 0 };
        st32(rq + 4, 9, true);
        struct xp_request_header h;
        CHECK(!xp_request_header_view(rq, 3, true, &h));
        CHECK(xp_request_header_view(rq, 8, true, &h) && h.major == XP_OP_PUT_IMAGE && h.data == 2 && !h.length &&
              h.big_length == 9);
        CHECK(xp_request_header_view(rq, 4, true, &h) && h.big_length == 0);
        uint8_t rp[32] = { XP_REPLY, 5 };
        xp_server_set_sequence(rp, 77, false);
        xp_server_set_length(rp, 3, false);
        struct xp_server_header s;
        CHECK(xp_server_header_view(rp, 32, false, &s) && s.code == XP_REPLY && s.data == 5 && s.sequence == 77 &&
              s.length == 3);
    }

    TEST("That the setup reply is walked screen by screen through the views' rest") {
        uint8_t m[XP_SETUP_SIZE + 4 + XP_FORMAT_SIZE + XP_SCREEN_SIZE + XP_DEPTH_SIZE + XP_VISUALTYPE_SIZE] = { 1 };
        st16(m + XP_SETUP_VENDOR_LEN_AT, 3, false);
        m[XP_SETUP_ROOTS_LEN_AT] = 1;
        m[XP_SETUP_PIXMAP_FORMATS_LEN_AT] = 1;
        uint8_t *sc = m + XP_SETUP_SIZE + 4 + XP_FORMAT_SIZE;
        st32(sc + XP_SCREEN_ROOT_AT, 0x42, false);
        sc[XP_SCREEN_ALLOWED_DEPTHS_LEN_AT] = 1;
        st16(sc + XP_SCREEN_SIZE + XP_DEPTH_VISUALS_LEN_AT, 1, false);
        st32(sc + XP_SCREEN_SIZE + XP_DEPTH_SIZE + XP_VISUALTYPE_VISUAL_ID_AT, 0x21, false);
        struct xp_setup s;
        struct xp_screen screen;
        struct xp_depth d;
        struct xp_visualtype vt;
        CHECK(xp_setup_view(m, sizeof m, false, &s) && s.vendor == m + XP_SETUP_SIZE && s.roots_len == 1);
        size_t skip = 4 + XP_FORMAT_SIZE;
        CHECK(xp_screen_view(s.rest + skip, s.rest_len - skip, false, &screen) && screen.root == 0x42);
        CHECK(xp_depth_view(screen.rest, screen.rest_len, false, &d) && d.visuals_len == 1 && d.visuals == d.rest);
        CHECK(xp_visualtype_view(d.rest, d.rest_len, false, &vt) && vt.visual_id == 0x21 && vt.rest_len == 0);
    }
    return test_summary();
}
