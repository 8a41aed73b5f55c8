/* test_codec.c -- the link's zstd stage: flushed blocks, bounded steps, corrupt input,
 * streams primed with a dictionary, level changes mid-stream, the kept history; chunks
 * with small writes through the small coder. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <sodium.h>

#include "link/codec.h"
#include "link/dict_builtin.h"
#include "link/smallcoder.h"
#include "test.h"

/* Bytes that compress poorly on their own (like pixels), different for each seed. */
static void fill(uint8_t *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (uint8_t)(x & 0x3f);
    }
}

/* The zstd frames that begin in an encoder's output: its magic number, LE 0xFD2FB528
 * (pixels-like data from fill() holds it by chance once in about 10^9 bytes). */
static size_t frames_in(const struct buf *b)
{
    static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
    size_t found = 0;
    for (size_t i = 0; i + 4 <= b->len; i++)
        found += !memcmp(buf_head(b) + i, magic, 4);
    return found;
}

/* Sends n bytes from p through tx to rx in flushed pieces of `piece`; 0 if all came out equal.
 * Adds the compressed size to *wire_bytes and, with frames, the zstd frames begun to *frames. */
static int pass_frames(struct codec *tx, struct codec *rx, const uint8_t *p, size_t n, size_t piece, size_t *wire_bytes,
                       size_t *frames)
{
    struct buf wire = { 0 }, out = { 0 };
    int bad = 0;
    for (size_t off = 0; off < n && !bad; off += piece) {
        size_t k = n - off < piece ? n - off : piece;
        buf_clear(&wire);
        if (codec_compress(tx, p + off, k, &wire) < 0)
            bad = 1;
        *wire_bytes += wire.len;
        if (frames)
            *frames += frames_in(&wire);
        int rc;
        do
            rc = codec_decompress(rx, &wire, &out, 1 << 16);
        while (rc == 1);
        if (rc < 0 || wire.len)
            bad = 1;
    }
    if (!bad && (out.len != n || memcmp(buf_head(&out), p, n)))
        bad = 1;
    buf_free(&wire);
    buf_free(&out);
    return bad;
}

static int pass_through(struct codec *tx, struct codec *rx, const uint8_t *p, size_t n, size_t piece, size_t *wire_bytes)
{
    return pass_frames(tx, rx, p, n, piece, wire_bytes, NULL);
}

/* A pair of chunked codecs (CAP_SMALL), primed alike when prime is given. */
static void small_pair(struct codec **tx, struct codec **rx, int level, const uint8_t *prime, size_t n)
{
    codec_new(tx, level);
    codec_new(rx, level);
    if (prime) {
        codec_prime(*tx, CODEC_TX, prime, n);
        codec_prime(*rx, CODEC_RX, prime, n);
    }
    CHECK_EQ(codec_use_small(*tx), 0);
    CHECK_EQ(codec_use_small(*rx), 0);
}

/* What a pointer event costs after its encoding: a frame of 11 bytes, two of them moving. */
static size_t motion_write(uint8_t *w, int i)
{
    uint8_t m[11] = { 0x11, 1, 8, 6, 0x10, 2, 0x14, 0x0f, 0x14, (uint8_t)(2 + (i % 3 == 0)), (uint8_t)(i % 7) };
    memcpy(w, m, sizeof m);
    return sizeof m;
}

