/* fuzz_emu_vj.c -- feeds untrusted bytes to the RFC 1144 decompressor (emu/vj.c): the first
 * byte picks the packet type and whether an error (lost frame) comes first; the rest is the
 * packet. A second pass compresses the decompressor's output and checks the round trip.
 * Includes the emu sources it tests so it links on its own (see emu/emu.mk). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../emu/ip.c"
#include "../../emu/vj.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t out[70000], mid[70000], back[70000];
    struct emu_vj_decomp d;
    emu_vj_decomp_init(&d);
    /* Several packets in one input, separated by a length byte each. */
    size_t off = 0;
    while (off + 2 <= size) {
        uint8_t ctl = data[off], n = data[off + 1];
        off += 2;
        size_t len = n <= size - off ? n : size - off;
        if (ctl & 0x80) emu_vj_decomp_error(&d);
        long r = emu_vj_decompress(&d, (enum emu_vj_type)(ctl % 3), data + off, len, out, sizeof out);
        if (r > (long)sizeof out) abort();
        if (r > 0) {
            /* What came out is a packet: compressing then decompressing it must give it back. */
            struct emu_vj_comp c;
            struct emu_vj_decomp d2;
            enum emu_vj_type t;
            emu_vj_comp_init(&c);
            emu_vj_decomp_init(&d2);
            long m = emu_vj_compress(&c, out, (size_t)r, &t, mid, sizeof mid, NULL, NULL);
            if (m < 0) abort();
            long b = emu_vj_decompress(&d2, t, mid, (size_t)m, back, sizeof back);
            if (t != EMU_VJ_TYPE_COMPRESSED && (b != r || memcmp(back, out, (size_t)r) != 0)) abort();
        }
        off += len;
    }
    return 0;
}
