/* test_xcodec_icons.c -- ChangeProperty of 32-bit icon lists (EWMH _NET_WM_ICON) through the
 * image coder (icons.c): lists of several sizes round-trip in both byte orders and at any
 * chunking, far smaller than their pixels; 32-bit properties of other shapes go as data;
 * a corrupt icon code is refused. */
#include "xcodec_helpers.h"

#include "xcodec/xcodec_private.h"

/* An icon: a disc of the given colour, shaded from its top left and grained (as drawn
 * icons are: rendered from vectors, or photographic), its edge anti-aliased in the alpha
 * (premultiplied, as programs make them), on transparency. */
static void disc(uint8_t *p, uint32_t side, uint32_t rgb, bool msb)
{
    double r = side / 2.0 - 1;
    for (uint32_t y = 0; y < side; y++)
        for (uint32_t x = 0; x < side; x++) {
            double d = hypot(x + 0.5 - side / 2.0, y + 0.5 - side / 2.0);
            double a = d < r - 0.5 ? 1 : d > r + 0.5 ? 0 : r + 0.5 - d;
            double shade = 0.6 + 0.4 * (1 - (x + y) / (2.0 * side));
            uint32_t c[3] = { rgb >> 16 & 0xff, rgb >> 8 & 0xff, rgb & 0xff };
            for (int k = 0; k < 3; k++) {
                int v = (int)(c[k] * shade) + (int)(rnd() % 9) - 4;
                c[k] = v < 0 ? 0 : v > 255 ? 255 : (uint32_t)v;
            }
            uint32_t A = (uint32_t)lround(a * 255), R = c[0] * A / 255, G = c[1] * A / 255, B = c[2] * A / 255;
            st32(p + 4 * ((size_t)y * side + x), A << 24 | R << 16 | G << 8 | B, msb);
        }
}

/* ChangeProperty (mode Replace, window, property, type CARDINAL, format 32) of data. */
static void change_property(struct msgs *m, bool msb, const uint8_t *data, uint32_t len)
{
    uint32_t total = 24 + len;
    bool big = total / 4 > 0xffff;
    uint8_t *p = calloc(1, total + (big ? 4 : 0)), *f = p + (big ? 4 : 0);
    p[0] = 18;
    if (big) {
        st32(p + 4, total / 4 + 1, msb);
    } else {
        st16(p + 2, (uint16_t)(total / 4), msb);
    }
    st32(f + 4, 0x400001, msb);
    st32(f + 8, 300, msb);
    st32(f + 12, 6, msb);
    f[16] = 32;
    st32(f + 20, len / 4, msb);
    memcpy(f + 24, data, len);
    add(m, p, total + (big ? 4 : 0));
    free(p);
}

/* An icon list of the given sides, each a disc of another colour; its length in *len. */
static uint8_t *icon_list(const uint32_t *sides, unsigned n, bool msb, uint32_t *len)
{
    size_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += 8 + 4 * (size_t)sides[i] * sides[i];
    uint8_t *p = calloc(1, total), *at = p;
    for (unsigned i = 0; i < n; i++) {
        st32(at, sides[i], msb);
        st32(at + 4, sides[i], msb);
        disc(at + 8, sides[i], 0x3080c0 + 0x101010 * i, msb);
        at += 8 + 4 * (size_t)sides[i] * sides[i];
    }
    *len = (uint32_t)total;
    return p;
}

/* PutImage of w x h 32-bit pixels (ZPixmap, depth 32) into a pixmap. */
static void put_image32(struct msgs *m, bool msb, const uint8_t *px, uint16_t w, uint16_t h)
{
    uint32_t len = 24 + 4u * w * h;
    uint8_t *p = calloc(1, len);
    p[0] = 72, p[1] = 2;
    st16(p + 2, (uint16_t)(len / 4), msb);
    st32(p + 4, 0x400005, msb), st32(p + 8, 0x400006, msb);
    st16(p + 12, w, msb), st16(p + 14, h, msb);
    p[21] = 32;
    memcpy(p + 24, px, len - 24);
    add(m, p, len);
    free(p);
}

/* The first rows of an icon, each colour byte premultiplied by its alpha, rounded to the
 * nearest, as GTK and firefox put their window icon into an ARGB pixmap. */
static uint8_t *premultiplied_rows(const uint8_t *icon, uint32_t w, uint32_t rows, bool msb)
{
    uint8_t *p = malloc(4u * w * rows);
    for (uint32_t i = 0; i < w * rows; i++) {
        uint32_t v = ld32(icon + 4 * i, msb), a = v >> 24, out = a << 24;
        for (int k = 0; k < 3; k++)
            out |= (((v >> (8 * k)) & 0xff) * a + 127) / 255 << (8 * k);
        st32(p + 4 * i, out, msb);
    }
    return p;
}

