/* test_predict_color.c -- TrueColor colours answered locally (predict_color.c): the
 * arithmetic from the setup reply, trusted once a real reply matched it; named colours, told
 * one by one or checked in the built-in colour table (color_table.c). */
#include "predict_helpers.h"

#include "proxy/color_table.h"

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

/* The table as docs/PROTOCOL.md 3.2.1 defines it: sorted, lower case, and the hash the
 * COLOR_TABLE fact names computed here again from the entries. */
static void test_color_table_itself(void)
{
    TEST("That the colour table is sorted, in lower case, and hashes to the hash it carries") {
        uint64_t h = 0xcbf29ce484222325ull;
        bool sorted = true, lower = true;
        for (int i = 0; i < COLOR_TABLE_SIZE; i++) {
            const char *n = color_table[i].name;
            size_t len = strlen(n);
            lower = lower && len > 0 && len <= COLOR_TABLE_NAME_MAX;
            for (size_t k = 0; k < len; k++)
                lower = lower && !(n[k] >= 'A' && n[k] <= 'Z');
            sorted = sorted && (i == 0 || strcmp(color_table[i - 1].name, n) < 0);
            for (size_t k = 0; k <= len; k++) /* the name and its 0 byte */
                h = (h ^ (uint8_t)n[k]) * 0x100000001b3ull;
            for (int c = 0; c < 3; c++)
                h = (h ^ color_table[i].rgb[c]) * 0x100000001b3ull;
        }
        CHECK(sorted);
        CHECK(lower);
        CHECK(h == color_table_hash);
        int navy = predict_color_table_find((const uint8_t *)"NaVy", 4);
        CHECK(navy >= 0 && !strcmp(color_table[navy].name, "navy") && color_table[navy].rgb[2] == 128);
        CHECK(predict_color_table_find((const uint8_t *)"alice blue", 10) == 0);
        CHECK(predict_color_table_find((const uint8_t *)"yellowgreen", 11) == COLOR_TABLE_SIZE - 1);
        CHECK(predict_color_table_find((const uint8_t *)"navy ", 5) < 0);
        CHECK(predict_color_table_find((const uint8_t *)"navy", 0) < 0);
        uint8_t longname[300];
        memset(longname, 'a', sizeof longname);
        CHECK(predict_color_table_find(longname, sizeof longname) < 0);
    }
}

/* A predictor given the COLORS fact of the TrueColor map in truecolor_setup (no names). */
static struct predictor *trusted_truecolor(void)
{
    struct predictor *p, *d;
    uint8_t setup[128];
    struct buf fact = { 0 };
    if (predict_new(&p) || predict_new(&d))
        abort();
    predict_learn_setup(d, setup, truecolor_setup(setup), false);
    if (predict_fact_colors(d, &fact, 0x20) || predict_on_fact(p, buf_head(&fact), fact.len))
        abort();
    buf_free(&fact);
    predict_free(d);
    return p;
}

