/* test_xcodec_images.c -- image and glyph bodies: palettes, AddGlyphs and AddTraps, the pixel
 * coder on glyphs, icons, masks and bitmaps, recent images by index, CompositeGlyphs items;
 * the body models' memory budget, the last session's pixel bodies, lossy photos and large
 * images as lossless WebP. */
#include "xcodec_helpers.h"

static void test_budget(void)
{
    TEST("That body models keep memory only within the session's budget: one image channel here, the next one raw") {
        struct msgs m = { 0 };
        for (int rep = 0; rep < 4; rep++) { /* 16x16 icons of many colours: the pixel coder's */
            uint8_t t[20 + 16 * 16 * 4] = { 0 };
            st16(t + 8, 16, false); st16(t + 10, 16, false); t[17] = 24;
            for (int k = 0; k < 16 * 16; k++)
                st32(t + 20 + 4 * k, (uint32_t)(k * 0x010305 + rep), false);
            req(&m, false, 72, 2, sizeof t + 4, t);
        }
        struct xc_budget b = { .cap = xc_heavy_max(XC_REQUESTS) + xc_heavy_max(XC_REQUESTS) / 2 };
        struct xenc *e1, *e2, *e3;
        CHECK(xenc_new(&e1, XC_REQUESTS, false) == 0 && xenc_new(&e2, XC_REQUESTS, false) == 0);
        xenc_set_budget(e1, &b);
        xenc_set_budget(e2, &b);
        size_t with, without;
        CHECK(encode_decode(e1, &m, &with));
        CHECK_EQ(b.used, xc_heavy_max(XC_REQUESTS));
        CHECK(encode_decode(e2, &m, &without));
        CHECK_EQ(b.used, xc_heavy_max(XC_REQUESTS)); /* refused: its images cross raw */
        CHECK(with < without);
        xenc_free(e1);
        CHECK_EQ(b.used, 0);
        CHECK(xenc_new(&e3, XC_REQUESTS, false) == 0);
        xenc_set_budget(e3, &b);
        CHECK(encode_decode(e3, &m, &with));
        CHECK_EQ(b.used, xc_heavy_max(XC_REQUESTS)); /* a later channel gets what the first gave back */
        xenc_free(e2);
        xenc_free(e3);
        CHECK_EQ(b.used, 0);
        printf("  4 icons: %zu bytes with the models, %zu without\n", with, without);
        buf_free(&m.all);
    }
}

/* Encodes m with e into enc (appended). */
static bool encode_all(struct xenc *e, const struct msgs *m, struct buf *enc)
{
    for (int i = 0; i < m->n; i++)
        if (xenc_message(e, buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], enc) != 0)
            return false;
    return true;
}

/* One session of the pixel-body cache: m's requests in two channels (even and odd
 * messages), each coded by an encoder and decoded by a decoder, the encoding end coding the
 * channels' messages in turn and the decoding end decoding all of the second channel's
 * first; each end with its own set loaded from file (NULL: cold). Returns the code's size
 * (both channels) and leaves the first channel's code in code, each end's set to save in
 * save_e / save_d; (size_t)-1 when m did not come back exactly. */
static uint64_t pix_hits[2]; /* the last pix_session's bodies coded again: encoder, decoder */

static size_t pix_session(const struct msgs *m, const struct buf *file, struct buf *code, struct buf *save_e,
                          struct buf *save_d)
{
    struct xc_pixcache *ce, *cd;
    struct xenc *e[2]; struct xdec *d[2];
    struct buf enc[2] = { { 0 }, { 0 } }, dec[2] = { { 0 }, { 0 } };
    xc_pixcache_new(&ce, XC_PIXCACHE_BYTES);
    xc_pixcache_new(&cd, XC_PIXCACHE_BYTES);
    bool ok = !file || (xc_pixcache_load(ce, buf_head(file), file->len) == 0 &&
                        xc_pixcache_load(cd, buf_head(file), file->len) == 0);
    for (int k = 0; k < 2; k++) {
        xenc_new(&e[k], XC_REQUESTS, false);
        xdec_new(&d[k], XC_REQUESTS, false);
        xenc_set_pixcache(e[k], ce);
        xdec_set_pixcache(d[k], cd);
    }
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e[i % 2], buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc[i % 2]) == 0;
    for (int k = 1; ok && k >= 0; k--)
        ok = xdec_feed(d[k], buf_head(&enc[k]), enc[k].len, &dec[k]) == (long)enc[k].len;
    for (int i = 0; ok && i < m->n; i++) {
        size_t n = m->off[i + 1] - m->off[i];
        ok = dec[i % 2].len >= n && !memcmp(buf_head(&dec[i % 2]), buf_head(&m->all) + m->off[i], n);
        buf_consume(&dec[i % 2], n);
    }
    ok = ok && !dec[0].len && !dec[1].len;
    buf_clear(save_e); buf_clear(save_d); buf_clear(code);
    ok = ok && xc_pixcache_save(ce, save_e) == 0 && xc_pixcache_save(cd, save_d) == 0;
    CHECK_EQ(buf_append(code, buf_head(&enc[0]), enc[0].len), 0);
    size_t size = ok ? enc[0].len + enc[1].len : (size_t)-1;
    for (int k = 0; k < 2; k++) {
        xenc_free(e[k]); xdec_free(d[k]);
        buf_free(&enc[k]); buf_free(&dec[k]);
    }
    pix_hits[0] = xc_pixcache_hits(ce);
    pix_hits[1] = xc_pixcache_hits(cd);
    xc_pixcache_free(ce); xc_pixcache_free(cd);
    return size;
}

/* The offset of entry i's body in a saved set of pixel bodies (its length is the 4 bytes
 * before), or 0 beyond the end. */
static size_t pix_entry(const struct buf *f, uint32_t i)
{
    const uint8_t *p = buf_head(f);
    size_t at = 4;
    for (uint32_t k = 0; at + 4 <= f->len; k++) {
        uint32_t len = ld32(p + at, false);
        if (k == i)
            return at + 4;
        at += 4 + len;
        at += 4 + ld32(p + at, false); /* its code */
    }
    return 0;
}

