/* test_fontset.c -- the font set patterns the display side recognises (proxy/fontset.c):
 * an XLFD's charset split from its base, and the charset list against libX11's own
 * UTF-8 locale file when this machine has it. The asking and holding are tested against a
 * real server and a real Xaw program in tests/integration/core_fontset.sh. */
#include <stdio.h>
#include <string.h>

#include "proxy/fontset.h"
#include "test.h"

static int split(const char *pattern, size_t *base)
{
    *base = 0;
    return fontset_split((const uint8_t *)pattern, strlen(pattern), base);
}

static void test_split(void)
{
    TEST("That an XLFD pattern's known charset is split from its base") {
        size_t base;
        CHECK_EQ(split("-*-*-*-R-*-*-*-120-*-*-*-*-ISO8859-1", &base), 0);
        CHECK_EQ(base, strlen("-*-*-*-R-*-*-*-120-*-*-*-*"));
        CHECK_EQ(split("-*-*-*-R-*-*-*-120-*-*-*-*-ISO10646-1", &base), (long long)fontset_n_charsets() - 1);
        CHECK_EQ(split("-misc-fixed-medium-r-normal--13-120-75-75-c-70-KOI8-R", &base), 5);
        CHECK_EQ(split("-*-*-*-R-*-*-*-120-*-*-*-*-JISX0208.1983-0", &base), 11);
    }
    TEST("That other patterns are not font set questions") {
        size_t base;
        CHECK_EQ(split("fixed", &base), -1);
        CHECK_EQ(split("*", &base), -1);
        CHECK_EQ(split("", &base), -1);
        CHECK_EQ(split("-*-*-*-R-*-*-*-120-*-*-*-*-iso8859-1", &base), -1);  /* not as Xlib spells it */
        CHECK_EQ(split("-*-*-*-R-*-*-*-120-*-*-*-*-ISO8859-99", &base), -1); /* not a charset we ask */
        CHECK_EQ(split("-*-*-R-*-*-*-120-*-*-*-*-ISO8859-1", &base), -1);    /* 13 fields */
        CHECK_EQ(split("-*-*-*-*-R-*-*-*-120-*-*-*-*-ISO8859-1", &base), -1); /* 15 fields */
        CHECK_EQ(split("-*-*-*-R-*-*-*-120-*-*-*-*-ISO8859-1-", &base), -1);
    }
}

/* The charsets named by the font sets (fsN { charset { name X:GL } }) of libX11's file. */
static size_t locale_charsets(const char *path, char names[][32], size_t max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[256], name[64];
    size_t n = 0;
    int depth = 0;
    bool in_fs = false, in_charset = false;
    while (fgets(line, sizeof line, f) && n < max) {
        char *s = line + strspn(line, " \t");
        if (s[0] == '#')
            continue;
        if (depth == 0 && s[0] == 'f' && s[1] == 's' && s[2] >= '0' && s[2] <= '9')
            in_fs = true;
        if (in_fs && depth == 1 && !strncmp(s, "charset", 7))
            in_charset = true;
        if (in_charset && sscanf(s, "name %63s", name) == 1) {
            char *colon = strchr(name, ':');
            if (colon)
                *colon = 0;
            if (!n || strcmp(names[n - 1], name)) /* fs0 and fs1 are ISO8859-1's two halves */
                snprintf(names[n++], 32, "%.31s", name);
        }
        for (char *c = s; *c; c++)
            if (*c == '{')
                depth++;
            else if (*c == '}' && --depth <= 1)
                in_charset = false;
        if (depth == 0)
            in_fs = false;
    }
    fclose(f);
    return n;
}

static void test_charsets(void)
{
    char names[64][32];
    size_t n = locale_charsets("/usr/share/X11/locale/en_US.UTF-8/XLC_LOCALE", names, 64);
    if (!n) {
        printf("skip: no /usr/share/X11/locale/en_US.UTF-8/XLC_LOCALE (libx11-data) to compare with\n");
        return;
    }
    TEST("That the charsets asked ahead are those of libX11's UTF-8 locale, in its order") {
        CHECK_EQ(n, fontset_n_charsets());
        for (size_t i = 0; i < n && i < fontset_n_charsets(); i++)
            CHECK(!strcmp(names[i], fontset_charset(i)));
    }
}

int main(void)
{
    test_split();
    test_charsets();
    return test_summary();
}