static void test_color_table_fact(void)
{
    TEST("That after COLOR_TABLE every name of the table is answered but those the server did not confirm") {
        struct predictor *p = trusted_truecolor();
        struct predict_questions a = { 0 };
        struct buf fact = { 0 }, out = { 0 };
        struct msg_class anc = core(85), look = core(92);
        uint8_t b[96], off[COLOR_TABLE_OFF_BYTES] = { 0 };
        named(b, 92, 0x20, "Gray80");
        CHECK_EQ(answer(p, &a, &look, b, req_len, 7, &out), 0); /* COLORS named no names */
        int grey75 = predict_color_table_find((const uint8_t *)"grey75", 6);
        CHECK(grey75 >= 0);
        off[grey75 / 8] |= (uint8_t)(1u << (grey75 % 8));
        CHECK(predict_fact_color_table(&fact, off) == 0);
        CHECK(predict_on_fact(p, buf_head(&fact), fact.len) == 0);
        named(b, 92, 0x20, "Gray80");
        CHECK_EQ(answer(p, &a, &look, b, req_len, 7, &out), 32);
        const uint8_t *o = buf_head(&out);
        CHECK(ld16(o + 2, false) == 7 && ld16(o + 8, false) == 0xcccc && ld16(o + 10, false) == 0xcccc &&
              ld16(o + 14, false) == 0xcccc && ld16(o + 18, false) == 0xcccc);
        named(b, 85, 0x20, "DarkBlue");
        CHECK_EQ(answer(p, &a, &anc, b, req_len, 8, &out), 32);
        o = buf_head(&out);
        CHECK(ld32(o + 8, false) == 0x8b && ld16(o + 16, false) == 0x8b8b && ld16(o + 22, false) == 0x8b8b);
        named(b, 92, 0x20, "grey75");          /* not confirmed: the server is asked */
        CHECK_EQ(answer(p, &a, &look, b, req_len, 9, &out), 0);
        named(b, 92, 0x20, "grey101");         /* not in the table */
        CHECK_EQ(answer(p, &a, &look, b, req_len, 9, &out), 0);
        named(b, 92, 0x21, "Gray80");          /* not a trusted colormap */
        CHECK_EQ(answer(p, &a, &look, b, req_len, 9, &out), 0);
        /* A name COLORS gives another value (another database) has that value. */
        struct predictor *d;
        uint8_t setup[128];
        CHECK(predict_new(&d) == 0);
        predict_learn_setup(d, setup, truecolor_setup(setup), false);
        buf_clear(&fact);
        CHECK(predict_fact_colors(d, &fact, 0x20) == 0);
        CHECK(predict_fact_color_name(&fact, "grey75", 6, (uint16_t[3]){ 0x1111, 0x2222, 0x3333 }) == 0);
        CHECK(predict_on_fact(p, buf_head(&fact), fact.len) == 0);
        named(b, 92, 0x20, "GREY75");
        CHECK_EQ(answer(p, &a, &look, b, req_len, 10, &out), 32);
        CHECK(ld16(buf_head(&out) + 8, false) == 0x1111 && ld16(buf_head(&out) + 12, false) == 0x3333);
        predict_free(d);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
    TEST("That a COLOR_TABLE of another table teaches nothing, and a malformed one is refused") {
        struct predictor *p = trusted_truecolor();
        struct predict_questions a = { 0 };
        struct buf fact = { 0 }, out = { 0 };
        struct msg_class look = core(92);
        uint8_t b[96], off[COLOR_TABLE_OFF_BYTES] = { 0 };
        CHECK(predict_fact_color_table(&fact, off) == 0);
        uint8_t *f = (uint8_t *)buf_head(&fact);
        f[1] ^= 1;                             /* another hash */
        CHECK(predict_on_fact(p, f, fact.len) == 0);
        named(b, 92, 0x20, "navy");
        CHECK_EQ(answer(p, &a, &look, b, req_len, 3, &out), 0);
        uint8_t short_hash[] = { FACT_COLOR_TABLE, 1, 2, 3 };
        uint8_t beyond[] = { FACT_COLOR_TABLE, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4 };         /* entry 4 of 4 */
        uint8_t unsorted[] = { FACT_COLOR_TABLE, 0, 0, 0, 0, 0, 0, 0, 0, 9, 5, 5 };    /* 5 twice */
        uint8_t cut[] = { FACT_COLOR_TABLE, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0x80 };         /* a varint cut */
        CHECK(predict_on_fact(p, short_hash, sizeof short_hash) == -EBADMSG);
        CHECK(predict_on_fact(p, beyond, sizeof beyond) == -EBADMSG);
        CHECK(predict_on_fact(p, unsorted, sizeof unsorted) == -EBADMSG);
        CHECK(predict_on_fact(p, cut, sizeof cut) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
}

int main(void)
{
    test_colors();
    test_color_table_itself();
    test_color_table_fact();
    return test_summary();
}
