/* test_ownwin.c -- the model of a client's own windows (ownwin.c): its answers, compared
 * with the bytes Xvfb gave for the same requests (tests/clients/xownwin.c's "replies",
 * run directly: the expected strings below are its output), the facts that stop answers,
 * and the display side's counting of the client's own events. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "proxy/ownwin.h"
#include "proxy/predict.h"
#include "test.h"

#define ROOT 0x50du
#define COLORMAP 0x20u
#define VISUAL 0x21u
#define TOP 0x200000u
#define CHILD 0x200001u
#define INPUT 0x200002u
#define PIXMAP 0x200010u
#define OBSERVER_MASK 0x4b0000u
enum { A_CARDINAL = 6, A_INTEGER = 19, A_STRING = 31, A_WINDOW = 33, A_WM_NAME = 39, A_WM_ICON_NAME = 37,
       A_WM_CLASS = 67 };
/* the property atoms the client uses (any existing atom gives the same replies) */
#define GREETING A_WM_NAME
#define NUMBERS A_WM_ICON_NAME
#define SHORTS A_WM_CLASS
#define NEVER 40u /* WM_NORMAL_HINTS */

static struct ownwin_state app, disp;
static struct predictor *atoms;
static uint16_t seq;

static struct msg_class core(uint8_t major)
{
    return (struct msg_class){ .kind = MSG_REQUEST, .major = major, .query_ext = -1 };
}

/* A request: major, the header's data byte, then 32-bit words and raw bytes (LSB). */
static uint8_t req[80000];
static uint32_t req_len;
static void begin(uint8_t major, uint8_t data)
{
    memset(req, 0, 4);
    req[0] = major;
    req[1] = data;
    req_len = 4;
}
static void word(uint32_t v) { st32(req + req_len, v, false); req_len += 4; }
static void bytes(const void *p, uint32_t n)
{
    memcpy(req + req_len, p, n);
    req_len += n;
    while (req_len % 4)
        req[req_len++] = 0;
}
/* Both sides see it; the sequence number counts every request, as the server does. */
static void send_req(void)
{
    st16(req + 2, (uint16_t)(req_len / 4), false);
    struct msg_class cls = core(req[0]);
    seq++;
    ownwin_on_request(&app, &cls, req, req_len, false);
    ownwin_on_request(&disp, &cls, req, req_len, false);
}

/* Answers the request built (at both sides) and compares with the server's bytes, given as
 * hex words; "" means the app side must not answer. */
static bool answered_as(const char *server_hex)
{
    st16(req + 2, (uint16_t)(req_len / 4), false);
    struct msg_class cls = core(req[0]);
    seq++;
    struct buf a = { 0 }, d = { 0 };
    bool ok_a = ownwin_answer(&app, atoms, &cls, req, req_len, seq, false, false, &a);
    bool ok_d = ownwin_answer(&disp, atoms, &cls, req, req_len, seq, false, true, &d);
    ownwin_on_request(&app, &cls, req, req_len, false);
    ownwin_on_request(&disp, &cls, req, req_len, false);
    bool good;
    if (!*server_hex) {
        good = !ok_a;
    } else {
        uint8_t want[256];
        size_t n = 0;
        for (const char *p = server_hex; *p && n < sizeof want;) {
            if (*p == ' ') {
                p++;
                continue;
            }
            unsigned v;
            sscanf(p, "%2x", &v);
            want[n++] = (uint8_t)v;
            p += 2;
        }
        uint8_t *got = ok_a ? a.data + a.off : NULL;
        bool same = got && ok_d && d.len == a.len && !memcmp(d.data + d.off, got, a.len); /* the display side's check */
        if (got && cls.major == 3) { /* GetWindowAttributes: all-event-masks printed apart */
            CHECK_EQ(ld32(got + 32, false), ld32(got + 36, false) | OBSERVER_MASK);
            memset(got + 32, 0, 4);
        }
        good = ok_a && a.len >= n && a.len == 32 + 4ull * ld32(got + 4, false) && !memcmp(got, want, n) &&
               same;
        for (size_t i = n; good && i < a.len; i++)
            good = got[i] == 0; /* padding */
        if (!good) {
            fprintf(stderr, "  request %u: answered %d, got", seq, ok_a);
            for (size_t i = 0; ok_a && i < a.len; i++)
                fprintf(stderr, "%s%02x", i % 4 ? "" : " ", got[i]);
            fprintf(stderr, "\n");
        }
    }
    buf_free(&a);
    buf_free(&d);
    return good;
}

