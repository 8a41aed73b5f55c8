/* test_xwire.c -- X11 framing in both byte orders. */
#include <errno.h>

#include "test.h"
#include "x11/xwire.h"

static void put_req(uint8_t *p, uint8_t op, uint8_t data, uint16_t len4, bool msb)
{
    p[0] = op;
    p[1] = data;
    st16(p + 2, len4, msb);
}

int main(void)
{
    for (int order = 0; order < 2; order++) {
        bool msb = order == 1;
        TEST(msb ? "That a setup request is parsed in MSB-first order" : "That a setup request is parsed in LSB-first order") {
            struct buf b = { 0 };
            uint8_t cookie[16] = { 1, 2, 3 };
            xw_build_setup_request(&b, msb, 11, 0, "MIT-MAGIC-COOKIE-1", 18, cookie, 16);
            CHECK_EQ(b.len, 12 + 20 + 16);
            struct xw_setup_request rq;
            for (size_t n = 0; n < b.len; n++)
                CHECK(xw_parse_setup_request(buf_head(&b), n, &rq) == -EAGAIN || n == 0);
            CHECK_EQ(xw_parse_setup_request(buf_head(&b), b.len, &rq), (long)b.len);
            CHECK(rq.msb == msb && rq.major == 11 && rq.auth_name_len == 18 && rq.auth_data_len == 16);
            CHECK(memcmp(rq.auth_data, cookie, 16) == 0);
            buf_free(&b);
        }
        TEST("That requests are framed by their length, and BIG-REQUESTS lengths too") {
            uint8_t p[64] = { 0 };
            struct xw_request rq;
            put_req(p, 8, 0, 2, msb);
            CHECK_EQ(xw_next_request(p, 8, msb, false, 1 << 20, &rq), 8);
            CHECK_EQ(xw_next_request(p, 7, msb, false, 1 << 20, &rq), -EAGAIN);
            put_req(p, 72, 2, 0, msb);
            st32(p + 4, 5, msb);
            CHECK_EQ(xw_next_request(p, 64, msb, false, 1 << 20, &rq), -EBADMSG);
            CHECK_EQ(xw_next_request(p, 64, msb, true, 1 << 20, &rq), 20);
            CHECK_EQ(rq.header_size, 8);
            st32(p + 4, 1, msb);
            CHECK_EQ(xw_next_request(p, 64, msb, true, 1 << 20, &rq), -EBADMSG);
            st32(p + 4, 0x40000000, msb);
            CHECK_EQ(xw_next_request(p, 64, msb, true, 16u << 20, &rq), -EMSGSIZE);
        }
        TEST("That replies, events, GenericEvents and errors are framed") {
            uint8_t p[128] = { 0 };
            struct xw_server_msg m;
            p[0] = 1;
            st16(p + 2, 0x1234, msb);
            st32(p + 4, 3, msb);
            CHECK_EQ(xw_next_server_msg(p, 128, msb, 1 << 20, &m), 44);
            CHECK(m.kind == XW_KIND_REPLY && m.seq == 0x1234);
            CHECK_EQ(xw_next_server_msg(p, 43, msb, 1 << 20, &m), -EAGAIN);
            p[0] = 35 | 0x80;
            st32(p + 4, 2, msb);
            CHECK_EQ(xw_next_server_msg(p, 128, msb, 1 << 20, &m), 40);
            CHECK(m.kind == XW_KIND_EVENT && m.code == 35);
            p[0] = 11; /* KeymapNotify: no sequence number */
            CHECK_EQ(xw_next_server_msg(p, 128, msb, 1 << 20, &m), 32);
            CHECK(!m.has_seq);
            p[0] = 0;
            p[1] = 3;
            CHECK_EQ(xw_next_server_msg(p, 32, msb, 1 << 20, &m), 32);
            CHECK(m.kind == XW_KIND_ERROR && m.code == 3);
            p[0] = 1;
            st32(p + 4, 0x10000000, msb);
            CHECK_EQ(xw_next_server_msg(p, 128, msb, 1 << 20, &m), -EMSGSIZE);
        }
    }
    TEST("That garbage at setup is refused at once") {
        uint8_t g[12] = { 'G', 'E', 'T', ' ', '/' };
        struct xw_setup_request rq;
        CHECK_EQ(xw_parse_setup_request(g, sizeof g, &rq), -EBADMSG);
        uint8_t v10[12] = { 'l', 0, 10, 0 };
        CHECK_EQ(xw_parse_setup_request(v10, sizeof v10, &rq), -EPROTONOSUPPORT);
        CHECK_EQ(rq.major, 10);
    }
    TEST("That a refusal is a well-formed Failed setup reply") {
        struct buf b = { 0 };
        xw_build_setup_failed(&b, false, "no");
        CHECK_EQ(b.len, 12);
        CHECK_EQ(xw_setup_reply_size(buf_head(&b), b.len, false), 12);
        CHECK(buf_head(&b)[0] == 0 && buf_head(&b)[1] == 2);
        buf_free(&b);
    }
    return test_summary();
}
