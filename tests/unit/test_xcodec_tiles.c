/* test_xcodec_tiles.c -- tiles of large images kept across sessions (tilecache.c, PutImage
 * filter 9 mode 3): a page drawn again in other strips costs its references, both ends save
 * the same file whatever order the channels came in, and bad files and codes are refused. */
#include "xcodec_helpers.h"

#define PAGE_W 640
#define PAGE_H 420

/* A page of text: glyphs of 6 x 10 pixels with grey edges, each of 40 shapes, in lines of
 * 15 pixels; no two 16 x 16 cells alike. */
static uint32_t *make_page(void)
{
    uint32_t *px = malloc(4u * PAGE_W * PAGE_H);
    uint8_t shapes[40][10][6];
    rng_state = 777;
    for (int k = 0; k < 40; k++)
        for (int y = 0; y < 10; y++)
            for (int x = 0; x < 6; x++)
                shapes[k][y][x] = rnd() % 3 ? 255 : (uint8_t)(rnd() % 200);
    for (uint32_t y = 0; y < PAGE_H; y++)
        for (uint32_t x = 0; x < PAGE_W; x++) {
            uint32_t gx = x % 7, ly = y % 15, glyph = (x / 7 * 131 + y / 15 * 71 + x / 7 * (y / 15)) % 41;
            uint32_t v = ly < 10 && gx < 6 && glyph < 40 ? shapes[glyph][ly][gx] : 255;
            px[y * PAGE_W + x] = v | v << 8 | (v < 128 ? v * 2 : 255) << 16;
        }
    return px;
}

/* A PutImage of the page's rows [y0, y0 + h) and columns [x0, x0 + w), drawn at (dx, dy). */
static void strip(struct msgs *m, const uint32_t *page, uint16_t x0, uint16_t y0, uint16_t w, uint16_t h, int16_t dx,
                  int16_t dy)
{
    size_t len = 24 + 4u * w * h;
    uint8_t *p = calloc(1, len);
    p[0] = 72, p[1] = 2;
    st16(p + 2, (uint16_t)(len / 4), false);
    st32(p + 4, 0x400001, false), st32(p + 8, 0x400002, false);
    st16(p + 12, w, false), st16(p + 14, h, false), st16(p + 16, (uint16_t)dx, false), st16(p + 18, (uint16_t)dy, false);
    p[21] = 24;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            st32(p + 24 + 4 * (y * w + x), page[(y0 + y) * PAGE_W + x0 + x], false);
    add(m, p, len);
    free(p);
}

/* The page in strips of h rows (the last shorter), drawn at (dx, dy) onwards. */
static void paint(struct msgs *m, const uint32_t *page, uint16_t h, int16_t dx, int16_t dy)
{
    for (uint16_t y = 0; y < PAGE_H; y += h)
        strip(m, page, 0, y, PAGE_W, (uint16_t)(y + h <= PAGE_H ? h : PAGE_H - y), dx, (int16_t)(dy + y));
}

static int channels = 2; /* tile_session's: 1, or 2 (even and odd messages) */

/* One session: m's requests in two channels (even and odd messages), the encoding end coding
 * them in turn, the decoding end decoding the second channel first; each end with its own
 * tiles loaded from file (NULL: cold) or none at all (with_tiles false). Returns the code's
 * size, or (size_t)-1 when m did not come back exactly; each end's file to save. */