static void create(uint32_t id, uint32_t parent, int16_t x, int16_t y, uint16_t w, uint16_t h, uint16_t border,
                   uint16_t klass, uint32_t mask, const uint32_t *values, unsigned n_values)
{
    begin(1, 0);
    word(id);
    word(parent);
    word((uint16_t)x | (uint32_t)(uint16_t)y << 16);
    word(w | (uint32_t)h << 16);
    word(border | (uint32_t)klass << 16);
    word(0); /* visual: CopyFromParent */
    word(mask);
    for (unsigned i = 0; i < n_values; i++)
        word(values[i]);
    send_req();
}

static void change(uint32_t w, uint8_t mode, uint32_t prop, uint32_t type, uint8_t format, uint32_t units,
                   const void *data)
{
    begin(18, mode);
    word(w);
    word(prop);
    word(type);
    word(format);
    word(units);
    bytes(data, units * (format / 8));
    send_req();
}

static void get_property(uint32_t w, uint32_t prop, uint32_t type, uint32_t offset, uint32_t length, uint8_t del)
{
    begin(20, del);
    word(w);
    word(prop);
    word(type);
    word(offset);
    word(length);
}

static void get_geometry(uint32_t w) { begin(14, 0); word(w); }
static void get_attributes(uint32_t w) { begin(3, 0); word(w); }
static void one_window(uint8_t major, uint32_t w) { begin(major, 0); word(w); send_req(); }

static void configure(uint32_t w, uint16_t mask, const uint32_t *values, unsigned n)
{
    begin(12, 0);
    word(w);
    word(mask);
    for (unsigned i = 0; i < n; i++)
        word(values[i]);
    send_req();
}

static void setup_both(void)
{
    /* A setup reply with one screen and no formats or depths: what ownwin reads of it. */
    uint8_t s[80] = { 1 };
    st16(s + 6, (80 - 8) / 4, false);
    s[28] = 1; /* screens */
    st32(s + 40, ROOT, false);
    st32(s + 44, COLORMAP, false);
    st32(s + 72, VISUAL, false);
    s[78] = 24; /* root depth */
    ownwin_init(&app, false);
    ownwin_init(&disp, true);
    ownwin_learn_setup(&app, s, sizeof s, false);
    ownwin_learn_setup(&disp, s, sizeof s, false);
    struct buf f = { 0 };
    ownwin_fact_watch(&f, OBSERVER_MASK, ROOT, OWNWIN_REDIRECT_NO);
    CHECK_EQ(ownwin_on_fact(&app, f.data + f.off, f.len), 0);
    CHECK_EQ(ownwin_on_fact(&disp, f.data + f.off, f.len), 0); /* the observer keeps what it said */
    buf_free(&f);
    seq = 4; /* the client's first requests: four InternAtoms */
}

