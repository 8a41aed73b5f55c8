/* test_predict_color.c -- TrueColor colours answered locally (predict_color.c): the
 * arithmetic from the setup reply, trusted once a real reply matched it; named colours. */
#include "predict_helpers.h"

static void test_colors(void)
{
    TEST("That a TrueColor map checked by the display side answers AllocColor, QueryColors and colour names from the start") {
        struct predictor *p, *q;
        CHECK(predict_new(&p) == 0);
        CHECK(predict_new(&q) == 0);
        uint8_t setup[128], b[64], r[64];
        predict_learn_setup(p, setup, truecolor_setup(setup), false);
        struct predict_questions a = { 0 };
        struct buf fact = { 0 }, out = { 0 };
        struct msg_class alloc = core(84), query = core(91), anc = core(85), look = core(92);
        uint32_t rgb[2] = { 0x20, 0xff00 | 0x5300u << 16 }, mask = 0;
        request(b, 84, 0, (uint32_t[3]){ 0x20, rgb[1], 0 }, 3);
        CHECK_EQ(answer(p, &a, &alloc, b, req_len, 3, &out), 0); /* not trusted yet */
        CHECK(predict_truecolor_colormap(p, &mask) == 0x20 && mask == 0xffffff);
        /* The display side checks the server's answers against the arithmetic. */
        memset(r, 0, 32);
        r[0] = 1;
        st16(r + 8, 0xffff, false);
        st16(r + 10, 0x5353, false);
        st32(r + 16, 0xff5300, false);
        CHECK(predict_color_check(p, b, req_len, r, 32));
        st32(r + 16, 0xff5301, false);
        CHECK(!predict_color_check(p, b, req_len, r, 32));
        /* The fact: answered from now on, on this side and on one that saw no setup reply. */
        CHECK(predict_fact_colors(p, &fact, 0x21) == -ENOENT);
        CHECK(predict_fact_colors(p, &fact, 0x20) == 0);
        CHECK(predict_fact_color_name(&fact, "black", 5, (uint16_t[3]){ 0, 0, 0 }) == 0);
        CHECK(predict_fact_color_name(&fact, "Navy", 4, (uint16_t[3]){ 0, 0, 0x8080 }) == 0);
        CHECK(predict_on_fact(q, buf_head(&fact), fact.len) == 0);
        CHECK(learn(p, &fact) == 0);
        for (int side = 0; side < 2; side++) {
            struct predictor *x = side ? q : p;
            request(b, 84, 0, (uint32_t[3]){ 0x20, rgb[1], 0 }, 3);
            CHECK_EQ(answer(x, &a, &alloc, b, req_len, 3, &out), 32);
            CHECK(ld32(buf_head(&out) + 16, false) == 0xff5300 && ld16(buf_head(&out) + 10, false) == 0x5353);
            uint8_t qc[16];
            request(qc, 91, 0, (uint32_t[3]){ 0x20, 0xffffff, 0x000102 }, 3);
            CHECK_EQ(answer(x, &a, &query, qc, req_len, 4, &out), 48);
            const uint8_t *o = buf_head(&out);
            CHECK(ld16(o + 8, false) == 2 && ld32(o + 4, false) == 4);
            CHECK(ld16(o + 32, false) == 0xffff && ld16(o + 34, false) == 0xffff && ld16(o + 36, false) == 0xffff);
            CHECK(ld16(o + 40, false) == 0 && ld16(o + 42, false) == 0x0101 && ld16(o + 44, false) == 0x0202);
            request(qc, 91, 0, (uint32_t[3]){ 0x20, 0xff000000, 0 }, 3); /* bits outside the masks */
            CHECK_EQ(answer(x, &a, &query, qc, req_len, 4, &out), 0);
            request(qc, 91, 0, (uint32_t[3]){ 0x22, 0, 0 }, 3);          /* another colormap */
            CHECK_EQ(answer(x, &a, &query, qc, req_len, 4, &out), 0);
            /* Names, without regard to case: AllocNamedColor and LookupColor. */
            named(b, 85, 0x20, "NAVY");
            CHECK_EQ(answer(x, &a, &anc, b, req_len, 5, &out), 32);
            o = buf_head(&out);
            CHECK(ld32(o + 8, false) == 0x80 && ld16(o + 16, false) == 0x8080 && ld16(o + 22, false) == 0x8080);
            named(b, 92, 0x20, "Black");
            CHECK_EQ(answer(x, &a, &look, b, req_len, 6, &out), 32);
            CHECK(ld16(buf_head(&out) + 2, false) == 6 && ld16(buf_head(&out) + 8, false) == 0);
            named(b, 92, 0x20, "blackx");
            CHECK_EQ(answer(x, &a, &look, b, req_len, 6, &out), 0);
            named(b, 85, 0x20, "white");
            CHECK_EQ(answer(x, &a, &anc, b, req_len, 6, &out), 0);
        }
        /* LookupColor is checked by the arithmetic of its visual values. */
        named(b, 92, 0x20, "navy");
        memset(r, 0, 32);
        r[0] = 1;
        st16(r + 12, 0x8080, false);
        st16(r + 18, 0x8080, false);
        CHECK(predict_color_check(p, b, req_len, r, 32));
        st16(r + 12, 0x8081, false);    /* an exact value between two: the same visual one */
        CHECK(predict_color_check(p, b, req_len, r, 32));
        st16(r + 18, 0x8081, false);
        CHECK(!predict_color_check(p, b, req_len, r, 32));
        /* Refused: masks that are not contiguous, a name of length 0. */
        uint8_t bad1[] = { FACT_COLORS, 0x20, 0x05, 0x02, 0x01, 8, 24 };
        uint8_t bad2[] = { FACT_COLORS, 0x20, 0x04, 0x02, 0x01, 8, 24, 0, 1, 2, 3, 4, 5, 6 };
        CHECK(predict_on_fact(q, bad1, sizeof bad1) == -EBADMSG);
        CHECK(predict_on_fact(q, bad2, sizeof bad2) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
        predict_free(q);
    }
}

int main(void)
{
    test_colors();
    return test_summary();
}