static void icon_tests(void)
{
    TEST("That a window icon put premultiplied into a pixmap after its icon list costs a reference, exactly") {
        for (int msb = 0; msb < 2; msb++) {
            const uint32_t sides[] = { 16, 128 };
            uint32_t len;
            uint8_t *list = icon_list(sides, 2, msb, &len);
            const uint8_t *big = list + 8 + 4 * 16 * 16 + 8; /* the 128 x 128 icon's pixels */
            uint8_t *whole = premultiplied_rows(big, 128, 128, msb), *less = premultiplied_rows(big, 128, 127, msb);
            struct msgs alone = { 0 }, refs = { 0 }, other = { 0 };
            change_property(&alone, msb, list, len);
            change_property(&refs, msb, list, len);
            put_image32(&refs, msb, whole, 128, 128);
            put_image32(&refs, msb, less, 128, 127); /* a row less (gnumeric's 256 x 255) */
            put_image32(&refs, msb, big, 128, 100);  /* the icon as it is, its first rows */
            change_property(&other, msb, list, len);
            whole[4 * 5000 + (msb ? 2 : 1)] ^= 1; /* one colour byte off: coded as an image */
            put_image32(&other, msb, whole, 128, 128);
            size_t n_alone = 0, n_refs = 0, n_other = 0;
            CHECK(round_trip_at(XC_REQUESTS, msb, &alone, 0, 32000, &n_alone, NULL));
            CHECK(round_trip_at(XC_REQUESTS, msb, &refs, 1001, 32000, &n_refs, NULL));
            CHECK(round_trip_at(XC_REQUESTS, msb, &other, 0, 32000, &n_other, NULL));
            printf("  icon list %zu bytes; with three pixmaps of it %zu; with one a byte off %zu (msb %d)\n", n_alone,
                   n_refs, n_other, msb);
            CHECK(n_alone && n_refs < n_alone + 3 * 40 && n_other > n_alone + 1000);
            free(list), free(whole), free(less);
            buf_free(&alone.all), buf_free(&refs.all), buf_free(&other.all);
        }
    }
    TEST("That a reference to a recent image that is missing, or of an unknown kind, is refused") {
        struct xc_model md;
        xc_model_init(&md, XC_REQUESTS, false);
        uint8_t fixed[24] = { 72, 2 }, dst[4 * 128 * 40];
        st16(fixed + 2, (uint16_t)((24 + sizeof dst) / 4), false);
        st16(fixed + 12, 128, false), st16(fixed + 14, 40, false);
        fixed[21] = 32;
        const uint8_t none[] = { 5, 0, 1 }; /* mode 5, entry 0 (there is none), premultiplied */
        struct rd r = rd_make(none, sizeof none, false);
        CHECK_EQ(xc_bigimg_decode(&md, fixed, dst, sizeof dst, false, &r), -EBADMSG);
        xc_model_free(&md);
        /* A stream with such a reference, its entry or its kind changed: refused. */
        const uint32_t sides[] = { 128 };
        uint32_t len;
        uint8_t *list = icon_list(sides, 1, false, &len), *pm = premultiplied_rows(list + 8, 128, 128, false);
        struct msgs m = { 0 };
        change_property(&m, false, list, len);
        put_image32(&m, false, pm, 128, 128);
        put_image32(&m, false, pm, 128, 64);
        struct xenc *e;
        struct buf enc = { 0 }, out = { 0 };
        CHECK(xenc_new(&e, XC_REQUESTS, false) == 0);
        xenc_set_link_rate(e, 32000);
        for (int i = 0; i < m.n; i++)
            CHECK(xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc) == 0);
        uint8_t *p = (uint8_t *)buf_head(&enc);
        size_t at = enc.len;
        while (at-- > 3 && !(p[at - 3] == XC_FILTER_WEBPLL && p[at - 2] == 5 && p[at] == 1)) {
        }
        CHECK(at > 3 && at < enc.len); /* the last reference's `how` byte */
        const uint8_t changes[][2] = { { 0, 2 }, { 0, 0xff }, { 1, 1 }, { 1, 63 } }; /* how 2 or 255; entries 1, 63 */
        for (size_t c = 0; c < sizeof changes / sizeof *changes && at > 3 && at < enc.len; c++) {
            size_t where = changes[c][0] ? at - 1 : at;
            uint8_t keep = p[where];
            p[where] = changes[c][1];
            struct xdec *d;
            CHECK(xdec_new(&d, XC_REQUESTS, false) == 0);
            long used = xdec_feed(d, p, enc.len, &out);
            CHECK(used < 0 || out.len != m.all.len || memcmp(buf_head(&out), buf_head(&m.all), out.len));
            xdec_free(d);
            buf_clear(&out);
            p[where] = keep;
        }
        xenc_free(e);
        free(list), free(pm);
        buf_free(&enc), buf_free(&out), buf_free(&m.all);
    }

    TEST("That a list of icons of 16 to 256 pixels round-trips in both byte orders, at any chunking, far below its pixels") {
        static const uint32_t sides[] = { 16, 24, 32, 48, 64, 128, 256 };
        for (int msb = 0; msb <= 1; msb++) {
            struct msgs m = { 0 };
            uint32_t len;
            uint8_t *list = icon_list(sides, 7, msb, &len);
            change_property(&m, msb, list, len);
            size_t size = 0, zsize = 0;
            CHECK(round_trip_at(XC_REQUESTS, msb, &m, 0, 32000, &size, &zsize));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 1000, NULL));
            struct buf raw = { 0 };
            CHECK_EQ(buf_append(&raw, list, len), 0);
            size_t zraw = zstd_size(&raw);
            printf("  %u bytes of icons (%s): %zu coded, %zu under zstd; the pixels alone under zstd %zu\n", len,
                   msb ? "MSB" : "LSB", size, zsize, zraw);
            CHECK(zsize * 4 < zraw * 3); /* the image coder, not the data's zstd */
            buf_free(&raw);
            buf_free(&m.all);
            free(list);
        }
    }
    TEST("That 32-bit properties of other shapes, and an icon list cut or with a bad size, go as data and round-trip") {
        struct msgs m = { 0 };
        uint8_t words[4 * 100];
        for (int i = 0; i < 100; i++)
            st32(words + 4 * i, 300 + (uint32_t)i, false); /* atoms: a width of 300, a height of 301, too few pixels */
        change_property(&m, false, words, sizeof words);
        static const uint32_t sides[] = { 16, 32 };
        uint32_t len;
        uint8_t *list = icon_list(sides, 2, false, &len);
        change_property(&m, false, list, len - 4);                  /* the last icon cut short */
        st32(list, 0, false);
        change_property(&m, false, list, len);                      /* a width of 0 */
        st32(list, 2000, false);
        change_property(&m, false, list, len);                      /* wider than any icon */
        st32(list, 16, false);
        uint8_t *more = calloc(1, 17 * (8 + 4 * 16));               /* 17 icons: one too many */
        for (int i = 0; i < 17; i++) {
            st32(more + i * (8 + 64), 4, false);
            st32(more + i * (8 + 64) + 4, 4, false);
        }
        change_property(&m, false, more, 17 * (8 + 64));
        change_property(&m, false, list, len);                      /* and a good one after them */
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, NULL));
        CHECK(round_trip(XC_REQUESTS, false, &m, 3, NULL));
        free(more);
        free(list);
        buf_free(&m.all);
    }
    TEST("That a corrupt icon list's code is refused, not decoded into the wrong bytes") {
        struct xc_model md;
        xc_model_init(&md, XC_REQUESTS, false);
        uint8_t dst[8 + 4 * 256 + 8];
        uint32_t blen = 8 + 4 * 256; /* one icon of 16 x 16 */
        const uint8_t zero_icons[] = { 0 };
        const uint8_t too_many[] = { 17 };
        const uint8_t no_width[] = { 1, 0, 16, 1, 0 };
        const uint8_t too_wide[] = { 1, 0x81, 0x10, 16, 1, 0 };
        const uint8_t bigger[] = { 1, 17, 16, 1, 0 };                /* 17 x 16 pixels: past the body */
        const uint8_t cut[] = { 1, 16, 16, 40, 1, 2 };               /* a code of 40 bytes, 2 there */
        const uint8_t no_filter[] = { 1, 16, 16, 3, 0xee, 1, 2 };   /* an image code of no filter */
        const uint8_t *codes[] = { zero_icons, too_many, no_width, too_wide, bigger, cut, no_filter };
        const size_t lens[] = { sizeof zero_icons, sizeof too_many, sizeof no_width, sizeof too_wide, sizeof bigger,
                                sizeof cut, sizeof no_filter };
        for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
            struct rd r = rd_make(codes[i], lens[i], false);
            int rc = xc_icons_decode(&md, dst, blen, false, &r);
            CHECK(rc == -EBADMSG || rc == -EAGAIN);
            if (rc != -EBADMSG && rc != -EAGAIN)
                printf("  code %zu: %d\n", i, rc);
        }
        xc_model_free(&md);
    }
}

int main(void)
{
    icon_tests();
    return test_summary();
}