static void test_replies(void)
{
    TEST("That answers about a client's own windows are the bytes Xvfb gave") {
        setup_both();
        uint32_t top_values[2] = { 0xffffff, 0x8000 | 0x20000 };
        create(TOP, ROOT, 10, 20, 200, 100, 1, 1, 0x2 | 0x800, top_values, 2);
        uint32_t child_values[2] = { 1, 0x4 };
        create(CHILD, TOP, 5, 6, 50, 40, 0, 1, 0x20 | 0x800, child_values, 2);
        create(INPUT, TOP, 0, 0, 30, 30, 0, 2, 0, NULL, 0);
        get_geometry(TOP);
        CHECK(answered_as("01180800 00000000 0d050000 0a001400 c8006400 01000000"));
        get_geometry(CHILD);
        CHECK(answered_as("01180900 00000000 0d050000 05000600 32002800 00000000"));
        get_geometry(INPUT);
        CHECK(answered_as("01000a00 00000000 0d050000 00000000 1e001e00 00000000"));
        get_attributes(TOP);
        CHECK(answered_as("01000b00 03000000 21000000 01000001 ffffffff 00000000 00010000 20000000 00000000 00800200 00000000"));
        get_attributes(CHILD);
        CHECK(answered_as("01000c00 03000000 21000000 01000001 ffffffff 00000000 00010000 20000000 00000000 04000000 00000000"));
        get_attributes(INPUT);
        CHECK(answered_as("01000d00 03000000 21000000 02000001 ffffffff 00000000 00000000 00000000 00000000 00000000 00000000"));

        get_property(TOP, GREETING, A_STRING, 0, 100, 0);
        CHECK(answered_as("01000e00 00000000 00000000 00000000 00000000 00000000 00000000 00000000"));
        get_property(TOP, GREETING, 0, 0, 100, 0);
        CHECK(answered_as("01000f00 00000000 00000000 00000000 00000000 00000000 00000000 00000000"));
        get_property(TOP, NEVER, 0, 5, 0, 0);
        CHECK(answered_as("01001000 00000000 00000000 00000000 00000000 00000000 00000000 00000000"));
        change(TOP, 0, GREETING, A_STRING, 8, 11, "hello world");
        get_property(TOP, GREETING, A_STRING, 0, 100, 0);
        CHECK(answered_as("01081200 03000000 1f000000 00000000 0b000000 00000000 00000000 00000000 68656c6c 6f20776f 726c6400"));
        get_property(TOP, GREETING, 0, 0, 100, 0);
        CHECK(answered_as("01081300 03000000 1f000000 00000000 0b000000 00000000 00000000 00000000 68656c6c 6f20776f 726c6400"));
        get_property(TOP, GREETING, A_INTEGER, 0, 100, 0);
        CHECK(answered_as("01081400 00000000 1f000000 0b000000 00000000 00000000 00000000 00000000"));
        get_property(TOP, GREETING, A_STRING, 1, 1, 0);
        CHECK(answered_as("01081500 01000000 1f000000 03000000 04000000 00000000 00000000 00000000 6f20776f"));
        get_property(TOP, GREETING, A_STRING, 0, 0, 0);
        CHECK(answered_as("01081600 00000000 1f000000 0b000000 00000000 00000000 00000000 00000000"));
        get_property(TOP, GREETING, A_STRING, 2, 5, 0);
        CHECK(answered_as("01081700 01000000 1f000000 00000000 03000000 00000000 00000000 00000000 726c6400"));
        get_property(TOP, GREETING, A_STRING, 3, 5, 0);
        CHECK(answered_as("")); /* BadValue: the server says it */
        get_property(TOP, GREETING, A_INTEGER, 30, 5, 0);
        CHECK(answered_as("01081900 00000000 1f000000 0b000000 00000000 00000000 00000000 00000000"));
        change(TOP, 2, GREETING, A_STRING, 8, 6, " again");
        change(TOP, 1, GREETING, A_STRING, 8, 4, "oh, ");
        get_property(TOP, GREETING, 0, 0, 0x7fffffff, 0);
        CHECK(answered_as("01081c00 06000000 1f000000 00000000 15000000 00000000 00000000 00000000 6f682c20 68656c6c 6f20776f 726c6420 61676169 6e000000"));
        begin(18, 2); /* an Append of another type: BadMatch, and the model knows it */
        word(TOP); word(GREETING); word(A_INTEGER); word(8); word(1); bytes("x", 1);
        struct msg_class cp = core(18);
        CHECK(ownwin_may_fail(&app, &cp, req, req_len, false));
        send_req();
        get_property(TOP, GREETING, 0, 0, 100, 0);
        CHECK(answered_as("01081e00 06000000 1f000000 00000000 15000000 00000000 00000000 00000000 6f682c20 68656c6c 6f20776f 726c6420 61676169 6e000000"));

        uint32_t nums[7] = { 1, 2, 3, 0xdeadbeef, 5, 6, 7 };
        change(TOP, 0, NUMBERS, A_CARDINAL, 32, 5, nums);
        change(TOP, 2, NUMBERS, A_CARDINAL, 32, 2, nums + 5);
        get_property(TOP, NUMBERS, A_CARDINAL, 0, 0x12, 0);
        CHECK(answered_as("01202100 07000000 06000000 00000000 07000000 00000000 00000000 00000000 01000000 02000000 03000000 efbeadde 05000000 06000000 07000000"));
        get_property(TOP, NUMBERS, A_CARDINAL, 3, 2, 0);
        CHECK(answered_as("01202200 02000000 06000000 08000000 02000000 00000000 00000000 00000000 efbeadde 05000000"));
        get_property(TOP, NUMBERS, A_WINDOW, 0, 0x12, 0);
        CHECK(answered_as("01202300 00000000 06000000 07000000 00000000 00000000 00000000 00000000"));
        uint16_t sh[3] = { 0x1234, 0xabcd, 7 };
        change(CHILD, 0, SHORTS, A_INTEGER, 16, 3, sh);
        get_property(CHILD, SHORTS, A_INTEGER, 0, 1, 0);
        CHECK(answered_as("01102500 01000000 13000000 02000000 02000000 00000000 00000000 00000000 3412cdab"));
        get_property(CHILD, SHORTS, 0, 1, 1, 0);
        CHECK(answered_as("01102600 01000000 13000000 00000000 01000000 00000000 00000000 00000000 07000000"));
        change(CHILD, 0, SHORTS, A_INTEGER, 16, 0, sh);
        get_property(CHILD, SHORTS, 0, 0, 10, 0);
        CHECK(answered_as("01102800 00000000 13000000 00000000 00000000 00000000 00000000 00000000"));
        change(INPUT, 0, GREETING, A_STRING, 8, 5, "input");
        get_property(INPUT, GREETING, 0, 0, 10, 0);
        CHECK(answered_as("01082a00 02000000 1f000000 00000000 05000000 00000000 00000000 00000000 696e7075 74000000"));

        static uint8_t big[70000];
        for (size_t i = 0; i < sizeof big; i++)
            big[i] = (uint8_t)(i * 7);
        change(TOP, 0, NEVER, A_STRING, 8, sizeof big, big);
        get_property(TOP, NEVER, A_STRING, 17000, 3, 0);
        CHECK(answered_as("")); /* beyond the bound: forgotten */
        change(TOP, 0, NEVER, A_STRING, 8, 3, "abc");
        get_property(TOP, NEVER, A_STRING, 0, 3, 0);
        CHECK(answered_as("01082e00 01000000 1f000000 00000000 03000000 00000000 00000000 00000000 61626300"));

        begin(19, 0); word(TOP); word(NUMBERS); send_req();
        get_property(TOP, NUMBERS, A_CARDINAL, 0, 10, 0);
        CHECK(answered_as("01003000 00000000 00000000 00000000 00000000 00000000 00000000 00000000"));
        begin(19, 0); word(TOP); word(NUMBERS); send_req();
        get_property(TOP, NUMBERS, 0, 0, 10, 0);
        CHECK(answered_as("01003200 00000000 00000000 00000000 00000000 00000000 00000000 00000000"));
        get_property(TOP, GREETING, A_STRING, 0, 1, 1);
        CHECK(answered_as("01083300 01000000 1f000000 11000000 04000000 00000000 00000000 00000000 6f682c20"));
        get_property(TOP, GREETING, A_STRING, 0, 100, 0);
        CHECK(answered_as("01083400 06000000 1f000000 00000000 15000000 00000000 00000000 00000000 6f682c20 68656c6c 6f20776f 726c6420 61676169 6e000000"));
        get_property(TOP, GREETING, A_STRING, 0, 100, 1);
        CHECK(answered_as("01083500 06000000 1f000000 00000000 15000000 00000000 00000000 00000000 6f682c20 68656c6c 6f20776f 726c6420 61676169 6e000000"));
        get_property(TOP, GREETING, A_STRING, 0, 100, 0);
        CHECK(answered_as("01003600 00000000 00000000 00000000 00000000 00000000 00000000 00000000"));

        uint32_t move[4] = { 7, 8, 60, 30 };
        configure(CHILD, 0xf, move, 4);
        get_geometry(CHILD);
        CHECK(answered_as("01183800 00000000 0d050000 07000800 3c001e00 00000000"));
        uint32_t border = 3;
        configure(CHILD, 0x10, &border, 1);
        get_geometry(CHILD);
        CHECK(answered_as("01183a00 00000000 0d050000 07000800 3c001e00 03000000"));
        uint32_t top_move[3] = { (uint32_t)-5, 300, 250 };
        configure(TOP, 0x7, top_move, 3);
        get_geometry(TOP);
        CHECK(answered_as("01183c00 00000000 0d050000 fbff2c01 fa006400 01000000"));
        get_geometry(CHILD);
        CHECK(answered_as("01183d00 00000000 0d050000 07000800 3c001e00 03000000"));

        one_window(8, CHILD);
        get_attributes(CHILD);
        CHECK(answered_as("01003f00 03000000 21000000 01000001 ffffffff 00000000 00010100 20000000 00000000 04000000 00000000"));
        one_window(8, TOP);
        get_attributes(TOP);
        CHECK(answered_as("01004100 03000000 21000000 01000001 ffffffff 00000000 00010200 20000000 00000000 00800200 00000000"));
        get_attributes(CHILD);
        CHECK(answered_as("01004200 03000000 21000000 01000001 ffffffff 00000000 00010200 20000000 00000000 04000000 00000000"));
        begin(2, 0); word(CHILD); word(0x10 | 0x40 | 0x800); word(10); word(1); word(0x1 | 0x400000); send_req();
        get_attributes(CHILD);
        CHECK(answered_as("01014400 03000000 21000000 01000a01 ffffffff 00000000 00010200 20000000 00000000 01004000 00000000"));
        one_window(11, TOP);
        get_attributes(CHILD);
        CHECK(answered_as("01014600 03000000 21000000 01000a01 ffffffff 00000000 00010000 20000000 00000000 01004000 00000000"));
        one_window(5, TOP); /* DestroySubwindows */
        get_geometry(CHILD);
        CHECK(answered_as(""));
        get_property(CHILD, SHORTS, 0, 0, 1, 0);
        CHECK(answered_as(""));
        one_window(4, TOP);
        get_geometry(TOP);
        CHECK(answered_as(""));
        CHECK_EQ(app.n_wins, 0);
        ownwin_free(&app);
        ownwin_free(&disp);
    }
}

