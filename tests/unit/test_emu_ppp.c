/* test_emu_ppp.c -- RFC 1662 framing (emu/ppp.c): FCS-16 against known vectors and the
 * bitwise definition, stuffing, frame/unframe round trips, damaged frames refused. */
#include <errno.h>
#include <stdlib.h>

#include "ppp.h"
#include "test.h"

static uint16_t fcs_bitwise(uint16_t fcs, const uint8_t *p, size_t len)
{
    while (len--) {
        fcs ^= *p++;
        for (int i = 0; i < 8; i++) fcs = fcs & 1 ? (uint16_t)((fcs >> 1) ^ 0x8408) : (uint16_t)(fcs >> 1);
    }
    return fcs;
}

int main(void)
{
    const uint8_t check[] = "123456789";
    TEST("That the FCS of \"123456789\" is 0x906e (the CRC-16/X.25 check value)") {
        CHECK_EQ((uint16_t)~emu_ppp_fcs16(EMU_PPP_FCS_INIT, check, 9), 0x906e);
    }
    TEST("That the FCS table agrees with the bitwise definition for every byte pair") {
        int bad = 0;
        for (unsigned a = 0; a < 256; a++)
            for (unsigned b = 0; b < 256; b += 17) {
                uint8_t two[2] = { (uint8_t)a, (uint8_t)b };
                bad += emu_ppp_fcs16(0x1234, two, 2) != fcs_bitwise(0x1234, two, 2);
            }
        CHECK_EQ(bad, 0);
    }
    TEST("That data followed by its complemented FCS leaves the good residue 0xf0b8") {
        uint8_t buf[11];
        memcpy(buf, check, 9);
        uint16_t fcs = (uint16_t)~emu_ppp_fcs16(EMU_PPP_FCS_INIT, check, 9);
        buf[9] = (uint8_t)fcs;
        buf[10] = (uint8_t)(fcs >> 8);
        CHECK_EQ(emu_ppp_fcs16(EMU_PPP_FCS_INIT, buf, 11), EMU_PPP_FCS_GOOD);
    }
    TEST("That a frame starts and ends with flags and escapes flag, escape and control bytes") {
        const uint8_t payload[] = { 0x7e, 0x7d, 0x01, 0x41 };
        uint8_t out[64];
        long n = emu_ppp_frame(EMU_PPP_PROTO_IP, payload, sizeof payload, EMU_PPP_ACCM_ALL, out, sizeof out);
        /* 7e ff 7d23 00 21 7d5e 7d5d 7d21 41 fcs fcs 7e, FCS bytes possibly escaped */
        const uint8_t head[] = { 0x7e, 0xff, 0x7d, 0x23, 0x7d, 0x20, 0x21, 0x7d, 0x5e, 0x7d, 0x5d, 0x7d, 0x21, 0x41 };
        CHECK(n >= (long)sizeof head + 3);
        CHECK(memcmp(out, head, sizeof head) == 0);
        CHECK_EQ(out[n - 1], 0x7e);
        CHECK_EQ((long)emu_ppp_frame_len(EMU_PPP_PROTO_IP, payload, sizeof payload, EMU_PPP_ACCM_ALL), n);
    }
    TEST("That with an empty ACCM control bytes go unescaped") {
        const uint8_t payload[] = { 0x01, 0x02, 0x03 };
        size_t all = emu_ppp_frame_len(EMU_PPP_PROTO_IP, payload, 3, EMU_PPP_ACCM_ALL);
        size_t none = emu_ppp_frame_len(EMU_PPP_PROTO_IP, payload, 3, 0);
        CHECK(all >= none + 3 + 2);                    /* 3 payload bytes, 0x03 and 0x00 of the head */
    }
    TEST("That frames of random payloads unframe to the same protocol and bytes") {
        srand(7);
        int ok = 1;
        for (int i = 0; i < 500 && ok; i++) {
            uint8_t payload[300], frame[700], back[300];
            size_t len = (size_t)(rand() % 300);
            for (size_t k = 0; k < len; k++) payload[k] = (uint8_t)rand();
            uint16_t proto = i % 2 ? EMU_PPP_PROTO_VJ_COMP : EMU_PPP_PROTO_IP, got_proto = 0;
            long n = emu_ppp_frame(proto, payload, len, EMU_PPP_ACCM_ALL, frame, sizeof frame);
            long m = emu_ppp_unframe(frame, (size_t)n, &got_proto, back, sizeof back);
            ok = n > 0 && m == (long)len && got_proto == proto && memcmp(back, payload, len) == 0 &&
                 (size_t)n == emu_ppp_frame_len(proto, payload, len, EMU_PPP_ACCM_ALL);
        }
        CHECK(ok);
    }
    TEST("That a damaged frame is refused: flipped bit, bad escape, flag inside, too short") {
        const uint8_t payload[] = "hello, line";
        uint8_t frame[64], back[64];
        uint16_t proto;
        long n = emu_ppp_frame(EMU_PPP_PROTO_IP, payload, 11, EMU_PPP_ACCM_ALL, frame, sizeof frame);
        frame[8] ^= 0x04;
        CHECK_EQ(emu_ppp_unframe(frame, (size_t)n, &proto, back, sizeof back), -EBADMSG);
        const uint8_t bad_escape[] = { 0x7e, 0xff, 0x03, 0x00, 0x21, 0x7d, 0x7e };
        CHECK_EQ(emu_ppp_unframe(bad_escape, sizeof bad_escape, &proto, back, sizeof back), -EBADMSG);
        const uint8_t inner_flag[] = { 0x7e, 0xff, 0x7e, 0x03, 0x00, 0x21, 0x00, 0x00, 0x7e };
        CHECK_EQ(emu_ppp_unframe(inner_flag, sizeof inner_flag, &proto, back, sizeof back), -EBADMSG);
        const uint8_t tiny[] = { 0x7e, 0xff, 0x03, 0x7e };
        CHECK_EQ(emu_ppp_unframe(tiny, sizeof tiny, &proto, back, sizeof back), -EBADMSG);
        CHECK_EQ(emu_ppp_unframe(tiny, 0, &proto, back, sizeof back), -EBADMSG);
    }
    TEST("That framing into a small buffer fails with -ENOSPC instead of overrunning") {
        uint8_t payload[100] = { 0 }, out[50];
        CHECK_EQ(emu_ppp_frame(EMU_PPP_PROTO_IP, payload, sizeof payload, EMU_PPP_ACCM_ALL, out, sizeof out), -ENOSPC);
        uint8_t frame[300], small[10];
        uint16_t proto;
        long n = emu_ppp_frame(EMU_PPP_PROTO_IP, payload, 20, 0, frame, sizeof frame);
        CHECK_EQ(emu_ppp_unframe(frame, (size_t)n, &proto, small, sizeof small), -ENOSPC);
    }
    return test_summary();
}
