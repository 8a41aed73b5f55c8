/* test_predict_quiet.c -- quiet requests (predict_quiet.c): those without a reply that
 * only the client's own resources can make fail, in the core protocol and extensions
 * (DOUBLE-BUFFER's back buffers: as the app side tracks them). */
#include "predict_helpers.h"

static void test_quiet(void)
{
    TEST("That only requests on the client's own resources are quiet") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct predict_questions a = { 0 };
        uint8_t b[32];
        uint32_t w[4] = { 0x400002, ROOT, 0, 0 };
        struct msg_class cgc = core(55), cp = core(18), put = core(72), grab = core(28);
        request(b, 55, 0, w, 3);
        CHECK(!predict_quiet(p, &a, &cgc, b, req_len, false)); /* ids not yet known */
        uint8_t setup[40] = { 1 };
        st32(setup + 12, 0x400000, false);
        st32(setup + 16, 0x1fffff, false);
        predict_learn_connection(&a, setup, sizeof setup, false);
        request(b, 55, 0, w, 3);
        CHECK(predict_quiet(p, &a, &cgc, b, req_len, false));
        uint32_t prop_root[4] = { ROOT, 23, 31, 0 };
        request(b, 18, 0, prop_root, 4);
        CHECK(!predict_quiet(p, &a, &cp, b, req_len, false));
        uint32_t draw[3] = { 0x400005, 0x400002, 0 };
        request(b, 72, 2, draw, 3);
        CHECK(predict_quiet(p, &a, &put, b, req_len, false));
        uint32_t foreign_gc[3] = { 0x400005, 0x800002, 0 };
        request(b, 72, 2, foreign_gc, 3);
        CHECK(!predict_quiet(p, &a, &put, b, req_len, false));
        request(b, 28, 0, w, 3);
        CHECK(!predict_quiet(p, &a, &grab, b, req_len, false)); /* too short for a GrabButton */
        struct msg_class gs = core(36), ugs = core(37);
        request(b, 36, 0, NULL, 0);
        CHECK(predict_quiet(p, &a, &gs, b, req_len, false)); /* Grab/UngrabServer: nothing comes back */
        request(b, 37, 0, NULL, 0);
        CHECK(predict_quiet(p, &a, &ugs, b, req_len, false));
        predict_questions_free(&a);
        predict_free(p);
    }
}