static void test_facts(void)
{
    TEST("That the app side answers nothing before the display side says it watches") {
        ownwin_init(&app, false);
        ownwin_init(&disp, true);
        create(TOP, ROOT, 0, 0, 10, 10, 0, 1, 0, NULL, 0);
        get_property(TOP, GREETING, 0, 0, 1, 0);
        CHECK(answered_as("")); /* no setup reply, no watch */
        ownwin_free(&app);
        ownwin_free(&disp);
    }
    TEST("That a property another client changed is no longer answered, and the others still are") {
        setup_both();
        create(TOP, ROOT, 0, 0, 10, 10, 0, 1, 0, NULL, 0);
        change(TOP, 0, GREETING, A_STRING, 8, 2, "hi");
        change(TOP, 0, NUMBERS, A_STRING, 8, 2, "yo");
        struct buf f = { 0 };
        ownwin_fact_property(&f, TOP, GREETING);
        CHECK_EQ(ownwin_on_fact(&app, f.data + f.off, f.len), 0);
        get_property(TOP, GREETING, 0, 0, 1, 0);
        CHECK(answered_as(""));
        get_property(TOP, NUMBERS, 0, 0, 1, 0);
        CHECK(answered_as("01080900 01000000 1f000000 00000000 02000000 00000000 00000000 00000000 796f0000"));
        get_property(TOP, NEVER, 0, 0, 1, 0); /* absent */
        CHECK(answered_as("01000a00 00000000 00000000 00000000 00000000 00000000 00000000 00000000"));
        buf_clear(&f);
        ownwin_fact_property(&f, TOP, 0);
        CHECK_EQ(ownwin_on_fact(&app, f.data + f.off, f.len), 0);
        get_property(TOP, NEVER, 0, 0, 1, 0);
        CHECK(answered_as(""));
        get_geometry(TOP);
        CHECK(answered_as("01180c00 00000000 0d050000 00000000 0a000a00 00000000"));
        buf_clear(&f);
        ownwin_fact_window(&f, TOP, OWNWIN_GEOMETRY);
        CHECK_EQ(ownwin_on_fact(&app, f.data + f.off, f.len), 0);
        get_geometry(TOP);
        CHECK(answered_as(""));
        get_attributes(TOP);
        CHECK(answered_as("01000e00 03000000 21000000 01000001 ffffffff 00000000 00010000 20000000 00000000 00000000 00000000"));
        buf_free(&f);
        ownwin_free(&app);
        ownwin_free(&disp);
    }
    TEST("That a top-level's geometry waits for a window manager's absence, and a child's does not") {
        setup_both();
        struct buf f = { 0 };
        ownwin_fact_watch(&f, OBSERVER_MASK, ROOT, OWNWIN_REDIRECT_YES);
        CHECK_EQ(ownwin_on_fact(&app, f.data + f.off, f.len), 0);
        create(TOP, ROOT, 0, 0, 10, 10, 0, 1, 0, NULL, 0);
        create(CHILD, TOP, 1, 2, 3, 4, 0, 1, 0, NULL, 0);
        get_geometry(TOP);
        CHECK(answered_as(""));
        get_geometry(CHILD);
        CHECK(answered_as("01180800 00000000 0d050000 01000200 03000400 00000000"));
        get_attributes(CHILD); /* unviewable: its parent was never mapped */
        CHECK(answered_as("01000900 03000000 21000000 01000001 ffffffff 00000000 00010000 20000000 00000000 00000000 00000000"));
        one_window(8, TOP);
        one_window(8, CHILD);
        get_attributes(CHILD); /* the window manager maps the top-level, or not */
        CHECK(answered_as(""));
        uint32_t on = 1; /* an override-redirect top-level is the client's alone */
        begin(2, 0); word(TOP); word(0x200); word(on); send_req();
        get_attributes(CHILD);
        CHECK(answered_as("01000e00 03000000 21000000 01000001 ffffffff 00000000 00010200 20000000 00000000 00000000 00000000"));
        buf_free(&f);
        ownwin_free(&app);
        ownwin_free(&disp);
    }
    TEST("That malformed facts are refused") {
        uint8_t bad1[] = { OWNWIN_FACT_PROPERTY, 1 };
        uint8_t bad2[] = { OWNWIN_FACT_WINDOW, 1, 4 }; /* 4: not a window's (properties go apart) */
        uint8_t bad3[] = { OWNWIN_FACT_WATCH, 0, 0, 3 };
        uint8_t bad4[] = { OWNWIN_FACT_PROPERTY, 1, 2, 3 };
        uint8_t good[] = { OWNWIN_FACT_WINDOW, 1, 3 };
        CHECK_EQ(ownwin_on_fact(NULL, bad1, sizeof bad1), -EBADMSG);
        CHECK_EQ(ownwin_on_fact(NULL, bad2, sizeof bad2), -EBADMSG);
        CHECK_EQ(ownwin_on_fact(NULL, bad3, sizeof bad3), -EBADMSG);
        CHECK_EQ(ownwin_on_fact(NULL, bad4, sizeof bad4), -EBADMSG);
        CHECK_EQ(ownwin_on_fact(NULL, good, sizeof good), 0);
        CHECK_EQ(ownwin_on_fact(NULL, ((uint8_t[]){ OWNWIN_FACT_WINDOW, 1, 8 }), 3), 0); /* children */
        CHECK_EQ(ownwin_on_fact(NULL, ((uint8_t[]){ OWNWIN_FACT_WINDOW, 1, 0 }), 3), -EBADMSG);
        CHECK(ownwin_is_fact(good, sizeof good));
        CHECK(!ownwin_is_fact((uint8_t[]){ 1 }, 1));
    }
}

