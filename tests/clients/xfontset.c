/* xfontset.c -- prints what XCreateFontSet makes of a base font name list in the
 * environment's locale: the charsets it could not cover, each font's name and metrics
 * (from ListFontsWithInfo), and the extents of a text, so that a run through tincan can be
 * compared with a direct one. Usage: xfontset [BASE_NAME_LIST] */
#include <X11/Xlib.h>
#include <locale.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "-*-*-*-R-*-*-*-120-*-*-*-*";
    setlocale(LC_ALL, "");
    if (!XSupportsLocale()) {
        fprintf(stderr, "xfontset: the locale is not supported by Xlib\n");
        return 1;
    }
    Display *d = XOpenDisplay(NULL);
    if (!d) {
        fprintf(stderr, "xfontset: cannot open the display\n");
        return 1;
    }
    char **missing, *def;
    int n_missing;
    XFontSet fs = XCreateFontSet(d, base, &missing, &n_missing, &def);
    if (!fs) {
        fprintf(stderr, "xfontset: no font set for %s\n", base);
        return 1;
    }
    printf("base %s: %d charsets missing\n", base, n_missing);
    for (int i = 0; i < n_missing; i++)
        printf("missing %s\n", missing[i]);
    XFontStruct **fonts;
    char **names;
    int n = XFontsOfFontSet(fs, &fonts, &names);
    for (int i = 0; i < n; i++)
        printf("font %s: ascent %d descent %d width %d..%d chars %u..%u/%u..%u\n", names[i], fonts[i]->ascent,
               fonts[i]->descent, fonts[i]->min_bounds.width, fonts[i]->max_bounds.width, fonts[i]->min_byte1,
               fonts[i]->max_byte1, fonts[i]->min_char_or_byte2, fonts[i]->max_char_or_byte2);
    XFontSetExtents *e = XExtentsOfFontSet(fs);
    printf("extents %dx%d%+d%+d\n", e->max_logical_extent.width, e->max_logical_extent.height,
           e->max_logical_extent.x, e->max_logical_extent.y);
    XFreeStringList(missing);
    XFreeFontSet(d, fs);
    XCloseDisplay(d);
    return 0;
}
