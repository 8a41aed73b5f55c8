/* fuzz_emu_ppp.c -- feeds untrusted bytes to the RFC 1662 unframer (emu/ppp.c); whatever
 * unframes must frame again to a frame that unframes to the same bytes.
 * Includes the emu source it tests so it links on its own (see emu/emu.mk). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../emu/ppp.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t out[70000], frame[140100], back[70000];
    uint16_t proto, proto2;
    long n = emu_ppp_unframe(data, size, &proto, out, sizeof out);
    if (n < 0) return 0;
    if ((size_t)n > size) abort();
    long f = emu_ppp_frame(proto, out, (size_t)n, EMU_PPP_ACCM_ALL, frame, sizeof frame);
    if (f < 0 || (size_t)f != emu_ppp_frame_len(proto, out, (size_t)n, EMU_PPP_ACCM_ALL)) abort();
    long m = emu_ppp_unframe(frame, (size_t)f, &proto2, back, sizeof back);
    if (m != n || proto2 != proto || memcmp(back, out, (size_t)n) != 0) abort();
    return 0;
}