static size_t tile_session(const struct msgs *m, bool with_tiles, const struct buf *file, size_t budget,
                           struct buf *save_e, struct buf *save_d, uint64_t *hits)
{
    struct xc_tilecache *ce = NULL, *cd = NULL;
    struct xenc *e[2]; struct xdec *d[2];
    struct buf enc[2] = { { 0 }, { 0 } }, dec[2] = { { 0 }, { 0 } };
    bool ok = true;
    if (with_tiles) {
        xc_tilecache_new(&ce, budget);
        xc_tilecache_new(&cd, budget);
        ok = !file || (xc_tilecache_load(ce, buf_head(file), file->len) == 0 &&
                       xc_tilecache_load(cd, buf_head(file), file->len) == 0);
    }
    for (int k = 0; k < 2; k++) {
        xenc_new(&e[k], XC_REQUESTS, false);
        xdec_new(&d[k], XC_REQUESTS, false);
        xenc_set_link_rate(e[k], 32000);
        xenc_set_tilecache(e[k], ce);
        xdec_set_tilecache(d[k], cd);
    }
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e[i % channels], buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc[i % channels]) == 0;
    for (int k = 1; ok && k >= 0; k--)
        ok = xdec_feed(d[k], buf_head(&enc[k]), enc[k].len, &dec[k]) == (long)enc[k].len;
    for (int i = 0; ok && i < m->n; i++) {
        size_t n = m->off[i + 1] - m->off[i];
        ok = dec[i % channels].len >= n && !memcmp(buf_head(&dec[i % channels]), buf_head(&m->all) + m->off[i], n);
        buf_consume(&dec[i % channels], n);
    }
    ok = ok && !dec[0].len && !dec[1].len;
    if (save_e) {
        buf_clear(save_e), buf_clear(save_d);
        ok = ok && xc_tilecache_save(ce, save_e) == 0 && xc_tilecache_save(cd, save_d) == 0;
    }
    if (hits)
        hits[0] = xc_tilecache_hits(ce), hits[1] = xc_tilecache_hits(cd);
    size_t size = ok ? zstd_size(&enc[0]) + zstd_size(&enc[1]) : (size_t)-1;
    for (int k = 0; k < 2; k++) {
        xenc_free(e[k]); xdec_free(d[k]);
        buf_free(&enc[k]); buf_free(&dec[k]);
    }
    xc_tilecache_free(ce), xc_tilecache_free(cd);
    return size;
}

/* A page painted in first's strips, saving the tiles at both ends (fe, fd: the same file),
 * then in second's with them (ge, gd): a fraction of the bytes without them (measured 0.54 for
 * a page: the cells cut by the first session's strips are sent again), as many references
 * taken at both ends, the same file saved again. */
static void two_sessions(const struct msgs *first, const struct msgs *second, const char *what, struct buf *fe,
                         struct buf *fd, struct buf *ge, struct buf *gd)
{
    size_t cold = tile_session(first, true, NULL, 8u << 20, fe, fd, NULL);
    CHECK(cold != (size_t)-1 && fe->len > 4);
    CHECK(fe->len == fd->len && !memcmp(buf_head(fe), buf_head(fd), fe->len));
    uint64_t hits[2];
    size_t without = tile_session(second, false, NULL, 0, NULL, NULL, NULL);
    size_t warm = tile_session(second, true, fe, 8u << 20, ge, gd, hits);
    printf("  %ux%u %s: %zu bytes cold; again in other strips %zu without tiles, %zu with (%llu tiles sent as references)\n",
           PAGE_W, PAGE_H, what, cold, without, warm, (unsigned long long)hits[0]);
    CHECK(warm != (size_t)-1 && without != (size_t)-1);
    CHECK(warm * 10 < without * 6);
    CHECK(hits[0] > 0 && hits[0] == hits[1]);
    CHECK(ge->len == gd->len && !memcmp(buf_head(ge), buf_head(gd), ge->len));
}