static void test_counting(void)
{
    TEST("That the display side tells the client's own property events from another client's") {
        setup_both();
        create(TOP, ROOT, 0, 0, 10, 10, 0, 1, 0, NULL, 0);
        change(TOP, 0, GREETING, A_STRING, 8, 2, "hi");
        change(TOP, 2, GREETING, A_STRING, 8, 0, "");   /* an empty append: an event too */
        begin(19, 0); word(TOP); word(NEVER); send_req(); /* absent: no event */
        begin(19, 0); word(TOP); word(GREETING); send_req();
        uint32_t atom = GREETING;
        CHECK(!ownwin_event_property(&disp, TOP, &atom));
        CHECK(!ownwin_event_property(&disp, TOP, &atom));
        CHECK(!ownwin_event_property(&disp, TOP, &atom)); /* the delete's */
        CHECK(ownwin_event_property(&disp, TOP, &atom));  /* a fourth: someone else's */
        CHECK(!ownwin_event_property(&disp, TOP, &atom)); /* told once */
        atom = NEVER;
        CHECK(ownwin_event_property(&disp, TOP, &atom));
        CHECK_EQ(atom, NEVER);
        uint32_t x = 5;
        configure(TOP, 1, &x, 1);
        CHECK(!ownwin_event_configure(&disp, TOP));
        CHECK(ownwin_event_configure(&disp, TOP));
        one_window(8, TOP);
        CHECK(!ownwin_event_map(&disp, TOP));
        CHECK(ownwin_event_map(&disp, TOP));
        CHECK(!ownwin_geometry_differs(&disp, TOP, 5, 0, 10, 10, 0));
        CHECK(ownwin_geometry_differs(&disp, TOP, 6, 0, 10, 10, 0));
        CHECK_EQ(ownwin_event_foreign(&disp, TOP, OWNWIN_GEOMETRY | OWNWIN_ATTRIBUTES), 0); /* told already */
        ownwin_free(&app);
        ownwin_free(&disp);
    }
    TEST("That a resize moves children of other gravities out of the model, on both sides alike") {
        setup_both();
        create(TOP, ROOT, 0, 0, 10, 10, 0, 1, 0, NULL, 0);
        uint32_t gravity = 3; /* NorthEast */
        create(CHILD, TOP, 1, 1, 2, 2, 0, 1, 0x20, &gravity, 1);
        create(INPUT, TOP, 1, 1, 2, 2, 0, 2, 0, NULL, 0);
        uint32_t w = 20;
        configure(TOP, 4, &w, 1);
        get_geometry(CHILD);
        CHECK(answered_as(""));
        get_geometry(INPUT);
        CHECK(answered_as("01000a00 00000000 0d050000 01000100 02000200 00000000"));
        ownwin_free(&app);
        ownwin_free(&disp);
    }
}