static void test_pixcache(void)
{
    struct msgs m = { 0 };
    for (int g = 0; g < 40; g++)   /* glyphs, one per AddGlyphs as x11perf and cairo send them */
        add_glyphs(&m, false, (uint32_t)g, 1, 9, 12, g % 2 ? 4 : 1);
    for (unsigned k = 0; k < 4; k++)
        gradient_image(&m, false, 20, 10, k, 0);
    struct buf file = { 0 }, file_d = { 0 }, code = { 0 }, again = { 0 }, again_d = { 0 }, warm_code = { 0 };

    TEST("That a session's pixel bodies, saved at both ends, make the same file in any channel order") {
        CHECK(pix_session(&m, NULL, &code, &file, &file_d) != (size_t)-1);
        CHECK(file.len > 4 && file.len == file_d.len && !memcmp(buf_head(&file), buf_head(&file_d), file.len));
        CHECK_EQ(ld32(buf_head(&file), false), 44);
    }
    TEST("That the next session sends them without coding them (short codes as the very same records, long ones by index) and saves the same file") {
        size_t cold = pix_session(&m, NULL, &code, &again, &again_d);
        size_t warm = pix_session(&m, &file, &warm_code, &again, &again_d);
        CHECK(warm != (size_t)-1 && warm < cold);
        CHECK_EQ(pix_hits[0], 44); /* each body found at the encoder ... */
        CHECK_EQ(pix_hits[1], 44); /* ... and taken by its code or index at the decoder: no model run */
        CHECK(again.len == file.len && !memcmp(buf_head(&again), buf_head(&file), file.len));
        CHECK(again_d.len == file.len && !memcmp(buf_head(&again_d), buf_head(&file), file.len));
        /* Every code here is long: none of them is in the warm code (their indices are). */
        unsigned long_found = 0;
        for (uint32_t i = 0; i < 44; i++) {
            size_t body = pix_entry(&file, i);
            uint32_t len = ld32(buf_head(&file) + body - 4, false);
            const uint8_t *c = buf_head(&file) + body + len + 4;
            uint32_t clen = ld32(c - 4, false);
            CHECK(clen >= XC_PIXCACHE_REF_MIN);
            long_found += memmem(buf_head(&warm_code), warm_code.len, c, clen) != NULL;
        }
        CHECK_EQ(long_found, 0);
        printf("  warm %zu B against cold %zu B\n", warm, cold);
    }
    TEST("That bodies of short codes are sent again as the very same records") {
        struct msgs tiny = { 0 };
        struct buf f = { 0 }, f_d = { 0 }, c = { 0 }, cw = { 0 };
        for (int g = 0; g < 6; g++)
            add_glyphs(&tiny, false, 900 + (uint32_t)g, 1, 3, 3, 1);
        size_t cold = pix_session(&tiny, NULL, &c, &f, &f_d);
        size_t warm = pix_session(&tiny, &f, &cw, &again, &again_d);
        CHECK(cold != (size_t)-1 && warm == cold && cw.len == c.len && !memcmp(buf_head(&cw), buf_head(&c), c.len));
        CHECK_EQ(pix_hits[1], 6);
        for (uint32_t i = 0; i < 6; i++) { /* each code short: sent as it was */
            size_t body = pix_entry(&f, i);
            uint32_t len = body ? ld32(buf_head(&f) + body - 4, false) : 0;
            CHECK(body && ld32(buf_head(&f) + body + len, false) < XC_PIXCACHE_REF_MIN);
        }
        buf_free(&f); buf_free(&f_d); buf_free(&c); buf_free(&cw); buf_free(&tiny.all);
    }
    TEST("That a body by its index is refused beyond the set, at another length, or without a set") {
        struct msgs two = { 0 }, other = { 0 };
        struct buf c = { 0 }, f2 = { 0 }, f2_d = { 0 }, fo = { 0 }, fo_d = { 0 }, cw = { 0 };
        gradient_image(&two, false, 20, 10, 7, 0);
        gradient_image(&two, false, 20, 10, 8, 0);
        gradient_image(&other, false, 20, 9, 7, 0);
        CHECK(pix_session(&two, NULL, &c, &f2, &f2_d) != (size_t)-1);
        CHECK(pix_session(&other, NULL, &c, &fo, &fo_d) != (size_t)-1);
        size_t cold = pix_session(&two, NULL, &c, &again, &again_d);
        /* One channel only: both images, by their indices 0 and 1 in the set of two. */
        struct msgs both = { 0 };
        for (int i = 0; i < 2; i++)
            add(&both, buf_head(&two.all) + two.off[i], two.off[i + 1] - two.off[i]);
        struct xc_pixcache *ce;
        struct xenc *e;
        xc_pixcache_new(&ce, XC_PIXCACHE_BYTES);
        CHECK_EQ(xc_pixcache_load(ce, buf_head(&f2), f2.len), 0);
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_pixcache(e, ce);
        CHECK(encode_all(e, &both, &cw));
        CHECK(xc_pixcache_hits(ce) == 2 && cw.len * 4 < cold);
        xenc_free(e);
        xc_pixcache_free(ce);
        const struct buf *sets[4] = { &f2, NULL, &fo, NULL };
        struct buf one_set = { 0 }; /* the set of two cut to its first entry (count 1) */
        size_t second = pix_entry(&f2, 1);
        CHECK(second > 8);
        CHECK_EQ(buf_append(&one_set, buf_head(&f2), second - 4), 0);
        st32((uint8_t *)buf_head(&one_set), 1, false);
        sets[3] = &one_set;
        for (int k = 0; k < 4; k++) { /* the set of two; none; a set of another length; of one */
            struct xc_pixcache *cd = NULL;
            struct xdec *d;
            struct buf dec = { 0 };
            xc_pixcache_new(&cd, XC_PIXCACHE_BYTES);
            if (sets[k])
                CHECK_EQ(xc_pixcache_load(cd, buf_head(sets[k]), sets[k]->len), 0);
            xdec_new(&d, XC_REQUESTS, false);
            xdec_set_pixcache(d, sets[k] ? cd : NULL);
            long got = xdec_feed(d, buf_head(&cw), cw.len, &dec);
            if (k == 0)
                CHECK(got == (long)cw.len && dec.len == both.off[2] && !memcmp(buf_head(&dec), buf_head(&both.all), dec.len));
            else
                CHECK(got < 0);
            xdec_free(d);
            xc_pixcache_free(cd);
            buf_free(&dec);
        }
        buf_free(&c); buf_free(&f2); buf_free(&f2_d); buf_free(&fo); buf_free(&fo_d); buf_free(&cw);
        buf_free(&one_set); buf_free(&two.all); buf_free(&other.all); buf_free(&both.all);
    }
    TEST("That a loaded set keeps what fits its budget: this session's bodies, then those used again") {
        struct xc_pixcache *c;
        xc_pixcache_new(&c, 1500);
        CHECK_EQ(xc_pixcache_load(c, buf_head(&file), file.len), 0);
        CHECK_EQ(xc_pixcache_loaded(c), 44);
        struct xenc *e;
        struct buf enc = { 0 }, saved = { 0 };
        struct msgs one = { 0 };
        add_glyphs(&one, false, 500, 1, 30, 30, 1); /* 900 pixels: new */
        add(&one, buf_head(&m.all) + m.off[3], m.off[4] - m.off[3]); /* a glyph of the file */
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_pixcache(e, c);
        CHECK(encode_all(e, &one, &enc));
        CHECK_EQ(xc_pixcache_save(c, &saved), 0);
        struct xc_pixcache *back;
        xc_pixcache_new(&back, XC_PIXCACHE_BYTES);
        CHECK_EQ(xc_pixcache_load(back, buf_head(&saved), saved.len), 0);
        CHECK_EQ(xc_pixcache_loaded(back), 2); /* shorter unused ones come after the used one */
        CHECK_EQ(ld32(buf_head(&saved) + 4, false), m.off[4] - m.off[3] - 12);
        /* the last (longest) is the new glyph's: 30 rows of 32 bytes */
        size_t last = pix_entry(&saved, 1);
        CHECK(last && ld32(buf_head(&saved) + last - 4, false) == 16 + 960);
        xenc_free(e); xc_pixcache_free(c); xc_pixcache_free(back);
        buf_free(&enc); buf_free(&saved); buf_free(&one.all);
    }
    TEST("That corrupt, unordered or oversized sets are refused") {
        struct xc_pixcache *c;
        struct buf bad = { 0 };
        CHECK_EQ(buf_append(&bad, buf_head(&file), file.len), 0);
        uint8_t *p = (uint8_t *)buf_head(&bad);
        xc_pixcache_new(&c, XC_PIXCACHE_BYTES);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len - 1), -EBADMSG);       /* truncated */
        st32(p, 45, false);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);           /* count too high */
        st32(p, 0, false);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);           /* count 0 */
        st32(p, 44, false);
        uint32_t first = ld32(p + 4, false);
        st32(p + 4, 8, false);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);           /* a length below the least */
        st32(p + 4, first, false);
        size_t second = pix_entry(&bad, 1);
        p[second] ^= 0xff; /* the second body's first byte: now out of order or the same */
        p[8] = p[second];
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);
        CHECK_EQ(xc_pixcache_loaded(c), 0);
        CHECK_EQ(xc_pixcache_load(c, buf_head(&file), file.len), 0);
        CHECK_EQ(xc_pixcache_load(c, buf_head(&file), file.len), -EBADMSG); /* once only */

        xc_pixcache_free(c);
        buf_free(&bad);
    }
    TEST("That a new code equal to a cached body's code is marked new, and decodes to the new body") {
        struct msgs one = { 0 };
        struct buf f1 = { 0 }, f1_d = { 0 }, cold = { 0 }, warm = { 0 };
        add(&one, buf_head(&m.all) + m.off[0], m.off[1] - m.off[0]); /* a glyph: its code is the first */
        CHECK(pix_session(&one, NULL, &cold, &f1, &f1_d) != (size_t)-1);
        /* The same code, filed for another body of the same length (one pixel changed). */
        size_t body = pix_entry(&f1, 0);
        ((uint8_t *)buf_head(&f1))[body + 16 + 5] ^= 0x40;
        CHECK(pix_session(&one, &f1, &warm, &again, &again_d) != (size_t)-1); /* exact: the new body */
        CHECK_EQ(pix_hits[0] + pix_hits[1], 0);
        size_t at = 0; /* the marker: after the record's head (4 bytes) and mode */
        while (at < cold.len && buf_head(&cold)[at] == buf_head(&warm)[at])
            at++;
        CHECK(warm.len == cold.len && at < cold.len && buf_head(&warm)[at] == buf_head(&cold)[at] + 8);
        buf_free(&f1); buf_free(&f1_d); buf_free(&cold); buf_free(&warm); buf_free(&one.all);
    }
    buf_free(&file); buf_free(&file_d); buf_free(&code); buf_free(&again); buf_free(&again_d); buf_free(&warm_code);
    buf_free(&m.all);
}

