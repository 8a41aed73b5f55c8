/* test_predict_atoms.c -- atoms answered locally (predict_atoms.c): the atom census and
 * atoms told by their name's hash. */
#include "predict_helpers.h"

static void test_atom_census(void)
{
    TEST("That only-if-exists InternAtom of an unknown name is None exactly while the atom census is current") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct predict_questions a = { 0 };
        struct buf fact = { 0 }, out = { 0 };
        uint8_t b[64], r[32];
        struct msg_class ia = core(16), rep = reply_of(&ia);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 1, &out), 0); /* no census yet */
        CHECK(predict_fact_atom(&fact, 69, "_A", 2) == 0 && predict_fact_atom(&fact, 70, "_B", 2) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_fact_census(&fact, 71) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 2, &out), 32);
        CHECK(ld32(buf_head(&out) + 8, false) == 0);
        struct msg_class rcls = reply_of(&ia);
        CHECK(predict_is_atom_none(&rcls, buf_head(&out), out.len, false));
        buf_clear(&out);
        CHECK(predict_atom_none_reply(&out, 2, false) == 0 && out.len == 32 && ld16(buf_head(&out) + 2, false) == 2);
        intern(b, false, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 2, &out), 0); /* it would make one */
        intern(b, true, "");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 2, &out), 0);
        intern(b, true, "_B");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 2, &out), 32);
        CHECK(ld32(buf_head(&out) + 8, false) == 70);
        /* An atom learnt from a reply, beyond a gap (another client made 71): not current. */
        intern(b, false, "_D");
        predict_ask(&a, &ia, b, req_len, 3, false);
        memset(r, 0, 32);
        r[0] = 1;
        st32(r + 8, 72, false);
        predict_learn(p, &a, &rep, 3, r, 32, false);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 4, &out), 0);
        /* The display side's poll tells 71 (and the census): current again. */
        CHECK(predict_fact_atom(&fact, 71, "_C", 2) == 0);
        CHECK(learn(p, &fact) == 0);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 4, &out), 32);
        /* A census that arrives after the reply of a later atom does not go back. */
        CHECK(predict_fact_census(&fact, 72) == 0);
        CHECK(learn(p, &fact) == 0);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 4, &out), 32);
        /* The next atom, learnt in order from a reply, keeps it current. */
        intern(b, false, "_E");
        predict_ask(&a, &ia, b, req_len, 5, false);
        st32(r + 8, 73, false);
        predict_learn(p, &a, &rep, 5, r, 32, false);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 6, &out), 32);
        intern(b, true, "_E");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 6, &out), 32);
        CHECK(ld32(buf_head(&out) + 8, false) == 73);
        uint8_t bad[] = { FACT_ATOM_CENSUS, 0 };
        CHECK(predict_on_fact(p, bad, sizeof bad) == -EBADMSG);
        CHECK(predict_on_fact(p, bad, 1) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
}

static void test_atom_hashes(void)
{
    TEST("That atoms told by their names' hashes keep the census current, and a name of a hash told is never answered None") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct predict_questions a = { 0 };
        struct buf fact = { 0 }, out = { 0 };
        uint8_t b[64], r[32];
        struct msg_class ia = core(16), rep = reply_of(&ia);
        CHECK(predict_fact_atom(&fact, 69, "_A", 2) == 0 && learn(p, &fact) == 0);
        CHECK(predict_fact_census(&fact, 70) == 0 && learn(p, &fact) == 0);
        /* A look finds 70 and 71: their hashes, two bytes each, then the census. */
        CHECK(predict_fact_atom_hash(&fact, 70, "_HASHED", 7) == 0 && predict_fact_atom_hash(&fact, 71, "_OTHER", 6) == 0);
        uint16_t h = spec_hash16("_HASHED");
        CHECK(fact.len == 6 && buf_head(&fact)[0] == FACT_ATOM_HASHES && buf_head(&fact)[1] == 70 &&
              buf_head(&fact)[2] == (h & 0xff) && buf_head(&fact)[3] == h >> 8);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_fact_census(&fact, 72) == 0 && learn(p, &fact) == 0);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 1, &out), 32);
        CHECK(ld32(buf_head(&out) + 8, false) == 0);
        /* The names told by hash, and any name of the same hash, go to the server. */
        intern(b, true, "_HASHED");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 1, &out), 0);
        intern(b, true, "_OTHER");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 1, &out), 0);
        char twin[16] = "";
        for (unsigned i = 0; i < 1u << 22 && !twin[0]; i++) {
            char c[16];
            snprintf(c, sizeof c, "_T%u", i);
            if (spec_hash16(c) == h)
                memcpy(twin, c, sizeof c);
        }
        CHECK(twin[0] != 0);
        intern(b, true, twin);
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 1, &out), 0);
        /* A hashed atom learnt from a reply is known by name; the census stays current. */
        intern(b, false, "_HASHED");
        predict_ask(&a, &ia, b, req_len, 2, false);
        memset(r, 0, 32);
        r[0] = 1;
        st32(r + 8, 70, false);
        predict_learn(p, &a, &rep, 2, r, 32, false);
        intern(b, true, "_HASHED");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 3, &out), 32);
        CHECK(ld32(buf_head(&out) + 8, false) == 70);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 3, &out), 32);
        CHECK(ld32(buf_head(&out) + 8, false) == 0);
        /* The next atom from a reply, in order, keeps it current; told again by hash, it
         * counts once. */
        intern(b, false, "_NEXT");
        predict_ask(&a, &ia, b, req_len, 4, false);
        st32(r + 8, 72, false);
        predict_learn(p, &a, &rep, 4, r, 32, false);
        CHECK(predict_fact_atom_hash(&fact, 71, "_OTHER", 6) == 0 && predict_fact_atom_hash(&fact, 72, "_NEXT", 5) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_fact_census(&fact, 73) == 0 && learn(p, &fact) == 0);
        intern(b, true, "_NOPE");
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 5, &out), 32);
        /* A hash told beyond the census: not current until the census covers it. */
        CHECK(predict_fact_atom_hash(&fact, 74, "_FAR", 4) == 0 && learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 5, &out), 0);
        CHECK(predict_fact_atom_hash(&fact, 73, "_NEAR", 5) == 0 && learn(p, &fact) == 0);
        CHECK(predict_fact_census(&fact, 75) == 0 && learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &ia, b, req_len, 5, &out), 32);
        /* Refused: no atom, atom 0, half a hash, beyond 2^32 - 1. */
        uint8_t bad1[] = { FACT_ATOM_HASHES, 5 };
        uint8_t bad2[] = { FACT_ATOM_HASHES, 0, 1, 2 };
        uint8_t bad3[] = { FACT_ATOM_HASHES, 5, 1, 2, 3 };
        uint8_t bad4[] = { FACT_ATOM_HASHES, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3, 4 };
        uint8_t good[] = { FACT_ATOM_HASHES, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2 };
        CHECK(predict_on_fact(p, bad1, sizeof bad1) == -EBADMSG);
        CHECK(predict_on_fact(p, bad2, sizeof bad2) == -EBADMSG);
        CHECK(predict_on_fact(p, bad3, sizeof bad3) == -EBADMSG);
        CHECK(predict_on_fact(p, bad4, sizeof bad4) == -EBADMSG);
        CHECK(predict_on_fact(p, good, sizeof good) == 0);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
}

int main(void)
{
    test_atom_census();
    test_atom_hashes();
    return test_summary();
}