static void test_quiet_extensions(void)
{
    TEST("That extension requests on the client's own resources are quiet once the extension is open, and fonts that open") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct predict_questions a = { 0 }, fresh = { 0 };
        uint8_t setup[40] = { 1 }, b[64], r[64];
        st32(setup + 12, 0x400000, false);
        st32(setup + 16, 0x1fffff, false);
        predict_learn_connection(&a, setup, sizeof setup, false);
        predict_learn_connection(&fresh, setup, sizeof setup, false);
        struct buf fact = { 0 };
        /* XKEYBOARD: UseExtension said yes; SelectEvents on the core keyboard. */
        uint8_t use[8], sel[16];
        request(use, XKB_MAJOR, 0, (uint32_t[1]){ 1 }, 1);
        memset(r, 0, 32);
        r[0] = r[1] = 1;
        CHECK(predict_fact_exchange(&fact, false, use, 8, r, 32) == 0);
        CHECK(learn(p, &fact) == 0);
        struct msg_class c_use = ext("XKEYBOARD", XKB_MAJOR, 0), c_sel = ext("XKEYBOARD", XKB_MAJOR, 1);
        request(sel, XKB_MAJOR, 1, (uint32_t[3]){ 0x00020100, 0, 0x00070007 }, 3);
        CHECK(!predict_quiet(p, &a, &c_sel, sel, 16, false)); /* before UseExtension */
        predict_track(p, &a, &c_use, use, 8, false);
        CHECK(predict_quiet(p, &a, &c_sel, sel, 16, false));
        CHECK(!predict_quiet(p, &fresh, &c_sel, sel, 16, false));
        st16(sel + 4, 3, false);           /* the keyboard's device id: known from a GetMap fact */
        CHECK(!predict_quiet(p, &a, &c_sel, sel, 16, false));
        uint8_t key[36] = { 0 };
        memcpy(key, use, 8);
        request(key + 8, XKB_MAJOR, 8, (uint32_t[6]){ 0x00070100 }, 6);
        r[1] = 3;
        CHECK(predict_fact_exchange(&fact, false, key, 36, r, 32) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_quiet(p, &a, &c_sel, sel, 16, false));
        st16(sel + 4, 4, false);
        CHECK(!predict_quiet(p, &a, &c_sel, sel, 16, false));
        /* XFIXES: SetCursorName needs version 2 agreed. */
        uint8_t qv[12], scn[20];
        struct msg_class c_qv = ext("XFIXES", 138, 0), c_scn = ext("XFIXES", 138, 23);
        request(qv, 138, 0, (uint32_t[2]){ 6, 0 }, 2);
        request(scn, 138, 23, (uint32_t[3]){ 0x400007, 5, 0x646e6168 }, 3);
        memset(r, 0, 32);
        r[0] = 1;
        st32(r + 8, 1, false);
        CHECK(predict_fact_exchange(&fact, false, qv, 12, r, 32) == 0);
        CHECK(learn(p, &fact) == 0);
        predict_track(p, &a, &c_qv, qv, 12, false);
        CHECK(!predict_quiet(p, &a, &c_scn, scn, 20, false)); /* version 1 agreed */
        struct predict_questions c = { 0 };
        predict_learn_connection(&c, setup, sizeof setup, false);
        request(qv, 138, 0, (uint32_t[2]){ 5, 0 }, 2);
        st32(r + 8, 5, false);
        CHECK(predict_fact_exchange(&fact, false, qv, 12, r, 32) == 0);
        CHECK(learn(p, &fact) == 0);
        predict_track(p, &c, &c_qv, qv, 12, false);
        CHECK(predict_quiet(p, &c, &c_scn, scn, 20, false));
        st32(scn + 4, 0x800007, false);
        CHECK(!predict_quiet(p, &c, &c_scn, scn, 20, false)); /* not its cursor */
        /* SelectSelectionInput on its own window, of an atom that exists, with defined bits. */
        struct msg_class c_ssi = ext("XFIXES", 138, 2);
        uint8_t ssi[16];
        request(ssi, 138, 2, (uint32_t[3]){ 0x400001, 1 /* PRIMARY, predefined */, 7 }, 3);
        CHECK(predict_quiet(p, &c, &c_ssi, ssi, 16, false));
        CHECK(!predict_quiet(p, &a, &c_ssi, ssi, 16, false)); /* version 1 agreed on a */
        request(ssi, 138, 2, (uint32_t[3]){ 0x400001, 1, 8 }, 3);
        CHECK(!predict_quiet(p, &c, &c_ssi, ssi, 16, false)); /* an undefined bit: BadValue */
        request(ssi, 138, 2, (uint32_t[3]){ 0x400001, 100000, 1 }, 3);
        CHECK(!predict_quiet(p, &c, &c_ssi, ssi, 16, false)); /* an atom not known to exist */
        request(ssi, 138, 2, (uint32_t[3]){ ROOT, 1, 1 }, 3);
        CHECK(!predict_quiet(p, &c, &c_ssi, ssi, 16, false)); /* not its window */
        /* RENDER: pictures of its own drawables, without other resources in the values. */
        struct msg_class cpic = ext("RENDER", RENDER_MAJOR, 4), comp = ext("RENDER", RENDER_MAJOR, 8),
                         rcur = ext("RENDER", RENDER_MAJOR, 27), trap = ext("RENDER", RENDER_MAJOR, 10);
        request(b, RENDER_MAJOR, 4, (uint32_t[4]){ 0x400006, 0x400004, 0x25, 0 }, 4);
        CHECK(predict_quiet(p, &a, &cpic, b, req_len, false));
        request(b, RENDER_MAJOR, 4, (uint32_t[5]){ 0x400006, 0x400004, 0x25, 1u << 6, 0x400009 }, 5);
        CHECK(!predict_quiet(p, &a, &cpic, b, req_len, false)); /* a clip mask */
        request(b, RENDER_MAJOR, 4, (uint32_t[4]){ 0x400006, ROOT, 0x25, 0 }, 4);
        CHECK(!predict_quiet(p, &a, &cpic, b, req_len, false));
        request(b, RENDER_MAJOR, 8, (uint32_t[6]){ 3, 0x400006, 0, 0x400008, 0, 0 }, 6);
        CHECK(predict_quiet(p, &a, &comp, b, req_len, false));
        request(b, RENDER_MAJOR, 27, (uint32_t[3]){ 0x400007, 0x400006, 0 }, 3);
        CHECK(predict_quiet(p, &a, &rcur, b, req_len, false));
        request(b, RENDER_MAJOR, 10, (uint32_t[3]){ 0x400007, 0x400006, 0 }, 3);
        CHECK(!predict_quiet(p, &a, &trap, b, req_len, false));
        /* CompositeGlyphs8: op Over, its pictures and glyph set, no mask format; one element of
         * 3 glyphs, then a switch to a glyph set */
        struct msg_class cg8 = ext("RENDER", RENDER_MAJOR, 23);
        uint32_t g[10] = { 3, 0x400008, 0x400006, 0, 0x400009, 0, 3, 0, 0x00636261, 0 };
        request(b, RENDER_MAJOR, 23, g, 9);
        CHECK(predict_quiet(p, &a, &cg8, b, req_len, false));
        g[3] = 0x25; /* a mask format: a server's id */
        request(b, RENDER_MAJOR, 23, g, 9);
        CHECK(!predict_quiet(p, &a, &cg8, b, req_len, false));
        g[3] = 0;
        g[0] = 14; /* not a standard operator */
        request(b, RENDER_MAJOR, 23, g, 9);
        CHECK(!predict_quiet(p, &a, &cg8, b, req_len, false));
        g[0] = 3;
        g[6] = 0xff; /* a switch: to another client's glyph set */
        g[8] = 0x800009;
        request(b, RENDER_MAJOR, 23, g, 10);
        CHECK(!predict_quiet(p, &a, &cg8, b, req_len, false));
        g[8] = 0x40000a; /* to its own */
        request(b, RENDER_MAJOR, 23, g, 10);
        CHECK(predict_quiet(p, &a, &cg8, b, req_len, false));
        g[6] = 40; /* 40 glyphs in 4 bytes: BadLength */
        request(b, RENDER_MAJOR, 23, g, 10);
        CHECK(!predict_quiet(p, &a, &cg8, b, req_len, false));
        /* GrabButton and RecolorCursor on its own window and cursor. */
        struct msg_class grab = core(28), recolor = core(96), of = core(45);
        request(b, 28, 1, (uint32_t[5]){ 0x400018, 0x0101000c, 0, 0, 0x00000001 }, 5);
        CHECK(predict_quiet(p, &a, &grab, b, req_len, false));
        st32(b + 16, 0x800001, false); /* another client's cursor */
        CHECK(!predict_quiet(p, &a, &grab, b, req_len, false));
        request(b, 28, 1, (uint32_t[5]){ ROOT, 0x0101000c, 0, 0, 0x00000001 }, 5);
        CHECK(!predict_quiet(p, &a, &grab, b, req_len, false));
        request(b, 96, 0, (uint32_t[4]){ 0x400017, 0, 0xffffffff, 0xffff }, 4);
        CHECK(predict_quiet(p, &a, &recolor, b, req_len, false));
        /* OpenFont of a font the display side opened. */
        open_font(b, 0x400002, "cursor");
        CHECK(!predict_quiet(p, &a, &of, b, req_len, false));
        CHECK(predict_fact_font(&fact, "cursor", 6) == 0 && predict_fact_font(&fact, "fixed", 5) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_quiet(p, &a, &of, b, req_len, false));
        open_font(b, 0x400002, "fixedx");
        CHECK(!predict_quiet(p, &a, &of, b, req_len, false));
        uint8_t bad[] = { FACT_FONTS, 3, 'a' };
        CHECK(predict_on_fact(p, bad, sizeof bad) == -EBADMSG);
        buf_free(&fact);
        predict_questions_free(&a);
        predict_questions_free(&c);
        predict_questions_free(&fresh);
        predict_free(p);
    }
}