/* A photo-like 32-bit image w x h (smooth shading, a soft edge and grain), drawn at (x, 0). */
static void photo_image(struct msgs *m, uint16_t w, uint16_t h, uint16_t x)
{
    size_t blen = 4u * w * h;
    uint8_t *t = calloc(1, 20 + blen);
    st16(t + 8, w, false); st16(t + 10, h, false); st16(t + 12, x, false); t[17] = 24;
    for (size_t i = 0; i < (size_t)w * h; i++) {
        double u = (double)(i % w) / w, v = (double)(i / w) / h, grain = (double)(rnd() % 9) - 4;
        double r = 200 * u + 40 * sin(7 * v) + grain, g = 120 + 80 * (u * v > 0.2 ? 1 : -1) * v + grain;
        double b = 60 + 150 * (1 - v) + grain;
        uint8_t px[4] = { (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b), (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g),
                          (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r), 0 };
        memcpy(t + 20 + 4 * i, px, 4);
    }
    req(m, false, 72, 2, 24 + blen, t);
    free(t);
}

/* Peak signal-to-noise ratio of b against a (dB), over n bytes. */
static double psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
    double se = 0;
    for (size_t i = 0; i < n; i++)
        se += (double)(a[i] - b[i]) * (a[i] - b[i]);
    return se == 0 ? 99 : 10 * log10(255.0 * 255.0 * (double)n / se);
}

