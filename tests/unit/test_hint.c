/* test_hint.c -- what the app side reads of a local client (proxy/hint.c): the locale from
 * an environment block, the fonts of an app-defaults file, hostile input to both, the
 * whole reading of this test's own process through a socketpair, and FRAME_HINT's
 * encoding. The display side's use of a hint is tested with real programs in
 * tests/integration/core_hint.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "link/frame.h"
#include "proxy/hint.h"
#include "test.h"

#define ENV(s) ((const uint8_t *)(s)), (sizeof(s) - 1)

static bool font_is(const struct hint *h, int i, const char *name)
{
    return i < h->n_fonts && h->font_len[i] == strlen(name) && !memcmp(h->font[i], name, h->font_len[i]);
}

static struct hint fonts_of(const char *file)
{
    struct hint h = { 0 };
    hint_app_defaults_fonts((const uint8_t *)file, strlen(file), &h);
    return h;
}

static void test_environ(void)
{
    TEST("That an environment's value is found by its whole name") {
        size_t len = 0;
        const char *v = hint_env_value(ENV("LANGUAGE=fr\0LANG=C.UTF-8\0HOME=/x\0"), "LANG", &len);
        CHECK(v && len == 7 && !memcmp(v, "C.UTF-8", 7));
        CHECK(!hint_env_value(ENV("LANGUAGE=fr\0"), "LANG", &len));
        CHECK(!hint_env_value(ENV("LAN\0"), "LANG", &len));
        v = hint_env_value(ENV("A=1\0LANG=en_US.utf8"), "LANG", &len); /* the last without its NUL */
        CHECK(v && len == 10);
    }
    TEST("That the locale is taken as setlocale takes it: LC_ALL, LC_CTYPE, LANG, the first set") {
        CHECK(hint_env_utf8(ENV("LANG=C.UTF-8\0")));
        CHECK(!hint_env_utf8(ENV("LC_ALL=C\0LANG=C.UTF-8\0")));
        CHECK(hint_env_utf8(ENV("LC_ALL=\0LC_CTYPE=de_DE.utf8\0LANG=C\0"))); /* empty: not set */
        CHECK(!hint_env_utf8(ENV("LC_CTYPE=POSIX\0LANG=C.UTF-8\0")));
        CHECK(!hint_env_utf8(ENV("LC_MESSAGES=C.UTF-8\0")));
        CHECK(!hint_env_utf8(ENV("")));
    }
    TEST("That only a UTF-8 codeset, however spelt, says font sets of the UTF-8 charsets") {
        static const char *const yes[] = { "C.UTF-8", "en_US.utf8", "de_DE.UTF-8@euro", "sr_RS.utf-8@latin", "ja_JP.Utf_8" };
        static const char *const no[] = { "C", "POSIX", "UTF-8", "en_US", "ja_JP.eucJP", "en_US.ISO-8859-1",
                                          "x.utf8888888888", "x.", "@utf8", "en.utf9" };
        for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
            CHECK(hint_locale_utf8(yes[i], strlen(yes[i])));
        for (size_t i = 0; i < sizeof no / sizeof *no; i++)
            CHECK(!hint_locale_utf8(no[i], strlen(no[i])));
    }
    TEST("That an environment of no NULs, or of binary bytes, is read within its bounds") {
        size_t n = 100000, len;
        uint8_t *b = malloc(n);
        memset(b, 'L', n);
        CHECK(!hint_env_value(b, n, "LANG", &len));
        CHECK(!hint_env_utf8(b, n));
        srand(7);
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)rand();
        hint_env_utf8(b, n);
        free(b);
    }
}