static void test_quiet_toolkits(void)
{
    TEST("That GTK 3's SHAPE masks, SYNC counters and RANDR SelectInput of the root are quiet, and no others") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct predict_questions a = { 0 }, fresh = { 0 };
        uint8_t setup[40 + 40 + 8 + 24], b[64], r[32];
        truecolor_setup(setup);
        st32(setup + 12, 0x400000, false);
        st32(setup + 16, 0x1fffff, false);
        predict_learn_connection(&a, setup, sizeof setup, false);
        predict_learn_connection(&fresh, setup, sizeof setup, false);
        CHECK(a.root == ROOT);
        /* SHAPE Mask: its own window, a bitmap of its own or None */
        struct msg_class mask = ext("SHAPE", 129, 2), sel = ext("SHAPE", 129, 6), qe = ext("SHAPE", 129, 5);
        request(b, 129, 2, (uint32_t[4]){ 0x0200, 0x400002, 0, 0 }, 4);
        CHECK(predict_quiet(p, &a, &mask, b, req_len, false));
        st32(b + 16, 0x400009, false);
        CHECK(predict_quiet(p, &a, &mask, b, req_len, false));
        st32(b + 16, 0x800009, false);
        CHECK(!predict_quiet(p, &a, &mask, b, req_len, false)); /* another client's bitmap */
        request(b, 129, 2, (uint32_t[4]){ 0x0200, ROOT, 0, 0 }, 4);
        CHECK(!predict_quiet(p, &a, &mask, b, req_len, false));
        request(b, 129, 6, (uint32_t[2]){ 0x400002, 1 }, 2);
        CHECK(predict_quiet(p, &a, &sel, b, req_len, false));
        request(b, 129, 5, (uint32_t[1]){ 0x400002 }, 1);
        CHECK(!predict_quiet(p, &a, &qe, b, req_len, false)); /* QueryExtents has a reply */
        /* SYNC: counters of its own; ChangeCounter may overflow */
        struct msg_class cc = ext("SYNC", 133, 2), sc = ext("SYNC", 133, 3), chg = ext("SYNC", 133, 4),
                         dc = ext("SYNC", 133, 6);
        request(b, 133, 2, (uint32_t[3]){ 0x400004, 0, 0 }, 3);
        CHECK(predict_quiet(p, &a, &cc, b, req_len, false));
        request(b, 133, 3, (uint32_t[3]){ 0x400004, 0, 1 }, 3);
        CHECK(predict_quiet(p, &a, &sc, b, req_len, false));
        request(b, 133, 3, (uint32_t[3]){ 0x800004, 0, 1 }, 3);
        CHECK(!predict_quiet(p, &a, &sc, b, req_len, false));
        request(b, 133, 4, (uint32_t[3]){ 0x400004, 0, 1 }, 3);
        CHECK(!predict_quiet(p, &a, &chg, b, req_len, false));
        request(b, 133, 6, (uint32_t[1]){ 0x400004 }, 1);
        CHECK(predict_quiet(p, &a, &dc, b, req_len, false));
        /* RANDR SelectInput: once QueryVersion's reply is known to the connection */
        struct buf fact = { 0 };
        struct msg_class qv = ext("RANDR", 140, 0), rsel = ext("RANDR", 140, 4);
        uint8_t q[12];
        request(q, 140, 0, (uint32_t[2]){ 1, 6 }, 2);
        CHECK(predict_fact_exchange(&fact, false, q, 12, make_reply(r, 0, 0, 0), 32) == 0);
        CHECK(learn(p, &fact) == 0);
        request(b, 140, 4, (uint32_t[2]){ ROOT, 0x0b }, 2);
        CHECK(!predict_quiet(p, &a, &rsel, b, req_len, false)); /* before QueryVersion */
        predict_track(p, &a, &qv, q, 12, false);
        CHECK(predict_quiet(p, &a, &rsel, b, req_len, false));
        request(b, 140, 4, (uint32_t[2]){ 0x400002, 0xff }, 2);
        CHECK(predict_quiet(p, &a, &rsel, b, req_len, false));
        request(b, 140, 4, (uint32_t[2]){ ROOT, 0x100 }, 2);
        CHECK(!predict_quiet(p, &a, &rsel, b, req_len, false)); /* an undefined bit */
        request(b, 140, 4, (uint32_t[2]){ 0x800002, 1 }, 2);
        CHECK(!predict_quiet(p, &a, &rsel, b, req_len, false)); /* another client's window */
        predict_track(p, &fresh, &rsel, b, req_len, false);
        request(b, 140, 4, (uint32_t[2]){ ROOT, 1 }, 2);
        CHECK(!predict_quiet(p, &fresh, &rsel, b, req_len, false)); /* its first RANDR request was not QueryVersion */
        /* CopyArea among its own drawables with its own GC (channel_app.c adds: no event, or
         * its NoExpose answered), not from another client's */
        struct msg_class copy = core(62);
        request(b, 62, 0, (uint32_t[6]){ 0x400009, 0x400002, 0x400005, 0, 0, 0x00050005 }, 6);
        CHECK(predict_copy_own(&a, &copy, b, req_len, false));
        st32(b + 4, ROOT, false);
        CHECK(!predict_copy_own(&a, &copy, b, req_len, false));
        request(b, 62, 0, (uint32_t[6]){ 0x400009, 0x400002, 0x800005, 0, 0, 0x00050005 }, 6);
        CHECK(!predict_copy_own(&a, &copy, b, req_len, false));
        CHECK(!predict_quiet(p, &a, &copy, b, req_len, false)); /* not quiet by itself: its events */
        /* ChangeWindowAttributes of the root's event mask, but for the exclusive masks */
        struct msg_class cwa = core(2);
        request(b, 2, 0, (uint32_t[3]){ ROOT, 1u << 11, 0x00420000 }, 3);
        CHECK(predict_quiet(p, &a, &cwa, b, req_len, false));
        CHECK(!predict_quiet(p, &(struct predict_questions){ 0 }, &cwa, b, req_len, false)); /* root not known */
        request(b, 2, 0, (uint32_t[3]){ ROOT, 1u << 11, 0x00100000 }, 3);
        CHECK(!predict_quiet(p, &a, &cwa, b, req_len, false)); /* SubstructureRedirect: a window manager's */
        request(b, 2, 0, (uint32_t[3]){ ROOT, 1u << 11, 4 }, 3);
        CHECK(!predict_quiet(p, &a, &cwa, b, req_len, false)); /* ButtonPress */
        request(b, 2, 0, (uint32_t[4]){ ROOT, 1u << 11 | 1u << 14, 0x20000, 0 }, 4);
        CHECK(!predict_quiet(p, &a, &cwa, b, req_len, false)); /* and a cursor */
        buf_free(&fact);
        predict_questions_free(&a);
        predict_questions_free(&fresh);
        predict_free(p);
    }
}