static void test_lossy(void)
{
    TEST("That --lossy-images codes photos as WebP, close to the original, and everything else exactly") {
        struct msgs m = { 0 };
        photo_image(&m, 160, 120, 0);
        gradient_image(&m, false, 20, 10, 1, 0);   /* small: exact */
        photo_image(&m, 160, 120, 5);              /* not coded against the first */
        gradient_image(&m, false, 20, 10, 1, 0);   /* drawn again: exact, from the recent list */
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, dec = { 0 };
        struct buf exact = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        CHECK(encode_all(e, &m, &exact));
        xenc_free(e);
        size_t exact_size = zstd_size(&exact);
        buf_free(&exact);
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_lossy(e, 75);
        xdec_new(&d, XC_REQUESTS, false);
        CHECK(encode_all(e, &m, &enc));
        CHECK_EQ(xdec_feed(d, buf_head(&enc), enc.len, &dec), (long)enc.len);
        printf("  two 160x120 photos and two small images, after zstd: %zu bytes exact, %zu lossy\n", exact_size,
               zstd_size(&enc));
        CHECK(zstd_size(&enc) * 4 < exact_size);
        CHECK_EQ(dec.len, m.all.len);
        for (int i = 0; i < m.n && dec.len == m.all.len; i++) {
            const uint8_t *a = buf_head(&m.all) + m.off[i], *b = buf_head(&dec) + m.off[i];
            size_t n = m.off[i + 1] - m.off[i];
            CHECK(!memcmp(a, b, 24)); /* the head as sent */
            if (n > 16384) {
                double q = psnr(a + 24, b + 24, n - 24);
                printf("  photo %d: %.1f dB\n", i, q);
                CHECK(q > 30 && q < 99);
            } else
                CHECK(!memcmp(a, b, n));
        }
        /* A cut or corrupt WebP is refused. */
        struct xdec *d2;
        struct buf out = { 0 };
        for (size_t at = 40; at < 200; at += 37) {
            xdec_new(&d2, XC_REQUESTS, false);
            uint8_t *p = (uint8_t *)buf_head(&enc);
            p[at] ^= 0x5a;
            long r = xdec_feed(d2, p, enc.len, &out);
            CHECK(r < 0 || (size_t)r < enc.len || out.len != m.all.len || memcmp(buf_head(&out), buf_head(&dec), out.len));
            p[at] ^= 0x5a;
            buf_clear(&out);
            xdec_free(d2);
        }
        buf_free(&out);
        xenc_free(e); xdec_free(d);
        buf_free(&enc); buf_free(&dec); buf_free(&m.all);
    }
}


/* A PutImage of w x h 32-bit pixels (depth 24 or 32), in the BIG-REQUESTS form when longer
 * than 256 KiB; kind 0 a page of anti-aliased text on white, 1 a photo-like field, 2 a
 * gradient with a toolbar, 3 noise (no codec shrinks it); fourth: every pixel's byte 3, or
 * -1 for varied ones (an ARGB visual's alpha). */
static void big_image(struct msgs *m, bool msb, uint16_t w, uint16_t h, int kind, int fourth, uint8_t depth)
{
    size_t blen = 4u * w * h, len = 24 + blen, o = len / 4 > 0xffff ? 8 : 4;
    uint8_t *p = calloc(1, len + 4);
    p[0] = 72, p[1] = 2;
    if (o == 8)
        st32(p + 4, (uint32_t)((len + 4) / 4), msb);
    else
        st16(p + 2, (uint16_t)(len / 4), msb);
    st32(p + o, 0x400001, msb), st32(p + o + 4, 0x400002, msb);
    st16(p + o + 8, w, msb), st16(p + o + 10, h, msb), st16(p + o + 12, 3, msb), st16(p + o + 14, 5, msb);
    p[o + 17] = depth;
    uint8_t *px = p + o + 20;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t r, g, b, v;
            if (kind == 0) { /* lines of glyph-like strokes, grey edges */
                uint32_t gx = x % 9, ly = y % 18, ink = ly < 12 && gx < 6 && ((x / 9 * 7 + y / 18 * 3) % 5) && ((gx + ly) % 4 < 2);
                v = ink ? 20 + (gx * 37 + ly * 11) % 90 : gx == 6 && ly < 12 ? 200 + (x * 13 + y) % 40 : 255;
                r = g = b = v;
            } else if (kind == 1) {
                double u = (double)x / w, t = (double)y / h;
                r = (uint32_t)(128 + 100 * sin(9 * u + 3 * t)) + rnd() % 4;
                g = (uint32_t)(110 + 80 * cos(5 * t * u * 6)) + rnd() % 3;
                b = (uint32_t)(60 + 150 * (1 - t)) + rnd() % 5;
            } else if (kind == 2) {
                r = y < 30 ? 0xe0 : x * 255 / w, g = y < 30 ? 0xe0 : y * 255 / h, b = y < 30 ? (x % 40 < 20 ? 0x40 : 0xe0) : 128;
            } else
                r = rnd() & 255, g = rnd() & 255, b = rnd() & 255;
            uint32_t a = fourth >= 0 ? (uint32_t)fourth : (x * 3 + y) & 255;
            st32(px + 4 * ((size_t)y * w + x), a << 24 | (r & 255) << 16 | (g & 255) << 8 | (b & 255), msb);
        }
    add(m, p, o == 8 ? len + 4 : len);
    free(p);
}

/* The encoding's size through zstd of m at a link rate, its round trip checked (0 when it fails). */
static size_t rate_trip(bool msb, const struct msgs *m, uint64_t rate, size_t chunk)
{
    size_t size = 0;
    return round_trip_at(XC_REQUESTS, msb, m, chunk, rate, NULL, &size) ? size : 0;
}

