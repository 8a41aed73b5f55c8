/* test_expose.c -- the app side's knowledge behind local NoExpose answers (expose.c),
 * the id map it keeps it in (idmap.c), and AllocColor's TrueColor arithmetic (predict.c). */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/idmap.h"
#include "proxy/expose.h"
#include "proxy/predict.h"
#include "test.h"

static struct msg_class core(uint8_t major)
{
    return (struct msg_class){ .kind = MSG_REQUEST, .major = major, .query_ext = -1 };
}

/* A request body (after the 4-byte header) from 32-bit words, little-endian. */
static uint32_t body_len;
static uint8_t *words(uint8_t *b, const uint32_t *w, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        st32(b + 4 * i, w[i], false);
    body_len = 4 * n;
    return b;
}

/* CopyArea body: src, dst, gc, src-x/src-y, dst-x/dst-y, width/height (16-bit pairs). */
static uint8_t *copy_area(uint8_t *b, uint32_t src, uint32_t gc, int16_t sx, int16_t sy, uint16_t w, uint16_t h)
{
    st32(b, src, false);
    st32(b + 4, src, false);
    st32(b + 8, gc, false);
    st16(b + 12, (uint16_t)sx, false);
    st16(b + 14, (uint16_t)sy, false);
    st16(b + 16, 0, false);
    st16(b + 18, 0, false);
    st16(b + 20, w, false);
    st16(b + 22, h, false);
    body_len = 24;
    return b;
}

static void test_idmap(void)
{
    TEST("That the id map finds, forgets and grows, and stops at its bound") {
        struct idmap m;
        idmap_init(&m, 1000);
        for (uint32_t i = 1; i <= 1000; i++) {
            struct idmap_entry *e = idmap_put(&m, i * 7);
            CHECK(e != NULL);
            if (e)
                e->a = i;
        }
        CHECK(idmap_put(&m, 99999) == NULL); /* full */
        CHECK(idmap_get(&m, 7 * 500) && idmap_get(&m, 7 * 500)->a == 500);
        for (uint32_t i = 1; i <= 1000; i += 2)
            idmap_del(&m, i * 7);
        CHECK(idmap_get(&m, 7) == NULL);
        CHECK(idmap_get(&m, 14) && idmap_get(&m, 14)->a == 2);
        CHECK(idmap_put(&m, 99999) != NULL); /* room again */
        CHECK(idmap_put(&m, 0) == NULL && idmap_put(&m, IDMAP_GONE) == NULL);
        idmap_free(&m);
    }
}

