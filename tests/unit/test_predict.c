/* test_predict.c -- the session-wide facts behind local answers (predict*.c): FACT payloads
 * (extensions, atoms, handshakes, root properties, keyboard, fonts, XKB GetMap), handshakes
 * keyed by a connection's history, fonts, and what makes a fact stop being used. Colours,
 * atoms and quiet requests have files of their own (test_predict_*.c). */
#include "predict_helpers.h"

static void test_extension_and_atom_facts(void)
{
    TEST("That extension and atom facts answer QueryExtension, InternAtom and GetAtomName, and bad ones are refused") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        struct predict_questions pq = { 0 };
        uint8_t qe[32];
        make_reply(qe, 0, 0, 7);
        qe[8] = 1;
        qe[9] = XKB_MAJOR;
        CHECK(predict_fact_extension(&fact, "XKEYBOARD", 9, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        int16_t xkb = -1;
        for (size_t i = 0; i < xp_n_extensions; i++)
            if (!strcmp(xp_extensions[i].xname, "XKEYBOARD"))
                xkb = (int16_t)i;
        struct msg_class q = core(98);
        q.query_ext = xkb;
        uint8_t rq[32] = { 98, 0, 5, 0, 9, 0, 0, 0, 'X', 'K', 'E', 'Y', 'B', 'O', 'A', 'R', 'D', 0, 0, 0 };
        CHECK_EQ(answer(p, &pq, &q, rq, 20, 12, &out), 32);
        CHECK(out.len == 32 && !memcmp(buf_head(&out) + 8, qe + 8, 24) && ld16(buf_head(&out) + 2, false) == 12);

        CHECK(predict_fact_atom(&fact, 300, "_TINCAN_TEST", 12) == 0);
        CHECK(predict_fact_atom(&fact, 301, "OTHER", 5) == 0);
        CHECK(learn(p, &fact) == 0);
        uint8_t ia[24] = { 16, 0, 5, 0, 12, 0, 0, 0, '_', 'T', 'I', 'N', 'C', 'A', 'N', '_', 'T', 'E', 'S', 'T' };
        struct msg_class intern = core(16), name = core(17);
        CHECK_EQ(answer(p, &pq, &intern, ia, 20, 3, &out), 32);
        CHECK_EQ(ld32(buf_head(&out) + 8, false), 300);
        uint32_t w = 301;
        uint8_t gan[8];
        request(gan, 17, 0, &w, 1);
        CHECK_EQ(answer(p, &pq, &name, gan, req_len, 4, &out), 40);
        CHECK(!memcmp(buf_head(&out) + 32, "OTHER", 5));
        w = 302;
        request(gan, 17, 0, &w, 1);
        CHECK_EQ(answer(p, &pq, &name, gan, req_len, 4, &out), 0);

        /* Cut short, atom 0, unknown kind: a corrupt frame. */
        uint8_t bad1[] = { FACT_EXTENSION, 9, 'X', 'K' };
        uint8_t bad2[] = { FACT_ATOMS, 0, 1, 'A' };
        uint8_t bad3[] = { FACT_ATOMS, 5, 10, 'A' };
        uint8_t bad4[] = { 99 };
        uint8_t bad5[] = { FACT_EXCHANGE, 0, 4, 1, 2, 3, 4, 32 };
        CHECK(predict_on_fact(p, bad1, sizeof bad1) == -EBADMSG);
        CHECK(predict_on_fact(p, bad2, sizeof bad2) == -EBADMSG);
        CHECK(predict_on_fact(p, bad3, sizeof bad3) == -EBADMSG);
        CHECK(predict_on_fact(p, bad4, sizeof bad4) == -EBADMSG);
        CHECK(predict_on_fact(p, bad5, sizeof bad5) == -EBADMSG);
        CHECK(predict_on_fact(p, bad4, 0) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&pq);
        predict_free(p);
    }
}

static void test_handshakes(void)
{
    TEST("That a handshake is answered only when the connection's earlier requests of the extension match the key") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        uint8_t use[8], qv[12], formats[4], key[16], r[64];
        uint32_t v = 1;
        request(use, XKB_MAJOR, 0, &v, 1);
        CHECK(predict_fact_exchange(&fact, false, use, 8, make_reply(r, 0, 0, 1), 32) == 0);
        CHECK(learn(p, &fact) == 0);
        uint32_t ver[2] = { 0, 11 };
        request(qv, RENDER_MAJOR, 0, ver, 2);
        request(formats, RENDER_MAJOR, 1, NULL, 0);
        memcpy(key, qv, 12);
        memcpy(key + 12, formats, 4);
        CHECK(predict_fact_exchange(&fact, false, qv, 12, make_reply(r, 0, 0, 2), 32) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_fact_exchange(&fact, false, key, 16, make_reply(r, 0, 32, 3), 64) == 0);
        CHECK(learn(p, &fact) == 0);

        struct msg_class c_use = ext("XKEYBOARD", XKB_MAJOR, 0), c_sel = ext("XKEYBOARD", XKB_MAJOR, 1);
        struct msg_class c_qv = ext("RENDER", RENDER_MAJOR, 0), c_fmt = ext("RENDER", RENDER_MAJOR, 1);
        struct predict_questions a = { 0 }, b = { 0 }, c = { 0 };
        /* Connection a: UseExtension first: answered, byte for byte with its sequence number. */
        CHECK_EQ(answer(p, &a, &c_use, use, 8, 6, &out), 32);
        CHECK(ld16(buf_head(&out) + 2, false) == 6 && buf_head(&out)[1] == 1 && buf_head(&out)[9] == 1 + 9);
        predict_track(p, &a, &c_use, use, 8, false);
        /* The same request again has another history: not answered. */
        CHECK_EQ(answer(p, &a, &c_use, use, 8, 7, &out), 0);
        /* Formats before QueryVersion: not answered; after it: answered. */
        CHECK_EQ(answer(p, &a, &c_fmt, formats, 4, 8, &out), 0);
        CHECK_EQ(answer(p, &a, &c_qv, qv, 12, 8, &out), 32);
        predict_track(p, &a, &c_qv, qv, 12, false);
        CHECK_EQ(answer(p, &a, &c_fmt, formats, 4, 9, &out), 64);
        /* Connection b asks for another version: its formats are not the probe's. */
        uint32_t ver2[2] = { 0, 10 };
        uint8_t qv2[12];
        request(qv2, RENDER_MAJOR, 0, ver2, 2);
        CHECK_EQ(answer(p, &b, &c_qv, qv2, 12, 1, &out), 0);
        predict_track(p, &b, &c_qv, qv2, 12, false);
        CHECK_EQ(answer(p, &b, &c_fmt, formats, 4, 2, &out), 0);
        /* Connection c: a request of XKB that is not a handshake taints its history. */
        uint8_t sel[12];
        request(sel, XKB_MAJOR, 1, ver, 2);
        predict_track(p, &c, &c_sel, sel, 12, false);
        CHECK_EQ(answer(p, &c, &c_use, use, 8, 2, &out), 0);
        /* Learnt from a real reply on b, answered on a fresh connection with the same history. */
        struct predict_questions d = { 0 };
        struct msg_class rep = reply_of(&c_fmt);
        predict_ask(&b, &c_fmt, formats, 4, 2, false);
        predict_learn(p, &b, &rep, 2, make_reply(r, 2, 32, 9), 64, false);
        predict_track(p, &b, &c_fmt, formats, 4, false);
        predict_track(p, &d, &c_qv, qv2, 12, false);
        CHECK_EQ(answer(p, &d, &c_fmt, formats, 4, 5, &out), 64);
        CHECK(buf_head(&out)[1] == 9 && ld16(buf_head(&out) + 2, false) == 5);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_questions_free(&b);
        predict_questions_free(&c);
        predict_questions_free(&d);
        predict_free(p);
    }
    TEST("That a handshake's padding (xcb-proto's, left unset by libraries) does not change its key") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        uint8_t qe[32], r[32];
        make_reply(qe, 0, 0, 7);
        qe[8] = 1;
        qe[9] = 133; /* SYNC's major opcode on this server */
        CHECK(predict_fact_extension(&fact, "SYNC", 4, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        uint8_t init[8] = { 133, 0, 2, 0, 3, 1, 0, 0 };     /* Initialize 3.1, as the display side asks it */
        CHECK(predict_fact_exchange(&fact, false, init, 8, make_reply(r, 0, 0, 4), 32) == 0);
        CHECK(learn(p, &fact) == 0);
        struct msg_class c_init = ext("SYNC", 133, 0);
        struct predict_questions a = { 0 };
        uint8_t libxext[8] = { 133, 0, 2, 0, 3, 1, 0x20, 0 }; /* as libXext sends it */
        CHECK_EQ(answer(p, &a, &c_init, libxext, 8, 3, &out), 32);
        libxext[5] = 0; /* another version: not the same question */
        CHECK_EQ(answer(p, &a, &c_init, libxext, 8, 3, &out), 0);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
}

static void test_state(void)
{
    TEST("That RANDR queries are answered from the display side's facts while it watches, keyed by the version agreed") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        uint8_t qe[32], r[64], qv[12], gsrc[8], key[20];
        make_reply(qe, 0, 0, 7);
        qe[8] = 1;
        qe[9] = 139; /* RANDR's major opcode here */
        CHECK(predict_fact_extension(&fact, "RANDR", 5, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        request(qv, 139, 0, (uint32_t[2]){ 1, 6 }, 2);      /* QueryVersion 1.6 */
        request(gsrc, 139, 25, (uint32_t[1]){ ROOT }, 1);    /* GetScreenResourcesCurrent */
        memcpy(key, qv, 12);
        memcpy(key + 12, gsrc, 8);
        struct msg_class c_qv = ext("RANDR", 139, 0), c_sel = ext("RANDR", 139, 4), c_gsrc = ext("RANDR", 139, 25),
                         c_mode = ext("RANDR", 139, 16);
        CHECK(predict_fact_exchange(&fact, false, key, 20, make_reply(r, 0, 32, 5), 64) == 0);
        CHECK(learn(p, &fact) == 0);
        struct predict_questions a = { 0 };
        predict_track(p, &a, &c_qv, qv, 12, false);
        CHECK_EQ(answer(p, &a, &c_gsrc, gsrc, 8, 3, &out), 0); /* not watched: not answered */
        CHECK(predict_fact_state(&fact, "RANDR", true) == 0);  /* watched; forgets what was known */
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gsrc, gsrc, 8, 3, &out), 0);
        CHECK(predict_fact_exchange(&fact, false, key, 20, make_reply(r, 0, 32, 5), 64) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gsrc, gsrc, 8, 3, &out), 64);
        uint8_t sel[12];
        request(sel, 139, 4, (uint32_t[2]){ ROOT, 1 }, 2);   /* SelectInput changes nothing */
        predict_track(p, &a, &c_sel, sel, 12, false);
        CHECK_EQ(answer(p, &a, &c_gsrc, gsrc, 8, 4, &out), 64);
        CHECK(predict_is_state_query(&c_gsrc, gsrc, 8, false) && !predict_is_state_query(&c_sel, sel, 12, false));
        /* Another version agreed: another key. */
        struct predict_questions b = { 0 };
        uint8_t qv5[12];
        request(qv5, 139, 0, (uint32_t[2]){ 1, 5 }, 2);
        predict_track(p, &b, &c_qv, qv5, 12, false);
        CHECK_EQ(answer(p, &b, &c_gsrc, gsrc, 8, 2, &out), 0);
        /* A client's CreateMode may change the state: forgotten on both sides at that point. */
        uint8_t mode[12];
        request(mode, 139, 16, (uint32_t[2]){ ROOT, 0 }, 2);
        predict_track(p, &b, &c_mode, mode, 12, false);
        CHECK_EQ(answer(p, &a, &c_gsrc, gsrc, 8, 5, &out), 0);
        /* A change the display side saw: told again after STATE. */
        CHECK(predict_fact_exchange(&fact, false, key, 20, make_reply(r, 0, 32, 6), 64) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gsrc, gsrc, 8, 6, &out), 64);
        CHECK(predict_fact_state(&fact, "RANDR", true) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gsrc, gsrc, 8, 6, &out), 0);
        /* A handshake after a request that is not one: the version is not known from the bytes. */
        struct predict_questions c = { 0 };
        CHECK(predict_fact_exchange(&fact, false, key, 20, make_reply(r, 0, 32, 6), 64) == 0);
        CHECK(learn(p, &fact) == 0);
        predict_track(p, &c, &c_qv, qv, 12, false);
        predict_track(p, &c, &c_sel, sel, 12, false);
        CHECK_EQ(answer(p, &c, &c_gsrc, gsrc, 8, 3, &out), 64);
        predict_track(p, &c, &c_qv, qv5, 12, false);
        CHECK_EQ(answer(p, &c, &c_gsrc, gsrc, 8, 4, &out), 0);
        uint8_t bad[] = { FACT_STATE, 5, 'R', 'A', 'N', 'D', 'R', 2 };
        CHECK(predict_on_fact(p, bad, sizeof bad) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_questions_free(&b);
        predict_questions_free(&c);
        predict_free(p);
    }
}

