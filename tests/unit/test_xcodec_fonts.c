/* test_xcodec_fonts.c -- font replies: QueryFont tables (against an earlier one, CJK ones by
 * their charset), image replies as palettes, ListFonts names; corrupt or cut ones refused or
 * awaited, never overrun. */
#include "xcodec_helpers.h"

static void font_tests(void)
{
    TEST("That QueryFont replies, the real one of \"fixed\" and large glyph tables, round-trip and shrink") {
        struct buf all = { 0 }, enc = { 0 };
        for (size_t i = 0; i + 1 < sizeof fixed_font_reply_hex; i += 2) {
            unsigned v;
            sscanf(fixed_font_reply_hex + i, "%2x", &v);
            uint8_t b = (uint8_t)v;
            CHECK_EQ(buf_append(&all, &b, 1), 0);
        }
        CHECK_EQ(all.len, 3316);
        encode_server(false, &all, &enc);
        CHECK(decode_server(false, &enc, 0, &all));
        CHECK(decode_server(false, &enc, 1, &all));
        CHECK(enc.len < all.len / 2);
        printf("  the QueryFont reply of \"fixed\" (%zu bytes): %zu bytes\n", all.len, enc.len);
        for (int msb = 0; msb < 2; msb++) {
            buf_clear(&all); buf_clear(&enc);
            font_reply(&all, msb, 7, 30, 65536);  /* a unicode font's table */
            font_reply(&all, msb, 8, 0, 20);      /* small: no model (a body of 268 bytes is) */
            font_reply(&all, msb, 9, 2, 17);
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 4093, &all));
            CHECK(enc.len < all.len / 6);
            printf("  glyph tables (%zu bytes, %s): %zu bytes\n", all.len, msb ? "MSB" : "LSB", enc.len);
        }
        buf_free(&all); buf_free(&enc);
    }
    TEST("That a font table coded against an earlier one (its bold, the same font again) round-trips and costs little") {
        for (int msb = 0; msb < 2; msb++) {
            struct buf all = { 0 }, enc = { 0 }, one = { 0 };
            font_reply(&all, msb, 7, 3, 65536);
            encode_server(msb, &all, &one); /* the medium alone */
            size_t tab = all.len;
            uint8_t *bold = malloc(tab);
            memcpy(bold, buf_head(&all), tab);
            CHECK_EQ(buf_append(&all, bold, tab), 0); /* queried again */
            for (size_t o = 60 + 24; o + 12 <= tab; o += 12) /* the bold: one pixel wider ink */
                if (ld16(bold + o + 4, msb))
                    st16(bold + o + 2, (uint16_t)(ld16(bold + o + 2, msb) + 1), msb);
            CHECK_EQ(buf_append(&all, bold, tab), 0);
            font_reply(&all, msb, 9, 3, 65536); /* another font of the same size: none fits */
            free(bold);
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 65519, &all));
            size_t z1 = zstd_size(&one), z4 = zstd_size(&enc); /* what the link sends */
            CHECK(z4 < 2 * z1 + z1 / 4);
            printf("  a glyph table (%zu bytes, %s): %zu bytes after zstd; again, its bold and another: %zu bytes\n",
                   tab, msb ? "MSB" : "LSB", z1, z4);
            buf_free(&all); buf_free(&enc); buf_free(&one);
        }
    }
    TEST("That a CJK font's table, its ideographs those of JIS X 0208 (by iconv), round-trips and its bitmap costs little") {
        iconv_t cd = iconv_open("UTF-32LE", "EUC-JP");
        CHECK(cd != (iconv_t)-1);
        for (int msb = 0; msb < 2 && cd != (iconv_t)-1; msb++) {
            struct buf all = { 0 }, enc = { 0 };
            font_reply(&all, msb, 7, 1, 65536);
            uint8_t *p = (uint8_t *)buf_head(&all), *ci = p + 60 + 8;
            st16(p + 40, 0, msb); st16(p + 42, 255, msb); p[48] = 0; p[49] = 255; /* 256 x 256 */
            memset(ci, 0, 12 * 65536); /* no glyph but... */
            unsigned n = 0;
            for (unsigned b1 = 0xa1; b1 < 0xff; b1++)
                for (unsigned b2 = 0xa1; b2 < 0xff; b2++) {
                    char in[2] = { (char)b1, (char)b2 }, *ip = in;
                    uint32_t u = 0;
                    char *op = (char *)&u;
                    size_t il = 2, ol = 4;
                    if (iconv(cd, &ip, &il, &op, &ol) == (size_t)-1 || u < 0x4e00 || u > 0x9fff)
                        continue;
                    uint8_t *g = ci + 12 * (size_t)u; /* ... JIS X 0208's ideographs, one shape */
                    st16(g + 2, 11, msb); st16(g + 4, 12, msb); st16(g + 6, 10, msb); st16(g + 8, 1, msb);
                    n++;
                }
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 1000, &all));
            size_t z = zstd_size(&enc);
            buf_clear(&enc);
            memset(ci + 12 * 0x4e00, 0, 12); /* one ideograph fewer: the bitmap flips one bit */
            ci[12 * 0x4e01 + 2] = 11; ci[12 * 0x4e01 + 4 + msb] = 12;
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(n > 6000);
            CHECK(z < 600); /* the bitmap alone would take over 2000 */
            CHECK(zstd_size(&enc) < z + 40);
            printf("  a CJK font table (%u ideographs, %s): %zu bytes after zstd\n", n, msb ? "MSB" : "LSB", z);
            buf_free(&all); buf_free(&enc);
        }
        if (cd != (iconv_t)-1)
            iconv_close(cd);
    }
    TEST("That image replies of few colours round-trip as palettes of 1, 2 and 4 bits") {
        const unsigned colours[] = { 1, 2, 3, 4, 5, 16, 17, 200 };
        for (int msb = 0; msb < 2; msb++)
            for (size_t c = 0; c < sizeof colours / sizeof *colours; c++) {
                struct buf all = { 0 }, enc = { 0 };
                uint32_t npx = 360000 + (uint32_t)c; /* the last index byte partly used */
                image_reply(&all, msb, 3, npx, colours[c]);
                image_reply(&all, msb, 4, 65 + (uint32_t)c, colours[c]);
                encode_server(msb, &all, &enc);
                CHECK(decode_server(msb, &enc, 0, &all));
                CHECK(decode_server(msb, &enc, 777, &all));
                if (colours[c] <= 16) {
                    unsigned bits = colours[c] <= 2 ? 1 : colours[c] <= 4 ? 2 : 4;
                    CHECK(enc.len <= (size_t)npx * bits / 8 + 200);
                }
                buf_free(&all); buf_free(&enc);
            }
    }
    TEST("That corrupt or cut glyph tables and palettes are refused or awaited") {
        struct buf all = { 0 }, enc = { 0 };
        image_reply(&all, false, 3, 1001, 3); /* 2-bit indices, 1001 of them */
        encode_server(false, &all, &enc);
        uint8_t *c = malloc(enc.len);
        memcpy(c, buf_head(&enc), enc.len);
        c[enc.len - 1] |= 1; /* an unused bit of the last index byte */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        memcpy(c, buf_head(&enc), enc.len);
        c[enc.len - 251] = 0xff; /* index 3 of a palette of 3 */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        for (size_t cut = 0; cut < enc.len; cut += 7) /* cut short: the setup record (10 bytes) alone */
            CHECK_EQ(decode_server_result(false, buf_head(&enc), cut), cut < 10 ? 0 : 10);
        free(c);
        buf_clear(&all); buf_clear(&enc);
        font_reply(&all, false, 3, 0, 100);
        memset((uint8_t *)buf_head(&all) + 60, 0, 1200); /* every glyph absent: a bitmap of zeros */
        encode_server(false, &all, &enc);
        CHECK(decode_server(false, &enc, 0, &all));
        c = malloc(enc.len);
        memcpy(c, buf_head(&enc), enc.len);
        CHECK_EQ(c[enc.len - 1], 0);
        c[enc.len - 1] = 0x10; /* an unused bit of the bitmap (100 glyphs) */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        c[enc.len - 1] = 0x08; /* a glyph present, but the code ends before its index */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        c[enc.len - 1] = 0;
        c[enc.len - 14] = 4; /* a character set beyond the three */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        c[enc.len - 14] = 0;
        c[enc.len - 16] = 1; /* a reference table where there is none */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        free(c);
        buf_clear(&all); buf_clear(&enc);
        font_reply(&all, false, 3, 2, 300);
        encode_server(false, &all, &enc);
        CHECK(decode_server(false, &enc, 0, &all));
        c = malloc(enc.len);
        int refused = 0;
        for (int t = 0; t < 3000; t++) {
            memcpy(c, buf_head(&enc), enc.len);
            c[8 + rnd() % (enc.len - 8)] ^= (uint8_t)(1 + rnd() % 255);
            refused += decode_server_result(false, c, enc.len) < 0;
        }
        CHECK(refused > 0);
        free(c);
        buf_free(&all); buf_free(&enc);
    }
    TEST("That ListFonts replies (real names, a font directory, edge cases) round-trip and shrink") {
        for (int msb = 0; msb < 2; msb++) {
            struct buf all = { 0 }, enc = { 0 };
            size_t nreal = sizeof real_font_names / sizeof *real_font_names;
            names_reply(&all, msb, 4, real_font_names, nreal);
            size_t one = all.len;
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 5, &all));
            CHECK(enc.len < one * 2 / 3);
            printf("  %zu real font names (%zu bytes, %s): %zu bytes\n", nreal, one, msb ? "MSB" : "LSB", enc.len);
            char **syn;
            size_t nsyn = synth_font_names(&syn);
            buf_clear(&all); buf_clear(&enc);
            names_reply(&all, msb, 5, (const char *const *)syn, nsyn);
            one = all.len;
            for (size_t k = 8; k <= sizeof edge_font_names / sizeof *edge_font_names; k++)
                names_reply(&all, msb, (uint16_t)(6 + k), edge_font_names, k); /* every padding */
            names_reply(&all, msb, 30, real_font_names + 3, 7);                /* too few: not the model */
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 333, &all));
            printf("  a font directory and edge cases (%zu bytes, %s): %zu bytes\n", all.len, msb ? "MSB" : "LSB", enc.len);
            buf_clear(&all); buf_clear(&enc);
            names_reply(&all, msb, 5, (const char *const *)syn, nsyn);
            encode_server(msb, &all, &enc);
            CHECK(enc.len < one / 15);
            /* 1500 families, each again after 1499 others: beyond what the sender searches */
            char **many = calloc(3000, sizeof *many);
            for (size_t i = 0; i < 3000; i++) {
                many[i] = malloc(96);
                snprintf(many[i], 96, "-f%zu-fam%zu-medium-r-normal--%zu-0-75-75-c-60-iso8859-1", i % 7, i % 1500, i % 3);
            }
            buf_clear(&all); buf_clear(&enc);
            names_reply(&all, msb, 6, (const char *const *)many, 3000);
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            for (size_t i = 0; i < 3000; i++)
                free(many[i]);
            free(many);
            for (size_t i = 0; i < nsyn; i++)
                free(syn[i]);
            free(syn);
            buf_free(&all); buf_free(&enc);
        }
    }
    TEST("That corrupt or cut font name lists are refused or awaited, never overrun") {
        struct buf all = { 0 }, enc = { 0 };
        names_reply(&all, false, 4, real_font_names, sizeof real_font_names / sizeof *real_font_names);
        encode_server(false, &all, &enc);
        uint8_t *c = malloc(enc.len);
        for (size_t cut = 0; cut < enc.len; cut += 5)
            CHECK_EQ(decode_server_result(false, buf_head(&enc), cut), cut < 10 ? 0 : 10);
        int refused = 0;
        for (int t = 0; t < 5000; t++) {
            memcpy(c, buf_head(&enc), enc.len);
            c[10 + rnd() % (enc.len - 10)] ^= (uint8_t)(1 + rnd() % 255);
            if (t % 2)
                c[10 + rnd() % (enc.len - 10)] = (uint8_t)rnd();
            refused += decode_server_result(false, c, enc.len) < 0;
        }
        CHECK(refused > 2500);
        free(c);
        buf_free(&all); buf_free(&enc);
    }
}

int main(void)
{
    font_tests();
    return test_summary();
}