static void test_bigimg(void)
{
    TEST("That large images of every kind round-trip exactly at every link rate, in both byte orders") {
        static const uint64_t rates[] = { 0, 4000, 32000, 200000, 2000000, 1000000000 };
        for (int msb = 0; msb < 2; msb++)
            for (int kind = 0; kind < 4; kind++) {
                struct msgs m = { 0 };
                big_image(&m, msb, 200, 90, kind, 0, 24);
                big_image(&m, msb, 131, 61, kind, -1, 32);   /* alpha varies: kept exactly */
                big_image(&m, msb, 300, 250, kind, 0xff, 24); /* BIG-REQUESTS, over 256 KiB */
                big_image(&m, msb, 200, 90, kind, 0, 24);     /* again: from the recent images */
                for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
                    size_t n = rate_trip(msb, &m, rates[r], r == 2 ? 4093 : 0);
                    if (!n)
                        printf("  kind %d, msb %d, rate %llu failed\n", kind, msb, (unsigned long long)rates[r]);
                    CHECK(n > 0);
                }
                buf_free(&m.all);
            }
    }
    TEST("That on a slow link a page and a photo cost at most 0.7 of the row filters' bytes after zstd, a gradient at most twice") {
        for (int kind = 0; kind < 3; kind++) {
            struct msgs m = { 0 };
            big_image(&m, false, 400, 200, kind, 0, 24);
            size_t slow = rate_trip(false, &m, 32000, 0), fast = rate_trip(false, &m, 1000000000, 0);
            printf("  kind %d, 400x200: %zu bytes at 256 kbit/s, %zu with the row filters (a fast link)\n", kind, slow, fast);
            CHECK(slow > 0 && fast > 0 && (kind == 2 ? slow <= 2 * fast : slow * 10 <= fast * 7));
            buf_free(&m.all);
        }
    }
    TEST("That an image drawn again with a small change, or scrolled, costs little more than its change") {
        for (int msb = 0; msb < 2; msb++) {
            uint16_t w = 300, h = 150;
            struct msgs base = { 0 }, m = { 0 };
            big_image(&base, msb, w, h, 1, 0, 24); /* a photo: its pixels dear */
            const uint8_t *b0 = buf_head(&base.all);
            size_t len = base.off[1], hd = 24, row = 4u * w;
            uint8_t *v = malloc(len);
            add(&m, b0, len);
            memcpy(v, b0, len); /* a caret and a selection */
            for (uint32_t y = 40; y < 60; y++)
                for (uint32_t x = 10; x < (y < 45 ? 200u : 12u); x++)
                    memset(v + hd + row * y + 4 * x + msb, 0x30 + (int)y, 3); /* not the fourth byte */
            add(&m, v, len);
            memcpy(v, b0, len); /* scrolled by 17 rows, the new rows at the bottom dark */
            memmove(v + hd, b0 + hd + 17 * row, row * (h - 17));
            for (size_t i = hd + row * (h - 17) + msb; i < len; i += 4)
                v[i] = v[i + 1] = v[i + 2] = (uint8_t)(i % 7);
            add(&m, v, len);
            free(v);
            size_t one = rate_trip(msb, &base, 32000, 0), three = rate_trip(msb, &m, 32000, 1000);
            CHECK(rate_trip(msb, &m, 0, 0) > 0 && rate_trip(msb, &m, 2000000, 0) > 0);
            printf("  a %ux%u photo: %zu bytes; with a changed copy and a scrolled one %zu (msb %d)\n", w, h, one, three, msb);
            CHECK(one > 0 && three > 0 && three < one + one / 5);
            buf_free(&base.all), buf_free(&m.all);
        }
    }
    TEST("That a depth-24 image's varied fourth bytes go apart from its colours: exactly, and costing little") {
        for (int msb = 0; msb < 2; msb++) {
            size_t n[3];
            for (int v = 0; v < 3; v++) { /* one fourth byte; varied at depth 24; varied at depth 32 (alpha) */
                struct msgs m = { 0 };
                big_image(&m, msb, 300, 120, 1, v ? -1 : 0, v == 2 ? 32 : 24);
                n[v] = rate_trip(msb, &m, 32000, v == 1 ? 4093 : 0);
                buf_free(&m.all);
            }
            printf("  a 300x120 photo: %zu bytes, %zu with its fourth bytes varied at depth 24, %zu at depth 32 (msb %d)\n",
                   n[0], n[1], n[2], msb);
            CHECK(n[0] && n[1] && n[2] && n[1] < n[0] + n[0] / 20 && n[1] < n[2]);
        }
    }
    TEST("That a corrupt or cut lossless WebP is refused, or decodes to other bytes, never past its record") {
        struct msgs m = { 0 };
        big_image(&m, false, 200, 90, 1, 0, 24);
        big_image(&m, false, 200, 90, 1, -1, 24); /* mode 4: two WebPs */
        struct xenc *e;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_link_rate(e, 32000);
        CHECK(encode_all(e, &m, &enc));
        uint8_t *p = (uint8_t *)buf_head(&enc);
        for (size_t at = 12; at < enc.len; at += enc.len / 23 + 1) {
            struct xdec *d;
            xdec_new(&d, XC_REQUESTS, false);
            p[at] ^= 0x21;
            long r = xdec_feed(d, p, enc.len, &out);
            CHECK(r < 0 || (size_t)r < enc.len || out.len != m.all.len || memcmp(buf_head(&out), buf_head(&m.all), out.len));
            p[at] ^= 0x21;
            buf_clear(&out);
            xdec_free(d);
        }
        struct xdec *d;
        xdec_new(&d, XC_REQUESTS, false);
        long first = xdec_feed(d, p, enc.len - 1, &out); /* cut short: the last record waits */
        CHECK(first >= 0 && first < (long)enc.len);
        CHECK_EQ(xdec_feed(d, p + first, enc.len - (size_t)first, &out), (long)enc.len - first);
        CHECK(out.len == m.all.len && !memcmp(buf_head(&out), buf_head(&m.all), out.len));
        xdec_free(d);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
}


