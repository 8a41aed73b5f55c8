/* fuzz_codec.c -- libFuzzer target for the link's chunked compressed stream (CAP_SMALL,
 * PROTOCOL.md 2.4): chunk heads, small-coder codes and zstd chunks from a peer that may
 * send anything, decoded in bounded steps. With bit 0 of the first byte clear, the input
 * is instead cut into writes that go through a chunked pair and must come back equal.
 * Bit 1 primes the streams with the built-in dictionary (CAP_BUILTIN); bit 2 hands the
 * round trip's receiver the link a byte at a time (a chunk cut anywhere waits for the rest);
 * bit 3 makes the round trip's sender use level 9, where text-like writes of more than 256
 * bytes go through the text coder (text chunks). */
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "link/codec.h"
#include "link/dict_builtin.h"
#include "link/smallcoder.h"

static bool with_builtin;    /* this input's bit 1 */
static bool byte_at_a_time; /* bit 2: the round trip's receiver gets the link a byte at a time */
static int tx_level;         /* bit 3: 9 (text chunks), else 1 */

static void decode_any(const uint8_t *p, size_t n)
{
    struct codec *c;
    if (codec_new(&c, 1) < 0)
        return;
    if (codec_use_small(c) < 0 ||
        (with_builtin && codec_set_builtin(c, CODEC_RX, dict_builtin_up, dict_builtin_up_len) < 0))
        goto done;
    struct buf in = { 0 }, out = { 0 };
    if (buf_append(&in, p, n) < 0)
        abort(); /* out of memory: not what is fuzzed */
    int more, steps = 0;
    do {
        more = codec_decompress(c, &in, &out, 4096);
        if (out.len > 4096)
            __builtin_trap(); /* a step never gives more than asked */
        buf_clear(&out);
    } while (more == 1 && ++steps < 100000);
    buf_free(&in);
    buf_free(&out);
done:
    codec_free(c);
}

static void round_trip(const uint8_t *p, size_t n)
{
    struct codec *tx, *rx;
    if (codec_new(&tx, tx_level) < 0)
        return;
    if (codec_new(&rx, 1) < 0) {
        codec_free(tx);
        return;
    }
    struct buf wire = { 0 }, out = { 0 }, part = { 0 };
    size_t at = 0;
    if (codec_use_small(tx) < 0 || codec_use_small(rx) < 0)
        goto done;
    if (with_builtin && (codec_set_builtin(tx, CODEC_TX, dict_builtin_down, dict_builtin_down_len) < 0 ||
                         codec_set_builtin(rx, CODEC_RX, dict_builtin_down, dict_builtin_down_len) < 0))
        goto done;
    while (at < n) { /* each write: a length byte, then that many bytes (x 4 above 128) */
        size_t k = p[at++];
        k = k > 128 ? (k - 128) * 4 : k + 1;
        if (k > n - at)
            k = n - at;
        if (!k)
            break;
        if (codec_compress(tx, p + at, k, &wire) < 0)
            goto done;
        while (wire.len) { /* all at once, or as the transport may: a byte at a time */
            size_t give = byte_at_a_time ? 1 : wire.len;
            if (buf_append(&part, buf_head(&wire), give) < 0)
                abort(); /* out of memory: not what is fuzzed */
            buf_consume(&wire, give);
            int rc;
            do
                rc = codec_decompress(rx, &part, &out, 1 << 16);
            while (rc == 1);
            if (rc < 0)
                __builtin_trap();
        }
        if (part.len || out.len != k || memcmp(buf_head(&out), p + at, k))
            __builtin_trap();
        buf_clear(&out);
        at += k;
    }
done:
    buf_free(&wire);
    buf_free(&out);
    buf_free(&part);
    codec_free(tx);
    codec_free(rx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    with_builtin = data[0] & 2;
    byte_at_a_time = data[0] & 4;
    tx_level = data[0] & 8 ? 9 : 1;
    if (data[0] & 1)
        decode_any(data + 1, size - 1);
    else
        round_trip(data + 1, size - 1);
    return 0;
}