static void test_fonts(void)
{
    TEST("That QueryFont is answered for a font opened again by the same name, ListFonts(WithInfo) for the same request") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf out = { 0 };
        uint8_t setup[40] = { 1 };
        struct predict_questions a = { 0 }, b = { 0 };
        st32(setup + 12, 0x400000, false);
        st32(setup + 16, 0x1fffff, false);
        predict_learn_connection(&a, setup, sizeof setup, false);
        st32(setup + 12, 0x600000, false);
        predict_learn_connection(&b, setup, sizeof setup, false);
        struct msg_class of = core(45), qf = core(47), cf = core(46), lf = core(49), qfr = core(47);
        qfr.kind = MSG_REPLY;
        uint8_t o[64], q[8], r[96];
        const uint8_t *o2;
        uint32_t fid = 0x400001;
        /* Unknown font: OpenFont is not quiet, QueryFont not answered. */
        open_font(o, fid, "fixed");
        CHECK(!predict_quiet(p, &a, &of, o, req_len, false));
        predict_track(p, &a, &of, o, req_len, false);
        request(q, 47, 0, &fid, 1);
        CHECK_EQ(answer(p, &a, &qf, q, 8, 2, &out), 0);
        predict_ask(&a, &qf, q, 8, 2, false);
        predict_learn(p, &a, &qfr, 2, make_reply(r, 2, 60, 5), 92, false);
        /* Connection b opens "fixed" under its own id: quiet, and its QueryFont is answered. */
        uint32_t fid_b = 0x600003;
        open_font(o, fid_b, "fixed");
        CHECK(predict_quiet(p, &b, &of, o, req_len, false));
        predict_track(p, &b, &of, o, req_len, false);
        request(q, 47, 0, &fid_b, 1);
        CHECK_EQ(answer(p, &b, &qf, q, 8, 9, &out), 92);
        CHECK(ld16(buf_head(&out) + 2, false) == 9 && buf_head(&out)[40] == (uint8_t)(5 + 40));
        /* Another name under an id that is not b's: neither quiet nor answered. */
        open_font(o, 0x400007, "fixed");
        CHECK(!predict_quiet(p, &b, &of, o, req_len, false));
        open_font(o, 0x600004, "9x15");
        CHECK(!predict_quiet(p, &b, &of, o, req_len, false));
        predict_track(p, &b, &of, o, req_len, false);
        uint32_t fid4 = 0x600004;
        request(q, 47, 0, &fid4, 1);
        CHECK_EQ(answer(p, &b, &qf, q, 8, 10, &out), 0);
        /* Closed: forgotten. */
        request(q, 46, 0, &fid_b, 1);
        predict_track(p, &b, &cf, q, 8, false);
        request(q, 47, 0, &fid_b, 1);
        CHECK_EQ(answer(p, &b, &qf, q, 8, 11, &out), 0);
        /* ListFonts: the same request bytes, the same reply. */
        uint8_t l[16] = { 49, 0, 3, 0, 100, 0, 1, 0, '*', 0, 0, 0 };
        struct msg_class lfr = lf;
        lfr.kind = MSG_REPLY;
        predict_ask(&a, &lf, l, 12, 3, false);
        predict_learn(p, &a, &lfr, 3, make_reply(r, 3, 8, 6), 40, false);
        CHECK_EQ(answer(p, &b, &lf, l, 12, 12, &out), 40);
        /* What the server ignores (the unused byte, the padding) does not matter. */
        l[1] = 1;
        l[9] = 'x';
        CHECK_EQ(answer(p, &b, &lf, l, 12, 12, &out), 40);
        size_t known_len;
        CHECK(predict_font_list_answer(p, l, 12, false, &known_len) && known_len == 40);
        l[8] = '?'; /* but the pattern does */
        CHECK_EQ(answer(p, &b, &lf, l, 12, 12, &out), 0);
        CHECK(!predict_font_list_answer(p, l, 12, false, &known_len) && known_len == 0);
        l[8] = '*';
        l[4] = 99; /* another maximum */
        CHECK_EQ(answer(p, &b, &lf, l, 12, 12, &out), 0);
        /* ListFontsWithInfo: one reply per font, then one with an empty name; all answered. */
        struct msg_class li = core(50), lir = core(50);
        lir.kind = MSG_REPLY;
        uint8_t lw[16] = { 50, 0, 3, 0, 100, 0, 1, 0, 'f', 0, 0, 0 };
        predict_ask(&a, &li, lw, 12, 4, false);
        predict_learn(p, &a, &lir, 4, make_reply(r, 4, 8, 3), 40, false);  /* font 1 (name length 3) */
        CHECK_EQ(answer(p, &b, &li, lw, 12, 13, &out), 0);                 /* not all in yet */
        predict_learn(p, &a, &lir, 4, make_reply(r, 4, 4, 2), 36, false);  /* font 2 */
        make_reply(r, 4, 0, 0);                                            /* the last: no name */
        predict_learn(p, &a, &lir, 4, r, 32, false);
        CHECK_EQ(answer(p, &b, &li, lw, 12, 13, &out), 40 + 36 + 32);
        o2 = buf_head(&out);
        CHECK(ld16(o2 + 2, false) == 13 && ld16(o2 + 40 + 2, false) == 13 && ld16(o2 + 76 + 2, false) == 13);
        CHECK(o2[1] == 3 && o2[40 + 1] == 2 && o2[76 + 1] == 0);
        buf_free(&out);
        predict_questions_free(&a);
        predict_questions_free(&b);
        predict_free(p);
    }
}

