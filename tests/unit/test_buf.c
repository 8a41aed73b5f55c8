/* test_buf.c -- byte queues and bounds-checked readers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "test.h"

int main(void)
{
    TEST("That appended bytes come out in order after partial consumption") {
        struct buf b = { 0 };
        for (int i = 0; i < 10000; i++) {
            uint8_t v = (uint8_t)i;
            CHECK(buf_append(&b, &v, 1) == 0);
            if (i % 3 == 0)
                buf_consume(&b, 1);
        }
        CHECK_EQ(b.len, 10000 - 3334);
        CHECK_EQ(buf_head(&b)[0], (uint8_t)(3334));
        buf_free(&b);
    }
    TEST("That trimming frees an empty buffer and shrinks a large one that is mostly spent") {
        struct buf b = { 0 };
        buf_append_space(&b, 6u << 20);
        memset(b.data, 7, 6u << 20);
        buf_consume(&b, (6u << 20) - 1000);
        buf_trim(&b, 16384);
        CHECK(b.cap == 16384 && b.len == 1000 && buf_head(&b)[999] == 7);
        buf_trim(&b, 16384); /* small already: kept */
        CHECK_EQ(b.cap, 16384);
        buf_consume(&b, 1000);
        buf_trim(&b, 4096);
        CHECK(b.cap == 0 && !b.data);
        CHECK_EQ(buf_append(&b, "x", 1), 0);
        buf_free(&b);
    }
    TEST("That a draining queue the cache would keep is not shrunk (it is empty in a few turns)") {
        struct buf b = { 0 };
        CHECK(buf_append_space(&b, 1u << 20) != NULL);
        size_t cap = b.cap;
        buf_consume(&b, (1u << 20) - 1000);
        buf_trim(&b, 16384);
        CHECK(b.cap == cap && b.len == 1000);
        buf_free(&b);
        buf_kept_drop();
    }
    TEST("That a freed large block is kept and reused, and the kept blocks stay within their bound") {
        buf_kept_drop();
        struct buf a = { 0 }, b = { 0 };
        CHECK(buf_append_space(&a, 1u << 20) != NULL);
        memset(a.data, 5, 1u << 20);
        uint8_t *block = a.data;
        size_t cap = a.cap;
        buf_free(&a);
        CHECK_EQ(buf_kept_bytes(), cap);
        CHECK(buf_append_space(&b, 300 * 1024) != NULL); /* grows into the kept block */
        CHECK(b.data == block && b.cap == cap && buf_kept_bytes() == 0);
        buf_free(&b);
        struct buf many[BUF_KEPT_BLOCKS + 3] = { 0 };
        for (size_t i = 0; i < BUF_KEPT_BLOCKS + 3; i++)
            CHECK(buf_append_space(&many[i], BUF_KEPT_MIN + i * 4096) != NULL);
        for (size_t i = 0; i < BUF_KEPT_BLOCKS + 3; i++)
            buf_free(&many[i]);
        CHECK(buf_kept_bytes() > 0 && buf_kept_bytes() <= BUF_KEPT_BYTES);
        struct buf big = { 0 }; /* larger than the whole cache: freed, never kept */
        CHECK(buf_append_space(&big, BUF_KEPT_BYTES + 1) != NULL);
        size_t before = buf_kept_bytes();
        buf_free(&big);
        CHECK_EQ(buf_kept_bytes(), before);
        struct buf two = { 0 }; /* a large one displaces smaller kept ones */
        CHECK(buf_append_space(&two, BUF_KEPT_BYTES / 2 + 1) != NULL);
        size_t two_cap = two.cap;
        buf_free(&two);
        CHECK(buf_kept_bytes() >= two_cap && buf_kept_bytes() <= BUF_KEPT_BYTES);
        buf_kept_drop();
        CHECK_EQ(buf_kept_bytes(), 0);
    }
    TEST("That a reader refuses to read past the end") {
        uint8_t d[3] = { 1, 2, 3 };
        struct rd r = rd_make(d, 3, false);
        uint16_t v16;
        uint32_t v32;
        CHECK(rd_u16(&r, &v16) == 0 && v16 == 0x0201);
        CHECK(rd_u32(&r, &v32) == -EAGAIN);
        CHECK(rd_skip(&r, 2) == -EAGAIN);
        CHECK_EQ(r.pos, 2);
    }
    TEST("That loads honour the byte order") {
        uint8_t d[4] = { 0x12, 0x34, 0x56, 0x78 };
        CHECK_EQ(ld32(d, true), 0x12345678);
        CHECK_EQ(ld32(d, false), 0x78563412);
        uint8_t o[4];
        st32(o, 0x12345678, true);
        CHECK(memcmp(o, d, 4) == 0);
        st16(o, 0xabcd, false);
        CHECK(o[0] == 0xcd && o[1] == 0xab);
    }
    TEST("That varints round-trip at their boundaries") {
        uint64_t vals[] = { 0, 1, 127, 128, 16383, 16384, 0xffffffffu, UINT64_MAX };
        struct buf b = { 0 };
        for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
            CHECK_EQ(buf_put_varint(&b, vals[i]), 0);
        struct rd r = rd_make(buf_head(&b), b.len, false);
        for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
            uint64_t v = 1;
            CHECK(rd_varint(&r, &v) == 0);
            CHECK(v == vals[i]);
        }
        CHECK_EQ(rd_left(&r), 0);
        buf_free(&b);
    }
    TEST("That an overlong or cut varint is reported, not misread") {
        uint8_t longv[11] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
        struct rd r = rd_make(longv, sizeof longv, false);
        uint64_t v;
        CHECK(rd_varint(&r, &v) == -EBADMSG);
        uint8_t cut[2] = { 0x80, 0x80 };
        r = rd_make(cut, 2, false);
        CHECK(rd_varint(&r, &v) == -EAGAIN);
        CHECK_EQ(r.pos, 0);
    }
    return test_summary();
}
