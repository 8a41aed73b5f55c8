/* fuzz_frame.c -- libFuzzer target for the link: the handshake (banner, nonce, proof,
 * SESSION, and with bit 4 of the first byte a resuming link's SESSION and RESUME),
 * then (with bit 3 of the first byte) the zstd stage, then frame decoding (OPEN, SPARE,
 * HINT and FACT payloads too), on bytes from a peer that may be anyone. */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "link/codec.h"
#include "link/frame.h"
#include "link/handshake.h"
#include "proxy/spare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct handshake hs;
    static const uint8_t secret[] = "fuzzing-secret-0123456789";
    if (hs_init(&hs, (data[0] & 1) ? ROLE_APP : ROLE_DISPLAY, (data[0] & 2) ? secret : NULL, sizeof secret - 1, 0) < 0)
        return 0;
    if (data[0] & 16) { /* a link that resumes a session: SESSION must name it, then RESUME */
        hs.session.resume = true;
        memset(hs.session.token_self, 7, HS_TOKEN_SIZE);
        memset(hs.session.token_peer, 9, HS_TOKEN_SIZE);
        hs.session.generation = 1;
    }
    struct buf in = { 0 }, out = { 0 };
    if (buf_append(&in, data + 1, size - 1) < 0)
        abort(); /* out of memory: not what is fuzzed */
    hs_start(&hs, &out);
    int rc = hs_feed(&hs, &in, &out);
    if (rc == HS_RESUME_READY) {
        hs.session.received_self = 1000;
        rc = hs_feed(&hs, &in, &out);
    }
    if (rc <= 0 && !(data[0] & 4))
        goto done;
    if (data[0] & 8) { /* the rest is a compressed stream, decompressed in bounded steps */
        struct codec *c;
        if (codec_new(&c, 1) < 0)
            goto done;
        struct buf plain = { 0 };
        int more, steps = 0;
        do {
            more = codec_decompress(c, &in, &plain, 64 * 1024);
            if (plain.len > 64 * 1024)
                __builtin_trap(); /* the step bound is broken */
            buf_clear(&plain);
        } while (more == 1 && ++steps < 64);
        codec_free(c);
        buf_free(&plain);
        goto done;
    }
    /* Frames after the handshake (or, with bit 2, the raw bytes: decoding must hold either way). */
    while (in.len) {
        struct frame f;
        long n = frame_decode(buf_head(&in), in.len, &f);
        if (n < 0)
            break;
        if (f.type == FRAME_OPEN) {
            struct frame_open o;
            frame_open_parse(&f, &o);
        } else if (f.type == FRAME_SPARE) {
            uint32_t id;
            bool msb;
            const uint8_t *setup;
            size_t len;
            int full = spare_frame_parse(&f, &id, &msb, &setup, &len);
            if (full == 0 && (setup < f.payload || setup + len != f.payload + f.len))
                __builtin_trap(); /* the setup must be the payload's tail */
            /* Read against a base: a whole reply is itself, a delta is as long as the base. */
            static const uint8_t base[40] = { 1, 0, 11, 0, 0, 0, 8, 0 };
            struct buf whole = { 0 };
            if (spare_frame_read(&f, base, sizeof base, &id, &msb, &whole) == 0 &&
                (full == 0 ? whole.len != len || (len && memcmp(buf_head(&whole), setup, len)) : whole.len != sizeof base))
                __builtin_trap();
            buf_free(&whole);
        } else if (f.type == FRAME_HINT) {
            struct frame_hint h, h2;
            if (frame_hint_parse(&f, &h) == 0) { /* what parses must encode to the same bytes */
                struct buf again = { 0 };
                struct frame g;
                if (frame_hint_encode(&again, f.channel, &h) < 0 || frame_decode(buf_head(&again), again.len, &g) < 0 ||
                    g.len != f.len || memcmp(g.payload, f.payload, f.len) || frame_hint_parse(&g, &h2) < 0 ||
                    h2.n_fonts != h.n_fonts || h.n_fonts > HINT_MAX_FONTS)
                    __builtin_trap();
                buf_free(&again);
            }
        } else if (f.type == FRAME_FACT) {
            struct frame_fact_window w;
            if (frame_fact_window_parse(&f, &w) == 0) { /* what parses must encode and parse the same */
                struct buf again = { 0 };
                if (frame_fact_window_encode(&again, f.channel, &w) < 0)
                    abort(); /* out of memory: not what is fuzzed */
                struct frame g;
                struct frame_fact_window w2;
                if (frame_decode(buf_head(&again), again.len, &g) < 0 || frame_fact_window_parse(&g, &w2) < 0 ||
                    w.window != w2.window || w.as_of != w2.as_of || w.width != w2.width ||
                    w.height != w2.height || w.clean != w2.clean)
                    __builtin_trap();
                buf_free(&again);
            }
        }
        buf_consume(&in, (size_t)n);
    }
done:
    buf_free(&in);
    buf_free(&out);
    hs_wipe(&hs);
    return 0;
}
