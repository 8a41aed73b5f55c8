/* test_textcoder.c -- text chunks (PROTOCOL.md 2.4): text-like writes through the text
 * coder, interleaved with small and zstd chunks, cut anywhere by the transport, decoded
 * in small output steps, primed from the history, and corrupt codes. */
#include <errno.h>
#include <stdlib.h>

#include "link/codec.h"
#include "link/smallcoder.h"
#include "link/textcoder.h"
#include "test.h"

static const char *const words[] = {
    "the", "program", "license", "you", "of", "to", "a", "and", "work", "or", "this", "that",
    "any", "software", "free", "copy", "under", "terms", "is", "conditions", "source", "code",
};

/* A write like a terminal's: frames of a few X bytes, then a line of English-like text. */
static size_t text_write(uint8_t *p, size_t cap, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 7;
    size_t n = 0;
    while (n + 120 < cap) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        uint8_t head[] = { 0x11, 0x02, 0x15, '>', '(', (uint8_t)(0x30 + x % 40), 0, 0, 0x02, 0x13 };
        memcpy(p + n, head, sizeof head);
        n += sizeof head;
        size_t line = n;
        p[n++] = 0x11, p[n++] = 0x02, p[n++] = 0, p[n++] = 'L', p[n++] = ' ';
        while (n - line < 70) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            const char *w = words[x % (sizeof words / sizeof *words)];
            memcpy(p + n, w, strlen(w));
            n += strlen(w);
            p[n++] = x & 0x100 ? ',' : ' ';
        }
        p[line + 2] = (uint8_t)(n - line - 3);
    }
    return n;
}

/* Bytes that compress poorly (like pixels). */
static void fill(uint8_t *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (uint8_t)(x & 0x3f);
    }
}

static void pair(struct codec **tx, struct codec **rx, int level)
{
    codec_new(tx, level);
    codec_new(rx, level);
    CHECK_EQ(codec_use_small(*tx), 0);
    CHECK_EQ(codec_use_small(*rx), 0);
}

/* Writes (text, small, pixels) through tx; the wire to rx in pieces of `piece` bytes,
 * decoded in steps of max_out. 0 if all came out equal; the wire's size in *wire_bytes. */
static int mixed_session(struct codec *tx, struct codec *rx, size_t piece, size_t max_out, size_t *wire_bytes)
{
    struct buf wire = { 0 }, out = { 0 }, sent = { 0 }, part = { 0 };
    static uint8_t p[100000];
    for (int i = 0; i < 40; i++) {
        /* Write 8 is a zstd chunk longer than what the text model's history takes of it. */
        size_t n = i % 5 == 1 ? 1 + (size_t)i : i % 5 == 3 ? (i == 8 ? sizeof p : 3000)
                                                            : text_write(p, 4000 + (size_t)i * 300, (unsigned)i);
        if (i % 5 == 1 || i % 5 == 3)
            fill(p, n, (unsigned)i);
        codec_compress(tx, p, n, &wire);
        CHECK_EQ(buf_append(&sent, p, n), 0);
    }
    *wire_bytes = wire.len;
    int rc = 0;
    for (size_t at = 0; at < wire.len && rc >= 0; at += piece) {
        size_t k = wire.len - at < piece ? wire.len - at : piece;
        CHECK_EQ(buf_append(&part, buf_head(&wire) + at, k), 0);
        do {
            size_t before = out.len;
            rc = codec_decompress(rx, &part, &out, max_out);
            if (out.len - before > max_out)
                rc = -1;
        } while (rc == 1);
    }
    int bad = rc != 0 || part.len || out.len != sent.len || memcmp(buf_head(&out), buf_head(&sent), sent.len);
    buf_free(&wire);
    buf_free(&out);
    buf_free(&sent);
    buf_free(&part);
    return bad;
}

/* Both ends primed with prime[0, m) (a cache's history), then p[0, n) sent at level 9:
 * the wire's size; SIZE_MAX when it does not come out the same. */