static void test_root_properties(void)
{
    TEST("That GetProperty on the root is computed from the watched value, and stops when the value may change") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        struct predict_questions a = { 0 };
        struct msg_class gp = core(20), cp = core(18);
        const char *value = "xterm*font: fixed\n"; /* 18 bytes, RESOURCE_MANAGER (23), STRING (31) */
        CHECK(predict_fact_property(&fact, ROOT, 23, PROP_VALUE, 31, 8, (const uint8_t *)value, 18) == 0);
        CHECK(learn(p, &fact) == 0);
        uint8_t b[24];
        /* Nothing said about the root's other properties yet: not answered. */
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 39, 0, 0, 100), 24, 2, &out), 0);
        CHECK(predict_fact_property(&fact, ROOT, 0, PROP_ABSENT, 0, 0, NULL, 0) == 0);
        CHECK(learn(p, &fact) == 0);
        /* The whole value. */
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 23, 0, 0, 100000000), 24, 2, &out), 32 + 20);
        const uint8_t *o = buf_head(&out);
        CHECK(o[1] == 8 && ld32(o + 4, false) == 5 && ld32(o + 8, false) == 31 && ld32(o + 12, false) == 0 &&
              ld32(o + 16, false) == 18 && !memcmp(o + 32, value, 18) && o[50] == 0 && o[51] == 0);
        /* Offset 1 (4 bytes), length 2 (8 bytes): 8 bytes, 6 after. */
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 23, 31, 1, 2), 24, 3, &out), 40);
        o = buf_head(&out);
        CHECK(ld32(o + 12, false) == 6 && ld32(o + 16, false) == 8 && !memcmp(o + 32, value + 4, 8));
        /* Another type: type and size, no value. */
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 23, 4 /* ATOM */, 0, 10), 24, 4, &out), 32);
        o = buf_head(&out);
        CHECK(o[1] == 8 && ld32(o + 8, false) == 31 && ld32(o + 12, false) == 18 && ld32(o + 16, false) == 0);
        /* ... in format units, as the X.Org server gives it (not bytes): two CARDINALs say 2. */
        const uint8_t two[8] = { 1, 0, 0, 0, 2, 0, 0, 0 };
        CHECK(predict_fact_property(&fact, ROOT, 41, PROP_VALUE, 6 /* CARDINAL */, 32, two, 8) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 41, 4 /* ATOM */, 0, 10), 24, 4, &out), 32);
        o = buf_head(&out);
        CHECK(o[1] == 32 && ld32(o + 8, false) == 6 && ld32(o + 12, false) == 2 && ld32(o + 16, false) == 0);
        /* A property the root does not have: None. */
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 39, 0, 0, 10), 24, 5, &out), 32);
        CHECK(buf_head(&out)[1] == 0 && ld32(buf_head(&out) + 8, false) == 0);
        /* Offset beyond the value (BadValue), delete, an unknown atom, another window: not answered. */
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 23, 0, 5, 10), 24, 6, &out), 0);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, true, ROOT, 23, 0, 0, 10), 24, 6, &out), 0);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 5000, 0, 0, 10), 24, 6, &out), 0);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT + 1, 23, 0, 0, 10), 24, 6, &out), 0);
        /* A client changes it (either side sees the request): no longer answered. */
        uint32_t w[4] = { ROOT, 23, 31, 0 };
        request(b, 18, 0, w, 4);
        predict_track(p, &a, &cp, b, req_len, false);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 23, 0, 0, 10), 24, 7, &out), 0);
        /* A property created unseen: the display side says so; then the window is forgotten. */
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 40, 0, 0, 10), 24, 8, &out), 32);
        CHECK(predict_fact_property(&fact, ROOT, 40, PROP_UNKNOWN, 0, 0, NULL, 0) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 40, 0, 0, 10), 24, 8, &out), 0);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 39, 0, 0, 10), 24, 8, &out), 32);
        CHECK(predict_fact_property(&fact, ROOT, 0, PROP_UNKNOWN, 0, 0, NULL, 0) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gp, get_property(b, false, ROOT, 39, 0, 0, 10), 24, 8, &out), 0);
        /* Malformed: a value of property 0, a bad format, a length not in units of it. */
        uint8_t bad1[] = { FACT_PROPERTY, ROOT, 0, PROP_VALUE, 31, 8, 0 };
        uint8_t bad2[] = { FACT_PROPERTY, ROOT, 23, PROP_VALUE, 31, 7, 0 };
        uint8_t bad3[] = { FACT_PROPERTY, ROOT, 23, PROP_VALUE, 31, 32, 2, 1, 2 };
        uint8_t bad4[] = { FACT_PROPERTY, ROOT, 23, 3 };
        CHECK(predict_on_fact(p, bad1, sizeof bad1) == -EBADMSG);
        CHECK(predict_on_fact(p, bad2, sizeof bad2) == -EBADMSG);
        CHECK(predict_on_fact(p, bad3, sizeof bad3) == -EBADMSG);
        CHECK(predict_on_fact(p, bad4, sizeof bad4) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
}