static void chunk_tests(void)
{
    TEST("That small writes go through the small coder, large ones through zstd, interleaved and in order") {
        struct codec *tx, *rx;
        small_pair(&tx, &rx, 3, NULL, 0);
        static uint8_t all[1 << 20];
        size_t total = 0, wire_bytes = 0;
        for (int i = 0; i < 400; i++) {
            size_t n = i % 10 == 9 ? 3000 + (size_t)i : i % 5 == 4 ? SC_MAX_INPUT : 1 + (size_t)(i * 7) % 40;
            fill(all + total, n, (unsigned)i % 13);
            if (i == 200)
                codec_set_level(tx, 5); /* a new zstd frame between small chunks */
            CHECK_EQ(pass_through(tx, rx, all + total, n, n, &wire_bytes), 0);
            total += n;
        }
        CHECK_EQ(codec_total(rx, CODEC_RX), total);
        /* Both ends keep the same history: small chunks are part of the stream. */
        const uint8_t *a, *b;
        size_t na, nb;
        CHECK_EQ(codec_history(tx, CODEC_TX, total, &a, &na), 0);
        CHECK_EQ(codec_history(rx, CODEC_RX, total, &b, &nb), 0);
        CHECK(na == total && nb == total && !memcmp(a, all, total) && !memcmp(b, all, total));
        codec_free(tx);
        codec_free(rx);
    }
    TEST("That a steady stream of pointer events costs at most 3 bytes each once learnt") {
        struct codec *tx, *rx;
        small_pair(&tx, &rx, 9, NULL, 0);
        size_t wire_bytes = 0, late = 0;
        uint8_t w[16];
        for (int i = 0; i < 300; i++) {
            size_t before = wire_bytes, n = motion_write(w, i);
            CHECK_EQ(pass_through(tx, rx, w, n, n, &wire_bytes), 0);
            if (i >= 100)
                late += wire_bytes - before;
        }
        CHECK(late <= 3 * 200);
        printf("  300 motion writes: %zu bytes, the last 200: %zu\n", wire_bytes, late);
        codec_free(tx);
        codec_free(rx);
    }
    TEST("That chunks split anywhere by the transport decode the same") {
        struct codec *tx, *rx;
        uint8_t prime[300];
        fill(prime, sizeof prime, 3);
        small_pair(&tx, &rx, 3, prime, sizeof prime);
        struct buf wire = { 0 }, out = { 0 }, sent = { 0 };
        uint8_t p[5000];
        for (int i = 0; i < 60; i++) {
            size_t n = i % 4 == 3 ? sizeof p : 1 + (size_t)i * 3;
            fill(p, n, (unsigned)i);
            codec_compress(tx, p, n, &wire);
            CHECK_EQ(buf_append(&sent, p, n), 0);
        }
        struct buf part = { 0 };
        int rc = 0;
        for (size_t at = 0; at < wire.len && rc >= 0; at += 7) { /* 7 bytes at a time */
            size_t k = wire.len - at < 7 ? wire.len - at : 7;
            CHECK_EQ(buf_append(&part, buf_head(&wire) + at, k), 0);
            do
                rc = codec_decompress(rx, &part, &out, 300); /* and small output steps */
            while (rc == 1);
        }
        CHECK_EQ(rc, 0);
        CHECK(out.len == sent.len && !memcmp(buf_head(&out), buf_head(&sent), sent.len));
        buf_free(&wire);
        buf_free(&out);
        buf_free(&sent);
        buf_free(&part);
        codec_free(tx);
        codec_free(rx);
    }
    TEST("That a small-coder chunk cut anywhere waits for the rest, never decodes early") {
        /* A cut code reads as if zeros followed; those may decode other bits whose ending
         * fits in the cut (seen under a flood: a 54-byte write with its last 2 bytes wrong). */
        struct sc_model *enc, *dec;
        sc_new(&enc);
        sc_new(&dec);
        struct buf code = { 0 }, out = { 0 }, ahead = { 0 };
        uint8_t w[SC_MAX_INPUT], bulk[4096];
        int early = 0, wrong = 0;
        for (int i = 0; i < 600; i++) {
            size_t n = 1 + (size_t)(i * 37 % SC_MAX_INPUT);
            if (i % 3)
                n = motion_write(w, i);
            else
                fill(w, n, (unsigned)i);
            buf_clear(&code);
            if (i % 50 == 49) { /* a zstd chunk's bytes join both histories */
                fill(bulk, sizeof bulk, (unsigned)i);
                CHECK_EQ(sc_encode_zstd_head(enc, sizeof bulk, &code), 0);
            } else {
                CHECK_EQ(sc_encode(enc, w, n, &code), 0);
            }
            for (size_t cut = 0; cut < code.len; cut++) {
                size_t used;
                uint32_t zlen, tlen;
                buf_clear(&out);
                int rc = sc_decode(dec, buf_head(&code), cut, &out, &used, &zlen, &tlen);
                early += rc != -EAGAIN;
            }
            /* Complete, then followed by other bytes (the next chunk): the same decoding. */
            buf_clear(&ahead);
            CHECK_EQ(buf_append(&ahead, buf_head(&code), code.len), 0);
            CHECK_EQ(buf_append(&ahead, (const uint8_t *)"\xa5\x5a\xff\x00", 4), 0);
            size_t used;
            uint32_t zlen, tlen;
            buf_clear(&out);
            CHECK_EQ(sc_decode(dec, buf_head(&ahead), i % 2 ? ahead.len : code.len, &out, &used, &zlen, &tlen), 0);
            CHECK_EQ(used, code.len);
            if (i % 50 == 49) {
                CHECK_EQ(zlen, sizeof bulk);
                sc_feed_start(enc, SC_FEED_MAX);
                sc_feed(enc, bulk, sizeof bulk);
                sc_feed_start(dec, SC_FEED_MAX);
                sc_feed(dec, bulk, sizeof bulk);
            } else {
                wrong += out.len != n || memcmp(buf_head(&out), w, n);
            }
        }
        CHECK_EQ(early, 0);
        CHECK_EQ(wrong, 0);
        buf_free(&code);
        buf_free(&out);
        buf_free(&ahead);
        sc_free(enc);
        sc_free(dec);
    }
    TEST("That chunk sizes of every magnitude survive a cut and cost little once seen") {
        /* Each side's two models share a block (sc_new_pair): freed in either order. */
        struct sc_model *enc[2], *dec[2];
        CHECK_EQ(sc_new_pair(enc), 0);
        CHECK_EQ(sc_new_pair(dec), 0);
        static const uint32_t sizes[] = { 1, 2, 3, 255, 256, 257, 4096, 65535, 65536, 786440, 1u << 30 };
        struct buf code = { 0 }, out = { 0 };
        int early = 0, wrong = 0;
        size_t last_len = 0;
        for (int round = 0; round < 4; round++) {
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
                bool text = i % 2 && sizes[i] <= 65536;
                uint32_t m_len = text ? sizes[(i + 3) % 9] : 0;
                buf_clear(&code);
                if (text)
                    CHECK_EQ(sc_encode_text_head(enc[1], sizes[i], m_len, &code), 0);
                else
                    CHECK_EQ(sc_encode_zstd_head(enc[1], sizes[i], &code), 0);
                size_t used;
                uint32_t zlen, tlen;
                for (size_t cut = 0; cut < code.len; cut++)
                    early += sc_decode(dec[0], buf_head(&code), cut, &out, &used, &zlen, &tlen) != -EAGAIN;
                CHECK_EQ(sc_decode(dec[0], buf_head(&code), code.len, &out, &used, &zlen, &tlen), 0);
                wrong += used != code.len || (text ? tlen != sizes[i] || zlen != m_len : tlen || zlen != sizes[i]);
            }
        }
        for (int k = 0; k < 20; k++) { /* a length like the ones before: its bit count is learnt */
            buf_clear(&code);
            CHECK_EQ(sc_encode_zstd_head(enc[1], 300 + (uint32_t)k, &code), 0);
            last_len = code.len;
        }
        CHECK_EQ(early, 0);
        CHECK_EQ(wrong, 0);
        CHECK(last_len <= 2);
        printf("  a zstd chunk's length, the 20th of its size: %zu bytes\n", last_len);
        buf_free(&code);
        buf_free(&out);
        sc_free(enc[0]);
        sc_free(enc[1]);
        sc_free(dec[1]);
        sc_free(dec[0]);
    }
    TEST("That a small-coder code whose ending is not the one its bits give is corrupt") {
        struct sc_model *enc, *dec;
        sc_new(&enc);
        sc_new(&dec);
        struct buf code = { 0 }, out = { 0 };
        uint8_t w[40];
        fill(w, sizeof w, 5);
        CHECK_EQ(sc_encode(enc, w, sizeof w, &code), 0);
        ((uint8_t *)buf_head(&code))[code.len - 1] ^= 0x80; /* the ending's last byte */
        CHECK_EQ(buf_append(&code, (const uint8_t *)"\0\0\0\0", 4), 0); /* all the decoder reads is there */
        size_t used;
        uint32_t zlen, tlen;
        CHECK_EQ(sc_decode(dec, buf_head(&code), code.len, &out, &used, &zlen, &tlen), -EBADMSG);
        buf_free(&code);
        buf_free(&out);
        sc_free(enc);
        sc_free(dec);
    }
    TEST("That the built-in dictionaries are the bytes PROTOCOL.md 2.5 names") {
        static const char *const want[2] = { "c49c0b7735a5ac81c1b97922c755df0d11f8a8b2cac2e9ee94d241102171f800",
                                             "c7a9a0ae5bef61d0923162583dc5e0300889308d55f238737b9370cc8884df35" };
        const uint8_t *dict[2] = { dict_builtin_up, dict_builtin_down };
        size_t len[2] = { dict_builtin_up_len, dict_builtin_down_len };
        for (int d = 0; d < 2; d++) {
            uint8_t h[crypto_hash_sha256_BYTES];
            char hex[2 * sizeof h + 1];
            crypto_hash_sha256(h, dict[d], len[d]);
            sodium_bin2hex(hex, sizeof hex, h, sizeof h);
            CHECK(!strcmp(hex, want[d]));
        }
    }
    TEST("That a small write repeating the prime costs a fraction of its size") {
        struct codec *tx, *rx;
        small_pair(&tx, &rx, 3, dict_builtin_up, dict_builtin_up_len);
        size_t wire_bytes = 0;
        const uint8_t *p = dict_builtin_up + 20000; /* 200 bytes the prime holds */
        CHECK_EQ(pass_through(tx, rx, p, 200, 200, &wire_bytes), 0);
        CHECK(wire_bytes < 60);
        printf("  200 bytes of the prime again: %zu bytes\n", wire_bytes);
        codec_free(tx);
        codec_free(rx);
    }
    TEST("That a frame begun far into the stream starts from the built-in dictionary again") {
        struct codec *tx, *rx;
        codec_new_window(&tx, 3, CODEC_SPEED_AUTO, 21);
        codec_new_window(&rx, 3, CODEC_SPEED_AUTO, 21);
        codec_use_small(tx);
        codec_use_small(rx);
        CHECK_EQ(codec_set_builtin(tx, CODEC_TX, dict_builtin_down, dict_builtin_down_len), 0);
        CHECK_EQ(codec_set_builtin(rx, CODEC_RX, dict_builtin_down, dict_builtin_down_len), 0);
        size_t wire_bytes = 0, n = 3u << 20;
        uint8_t *noise = malloc(n);
        fill(noise, n, 11);
        CHECK_EQ(pass_through(tx, rx, noise, n, 65536, &wire_bytes), 0); /* 2 MiB window: gone */
        codec_set_level(tx, 4); /* a new frame, as after an idle time */
        wire_bytes = 0;
        CHECK_EQ(pass_through(tx, rx, dict_builtin_down + 100, 8000, 8000, &wire_bytes), 0);
        CHECK(wire_bytes < 300);
        printf("  8000 bytes of the built-in dictionary after 3 MiB: %zu bytes\n", wire_bytes);
        free(noise);
        codec_free(tx);
        codec_free(rx);
    }
    TEST("That after an idle time a new frame begins only when what went around zstd is worth its prime") {
        struct codec *tx, *rx;
        codec_new_window(&tx, CODEC_LEVEL_AUTO, CODEC_SPEED_MODEM, 21);
        codec_new_window(&rx, CODEC_LEVEL_AUTO, CODEC_SPEED_MODEM, 21);
        codec_use_small(tx);
        codec_use_small(rx);
        codec_text_tx(tx, false);
        CHECK_EQ(codec_set_builtin(tx, CODEC_TX, dict_builtin_down, dict_builtin_down_len), 0);
        CHECK_EQ(codec_set_builtin(rx, CODEC_RX, dict_builtin_down, dict_builtin_down_len), 0);
        size_t n = 200000, wire_bytes = 0, frames = 0;
        uint8_t *data = malloc(n);
        fill(data, n, 12);
        CHECK_EQ(pass_frames(tx, rx, data, n, 8192, &wire_bytes, &frames), 0); /* all zstd */
        /* 200 KB into the frame the built-in dictionary is still in reach: no new frame. */
        usleep(310 * 1000); /* the idle time is the input here */
        wire_bytes = frames = 0;
        CHECK_EQ(pass_frames(tx, rx, dict_builtin_down + 100, 8000, 8000, &wire_bytes, &frames), 0);
        CHECK_EQ(frames, 0);
        CHECK(wire_bytes < 300);
        /* 24 KB of small writes (1/11 of the prime) go around zstd; after an idle time the
         * next large write begins a frame that reaches them. */
        uint8_t *small = malloc(24000);
        fill(small, 24000, 13);
        CHECK_EQ(pass_frames(tx, rx, small, 24000, 200, &wire_bytes, &frames), 0);
        usleep(310 * 1000);
        wire_bytes = frames = 0;
        CHECK_EQ(pass_frames(tx, rx, small, 24000, 24000, &wire_bytes, &frames), 0);
        CHECK_EQ(frames, 1);
        CHECK(wire_bytes < 1000);
        printf("  24000 bytes sent before as small writes, in a new frame: %zu bytes\n", wire_bytes);
        /* The same again at once: no idle time, no new frame, and decoding goes on. */
        wire_bytes = frames = 0;
        CHECK_EQ(pass_frames(tx, rx, data, 16384, 16384, &wire_bytes, &frames), 0);
        CHECK_EQ(frames, 0);
        free(small);
        free(data);
        codec_free(tx);
        codec_free(rx);
    }
    TEST("That a zstd chunk that does not decode is reported") {
        struct codec *rx;
        struct sc_model *m;
        codec_new(&rx, 3);
        codec_use_small(rx);
        sc_new(&m);
        struct buf in = { 0 }, out = { 0 };
        uint8_t junk[4] = { 0xff, 0xff, 0xff, 0xff }; /* no zstd magic */
        CHECK_EQ(sc_encode_zstd_head(m, sizeof junk, &in), 0);
        CHECK_EQ(buf_append(&in, junk, sizeof junk), 0);
        CHECK_EQ(codec_decompress(rx, &in, &out, 1 << 16), -EBADMSG);
        buf_free(&in);
        buf_free(&out);
        sc_free(m);
        codec_free(rx);
    }
}