static size_t primed_send(const uint8_t *prime, size_t m, const uint8_t *p, size_t n)
{
    struct codec *tx, *rx;
    codec_new(&tx, 9);
    codec_new(&rx, 9);
    codec_prime(tx, CODEC_TX, prime, m);
    codec_prime(rx, CODEC_RX, prime, m);
    struct buf wire = { 0 }, out = { 0 };
    bool ok = codec_use_small(tx) == 0 && codec_use_small(rx) == 0 && codec_compress(tx, p, n, &wire) == 0;
    size_t size = wire.len; /* decoding consumes the wire */
    ok = ok && codec_decompress(rx, &wire, &out, 1 << 16) == 0 && out.len == n && !memcmp(buf_head(&out), p, n);
    size = ok ? size : SIZE_MAX;
    buf_free(&wire);
    buf_free(&out);
    codec_free(tx);
    codec_free(rx);
    return size;
}

int main(void)
{
    TEST("That text-like writes cost far less at level 9 (text chunks) than at 6 (zstd), and decode the same") {
        struct codec *tx, *rx, *tx6, *rx6;
        pair(&tx, &rx, 9);
        pair(&tx6, &rx6, 6);
        size_t text = 0, zstd = 0;
        CHECK_EQ(mixed_session(tx, rx, 1 << 20, 1 << 16, &text), 0);
        CHECK_EQ(mixed_session(tx6, rx6, 1 << 20, 1 << 16, &zstd), 0);
        printf("  40 writes: %zu bytes with text chunks, %zu without\n", text, zstd);
        CHECK(text * 10 < zstd * 9);
        CHECK(codec_memory(tx) > codec_memory(tx6)); /* the text model, made at the first */
        codec_free(tx);
        codec_free(rx);
        codec_free(tx6);
        codec_free(rx6);
    }
    TEST("That the automatic level uses text chunks on a link known slow, not on a fast or unknown one") {
        size_t wire[3];
        uint64_t rates[3] = { 20 * 1024, 0, 10u << 20 };
        for (int i = 0; i < 3; i++) {
            struct codec *tx, *rx;
            pair(&tx, &rx, CODEC_LEVEL_AUTO);
            codec_set_link_rate(tx, rates[i]);
            CHECK_EQ(mixed_session(tx, rx, 1 << 20, 1 << 16, &wire[i]), 0);
            codec_free(tx);
            codec_free(rx);
        }
        CHECK(wire[0] * 10 < wire[1] * 9);
        CHECK(wire[0] * 10 < wire[2] * 9); /* (the fast link's level may also change: by time) */
    }
    TEST("That text chunks cut anywhere by the transport wait for their whole code, given out in small steps") {
        size_t sizes[] = { 1, 5, 333 };
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            struct codec *tx, *rx;
            pair(&tx, &rx, 9);
            size_t wire;
            CHECK_EQ(mixed_session(tx, rx, sizes[i], i == 1 ? 300 : SC_MAX_INPUT, &wire), 0);
            codec_free(tx);
            codec_free(rx);
        }
    }
    TEST("That a text model made mid-stream starts from the history both ends hold (a warm start)") {
        static uint8_t p[8000];
        size_t n = text_write(p, sizeof p, 99);
        size_t wire = primed_send(p, n, p, n); /* the last session's bytes, as the cache gives them */
        printf("  %zu bytes seen before: %zu on the wire\n", n, wire);
        CHECK(wire != SIZE_MAX && wire * 20 < n);
    }
    TEST("That text seen long ago (beyond the text model's reach, within zstd's window) goes as zstd matches") {
        static uint8_t prime[8000 + 400000], p[8000];
        size_t n = text_write(p, sizeof p, 77);
        memcpy(prime, p, n);
        fill(prime + n, 400000, 3); /* 400 KB since: beyond the text model's 256 KiB of matches */
        size_t wire = primed_send(prime, n + 400000, p, n);
        printf("  %zu bytes seen 400 KB before: %zu on the wire\n", n, wire);
        CHECK(wire != SIZE_MAX && wire * 20 < n);
    }
    TEST("That text a cached dictionary holds is matched after other traffic pushed it out of zstd's window") {
        /* A 256 KiB window; the dictionary ends with a terminal's text; then 400 KB of
         * pixels cross before the same text is shown again. */
        static uint8_t prime[200000], p[8000], px[32768];
        size_t n = text_write(p, sizeof p, 55);
        fill(prime, sizeof prime - n, 9);
        memcpy(prime + sizeof prime - n, p, n);
        size_t sizes[2];
        for (int primed = 0; primed < 2; primed++) {
            struct codec *tx, *rx;
            codec_new_window(&tx, 9, CODEC_SPEED_MODEM, 18);
            codec_new_window(&rx, 9, CODEC_SPEED_MODEM, 18);
            if (primed) {
                codec_prime(tx, CODEC_TX, prime, sizeof prime);
                codec_prime(rx, CODEC_RX, prime, sizeof prime);
            }
            CHECK_EQ(codec_use_small(tx), 0);
            CHECK_EQ(codec_use_small(rx), 0);
            struct buf wire = { 0 }, out = { 0 };
            int bad = 0;
            for (unsigned i = 0; i < 13 && !bad; i++) {
                fill(px, sizeof px, 100 + i);
                bad = codec_compress(tx, px, sizeof px, &wire) < 0 ||
                      codec_decompress(rx, &wire, &out, 1 << 20) != 0 || wire.len;
            }
            buf_clear(&out);
            bad = bad || codec_compress(tx, p, n, &wire) < 0;
            sizes[primed] = wire.len;
            bad = bad || codec_decompress(rx, &wire, &out, 1 << 16) != 0 || out.len != n ||
                  memcmp(buf_head(&out), p, n);
            CHECK(!bad);
            buf_free(&wire);
            buf_free(&out);
            codec_free(tx);
            codec_free(rx);
        }
        printf("  %zu bytes of text after 416 KB of pixels: %zu on the wire, %zu when the cache held it\n", n,
               sizes[0], sizes[1]);
        CHECK(sizes[1] * 5 < sizes[0]);
    }
    TEST("That a text code whose ending is not the one its bits give is corrupt") {
        static uint8_t p[4000];
        size_t n = text_write(p, sizeof p, 5);
        struct codec *tx, *rx;
        pair(&tx, &rx, 9);
        struct buf wire = { 0 }, out = { 0 };
        CHECK_EQ(codec_compress(tx, p, n, &wire), 0);
        ((uint8_t *)buf_head(&wire))[wire.len - 1] ^= 0x80; /* the ending's last byte */
        CHECK_EQ(codec_decompress(rx, &wire, &out, 1 << 16), -EBADMSG);
        buf_free(&wire);
        buf_free(&out);
        codec_free(tx);
        codec_free(rx);
    }
    TEST("That a text head announcing more than a text chunk may hold is corrupt") {
        struct sc_model *enc;
        sc_new(&enc);
        struct buf wire = { 0 }, out = { 0 };
        CHECK_EQ(sc_encode_text_head(enc, TC_MAX_INPUT + 1, 10, &wire), 0);
        struct codec *rx;
        codec_new(&rx, 9);
        CHECK_EQ(codec_use_small(rx), 0);
        CHECK_EQ(codec_decompress(rx, &wire, &out, 1 << 16), -EBADMSG);
        buf_free(&wire);
        buf_free(&out);
        codec_free(rx);
        sc_free(enc);
    }
    TEST("That the text coder round-trips on its own and knows text from pixels") {
        static uint8_t p[6000], q[6000];
        size_t n = text_write(p, sizeof p, 3);
        CHECK(tc_suits(p, n));
        fill(q, sizeof q, 4);
        CHECK(!tc_suits(q, sizeof q));
        struct tc_model *enc, *dec;
        CHECK_EQ(tc_new(&enc), 0);
        CHECK_EQ(tc_new(&dec), 0);
        struct buf code = { 0 };
        for (int round = 0; round < 2; round++) { /* the second time, the match model knows it */
            buf_clear(&code);
            tc_write_start(enc, 0);
            CHECK_EQ(tc_encode(enc, p, n, &code), 0);
            tc_write_start(dec, 0);
            CHECK_EQ(tc_decode(dec, buf_head(&code), code.len, q, n), 0);
            CHECK(!memcmp(p, q, n));
            printf("  %zu bytes of text: %zu\n", n, code.len);
        }
        CHECK(code.len * 10 < n);
        CHECK_EQ(tc_encode(enc, p, 0, &code), -EINVAL);
        buf_free(&code);
        tc_free(enc);
        tc_free(dec);
    }
    return test_summary();
}