static void test_xkb_flags(void)
{
    TEST("That XKEYBOARD PerClientFlags is computed from the connection's own flags and the server's reply to none") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct buf fact = { 0 }, out = { 0 };
        uint8_t use[8], r[32], key[36], pcf[28], qe[32];
        memset(qe, 0, 32);
        qe[8] = 1;
        qe[9] = XKB_MAJOR;
        CHECK(predict_fact_extension(&fact, "XKEYBOARD", 9, qe) == 0);
        CHECK(learn(p, &fact) == 0);
        request(use, XKB_MAJOR, 0, (uint32_t[1]){ 1 }, 1);
        memset(r, 0, 32);
        r[0] = r[1] = 1;
        CHECK(predict_fact_exchange(&fact, false, use, 8, r, 32) == 0);
        CHECK(learn(p, &fact) == 0);
        struct msg_class c_use = ext("XKEYBOARD", XKB_MAJOR, 0), c_pcf = ext("XKEYBOARD", XKB_MAJOR, 21);
        struct predict_questions a = { 0 };
        predict_track(p, &a, &c_use, use, 8, false);
        request(pcf, XKB_MAJOR, 21, (uint32_t[6]){ 0x100, 1, 1 }, 6);
        CHECK_EQ(answer(p, &a, &c_pcf, pcf, 28, 4, &out), 0); /* the server's own reply not known yet */
        memcpy(key, use, 8);
        request(key + 8, XKB_MAJOR, 21, (uint32_t[6]){ 0x100 }, 6);
        memset(r, 0, 32);
        r[0] = 1;
        r[8] = 0x1f; /* supported */
        CHECK(predict_fact_exchange(&fact, false, key, 36, r, 32) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK_EQ(answer(p, &a, &c_pcf, pcf, 28, 4, &out), 32);
        CHECK(ld16(buf_head(&out) + 2, false) == 4 && ld32(buf_head(&out) + 8, false) == 0x1f &&
              ld32(buf_head(&out) + 12, false) == 1);
        predict_track(p, &a, &c_pcf, pcf, 28, false);
        request(pcf, XKB_MAJOR, 21, (uint32_t[6]){ 0x100 }, 6); /* a question: no change */
        CHECK_EQ(answer(p, &a, &c_pcf, pcf, 28, 5, &out), 32);
        CHECK(ld32(buf_head(&out) + 12, false) == 1);
        request(pcf, XKB_MAJOR, 21, (uint32_t[6]){ 0x100, 3, 4 }, 6);
        CHECK_EQ(answer(p, &a, &c_pcf, pcf, 28, 6, &out), 0); /* a value outside change: BadMatch */
        request(pcf, XKB_MAJOR, 21, (uint32_t[6]){ 0x105, 1, 0 }, 6);
        CHECK_EQ(answer(p, &a, &c_pcf, pcf, 28, 6, &out), 0); /* another device */
        request(pcf, XKB_MAJOR, 21, (uint32_t[6]){ 0x100, 4, 4, 1, 1, 1 }, 6);
        CHECK_EQ(answer(p, &a, &c_pcf, pcf, 28, 6, &out), 0); /* auto-reset controls: per-client controls too */
        predict_track(p, &a, &c_pcf, pcf, 28, false);
        request(pcf, XKB_MAJOR, 21, (uint32_t[6]){ 0x100 }, 6);
        CHECK_EQ(answer(p, &a, &c_pcf, pcf, 28, 7, &out), 0); /* its flags no longer known */
        struct predict_questions b = { 0 };
        CHECK_EQ(answer(p, &b, &c_pcf, pcf, 28, 7, &out), 0); /* no UseExtension */
        buf_free(&fact);
        buf_free(&out);
        predict_questions_free(&a);
        predict_questions_free(&b);
        predict_free(p);
    }
}

