/* test_emu_vj.c -- RFC 1144 header compression (emu/vj.c): round trips of bulk, ack-only,
 * interactive and interleaved traffic; what goes uncompressed; tossing after a loss until
 * resync; malformed compressed input refused. */
#include <errno.h>
#include <stdlib.h>

#include "ip.h"
#include "rd.h"
#include "test.h"
#include "vj.h"

struct seg {
    uint32_t src, dst;
    uint16_t sport, dport, id, win, urg;
    uint32_t seq, ack;
    uint8_t flags;
    unsigned data_len;
    int has_ts;                                    /* NOP NOP TIMESTAMP, as Linux sends it */
    uint32_t tsval, tsecr;
};

/* Builds an IPv4/TCP packet (20 + 20 or 32 bytes of headers) into p; returns its length. */
static size_t build(uint8_t *p, const struct seg *s)
{
    size_t hlen = s->has_ts ? 52 : 40, len = hlen + s->data_len;
    memset(p, 0, hlen);
    p[0] = 0x45;
    emu_put_be16(p + 2, (uint16_t)len);
    emu_put_be16(p + 4, s->id);
    p[6] = 0x40;                                   /* DF */
    p[8] = 64;
    p[9] = EMU_IPPROTO_TCP;
    emu_put_be32(p + 12, s->src);
    emu_put_be32(p + 16, s->dst);
    emu_put_be16(p + 10, emu_ip_checksum(p, 20));
    uint8_t *t = p + 20;
    emu_put_be16(t, s->sport);
    emu_put_be16(t + 2, s->dport);
    emu_put_be32(t + 4, s->seq);
    emu_put_be32(t + 8, s->ack);
    t[12] = (uint8_t)((hlen - 20) / 4) << 4;
    t[13] = s->flags;
    if (s->has_ts) {
        t[20] = 1; t[21] = 1; t[22] = 8; t[23] = 10;
        emu_put_be32(t + 24, s->tsval);
        emu_put_be32(t + 28, s->tsecr);
    }
    emu_put_be16(t + 14, s->win);
    emu_put_be16(t + 16, (uint16_t)(s->seq * 7 + s->ack));   /* any checksum: it travels as is */
    emu_put_be16(t + 18, s->urg);
    for (unsigned i = 0; i < s->data_len; i++) p[hlen + i] = (uint8_t)(s->seq + i);
    return len;
}

struct pair { struct emu_vj_comp c; struct emu_vj_decomp d; };

/* Sends one packet through compressor and decompressor; returns 1 if it came out identical. */
static int round_trip(struct pair *pr, const struct seg *s, enum emu_vj_type *type, long *wire)
{
    uint8_t pkt[2000], mid[2000], back[2000];
    size_t len = build(pkt, s);
    long n = emu_vj_compress(&pr->c, pkt, len, type, mid, sizeof mid, NULL, NULL);
    long m = emu_vj_decompress(&pr->d, *type, mid, (size_t)n, back, sizeof back);
    if (wire) *wire = n - (long)s->data_len;
    return m == (long)len && memcmp(back, pkt, len) == 0;
}

static void pair_init(struct pair *pr)
{
    emu_vj_comp_init(&pr->c);
    emu_vj_decomp_init(&pr->d);
}

static const struct seg base = { 0x0a000001, 0x0a000002, 6000, 80, 100, 8192, 0, 1000, 5000, 0x10, 0 };

