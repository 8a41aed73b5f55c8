/* fuzz_dict.c -- libFuzzer target for the compression cache: a cache file from disk
 * (dict_parse), a DICT_OFFER payload from the peer (dict_offer_parse, with the choice both
 * sides make), and the handshake's offer exchange, on bytes that may be anything.
 * The first byte selects which. */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "link/dict.h"
#include "link/handshake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0: {
        struct dict_view v;
        if (dict_parse(p, n, &v) == 0 && (v.len > DICT_MAX_BYTES || v.content + v.len != p + n))
            __builtin_trap(); /* a parsed file must lie within the input */
        break;
    }
    case 1: {
        struct dict_offer o, mine = { .n = 2 };
        mine.e[1].dir = DICT_DOWN;
        if (dict_offer_parse(p, n, &o) == 0) {
            if (o.n > DICT_OFFER_MAX)
                __builtin_trap();
            struct buf b = { 0 };
            dict_offer_encode(&b, &o); /* re-encoding gives the same bytes */
            if (b.len != n || memcmp(buf_head(&b), p, n))
                __builtin_trap();
            buf_free(&b);
            int k = dict_offer_choose(&o, &mine, DICT_UP);
            if (k >= (int)o.n)
                __builtin_trap();
        }
        break;
    }
    default: { /* a peer's banner and whatever follows, where a DICT_OFFER is due */
        struct handshake hs;
        if (hs_init(&hs, (data[0] & 4) ? ROLE_APP : ROLE_DISPLAY, NULL, 0, CAP_ZSTD | CAP_DICT) < 0)
            return 0;
        struct buf in = { 0 }, out = { 0 };
        if (buf_append(&in, p, n) < 0)
            abort(); /* out of memory: not what is fuzzed */
        hs_start(&hs, &out);
        int rc = hs_feed(&hs, &in, &out);
        if (rc == 1 && (hs.caps & CAP_DICT) && (!hs.got_offer || hs.offer_peer.n > DICT_OFFER_MAX))
            __builtin_trap();
        buf_free(&in);
        buf_free(&out);
        hs_wipe(&hs);
        break;
    }
    }
    return 0;
}