static void test_selections(void)
{
    TEST("That GetSelectionOwner is answered from SELECTION facts until a client here sets that selection's owner") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        struct predict_questions a = { 0 };
        struct msg_class gso = core(23), sso = core(22);
        uint8_t b[16], q300[8], q301[8], q302[8];
        /* request() sets req_len: made first, not inside answer()'s arguments */
        request(q301, 23, 0, (uint32_t[1]){ 301 }, 1);
        request(q302, 23, 0, (uint32_t[1]){ 302 }, 1);
        request(q300, 23, 0, (uint32_t[1]){ 300 }, 1);
        /* Nothing told: asked of the server. */
        CHECK_EQ(answer(p, &a, &gso, q300, 8, 2, &out), 0);
        CHECK(predict_fact_selection(&fact, 300, 0x400001) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gso, q300, 8, 3, &out), 32);
        const uint8_t *o = buf_head(&out);
        CHECK(o[0] == 1 && ld16(o + 2, false) == 3 && ld32(o + 4, false) == 0 && ld32(o + 8, false) == 0x400001);
        /* Another selection, and a request of another length: not answered. */
        CHECK_EQ(answer(p, &a, &gso, q301, 8, 4, &out), 0);
        request(b, 23, 0, (uint32_t[2]){ 300, 0 }, 2);
        CHECK_EQ(answer(p, &a, &gso, b, 12, 4, &out), 0);
        /* The owner moves (another client, seen by the watch): the new one; then None. */
        CHECK(predict_fact_selection(&fact, 300, 0) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gso, q300, 8, 5, &out), 32);
        CHECK(ld32(buf_head(&out) + 8, false) == 0);
        CHECK(predict_is_state_query(&gso, q300, 8, false));
        /* A client here sets it: asked of the server from then on, whatever is told after. */
        request(b, 22, 0, (uint32_t[3]){ 0x200001, 300, 0 }, 3);
        predict_track(p, &a, &sso, b, req_len, false);
        CHECK_EQ(answer(p, &a, &gso, q300, 8, 6, &out), 0);
        CHECK(predict_fact_selection(&fact, 300, 0x200001) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gso, q300, 8, 7, &out), 0);
        /* Clients set the owners of more selections than are kept: none is answered. */
        CHECK(predict_fact_selection(&fact, 302, 0) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gso, q302, 8, 8, &out), 32);
        for (uint32_t sel = 400; sel < 440; sel++) {
            request(b, 22, 0, (uint32_t[3]){ 0x200001, sel, 0 }, 3);
            predict_track(p, &a, &sso, b, req_len, false);
        }
        CHECK_EQ(answer(p, &a, &gso, q302, 8, 9, &out), 0);
        /* Malformed: selection 0, an owner beyond 32 bits, cut short, bytes after. */
        uint8_t bad1[] = { FACT_SELECTION, 0, 1 };
        uint8_t bad2[] = { FACT_SELECTION, 5, 0xff, 0xff, 0xff, 0xff, 0x7f };
        uint8_t bad3[] = { FACT_SELECTION, 5 };
        uint8_t bad4[] = { FACT_SELECTION, 5, 1, 0 };
        CHECK(predict_on_fact(p, bad1, sizeof bad1) == -EBADMSG);
        CHECK(predict_on_fact(p, bad2, sizeof bad2) == -EBADMSG);
        CHECK(predict_on_fact(p, bad3, sizeof bad3) == -EBADMSG);
        CHECK(predict_on_fact(p, bad4, sizeof bad4) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
}