static void test_noexpose(void)
{
    uint8_t b[64];
    struct msg_class create_gc = core(55), change_gc = core(56), copy = core(XOP_COPY_AREA);
    struct msg_class create_pixmap = core(53), map = core(8), create_window = core(XOP_CREATE_WINDOW);

    TEST("That a copy from a pixmap inside its bounds, with exposures on, is answered") {
        struct expose_state e;
        expose_init(&e);
        words(b, (uint32_t[]){ 0x10, 0x1, 0 }, 3);
        expose_on_request(&e, &create_gc, b, body_len, 1, false);
        uint32_t pix[3] = { 0x20, 0x1, 0 };
        words(b, pix, 3);
        st16(b + 8, 100, false);
        st16(b + 10, 50, false);
        expose_on_request(&e, &create_pixmap, b, 12, 2, false);
        CHECK(expose_predict(&e, &copy, copy_area(b, 0x20, 0x10, 0, 0, 100, 50), 24, false));
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x20, 0x10, 1, 0, 100, 50), 24, false));
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x20, 0x10, -1, 0, 10, 10), 24, false));
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x20, 0x11, 0, 0, 10, 10), 24, false)); /* unknown GC */
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x21, 0x10, 0, 0, 10, 10), 24, false)); /* unknown source */
        expose_free(&e);
    }
    TEST("That graphics-exposures off (at creation or changed) means no answer, and a silent copy") {
        struct expose_state e;
        expose_init(&e);
        CHECK(!expose_copy_silent(&e, &copy, copy_area(b, 0x20, 0x10, 0, 0, 5, 5), 24, false)); /* GC unknown */
        /* mask: GraphicsExposures (bit 16) after Function (bit 0): values in bit order */
        words(b, (uint32_t[]){ 0x10, 0x1, 0x10001, 3, 0 }, 5);
        expose_on_request(&e, &create_gc, b, body_len, 1, false);
        CHECK(expose_copy_silent(&e, &copy, copy_area(b, 0x20, 0x10, 0, 0, 5, 5), 24, false));
        uint32_t pix[3] = { 0x20, 0x1, 0 };
        words(b, pix, 3);
        st16(b + 8, 10, false);
        st16(b + 10, 10, false);
        expose_on_request(&e, &create_pixmap, b, 12, 2, false);
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x20, 0x10, 0, 0, 5, 5), 24, false));
        words(b, (uint32_t[]){ 0x10, 0x10000, 1 }, 3);
        expose_on_request(&e, &change_gc, b, body_len, 3, false);
        CHECK(expose_predict(&e, &copy, copy_area(b, 0x20, 0x10, 0, 0, 5, 5), 24, false));
        CHECK(!expose_copy_silent(&e, &copy, copy_area(b, 0x20, 0x10, 0, 0, 5, 5), 24, false)); /* exposures on */
        words(b, (uint32_t[]){ 0x10, 0x10000, 0 }, 3);
        expose_on_request(&e, &change_gc, b, body_len, 4, false);
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x20, 0x10, 0, 0, 5, 5), 24, false));
        expose_free(&e);
    }
    TEST("That a window fact counts only if no window change of the client is newer") {
        struct expose_state e;
        expose_init(&e);
        words(b, (uint32_t[]){ 0x10, 0x1, 0 }, 3);
        expose_on_request(&e, &create_gc, b, body_len, 1, false);
        words(b, (uint32_t[]){ 0x30, 0x1, 0, 0, 0, 0 }, 6);
        expose_on_request(&e, &create_window, b, body_len, 2, false);
        words(b, (uint32_t[]){ 0x30 }, 1);
        expose_on_request(&e, &map, b, body_len, 3, false);
        expose_on_fact(&e, 0x30, true, 200, 100, 2); /* as of request 2: the map is newer */
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x30, 0x10, 0, 10, 200, 90), 24, false));
        expose_on_fact(&e, 0x30, true, 200, 100, 3);
        CHECK(expose_predict(&e, &copy, copy_area(b, 0x30, 0x10, 0, 10, 200, 90), 24, false));
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x30, 0x10, 0, 11, 200, 90), 24, false)); /* past the edge */
        expose_on_fact(&e, 0x30, false, 200, 100, 3);
        CHECK(!expose_predict(&e, &copy, copy_area(b, 0x30, 0x10, 0, 10, 200, 90), 24, false));
        expose_free(&e);
    }
    TEST("That the NoExpose built here has the server's layout") {
        uint8_t ev[32];
        expose_build_noexpose(ev, 0x1234, 0xabcdef, XOP_COPY_AREA, true);
        uint8_t want[32] = { 14, 0, 0x12, 0x34, 0x00, 0xab, 0xcd, 0xef, 0, 0, 62 };
        CHECK(memcmp(ev, want, 32) == 0);
    }
}

/* A setup reply with one screen whose root visual is TrueColor with these masks. */
static size_t truecolor_setup(uint8_t *s, uint32_t r, uint32_t g, uint32_t b, uint8_t bits, uint8_t depth)
{
    memset(s, 0, 512);
    s[0] = 1;
    st16(s + 24, 4, false);  /* vendor length */
    s[28] = 1;               /* screens */
    s[29] = 0;               /* formats */
    memcpy(s + 40, "test", 4);
    uint8_t *sc = s + 44;
    st32(sc, 0x100, false);       /* root */
    st32(sc + 4, 0x21, false);    /* default colormap */
    st32(sc + 32, 0x22, false);   /* root visual */
    sc[39] = 1;                   /* allowed depths */
    uint8_t *d = sc + 40;
    d[0] = depth;
    st16(d + 2, 1, false);
    uint8_t *v = d + 8;
    st32(v, 0x22, false);
    v[4] = 4;                     /* TrueColor */
    v[5] = bits;
    st16(v + 6, 256, false);
    st32(v + 8, r, false);
    st32(v + 12, g, false);
    st32(v + 16, b, false);
    size_t n = (size_t)(v + 24 - s);
    st16(s + 6, (uint16_t)((n - 8) / 4), false);
    return n;
}

static void alloc_color_req(uint8_t *q, uint16_t r, uint16_t g, uint16_t b)
{
    memset(q, 0, 16);
    q[0] = 84;
    st16(q + 2, 4, false);
    st32(q + 4, 0x21, false);
    st16(q + 8, r, false);
    st16(q + 10, g, false);
    st16(q + 12, b, false);
}