static void test_bounds(void)
{
    TEST("That property values are bounded per window and per client, and what is beyond is not answered") {
        setup_both();
        static uint8_t value[60000];
        for (uint32_t i = 0; i < 20; i++) {
            create(TOP + i, ROOT, 0, 0, 10, 10, 0, 1, 0, NULL, 0);
            change(TOP + i, 0, GREETING, A_STRING, 8, sizeof value, value);
        }
        CHECK(app.prop_bytes <= OWNWIN_MAX_CLIENT_BYTES);
        CHECK_EQ(app.prop_bytes, disp.prop_bytes);
        get_property(TOP, GREETING, A_STRING, 0, 1, 0);
        CHECK(answered_as("01082d00 01000000 1f000000 5cea0000 04000000 00000000 00000000 00000000 00000000"));
        get_property(TOP + 19, GREETING, A_STRING, 0, 1, 0);
        CHECK(answered_as("")); /* the client's bound was reached before it */
        change(TOP, 2, GREETING, A_STRING, 8, 6000, value); /* 66000 bytes in one window */
        get_property(TOP, GREETING, A_STRING, 0, 1, 0);
        CHECK(answered_as(""));
        for (uint32_t i = 0; i < 20; i++)
            one_window(4, TOP + i);
        CHECK_EQ(app.prop_bytes, 0);
        CHECK_EQ(disp.prop_bytes, 0);
        ownwin_free(&app);
        ownwin_free(&disp);
    }
}