static void test_keyboard(void)
{
    TEST("That the keyboard mappings answer GetKeyboardMapping and GetModifierMapping until they may change") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        struct predict_questions a = { 0 };
        uint8_t keysyms[4 * 248 * 2], mods[8 * 2];
        for (unsigned i = 0; i < 248 * 2; i++)
            st32(keysyms + 4 * i, 0x1000 + i, false);
        for (unsigned i = 0; i < sizeof mods; i++)
            mods[i] = (uint8_t)(8 + i);
        CHECK(predict_fact_keyboard(&fact, true, 8, 255, 2, keysyms, 2, mods) == 0);
        CHECK(learn(p, &fact) == 0);
        struct msg_class gkm = core(101), gmm = core(119), ckm = core(100);
        uint8_t rq[8] = { 101, 0, 2, 0, 10, 3, 0, 0 };
        CHECK_EQ(answer(p, &a, &gkm, rq, 8, 4, &out), 32 + 4 * 6);
        const uint8_t *o = buf_head(&out);
        CHECK(o[1] == 2 && ld32(o + 4, false) == 6 && ld32(o + 32, false) == 0x1000 + 4 && ld32(o + 52, false) == 0x1000 + 9);
        rq[4] = 7; /* below the first keycode: BadValue */
        CHECK_EQ(answer(p, &a, &gkm, rq, 8, 4, &out), 0);
        rq[4] = 250, rq[5] = 7; /* beyond the last */
        CHECK_EQ(answer(p, &a, &gkm, rq, 8, 4, &out), 0);
        uint8_t mm[4] = { 119, 0, 1, 0 };
        CHECK_EQ(answer(p, &a, &gmm, mm, 4, 5, &out), 48);
        CHECK(buf_head(&out)[1] == 2 && !memcmp(buf_head(&out) + 32, mods, 16));
        /* A client changes the mapping: asked of the server until the display side says it again. */
        uint8_t change[12] = { 100, 1, 3, 0, 8, 2, 0, 0, 1, 0, 0, 0 };
        predict_track(p, &a, &ckm, change, 12, false);
        CHECK_EQ(answer(p, &a, &gmm, mm, 4, 6, &out), 0);
        CHECK(predict_fact_keyboard(&fact, true, 8, 255, 2, keysyms, 2, mods) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gmm, mm, 4, 7, &out), 48);
        /* The display side saw a MappingNotify. */
        CHECK(predict_fact_keyboard(&fact, false, 0, 0, 0, NULL, 0, NULL) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &gmm, mm, 4, 8, &out), 0);
        /* Cut short, keycodes below 8. */
        uint8_t bad1[] = { FACT_KEYBOARD, 1, 8, 9, 1, 0, 0, 0 };
        uint8_t bad2[] = { FACT_KEYBOARD, 1, 3, 3, 1, 0, 0, 0, 0, 0 };
        CHECK(predict_on_fact(p, bad1, sizeof bad1) == -EBADMSG);
        CHECK(predict_on_fact(p, bad2, sizeof bad2) == -EBADMSG);
        /* An extension xcb-proto does not name is answered by its name. */
        uint8_t qe[32] = { 1 };
        CHECK(predict_fact_extension(&fact, "XFree86-Bigfont", 15, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        uint8_t rqe[24] = { 98, 0, 6, 0, 15, 0, 0, 0, 'X', 'F', 'r', 'e', 'e', '8', '6', '-', 'B', 'i', 'g', 'f', 'o', 'n', 't' };
        struct msg_class q = core(98);
        CHECK_EQ(answer(p, &a, &q, rqe, 24, 9, &out), 32);
        rqe[8] = 'Y';
        CHECK_EQ(answer(p, &a, &q, rqe, 24, 9, &out), 0);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_free(p);
    }
}