static void test_sessions(void)
{
    uint32_t *page = make_page();
    struct msgs first = { 0 }, second = { 0 };
    paint(&first, page, 96, 0, 0);   /* in strips of 96 rows */
    paint(&second, page, 71, 32, 48); /* of 71 (as firefox), 32 pixels right and 48 down: the same grid cells */
    struct buf fe = { 0 }, fd = { 0 }, ge = { 0 }, gd = { 0 };
    TEST("That a second session drawing the same page in other strips sends a fraction of the bytes, exactly") {
        two_sessions(&first, &second, "page", &fe, &fd, &ge, &gd);
    }
    TEST("That the same page drawn again in the same session, in other strips, costs a fraction of drawing it") {
        struct msgs both = { 0 }; /* first's strips, then second's */
        for (int i = 0; i < first.n; i++)
            add(&both, buf_head(&first.all) + first.off[i], first.off[i + 1] - first.off[i]);
        for (int i = 0; i < second.n; i++)
            add(&both, buf_head(&second.all) + second.off[i], second.off[i + 1] - second.off[i]);
        channels = 1; /* the session's tiles are a channel's */
        size_t one = tile_session(&first, false, NULL, 0, NULL, NULL, NULL);
        size_t again = tile_session(&both, false, NULL, 0, NULL, NULL, NULL);
        size_t alone = tile_session(&second, false, NULL, 0, NULL, NULL, NULL);
        channels = 2;
        printf("  drawn again in other strips: %zu bytes more, %zu alone\n", again - one, alone);
        CHECK(one != (size_t)-1 && again != (size_t)-1 && alone != (size_t)-1);
        CHECK((again - one) * 10 < alone * 6);
        buf_free(&both.all);
    }
    TEST("That with fewer tiles kept than the page holds both ends still save the same file, the least by key") {
        struct buf a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
        struct msgs reversed = { 0 };
        for (int i = first.n - 1; i >= 0; i--)
            add(&reversed, buf_head(&first.all) + first.off[i], first.off[i + 1] - first.off[i]);
        CHECK(tile_session(&first, true, NULL, 100 * 1024, &a, &b, NULL) != (size_t)-1);
        CHECK(tile_session(&reversed, true, NULL, 100 * 1024, &c, &d, NULL) != (size_t)-1);
        CHECK_EQ(a.len, 4 + 100 * 1024);
        CHECK(a.len == b.len && !memcmp(buf_head(&a), buf_head(&b), a.len));
        CHECK(a.len == c.len && !memcmp(buf_head(&a), buf_head(&c), a.len)); /* in another order: the same */
        CHECK(c.len == d.len && !memcmp(buf_head(&c), buf_head(&d), c.len));
        buf_free(&a), buf_free(&b), buf_free(&c), buf_free(&d), buf_free(&reversed.all);
    }
    TEST("That a cut code waits, a corrupt one is refused or decodes one message, and one against tiles not held is refused") {
        struct msgs one = { 0 };
        strip(&one, page, 0, 100, PAGE_W, 52, 32, 148);
        struct xc_tilecache *ce, *cd, *short_set;
        xc_tilecache_new(&ce, 8u << 20), xc_tilecache_new(&cd, 8u << 20), xc_tilecache_new(&short_set, 8u << 20);
        CHECK_EQ(xc_tilecache_load(ce, buf_head(&fe), fe.len), 0);
        CHECK_EQ(xc_tilecache_load(cd, buf_head(&fe), fe.len), 0);
        struct buf cut = { 0 };
        CHECK_EQ(buf_append(&cut, buf_head(&fe), fe.len / 1024 / 2 * 1024 + 4), 0);
        st32(cut.data, (uint32_t)(cut.len / 1024), false); /* the first half of the tiles */
        CHECK_EQ(xc_tilecache_load(short_set, buf_head(&cut), cut.len), 0);
        struct xenc *e;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_link_rate(e, 32000);
        xenc_set_tilecache(e, ce);
        CHECK_EQ(xenc_message(e, buf_head(&one.all), one.all.len, &enc), 0);
        CHECK(xc_tilecache_hits(ce) > 0);
        uint8_t *p = (uint8_t *)buf_head(&enc);
        struct xdec *d;
        for (int k = 0; k < 3; k++) { /* no tiles, another file (an index beyond it), the right one */
            xdec_new(&d, XC_REQUESTS, false);
            xdec_set_tilecache(d, k == 0 ? NULL : k == 1 ? short_set : cd);
            buf_clear(&out);
            long r = xdec_feed(d, p, enc.len, &out);
            if (k < 2)
                CHECK(r == -EBADMSG || (r == (long)enc.len && (out.len != one.all.len || memcmp(buf_head(&out), buf_head(&one.all), out.len))));
            else
                CHECK(r == (long)enc.len && out.len == one.all.len && !memcmp(buf_head(&out), buf_head(&one.all), out.len));
            CHECK_EQ(k == 0 ? r : 0, k == 0 ? -EBADMSG : 0); /* mode 3 without tiles: refused */
            xdec_free(d);
        }
        for (size_t at = 8; at < enc.len; at += enc.len / 31 + 1) {
            xdec_new(&d, XC_REQUESTS, false);
            xdec_set_tilecache(d, cd);
            p[at] ^= 0x45;
            buf_clear(&out);
            long r = xdec_feed(d, p, enc.len, &out);
            /* refused, or one whole message (a WebP pixel under a tile is not used: may be the same) */
            CHECK(r == -EBADMSG || (r == (long)enc.len && out.len == one.all.len));
            p[at] ^= 0x45;
            xdec_free(d);
        }
        for (size_t n = 0; n < enc.len; n += enc.len / 17 + 1) { /* cut short: waits, takes nothing */
            xdec_new(&d, XC_REQUESTS, false);
            xdec_set_tilecache(d, cd);
            buf_clear(&out);
            CHECK_EQ(xdec_feed(d, p, n, &out), 0);
            CHECK_EQ(out.len, 0);
            xdec_free(d);
        }
        xenc_free(e);
        xc_tilecache_free(ce), xc_tilecache_free(cd), xc_tilecache_free(short_set);
        buf_free(&enc), buf_free(&out), buf_free(&cut), buf_free(&one.all);
    }
    TEST("That a tile file of another size, out of order, with a tile twice or of one colour is refused; one loaded is saved again as it was") {
        struct xc_tilecache *c;
        size_t n = fe.len;
        uint8_t *f = malloc(n);
        for (int k = 0; k < 6; k++) {
            memcpy(f, buf_head(&fe), n);
            size_t len = n;
            if (k == 0) len = n - 1;                                          /* cut */
            if (k == 1) st32(f, ld32(f, false) + 1, false);                   /* count beyond */
            if (k == 2) memcpy(f + 4, buf_head(&fe) + 4 + 1024, 1024), memcpy(f + 4 + 1024, buf_head(&fe) + 4, 1024); /* swapped */
            if (k == 3) memcpy(f + 4 + 1024, f + 4, 1024);                    /* twice */
            if (k == 4) memset(f + 4 + 2048, 0x7f, 1024);                     /* one colour */
            if (k == 5) st32(f, 0, false), len = 4;                           /* empty */
            xc_tilecache_new(&c, 8u << 20);
            CHECK_EQ(xc_tilecache_load(c, f, len), -EBADMSG);
            CHECK_EQ(xc_tilecache_loaded(c), 0);
            xc_tilecache_free(c);
        }
        xc_tilecache_new(&c, 8u << 20);
        CHECK_EQ(xc_tilecache_load(c, buf_head(&fe), fe.len), 0);
        CHECK_EQ(xc_tilecache_loaded(c), (fe.len - 4) / 1024);
        struct buf again = { 0 }; /* a session without large images keeps the file as it was */
        CHECK_EQ(xc_tilecache_save(c, &again), 0);
        CHECK(again.len == fe.len && !memcmp(buf_head(&again), buf_head(&fe), fe.len));
        buf_free(&again);
        xc_tilecache_free(c);
        free(f);
    }
    buf_free(&fe), buf_free(&fd), buf_free(&ge), buf_free(&gd);
    buf_free(&first.all), buf_free(&second.all);
    free(page);
}

/* A page of few colours (text without anti-aliasing, as a browser draws some of it), which
 * goes as palettes: coded against the last session's tiles all the same, and its own tiles
 * kept for the next. */
static void test_palette_pages(void)
{
    uint32_t *page = make_page();
    for (size_t i = 0; i < (size_t)PAGE_W * PAGE_H; i++)
        page[i] = (page[i] & 0xff) < 100 ? 0x203040 : (page[i] & 0xff) < 255 ? 0x808080 : 0xffffff;
    struct msgs first = { 0 }, second = { 0 };
    paint(&first, page, 96, 0, 0);
    paint(&second, page, 71, 32, 48);
    struct buf fe = { 0 }, fd = { 0 }, ge = { 0 }, gd = { 0 };
    TEST("That a page of palettes drawn in other strips next session costs a fraction, both ends saving its tiles alike") {
        two_sessions(&first, &second, "page of 3 colours", &fe, &fd, &ge, &gd);
    }
    buf_free(&fe), buf_free(&fd), buf_free(&ge), buf_free(&gd);
    buf_free(&first.all), buf_free(&second.all);
    free(page);
}

int main(void)
{
    test_sessions();
    test_palette_pages();
    return test_summary();
}