static void create_pixmap(uint8_t depth, uint32_t id, uint32_t drawable, uint16_t w, uint16_t h)
{
    begin(53, depth);
    word(id);
    word(drawable);
    word(w | (uint32_t)h << 16);
    send_req();
}

static void test_pixmaps(void)
{
    TEST("That a pixmap's geometry is answered from its CreatePixmap, until FreePixmap, as Xvfb gave it") {
        setup_both();
        /* the same screen with its allowed depths 24, 1 and 32 (no visuals: not read) */
        uint8_t s[104] = { 1 };
        st16(s + 6, (104 - 8) / 4, false);
        s[28] = 1;
        st32(s + 40, ROOT, false);
        st32(s + 44, COLORMAP, false);
        st32(s + 72, VISUAL, false);
        s[78] = 24;
        s[79] = 3;
        s[80] = 24, s[88] = 1, s[96] = 32;
        ownwin_learn_setup(&app, s, sizeof s, false);
        ownwin_learn_setup(&disp, s, sizeof s, false);
        create(TOP, ROOT, 10, 20, 200, 100, 1, 1, 0, NULL, 0);
        create_pixmap(24, PIXMAP, TOP, 22, 26);
        get_geometry(PIXMAP);
        CHECK(answered_as("01180700 00000000 0d050000 00000000 16001a00 00000000"));
        create_pixmap(32, PIXMAP + 1, PIXMAP, 5, 7); /* its root is the pixmap's */
        get_geometry(PIXMAP + 1);
        CHECK(answered_as("01200900 00000000 0d050000 00000000 05000700 00000000"));
        create_pixmap(1, PIXMAP + 2, ROOT, 9, 3);
        get_geometry(PIXMAP + 2);
        CHECK(answered_as("01010b00 00000000 0d050000 00000000 09000300 00000000"));
        one_window(54, PIXMAP); /* FreePixmap: BadDrawable after it, from the server */
        get_geometry(PIXMAP);
        CHECK(answered_as(""));
        get_geometry(PIXMAP + 1); /* made from the freed one: still there */
        CHECK(answered_as("01200e00 00000000 0d050000 00000000 05000700 00000000"));
        create_pixmap(7, PIXMAP + 3, TOP, 4, 4); /* a depth the screen lacks: BadValue */
        get_geometry(PIXMAP + 3);
        CHECK(answered_as(""));
        create_pixmap(24, PIXMAP + 4, TOP, 0, 4); /* width 0: BadValue */
        get_geometry(PIXMAP + 4);
        CHECK(answered_as(""));
        create_pixmap(24, PIXMAP + 5, 0x400001u, 4, 4); /* another client's window: its screen unknown */
        get_geometry(PIXMAP + 5);
        CHECK(answered_as(""));
        create_pixmap(24, TOP, ROOT, 4, 4); /* the id of a window: BadIDChoice; the window stays */
        get_geometry(TOP);
        CHECK(answered_as("01181600 00000000 0d050000 0a001400 c8006400 01000000"));
        ownwin_free(&app);
        ownwin_free(&disp);
    }
}

static void query_tree(uint32_t w) { begin(15, 0); word(w); }
static void translate(uint32_t src, uint32_t dst, int16_t x, int16_t y)
{
    begin(40, 0);
    word(src);
    word(dst);
    word((uint16_t)x | (uint32_t)(uint16_t)y << 16);
}

