/* test_frame.c -- link frames and the link handshake. */
#include <errno.h>
#include <string.h>

#include "link/frame.h"
#include "link/handshake.h"
#include "proxy/spare.h"
#include "test.h"

/* Runs two handshakes against each other until both finish or one fails. */
static void converse(struct handshake *a, struct handshake *b, int *ra, int *rb)
{
    struct buf a2b = { 0 }, b2a = { 0 };
    hs_start(a, &a2b);
    hs_start(b, &b2a);
    *ra = *rb = 0;
    for (int i = 0; i < 10 && (*ra == 0 || *rb == 0) && *ra >= 0 && *rb >= 0; i++) {
        if (*rb == 0)
            *rb = hs_feed(b, &a2b, &b2a);
        if (*ra == 0)
            *ra = hs_feed(a, &b2a, &a2b);
    }
    buf_free(&a2b);
    buf_free(&b2a);
}

/* What a new session's peer sends after its banner (and proofs): SESSION, a token of its
 * own and none of ours. */
static void new_session_frame(struct buf *in)
{
    uint8_t p[2 * HS_TOKEN_SIZE + 1] = { 7, 7, 7 };
    CHECK_EQ(frame_encode(in, FRAME_SESSION, 0, p, sizeof p), 0);
}

int main(void)
{
    TEST("That frames round-trip and are never consumed in part") {
        struct buf b = { 0 };
        CHECK_EQ(frame_encode(&b, FRAME_DATA, 300, "hello", 5), 0);
        CHECK_EQ(frame_encode(&b, FRAME_CLOSE, 7, NULL, 0), 0);
        struct frame f;
        for (size_t n = 0; n < 9; n++)
            CHECK_EQ(frame_decode(buf_head(&b), n, &f), -EAGAIN);
        long n = frame_decode(buf_head(&b), b.len, &f);
        CHECK_EQ(n, 9);
        CHECK(f.type == FRAME_DATA && f.channel == 300 && f.len == 5 && !memcmp(f.payload, "hello", 5));
        CHECK_EQ(frame_decode(buf_head(&b) + n, b.len - (size_t)n, &f), 3);
        CHECK(f.type == FRAME_CLOSE && f.channel == 7 && f.len == 0);
        buf_free(&b);
    }
    TEST("That unknown types and oversized lengths are corrupt frames") {
        uint8_t unknown[3] = { 0x7e, 0, 0 };
        struct frame f;
        CHECK_EQ(frame_decode(unknown, 3, &f), -EBADMSG);
        struct buf b = { 0 };
        uint8_t t = FRAME_DATA;
        CHECK_EQ(buf_append(&b, &t, 1), 0);
        CHECK_EQ(buf_put_varint(&b, 1), 0);
        CHECK_EQ(buf_put_varint(&b, FRAME_MAX_PAYLOAD + 1), 0);
        CHECK_EQ(frame_decode(buf_head(&b), b.len, &f), -EBADMSG);
        buf_free(&b);
    }
    TEST("That OPEN's payload round-trips, its reference store included") {
        struct buf b = { 0 };
        struct frame_open o = { 1, 11, 0, 0, 17 }, back;
        CHECK_EQ(frame_open_encode(&b, 42, &o), 0);
        struct frame f;
        CHECK(frame_decode(buf_head(&b), b.len, &f) > 0);
        CHECK_EQ(f.len, (uint32_t)FRAME_OPEN_SIZE);
        CHECK_EQ(frame_open_parse(&f, &back), 0);
        CHECK(back.msb == 1 && back.major == 11 && back.minor == 0 && back.spare == 0 && back.refs == 17);
        f.len = 2;
        CHECK_EQ(frame_open_parse(&f, &back), -EBADMSG);
        f.len = FRAME_OPEN_SIZE - 1; /* no reference store */
        CHECK_EQ(frame_open_parse(&f, &back), -EBADMSG);
        buf_free(&b);
    }
    TEST("That OPEN names a spare connection, and a store above 4 MiB or a longer payload is corrupt") {
        struct buf b = { 0 };
        struct frame_open o = { 0, 11, 0, 300, FRAME_OPEN_REFS_MAX }, back;
        CHECK_EQ(frame_open_encode(&b, 5, &o), 0);
        struct frame f;
        CHECK(frame_decode(buf_head(&b), b.len, &f) > 0);
        CHECK_EQ(f.len, FRAME_OPEN_SIZE + 1u);
        CHECK_EQ(frame_open_parse(&f, &back), 0);
        CHECK_EQ(back.spare, 300u);
        CHECK_EQ(back.refs, FRAME_OPEN_REFS_MAX);
        f.len = FRAME_OPEN_SIZE - 1; /* a varint cut short */
        CHECK_EQ(frame_open_parse(&f, &back), -EBADMSG);
        buf_free(&b);
        uint8_t extra[] = { 0, 11, 0, 0, 0, 5, 9, 1 };
        struct frame g = { FRAME_OPEN, 5, extra, sizeof extra };
        CHECK_EQ(frame_open_parse(&g, &back), -EBADMSG);
        buf_clear(&b);
        o.spare = UINT32_MAX; /* the longest payload */
        CHECK_EQ(frame_open_encode(&b, 5, &o), 0);
        CHECK(frame_decode(buf_head(&b), b.len, &f) > 0);
        CHECK_EQ(frame_open_parse(&f, &back), 0);
        CHECK(back.spare == UINT32_MAX && back.refs == FRAME_OPEN_REFS_MAX);
        buf_free(&b);
        uint8_t big[] = { 0, 11, 0, 0, 0, 0, FRAME_OPEN_REFS_MAX + 1 };
        struct frame h = { FRAME_OPEN, 5, big, sizeof big };
        CHECK_EQ(frame_open_parse(&h, &back), -EBADMSG);
    }
    TEST("That SPARE's payload round-trips, and withdrawal is an empty setup") {
        struct buf b = { 0 };
        uint8_t setup[8] = { 1, 0, 11, 0, 0, 0, 0, 0 };
        spare_frame_encode(&b, 7, false, setup, sizeof setup);
        spare_frame_encode(&b, 8, true, NULL, 0);
        struct frame f;
        long n = frame_decode(buf_head(&b), b.len, &f);
        CHECK(n > 0 && f.type == FRAME_SPARE && f.channel == 0);
        uint32_t id;
        bool msb;
        const uint8_t *p;
        size_t len;
        CHECK_EQ(spare_frame_parse(&f, &id, &msb, &p, &len), 0);
        CHECK(id == 7 && !msb && len == sizeof setup && !memcmp(p, setup, len));
        CHECK(frame_decode(buf_head(&b) + n, b.len - (size_t)n, &f) > 0);
        CHECK_EQ(spare_frame_parse(&f, &id, &msb, &p, &len), 0);
        CHECK(id == 8 && msb && len == 0);
        uint8_t zero_id[] = { 0, 0 }, bad_msb[] = { 1, 2 }, short_one[] = { 1 };
        struct frame g = { FRAME_SPARE, 0, zero_id, sizeof zero_id };
        CHECK_EQ(spare_frame_parse(&g, &id, &msb, &p, &len), -EBADMSG);
        g.payload = bad_msb;
        CHECK_EQ(spare_frame_parse(&g, &id, &msb, &p, &len), -EBADMSG);
        g.payload = short_one;
        g.len = 1;
        CHECK_EQ(spare_frame_parse(&g, &id, &msb, &p, &len), -EBADMSG);
        buf_free(&b);
    }
    TEST("That a SPARE sent as changes from the last one's setup reply reads back as the whole reply") {
        uint8_t base[64], next[64];
        for (size_t i = 0; i < sizeof base; i++)
            base[i] = (uint8_t)(i * 7);
        memcpy(next, base, sizeof next);
        next[14] = 0x40;                 /* a new resource-id base */
        next[40] ^= 0x08, next[42] ^= 1; /* root masks: two bytes apart, one run */
        struct buf b = { 0 }, got = { 0 };
        CHECK_EQ(spare_frame_encode_delta(&b, 9, false, base, sizeof base, next, sizeof next), 0);
        struct frame f;
        CHECK(frame_decode(buf_head(&b), b.len, &f) > 0 && f.type == FRAME_SPARE);
        /* id, mode 2 (a delta, LSB), (14, 1, byte), (25, 3, bytes) */
        CHECK(f.len == 2 + 3 + 5 && f.payload[1] == 2 && f.payload[2] == 14 && f.payload[5] == 25 && f.payload[6] == 3);
        uint32_t id;
        bool msb;
        CHECK_EQ(spare_frame_read(&f, base, sizeof base, &id, &msb, &got), 0);
        CHECK(id == 9 && !msb && got.len == sizeof next && !memcmp(buf_head(&got), next, sizeof next));
        /* The same reply again: a delta of no runs. */
        buf_clear(&b);
        buf_clear(&got);
        CHECK_EQ(spare_frame_encode_delta(&b, 10, true, base, sizeof base, base, sizeof base), 0);
        CHECK(frame_decode(buf_head(&b), b.len, &f) > 0 && f.len == 2);
        CHECK_EQ(spare_frame_read(&f, base, sizeof base, &id, &msb, &got), 0);
        CHECK(id == 10 && msb && got.len == sizeof base && !memcmp(buf_head(&got), base, sizeof base));
        /* Not shorter, or no base of the same size: the whole reply instead. */
        uint8_t other[64];
        for (size_t i = 0; i < sizeof other; i++)
            other[i] = (uint8_t)~base[i];
        CHECK_EQ(spare_frame_encode_delta(&b, 11, false, base, sizeof base, other, sizeof other), -EINVAL);
        CHECK_EQ(spare_frame_encode_delta(&b, 11, false, base, 60, next, sizeof next), -EINVAL);
        CHECK_EQ(spare_frame_encode_delta(&b, 11, false, NULL, 0, next, sizeof next), -EINVAL);
        /* A whole reply reads as itself; withdrawal as nothing. */
        buf_clear(&b);
        buf_clear(&got);
        spare_frame_encode(&b, 12, false, next, sizeof next);
        CHECK(frame_decode(buf_head(&b), b.len, &f) > 0);
        CHECK_EQ(spare_frame_read(&f, NULL, 0, &id, &msb, &got), 0);
        CHECK(id == 12 && got.len == sizeof next && !memcmp(buf_head(&got), next, sizeof next));
        /* Refused: a delta without a base, runs beyond the reply, a run of 0 bytes, cut short, mode 4. */
        uint8_t d1[] = { 1, 2, 60, 5, 1, 2, 3, 4, 5 }, d2[] = { 1, 2, 3, 0 }, d3[] = { 1, 2, 3, 2, 9 },
                d4[] = { 1, 4 }, d5[] = { 1, 2, 63, 1, 7 };
        struct frame g = { FRAME_SPARE, 0, d5, sizeof d5 };
        buf_clear(&got);
        CHECK_EQ(spare_frame_read(&g, NULL, 0, &id, &msb, &got), -EBADMSG);
        CHECK_EQ(spare_frame_read(&g, base, sizeof base, &id, &msb, &got), 0); /* the last byte: fits */
        CHECK(got.len == sizeof base && buf_head(&got)[63] == 7);
        const struct { uint8_t *p; size_t n; } bad[] = { { d1, sizeof d1 }, { d2, sizeof d2 }, { d3, sizeof d3 }, { d4, sizeof d4 } };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            g.payload = bad[i].p;
            g.len = (uint32_t)bad[i].n;
            buf_clear(&got);
            CHECK_EQ(spare_frame_read(&g, base, sizeof base, &id, &msb, &got), -EBADMSG);
        }
        buf_free(&b);
        buf_free(&got);
    }
    TEST("That two sides with the same secret accept each other") {
        struct handshake a, b;
        hs_init(&a, ROLE_APP, (const uint8_t *)"0123456789abcdef-secret", 23, 0);
        hs_init(&b, ROLE_DISPLAY, (const uint8_t *)"0123456789abcdef-secret", 23, 0);
        int ra, rb;
        converse(&a, &b, &ra, &rb);
        CHECK_EQ(ra, 1);
        CHECK_EQ(rb, 1);
    }
    TEST("That a wrong secret is refused on both sides") {
        struct handshake a, b;
        hs_init(&a, ROLE_APP, (const uint8_t *)"0123456789abcdef-secret", 23, 0);
        hs_init(&b, ROLE_DISPLAY, (const uint8_t *)"0123456789abcdef-SECRET", 23, 0);
        int ra, rb;
        converse(&a, &b, &ra, &rb);
        CHECK(ra != 1 && rb != 1);
        CHECK(ra == -EACCES || rb == -EACCES);
        CHECK(strstr(ra == -EACCES ? a.error : b.error, "secret") != NULL);
    }
    TEST("That a peer without a secret is refused by one that requires it") {
        struct handshake a, b;
        hs_init(&a, ROLE_APP, NULL, 0, 0);
        hs_init(&b, ROLE_DISPLAY, (const uint8_t *)"0123456789abcdef-secret", 23, 0);
        int ra, rb;
        converse(&a, &b, &ra, &rb);
        CHECK_EQ(rb, -EACCES);
        CHECK(ra < 0);
    }
    TEST("That a proof replayed from another session is refused") {
        /* Record A's proof to B, then offer it to a fresh B2 with a new nonce. */
        struct handshake a, b, b2;
        const uint8_t *sec = (const uint8_t *)"0123456789abcdef-secret";
        hs_init(&a, ROLE_APP, sec, 23, 0);
        hs_init(&b, ROLE_DISPLAY, sec, 23, 0);
        hs_init(&b2, ROLE_DISPLAY, sec, 23, 0);
        struct buf a2b = { 0 }, b2a = { 0 }, b2_out = { 0 };
        hs_start(&a, &a2b);
        hs_start(&b, &b2a);
        hs_feed(&a, &b2a, &a2b); /* A now has banner + nonce + proof for B's nonce */
        hs_start(&b2, &b2_out);
        CHECK_EQ(hs_feed(&b2, &a2b, &b2_out), -EACCES);
        buf_free(&a2b);
        buf_free(&b2a);
        buf_free(&b2_out);
    }
    TEST("That a peer of another protocol version gets a clear error") {
        struct handshake b;
        hs_init(&b, ROLE_DISPLAY, NULL, 0, 0);
        struct buf in = { 0 }, out = { 0 };
        char banner[64], want[32];
        int n = snprintf(banner, sizeof banner, "TINCAN %d app 0 none\n", LINK_PROTOCOL_VERSION + 1);
        snprintf(want, sizeof want, "version %d", LINK_PROTOCOL_VERSION + 1);
        CHECK_EQ(buf_append(&in, banner, (size_t)n), 0);
        CHECK_EQ(hs_feed(&b, &in, &out), -EPROTO);
        CHECK(strstr(b.error, want) != NULL);
        buf_free(&in);
        buf_free(&out);
    }
    TEST("That something that is not tincan is refused without waiting") {
        struct handshake b;
        hs_init(&b, ROLE_DISPLAY, NULL, 0, 0);
        struct buf in = { 0 }, out = { 0 };
        CHECK_EQ(buf_append(&in, "SSH-2.0-OpenSSH", 15), 0);
        CHECK_EQ(hs_feed(&b, &in, &out), -EPROTO);
        buf_free(&in);
        buf_free(&out);
    }
    TEST("That two sides of the same role refuse each other") {
        struct handshake a, b;
        hs_init(&a, ROLE_APP, NULL, 0, 0);
        hs_init(&b, ROLE_APP, NULL, 0, 0);
        int ra, rb;
        converse(&a, &b, &ra, &rb);
        CHECK_EQ(ra, -EPROTO);
    }
    TEST("That with CAP_DICT on both sides, each learns the other's cached dictionaries after the proofs") {
        struct handshake a, b;
        static const uint8_t sec[] = "0123456789abcdef-secret";
        hs_init(&a, ROLE_APP, sec, 23, CAP_ZSTD | CAP_DICT);
        hs_init(&b, ROLE_DISPLAY, sec, 23, CAP_ZSTD | CAP_DICT);
        a.offer_self.n = 1;
        a.offer_self.e[0].dir = DICT_UP;
        memset(a.offer_self.e[0].hash, 0x11, DICT_HASH_SIZE);
        b.offer_self.n = 0;
        int ra, rb;
        converse(&a, &b, &ra, &rb);
        CHECK_EQ(ra, 1);
        CHECK_EQ(rb, 1);
        CHECK(a.caps == (CAP_ZSTD | CAP_DICT) && b.got_offer && a.got_offer);
        CHECK(b.offer_peer.n == 1 && b.offer_peer.e[0].hash[5] == 0x11);
        CHECK_EQ(a.offer_peer.n, 0);
    }
    TEST("That without CAP_DICT on one side no DICT_OFFER is sent") {
        struct handshake a, b;
        hs_init(&a, ROLE_APP, NULL, 0, CAP_ZSTD | CAP_DICT);
        hs_init(&b, ROLE_DISPLAY, NULL, 0, CAP_ZSTD);
        int ra, rb;
        converse(&a, &b, &ra, &rb);
        CHECK(ra == 1 && rb == 1 && !a.sent_offer && !b.sent_offer && a.caps == CAP_ZSTD);
    }
    TEST("That anything but a valid DICT_OFFER where one is due refuses the peer") {
        struct handshake b;
        hs_init(&b, ROLE_DISPLAY, NULL, 0, CAP_DICT);
        struct buf in = { 0 }, out = { 0 };
        char banner[64];
        int n = snprintf(banner, sizeof banner, "TINCAN %d app 4 none\n", LINK_PROTOCOL_VERSION);
        CHECK_EQ(buf_append(&in, banner, (size_t)n), 0);
        new_session_frame(&in);
        CHECK_EQ(frame_encode(&in, FRAME_DICT_OFFER, 0, "\x09", 1), 0); /* 9 entries: more than allowed */
        CHECK_EQ(hs_feed(&b, &in, &out), -EPROTO);
        CHECK(strstr(b.error, "DICT_OFFER") != NULL);
        buf_free(&in);
        buf_free(&out);
    }
    TEST("That both sides use the smaller compression window offered, and 2^24 with a peer that names none") {
        struct handshake a, b;
        hs_init(&a, ROLE_APP, NULL, 0, CAP_ZSTD);
        hs_init(&b, ROLE_DISPLAY, NULL, 0, CAP_ZSTD);
        a.window_log = 21;
        int ra, rb;
        converse(&a, &b, &ra, &rb);
        CHECK(ra == 1 && rb == 1 && a.window_log == 21 && b.window_log == 21);
        hs_init(&b, ROLE_DISPLAY, NULL, 0, CAP_ZSTD);
        b.window_log = 20;
        struct buf in = { 0 }, out = { 0 };
        char banner[64];
        int n = snprintf(banner, sizeof banner, "TINCAN %d app 1 none\n", LINK_PROTOCOL_VERSION);
        CHECK_EQ(buf_append(&in, banner, (size_t)n), 0);
        new_session_frame(&in);
        CHECK_EQ(hs_feed(&b, &in, &out), 1);
        CHECK_EQ(b.window_log, HS_WINDOW_LOG_DEFAULT); /* what an older peer uses, whatever we say */
        hs_init(&b, ROLE_DISPLAY, NULL, 0, CAP_ZSTD);
        n = snprintf(banner, sizeof banner, "TINCAN %d app 1 none 12\n", LINK_PROTOCOL_VERSION);
        buf_clear(&in);
        CHECK_EQ(buf_append(&in, banner, (size_t)n), 0);
        CHECK_EQ(hs_feed(&b, &in, &out), -EPROTO);
        CHECK(strstr(b.error, "window") != NULL);
        buf_free(&in);
        buf_free(&out);
    }
    TEST("That GOODBYE may carry a payload (the bytes received) and DICT_OFFER has a name") {
        CHECK(strcmp(frame_type_name(FRAME_DICT_OFFER), "DICT_OFFER") == 0);
        struct buf b = { 0 };
        CHECK_EQ(frame_encode(&b, FRAME_GOODBYE, 0, "\x80\x01", 2), 0);
        struct frame f;
        CHECK_EQ(frame_decode(buf_head(&b), b.len, &f), 5);
        CHECK(f.type == FRAME_GOODBYE && f.len == 2);
        buf_free(&b);
    }
    return test_summary();
}