static void test_xkb_get_map(void)
{
    TEST("That XKEYBOARD GetMap is answered from the display side's fact until the keyboard changes, never from clients' replies") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        uint8_t use[8], key[36] = { 0 }, gm[28], r[96], qe[32];
        make_reply(qe, 0, 0, 7); /* the server's XKEYBOARD: its padding is xcb-proto's */
        qe[8] = 1;
        qe[9] = XKB_MAJOR;
        CHECK(predict_fact_extension(&fact, "XKEYBOARD", 9, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        request(use, XKB_MAJOR, 0, (uint32_t[1]){ 1 }, 1);
        memcpy(key, use, 8);
        request(key + 8, XKB_MAJOR, 8, (uint32_t[6]){ 0x00070100 }, 6);
        memcpy(gm, key + 8, 28);
        gm[26] = 0x5f; /* Xlib leaves the pad unset */
        gm[27] = 0x43;
        struct msg_class c_use = ext("XKEYBOARD", XKB_MAJOR, 0), c_gm = ext("XKEYBOARD", XKB_MAJOR, 8);
        struct msg_class c_set = ext("XKEYBOARD", XKB_MAJOR, 9), rep = reply_of(&c_gm);
        struct predict_questions a = { 0 }, b = { 0 };
        predict_track(p, &a, &c_use, use, 8, false);
        predict_track(p, &b, &c_use, use, 8, false);
        /* A client's own GetMap reply is not kept: the keyboard may change meanwhile. */
        predict_ask(&b, &c_gm, gm, 28, 2, false);
        predict_learn(p, &b, &rep, 2, make_reply(r, 2, 64, 7), 96, false);
        CHECK_EQ(answer(p, &a, &c_gm, gm, 28, 2, &out), 0);
        CHECK(predict_fact_exchange(&fact, false, key, 36, make_reply(r, 0, 64, 3), 96) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gm, gm, 28, 2, &out), 0); /* XKEYBOARD is not watched yet */
        CHECK(predict_fact_state(&fact, "XKEYBOARD", true) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_fact_exchange(&fact, false, key, 36, make_reply(r, 0, 64, 3), 96) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gm, gm, 28, 2, &out), 96);
        CHECK(buf_head(&out)[1] == 3 && ld16(buf_head(&out) + 2, false) == 2);
        /* The display side saw the keyboard change: forgotten until it says it again. */
        CHECK(predict_fact_keyboard(&fact, false, 0, 0, 0, NULL, 0, NULL) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gm, gm, 28, 2, &out), 0);
        CHECK(predict_fact_exchange(&fact, false, key, 36, make_reply(r, 0, 64, 4), 96) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gm, gm, 28, 2, &out), 96);
        CHECK(buf_head(&out)[1] == 4);
        /* A client's SetMap passing makes it unknown too; the version handshake stays. */
        uint8_t set[8];
        request(set, XKB_MAJOR, 9, (uint32_t[1]){ 0x100 }, 1);
        predict_track(p, &b, &c_set, set, 8, false);
        CHECK_EQ(answer(p, &a, &c_gm, gm, 28, 2, &out), 0);
        struct predict_questions d = { 0 };
        memset(r, 0, 32);
        r[0] = r[1] = 1;
        CHECK(predict_fact_exchange(&fact, false, use, 8, r, 32) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &d, &c_use, use, 8, 1, &out), 32);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_questions_free(&b);
        predict_questions_free(&d);
        predict_free(p);
    }
}