static void test_tree(void)
{
    TEST("That QueryTree and TranslateCoordinates of a client's own windows are the bytes Xvfb gave") {
        setup_both();
        /* as xownwin's "replies" makes them: a top-level at 10, 20 with a border of 1, a
         * child at 5, 6 (50 x 40), an input-only at 0, 0 (30 x 30) made after it */
        uint32_t top_values[2] = { 0xffffff, 0x8000 | 0x20000 };
        create(TOP, ROOT, 10, 20, 200, 100, 1, 1, 0x2 | 0x800, top_values, 2);
        uint32_t child_values[2] = { 1, 0x4 };
        create(CHILD, TOP, 5, 6, 50, 40, 0, 1, 0x20 | 0x800, child_values, 2);
        create(INPUT, TOP, 0, 0, 30, 30, 0, 2, 0, NULL, 0);
        query_tree(TOP); /* children bottom first: in the order made */
        CHECK(answered_as("01000800 02000000 0d050000 0d050000 02000000 00000000 00000000 00000000 01002000 02002000"));
        query_tree(CHILD);
        CHECK(answered_as("01000900 00000000 0d050000 00002000 00000000 00000000 00000000 00000000"));
        translate(ROOT, TOP, 0, 0); /* none mapped: no child */
        CHECK(answered_as("01010a00 00000000 00000000 f5ffebff"));
        one_window(8, CHILD);      /* MapWindow */
        one_window(8, INPUT);
        translate(ROOT, TOP, 20, 30); /* at 9, 9 of TOP: both hold it, the input-only is on top */
        CHECK(answered_as("01010d00 00000000 02002000 09000900"));
        translate(ROOT, TOP, 50, 30); /* at 39, 9: the child's alone */
        CHECK(answered_as("01010e00 00000000 01002000 27000900"));
        translate(CHILD, ROOT, 1, 2); /* into a root: its children are every client's */
        CHECK(answered_as(""));
        translate(CHILD, TOP, 1, 2);
        CHECK(answered_as("01011000 00000000 02002000 06000800"));
        uint32_t above = 0; /* stack mode Above: restacked, not followed */
        configure(CHILD, 0x40, &above, 1);
        query_tree(TOP);
        CHECK(answered_as(""));
        translate(ROOT, TOP, 20, 30);
        CHECK(answered_as(""));
        query_tree(CHILD); /* its own children are still known */
        CHECK(answered_as("01001400 00000000 0d050000 00002000 00000000 00000000 00000000 00000000"));
        ownwin_free(&app);
        ownwin_free(&disp);
    }
    TEST("That another client's window in one of the client's stops QueryTree of it, and a reparent all of them") {
        setup_both();
        create(TOP, ROOT, 0, 0, 100, 100, 0, 1, 0, NULL, 0);
        create(CHILD, TOP, 1, 1, 10, 10, 0, 1, 0, NULL, 0);
        query_tree(TOP);
        CHECK(answered_as("01000700 01000000 0d050000 0d050000 01000000 00000000 00000000 00000000 01002000"));
        CHECK(ownwin_event_foreign(&disp, TOP, OWNWIN_CHILDREN) == OWNWIN_CHILDREN); /* told once */
        CHECK(ownwin_event_foreign(&disp, TOP, OWNWIN_CHILDREN) == 0);
        struct buf f = { 0 };
        ownwin_fact_window(&f, TOP, OWNWIN_CHILDREN);
        CHECK_EQ(ownwin_on_fact(&app, f.data + f.off, f.len), 0);
        buf_free(&f);
        query_tree(TOP);
        CHECK(answered_as(""));
        translate(ROOT, TOP, 2, 2);
        CHECK(answered_as(""));
        translate(TOP, CHILD, 2, 2); /* into the child, whose children are known */
        CHECK(answered_as("01010a00 00000000 00000000 01000100"));
        begin(7, 0); /* ReparentWindow CHILD to the root */
        word(CHILD);
        word(ROOT);
        word(0);
        send_req();
        translate(TOP, CHILD, 2, 2);
        CHECK(answered_as(""));
        query_tree(CHILD);
        CHECK(answered_as(""));
        ownwin_free(&app);
        ownwin_free(&disp);
    }
}

static void test_output_visual(void)
{
    TEST("That a window's visual is told for an InputOutput window the model holds, CopyFromParent resolved") {
        setup_both();
        uint32_t visual = 0;
        CHECK(!ownwin_output_visual(&app, TOP, &visual)); /* not made yet */
        create(TOP, ROOT, 0, 0, 10, 10, 0, 1, 0, NULL, 0);
        CHECK(ownwin_output_visual(&app, TOP, &visual) && visual == VISUAL);
        create(CHILD, TOP, 0, 0, 5, 5, 0, 0, 0, NULL, 0); /* class CopyFromParent: InputOutput */
        CHECK(ownwin_output_visual(&app, CHILD, &visual) && visual == VISUAL);
        create(INPUT, TOP, 0, 0, 5, 5, 0, 2, 0, NULL, 0); /* InputOnly: BadMatch for a back buffer */
        CHECK(!ownwin_output_visual(&app, INPUT, &visual));
        CHECK(!ownwin_output_visual(&app, ROOT, &visual)); /* not the client's */
        ownwin_free(&app);
        ownwin_free(&disp);
    }
}

int main(void)
{
    if (predict_new(&atoms) < 0)
        return 1;
    test_replies();
    test_facts();
    test_counting();
    test_bounds();
    test_pixmaps();
    test_tree();
    test_output_visual();
    predict_free(atoms);
    return test_summary();
}