static void image_tests(void)
{
    TEST("That PutImage of few colours round-trips as palettes, whatever the depth") {
        /* depth, bytes per row, rows, colours; rows of 24-bit pixels of 10 and 13 pixels,
         * 8-bit rows with padding, 1-bit bitmaps */
        const struct { uint8_t depth; uint16_t stride, h; unsigned colours; } im[] = {
            { 24, 40, 10, 2 }, { 24, 52, 7, 3 }, { 24, 40, 10, 16 }, { 24, 40, 10, 40 },
            { 8, 16, 9, 5 }, { 1, 4, 15, 2 }, { 16, 6, 5, 4 },
        };
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            size_t raw = 0;
            for (size_t i = 0; i < sizeof im / sizeof *im; i++)
                for (int rep = 0; rep < 3; rep++) {
                    size_t blen = (size_t)im[i].stride * im[i].h;
                    uint8_t *t = calloc(1, 20 + blen);
                    st32(t, 0x200002, msb); st32(t + 4, 0x200003, msb);
                    st16(t + 8, (uint16_t)(im[i].stride * 8 / (im[i].depth > 16 ? 32 : im[i].depth > 8 ? 16 : 8)), msb);
                    st16(t + 10, im[i].h, msb);
                    st16(t + 12, (uint16_t)(rnd() % 500), msb); st16(t + 14, (uint16_t)(rnd() % 500), msb);
                    t[17] = im[i].depth;
                    unsigned psz = im[i].depth > 16 ? 4 : im[i].depth > 8 ? 2 : 1;
                    for (size_t k = 0; k < blen; k += psz) {
                        uint32_t c = rnd() % im[i].colours * 0x01030507u;
                        memcpy(t + 20 + k, &c, psz);
                    }
                    req(&m, msb, 72, im[i].depth == 1 ? 0 : 2, 24 + blen, t);
                    raw += 24 + blen;
                    free(t);
                }
            size_t size;
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, &size));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 5, NULL));
            CHECK(size < raw / 2);
            printf("  %d PutImage requests of few colours (%zu bytes): %zu bytes\n", m.n, raw, size);
            buf_free(&m.all);
        }
        /* A palette index beyond the palette is refused: two colours, then index 1 made 2. */
        struct msgs m = { 0 };
        uint8_t t[20 + 40 * 10] = { 0 };
        st16(t + 8, 10, false); st16(t + 10, 10, false); t[17] = 24;
        t[20 + 4] = 0xff; /* pixel 1 differs: palette { 0, 0xff } */
        req(&m, false, 72, 2, sizeof t + 4, t);
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        CHECK_EQ(xenc_message(e, buf_head(&m.all), m.all.len, &enc), 0);
        uint8_t *c = (uint8_t *)buf_head(&enc);
        CHECK_EQ(c[enc.len - 30], 3); /* the palette mark: 3, n-1 = 1, 2 pixels, 10 rows of 2 bytes */
        CHECK_EQ(c[enc.len - 20], 0x40); /* row 0: pixels 0 and 1 */
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, c, enc.len, &out), (long)enc.len);
        xdec_free(d);
        c[enc.len - 1] = 0x01; /* an unused bit of the last row */
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, c, enc.len, &out), -EBADMSG);
        xdec_free(d);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
    TEST("That RENDER AddGlyphs and AddTraps round-trip, subpixel glyphs and rows of traps shrink") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            if (!msb) add_hex(&m, addglyphs_argb_hex);
            add_glyphs(&m, msb, 40, 3, 7, 11, 4);  /* subpixel glyphs */
            add_glyphs(&m, msb, 43, 2, 5, 9, 1);   /* A8 glyphs: another model's */
            add_glyphs(&m, msb, 45, 1, 300, 200, 4); /* BIG-REQUESTS-sized, but not BIG here */
            uint8_t junk[24] = { 0 };              /* a count beyond the body: no model */
            st32(junk + 4, 1000, msb);
            req(&m, msb, 138, 20, 4 + sizeof junk, junk);
            uint8_t t[8 + 24 * 100] = { 0 };       /* AddTraps: 100 traps stepping evenly */
            st32(t, 0x200020, msb);
            for (int i = 0; i < 100; i++) {
                int32_t v[6] = { i * 65536, (10 + i) * 65536, 10 * i * 65536, (10 - i) * 65536, (20 - i) * 65536, (10 * i + 10) * 65536 };
                for (int f = 0; f < 6; f++) st32(t + 8 + 24 * i + 4 * f, (uint32_t)v[f], msb);
            }
            req(&m, msb, 138, 32, 4 + sizeof t, t);
            t[8 + 24 * 50] ^= 0x40;                 /* one trap off: still whole */
            req(&m, msb, 138, 32, 4 + sizeof t, t);
            size_t size;
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, &size));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 3, NULL));
            printf("  AddGlyphs and AddTraps (%zu bytes, %s): %zu bytes\n", m.all.len, msb ? "MSB" : "LSB", size);
            buf_free(&m.all);
        }
        struct msgs m = { 0 };
        uint8_t t[8 + 24 * 100] = { 0 };
        for (int i = 0; i < 100; i++)
            for (int f = 0; f < 6; f++) st32(t + 8 + 24 * i + 4 * f, (uint32_t)((i * (f + 1)) << 16), false);
        req(&m, false, 138, 32, 4 + sizeof t, t);
        size_t size;
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, &size));
        CHECK(size < 1300); /* a byte a field: zeros but for the first trap */
        buf_free(&m.all);
    }
    TEST("That real glyphs, icons and masks round-trip through the pixel coder and shrink well") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, real_a8_hex);
        add_hex_msgs(&m, real_argb_hex);
        add_hex_msgs(&m, real_pi32_hex);
        add_hex_msgs(&m, real_pi8_hex);
        size_t size = encoded_size(XC_REQUESTS, false, &m);
        CHECK(round_trip(XC_REQUESTS, false, &m, 1, NULL));
        CHECK(round_trip(XC_REQUESTS, false, &m, 7, NULL));
        CHECK(size < m.all.len * 45 / 100);
        printf("  %d real glyphs and images (%zu bytes): %zu bytes\n", m.n, m.all.len, size);
        buf_free(&m.all);
        /* Glyphs of every layout and byte order, a glyph of no pixels, a count of zero, and
         * a body the GLYPHINFOs do not add up to (no model). */
        for (int msb = 0; msb < 2; msb++) {
            struct msgs g = { 0 };
            add_glyphs(&g, msb, 7, 4, 9, 12, 1);
            add_glyphs(&g, msb, 11, 2, 1, 5, 4);
            add_glyphs(&g, msb, 13, 3, 6, 7, 4);
            add_glyphs(&g, msb, 16, 1, 0, 0, 1);
            add_glyphs(&g, msb, 17, 0, 0, 0, 1);
            uint8_t bad[8 + 16 + 12] = { 0 };
            st32(bad + 4, 1, msb);
            st16(bad + 12, 3, msb); st16(bad + 14, 5, msb); /* 3 x 5: 20 or 60 bytes, not 12 */
            req(&g, msb, 138, 20, 4 + sizeof bad, bad);
            CHECK(round_trip(XC_REQUESTS, msb, &g, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &g, 3, NULL));
            buf_free(&g.all);
        }
    }
    TEST("That bitmaps (PutImage of depth 1: icons, masks) round-trip through the pixel coder's bits and shrink") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, real_bitmaps_hex);
        size_t size = encoded_size(XC_REQUESTS, false, &m);
        CHECK(round_trip(XC_REQUESTS, false, &m, 1, NULL));
        CHECK(round_trip(XC_REQUESTS, false, &m, 7, NULL));
        CHECK(size < m.all.len * 40 / 100);
        printf("  %d real bitmaps (%zu bytes): %zu bytes\n", m.n, m.all.len, size);
        buf_free(&m.all);
        /* Both byte orders; random bits (padding included), a bitmap of one row, one too
         * small (64 bytes is the least) and one too large for the bits (16 KiB the most). */
        const struct { uint16_t stride, h; } bm[] = { { 8, 16 }, { 4, 17 }, { 64, 1 }, { 4, 15 }, { 128, 129 } };
        for (int msb = 0; msb < 2; msb++) {
            struct msgs g = { 0 };
            for (size_t i = 0; i < sizeof bm / sizeof *bm; i++) {
                size_t blen = (size_t)bm[i].stride * bm[i].h;
                uint8_t *t = calloc(1, 20 + blen);
                st32(t, 0x200002, msb); st32(t + 4, 0x200003, msb);
                st16(t + 8, (uint16_t)(bm[i].stride * 8 - 3), msb); st16(t + 10, bm[i].h, msb);
                t[17] = 1;
                for (size_t k = 0; k < blen; k++)
                    t[20 + k] = (uint8_t)(k % 7 < 3 ? rnd() : k % 5 ? 0xff : 0);
                req(&g, msb, 72, (uint8_t)(i & 1), 24 + blen, t);
                free(t);
            }
            CHECK(round_trip(XC_REQUESTS, msb, &g, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &g, 5, NULL));
            buf_free(&g.all);
        }
    }
    TEST("That a large glyph of few changes still sends a code of the least size a decoder takes") {
        /* One A8 glyph of 256 x 256 (64 KiB): 17 values in its first row, then all zeros.
         * Its pixel code alone is about 20 bytes, shorter than B / 1024: zeros end it. */
        struct msgs m = { 0 };
        size_t blen = 16 + 256u * 256;
        uint8_t *t = calloc(1, 8 + blen);
        st32(t + 4, 1, false);
        st32(t + 8, 77, false);
        st16(t + 12, 256, false); st16(t + 14, 256, false);
        for (int i = 0; i < 17; i++) t[8 + 16 + i] = (uint8_t)(i * 9);
        req(&m, false, 138, 20, 12 + blen - 4 + 4, t);
        size_t size = encoded_size(XC_REQUESTS, false, &m);
        CHECK(size != (size_t)-1 && size >= blen / 1024);
        CHECK(size < blen / 1024 + 32);
        CHECK(round_trip(XC_REQUESTS, false, &m, 100, NULL));
        free(t);
        buf_free(&m.all);
    }
    TEST("That an image drawn again among the latest 64 costs its index, and a wrong index is refused") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            for (unsigned i = 0; i < 70; i++)
                gradient_image(&m, msb, 8, 8, i, (uint16_t)i);
            size_t first = encoded_size(XC_REQUESTS, msb, &m);
            for (unsigned i = 10; i < 70; i++) /* the latest 60 again, oldest first, elsewhere */
                gradient_image(&m, msb, 8, 8, i, (uint16_t)(100 + i));
            size_t size = encoded_size(XC_REQUESTS, msb, &m);
            CHECK(size != (size_t)-1 && size - first < 60 * 12);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 5, NULL));
            printf("  60 images drawn again (%s): %zu bytes\n", msb ? "MSB" : "LSB", size - first);
            buf_free(&m.all);
        }
        struct msgs m = { 0 };
        for (unsigned i = 0; i < 9; i++) /* further back than the 7 references, over 2 KiB */
            gradient_image(&m, false, 40, 40, i, 0);
        gradient_image(&m, false, 40, 40, 0, 50);
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, NULL));
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        for (int i = 0; i < m.n; i++)
            CHECK_EQ(xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc), 0);
        uint8_t *c = (uint8_t *)buf_head(&enc);
        CHECK_EQ(c[enc.len - 2], 5); /* drawn again: filter 5, index 8 */
        CHECK_EQ(c[enc.len - 1], 8);
        c[enc.len - 1] = 9; /* only nine images are kept */
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, c, enc.len, &out), -EBADMSG);
        xdec_free(d);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
    TEST("That CompositeGlyphs items round-trip, a line of text one glyph on costs little, and odd items cross") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, real_cg8_hex);
        add_hex_msgs(&m, real_cg16_hex);
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, NULL));
        buf_free(&m.all);
        for (int msb = 0; msb < 2; msb++) {
            struct msgs l = { 0 };
            for (int line = 0; line < 40; line++) { /* x11perf: 80 glyphs, each line one on */
                uint8_t it[8 + 80] = { 80 };
                st16(it + 4, 20, msb); st16(it + 6, (uint16_t)(20 + 12 * line), msb);
                for (int g = 0; g < 80; g++) it[8 + g] = (uint8_t)(line + g + 3);
                composite_glyphs(&l, msb, 0, it, sizeof it);
            }
            /* after the first line, every line's code is the same bytes: the zstd stage's */
            struct xenc *e;
            struct buf enc = { 0 };
            size_t at[41] = { 0 };
            xenc_new(&e, XC_REQUESTS, msb);
            for (int i = 0; i < l.n; i++) {
                CHECK_EQ(xenc_message(e, buf_head(&l.all) + l.off[i], l.off[i + 1] - l.off[i], &enc), 0);
                at[i + 1] = enc.len;
            }
            for (int i = 2; i < l.n; i++)
                CHECK(at[i + 1] - at[i] == at[2] - at[1] && memcmp(buf_head(&enc) + at[i], buf_head(&enc) + at[1], at[2] - at[1]) == 0);
            printf("  a line of 80 glyphs one on (%s): %zu bytes, the same each time\n", msb ? "MSB" : "LSB", at[2] - at[1]);
            xenc_free(e);
            buf_free(&enc);
            /* 16- and 32-bit ids, several items, a glyphset switch, ids that step down */
            for (unsigned k = 1; k < 3; k++) {
                unsigned size = k == 1 ? 2 : 4;
                uint8_t it[(8 + 4 * 4) + 12 + (8 + 4 * 4)] = { 0 };
                uint8_t *p = it;
                p[0] = 3; st16(p + 4, 5, msb); st16(p + 6, 9, msb);
                for (unsigned g = 0; g < 3; g++) {
                    uint32_t id = 70000u - 9000u * g;
                    if (size == 2) st16(p + 8 + 2 * g, (uint16_t)id, msb); else st32(p + 8 + 4 * g, id, msb);
                }
                p += 8 + ((3 * size + 3) & ~3u);
                p[0] = 255; st32(p + 8, 0x200013, msb);
                p += 12;
                p[0] = 2; st16(p + 4, 0xfff0, msb);
                if (size == 2) { st16(p + 8, 1, msb); st16(p + 10, 0xffff, msb); } else { st32(p + 8, 1, msb); st32(p + 12, 0xffffffffu, msb); }
                p += 8 + ((2 * size + 3) & ~3u);
                composite_glyphs(&l, msb, k, it, (size_t)(p - it));
                composite_glyphs(&l, msb, k, it, (size_t)(p - it));
            }
            uint8_t odd[12] = { 9 };               /* 9 glyphs do not fit: sent raw */
            composite_glyphs(&l, msb, 0, odd, sizeof odd);
            composite_glyphs(&l, msb, 2, odd, 4);   /* shorter than an item's header */
            CHECK(round_trip(XC_REQUESTS, msb, &l, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &l, 3, NULL));
            buf_free(&l.all);
        }
    }
}