int main(void)
{
    chunk_tests();
    TEST("That every flushed block decompresses on its own, in order") {
        struct codec *tx, *rx;
        codec_new(&tx, 3);
        codec_new(&rx, 3);
        struct buf wire = { 0 }, out = { 0 };
        char msg[64];
        for (int i = 0; i < 100; i++) {
            int n = snprintf(msg, sizeof msg, "request %d of a steady trickle", i);
            CHECK_EQ(codec_compress(tx, (const uint8_t *)msg, (size_t)n, &wire), 0);
            size_t before = out.len;
            CHECK_EQ(codec_decompress(rx, &wire, &out, 1 << 16), 0);
            CHECK_EQ(wire.len, 0);
            CHECK(out.len - before == (size_t)n && !memcmp(buf_head(&out) + before, msg, (size_t)n));
        }
        codec_free(tx);
        codec_free(rx);
        buf_free(&wire);
        buf_free(&out);
    }
    TEST("That a block expanding hugely comes out in bounded steps") {
        struct codec *tx, *rx;
        codec_new(&tx, 3);
        codec_new(&rx, 3);
        size_t big = 8u << 20;
        uint8_t *zeros = calloc(1, big);
        struct buf wire = { 0 }, out = { 0 };
        codec_compress(tx, zeros, big, &wire);
        CHECK(wire.len < 4096);
        size_t total = 0;
        int rc, steps = 0;
        do {
            rc = codec_decompress(rx, &wire, &out, 256 * 1024);
            CHECK(out.len <= 256 * 1024);
            total += out.len;
            buf_clear(&out);
            steps++;
        } while (rc == 1 && steps < 1000);
        CHECK_EQ(rc, 0);
        CHECK_EQ(total, big);
        free(zeros);
        codec_free(tx);
        codec_free(rx);
        buf_free(&wire);
        buf_free(&out);
    }
    TEST("That corrupt compressed input is reported") {
        struct codec *rx;
        codec_new(&rx, 3);
        struct buf wire = { 0 }, out = { 0 };
        CHECK_EQ(buf_append(&wire, "this is not zstd at all", 23), 0);
        CHECK_EQ(codec_decompress(rx, &wire, &out, 1 << 16), -EBADMSG);
        codec_free(rx);
        buf_free(&wire);
        buf_free(&out);
    }
    TEST("That a stream primed with the same dictionary at both ends sends repeats as references") {
        size_t n = 1u << 20;
        uint8_t *dict = malloc(n);
        fill(dict, n, 1);
        struct codec *cold_tx, *cold_rx, *tx, *rx;
        codec_new(&cold_tx, 3);
        codec_new(&cold_rx, 3);
        codec_new(&tx, 3);
        codec_new(&rx, 3);
        CHECK_EQ(codec_prime(tx, CODEC_TX, dict, n), 0);
        CHECK_EQ(codec_prime(rx, CODEC_RX, dict, n), 0);
        size_t cold = 0, warm = 0;
        CHECK_EQ(pass_through(cold_tx, cold_rx, dict, n, 4096, &cold), 0);
        CHECK_EQ(pass_through(tx, rx, dict, n, 4096, &warm), 0);
        CHECK(warm * 20 < cold);
        if (warm * 20 >= cold)
            fprintf(stderr, "  cold %zu, warm %zu\n", cold, warm);
        CHECK_EQ(codec_total(tx, CODEC_TX), n);
        CHECK_EQ(codec_total(rx, CODEC_RX), n);
        CHECK_EQ(codec_prime(tx, CODEC_TX, dict, n), -EINVAL); /* only before any data */
        codec_free(cold_tx);
        codec_free(cold_rx);
        codec_free(tx);
        codec_free(rx);
        free(dict);
    }
    TEST("That a primed stream stays correct far beyond its window (12 MiB, flushed pieces)") {
        size_t n = 4u << 20, total = 12u << 20;
        uint8_t *dict = malloc(n), *data = malloc(total);
        fill(dict, n, 2);
        for (size_t off = 0; off < total; off += n / 2) /* old bytes, new bytes, old again */
            (off / (n / 2)) % 3 == 1 ? fill(data + off, n / 2, (unsigned)off) : (void)memcpy(data + off, dict + off % n, n / 2);
        struct codec *tx, *rx;
        codec_new(&tx, 3);
        codec_new(&rx, 3);
        codec_prime(tx, CODEC_TX, dict, n);
        codec_prime(rx, CODEC_RX, dict, n);
        size_t wire = 0;
        CHECK_EQ(pass_through(tx, rx, data, total, 70000, &wire), 0);
        codec_free(tx);
        codec_free(rx);
        free(dict);
        free(data);
    }
    TEST("That a window sized from a memory bound keeps the codec under its reserve, level changes included") {
        CHECK_EQ(codec_window_for(64u << 20), 21);
        CHECK_EQ(codec_window_for(512u << 20), CODEC_WINDOW_LOG);
        CHECK_EQ(codec_window_for(1u << 20), CODEC_WINDOW_LOG_MIN);
        CHECK(codec_reserve(codec_window_for(64u << 20)) <= (64u << 20) / 8 * 3);
        size_t n = 3u << 20, total = 9u << 20;
        uint8_t *dict = malloc(n), *data = malloc(total);
        fill(dict, n, 7);
        for (size_t off = 0; off < total; off += n / 2)
            (off / (n / 2)) % 3 == 1 ? fill(data + off, n / 2, (unsigned)off) : (void)memcpy(data + off, dict + off % n, n / 2);
        struct codec *tx, *rx;
        CHECK_EQ(codec_new_window(&tx, 9, CODEC_SPEED_AUTO, 21), 0);
        CHECK_EQ(codec_new_window(&rx, 9, CODEC_SPEED_AUTO, 21), 0);
        CHECK_EQ(codec_window_log(tx), 21);
        codec_prime(tx, CODEC_TX, dict, n); /* a dictionary larger than the window: its tail */
        codec_prime(rx, CODEC_RX, dict, n);
        size_t wire = 0;
        CHECK_EQ(pass_through(tx, rx, data, total / 2, 70000, &wire), 0);
        codec_set_level(tx, 6);
        CHECK_EQ(pass_through(tx, rx, data + total / 2, total / 2, 70000, &wire), 0);
        /* Both directions of one side: this codec's sending half and the other's receiving. */
        uint64_t used = codec_memory(tx) + codec_memory(rx);
        CHECK(used <= codec_reserve(21));
        fprintf(stderr, "  2 MiB window, level 9 then 6: %.1f MiB held of a %.1f MiB reserve\n", used / 1048576.0,
                codec_reserve(21) / 1048576.0);
        CHECK_EQ(codec_new_window(&rx, 9, CODEC_SPEED_AUTO, 16), -EINVAL);
        codec_free(tx);
        codec_free(rx);
        free(dict);
        free(data);
    }
    TEST("That a receiver refuses a frame whose window is larger than agreed") {
        size_t n = 3u << 20;
        uint8_t *data = malloc(n);
        fill(data, n, 8);
        struct codec *tx, *rx;
        codec_new_window(&tx, 3, CODEC_SPEED_AUTO, 22);
        codec_new_window(&rx, 3, CODEC_SPEED_AUTO, 20);
        size_t wire = 0;
        CHECK_EQ(pass_through(tx, rx, data, n, n, &wire), 1);
        codec_free(tx);
        codec_free(rx);
        free(data);
    }
    TEST("That a level change mid-stream starts a primed frame the receiver follows") {
        size_t n = 600000;
        uint8_t *data = malloc(n);
        fill(data, n, 3);
        struct codec *tx, *rx;
        codec_new(&tx, CODEC_LEVEL_AUTO);
        codec_new(&rx, CODEC_LEVEL_AUTO);
        size_t first = 0, again = 0;
        CHECK_EQ(pass_through(tx, rx, data, n, 1000, &first), 0);
        codec_set_level(tx, 1);
        CHECK_EQ(codec_level(tx), 1);
        CHECK_EQ(pass_through(tx, rx, data, n, 1000, &again), 0); /* the same bytes: references */
        CHECK(again * 5 < first);
        if (again * 5 >= first)
            fprintf(stderr, "  first %zu, again %zu\n", first, again);
        codec_set_level(tx, 6);
        size_t third = 0;
        CHECK_EQ(pass_through(tx, rx, data, 5000, 5000, &third), 0);
        codec_free(tx);
        codec_free(rx);
        free(data);
    }
    TEST("That the history gives the last bytes up to a stream offset, or says they are gone") {
        struct codec *tx;
        codec_new(&tx, 3);
        uint8_t pre[100];
        fill(pre, sizeof pre, 4);
        codec_prime(tx, CODEC_TX, pre, sizeof pre);
        struct buf wire = { 0 };
        codec_compress(tx, (const uint8_t *)"hello", 5, &wire);
        const uint8_t *p;
        size_t n;
        CHECK_EQ(codec_history(tx, CODEC_TX, 5, &p, &n), 0);
        CHECK(n == 105 && !memcmp(p, pre, 100) && !memcmp(p + 100, "hello", 5));
        CHECK_EQ(codec_history(tx, CODEC_TX, 2, &p, &n), 0);
        CHECK(n == 102 && !memcmp(p + 100, "he", 2));
        CHECK_EQ(codec_history(tx, CODEC_TX, 6, &p, &n), -ERANGE);
        size_t big = CODEC_PRIME_MAX + (2u << 20);
        uint8_t *data = malloc(big);
        fill(data, big, 5);
        codec_compress(tx, data, big, &wire);
        CHECK_EQ(codec_history(tx, CODEC_TX, 5, &p, &n), -ERANGE);
        CHECK_EQ(codec_history(tx, CODEC_TX, 5 + big, &p, &n), 0);
        CHECK(n == CODEC_PRIME_MAX && !memcmp(p, data + big - n, n));
        free(data);
        buf_free(&wire);
        codec_free(tx);
    }
    TEST("That link speed presets parse and map to levels") {
        CHECK_EQ(codec_speed_parse("modem"), CODEC_SPEED_MODEM);
        CHECK_EQ(codec_speed_parse("auto"), CODEC_SPEED_AUTO);
        CHECK_EQ(codec_speed_parse("fast"), -1);
        CHECK(codec_speed_level(CODEC_SPEED_MODEM) > codec_speed_level(CODEC_SPEED_LAN));
        struct codec *c;
        codec_new_speed(&c, CODEC_LEVEL_AUTO, CODEC_SPEED_LAN);
        CHECK_EQ(codec_level(c), codec_speed_level(CODEC_SPEED_LAN));
        codec_free(c);
    }
    TEST("That on a fast link the automatic level turns compression down") {
        struct codec *tx, *rx;
        codec_new(&tx, CODEC_LEVEL_AUTO);
        codec_new(&rx, CODEC_LEVEL_AUTO);
        codec_set_link_rate(tx, 100ull << 30); /* 100 GB/s: no compression pays */
        size_t n = 2u << 20, wire = 0;
        uint8_t *data = malloc(n);
        fill(data, n, 6);
        CHECK_EQ(pass_through(tx, rx, data, n, 65536, &wire), 0);
        CHECK_EQ(codec_level(tx), 1);
        struct codec *fixed;
        codec_new(&fixed, 5);
        codec_set_link_rate(fixed, 100ull << 30);
        struct buf b = { 0 };
        codec_compress(fixed, data, n, &b);
        CHECK_EQ(codec_level(fixed), 5); /* an explicit level stays */
        buf_free(&b);
        codec_free(fixed);
        codec_free(tx);
        codec_free(rx);
        free(data);
    }
    return test_summary();
}