static void test_alloc_color(void)
{
    struct msg_class req = core(84), rep = { .kind = MSG_REPLY, .major = 84, .query_ext = -1 };
    uint8_t setup[512], q[16], reply[32];
    TEST("That AllocColor on a 24-bit TrueColor map is answered only after a real reply matched") {
        struct predictor *p;
        predict_new(&p);
        struct predict_questions pq = { 0 };
        predict_learn_setup(p, setup, truecolor_setup(setup, 0xff0000, 0xff00, 0xff, 8, 24), false);
        alloc_color_req(q, 0x1234, 0xffff, 0x0080);
        struct buf out = { 0 };
        CHECK(!predict_answer(p, &pq, &req, q, 16, 5, false, &out));
        /* The server's reply: each component rounded to 8 bits and scaled back. */
        memset(reply, 0, 32);
        reply[0] = 1;
        st16(reply + 8, 0x1212, false);
        st16(reply + 10, 0xffff, false);
        st16(reply + 12, 0x0000, false);
        st32(reply + 16, 0x12ff00, false);
        predict_ask(&pq, &req, q, 16, 7, false);
        predict_learn(p, &pq, &rep, 7, reply, 32, false);
        alloc_color_req(q, 0x8000, 0x7fff, 0x0101);
        CHECK(predict_answer(p, &pq, &req, q, 16, 9, false, &out));
        CHECK_EQ(out.len, 32);
        if (out.len == 32) {
            CHECK_EQ(ld16(buf_head(&out) + 2, false), 9);
            CHECK_EQ(ld16(buf_head(&out) + 8, false), 0x8080);
            CHECK_EQ(ld16(buf_head(&out) + 10, false), 0x7f7f);
            CHECK_EQ(ld16(buf_head(&out) + 12, false), 0x0101);
            CHECK_EQ(ld32(buf_head(&out) + 16, false), 0x807f01);
        }
        buf_free(&out);
        predict_questions_free(&pq);
        predict_free(p);
    }
    TEST("That one reply unlike the arithmetic turns AllocColor answers off for good") {
        struct predictor *p;
        predict_new(&p);
        struct predict_questions pq = { 0 };
        predict_learn_setup(p, setup, truecolor_setup(setup, 0xff0000, 0xff00, 0xff, 8, 24), false);
        alloc_color_req(q, 0x1234, 0xffff, 0x0080);
        memset(reply, 0, 32);
        reply[0] = 1;
        st32(reply + 16, 0x12ff01, false); /* not what the formula says */
        predict_ask(&pq, &req, q, 16, 7, false);
        predict_learn(p, &pq, &rep, 7, reply, 32, false);
        struct buf out = { 0 };
        CHECK(!predict_answer(p, &pq, &req, q, 16, 9, false, &out));
        buf_free(&out);
        predict_questions_free(&pq);
        predict_free(p);
    }
    TEST("That a 16-bit (5-6-5) TrueColor map rounds as the sample server does") {
        struct predictor *p;
        predict_new(&p);
        struct predict_questions pq = { 0 };
        predict_learn_setup(p, setup, truecolor_setup(setup, 0xf800, 0x07e0, 0x001f, 6, 16), false);
        /* Teach it with the answer for white, then ask for a grey. */
        alloc_color_req(q, 0xffff, 0xffff, 0xffff);
        memset(reply, 0, 32);
        reply[0] = 1;
        st16(reply + 8, 0xffff, false);
        st16(reply + 10, 0xffff, false);
        st16(reply + 12, 0xffff, false);
        st32(reply + 16, 0xffff, false);
        predict_ask(&pq, &req, q, 16, 7, false);
        predict_learn(p, &pq, &rep, 7, reply, 32, false);
        alloc_color_req(q, 0x8000, 0x8000, 0x8000);
        struct buf out = { 0 };
        CHECK(predict_answer(p, &pq, &req, q, 16, 8, false, &out));
        if (out.len == 32) {
            /* 6 rgb bits: 0x8000 -> 32 -> 32*65535/63 = 33287. Green (6 bits) holds it
             * exactly; red and blue (5 bits) have entry 16 = (16*65535/31 >> 10)*65535/63
             * = 34327 nearest (entry 15 is 31207). */
            CHECK_EQ(ld16(buf_head(&out) + 8, false), 34327);
            CHECK_EQ(ld16(buf_head(&out) + 10, false), 33287);
            CHECK_EQ(ld16(buf_head(&out) + 12, false), 34327);
            CHECK_EQ(ld32(buf_head(&out) + 16, false), (16u << 11) | (32u << 5) | 16u);
        }
        buf_free(&out);
        predict_questions_free(&pq);
        predict_free(p);
    }
}

int main(void)
{
    test_idmap();
    test_noexpose();
    test_alloc_color();
    return test_summary();
}