static void test_app_defaults(void)
{
    TEST("That xcalc's app-defaults give its fonts, each once, in order") {
        struct hint h = fonts_of("! comment: *font: not-this\n"
                                 "#ifdef COLOR\n"
                                 "XCalc*Font:\t\t8x13\n"
                                 "XCalc*ti.button3.font:\t\t-adobe-symbol-*-*-*-*-*-120-*-*-*-*-*-*\n"
                                 "XCalc*ti.button21.font:\t\t-adobe-symbol-*-*-*-*-*-120-*-*-*-*-*-*\n"
                                 "XCalc*hp.button26.font:\t\t\t6x12   \r\n"
                                 "XCalc*bevel.screen.LCD.foreground: black\n");
        CHECK_EQ(h.n_fonts, 3);
        CHECK(font_is(&h, 0, "8x13"));
        CHECK(font_is(&h, 1, "-adobe-symbol-*-*-*-*-*-120-*-*-*-*-*-*"));
        CHECK(font_is(&h, 2, "6x12"));
        CHECK_EQ(h.flags, 0);
    }
    TEST("That font sets, other resources, escapes and Xt's own default name are not fonts") {
        struct hint h = fonts_of("*fontSet: -*-fixed-*\n*fontName: x\n*Font1: y\n*Label.font.size: 3\n"
                                 "*font: a\\nb\n*font: XtDefaultFont\n*font:\n*font:   \n"
                                 "*font \n*fon: z\nfont: ok1\n*international.IconFont: ok2\n");
        CHECK_EQ(h.n_fonts, 2);
        CHECK(font_is(&h, 0, "ok1"));
        CHECK(font_is(&h, 1, "ok2"));
    }
    TEST("That menus' fonts and fonts of two-byte characters are left out") {
        struct hint h = fonts_of("*SimpleMenu*menuLabel.font: -adobe-helvetica-bold-r-normal--*-120-*-*-*-*-iso8859-*\n"
                                 "*fontMenu*Font: x\n"
                                 "*VT100.utf8Fonts.font: -misc-fixed-medium-r-semicondensed--13-120-75-75-c-60-iso10646-1\n"
                                 "*kanji.font: -*-fixed-medium-r-normal--14-*-*-*-*-*-JISX0208.1983-0\n"
                                 "*IconFont: nil2\n*b.font: -*-*-*-*-*-*-*-120-*-*-*-*-iso8859-1\n");
        CHECK_EQ(h.n_fonts, 2);
        CHECK(font_is(&h, 0, "nil2"));
        CHECK(font_is(&h, 1, "-*-*-*-*-*-*-*-120-*-*-*-*-iso8859-1"));
    }
    TEST("That a value continued on the next line is joined, and the last line needs no newline") {
        struct hint h = fonts_of("*mainViewport*resourceLabel.font:\t\t\\\n -*-helvetica-*-r-*\n*b.font: last");
        CHECK_EQ(h.n_fonts, 2);
        CHECK(font_is(&h, 0, "-*-helvetica-*-r-*"));
        CHECK(font_is(&h, 1, "last"));
    }
    TEST("That at most HINT_MAX_FONTS names are taken") {
        char file[2048] = "";
        for (int i = 0; i < 20; i++)
            snprintf(file + strlen(file), sizeof file - strlen(file), "*w%d.font: f%d\n", i, i);
        struct hint h = fonts_of(file);
        CHECK_EQ(h.n_fonts, HINT_MAX_FONTS);
        CHECK(font_is(&h, HINT_MAX_FONTS - 1, "f7"));
    }
    TEST("That over-long lines and names are left out") {
        size_t n = 300000;
        char *file = malloc(n + 64);
        strcpy(file, "*a.font: ");
        memset(file + 9, 'x', 300);
        strcpy(file + 309, "\n*b.font: ");
        memset(file + 319, 'y', n - 319);
        strcpy(file + n, "\n*c.font: fine\n");
        struct hint h = fonts_of(file);
        CHECK_EQ(h.n_fonts, 1);
        CHECK(font_is(&h, 0, "fine"));
        free(file);
    }
    TEST("That binary input gives only printable names, within the bounds") {
        size_t n = 1 << 20;
        uint8_t *b = malloc(n);
        srand(11);
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)(i % 97 == 0 ? '\n' : i % 89 == 0 ? ':' : rand());
        memcpy(b + 1000, "\n*font: ok\n", 11);
        struct hint h = { 0 };
        hint_app_defaults_fonts(b, n, &h);
        CHECK(h.n_fonts <= HINT_MAX_FONTS);
        for (int i = 0; i < h.n_fonts; i++)
            for (int k = 0; k < h.font_len[i]; k++)
                CHECK(h.font[i][k] >= 0x20 && h.font[i][k] <= 0x7e);
        free(b);
    }
}

