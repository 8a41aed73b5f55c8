/* test_xcodec.c -- the structured X codec: every message kind round-trips exactly in both
 * byte orders, whatever the chunking of the encoded stream; repeats cost little; corrupt
 * and truncated streams are refused cleanly; random messages round-trip; references evict
 * alike at both ends. The body models have files of their own: test_xcodec_render.c
 * (trapezoids, extension names), test_xcodec_fonts.c, test_xcodec_images.c. */
#include "xcodec_helpers.h"

static void messages_tests(void)
{
    TEST("That requests of every kind round-trip in both byte orders") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            requests_of_every_kind(&m, msb);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That requests decode fed one byte at a time") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            requests_of_every_kind(&m, msb);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 1, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 7, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That BIG-REQUESTS requests round-trip, small and large") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            big_req(&m, msb, 72, 8);
            big_req(&m, msb, 72, 28 + 8000);
            big_req(&m, msb, 72, 300000);        /* beyond a reference's size */
            big_req(&m, msb, 70, 12 + 4 + 8 * 100);
            big_req(&m, msb, 139, 64);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 4096, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That setup replies (success, failed, authenticate) cross verbatim and the rest follows") {
        for (int msb = 0; msb < 2; msb++)
            for (uint8_t st = 0; st < 3; st++) {
                struct msgs m = { 0 };
                setup_reply(&m, msb, st, st == 1 ? 600 : 20);
                reply(&m, msb, 0, 1, 0, 3);
                CHECK(round_trip(XC_SERVER, msb, &m, 0, NULL));
                CHECK(round_trip(XC_SERVER, msb, &m, 1, NULL));
                buf_free(&m.all);
            }
    }
    TEST("That replies, events of every code, GenericEvents and errors round-trip") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            setup_reply(&m, msb, 1, 100);
            reply(&m, msb, 0, 1, 0, 1);
            reply(&m, msb, 0, 2, 0, 1);
            reply(&m, msb, 8, 3, 4000, 9);
            reply(&m, msb, 8, 9, 4000, 9);
            reply(&m, msb, 8, 9, 4000, 10);
            reply(&m, msb, 8, 65535, 20, 10);
            for (int c = 2; c < 35; c++)
                event(&m, msb, (uint8_t)c, (uint16_t)(c * 3), (uint32_t)c * 1000, (int16_t)c, (int16_t)-c);
            event(&m, msb, 6 | 0x80, 7, 1, 2, 3);          /* SendEvent */
            event(&m, msb, 11, 0xabcd, 0x12345678, 4, 4);  /* KeymapNotify: no sequence number */
            uint8_t err[32] = { 0, 3 };
            st16(err + 2, 100, msb);
            st32(err + 4, 0xdeadbeef, msb);
            add(&m, err, 32);
            uint8_t ge[32 + 40] = { 35, 131 };
            st16(ge + 2, 101, msb);
            st32(ge + 4, 10, msb);
            st16(ge + 8, 6, msb);
            for (int i = 10; i < 72; i++) ge[i] = (uint8_t)i;
            add(&m, ge, sizeof ge);
            ge[40] ^= 1;
            add(&m, ge, sizeof ge);
            CHECK(round_trip(XC_SERVER, msb, &m, 0, NULL));
            CHECK(round_trip(XC_SERVER, msb, &m, 1, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That malformed messages cross verbatim") {
        struct msgs m = { 0 };
        uint8_t bad[12] = { 65, 0, 9, 0 };         /* length field says 36 bytes */
        add(&m, bad, 12);
        add(&m, bad, 5);                           /* not a multiple of 4 */
        uint8_t big0[8] = { 72, 0, 0, 0, 1, 0, 0, 0 }; /* BIG length of 4 in 8 bytes */
        add(&m, big0, 8);
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, NULL));
        struct msgs s = { 0 };
        setup_reply(&s, false, 1, 8);
        uint8_t ev[40] = { 6 };                    /* an event of 40 bytes */
        add(&s, ev, 40);
        uint8_t rp[32] = { 1, 0, 0, 0, 5 };        /* a reply whose length is wrong */
        add(&s, rp, 32);
        CHECK(round_trip(XC_SERVER, false, &s, 1, NULL));
        buf_free(&m.all); buf_free(&s.all);
    }
    TEST("That repeats cost a reference and pointer motion a few bytes") {
        struct msgs m = { 0 };
        setup_reply(&m, false, 1, 8);
        for (int i = 0; i < 50; i++)
            event(&m, false, 6, (uint16_t)(100 + i), 5000u + 10u * i, (int16_t)(200 + i), (int16_t)(300 - 2 * i));
        size_t size;
        CHECK(round_trip(XC_SERVER, false, &m, 0, &size));
        CHECK(size < 20 + 50 * 12);
        struct msgs r = { 0 };
        for (int i = 0; i < 50; i++)
            req(&r, false, 43, 0, 4, NULL);
        CHECK(round_trip(XC_REQUESTS, false, &r, 0, &size));
        CHECK(size <= 4 + 49 * 2);
        buf_free(&m.all); buf_free(&r.all);
    }
    TEST("That truncated streams yield only whole messages and wait for the rest") {
        struct msgs m = { 0 };
        requests_of_every_kind(&m, false);
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, dec = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        for (int i = 0; i < m.n; i++)
            xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc);
        for (size_t cut = 0; cut < enc.len; cut += 3) {
            xdec_new(&d, XC_REQUESTS, false);
            buf_clear(&dec);
            long used = xdec_feed(d, buf_head(&enc), cut, &dec);
            CHECK(used >= 0 && (size_t)used <= cut);
            bool whole = false; /* the output ends on a message boundary */
            for (int i = 0; i <= m.n; i++) whole |= m.off[i] == dec.len;
            CHECK(whole);
            CHECK(memcmp(buf_head(&dec) ? buf_head(&dec) : (const uint8_t *)"", buf_head(&m.all), dec.len) == 0);
            xdec_free(d);
        }
        xenc_free(e);
        buf_free(&enc); buf_free(&dec); buf_free(&m.all);
    }
    TEST("That corrupt streams are refused cleanly") {
        struct xdec *d;
        struct buf out = { 0 };
        const uint8_t ref_missing[] = { 65, 0x02, 5 };             /* slot 2 of an empty class */
        const uint8_t esc_zero[] = { 1, 0xff, 0 };                  /* a verbatim message of 0 bytes */
        const uint8_t high_bit[] = { 65, 0x87, 5 };
        const uint8_t long_varint[] = { 65, 0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1 };
        const uint8_t huge[] = { 65, 0x07, 0xff, 0xff, 0xff, 0xff, 0x0f };
        const uint8_t *cases[] = { ref_missing, esc_zero, high_bit, long_varint, huge };
        size_t sizes[] = { sizeof ref_missing, sizeof esc_zero, sizeof high_bit, sizeof long_varint, sizeof huge };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            xdec_new(&d, XC_REQUESTS, false);
            CHECK_EQ(xdec_feed(d, cases[i], sizes[i], &out), -EBADMSG);
            CHECK_EQ(xdec_feed(d, cases[i], sizes[i], &out), -EBADMSG); /* and stays refused */
            CHECK_EQ(out.len, 0);
            xdec_free(d);
        }
        const uint8_t not_setup[] = { 1, 0x07, 0, 8 };             /* the server side must start verbatim */
        xdec_new(&d, XC_SERVER, false);
        CHECK_EQ(xdec_feed(d, not_setup, sizeof not_setup, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
    TEST("That flipped bytes in an encoded stream never crash the decoder") {
        struct msgs m = { 0 };
        requests_of_every_kind(&m, true);
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, true);
        for (int i = 0; i < m.n; i++)
            xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc);
        int refused = 0;
        for (int t = 0; t < 2000; t++) {
            uint8_t *copy = malloc(enc.len);
            memcpy(copy, buf_head(&enc), enc.len);
            copy[rnd() % enc.len] ^= (uint8_t)(1 + rnd() % 255);
            xdec_new(&d, XC_REQUESTS, true);
            buf_clear(&out);
            refused += xdec_feed(d, copy, enc.len, &out) < 0;
            xdec_free(d);
            free(copy);
        }
        CHECK(refused > 0);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
    TEST("That random messages round-trip in both directions and byte orders") {
        for (int round = 0; round < 200; round++) {
            bool msb = round & 1;
            enum xc_dir dir = round & 2 ? XC_SERVER : XC_REQUESTS;
            struct msgs m = { 0 };
            if (dir == XC_SERVER) setup_reply(&m, msb, 1, 4 * (rnd() % 50));
            int n = 1 + (int)(rnd() % 40);
            uint16_t seq = (uint16_t)rnd();
            for (int i = 0; i < n; i++) {
                size_t len = 4 * (rnd() % 4 == 0 ? 1 + rnd() % 300 : 1 + rnd() % 12);
                uint8_t *p = malloc(len + 32);
                for (size_t k = 0; k < len + 32; k++) p[k] = (uint8_t)(rnd() % 4 ? rnd() % 3 : rnd());
                if (m.n > 1 && rnd() % 3 == 0) { /* a near-repeat of an earlier message */
                    int j = (int)(rnd() % (unsigned)m.n);
                    size_t jl = m.off[j + 1] - m.off[j];
                    if (jl <= len + 32) memcpy(p, buf_head(&m.all) + m.off[j], jl);
                    p[rnd() % (len + 32)] ^= 1;
                }
                if (dir == XC_REQUESTS) {
                    p[0] = (uint8_t)(rnd() % 3 == 0 ? 128 + rnd() % 4 : 60 + rnd() % 20);
                    if (rnd() % 8 == 0) { st16(p + 2, 0, msb); st32(p + 4, (uint32_t)((len + 4) / 4), msb); len += 4; }
                    else st16(p + 2, (uint16_t)(len / 4), msb);
                    if (rnd() % 16 == 0) p[2] ^= 1; /* malformed now and then */
                } else {
                    seq = (uint16_t)(seq + rnd() % 3);
                    int kind = (int)(rnd() % 4);
                    p[0] = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? (uint8_t)(2 + rnd() % 33) : 35;
                    if (kind == 1 || kind == 3) { len += 32; st32(p + 4, (uint32_t)((len - 32) / 4), msb); }
                    else len = 32;
                    st16(p + 2, seq, msb);
                }
                add(&m, p, len);
                free(p);
            }
            size_t chunk = rnd() % 3 == 0 ? 1 + rnd() % 16 : 0;
            if (!round_trip(dir, msb, &m, chunk, NULL)) {
                CHECK(!"random round trip");
                printf("  round %d failed\n", round);
            }
            buf_free(&m.all);
        }
    }
    TEST("That many large distinct messages round-trip under the reference budget") {
        struct msgs m = { 0 };
        for (int i = 0; i < 40; i++) {
            size_t len = 200000;
            uint8_t *p = malloc(len);
            for (size_t k = 0; k < len; k++) p[k] = (uint8_t)(k * (unsigned)(i + 1) >> 4);
            p[0] = (uint8_t)(60 + i % 30);
            p[1] = 0;
            st16(p + 2, 0, false);
            st32(p + 4, (uint32_t)(len / 4), false);
            add(&m, p, len);
            free(p);
        }
        CHECK(round_trip(XC_REQUESTS, false, &m, 65536, NULL));
        buf_free(&m.all);
    }
    TEST("That a channel's reference store evicts alike at both ends, by its size") {
        /* Five distinct 20 KiB NoOperations, then the same five again, three times: each
         * repeat comes five messages later. A store of 128 KiB keeps five (a repeat costs a
         * reference), one of 64 KiB three (every repeat is new again), one of 0 none. */
        struct msgs m = { 0 };
        for (int i = 0; i < 20; i++) {
            size_t len = 20000;
            uint8_t *p = malloc(len);
            rng_state = 777u + (uint32_t)(i % 5);
            for (size_t j = 4; j < len; j++) p[j] = (uint8_t)rnd();
            p[0] = 127; p[1] = 0;
            st16(p + 2, (uint16_t)(len / 4), false);
            add(&m, p, len);
            free(p);
        }
        size_t full = 0, fits = 0, small = 0, none = 0;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &full));
        rt_store = 2 * XC_STORE_UNIT;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &fits));
        rt_store = XC_STORE_UNIT;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &small));
        rt_store = 0;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &none));
        rt_store = XC_STORE_MAX;
        CHECK(fits == full);
        CHECK(fits < none / 3);
        CHECK(small > none / 2);
        buf_free(&m.all);
    }
}

int main(void)
{
    messages_tests();
    return test_summary();
}
