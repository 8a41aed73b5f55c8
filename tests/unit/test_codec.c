/* test_codec.c -- the link's zstd stage: flushed blocks, bounded steps, corrupt input. */
#include <errno.h>
#include <stdlib.h>

#include "link/codec.h"
#include "test.h"

int main(void)
{
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
        buf_append(&wire, "this is not zstd at all", 23);
        CHECK_EQ(codec_decompress(rx, &wire, &out, 1 << 16), -EBADMSG);
        codec_free(rx);
        buf_free(&wire);
        buf_free(&out);
    }
    return test_summary();
}