static void test_xkb_state(void)
{
    TEST("That XKEYBOARD's state, controls and names are answered after SelectEvents, and forgotten by the parts their events name") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        uint8_t use[8], sel[16], gs[8], gn[12], latch[16], fake[36], r[96], qe[32], key[20];
        make_reply(qe, 0, 0, 7);
        qe[8] = 1;
        qe[9] = XKB_MAJOR;
        CHECK(predict_fact_extension(&fact, "XKEYBOARD", 9, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        qe[9] = 132;
        CHECK(predict_fact_extension(&fact, "XTEST", 5, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_fact_state(&fact, "XKEYBOARD", true) == 0);
        CHECK(learn(p, &fact) == 0);
        request(use, XKB_MAJOR, 0, (uint32_t[1]){ 1 }, 1);
        request(sel, XKB_MAJOR, 1, (uint32_t[3]){ 0x00070100, 0, 0x00070007 }, 3);
        request(gs, XKB_MAJOR, 4, (uint32_t[1]){ 0x00000100 }, 1);
        request(gn, XKB_MAJOR, 17, (uint32_t[2]){ 0x00000003, 0x3fff }, 2);
        struct msg_class c_use = ext("XKEYBOARD", XKB_MAJOR, 0), c_sel = ext("XKEYBOARD", XKB_MAJOR, 1),
                         c_gs = ext("XKEYBOARD", XKB_MAJOR, 4), c_gn = ext("XKEYBOARD", XKB_MAJOR, 17),
                         c_latch = ext("XKEYBOARD", XKB_MAJOR, 5), c_fake = ext("XTEST", 132, 2);
        memcpy(key, use, 8);
        memcpy(key + 8, gs, 8);
        CHECK(predict_fact_exchange(&fact, false, key, 16, make_reply(r, 0, 0, 3), 32) == 0);
        CHECK(learn(p, &fact) == 0);
        memcpy(key + 8, gn, 12);
        CHECK(predict_fact_exchange(&fact, false, key, 20, make_reply(r, 0, 64, 4), 96) == 0);
        CHECK(learn(p, &fact) == 0);
        struct predict_questions a = { 0 }, none = { 0 };
        CHECK_EQ(answer(p, &none, &c_gs, gs, 8, 2, &out), 0); /* no UseExtension on that connection */
        predict_track(p, &a, &c_use, use, 8, false);
        predict_track(p, &a, &c_sel, sel, 16, false);
        gs[6] = 0x20; /* Xlib leaves the pad unset */
        CHECK_EQ(answer(p, &a, &c_gs, gs, 8, 5, &out), 32);
        CHECK(buf_head(&out)[1] == 3 && ld16(buf_head(&out) + 2, false) == 5);
        CHECK_EQ(answer(p, &a, &c_gn, gn, 12, 6, &out), 96);
        /* StateNotify: only GetState forgotten */
        CHECK(predict_fact_state_of(&fact, "XKEYBOARD", true, 1u << 4) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gs, gs, 8, 7, &out), 0);
        CHECK_EQ(answer(p, &a, &c_gn, gn, 12, 8, &out), 96);
        memcpy(key + 8, gs, 8);
        CHECK(predict_fact_exchange(&fact, false, key, 16, make_reply(r, 0, 0, 5), 32) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gs, gs, 8, 9, &out), 32);
        /* A client's LatchLockState, or its XTEST FakeInput, changes the state: forgotten */
        request(latch, XKB_MAJOR, 5, (uint32_t[3]){ 0x100, 0, 0 }, 3);
        predict_track(p, &a, &c_latch, latch, 16, false);
        CHECK_EQ(answer(p, &a, &c_gs, gs, 8, 10, &out), 0);
        CHECK_EQ(answer(p, &a, &c_gn, gn, 12, 11, &out), 0);
        CHECK(predict_fact_exchange(&fact, false, key, 16, make_reply(r, 0, 0, 5), 32) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_gs, gs, 8, 12, &out), 32);
        request(fake, 132, 2, (uint32_t[8]){ 2 | 38 << 8 }, 8);
        predict_track(p, &none, &c_fake, fake, 36, false);
        CHECK_EQ(answer(p, &a, &c_gs, gs, 8, 13, &out), 0);
        /* STATE's minors: a u32 after watched, not 0, nothing after it */
        uint8_t bad0[] = { FACT_STATE, 9, 'X', 'K', 'E', 'Y', 'B', 'O', 'A', 'R', 'D', 1, 0, 0, 0, 0 };
        uint8_t bad_short[] = { FACT_STATE, 9, 'X', 'K', 'E', 'Y', 'B', 'O', 'A', 'R', 'D', 1, 16, 0 };
        uint8_t bad_long[] = { FACT_STATE, 9, 'X', 'K', 'E', 'Y', 'B', 'O', 'A', 'R', 'D', 1, 16, 0, 0, 0, 0 };
        CHECK(predict_on_fact(p, bad0, sizeof bad0) == -EBADMSG);
        CHECK(predict_on_fact(p, bad_short, sizeof bad_short) == -EBADMSG);
        CHECK(predict_on_fact(p, bad_long, sizeof bad_long) == -EBADMSG);
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_questions_free(&none);
        predict_free(p);
    }
}

static void test_list_extensions(void)
{
    TEST("That ListExtensions is answered from the display side's list, whatever its unused byte") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        uint8_t req[4] = { 99, 0, 1, 0 }, r[40];
        struct msg_class c = core(99);
        struct predict_questions a = { 0 };
        CHECK_EQ(answer(p, &a, &c, req, 4, 3, &out), 0);
        make_reply(r, 0, 8, 2); /* two names' worth of bytes */
        CHECK(predict_fact_exchange(&fact, false, req, 4, r, 40) == 0);
        CHECK(learn(p, &fact) == 0);
        req[1] = 0x02; /* GTK 3's */
        CHECK_EQ(answer(p, &a, &c, req, 4, 3, &out), 40);
        CHECK(ld16(buf_head(&out) + 2, false) == 3 && !memcmp(buf_head(&out) + 4, r + 4, 36));
        buf_free(&fact);
        buf_free(&out);
        predict_free(p);
    }
}

int main(void)
{
    test_list_extensions();
    test_extension_and_atom_facts();
    test_handshakes();
    test_state();
    test_fonts();
    test_root_properties();
    test_selections();
    test_keyboard();
    test_xkb_get_map();
    test_xkb_state();
    return test_summary();
}