static void test_quiet_emacs(void)
{
    TEST("That emacs's SendEvent, animated cursor, trapezoids, filters, masked glyphs and buffer swaps are quiet, and no others") {
        struct predictor *p;
        CHECK(predict_new(&p) == 0);
        struct predict_questions a = { 0 };
        uint8_t setup[40 + 40 + 8 + 24], b[128], r[128];
        truecolor_setup(setup);
        st32(setup + 12, 0x400000, false);
        st32(setup + 16, 0x1fffff, false);
        predict_learn_connection(&a, setup, sizeof setup, false);
        /* SendEvent: a ClientMessage of format 32 to the root, or to its own window */
        struct msg_class se = core(25);
        uint32_t ev[10] = { ROOT, 0x180000, 33 | 32u << 8, 0x400002, 0x155 };
        request(b, 25, 0, ev, 10);
        CHECK(req_len == 44 && predict_quiet(p, &a, &se, b, req_len, false));
        ev[0] = 0x400002;
        request(b, 25, 1, ev, 10);
        CHECK(predict_quiet(p, &a, &se, b, req_len, false));
        ev[0] = 0x800002; /* another client's window: it may be gone */
        request(b, 25, 0, ev, 10);
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false));
        ev[0] = 1; /* InputFocus: wherever the focus is */
        request(b, 25, 0, ev, 10);
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false));
        ev[0] = ROOT;
        request(b, 25, 2, ev, 10); /* propagate not a boolean: BadValue */
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false));
        ev[1] = 0x2000000; /* an undefined mask bit */
        request(b, 25, 0, ev, 10);
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false));
        ev[1] = 0x180000;
        ev[2] = 33 | 7u << 8; /* a ClientMessage of format 7 */
        request(b, 25, 0, ev, 10);
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false));
        ev[2] = 35; /* GenericEvent */
        request(b, 25, 0, ev, 10);
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false));
        ev[2] = 1; /* a reply's code */
        request(b, 25, 0, ev, 10);
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false));
        ev[2] = 12; /* Expose */
        request(b, 25, 0, ev, 10);
        CHECK(predict_quiet(p, &a, &se, b, req_len, false));
        request(b, 25, 0, ev, 9);
        CHECK(!predict_quiet(p, &a, &se, b, req_len, false)); /* cut short */
        /* CreateAnimCursor: its id and its own cursors, at least one */
        struct msg_class anim = ext("RENDER", RENDER_MAJOR, 31);
        request(b, RENDER_MAJOR, 31, (uint32_t[5]){ 0x400030, 0x400010, 50, 0x400011, 50 }, 5);
        CHECK(predict_quiet(p, &a, &anim, b, req_len, false));
        request(b, RENDER_MAJOR, 31, (uint32_t[5]){ 0x400030, 0x400010, 50, 0x800011, 50 }, 5);
        CHECK(!predict_quiet(p, &a, &anim, b, req_len, false)); /* another client's cursor */
        request(b, RENDER_MAJOR, 31, (uint32_t[1]){ 0x400030 }, 1);
        CHECK(!predict_quiet(p, &a, &anim, b, req_len, false)); /* no cursor */
        request(b, RENDER_MAJOR, 31, (uint32_t[4]){ 0x400030, 0x400010, 50, 0x400011 }, 4);
        CHECK(!predict_quiet(p, &a, &anim, b, req_len, false)); /* an odd length: BadLength */
        /* SetPictureFilter: its own picture, a standard filter, no values */
        struct msg_class spf = ext("RENDER", RENDER_MAJOR, 30);
        request(b, RENDER_MAJOR, 30, (uint32_t[4]){ 0x400006, 8, 0x696c6962, 0x7261656e }, 4); /* "bilinear" */
        CHECK(predict_quiet(p, &a, &spf, b, req_len, false));
        request(b, RENDER_MAJOR, 30, (uint32_t[5]){ 0x400006, 8, 0x696c6962, 0x7261656e, 0x10000 }, 5);
        CHECK(!predict_quiet(p, &a, &spf, b, req_len, false)); /* a value: BadMatch */
        request(b, RENDER_MAJOR, 30, (uint32_t[4]){ 0x400006, 8, 0x696c6962, 0x7261656f }, 4);
        CHECK(!predict_quiet(p, &a, &spf, b, req_len, false)); /* "bilineao": BadName */
        request(b, RENDER_MAJOR, 30, (uint32_t[3]){ 0x400006, 4, 0x74736562 }, 3); /* "best" */
        CHECK(predict_quiet(p, &a, &spf, b, req_len, false));
        request(b, RENDER_MAJOR, 30, (uint32_t[3]){ 0x800006, 4, 0x74736562 }, 3);
        CHECK(!predict_quiet(p, &a, &spf, b, req_len, false));
        /* Trapezoids and CompositeGlyphs8 with a mask format: quiet once it is one of the
         * server's formats, from a QueryPictFormats reply the display side got */
        struct msg_class trap = ext("RENDER", RENDER_MAJOR, 10), cg8 = ext("RENDER", RENDER_MAJOR, 23);
        uint32_t t[15] = { 3, 0x400008, 0x400006, 0x2c, 0 };
        request(b, RENDER_MAJOR, 10, t, 15);
        CHECK(req_len == 64 && !predict_quiet(p, &a, &trap, b, req_len, false));
        uint32_t g[9] = { 3, 0x400008, 0x400006, 0x2c, 0x400009, 0, 3, 0, 0x00636261 };
        request(b + 64, RENDER_MAJOR, 23, g, 9);
        CHECK(!predict_quiet(p, &a, &cg8, b + 64, req_len, false));
        uint8_t key[16];
        request(key, RENDER_MAJOR, 0, (uint32_t[2]){ 0, 11 }, 2);
        request(key + 12, RENDER_MAJOR, 1, NULL, 0);
        make_reply(r, 0, 56, 0);
        st32(r + 8, 2, false); /* two formats */
        st32(r + 12, 0, false);
        st32(r + 16, 0, false);
        st32(r + 20, 0, false);
        st32(r + 24, 0, false);
        st32(r + 32, 0x25, false);
        st32(r + 60, 0x2c, false);
        struct buf fact = { 0 };
        CHECK(predict_fact_exchange(&fact, false, key, 16, r, 88) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_quiet(p, &a, &trap, b, 64, false));
        CHECK(predict_quiet(p, &a, &cg8, b + 64, 36, false));
        st32(b + 16, 0x2d, false); /* not one of the server's */
        st32(b + 64 + 16, 0x2d, false);
        CHECK(!predict_quiet(p, &a, &trap, b, 64, false));
        CHECK(!predict_quiet(p, &a, &cg8, b + 64, 36, false));
        st32(b + 16, 0, false);
        CHECK(predict_quiet(p, &a, &trap, b, 64, false)); /* no mask */
        request(b, RENDER_MAJOR, 10, t, 14);
        CHECK(!predict_quiet(p, &a, &trap, b, req_len, false)); /* a trapezoid cut short: BadLength */
        t[0] = 14;
        request(b, RENDER_MAJOR, 10, t, 15);
        CHECK(!predict_quiet(p, &a, &trap, b, req_len, false)); /* not a standard operator */
        t[0] = 3;
        t[2] = ROOT;
        request(b, RENDER_MAJOR, 10, t, 15);
        CHECK(!predict_quiet(p, &a, &trap, b, req_len, false));
        /* DOUBLE-BUFFER SwapBuffers: of windows whose AllocateBackBuffer the server went past
         * without an error, each once, a defined action */
        struct msg_class alloc = ext("DOUBLE-BUFFER", 150, 1), swap = ext("DOUBLE-BUFFER", 150, 3),
                         dealloc = ext("DOUBLE-BUFFER", 150, 2), destroy = core(4);
        uint8_t al[16], sw[32];
        request(sw, 150, 3, (uint32_t[3]){ 1, 0x400002, 2 }, 3);
        CHECK(!predict_quiet(p, &a, &swap, sw, 16, false)); /* no buffer */
        request(al, 150, 1, (uint32_t[3]){ 0x400002, 0x400040, 2 }, 3);
        predict_track_back_buffers(&a, &alloc, al, 16, 10, false);
        predict_back_buffers_seen(&a, false, 10); /* an event of request 10: its error may follow */
        CHECK(!predict_quiet(p, &a, &swap, sw, 16, false));
        predict_back_buffers_seen(&a, false, 11); /* the next request's answer */
        CHECK(predict_quiet(p, &a, &swap, sw, 16, false));
        request(sw, 150, 3, (uint32_t[3]){ 1, 0x400002, 4 }, 3);
        CHECK(!predict_quiet(p, &a, &swap, sw, 16, false)); /* action 4: BadValue */
        request(sw, 150, 3, (uint32_t[5]){ 2, 0x400002, 2, 0x400002, 2 }, 5);
        CHECK(!predict_quiet(p, &a, &swap, sw, 24, false)); /* twice: BadMatch */
        request(al, 150, 1, (uint32_t[3]){ 0x400003, 0x400041, 2 }, 3);
        predict_track_back_buffers(&a, &alloc, al, 16, 12, false);
        predict_back_buffers_seen(&a, true, 12); /* BadMatch: its visual has no back buffers */
        predict_back_buffers_seen(&a, false, 13);
        request(sw, 150, 3, (uint32_t[5]){ 2, 0x400002, 2, 0x400003, 2 }, 5);
        CHECK(!predict_quiet(p, &a, &swap, sw, 24, false));
        request(sw, 150, 3, (uint32_t[3]){ 1, 0x400002, 2 }, 3);
        CHECK(predict_quiet(p, &a, &swap, sw, 16, false));
        request(b, 4, 0, (uint32_t[1]){ 0x400001 }, 1); /* DestroyWindow: perhaps its parent */
        predict_track_back_buffers(&a, &destroy, b, 8, 14, false);
        CHECK(!predict_quiet(p, &a, &swap, sw, 16, false));
        predict_track_back_buffers(&a, &alloc, al, 16, 15, false);
        predict_back_buffers_seen(&a, false, 16);
        request(sw, 150, 3, (uint32_t[3]){ 1, 0x400003, 2 }, 3);
        CHECK(predict_quiet(p, &a, &swap, sw, 16, false));
        request(b, 150, 2, (uint32_t[1]){ 0x400041 }, 1);
        predict_track_back_buffers(&a, &dealloc, b, 8, 17, false);
        CHECK(!predict_quiet(p, &a, &swap, sw, 16, false));
        /* AllocateBackBuffer: quiet on a window of a visual GetVisualInfo listed (the caller
         * gives the window's visual), its own buffer id, the window's first buffer */
        request(al, 150, 1, (uint32_t[3]){ 0x400002, 0x400042, 3 }, 3);
        CHECK(!predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x21)); /* no visuals known */
        uint8_t vkey[16], vr[52];
        request(vkey, 150, 0, (uint32_t[1]){ 1 }, 1);
        request(vkey + 8, 150, 6, (uint32_t[1]){ 0 }, 1);
        make_reply(vr, 0, 20, 0);
        st32(vr + 8, 1, false);  /* one screen */
        st32(vr + 32, 2, false); /* two visuals */
        st32(vr + 36, 0x21, false);
        st32(vr + 40, 0x0018, false);
        st32(vr + 44, 0x22, false);
        st32(vr + 48, 0x0020, false);
        CHECK(predict_fact_exchange(&fact, false, vkey, 16, vr, 52) == 0);
        CHECK(learn(p, &fact) == 0);
        CHECK(predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x21));
        CHECK(predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x22));
        CHECK(!predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x23)); /* BadMatch */
        CHECK(!predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x18)); /* a depth, not a visual */
        al[12] = 4; /* swap action 4: BadValue */
        CHECK(!predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x21));
        request(al, 150, 1, (uint32_t[3]){ 0x400002, 0x800042, 3 }, 3);
        CHECK(!predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x21)); /* not its id: BadIDChoice */
        request(al, 150, 1, (uint32_t[3]){ 0x800002, 0x400042, 3 }, 3);
        CHECK(!predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x21)); /* not its window */
        request(al, 150, 1, (uint32_t[3]){ 0x400003, 0x400042, 3 }, 3);
        CHECK(predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x21));
        predict_track_back_buffers(&a, &alloc, al, 16, 18, false);
        request(al, 150, 1, (uint32_t[3]){ 0x400003, 0x400043, 3 }, 3);
        CHECK(!predict_quiet_back_buffer(p, &a, &alloc, al, 16, false, 0x21)); /* its buffer's second name */
        CHECK(!predict_quiet_back_buffer(p, &a, &swap, al, 16, false, 0x21)); /* not an AllocateBackBuffer */
        buf_free(&fact);
        predict_questions_free(&a);
        predict_free(p);
    }
}

int main(void)
{
    test_xkb_flags();
    test_quiet();
    test_quiet_extensions();
    test_quiet_toolkits();
    test_quiet_emacs();
    return test_summary();
}