int main(void)
{
    struct pair pr;
    enum emu_vj_type type;
    long hdr;
    TEST("That the first segment goes uncompressed and the next ones of a bulk transfer in 3 bytes") {
        pair_init(&pr);
        struct seg s = base;
        s.data_len = 512;
        CHECK(round_trip(&pr, &s, &type, &hdr));
        CHECK(type == EMU_VJ_TYPE_UNCOMPRESSED);
        int ok = 1, small = 1;
        for (int i = 0; i < 50; i++) {
            s.seq += s.data_len; s.id++;
            ok &= round_trip(&pr, &s, &type, &hdr);
            small &= type == EMU_VJ_TYPE_COMPRESSED && hdr == 3;   /* SPECIAL_D: mask + checksum */
        }
        CHECK(ok);
        CHECK(small);
    }
    TEST("That pure acks with a moving ack and window round-trip compressed") {
        pair_init(&pr);
        struct seg s = base;
        CHECK(round_trip(&pr, &s, &type, NULL));
        int ok = 1;
        for (int i = 0; i < 50; i++) {
            s.ack += 1460; s.id++; s.win = (uint16_t)(8192 + (i % 3) * 300);
            ok &= round_trip(&pr, &s, &type, &hdr) && type == EMU_VJ_TYPE_COMPRESSED && hdr <= 9;  /* 1+2+3+3 */
        }
        CHECK(ok);
    }
    TEST("That echoed interactive traffic uses the SPECIAL_I form") {
        pair_init(&pr);
        struct seg s = base;
        s.data_len = 1;
        s.flags = 0x18;
        CHECK(round_trip(&pr, &s, &type, NULL));
        int ok = 1;
        for (int i = 0; i < 20; i++) {
            s.seq += 1; s.ack += 1; s.id++;
            ok &= round_trip(&pr, &s, &type, &hdr) && type == EMU_VJ_TYPE_COMPRESSED && hdr == 3;
        }
        CHECK(ok);
    }
    TEST("That jumps of IP id, urgent data and large deltas round-trip exactly") {
        pair_init(&pr);
        struct seg s = base;
        s.data_len = 10;
        CHECK(round_trip(&pr, &s, &type, NULL));
        int ok = 1;
        for (int i = 0; i < 40; i++) {
            s.seq += 300 + (uint32_t)i * 1000; s.ack += (uint32_t)i * 37; s.id += (uint16_t)(i * 50);
            s.win = (uint16_t)(s.win - (uint16_t)(i * 400));
            s.flags = i % 5 == 0 ? 0x30 : 0x10; s.urg = i % 5 == 0 ? (uint16_t)i : 0;
            ok &= round_trip(&pr, &s, &type, NULL);
        }
        CHECK(ok);
    }
    TEST("That two interleaved connections round-trip, naming their slot when they alternate") {
        pair_init(&pr);
        struct seg a = base, b = base;
        b.sport = 6001;
        a.data_len = b.data_len = 100;
        int ok = round_trip(&pr, &a, &type, NULL) && round_trip(&pr, &b, &type, NULL);
        for (int i = 0; i < 30; i++) {
            struct seg *s = i % 2 ? &a : &b;
            s->seq += 100; s->id++;
            ok &= round_trip(&pr, s, &type, &hdr) && type == EMU_VJ_TYPE_COMPRESSED && hdr == (i ? 4 : 3);
        }
        CHECK(ok);
    }
    TEST("That more connections than slots still round-trip (slots are reused)") {
        pair_init(&pr);
        int ok = 1;
        struct seg s[40];
        for (int i = 0; i < 40; i++) { s[i] = base; s[i].sport = (uint16_t)(7000 + i); s[i].data_len = 20; }
        for (int r = 0; r < 5; r++)
            for (int i = 0; i < 40; i++) { s[i].seq += 20; s[i].id++; ok &= round_trip(&pr, &s[i], &type, NULL); }
        CHECK(ok);
    }
    TEST("That SYN, FIN, RST, non-TCP and IPv6 packets go as plain IP") {
        pair_init(&pr);
        uint8_t pkt[100], out[100];
        struct seg s = base;
        uint8_t flags[] = { 0x02, 0x12, 0x11, 0x04 };
        int ok = 1;
        for (unsigned i = 0; i < sizeof flags; i++) {
            s.flags = flags[i];
            size_t len = build(pkt, &s);
            ok &= emu_vj_compress(&pr.c, pkt, len, &type, out, sizeof out, NULL, NULL) == (long)len &&
                  type == EMU_VJ_TYPE_IP;
        }
        s.flags = 0x10;
        size_t len = build(pkt, &s);
        pkt[9] = 17; pkt[10] = pkt[11] = 0;
        emu_put_be16(pkt + 10, emu_ip_checksum(pkt, 20));
        ok &= emu_vj_compress(&pr.c, pkt, len, &type, out, sizeof out, NULL, NULL) == (long)len && type == EMU_VJ_TYPE_IP;
        pkt[0] = 0x60;
        ok &= emu_vj_compress(&pr.c, pkt, len, &type, out, sizeof out, NULL, NULL) == (long)len && type == EMU_VJ_TYPE_IP;
        CHECK(ok);
    }
    TEST("That a retransmission (sequence going back) is sent uncompressed") {
        pair_init(&pr);
        struct seg s = base;
        s.data_len = 100;
        round_trip(&pr, &s, &type, NULL);
        s.seq += 100; s.id++;
        round_trip(&pr, &s, &type, NULL);
        s.seq -= 100; s.id++;
        CHECK(round_trip(&pr, &s, &type, NULL));
        CHECK(type == EMU_VJ_TYPE_UNCOMPRESSED);
    }
    TEST("That after a lost packet the decompressor tosses until an uncompressed one resyncs it") {
        pair_init(&pr);
        struct seg s = base;
        s.data_len = 100;
        round_trip(&pr, &s, &type, NULL);
        uint8_t pkt[2000], mid[2000], back[2000];
        s.seq += 100; s.id++;
        size_t len = build(pkt, &s);
        emu_vj_compress(&pr.c, pkt, len, &type, mid, sizeof mid, NULL, NULL);   /* lost on the line */
        emu_vj_decomp_error(&pr.d);
        int tossed = 0;
        for (int i = 0; i < 3; i++) {
            s.seq += 100; s.id++;
            len = build(pkt, &s);
            long n = emu_vj_compress(&pr.c, pkt, len, &type, mid, sizeof mid, NULL, NULL);
            tossed += type == EMU_VJ_TYPE_COMPRESSED &&
                      emu_vj_decompress(&pr.d, type, mid, (size_t)n, back, sizeof back) == -EAGAIN;
        }
        CHECK_EQ(tossed, 3);
        s.seq -= 300; s.id++;                          /* TCP retransmits the lost segment */
        CHECK(round_trip(&pr, &s, &type, NULL));
        CHECK(type == EMU_VJ_TYPE_UNCOMPRESSED);
        s.seq += 400; s.id++;
        CHECK(round_trip(&pr, &s, &type, NULL));       /* and compressed ones decode again */
        CHECK(type == EMU_VJ_TYPE_COMPRESSED);
    }
    TEST("That a compressed packet before any uncompressed one is tossed, not guessed") {
        struct emu_vj_decomp d;
        emu_vj_decomp_init(&d);
        const uint8_t in[] = { 0x0f, 0x12, 0x34, 'x' };
        uint8_t out[100];
        CHECK_EQ(emu_vj_decompress(&d, EMU_VJ_TYPE_COMPRESSED, in, sizeof in, out, sizeof out), -EAGAIN);
        const uint8_t named[] = { 0x4f, 3, 0x12, 0x34 };
        CHECK_EQ(emu_vj_decompress(&d, EMU_VJ_TYPE_COMPRESSED, named, sizeof named, out, sizeof out), -EBADMSG);
    }
    TEST("That truncated or impossible inputs are refused and start tossing") {
        pair_init(&pr);
        struct seg s = base;
        round_trip(&pr, &s, &type, NULL);
        uint8_t out[200];
        const uint8_t cut[] = { 0x04, 0x12 };                      /* NEW_A but no checksum */
        CHECK_EQ(emu_vj_decompress(&pr.d, EMU_VJ_TYPE_COMPRESSED, cut, sizeof cut, out, sizeof out), -EBADMSG);
        CHECK(pr.d.toss);
        const uint8_t bad_slot[] = { 0x44, 99, 0, 0, 1 };
        CHECK_EQ(emu_vj_decompress(&pr.d, EMU_VJ_TYPE_COMPRESSED, bad_slot, sizeof bad_slot, out, sizeof out), -EBADMSG);
        uint8_t pkt[100];
        size_t len = build(pkt, &s);
        pkt[9] = 200;                                              /* slot number out of range */
        CHECK_EQ(emu_vj_decompress(&pr.d, EMU_VJ_TYPE_UNCOMPRESSED, pkt, len, out, sizeof out), -EBADMSG);
        CHECK_EQ(emu_vj_decompress(&pr.d, EMU_VJ_TYPE_UNCOMPRESSED, pkt, 10, out, sizeof out), -EBADMSG);
    }
    TEST("That random bytes never crash the decompressor nor produce oversize output") {
        struct emu_vj_decomp d;
        emu_vj_decomp_init(&d);
        srand(3);
        int ok = 1;
        for (int i = 0; i < 20000; i++) {
            uint8_t in[80], out[200];
            size_t len = (size_t)(rand() % 80);
            for (size_t k = 0; k < len; k++) in[k] = (uint8_t)rand();
            if (i % 7 == 0 && len > 40) { in[0] = 0x45; in[9] = (uint8_t)(rand() % 16); emu_put_be16(in + 2, (uint16_t)len); }
            long n = emu_vj_decompress(&d, (enum emu_vj_type)(1 + i % 2), in, len, out, sizeof out);
            ok &= n <= (long)sizeof out;
        }
        CHECK(ok);
    }
    TEST("That bulk data with moving TCP timestamps goes compressed and round-trips exactly") {
        pair_init(&pr);
        struct seg s = base;
        s.data_len = 1448; s.has_ts = 1; s.tsval = 4000000000u; s.tsecr = 77;
        CHECK(round_trip(&pr, &s, &type, &hdr));
        CHECK(type == EMU_VJ_TYPE_UNCOMPRESSED);
        int ok = 1, small = 1;
        for (int i = 0; i < 60; i++) {
            s.seq += s.data_len; s.id++;
            s.tsval += (uint32_t)(i % 4) * 100;          /* wraps past 2^32: deltas are modular */
            if (i % 3 == 0) s.tsecr += 40;
            ok &= round_trip(&pr, &s, &type, &hdr);
            small &= type == EMU_VJ_TYPE_COMPRESSED && hdr <= 3 + 6;
        }
        CHECK(ok);
        CHECK(small);
    }
    TEST("That acks with timestamps compress, and a timestamp jump of 2^16 goes uncompressed") {
        pair_init(&pr);
        struct seg s = base;
        s.has_ts = 1; s.tsval = 1000; s.tsecr = 2000;
        CHECK(round_trip(&pr, &s, &type, NULL));
        s.ack += 1448; s.id++; s.tsval += 5;
        CHECK(round_trip(&pr, &s, &type, &hdr));
        CHECK(type == EMU_VJ_TYPE_COMPRESSED);
        s.ack += 1448; s.id++; s.tsval += 70000;
        CHECK(round_trip(&pr, &s, &type, &hdr));
        CHECK(type == EMU_VJ_TYPE_UNCOMPRESSED);
    }
    TEST("That a changed option other than the timestamp values sends the packet uncompressed") {
        pair_init(&pr);
        struct seg s = base;
        s.has_ts = 1; s.data_len = 100;
        uint8_t pkt[2000], mid[2000], back[2000];
        CHECK(round_trip(&pr, &s, &type, NULL));
        s.seq += 100; s.id++;
        size_t len = build(pkt, &s);
        pkt[20 + 21] = 0;                              /* NOP becomes end-of-options */
        long n = emu_vj_compress(&pr.c, pkt, len, &type, mid, sizeof mid, NULL, NULL);
        CHECK(type == EMU_VJ_TYPE_UNCOMPRESSED);
        long m = emu_vj_decompress(&pr.d, type, mid, (size_t)n, back, sizeof back);
        CHECK(m == (long)len && memcmp(back, pkt, len) == 0);
    }
    TEST("That after the link reports a loss to the compressor the next packet goes uncompressed") {
        pair_init(&pr);
        struct seg s = base;
        s.data_len = 100;
        CHECK(round_trip(&pr, &s, &type, NULL));
        uint8_t pkt[2000], mid[2000];
        s.seq += 100; s.id++;
        size_t len = build(pkt, &s);
        emu_vj_compress(&pr.c, pkt, len, &type, mid, sizeof mid, NULL, NULL);   /* never reached the line */
        CHECK(type == EMU_VJ_TYPE_COMPRESSED);
        emu_vj_comp_lost(&pr.c);
        s.seq += 100; s.id++;
        CHECK(round_trip(&pr, &s, &type, NULL));          /* no toss needed at the decompressor */
        CHECK(type == EMU_VJ_TYPE_UNCOMPRESSED);
        s.seq += 100; s.id++;
        CHECK(round_trip(&pr, &s, &type, NULL));
        CHECK(type == EMU_VJ_TYPE_COMPRESSED);
    }
    return test_summary();
}