/* This test's own process, with an app-defaults directory holding its program's file. */
static void test_process(const char *argv0)
{
    char dir[] = "/tmp/test_hint.XXXXXX", path[512];
    if (!mkdtemp(dir))
        return;
    const char *base = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
    char upper[256];
    snprintf(upper, sizeof upper, "%s", base);
    upper[0] = (char)(upper[0] >= 'a' && upper[0] <= 'z' ? upper[0] - 32 : upper[0]);
    snprintf(path, sizeof path, "%s/%s", dir, upper); /* the class: its name capitalised */
    FILE *f = fopen(path, "w");
    fputs("*font: 8x13\n", f);
    for (int i = 0; i < 20000; i++) /* larger than read: what is read counts */
        fputs("! padding padding padding padding padding\n", f);
    fputs("*late.font: 6x12\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/other", dir);
    f = fopen(path, "w");
    fputs("*font: nope\n", f);
    fclose(f);
    const char *dirs[] = { dir, "/nonexistent-tincan", NULL };

    TEST("That a client's program is found by its name in the app-defaults, any case, its file read in part") {
        struct hint h;
        struct hint_want want = { .fonts = true, .dirs = dirs };
        CHECK_EQ(hint_of_pid(getpid(), &want, &h), 0);
        CHECK_EQ(h.n_fonts, 1);
        CHECK(font_is(&h, 0, "8x13"));
        want.fonts = false;
        CHECK(hint_of_pid(getpid(), &want, &h) < 0); /* nothing asked: nothing said */
        CHECK(hint_of_pid(0, &want, &h) < 0);
    }
    TEST("That the peer of a unix socket is read: it is this process") {
        int sv[2];
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        struct hint h;
        struct hint_want want = { .locale = true, .fonts = true, .dirs = dirs };
        CHECK_EQ(hint_of_client(sv[0], &want, &h), 0);
        CHECK(font_is(&h, 0, "8x13"));
        close(sv[0]);
        close(sv[1]);
        CHECK(hint_of_client(-1, &want, &h) < 0);
    }
    snprintf(path, sizeof path, "%s/%s", dir, upper);
    unlink(path);
    snprintf(path, sizeof path, "%s/other", dir);
    unlink(path);
    rmdir(dir);
}

static void test_frame(void)
{
    TEST("That a hint crosses as it was sent") {
        struct hint h = { .flags = HINT_FONT_SET };
        hint_app_defaults_fonts((const uint8_t *)"*font: 8x13\n*b.font: fixed\n", 28, &h);
        struct frame_hint fh, back;
        hint_to_frame(&h, &fh);
        struct buf out = { 0 };
        CHECK_EQ(frame_hint_encode(&out, 7, &fh), 0);
        struct frame f;
        CHECK_EQ(frame_decode(buf_head(&out), out.len, &f), (long)out.len);
        CHECK_EQ(f.type, FRAME_HINT);
        CHECK_EQ(f.channel, 7);
        CHECK_EQ(frame_hint_parse(&f, &back), 0);
        CHECK_EQ(back.flags, HINT_FONT_SET);
        CHECK_EQ(back.n_fonts, 2);
        CHECK(back.font_len[1] == 5 && !memcmp(back.font[1], "fixed", 5));
        buf_free(&out);
    }
    TEST("That a hint with an unknown flag, an empty or unprintable name, or too many names is corrupt") {
        static const struct { const char *p; size_t n; } bad[] = {
            { "", 0 }, { "\x02", 1 }, { "\x01\x00", 2 }, { "\x00\x03" "ab", 4 }, { "\x00\x02" "a\n", 4 },
            { "\x00\x01" "a\x01" "b\x01" "c\x01" "d\x01" "e\x01" "f\x01" "g\x01" "h\x01" "i", 19 },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            struct frame f = { .type = FRAME_HINT, .channel = 1, .payload = (const uint8_t *)bad[i].p, .len = (uint32_t)bad[i].n };
            struct frame_hint h;
            CHECK_EQ(frame_hint_parse(&f, &h), -EBADMSG);
        }
        struct frame f = { .type = FRAME_HINT, .channel = 1, .payload = (const uint8_t *)"\x01", .len = 1 };
        struct frame_hint h;
        CHECK_EQ(frame_hint_parse(&f, &h), 0);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    test_environ();
    test_app_defaults();
    test_process(argv[0]);
    test_frame();
    return test_summary();
}