/* Images the pixel coder does not code, kept for the next session all the same: a palette
 * and WebPs of an image alone (opaque and with alpha, as a window's icon), up to
 * XC_PIXCACHE_IMAGE_MAX; a larger WebP is left to the tiles. */
static void test_pixcache_images(void)
{
    struct msgs m = { 0 };
    big_image(&m, false, 100, 60, 1, 0, 24);  /* a small photograph: WebP, mode 0 */
    big_image(&m, false, 90, 60, 2, -1, 32);  /* an icon whose alpha varies: mode 1 */
    big_image(&m, false, 200, 25, 2, 0, 24);  /* two colours: a palette */
    big_image(&m, false, 160, 120, 1, 0, 24); /* 76,800 bytes: over the bound */
    struct buf file = { 0 }, file_d = { 0 }, code = { 0 }, again = { 0 }, again_d = { 0 };
    TEST("That palettes and WebPs of images alone up to 64 KiB are kept at both ends alike, larger ones not") {
        CHECK(pix_session(&m, NULL, &code, &file, &file_d) != (size_t)-1);
        CHECK(file.len > 4 && file.len == file_d.len && !memcmp(buf_head(&file), buf_head(&file_d), file.len));
        CHECK_EQ(ld32(buf_head(&file), false), 3);
        unsigned palettes = 0, opaque = 0, alpha = 0; /* filter bytes 3 and 9 (WebP; mode 0, 1) */
        for (uint32_t i = 0; i < 3; i++) {
            size_t body = pix_entry(&file, i);
            uint32_t len = body ? ld32(buf_head(&file) + body - 4, false) : 0;
            const uint8_t *c = buf_head(&file) + body + len + 4;
            CHECK(body && len <= XC_PIXCACHE_IMAGE_MAX);
            palettes += body && c[0] == 3;
            opaque += body && c[0] == 9 && c[1] == 0;
            alpha += body && c[0] == 9 && c[1] == 1;
        }
        CHECK(palettes == 1 && opaque == 1 && alpha == 1);
    }
    TEST("That the next session sends them by index, decodes them exactly and saves the same file") {
        size_t cold = pix_session(&m, NULL, &code, &again, &again_d);
        struct msgs kept = { 0 }; /* the three kept images alone */
        for (int i = 0; i < 3; i++)
            add(&kept, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i]);
        size_t kept_cold = pix_session(&kept, NULL, &code, &again, &again_d);
        size_t warm = pix_session(&m, &file, &code, &again, &again_d);
        CHECK(cold != (size_t)-1 && kept_cold != (size_t)-1 && warm != (size_t)-1);
        CHECK_EQ(pix_hits[0], 3);
        CHECK_EQ(pix_hits[1], 3);
        CHECK(warm + kept_cold - 64 <= cold); /* the kept ones cost a few bytes each */
        CHECK(again.len == file.len && !memcmp(buf_head(&again), buf_head(&file), file.len));
        CHECK(again_d.len == file.len && !memcmp(buf_head(&again_d), buf_head(&file), file.len));
        printf("  warm %zu B against cold %zu B (the kept images alone: %zu B)\n", warm, cold, kept_cold);
        buf_free(&kept.all);
    }
    buf_free(&m.all); buf_free(&file); buf_free(&file_d); buf_free(&code); buf_free(&again); buf_free(&again_d);
}

int main(void)
{
    test_bigimg();
    test_budget();
    test_pixcache();
    test_pixcache_images();
    test_lossy();
    image_tests();
    return test_summary();
}
