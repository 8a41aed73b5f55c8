/* test_xcodec_render.c -- RENDER's trapezoids (small differences, tables of vertex values,
 * recent values and mirrored edges, moved, mirrored or turned bodies) and requests of a
 * known extension's name; corrupt or cut ones refused or awaited. */
#include "xcodec_helpers.h"

static void render_tests(void)
{
    TEST("That RENDER trapezoids that move a little are coded as small differences") {
        struct msgs r = { 0 };
        for (int i = 0; i < 20; i++) {
            uint8_t t[20 + 40 * 2] = { 0 }; /* the request from byte 4 */
            for (int k = 0; k < 2; k++) { /* a thin trapezoid 3 pixels high, moving right */
                uint8_t *e = t + 20 + 40 * k;
                int32_t x = (100 + 2 * i + 7 * k) << 16, top = (50 + 3 * k) << 16, bottom = top + (3 << 16);
                int32_t v[10] = { top, bottom, x, top, x + 0x8000, bottom, x + (5 << 16), top, x + (5 << 16) + 0x8000, bottom };
                for (int f = 0; f < 10; f++)
                    st32(e + 4 * f, (uint32_t)v[f], false);
            }
            req(&r, false, 139, 10, 4 + sizeof t, t);
        }
        size_t size;
        CHECK(round_trip(XC_REQUESTS, false, &r, 0, &size));
        CHECK(size <= 20 * 56); /* mostly zero differences, which the link's coder squeezes */
        printf("  20 requests of 2 trapezoids (104 bytes each): %zu bytes\n", size);
        buf_free(&r.all);
    }
    TEST("That xclock's RENDER trapezoids of polygons round-trip as a table of vertex values") {
        struct msgs one = { 0 }, m = { 0 };
        add_hex(&one, xclock_traps_hex); /* one string: cut it into its requests */
        CHECK_EQ(one.all.len, 352);
        for (size_t at = 0; at + 4 <= one.all.len;) {
            const uint8_t *p = buf_head(&one.all) + at;
            size_t len = 4u * ld16(p + 2, false);
            add(&m, p, len);
            at += len;
        }
        buf_free(&one.all);
        CHECK_EQ(m.n, 3);
        size_t size;
        for (size_t chunk = 0; chunk < 4; chunk++)
            CHECK(round_trip(XC_REQUESTS, false, &m, chunk, chunk ? NULL : &size));
        printf("  3 Trapezoids of xclock (352 bytes): %zu bytes\n", size);
        CHECK(size <= 180); /* field deltas took 265: each vertex value is sent once a request */
        /* The same in the other byte order (the model takes values in the request's order). */
        struct msgs b = { 0 };
        traps_to_msb(&m, &b);
        CHECK(round_trip(XC_REQUESTS, true, &b, 0, NULL));
        CHECK(round_trip(XC_REQUESTS, true, &b, 5, NULL));
        buf_free(&b.all);
        buf_free(&m.all);
    }
    TEST("That xeyes' ellipses of trapezoids round-trip by recent values and mirrored edges") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, xeyes_traps_hex);
        CHECK_EQ(m.n, 4);
        size_t size, size1;
        for (size_t chunk = 0; chunk < 4; chunk++)
            CHECK(round_trip(XC_REQUESTS, false, &m, chunk, chunk ? NULL : &size));
        /* the first eye alone: sub-model 3, its slices turned from the two before (sources
         * 64 and 65, as they are), one K for both axes (flag 8), symmetric (flag 16): the
         * lower half's residuals all 0; turned from its top (flag 32): c after the first slice */
        struct msgs one = { 0 };
        add(&one, buf_head(&m.all), m.off[1]);
        struct xenc *e;
        struct buf enc = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        CHECK_EQ(xenc_message(e, buf_head(&one.all), one.all.len, &enc), 0);
        size1 = enc.len;
        const uint8_t *sub3 = memmem(buf_head(&enc), enc.len, "\x03\x40\x41", 3);
        CHECK(sub3 && (sub3[3] & ~4) == (8 | 16 | 32));
        size_t z1 = zstd_size(&enc);
        const uint8_t *lower = buf_head(&enc) + enc.len - 8 * 2; /* two residuals a slice */
        for (int k = 0; k < 16; k++)
            CHECK_EQ(lower[k], 0);
        xenc_free(e);
        buf_free(&enc); buf_free(&one.all);
        /* its first two slices alone: sub-model 2, the right edges mirrored (tag 254) */
        uint8_t two[24 + 80];
        memcpy(two, buf_head(&m.all), sizeof two);
        st16(two + 2, sizeof two / 4, false);
        xenc_new(&e, XC_REQUESTS, false);
        CHECK_EQ(xenc_message(e, two, sizeof two, &enc), 0);
        size_t mirrors = 0;
        for (size_t k = 0; k < enc.len; k++)
            mirrors += buf_head(&enc)[k] == 254;
        CHECK(mirrors >= 2);
        xenc_free(e);
        buf_free(&enc);
        printf("  4 Trapezoids of xeyes (%zu bytes): %zu bytes, the first eye %zu (%zu after zstd)\n", m.all.len, size,
               size1, z1);
        CHECK(size < m.all.len * 35 / 100); /* sub-model 2 alone: 627 */
        CHECK(size1 < 240);
        CHECK(size <= 285 && size1 <= 103);
        CHECK(z1 <= 90); /* not turned from its top: 95; nor symmetric: 104 */ /* with K of y sent and the first right p2.x from p1.x: 324 and 118 */
        struct msgs b = { 0 }; /* the other byte order */
        traps_to_msb(&m, &b);
        CHECK(round_trip(XC_REQUESTS, true, &b, 0, NULL));
        CHECK(round_trip(XC_REQUESTS, true, &b, 3, NULL));
        buf_free(&b.all);
        buf_free(&m.all);
    }
    TEST("That trapezoids moved, mirrored or turned from recent bodies round-trip as such (sub-model 3)") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            int32_t v[10 * 12];
            ellipse_traps(v, 8, 60.0, 50.0, 30.0, 40.0, 0.4);
            traps_req(&m, msb, v, 80);
            for (size_t i = 0; i < 80; i++) /* moved by (37.25, -3.5): exactly */
                v[i] += (int32_t)(trap_is_y(i) ? -3.5 * 65536 : 37.25 * 65536);
            traps_req(&m, msb, v, 80);
            int32_t w[80];
            ellipse_traps(v, 8, 60.0, 50.0, 30.0, 40.0, 0.4);
            mirror_traps(w, v, 8, 1); /* in x about 200 */
            traps_req(&m, msb, w, 80);
            mirror_traps(w, v, 8, 2); /* in y about 100 */
            traps_req(&m, msb, w, 80);
            for (int k = 0; k < 12; k++) { /* a shape of 3 trapezoids turned 6 degrees at a time */
                for (size_t j = 0; j < 30; j++)
                    v[j] = (int32_t)lround(65536 * ((trap_is_y(j) ? 90.0 : 80.0) + (40.0 + (double)(j % 7)) *
                                                    cos(k * 0.10471975511965977 + (double)j)));
                traps_req(&m, msb, v, 30);
            }
            size_t size;
            for (size_t chunk = 0; chunk < 8; chunk += 7)
                CHECK(round_trip(XC_REQUESTS, msb, &m, chunk, &size));
            /* the code: moved (source 0, no r2, as it is), mirrored in x and in y, turned (the
             * sources and refl bytes after the sub-model byte) */
            struct xenc *e;
            struct buf enc = { 0 }, one = { 0 }, four = { 0 };
            xenc_new(&e, XC_REQUESTS, msb);
            for (int i = 0; i < m.n; i++) {
                CHECK_EQ(xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc), 0);
                if (i == 0)
                    CHECK_EQ(buf_append(&one, buf_head(&enc), enc.len), 0);
                if (i == 3)
                    CHECK_EQ(buf_append(&four, buf_head(&enc), enc.len), 0);
            }
            int seen[4] = { 0 };
            for (size_t k = 0; k + 4 <= enc.len; k++) {
                const uint8_t *c = buf_head(&enc) + k;
                if (c[0] == 3 && c[1] < 64 && c[2] == 0xff && (c[3] & ~7) == 8 && (c[3] & 3) < 3)
                    seen[c[3] & 3]++; /* refl, flag 4: repeats exact, flag 8: K of y paired */
                if (c[0] == 3 && c[1] < 5 && c[2] == 2 * c[1] + 1 && (c[3] & ~4) == 8)
                    seen[3]++;
            }
            /* An ellipse turned half a turn is itself: its mirror in y is its mirror in x
             * moved, and the search takes the first candidate that predicts every value. */
            CHECK(seen[0] >= 1 && seen[1] >= 1 && seen[0] + seen[2] >= 2 && seen[3] >= 6);
            size_t z1 = zstd_size(&one), z4 = zstd_size(&four);
            printf("  a skewed ellipse of 8 trapezoids, moved, mirrored twice, 12 turned shapes (%s, %zu bytes): "
                   "%zu bytes; after zstd the ellipse %zu, with its copies %zu\n", msb ? "MSB" : "LSB", m.all.len,
                   size, z1, z4);
            CHECK(z4 < 2 * z1); /* the three copies cost less than the ellipse */
            xenc_free(e);
            buf_free(&enc); buf_free(&one); buf_free(&four);
            buf_free(&m.all);
        }
    }
    TEST("That requests of a known extension's name cost its index (NAMED), and others round-trip") {
        /* xeyes' QueryExtensions as it asks them (and XInput's GetExtensionVersion, extension
         * 130 minor 1, the same layout), then a name not in the table, a name with padding
         * that is not zero, a body longer than the name needs, a byte 1 that is not zero */
        static const char *const names[] = { "BIG-REQUESTS", "XKEYBOARD", "RENDER", "SHAPE",
                                             "Generic Event Extension", "XInputExtension", "XFIXES",
                                             "DAMAGE", "Present", "NOT-AN-EXTENSION" };
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
                uint8_t q[8 + 32] = { 0 };
                size_t n = strlen(names[i]);
                st16(q, (uint16_t)n, msb);
                memcpy(q + 4, names[i], n);
                req(&m, msb, 98, 0, 8 + (n + 3) / 4 * 4, q);
                if (i == 5)
                    req(&m, msb, 130, 1, 8 + (n + 3) / 4 * 4, q);
            }
            size_t size10;
            struct msgs known = { 0 };
            for (int i = 0; i < 10; i++)
                add(&known, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i]);
            CHECK(round_trip(XC_REQUESTS, msb, &known, 0, &size10));
            printf("  9 QueryExtension and a GetExtensionVersion of known names (%zu bytes): %zu bytes\n",
                   known.all.len, size10);
            CHECK_EQ(size10, 9 * 3 + 4); /* byte0, NAMED, [minor], index (the names: 179 + 24) */
            uint8_t odd[8 + 8] = { 0 };
            st16(odd, 6, msb);
            memcpy(odd + 4, "RENDER\0\x01", 8); /* padding not zero */
            req(&m, msb, 98, 0, sizeof odd + 4, odd);
            st16(odd, 5, msb); /* RENDE: not a name of the table */
            req(&m, msb, 98, 0, sizeof odd + 4, odd);
            st16(odd, 2, msb); /* a body longer than the name needs */
            req(&m, msb, 98, 0, sizeof odd + 4, odd);
            st16(odd, 6, msb);
            memcpy(odd + 4, "RENDER\0\0", 8);
            req(&m, msb, 98, 1, sizeof odd + 4, odd); /* QueryExtension's byte 1 not zero */
            req(&m, msb, 16, 0, sizeof odd + 4, odd); /* InternAtom "RENDER": not NAMED */
            for (size_t chunk = 0; chunk < 3; chunk++)
                CHECK(round_trip(XC_REQUESTS, msb, &m, chunk, NULL));
            buf_free(&m.all);
            buf_free(&known.all);
        }
        /* NAMED records: QueryExtension RENDER (index 11), then GetExtensionVersion of
         * extension 130 (minor 1) XInputExtension (19) */
        uint8_t rec[] = { 98, 0x80, 11, 130, 0x80, 1, 19 };
        struct xdec *d;
        struct buf out = { 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK(out.len == 16 + 24 && !memcmp(buf_head(&out), "\x62\0\x04\0\x06\0\0\0RENDER\0\0", 16) &&
              !memcmp(buf_head(&out) + 16, "\x82\x01\x06\0\x0f\0\0\0XInputExtension\0", 24));
        xdec_free(d);
        cut_short_waits(rec, 3);
        cut_short_waits(rec + 3, 4);
        struct flip bad[] = {
            { 2, 48 },   /* no such name */
            { 0, 16 },   /* a core request but QueryExtension */
            { 1, 0x81 }, /* NAMED with another bit */
        };
        refused_each(rec, sizeof rec, bad, sizeof bad / sizeof *bad, false);
        xdec_new(&d, XC_SERVER, false); /* never on server messages */
        xdec_setup_seen(d);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
    TEST("That corrupt or cut trapezoids of sub-model 3 are refused or awaited") {
        /* One trapezoid, no reference, all head words zero: sources this body 1 back (not
         * there: every value from its base field, 0) and none, K and c 0, ten residuals 0. */
        uint8_t rec[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 64, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        struct xdec *d;
        struct buf out = { 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK_EQ(out.len, 64);
        /* then moved from it, recent body 0: residual 5 on value 0 (zz 10) */
        uint8_t moved[sizeof rec];
        memcpy(moved, rec, sizeof rec);
        moved[8] = 0, moved[15] = 10;
        CHECK_EQ(xdec_feed(d, moved, sizeof moved, &out), (long)sizeof moved);
        CHECK_EQ(out.len, 128);
        CHECK_EQ(ld32(buf_head(&out) + 64 + 24, false), 5);
        moved[8] = 1; /* recent body 1 is the first: the second decoded as MODEL too */
        CHECK_EQ(xdec_feed(d, moved, sizeof moved, &out), (long)sizeof moved);
        /* repeats exact (flag 4): the values the sources repeat have no residual. Recent body
         * 1 is ten 5s (the first record's zeros repeated the first value): values 1-9 repeat
         * value 0, one residual (K 0: 7) */
        uint8_t exact[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 1, 255, 4, 0, 0, 0, 0, 14 };
        CHECK_EQ(xdec_feed(d, exact, sizeof exact, &out), (long)sizeof exact);
        CHECK_EQ(out.len, 256);
        CHECK_EQ(ld32(buf_head(&out) + 192 + 24, false), 7);
        CHECK_EQ(ld32(buf_head(&out) + 192 + 24 + 36, false), 7);
        /* the same with K of y paired (flag 8): K of x only, then c */
        uint8_t paired[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 1, 255, 4 | 8, 0, 0, 0, 14 };
        CHECK_EQ(xdec_feed(d, paired, sizeof paired, &out), (long)sizeof paired);
        CHECK_EQ(out.len, 320);
        CHECK(!memcmp(buf_head(&out) + 256, buf_head(&out) + 192, 64));
        moved[8] = 5; /* no such recent body yet */
        CHECK_EQ(xdec_feed(d, moved, sizeof moved, &out), -EBADMSG);
        xdec_free(d);
        cut_short_waits(rec, sizeof rec);
        struct flip bad[] = {
            { 7, 4 },    /* no such sub-model */
            { 8, 255 },  /* r1 none */
            { 8, 0 },    /* recent body 0 of none */
            { 8, 72 },   /* neither a recent body nor this one */
            { 9, 72 },
            { 10, 3 },   /* no such reflection */
            { 10, 1 },   /* a reflection of this body */
            { 10, 32 },  /* from the top of a body not its own source */
            { 10, 64 },  /* an unknown flag */
        };
        refused_each(rec, sizeof rec, bad, sizeof bad / sizeof *bad, true);
        /* A recent body of another length; a K and a residual beyond 32 bits. */
        uint8_t longer[] = { 138, 0x07, 10, 26, 0, 0, 2, 3, 0, 255, 0, 0, 0, 0, 0 };
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK_EQ(xdec_feed(d, longer, sizeof longer, &out), -EBADMSG);
        xdec_free(d);
        uint8_t wide_k[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 64, 255, 0, 0xff, 0xff, 0xff, 0xff, 0x7f };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, wide_k, sizeof wide_k, &out), -EBADMSG);
        xdec_free(d);
        uint8_t wide_r[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 64, 255, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x7f };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, wide_r, sizeof wide_r, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
    TEST("That corrupt or cut trapezoid tables are refused or awaited") {
        /* Trapezoids of one trapezoid, no reference, all head words zero: a table code of
         * one new value 0 and nine references to it; then the same broken. */
        uint8_t rec[] = { 138, 0x07, 10, 16, 0, 0, 2, 1, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        struct xdec *d;
        struct buf out = { 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK_EQ(out.len, 64);
        CHECK_EQ(buf_head(&out)[1], 10);
        xdec_free(d);
        cut_short_waits(rec, sizeof rec);
        struct { size_t at; uint8_t v; } bad[] = {
            { 7, 3 },    /* no such sub-model */
            { 8, 0 },    /* index 0 of an empty table */
            { 10, 1 },   /* index 1 of a table of one */
            { 10, 254 }, /* neither an index nor a new value */
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            uint8_t c[sizeof rec];
            memcpy(c, rec, sizeof rec);
            c[bad[i].at] = bad[i].v;
            xdec_new(&d, XC_REQUESTS, false);
            buf_clear(&out);
            CHECK_EQ(xdec_feed(d, c, sizeof c, &out), -EBADMSG);
            CHECK_EQ(out.len, 0);
            xdec_free(d);
        }
        /* Sub-model 2: the same code decodes (index 0 is the newest value); a mirrored or
         * parallel edge only where a right p2.x is (value 8 of 10). */
        uint8_t rec2[sizeof rec];
        memcpy(rec2, rec, sizeof rec);
        rec2[7] = 2;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec2, sizeof rec2, &out), (long)sizeof rec2);
        CHECK_EQ(out.len, 64);
        xdec_free(d);
        uint8_t mirror[] = { 138, 0x07, 10, 16, 0, 0, 2, 2, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 254, 0, 0 };
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, mirror, sizeof mirror, &out), (long)sizeof mirror);
        xdec_free(d);
        uint8_t corner[sizeof mirror]; /* the mirror's place a corner: 0 + 0 - 0, then 0 */
        memcpy(corner, mirror, sizeof corner);
        corner[17] = 252;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, corner, sizeof corner, &out), (long)sizeof corner);
        xdec_free(d);
        corner[7] = 1; /* not in sub-model 1 */
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, corner, sizeof corner, &out), -EBADMSG);
        xdec_free(d);
        for (size_t at = 8; at < 17; at++) {
            if (at == 9)
                continue; /* the first value's varint */
            uint8_t c[sizeof mirror];
            memcpy(c, mirror, sizeof c);
            c[17] = 0; /* the mirror's place now an index, and a mirror before it */
            c[at] = at == 8 ? 253 : 254;
            if (at == 8)
                c[9] = 0; /* value 0: a parallel with no varint after it */
            xdec_new(&d, XC_REQUESTS, false);
            buf_clear(&out);
            CHECK_EQ(xdec_feed(d, c, sizeof c, &out), -EBADMSG);
            xdec_free(d);
        }
        /* A new value beyond 32 bits. */
        uint8_t wide[] = { 138, 0x07, 10, 16, 0, 0, 2, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
                           0, 0, 0, 0, 0, 0, 0, 0, 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, wide, sizeof wide, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
}

int main(void)
{
    render_tests();
    return test_summary();
}
