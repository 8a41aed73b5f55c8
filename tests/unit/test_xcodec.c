/* test_xcodec.c -- the structured X codec: every message kind round-trips exactly in both
 * byte orders, whatever the chunking of the encoded stream; repeats cost little; corrupt
 * and truncated streams are refused cleanly; random messages round-trip too. */
#include <errno.h>
#include <iconv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "test.h"
#include "common/buf.h"
#include "xcodec/xcodec.h"

#define MAXMSG 256
struct msgs { struct buf all; size_t off[MAXMSG + 1]; int n; };

static uint32_t rng_state = 12345;
static uint32_t rnd(void) { rng_state = rng_state * 1103515245u + 12345u; return rng_state >> 8; }

static void add(struct msgs *m, const uint8_t *p, size_t n)
{
    if (m->n >= MAXMSG) return;
    m->off[m->n++] = m->all.len;
    CHECK_EQ(buf_append(&m->all, p, n), 0);
    m->off[m->n] = m->all.len;
}

/* A request: opcode, byte 1, and a body of len-4 bytes from fill (NULL: a pattern). */
static void req(struct msgs *m, bool msb, uint8_t op, uint8_t b1, size_t len, const uint8_t *fill)
{
    uint8_t *p = calloc(1, len);
    p[0] = op; p[1] = b1;
    st16(p + 2, (uint16_t)(len / 4), msb);
    for (size_t i = 4; i < len; i++) p[i] = fill ? fill[i - 4] : (uint8_t)(i * 7 + op);
    add(m, p, len);
    free(p);
}

static void big_req(struct msgs *m, bool msb, uint8_t op, size_t len)
{
    uint8_t *p = calloc(1, len);
    p[0] = op; p[1] = 2;
    st32(p + 4, (uint32_t)(len / 4), msb);
    for (size_t i = 8; i < len; i++) p[i] = (uint8_t)(i / 3);
    if (len >= 28) { /* PutImage-like width, height and depth: rows of the body */
        st16(p + 16, 100, msb);
        st16(p + 18, 20, msb);
        p[25] = 24;
    }
    add(m, p, len);
    free(p);
}

static void event(struct msgs *m, bool msb, uint8_t code, uint16_t seq, uint32_t t, int16_t x, int16_t y)
{
    uint8_t p[32] = { code, 0 };
    st16(p + 2, seq, msb);
    st32(p + 4, t, msb);
    st32(p + 8, 0x1e7, msb);
    st32(p + 12, 0x400001, msb);
    st16(p + 20, (uint16_t)x, msb); st16(p + 22, (uint16_t)y, msb);
    st16(p + 24, (uint16_t)(x - 5), msb); st16(p + 26, (uint16_t)(y - 9), msb);
    p[30] = 1;
    add(m, p, 32);
}

static void reply(struct msgs *m, bool msb, uint8_t b1, uint16_t seq, size_t extra, uint8_t seed)
{
    uint8_t *p = calloc(1, 32 + extra);
    p[0] = 1; p[1] = b1;
    st16(p + 2, seq, msb);
    st32(p + 4, (uint32_t)(extra / 4), msb);
    for (size_t i = 8; i < 32 + extra; i++) p[i] = (uint8_t)(seed + i % 13);
    add(m, p, 32 + extra);
    free(p);
}

static void setup_reply(struct msgs *m, bool msb, uint8_t status, size_t extra)
{
    uint8_t *p = calloc(1, 8 + extra);
    p[0] = status; p[1] = 5;
    st16(p + 2, 11, msb);
    st16(p + 6, (uint16_t)(extra / 4), msb);
    for (size_t i = 8; i < 8 + extra; i++) p[i] = (uint8_t)i;
    add(m, p, 8 + extra);
    free(p);
}

/* The QueryFont reply of the core font "fixed" (6x13, 256 glyphs, 23 properties) as
 * Xvfb sent it, LSB first, in hex. */
static const char fixed_font_reply_hex[] =
    "01000a0035030000000000000600fffff6ff0000000000000200060006000b0002000000000000000000ff0000001700"
    "000000000b0002000001000056000000570000005800000059000000400000005a0000005b0000005c0000005d000000"
    "5e0000005f000000600000006100000057000000620000000d0000003b00000078000000630000004b00000064000000"
    "4b0000006500000066000000670000003c00000068000000690000006a0000006b0000003d0000006c00000042000000"
    "0900000038000000060000006d0000006e000000120000006f0000003a0000000a0000003c0000006700000039000000"
    "060000000000050006000900000000000000050006000700feff00000000060006000b00020000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000100050006000900"
    "fbff00000000050006000800ffff00000000050006000900000000000000050006000900000000000000030006000b00"
    "fcff00000000030006000500020000000200060006000500020000000200060006000b00fcff00000000060006000b00"
    "020000000000060006000b00f6ff00000000060006000800f9ff00000000060006000500fcff00000000060006000200"
    "ffff0000000006000600ffff020000000200060006000b00020000000000030006000b00020000000000060006000b00"
    "fcff00000000060006000500020000000200030006000b00020000000000050006000800ffff00000000050006000800"
    "ffff00000000050006000600000000000000050006000600ffff00000000050006000900000000000200040006000500"
    "fcff00000000000006000000000000000200030006000900000000000100040006000900faff00000000050006000800"
    "ffff00000000050006000900000000000000050006000900000000000000050006000800000000000200030006000900"
    "faff00000100040006000a00010000000100040006000a00010000000000050006000900fcff00000000050006000700"
    "feff00000100040006000200010000000000050006000500fcff00000100040006000200010000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000100040006000700010000000100040006000700"
    "010000000000050006000900000000000000050006000600feff00000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000100040006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900010000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000100040006000a00"
    "010000000000050006000900000000000100040006000a00010000000000050006000900faff00000000050006000000"
    "010000000200040006000a00f8ff00000000050006000600000000000000050006000900000000000000050006000600"
    "000000000000050006000900000000000000050006000600000000000000050006000900000000000000050006000600"
    "020000000000050006000900000000000100040006000800000000000000040006000800020000000000050006000900"
    "000000000100040006000900000000000000050006000600000000000000050006000600000000000000050006000600"
    "000000000000050006000600020000000000050006000600020000000000050006000600000000000000050006000600"
    "000000000000050006000800000000000000050006000600000000000000050006000600000000000000050006000600"
    "000000000000050006000600000000000000050006000600020000000000050006000600000000000000050006000a00"
    "010000000200030006000900000000000000050006000a00010000000000050006000900faff00000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000006000000000000000200030006000900000000000000050006000900ffff00000000050006000900"
    "000000000000050006000700ffff00000000050006000900000000000200030006000900000000000100050006000a00"
    "000000000100040006000a00f8ff00000000050006000a00ffff00000000050006000900feff00000000050006000700"
    "ffff00000000050006000500feff00000100040006000500fcff00000000050006000a00ffff00000000050006000900"
    "f8ff00000100050006000900fbff00000000050006000800ffff00000000030006000a00fbff00000000030006000a00"
    "fbff00000200040006000a00f8ff00000000050006000600020000000000050006000900000000000200040006000500"
    "fcff00000200040006000000020000000000030006000a00fbff00000000050006000900feff00000000050006000700"
    "ffff00000000050006000a00000000000000050006000a00000000000000050006000a00000000000000050006000900"
    "000000000000050006000a00000000000000050006000a00000000000000050006000a00000000000000050006000a00"
    "000000000000050006000a00000000000000050006000a00000000000000050006000900000000000000050006000900"
    "020000000000050006000a00000000000000050006000a00000000000000050006000a00000000000000050006000a00"
    "000000000100040006000a00000000000100040006000a00000000000100050006000a00000000000100040006000a00"
    "000000000000050006000900000000000000050006000a00000000000000050006000a00000000000000050006000a00"
    "000000000000050006000a00000000000000050006000a00000000000000050006000a00000000000000050006000600"
    "ffff00000000050006000a00010000000000050006000a00000000000000050006000a00000000000000050006000a00"
    "000000000000050006000a00000000000000050006000a00000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000a00000000000000050006000600000000000000050006000600"
    "020000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000100040006000900000000000100040006000900000000000100050006000900000000000100040006000900"
    "000000000000050006000a00000000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900000000000000050006000900000000000000050006000800"
    "ffff00000000050006000700010000000000050006000900000000000000050006000900000000000000050006000900"
    "000000000000050006000900000000000000050006000900020000000000050006000800020000000000050006000900"
    "02000000";


/* A QueryFont-shaped reply: nprops properties and nci charinfos, mostly absent glyphs (all
 * zeros) and glyph metrics from a few hundred distinct ones (more than the coder's table). */
static void font_reply(struct buf *out, bool msb, uint16_t seq, uint16_t nprops, uint32_t nci)
{
    size_t len = 60 + 8 * (size_t)nprops + 12 * (size_t)nci;
    uint8_t *p = calloc(1, len);
    p[0] = 1;
    st16(p + 2, seq, msb);
    st32(p + 4, (uint32_t)((len - 32) / 4), msb);
    st16(p + 18, 6, msb); st16(p + 20, 11, msb); st16(p + 22, 2, msb); /* max-bounds */
    st16(p + 42, (uint16_t)(nci - 1), msb);
    st16(p + 46, nprops, msb);
    st16(p + 52, 11, msb); st16(p + 54, 2, msb);
    st32(p + 56, nci, msb);
    for (size_t i = 0; i < nprops; i++) {
        st32(p + 60 + 8 * i, (uint32_t)(1 + i), msb);
        st32(p + 64 + 8 * i, (uint32_t)(i * 37), msb);
    }
    uint8_t *ci = p + 60 + 8 * (size_t)nprops;
    for (uint32_t i = 0; i < nci; i++, ci += 12) {
        if (rnd() % 3 == 0 || (i / 256) % 5 == 3)
            continue; /* absent glyphs, in blocks too */
        unsigned v = rnd() % (rnd() % 4 ? 8 : 400);
        st16(ci + 0, (uint16_t)(v % 3), msb);
        st16(ci + 2, (uint16_t)(5 + v % 2), msb);
        st16(ci + 4, 6, msb);
        st16(ci + 6, (uint16_t)(6 + v / 3 % 6), msb);
        st16(ci + 8, (uint16_t)(int16_t)((int)(v / 18 % 23) - 11), msb);
    }
    CHECK_EQ(buf_append(out, p, len), 0);
    free(p);
}

/* A GetImage-shaped reply of npx 4-byte pixels from ncolors values, in runs like text. */
static void image_reply(struct buf *out, bool msb, uint16_t seq, uint32_t npx, unsigned ncolors)
{
    size_t len = 32 + 4 * (size_t)npx;
    uint8_t *p = calloc(1, len);
    p[0] = 1; p[1] = 24;
    st16(p + 2, seq, msb);
    st32(p + 4, npx, msb);
    st32(p + 8, 0x21, msb);
    unsigned c = 0;
    for (uint32_t i = 0; i < npx; i++) {
        if (rnd() % 5 == 0)
            c = rnd() % ncolors;
        st32(p + 32 + 4 * i, c * 0x10101u ^ (c ? 0xff000000u : 0), msb);
    }
    CHECK_EQ(buf_append(out, p, len), 0);
    free(p);
}

/* Font names as a server lists them (a few stretches of a real ListFonts "*" reply, and
 * aliases), and names that test the edges of the name model. */
static const char *const real_font_names[] = {
    "-arabic-newspaper-medium-r-normal--32-246-100-100-p-137-iso10646-1",
    "-daewoo-gothic-medium-r-normal--16-120-100-100-c-160-ksc5601.1987-0",
    "-daewoo-mincho-medium-r-normal--16-120-100-100-c-160-ksc5601.1987-0",
    "-daewoo-mincho-medium-r-normal--24-170-100-100-c-240-ksc5601.1987-0",
    "-isas-fangsong ti-medium-r-normal--16-160-72-72-c-160-gb2312.1980-0",
    "-isas-song ti-medium-r-normal--16-160-72-72-c-160-gb2312.1980-0",
    "-isas-song ti-medium-r-normal--24-240-72-72-c-240-gb2312.1980-0",
    "-jis-fixed-medium-r-normal--16-110-100-100-c-160-jisx0208.1983-0",
    "-jis-fixed-medium-r-normal--16-150-75-75-c-160-jisx0208.1983-0",
    "-jis-fixed-medium-r-normal--24-170-100-100-c-240-jisx0208.1983-0",
    "-jis-fixed-medium-r-normal--24-230-75-75-c-240-jisx0208.1983-0",
    "-misc-fixed-bold-r-normal--13-100-100-100-c-70-iso8859-1",
    "-schumacher-clean-medium-i-normal--8-80-75-75-c-80-iso646.1991-irv",
    "-schumacher-clean-medium-i-normal--12-120-75-75-c-60-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--6-60-75-75-c-40-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--6-60-75-75-c-50-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--6-60-75-75-c-60-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--8-80-75-75-c-50-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--8-80-75-75-c-60-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--8-80-75-75-c-70-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--8-80-75-75-c-80-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--10-100-75-75-c-50-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--10-100-75-75-c-60-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--10-100-75-75-c-70-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--10-100-75-75-c-80-iso646.1991-irv",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-1",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-2",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-3",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-4",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-5",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-7",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-8",
    "-schumacher-clean-medium-r-normal--12-120-75-75-c-60-iso8859-9",
    "-b&h-lucidatypewriter-medium-r-normal-sans-34-240-100-100-m-200-iso10646-1",
    "-bitstream-charter-bold-i-normal--11-80-100-100-p-68-iso8859-1",
    "-bitstream-charter-bold-i-normal--14-100-100-100-p-86-iso8859-1",
    "-bitstream-charter-bold-i-normal--17-120-100-100-p-105-iso8859-1",
    "-bitstream-charter-bold-i-normal--19-140-100-100-p-117-iso8859-1",
    "-bitstream-charter-bold-i-normal--25-180-100-100-p-154-iso8859-1",
    "-bitstream-charter-bold-i-normal--33-240-100-100-p-203-iso8859-1",
    "-bitstream-charter-bold-r-normal--11-80-100-100-p-69-iso8859-1",
    "-bitstream-charter-bold-r-normal--14-100-100-100-p-88-iso8859-1",
    "-bitstream-charter-bold-r-normal--17-120-100-100-p-107-iso8859-1",
    "-bitstream-charter-bold-r-normal--19-140-100-100-p-119-iso8859-1",
    "-bitstream-charter-bold-r-normal--25-180-100-100-p-157-iso8859-1",
    "-bitstream-charter-bold-r-normal--33-240-100-100-p-206-iso8859-1",
    "-bitstream-charter-medium-i-normal--11-80-100-100-p-60-iso8859-1",
    "-bitstream-charter-medium-i-normal--14-100-100-100-p-76-iso8859-1",
    "-bitstream-charter-medium-i-normal--17-120-100-100-p-92-iso8859-1",
    "5x7", "5x8", "6x13", "6x13bold", "7x13euro", "7x13eurobold", "cursor", "fixed",
    "lucidasans-8", "lucidasans-10", "lucidasans-bold-8", "nil2", "olcursor", "variable",
    "-sun-open look cursor-----12-120-75-75-p-160-sunolcursor-1",
    "-sun-open look glyph-----10-100-75-75-p-101-sunolglyph-1",
};
static const char *const edge_font_names[] = {
    "--------------", "-a-b", "---------------", "-x-y-medium-r-normal--012-0-75-75-c-0-iso8859-1",
    "-x-y-medium-r-normal--12-0-75-75-c-999999999-iso8859-1", "-x-y-medium-r-normal--12-0-75-75-c-1000000000-iso8859-1",
    "-x-y-medium-r-normal--12-0-75-75-c-1-iso8859-1", "-x-y-medium-r-normal--12-0-75-75-c-999999999-iso8859-1",
    "-x-y-medium-r-normal--12-0-75-75-c-0-iso8859-1", "-x-y-medium-r-normal--12-0-75-75-c-0-iso8859-1",
    "-X-y-medium-r-normal--12-0-75-75-c-0-iso8859-1", "x", "xy", "-x", "-", "-x-y-medium-r-normal--12-0-75-75-c-0-",
};

/* A ListFonts reply of n names (pad: any bytes the server left after them, at most 3). */
static void names_reply(struct buf *out, bool msb, uint16_t seq, const char *const *names, size_t n)
{
    size_t blen = 0;
    for (size_t i = 0; i < n; i++)
        blen += 1 + strlen(names[i]);
    blen = (blen + 3) & ~(size_t)3;
    uint8_t *p = calloc(1, 32 + blen), *w = p + 32;
    p[0] = 1;
    st16(p + 2, seq, msb);
    st32(p + 4, (uint32_t)(blen / 4), msb);
    st16(p + 8, (uint16_t)n, msb);
    for (size_t i = 0; i < n; i++) {
        *w = (uint8_t)strlen(names[i]);
        memcpy(w + 1, names[i], *w);
        w += 1 + *w;
    }
    CHECK_EQ(buf_append(out, p, 32 + blen), 0);
    free(p);
}

/* A font directory's listing: families x weights x slants x sizes x encodings, sorted. */
static size_t synth_font_names(char ***out)
{
    static const char *const fam[] = { "misc-fixed", "adobe-courier", "b&h-lucida", "bitstream-charter" };
    static const char *const wt[] = { "bold", "medium" };
    static const char *const sl[] = { "i", "o", "r" };
    static const unsigned px[] = { 8, 10, 12, 14, 18, 24 };
    static const char *const enc[] = { "iso10646-1", "iso8859-1", "iso8859-10", "iso8859-15", "iso8859-2", "koi8-r" };
    size_t n = 0, cap = 4 * 2 * 3 * 6 * 6;
    char **v = calloc(cap, sizeof *v);
    for (size_t a = 0; a < 4; a++) for (size_t b = 0; b < 2; b++) for (size_t c = 0; c < 3; c++)
        for (size_t d = 0; d < 6; d++) for (size_t e = 0; e < 6; e++) {
            v[n] = malloc(128);
            snprintf(v[n++], 128, "-%s-%s-%s-normal--%u-%u-75-75-%c-%u-%s", fam[a], wt[b], sl[c], px[d],
                     px[d] * 10, a < 2 ? 'c' : 'p', px[d] * 6 + (unsigned)b * 7, enc[e]);
        }
    *out = v;
    return n;
}

static size_t zstd_size(const struct buf *b)
{
    size_t cap = ZSTD_compressBound(b->len);
    void *z = malloc(cap);
    size_t n = ZSTD_compress(z, cap, buf_head(b), b->len, 3);
    free(z);
    return ZSTD_isError(n) ? b->len : n;
}

/* Encodes a setup reply and the server messages in all (each whole: its length field). */
static void encode_server(bool msb, const struct buf *all, struct buf *enc)
{
    struct xenc *e;
    uint8_t setup[8] = { 1, 0, 11, 0, 0, 0, 0, 0 };
    xenc_new(&e, XC_SERVER, msb);
    xenc_message(e, setup, sizeof setup, enc);
    for (size_t at = 0; at < all->len;) {
        const uint8_t *m = buf_head(all) + at;
        size_t len = 32 + 4 * (size_t)ld32(m + 4, msb);
        CHECK_EQ(xenc_message(e, m, len, enc), 0);
        at += len;
    }
    xenc_free(e);
}

/* Decodes enc in chunks (0: whole); whether it gives the setup reply and then all. */
static bool decode_server(bool msb, const struct buf *enc, size_t chunk, const struct buf *all)
{
    struct xdec *d;
    struct buf dec = { 0 }, pend = { 0 };
    bool ok = xdec_new(&d, XC_SERVER, msb) == 0;
    for (size_t at = 0; ok && at < enc->len;) {
        size_t n = chunk && chunk < enc->len - at ? chunk : enc->len - at;
        CHECK_EQ(buf_append(&pend, buf_head(enc) + at, n), 0);
        at += n;
        long used = xdec_feed(d, buf_head(&pend), pend.len, &dec);
        if (used < 0) ok = false;
        else buf_consume(&pend, (size_t)used);
    }
    ok = ok && pend.len == 0 && dec.len == all->len + 8 && memcmp(buf_head(&dec) + 8, buf_head(all), all->len) == 0;
    xdec_free(d);
    buf_free(&dec); buf_free(&pend);
    return ok;
}

static long decode_server_result(bool msb, const uint8_t *p, size_t n)
{
    struct xdec *d;
    struct buf dec = { 0 };
    xdec_new(&d, XC_SERVER, msb);
    long rc = xdec_feed(d, p, n, &dec);
    xdec_free(d);
    buf_free(&dec);
    return rc;
}

/* A RENDER AddGlyphs request of one subpixel (32-bit) glyph, as x11perf -rgb24text sent
 * it through Xvfb's RENDER (major 138), LSB first, in hex. */
static const char addglyphs_argb_hex[] =
    "8a1497001e002000010000000d0000000c000c00000012000c0000000000000000000000000000000000000009000000"
    "f7ab56ab56abf7ab00000900000000000000000000000000000000000000000000000000000000000000000009000000"
    "f7ab56ab56abf7ab00000900000000000000000000000000000000002c05000592996b99103162310000010009000000"
    "f7ab56ab56abf7ab0000090001000000623110316b98929800052b0548180218e6c288c2e4f9f9f9558abe8a0a0c280c"
    "f7ab56ab56abf7ab280c0a0cbe8a558af9f9e5f98bc5e8c502184a18000000000e01000186562b56f4ddb5ddb8dcf5dc"
    "fbd6bcd6bcd6fbd6f5dcb8dcb7def5de2d58885800010f010000000000000000000000000000000020080008cc8f4e8f"
    "fffef3fef3fefffe4e90cc90000921090000000000000000000000000000000000000000240b000bad7d4d7df6f1d7f1"
    "fef7f6f7f6f7fef7d7f1f6f14d7dad7d000b240b0000000000000000110200028c5c305cf7e1bce1bbe3f8e32f528752"
    "f7ac60ac60acf7ac87522f52f8e3bbe3bce1f7e1305c8c5c00021102601a021ae8eab1ea5f94c694010f2f0f09000000"
    "f7ab56ab56abf7ab000009002f0f010fc6945f94b1eae8ea021a601a0300000011151115000003000000000009000000"
    "f7ab56ab56abf7ab00000900000000000300000011151115000003000000000000000000000000000000000009000000"
    "f7ab56ab56abf7ab00000900000000000000000000000000000000000000000000000000000000000000000003000000"
    "64452245224564450000030000000000000000000000000000000000";

/* Three RENDER Trapezoids requests of xclock 1.1.1 -render (the first second hand: 1 and
 * 2 x 3 trapezoids of 4-vertex polygons), as Xvfb's RENDER (major 138) got them, LSB first.
 * Bytes 5-7 are unset padding, as the client sent them. */
static const char xclock_traps_hex[] =
    "8a0a1000030062000e0020000d002000240000000000000089a15100765e5200856b940089a15100856b9400765e5200"
    "cccc9b0089a15100cccc9b00765e52008a0a240003636c6f0e0020000d002000240000000000000025f65800e3585900"
    "b6c3970025f65800f6af97000ab25900b6c3970025f658002d6f9b00e3585900e35859000ab25900b6c3970025f65800"
    "f6af97000ab259002d6f9b00e35859006d5b9b00c8145a000ab25900c8145a00f6af97000ab259006d5b9b00c8145a00"
    "2d6f9b00e35859006d5b9b00c8145a008a0a2400030000000e0020000d00200024000000000000003b37600008f06000"
    "96a796003b3760004f80960008f0600096a796003b37600096439a00a2fb600008f06000a2fb60004f80960008f06000"
    "4e1c9a006fb4610096a796003b37600096439a00a2fb6000a2fb60006fb461004f80960008f060004e1c9a006fb46100"
    "96439a00a2fb60004e1c9a006fb46100";

static void add_hex(struct msgs *m, const char *hex)
{
    struct buf b = { 0 };
    for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) {
        unsigned v;
        sscanf(hex + i, "%2x", &v);
        uint8_t c = (uint8_t)v;
        CHECK_EQ(buf_append(&b, &c, 1), 0);
    }
    add(m, buf_head(&b), b.len);
    buf_free(&b);
}

/* AddGlyphs of n glyphs of w x h pixels of psz bytes (A8 rows padded to 4); 32-bit pixels
 * have alpha = green, as subpixel glyphs do. */
static void add_glyphs(struct msgs *m, bool msb, uint32_t first, uint32_t n, uint16_t w, uint16_t h, unsigned psz)
{
    size_t stride = psz == 4 ? 4u * w : (w + 3u) & ~3u, len = 12 + 16 * (size_t)n + stride * h * n;
    uint8_t *p = calloc(1, len);
    p[0] = 138; p[1] = 20;
    st16(p + 2, (uint16_t)(len / 4), msb);
    st32(p + 4, 0x200012, msb);
    st32(p + 8, n, msb);
    for (uint32_t g = 0; g < n; g++) {
        st32(p + 12 + 4 * g, first + g, msb);
        uint8_t *info = p + 12 + 4 * n + 12 * g;
        st16(info, w, msb); st16(info + 2, h, msb);
        st16(info + 4, 1, msb); st16(info + 6, (uint16_t)(h - 2), msb); st16(info + 8, w, msb);
    }
    uint8_t *img = p + 12 + 16 * (size_t)n;
    for (size_t k = 0; k + psz <= stride * h * n; k += psz) {
        uint8_t g = (uint8_t)(rnd() % 3 ? 0 : rnd());
        if (psz == 4) st32(img + k, (uint32_t)g << 24 | (uint32_t)(g / 2) << 16 | (uint32_t)g << 8 | (uint8_t)(g * 3), msb);
        else img[k] = g;
    }
    add(m, p, len);
    free(p);
}

/* Trapezoids requests of m (LSB) again in MSB order into b: the length swapped (bytes 4-7
 * are the opcode and padding), then every 32-bit value (ids, then FIXED values; src x, y:
 * any bytes do). m's bytes are changed. */
static void traps_to_msb(struct msgs *m, struct msgs *b)
{
    for (int i = 0; i < m->n; i++) {
        uint8_t *p = (uint8_t *)buf_head(&m->all) + m->off[i];
        size_t len = m->off[i + 1] - m->off[i];
        uint8_t t = p[2]; p[2] = p[3]; p[3] = t;
        for (size_t k = 8; k + 4 <= len; k += 4)
            st32(p + k, ld32(p + k, false), true);
        add(b, p, len);
    }
}

/* A request stream cut anywhere short: the decoder waits for the rest and gives nothing. */
static void cut_short_waits(const uint8_t *rec, size_t n)
{
    struct buf out = { 0 };
    for (size_t cut = 0; cut < n; cut++) {
        struct xdec *d;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec, cut, &out), 0);
        CHECK_EQ(out.len, 0);
        xdec_free(d);
    }
    buf_free(&out);
}

/* A byte of a record set to another value. */
struct flip { size_t at; uint8_t v; };

/* rec with each flip alone: a fresh decoder refuses it (and, with nothing, gives nothing). */
static void refused_each(const uint8_t *rec, size_t n, const struct flip *bad, size_t nbad, bool nothing)
{
    struct buf out = { 0 };
    uint8_t *c = malloc(n);
    for (size_t i = 0; i < nbad; i++) {
        struct xdec *d;
        memcpy(c, rec, n);
        c[bad[i].at] = bad[i].v;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, c, n, &out), -EBADMSG);
        if (nothing)
            CHECK_EQ(out.len, 0);
        xdec_free(d);
    }
    free(c);
    buf_free(&out);
}

static size_t rt_store = XC_STORE_MAX; /* the reference store round_trip gives both ends */

/* Encodes every message, decodes the stream in chunks of `chunk` bytes (0: all at once);
 * returns whether the decoded bytes equal the messages. */
static bool round_trip(enum xc_dir dir, bool msb, const struct msgs *m, size_t chunk, size_t *enc_size)
{
    struct xenc *e; struct xdec *d;
    struct buf enc = { 0 }, dec = { 0 }, pend = { 0 };
    bool ok = xenc_new(&e, dir, msb) == 0 && xdec_new(&d, dir, msb) == 0;
    if (ok) {
        xenc_set_store(e, rt_store);
        xdec_set_store(d, rt_store);
    }
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e, buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc) == 0;
    if (enc_size) *enc_size = enc.len;
    for (size_t at = 0; ok && at < enc.len;) {
        size_t n = chunk && chunk < enc.len - at ? chunk : enc.len - at;
        CHECK_EQ(buf_append(&pend, buf_head(&enc) + at, n), 0);
        at += n;
        long used = xdec_feed(d, buf_head(&pend), pend.len, &dec);
        if (used < 0) ok = false;
        else buf_consume(&pend, (size_t)used);
    }
    ok = ok && pend.len == 0 && dec.len == m->all.len && memcmp(buf_head(&dec), buf_head(&m->all), dec.len) == 0;
    xenc_free(e); xdec_free(d);
    buf_free(&enc); buf_free(&dec); buf_free(&pend);
    return ok;
}

static void requests_of_every_kind(struct msgs *m, bool msb)
{
    uint8_t text[64];
    for (int i = 0; i < 64; i++) text[i] = (uint8_t)('a' + i % 26);
    req(m, msb, 43, 0, 4, NULL);               /* GetInputFocus */
    req(m, msb, 43, 0, 4, NULL);               /* an exact repeat */
    req(m, msb, 62, 0, 28, NULL);              /* CopyArea */
    req(m, msb, 65, 0, 12 + 4 * 9, NULL);      /* PolyLine */
    req(m, msb, 64, 1, 12 + 4 * 3, NULL);      /* PolyPoint, previous mode */
    req(m, msb, 66, 0, 12 + 8 * 5, NULL);      /* PolySegment */
    req(m, msb, 70, 0, 12 + 8 * 40, NULL);     /* PolyFillRectangle, a large body */
    req(m, msb, 68, 0, 12 + 12 * 2, NULL);     /* PolyArc */
    req(m, msb, 69, 0, 16 + 4 * 5, NULL);      /* FillPoly */
    req(m, msb, 59, 0, 12 + 8 * 2, NULL);      /* SetClipRectangles */
    req(m, msb, 56, 0, 12 + 4 * 3, NULL);      /* ChangeGC */
    uint8_t it[16 + 12] = { 0 };
    memcpy(it + 12, text, 11);                 /* ImageText8 with zero padding */
    req(m, msb, 76, 11, 28, it);
    it[12 + 11] = 0x5a;                        /* and non-zero padding */
    req(m, msb, 76, 11, 28, it);
    uint8_t pi[20 + 400];
    memset(pi, 0, sizeof pi);
    st16(pi + 8, 10, msb); st16(pi + 10, 10, msb); pi[17] = 24;
    for (int i = 0; i < 400; i++) pi[20 + i] = (uint8_t)(i % 40 * 3);
    req(m, msb, 72, 2, 24 + 400, pi);          /* PutImage ZPixmap 24 */
    st16(pi + 8, 7, msb); pi[17] = 8;
    req(m, msb, 72, 2, 24 + 400, pi);          /* rows that do not divide the body */
    pi[17] = 1;
    req(m, msb, 72, 0, 24 + 400, pi);          /* a bitmap */
    req(m, msb, 139, 23, 28 + 16, NULL);       /* an extension request */
    req(m, msb, 139, 20, 28 + 300, NULL);
    req(m, msb, 139, 23, 28 + 16, NULL);
    req(m, msb, 139, 10, 24 + 40 * 3, NULL);   /* RENDER Trapezoids (minor 10) */
    req(m, msb, 139, 10, 24 + 40 * 3 + 4, NULL); /* minor 10 not of trapezoids */
    req(m, msb, 74, 0, 16 + 20, text);         /* PolyText8 */
    req(m, msb, 0, 0, 4, NULL);                /* opcode 0 (no such request) */
}


/* Real messages, LSB first, as Xvfb got them: x11perf -aa24text's A8 glyphs and
 * -rgb24text's subpixel glyphs (one per AddGlyphs), -aa10text's CompositeGlyphs8 (lines
 * one glyph on), gtk3-widget-factory's 16x16 icons (PutImage depth 32), a mask (depth 8)
 * and CompositeGlyphs16. */
static const char real_a8_hex[] =
    "8a14470018002000010000000e00000010001000feff100014000000000000000000009eac0800000000000000000000"
    "000000ecff0c00000000000000000000000000ecff0c00000000000000000000000000ecff0c00000000000000000000"
    "000000ecff0c00000000000000000000000000ecff0c00000000000000000000000000ecff0c00000000000074ffffff"
    "ffffffffffffffffffffff9074ffffffffffffffffffffffffffff9009141414141414edff1f14141414140b00000000"
    "000000ecff0c00000000000000000000000000ecff0c00000000000000000000000000ecff0c00000000000000000000"
    "000000ecff0c00000000000000000000000000ecff0c00000000000000000000000000ecff0c0000000000008a144600"
    "180020000100000012000000090015000000120008000000000000000012fced0300000000000000005bffa500000000"
    "0000000000a7ff59000000000000000004eefb1100000000000000003fffc10000000000000000008bff750000000000"
    "00000000d7ff29000000000000000022ffdd0000000000000000006fff91000000000000000000bbff45000000000000"
    "00000df9f206000000000000000054ffac000000000000000000a0ff60000000000000000002e9fd1600000000000000"
    "0038ffc800000000000000000084ff7c000000000000000000d0ff3000000000000000001cffe3000000000000000000"
    "68ff98000000000000000000b4ff4c0000000000000000007680090000000000000000008a144f001800200001000000"
    "130000000d001200ffff12000f0000000000001d96dff8e8ae3b000000000000000037effffffbfffffd6a0000000000"
    "000de7ffce31011ba2fffc3700000000007cffef1800000001c2ffbb0000000000d7ff9000000000004cfffd17000000"
    "18ffff4a00000000000afaff5700000042ffff1f000000000000d9ff800000005bffff05000000000000bfff99000000"
    "66fffc00000000000000b5ffa500000067fffb00000000000000b5ffa50000005bffff05000000000000bfff99000000"
    "41ffff1f000000000000d9ff8000000017ffff49000000000009faff5700000000d6ff8f00000000004bfffd17000000"
    "007cffee1600000001c0ffbb00000000000ee7ffcc30011aa0fffc3800000000000037f0fffffbfffffd6a0000000000"
    "0000001d97e0f9e9ae3b0000000000008a143d001800200001000000140000000c001200feff12000f000000105085b9"
    "edffff30000000005cffffffffffff30000000005ce6b37f6affff30000000000300000028ffff300000000000000000"
    "28ffff30000000000000000028ffff30000000000000000028ffff30000000000000000028ffff300000000000000000"
    "28ffff30000000000000000028ffff30000000000000000028ffff30000000000000000028ffff300000000000000000"
    "28ffff30000000000000000028ffff30000000000000000028ffff30000000000014141438ffff401414140104ffffff"
    "ffffffffffffff1004ffffffffffffffffffff10";
static const char real_argb_hex[] =
    "8a1497001e002000010000002000000012000800ffff0c0014000000000000000c06020610100f101010101010101010"
    "101010101010101010101010101010101010101010101010101010101010101010101010101010100f10101003090d09"
    "0000000002000000c6732373fffff9ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "fffffffffffffffffffffffffffffffffcffffff3c8fdf8f0000050002000000c6732373fffff9ffffffffffffffffff"
    "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffcffffff3c8fdf8f"
    "000005000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000f080208141413141414141414141414141414141414141414141414141414141414141414141414"
    "1414141414141414141414141414141413141414040b110b0000000002000000c6732373fffff9ffffffffffffffffff"
    "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffcffffff3c8fdf8f"
    "0000050002000000c6732373fffff9ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "fffffffffffffffffffffffffffffffffcffffff3c8fdf8f000005008a14cd001e00200001000000220000000b001200"
    "ffff12000d0000000000000035170517977a587ad7c5b0c5f6f0e6f0f4f9faf9cddfecdf6d95b495051b401b00000000"
    "000000007d340434fdf1ccf1fffffefffffffffffffffffffffffffffffffffffeffffffb3e6fbe60628672800000000"
    "9d480648e4f6eaf6799dc49d263d593d060b160b211007109c653c65fef3d0f3feffffff61b3f0b300011a0140240324"
    "0c2848280000010000000000000000000000000004000000ce7d2c7dfffffaffa8f3fef3000a530a0000000000000000"
    "0000000000000000000000000000000000000000ad580c58fffef6feb0f6fef6000f5c0f000000000000000000000000"
    "00000000000000000000000014010001e8a654a6fefffdff74c6f8c60003250300000000000000000000000000000000"
    "000000000d010001bb743374fffdeafdd3f7fef70d3e8c3e00000000000000000000000000000000000000000d010001"
    "bd773577fffdebfde0fafefa245ea95e000006000000000000000000000000000000000004000000b5662566fffde9fd"
    "defafefa245da75d00000600000000000000000000000000000000000000000058130113fdeeabeeeefdfffd286dbb6d"
    "0000060000000000000000000000000000000000000000000000000099450645fffde8fda5effeef000a500a00000000"
    "000000000000000000000000000000000000000000000000ab560956fffef6fe8fdffcdf00053c050000000000000000"
    "0000000000000000000000000000000000000000ac570a57fffff7ff8edefcde00053b05000000000000000000000000"
    "000000000000000000000000000000002010011030302e301a292f2900010b0100000000000000000000000000000000"
    "00000000000000000000000011090209181817180f161716000007000000000000000000000000000000000000000000"
    "0000000002000000be6b1c6bfffff9ffa2f0fef000074d07000000000000000000000000000000000000000000000000"
    "02000000be6b1c6bfffff9ffa2f0fef000074d0700000000000000000000000000000000000000000000000002000000"
    "be6b1c6bfffff9ffa2f0fef000074d0700000000000000000000000000000000";
static const char real_cg8_hex[] =
    "8a171d00030000000b002000110020002400000012002000000000005000000014001400030405060708090a0b0c0d0e"
    "0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e"
    "3f404142434445464748494a4b4c4d4e4f5051528a171d00030000000b00200011002000240000001200200000000000"
    "50000000140020000405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b"
    "2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152538a171d0003000000"
    "0b002000110020002400000012002000000000005000000014002c0005060708090a0b0c0d0e0f101112131415161718"
    "191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748"
    "494a4b4c4d4e4f50515253548a171d00030000000b002000110020002400000012002000000000005000000014003800"
    "060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435"
    "363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455";
static const char real_pi32_hex[] =
    "480206016b00200063002000100010000000000000200809000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000101010322211f5b42423eb452514ddf5d5c57fc53524ee241403db01d1d1c50010101020000000000000000"
    "000000000000000000000000000000000e0d0d254c4b47cf5e5d58ff5e5d58ff5e5d58ff5e5d58ff5e5d58ff5e5d58ff"
    "5e5d58ff4a4a46ca0b0b0a1e00000000494844c5484743c3000000000e0d0d25565551ea5e5d58ff51504cdc25242364"
    "0a0a0a1c000000000f0f0e282727256b555450e75e5d58ff565550e80b0b0a1e5e5d58ff5e5d58ff010101044c4b47cd"
    "5e5d58ff484743c20605050f00000000000000000000000000000000000000000606061044433fb85e5d58ff4a4945c9"
    "5e5d58ff5e5d58ff21201f595e5d58ff55544fe60404040c000000000000000000000000000000000000000000000000"
    "000000000404040c51504cdb5e5d58ff5e5d58ff5e5d58ff42423eb45e5d58ff2727256a000000000000000000000000"
    "00000000000000000000000000000000494844c55e5d58ff5e5d58ff5e5d58ff5e5d58ff5e5d58ff565550e95e5d58ff"
    "0a0a091b00000000000000000000000000000000000000000000000000000000484743c35e5d58ff5e5d58ff5e5d58ff"
    "5e5d58ff5e5d58ff5c5b56fa5e5d58ff0202020500000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000565550e95e5d58ff0a0a0a1c000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000042423eb45e5d58ff"
    "2727256b000000000000000000000000000000000000000000000000000000000000000000000000070707130d0d0c23"
    "000000000000000020201e585e5d58ff55544fe60505040d000000000000000000000000000000000000000000000000"
    "000000000505040d51504cdb5b5a56f80606061000000000010101044b4a46cc5e5d58ff484744c40606061000000000"
    "0000000000000000000000000000000006060611444340b95e5d58ff4b4a46cc0101010200000000000000000d0d0c24"
    "565550e95e5d58ff52514dde262523660b0b0a1d000000010f0f0e2a2828266d565550e85e5d58ff55544fe60d0d0c23"
    "000000000000000000000000000000000d0d0c234c4b47cd5e5d58ff5e5d58ff5e5d58ff5e5d58ff5e5d58ff5e5d58ff"
    "5e5d58ff4a4a46ca0d0d0c230000000000000000000000000000000000000000000000000101010221201f5942413eb3"
    "54544fe55d5c57fb55544fe641413db120201e570101010200000000000000000000000000000000480206018e002000"
    "6300200010001000000000000020b2000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "36342eff292823c304040415000000000000000004040313282722bf36342eff00000000000000000000000000000000"
    "000000000000000000000000000000002d2b26d436342eff2c2b26d204040415040404142c2a25cf36342eff2e2c27d7"
    "00000000000000000000000000000000000000000000000000000000000000000606051c2e2d28db36342eff2c2b26d2"
    "2c2b26d136342eff2f2d28df070706200000000000000000000000000000000000000000000000000000000000000000"
    "000000000606051c2e2d28db36342eff36342eff302e29e1070706220000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000050404162c2b26d236342eff36342eff2e2c27d90605051a00000000"
    "0000000000000000000000000000000000000000000000000000000000000000050504182d2b26d536342eff2e2c27d7"
    "2e2c27d736342eff2e2c27d7050504180000000000000000000000000000000000000000000000000000000000000000"
    "2c2a25ce36342eff2e2c27d705050418050504182e2c27d736342eff2c2a25cf00000000000000000000000000000000"
    "0000000000000000000000000000000036342eff2c2a25cf050504180000000000000000050504182c2a25cf36342eff"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";
static const char real_pi8_hex[] =
    "48025b00420020003d002000110011000000000000080000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000040500000000000000000103060809"
    "0909090909030200000000000001040a121a202426262626260005000000000001050f1f3446545b5d5e5e5e5e000000"
    "00000001040f25456682949da0a1a1a1a1000000000000020a1f44729dbcced6d8d9d9d9d900000a000000041234669e"
    "cae4f0f4f6f6f6f6f6fcfcfe000000061a4682bce3f7fdffffffffffff00000000000008205393cef0fdffffffffffff"
    "ff00000000000009245b9dd6f4feffffffffffffff00000000000009255ea0d9f5fffffffffffffffffcfcfe00000009"
    "265ea1d9f6ffffffffffffffff00006200000009265ea1d9f6ffffffffffffffff00000000000009265ea1d9f6ffffff"
    "ffffffffff00000000000009265ea1d9f6ffffffffffffffff000000";
static const char real_cg16_hex[] =
    "8a180b0003002602f20120003600200000000000f3012000b9025c0004000000b9025c0018001300ed0a08008a180b00"
    "03292300e5022000b602200000000000f3012000aa02240004000000aa02240018001300ed0a08008a180b0003140600"
    "e5022000f002200000000000f3012000aa02240004000000aa02240018001300ed0a0800";

/* xeyes' RENDER Trapezoids as it sent them to Xvfb: two eyes (ellipses of 16 slices)
 * and two pupils (7 slices). */
static const char xeyes_traps_hex[] =
    "8a0aa6000300200008002000110020002400000000000000e3b80900037f0a00bc862300e3b8090071f11d00037f0a00"
    "bc862300e3b80900071c2900037f0a00037f0a00c6c90c0071f11d00037f0a0013931800c6c90c00071c2900037f0a00"
    "657a2e00c6c90c00c6c90c009f82100013931800c6c90c0074a013009f821000657a2e00c6c90c00056d33009f821000"
    "9f821000f184150074a013009f8210003f4a0f00f1841500056d33009f82100039c33700f1841500f1841500749f1b00"
    "3f4a0f00f184150020bb0b00749f1b0039c33700f184150058523b00749f1b00749f1b001b96220020bb0b00749f1b00"
    "1a1609001b96220058523b00749f1b005ef73d001b9622001b96220066242a001a1609001b9622003175070066242a00"
    "5ef73d001b96220047983f0066242a0066242a00ffff31003175070066242a006be80600ffff310047983f0066242a00"
    "0d254000ffff3100ffff310099db39006be80600ffff31003175070099db39000d254000ffff310047983f0099db3900"
    "99db3900e46941003175070099db39001a160900e469410047983f0099db39005ef73d00e4694100e46941008b604800"
    "1a160900e469410020bb0b008b6048005ef73d00e469410058523b008b6048008b6048000e7b4e0020bb0b008b604800"
    "3f4a0f000e7b4e0058523b008b60480039c337000e7b4e000e7b4e00607d53003f4a0f000e7b4e0074a01300607d5300"
    "39c337000e7b4e00056d3300607d5300607d53003936570074a01300607d53001393180039365700056d3300607d5300"
    "657a2e003936570039365700fc805900139318003936570071f11d00fc805900657a2e0039365700071c2900fc805900"
    "fc8059001c475a0071f11d00fc805900bc8623001c475a00071c2900fc805900bc8623001c475a008a0aa60003000000"
    "08002000110020002400000000000000e3b80900037f0a0043797200e3b80900f8e36c00037f0a0043797200e3b80900"
    "8e0e7800037f0a00037f0a00c6c90c00f8e36c00037f0a009a856700c6c90c008e0e7800037f0a00ec6c7d00c6c90c00"
    "c6c90c009f8210009a856700c6c90c00fa9262009f821000ec6c7d00c6c90c008b5f82009f8210009f821000f1841500"
    "fa9262009f821000c63c5e00f18415008b5f82009f821000c0b58600f1841500f1841500749f1b00c63c5e00f1841500"
    "a7ad5a00749f1b00c0b58600f1841500df448a00749f1b00749f1b001b962200a7ad5a00749f1b00a10858001b962200"
    "df448a00749f1b00e5e98c001b9622001b96220066242a00a10858001b962200b867560066242a00e5e98c001b962200"
    "ce8a8e0066242a0066242a00ffff3100b867560066242a00f2da5500ffff3100ce8a8e0066242a0094178f00ffff3100"
    "ffff310099db3900f2da5500ffff3100b867560099db390094178f00ffff3100ce8a8e0099db390099db3900e4694100"
    "b867560099db3900a1085800e4694100ce8a8e0099db3900e5e98c00e4694100e46941008b604800a1085800e4694100"
    "a7ad5a008b604800e5e98c00e4694100df448a008b6048008b6048000e7b4e00a7ad5a008b604800c63c5e000e7b4e00"
    "df448a008b604800c0b586000e7b4e000e7b4e00607d5300c63c5e000e7b4e00fa926200607d5300c0b586000e7b4e00"
    "8b5f8200607d5300607d530039365700fa926200607d53009a856700393657008b5f8200607d5300ec6c7d0039365700"
    "39365700fc8059009a85670039365700f8e36c00fc805900ec6c7d00393657008e0e7800fc805900fc8059001c475a00"
    "f8e36c00fc805900437972001c475a008e0e7800fc805900437972001c475a008a0a4c00030000000900200011002000"
    "24000000000000005161390095343a00895c180051613900dcca150095343a00895c18005161390036ee1a0095343a00"
    "95343a008a843c00dcca150095343a0071bb13008a843c0036ee1a0095343a00a0fd1c008a843c008a843c00f0db3f00"
    "71bb13008a843c00c0961200f0db3f00a0fd1c008a843c0052221e00f0db3f00f0db3f005c914300c0961200f0db3f00"
    "c09612005c91430052221e00f0db3f0052221e005c9143005c914300c3e84600c09612005c91430071bb1300c3e84600"
    "52221e005c914300a0fd1c00c3e84600c3e84600b838490071bb1300c3e84600dcca1500b8384900a0fd1c00c3e84600"
    "36ee1a00b8384900b8384900fc0b4a00dcca1500b8384900895c1800fc0b4a0036ee1a00b8384900895c1800fc0b4a00"
    "8a0a4c0003000000090020001100200024000000000000004c5d390090303a00354c67004c5d390088ba640090303a00"
    "354c67004c5d3900e2dd690090303a0090303a0085803c0088ba640090303a001eab620085803c00e2dd690090303a00"
    "4ded6b0085803c0085803c00ebd73f001eab620085803c006c866100ebd73f004ded6b0085803c00fe116d00ebd73f00"
    "ebd73f00578d43006c866100ebd73f006c866100578d4300fe116d00ebd73f00fe116d00578d4300578d4300bee44600"
    "6c866100578d43001eab6200bee44600fe116d00578d43004ded6b00bee44600bee44600b23449001eab6200bee44600"
    "88ba6400b23449004ded6b00bee44600e2dd6900b2344900b2344900f6074a0088ba6400b2344900354c6700f6074a00"
    "e2dd6900b2344900354c6700f6074a00";

/* xlogo's icon (XYBitmap 32 x 32) and xeyes' icon and its mask (XYPixmap depth 1, 48 x
 * 32), as they sent them to Xvfb: PutImage of depth 1. */
static const char real_bitmaps_hex[] =
    "480026000100200002002000200020000000000000010000ff0000c0fe0100c0fc030060f8070030f8070018f00f000c"
    "e01f0006c03f0006c03f0003807f800100ffc00000fe610000fe310000fc330000f81b0000f00d0000f00e0000601f00"
    "00b03f0000987f0000987f00000cff000006fe010003fc038001fc03c000f807c000f00f6000e01f3000e01f1800c03f"
    "0c00807f060000ff48014600010020000200200030002000000000000001000000000000000000000000000000000000"
    "007800001e00000000fe01807f000000008703c0e10000008001066080010000c0000c30000300006000181800060000"
    "3000300c000c00003000300c000c00001000200400080000180060060018000018006006001800001800600600180000"
    "180060060018000018006006001800001800600600180000188063060018000018806306e018000018806306e0180000"
    "18006006e0180000180020060008000010003004000c000010001004000400003000180c000600006000081800020000"
    "40000c1000030000c000063080010000808303e0e000000000ff01c07f00000000fe00003f0000000000000000000000"
    "48014600030020000400200030002000000000000001000000000000000000000000000000000000007800001e000000"
    "00fe01807f00000000ff03c0ff00000080ff07e0ff010000c0ff0ff0ff030000e0ff1ff8ff070000f0ff3ffcff0f0000"
    "f0ff3ffcff0f0000f0ff3ffcff0f0000f8ff7ffeff1f0000f8ff7ffeff1f0000f8ff7ffeff1f0000f8ff7ffeff1f0000"
    "f8ff7ffeff1f0000f8ff7ffeff1f0000f8ff7ffeff1f0000f8ff7ffeff1f0000f8ff7ffeff1f0000f8ff7ffeff1f0000"
    "f8ff3ffeff0f0000f0ff3ffcff0f0000f0ff1ffcff070000f0ff1ffcff070000e0ff0ff8ff030000c0ff0ff0ff030000"
    "c0ff07f0ff01000080ff03e0ff00000000ff01c07f00000000fe00003f0000000000000000000000";

/* Messages from hex, LSB first, split by their length fields. */
static void add_hex_msgs(struct msgs *m, const char *hex)
{
    struct msgs all = { 0 };
    add_hex(&all, hex);
    const uint8_t *p = buf_head(&all.all);
    for (size_t at = 0; at + 4 <= all.all.len;) {
        size_t len = 4u * ld16(p + at + 2, false);
        add(m, p + at, len);
        at += len;
    }
    buf_free(&all.all);
}

/* Size of a message list's encoding. */
static size_t encoded_size(enum xc_dir dir, bool msb, const struct msgs *m)
{
    size_t size = 0;
    return round_trip(dir, msb, m, 0, &size) ? size : (size_t)-1;
}

/* A 32-bit image w x h with more than 16 colours (a gradient, seeded), drawn at (x, 0). */
static void gradient_image(struct msgs *m, bool msb, uint16_t w, uint16_t h, unsigned seed, uint16_t x)
{
    size_t blen = 4u * w * h;
    uint8_t *t = calloc(1, 20 + blen);
    st16(t + 8, w, msb); st16(t + 10, h, msb); st16(t + 12, x, msb); t[17] = 32;
    for (size_t i = 0; i < (size_t)w * h; i++)
        st32(t + 20 + 4 * i, 0xff000000u | (uint32_t)((i % w) * 7 + seed) << 16 | (uint32_t)((i / w) * 5 + seed * 3) << 8 | (seed & 0xff), msb);
    req(m, msb, 72, 2, 24 + blen, t);
    free(t);
}

/* CompositeGlyphs (minor 23 + k) of the given items (already laid out) after the 24 bytes of
 * op, pictures, format, glyphset and source. */
static void composite_glyphs(struct msgs *m, bool msb, unsigned k, const uint8_t *items, size_t n)
{
    uint8_t *t = calloc(1, 24 + n);
    t[0] = 3;
    st32(t + 4, 0x200004, msb); st32(t + 8, 0x200005, msb); st32(t + 16, 0x200012, msb);
    memcpy(t + 24, items, n);
    req(m, msb, 138, (uint8_t)(23 + k), 28 + n, t);
    free(t);
}

/* Whether value i of a Trapezoids body (32-bit values, 10 a trapezoid) is a y. */
static bool trap_is_y(size_t i) { return i % 10 < 2 || i % 10 % 2 == 1; }

/* An ellipse (centre cx, cy; radii a, b) cut in n slices of equal angle, as trapezoids of
 * 16.16 values, as xeyes draws its eyes; skewed by x += skew * (y - cy). */
static void ellipse_traps(int32_t *v, int n, double cx, double cy, double a, double b, double skew)
{
    for (int i = 0; i < n; i++) {
        double t0 = 3.141592653589793 * i / n, t1 = 3.141592653589793 * (i + 1) / n;
        double y0 = cy - b * cos(t0), y1 = cy - b * cos(t1);
        double l0 = cx - a * sin(t0), l1 = cx - a * sin(t1), r0 = cx + a * sin(t0), r1 = cx + a * sin(t1);
        double s0 = skew * (y0 - cy), s1 = skew * (y1 - cy);
        double t[10] = { y0, y1, l0 + s0, y0, l1 + s1, y1, r0 + s0, y0, r1 + s1, y1 };
        for (int j = 0; j < 10; j++)
            v[10 * i + j] = (int32_t)lround(t[j] * 65536);
    }
}

/* w: the n trapezoids of v mirrored in x (how 1, about x = 200: left and right edges swap)
 * or in y (2, about y = 100: the trapezoids in reverse order, each upside down). */
static void mirror_traps(int32_t *w, const int32_t *v, int n, int how)
{
    static const int fx[10] = { 0, 1, 6, 7, 8, 9, 2, 3, 4, 5 }, fy[10] = { 1, 0, 4, 5, 2, 3, 8, 9, 6, 7 };
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 10; j++) {
            int src = how == 1 ? 10 * i + fx[j] : 10 * (n - 1 - i) + fy[j];
            bool flip = how == 1 ? !trap_is_y((size_t)j) : trap_is_y((size_t)j);
            w[10 * i + j] = flip ? (how == 1 ? 400 : 200) * 65536 - v[src] : v[src];
        }
}

/* A Trapezoids request (RENDER's opcode taken as 138) of n values. */
static void traps_req(struct msgs *m, bool msb, const int32_t *v, size_t n)
{
    uint8_t *t = calloc(1, 20 + 4 * n);
    t[0] = 3;
    st32(t + 4, 0x20000e, msb); st32(t + 8, 0x20000d, msb); st32(t + 12, 0x24, msb);
    for (size_t i = 0; i < n; i++)
        st32(t + 20 + 4 * i, (uint32_t)v[i], msb);
    req(m, msb, 138, 10, 24 + 4 * n, t);
    free(t);
}

/* Encodes m's messages with e into enc, then checks that a fresh decoder gives them back. */
static bool encode_decode(struct xenc *e, const struct msgs *m, size_t *size)
{
    struct xdec *d;
    struct buf enc = { 0 }, dec = { 0 };
    bool ok = xdec_new(&d, XC_REQUESTS, false) == 0;
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e, buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc) == 0;
    long used = ok ? xdec_feed(d, buf_head(&enc), enc.len, &dec) : -1;
    ok = ok && used == (long)enc.len && dec.len == m->all.len && !memcmp(buf_head(&dec), buf_head(&m->all), dec.len);
    *size = enc.len;
    xdec_free(d);
    buf_free(&enc);
    buf_free(&dec);
    return ok;
}

static void test_budget(void)
{
    TEST("That body models keep memory only within the session's budget: one image channel here, the next one raw") {
        struct msgs m = { 0 };
        for (int rep = 0; rep < 4; rep++) { /* 16x16 icons of many colours: the pixel coder's */
            uint8_t t[20 + 16 * 16 * 4] = { 0 };
            st16(t + 8, 16, false); st16(t + 10, 16, false); t[17] = 24;
            for (int k = 0; k < 16 * 16; k++)
                st32(t + 20 + 4 * k, (uint32_t)(k * 0x010305 + rep), false);
            req(&m, false, 72, 2, sizeof t + 4, t);
        }
        struct xc_budget b = { .cap = xc_heavy_max(XC_REQUESTS) + xc_heavy_max(XC_REQUESTS) / 2 };
        struct xenc *e1, *e2, *e3;
        CHECK(xenc_new(&e1, XC_REQUESTS, false) == 0 && xenc_new(&e2, XC_REQUESTS, false) == 0);
        xenc_set_budget(e1, &b);
        xenc_set_budget(e2, &b);
        size_t with, without;
        CHECK(encode_decode(e1, &m, &with));
        CHECK_EQ(b.used, xc_heavy_max(XC_REQUESTS));
        CHECK(encode_decode(e2, &m, &without));
        CHECK_EQ(b.used, xc_heavy_max(XC_REQUESTS)); /* refused: its images cross raw */
        CHECK(with < without);
        xenc_free(e1);
        CHECK_EQ(b.used, 0);
        CHECK(xenc_new(&e3, XC_REQUESTS, false) == 0);
        xenc_set_budget(e3, &b);
        CHECK(encode_decode(e3, &m, &with));
        CHECK_EQ(b.used, xc_heavy_max(XC_REQUESTS)); /* a later channel gets what the first gave back */
        xenc_free(e2);
        xenc_free(e3);
        CHECK_EQ(b.used, 0);
        printf("  4 icons: %zu bytes with the models, %zu without\n", with, without);
        buf_free(&m.all);
    }
}

/* Encodes m with e into enc (appended). */
static bool encode_all(struct xenc *e, const struct msgs *m, struct buf *enc)
{
    for (int i = 0; i < m->n; i++)
        if (xenc_message(e, buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], enc) != 0)
            return false;
    return true;
}

/* One session of the pixel-body cache: m's requests in two channels (even and odd
 * messages), each coded by an encoder and decoded by a decoder, the encoding end coding the
 * channels' messages in turn and the decoding end decoding all of the second channel's
 * first; each end with its own set loaded from file (NULL: cold). Returns the code's size
 * (both channels) and leaves the first channel's code in code, each end's set to save in
 * save_e / save_d; (size_t)-1 when m did not come back exactly. */
static uint64_t pix_hits[2]; /* the last pix_session's bodies coded again: encoder, decoder */

static size_t pix_session(const struct msgs *m, const struct buf *file, struct buf *code, struct buf *save_e,
                          struct buf *save_d)
{
    struct xc_pixcache *ce, *cd;
    struct xenc *e[2]; struct xdec *d[2];
    struct buf enc[2] = { { 0 }, { 0 } }, dec[2] = { { 0 }, { 0 } };
    xc_pixcache_new(&ce, XC_PIXCACHE_BYTES);
    xc_pixcache_new(&cd, XC_PIXCACHE_BYTES);
    bool ok = !file || (xc_pixcache_load(ce, buf_head(file), file->len) == 0 &&
                        xc_pixcache_load(cd, buf_head(file), file->len) == 0);
    for (int k = 0; k < 2; k++) {
        xenc_new(&e[k], XC_REQUESTS, false);
        xdec_new(&d[k], XC_REQUESTS, false);
        xenc_set_pixcache(e[k], ce);
        xdec_set_pixcache(d[k], cd);
    }
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e[i % 2], buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc[i % 2]) == 0;
    for (int k = 1; ok && k >= 0; k--)
        ok = xdec_feed(d[k], buf_head(&enc[k]), enc[k].len, &dec[k]) == (long)enc[k].len;
    for (int i = 0; ok && i < m->n; i++) {
        size_t n = m->off[i + 1] - m->off[i];
        ok = dec[i % 2].len >= n && !memcmp(buf_head(&dec[i % 2]), buf_head(&m->all) + m->off[i], n);
        buf_consume(&dec[i % 2], n);
    }
    ok = ok && !dec[0].len && !dec[1].len;
    buf_clear(save_e); buf_clear(save_d); buf_clear(code);
    ok = ok && xc_pixcache_save(ce, save_e) == 0 && xc_pixcache_save(cd, save_d) == 0;
    CHECK_EQ(buf_append(code, buf_head(&enc[0]), enc[0].len), 0);
    size_t size = ok ? enc[0].len + enc[1].len : (size_t)-1;
    for (int k = 0; k < 2; k++) {
        xenc_free(e[k]); xdec_free(d[k]);
        buf_free(&enc[k]); buf_free(&dec[k]);
    }
    pix_hits[0] = xc_pixcache_hits(ce);
    pix_hits[1] = xc_pixcache_hits(cd);
    xc_pixcache_free(ce); xc_pixcache_free(cd);
    return size;
}

/* The offset of entry i's body in a saved set of pixel bodies (its length is the 4 bytes
 * before), or 0 beyond the end. */
static size_t pix_entry(const struct buf *f, uint32_t i)
{
    const uint8_t *p = buf_head(f);
    size_t at = 4;
    for (uint32_t k = 0; at + 4 <= f->len; k++) {
        uint32_t len = ld32(p + at, false);
        if (k == i)
            return at + 4;
        at += 4 + len;
        at += 4 + ld32(p + at, false); /* its code */
    }
    return 0;
}

static void test_pixcache(void)
{
    struct msgs m = { 0 };
    for (int g = 0; g < 40; g++)   /* glyphs, one per AddGlyphs as x11perf and cairo send them */
        add_glyphs(&m, false, (uint32_t)g, 1, 9, 12, g % 2 ? 4 : 1);
    for (unsigned k = 0; k < 4; k++)
        gradient_image(&m, false, 20, 10, k, 0);
    struct buf file = { 0 }, file_d = { 0 }, code = { 0 }, again = { 0 }, again_d = { 0 }, warm_code = { 0 };

    TEST("That a session's pixel bodies, saved at both ends, make the same file in any channel order") {
        CHECK(pix_session(&m, NULL, &code, &file, &file_d) != (size_t)-1);
        CHECK(file.len > 4 && file.len == file_d.len && !memcmp(buf_head(&file), buf_head(&file_d), file.len));
        CHECK_EQ(ld32(buf_head(&file), false), 44);
    }
    TEST("That the next session sends them as the very same records, without coding them, and saves the same file") {
        size_t cold = pix_session(&m, NULL, &code, &again, &again_d);
        size_t warm = pix_session(&m, &file, &warm_code, &again, &again_d);
        CHECK(warm == cold && warm_code.len == code.len && !memcmp(buf_head(&warm_code), buf_head(&code), code.len));
        CHECK_EQ(pix_hits[0], 44); /* each body found at the encoder ... */
        CHECK_EQ(pix_hits[1], 44); /* ... and taken by its code at the decoder: no model run */
        CHECK(again.len == file.len && !memcmp(buf_head(&again), buf_head(&file), file.len));
        CHECK(again_d.len == file.len && !memcmp(buf_head(&again_d), buf_head(&file), file.len));
    }
    TEST("That a loaded set keeps what fits its budget: this session's bodies, then those used again") {
        struct xc_pixcache *c;
        xc_pixcache_new(&c, 1500);
        CHECK_EQ(xc_pixcache_load(c, buf_head(&file), file.len), 0);
        CHECK_EQ(xc_pixcache_loaded(c), 44);
        struct xenc *e;
        struct buf enc = { 0 }, saved = { 0 };
        struct msgs one = { 0 };
        add_glyphs(&one, false, 500, 1, 30, 30, 1); /* 900 pixels: new */
        add(&one, buf_head(&m.all) + m.off[3], m.off[4] - m.off[3]); /* a glyph of the file */
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_pixcache(e, c);
        CHECK(encode_all(e, &one, &enc));
        CHECK_EQ(xc_pixcache_save(c, &saved), 0);
        struct xc_pixcache *back;
        xc_pixcache_new(&back, XC_PIXCACHE_BYTES);
        CHECK_EQ(xc_pixcache_load(back, buf_head(&saved), saved.len), 0);
        CHECK_EQ(xc_pixcache_loaded(back), 2); /* shorter unused ones come after the used one */
        CHECK_EQ(ld32(buf_head(&saved) + 4, false), m.off[4] - m.off[3] - 12);
        /* the last (longest) is the new glyph's: 30 rows of 32 bytes */
        size_t last = pix_entry(&saved, 1);
        CHECK(last && ld32(buf_head(&saved) + last - 4, false) == 16 + 960);
        xenc_free(e); xc_pixcache_free(c); xc_pixcache_free(back);
        buf_free(&enc); buf_free(&saved); buf_free(&one.all);
    }
    TEST("That corrupt, unordered or oversized sets are refused") {
        struct xc_pixcache *c;
        struct buf bad = { 0 };
        CHECK_EQ(buf_append(&bad, buf_head(&file), file.len), 0);
        uint8_t *p = (uint8_t *)buf_head(&bad);
        xc_pixcache_new(&c, XC_PIXCACHE_BYTES);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len - 1), -EBADMSG);       /* truncated */
        st32(p, 45, false);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);           /* count too high */
        st32(p, 0, false);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);           /* count 0 */
        st32(p, 44, false);
        uint32_t first = ld32(p + 4, false);
        st32(p + 4, 8, false);
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);           /* a length below the least */
        st32(p + 4, first, false);
        size_t second = pix_entry(&bad, 1);
        p[second] ^= 0xff; /* the second body's first byte: now out of order or the same */
        p[8] = p[second];
        CHECK_EQ(xc_pixcache_load(c, p, bad.len), -EBADMSG);
        CHECK_EQ(xc_pixcache_loaded(c), 0);
        CHECK_EQ(xc_pixcache_load(c, buf_head(&file), file.len), 0);
        CHECK_EQ(xc_pixcache_load(c, buf_head(&file), file.len), -EBADMSG); /* once only */

        xc_pixcache_free(c);
        buf_free(&bad);
    }
    TEST("That a new code equal to a cached body's code is marked new, and decodes to the new body") {
        struct msgs one = { 0 };
        struct buf f1 = { 0 }, f1_d = { 0 }, cold = { 0 }, warm = { 0 };
        add(&one, buf_head(&m.all) + m.off[0], m.off[1] - m.off[0]); /* a glyph: its code is the first */
        CHECK(pix_session(&one, NULL, &cold, &f1, &f1_d) != (size_t)-1);
        /* The same code, filed for another body of the same length (one pixel changed). */
        size_t body = pix_entry(&f1, 0);
        ((uint8_t *)buf_head(&f1))[body + 16 + 5] ^= 0x40;
        CHECK(pix_session(&one, &f1, &warm, &again, &again_d) != (size_t)-1); /* exact: the new body */
        CHECK_EQ(pix_hits[0] + pix_hits[1], 0);
        size_t at = 0; /* the marker: after the record's head (4 bytes) and mode */
        while (at < cold.len && buf_head(&cold)[at] == buf_head(&warm)[at])
            at++;
        CHECK(warm.len == cold.len && at < cold.len && buf_head(&warm)[at] == buf_head(&cold)[at] + 8);
        buf_free(&f1); buf_free(&f1_d); buf_free(&cold); buf_free(&warm); buf_free(&one.all);
    }
    buf_free(&file); buf_free(&file_d); buf_free(&code); buf_free(&again); buf_free(&again_d); buf_free(&warm_code);
    buf_free(&m.all);
}

/* A photo-like 32-bit image w x h (smooth shading, a soft edge and grain), drawn at (x, 0). */
static void photo_image(struct msgs *m, uint16_t w, uint16_t h, uint16_t x)
{
    size_t blen = 4u * w * h;
    uint8_t *t = calloc(1, 20 + blen);
    st16(t + 8, w, false); st16(t + 10, h, false); st16(t + 12, x, false); t[17] = 24;
    for (size_t i = 0; i < (size_t)w * h; i++) {
        double u = (double)(i % w) / w, v = (double)(i / w) / h, grain = (double)(rnd() % 9) - 4;
        double r = 200 * u + 40 * sin(7 * v) + grain, g = 120 + 80 * (u * v > 0.2 ? 1 : -1) * v + grain;
        double b = 60 + 150 * (1 - v) + grain;
        uint8_t px[4] = { (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b), (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g),
                          (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r), 0 };
        memcpy(t + 20 + 4 * i, px, 4);
    }
    req(m, false, 72, 2, 24 + blen, t);
    free(t);
}

/* Peak signal-to-noise ratio of b against a (dB), over n bytes. */
static double psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
    double se = 0;
    for (size_t i = 0; i < n; i++)
        se += (double)(a[i] - b[i]) * (a[i] - b[i]);
    return se == 0 ? 99 : 10 * log10(255.0 * 255.0 * (double)n / se);
}

static void test_lossy(void)
{
    TEST("That --lossy-images codes photos as WebP, close to the original, and everything else exactly") {
        struct msgs m = { 0 };
        photo_image(&m, 160, 120, 0);
        gradient_image(&m, false, 20, 10, 1, 0);   /* small: exact */
        photo_image(&m, 160, 120, 5);              /* not coded against the first */
        gradient_image(&m, false, 20, 10, 1, 0);   /* drawn again: exact, from the recent list */
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, dec = { 0 };
        struct buf exact = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        CHECK(encode_all(e, &m, &exact));
        xenc_free(e);
        size_t exact_size = zstd_size(&exact);
        buf_free(&exact);
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_lossy(e, 75);
        xdec_new(&d, XC_REQUESTS, false);
        CHECK(encode_all(e, &m, &enc));
        CHECK_EQ(xdec_feed(d, buf_head(&enc), enc.len, &dec), (long)enc.len);
        printf("  two 160x120 photos and two small images, after zstd: %zu bytes exact, %zu lossy\n", exact_size,
               zstd_size(&enc));
        CHECK(zstd_size(&enc) * 4 < exact_size);
        CHECK_EQ(dec.len, m.all.len);
        for (int i = 0; i < m.n && dec.len == m.all.len; i++) {
            const uint8_t *a = buf_head(&m.all) + m.off[i], *b = buf_head(&dec) + m.off[i];
            size_t n = m.off[i + 1] - m.off[i];
            CHECK(!memcmp(a, b, 24)); /* the head as sent */
            if (n > 16384) {
                double q = psnr(a + 24, b + 24, n - 24);
                printf("  photo %d: %.1f dB\n", i, q);
                CHECK(q > 30 && q < 99);
            } else
                CHECK(!memcmp(a, b, n));
        }
        /* A cut or corrupt WebP is refused. */
        struct xdec *d2;
        struct buf out = { 0 };
        for (size_t at = 40; at < 200; at += 37) {
            xdec_new(&d2, XC_REQUESTS, false);
            uint8_t *p = (uint8_t *)buf_head(&enc);
            p[at] ^= 0x5a;
            long r = xdec_feed(d2, p, enc.len, &out);
            CHECK(r < 0 || (size_t)r < enc.len || out.len != m.all.len || memcmp(buf_head(&out), buf_head(&dec), out.len));
            p[at] ^= 0x5a;
            buf_clear(&out);
            xdec_free(d2);
        }
        buf_free(&out);
        xenc_free(e); xdec_free(d);
        buf_free(&enc); buf_free(&dec); buf_free(&m.all);
    }
}


/* A PutImage of w x h 32-bit pixels (depth 24 or 32), in the BIG-REQUESTS form when longer
 * than 256 KiB; kind 0 a page of anti-aliased text on white, 1 a photo-like field, 2 a
 * gradient with a toolbar, 3 noise (no codec shrinks it); fourth: every pixel's byte 3, or
 * -1 for varied ones (an ARGB visual's alpha). */
static void big_image(struct msgs *m, bool msb, uint16_t w, uint16_t h, int kind, int fourth, uint8_t depth)
{
    size_t blen = 4u * w * h, len = 24 + blen, o = len / 4 > 0xffff ? 8 : 4;
    uint8_t *p = calloc(1, len + 4);
    p[0] = 72, p[1] = 2;
    if (o == 8)
        st32(p + 4, (uint32_t)((len + 4) / 4), msb);
    else
        st16(p + 2, (uint16_t)(len / 4), msb);
    st32(p + o, 0x400001, msb), st32(p + o + 4, 0x400002, msb);
    st16(p + o + 8, w, msb), st16(p + o + 10, h, msb), st16(p + o + 12, 3, msb), st16(p + o + 14, 5, msb);
    p[o + 17] = depth;
    uint8_t *px = p + o + 20;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t r, g, b, v;
            if (kind == 0) { /* lines of glyph-like strokes, grey edges */
                uint32_t gx = x % 9, ly = y % 18, ink = ly < 12 && gx < 6 && ((x / 9 * 7 + y / 18 * 3) % 5) && ((gx + ly) % 4 < 2);
                v = ink ? 20 + (gx * 37 + ly * 11) % 90 : gx == 6 && ly < 12 ? 200 + (x * 13 + y) % 40 : 255;
                r = g = b = v;
            } else if (kind == 1) {
                double u = (double)x / w, t = (double)y / h;
                r = (uint32_t)(128 + 100 * sin(9 * u + 3 * t)) + rnd() % 4;
                g = (uint32_t)(110 + 80 * cos(5 * t * u * 6)) + rnd() % 3;
                b = (uint32_t)(60 + 150 * (1 - t)) + rnd() % 5;
            } else if (kind == 2) {
                r = y < 30 ? 0xe0 : x * 255 / w, g = y < 30 ? 0xe0 : y * 255 / h, b = y < 30 ? (x % 40 < 20 ? 0x40 : 0xe0) : 128;
            } else
                r = rnd() & 255, g = rnd() & 255, b = rnd() & 255;
            uint32_t a = fourth >= 0 ? (uint32_t)fourth : (x * 3 + y) & 255;
            st32(px + 4 * ((size_t)y * w + x), a << 24 | (r & 255) << 16 | (g & 255) << 8 | (b & 255), msb);
        }
    add(m, p, o == 8 ? len + 4 : len);
    free(p);
}

/* The encoding's size of m at a link rate, its round trip checked (0 when it fails). */
static size_t rate_trip(bool msb, const struct msgs *m, uint64_t rate, size_t chunk)
{
    struct xenc *e; struct xdec *d;
    struct buf enc = { 0 }, dec = { 0 }, pend = { 0 };
    bool ok = xenc_new(&e, XC_REQUESTS, msb) == 0 && xdec_new(&d, XC_REQUESTS, msb) == 0;
    if (ok)
        xenc_set_link_rate(e, rate);
    for (int i = 0; ok && i < m->n; i++)
        ok = xenc_message(e, buf_head(&m->all) + m->off[i], m->off[i + 1] - m->off[i], &enc) == 0;
    for (size_t at = 0; ok && at < enc.len;) {
        size_t n = chunk && chunk < enc.len - at ? chunk : enc.len - at;
        CHECK_EQ(buf_append(&pend, buf_head(&enc) + at, n), 0);
        at += n;
        long used = xdec_feed(d, buf_head(&pend), pend.len, &dec);
        if (used < 0) ok = false;
        else buf_consume(&pend, (size_t)used);
    }
    ok = ok && pend.len == 0 && dec.len == m->all.len && !memcmp(buf_head(&dec), buf_head(&m->all), dec.len);
    size_t size = ok ? zstd_size(&enc) : 0;
    xenc_free(e); xdec_free(d);
    buf_free(&enc); buf_free(&dec); buf_free(&pend);
    return size;
}

static void test_bigimg(void)
{
    TEST("That large images of every kind round-trip exactly at every link rate, in both byte orders") {
        static const uint64_t rates[] = { 0, 4000, 32000, 200000, 2000000, 1000000000 };
        for (int msb = 0; msb < 2; msb++)
            for (int kind = 0; kind < 4; kind++) {
                struct msgs m = { 0 };
                big_image(&m, msb, 200, 90, kind, 0, 24);
                big_image(&m, msb, 131, 61, kind, -1, 32);   /* alpha varies: kept exactly */
                big_image(&m, msb, 300, 250, kind, 0xff, 24); /* BIG-REQUESTS, over 256 KiB */
                big_image(&m, msb, 200, 90, kind, 0, 24);     /* again: from the recent images */
                for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
                    size_t n = rate_trip(msb, &m, rates[r], r == 2 ? 4093 : 0);
                    if (!n)
                        printf("  kind %d, msb %d, rate %llu failed\n", kind, msb, (unsigned long long)rates[r]);
                    CHECK(n > 0);
                }
                buf_free(&m.all);
            }
    }
    TEST("That on a slow link a page and a photo cost at most 0.7 of the row filters' bytes after zstd, a gradient at most twice") {
        for (int kind = 0; kind < 3; kind++) {
            struct msgs m = { 0 };
            big_image(&m, false, 400, 200, kind, 0, 24);
            size_t slow = rate_trip(false, &m, 32000, 0), fast = rate_trip(false, &m, 1000000000, 0);
            printf("  kind %d, 400x200: %zu bytes at 256 kbit/s, %zu with the row filters (a fast link)\n", kind, slow, fast);
            CHECK(slow > 0 && fast > 0 && (kind == 2 ? slow <= 2 * fast : slow * 10 <= fast * 7));
            buf_free(&m.all);
        }
    }
    TEST("That an image drawn again with a small change, or scrolled, costs little more than its change") {
        for (int msb = 0; msb < 2; msb++) {
            uint16_t w = 300, h = 150;
            struct msgs base = { 0 }, m = { 0 };
            big_image(&base, msb, w, h, 1, 0, 24); /* a photo: its pixels dear */
            const uint8_t *b0 = buf_head(&base.all);
            size_t len = base.off[1], hd = 24, row = 4u * w;
            uint8_t *v = malloc(len);
            add(&m, b0, len);
            memcpy(v, b0, len); /* a caret and a selection */
            for (uint32_t y = 40; y < 60; y++)
                for (uint32_t x = 10; x < (y < 45 ? 200u : 12u); x++)
                    memset(v + hd + row * y + 4 * x + msb, 0x30 + (int)y, 3); /* not the fourth byte */
            add(&m, v, len);
            memcpy(v, b0, len); /* scrolled by 17 rows, the new rows at the bottom dark */
            memmove(v + hd, b0 + hd + 17 * row, row * (h - 17));
            for (size_t i = hd + row * (h - 17) + msb; i < len; i += 4)
                v[i] = v[i + 1] = v[i + 2] = (uint8_t)(i % 7);
            add(&m, v, len);
            free(v);
            size_t one = rate_trip(msb, &base, 32000, 0), three = rate_trip(msb, &m, 32000, 1000);
            CHECK(rate_trip(msb, &m, 0, 0) > 0 && rate_trip(msb, &m, 2000000, 0) > 0);
            printf("  a %ux%u photo: %zu bytes; with a changed copy and a scrolled one %zu (msb %d)\n", w, h, one, three, msb);
            CHECK(one > 0 && three > 0 && three < one + one / 5);
            buf_free(&base.all), buf_free(&m.all);
        }
    }
    TEST("That a corrupt or cut lossless WebP is refused, or decodes to other bytes, never past its record") {
        struct msgs m = { 0 };
        big_image(&m, false, 200, 90, 1, 0, 24);
        struct xenc *e;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        xenc_set_link_rate(e, 32000);
        CHECK(encode_all(e, &m, &enc));
        uint8_t *p = (uint8_t *)buf_head(&enc);
        for (size_t at = 12; at < enc.len; at += enc.len / 23 + 1) {
            struct xdec *d;
            xdec_new(&d, XC_REQUESTS, false);
            p[at] ^= 0x21;
            long r = xdec_feed(d, p, enc.len, &out);
            CHECK(r < 0 || (size_t)r < enc.len || out.len != m.all.len || memcmp(buf_head(&out), buf_head(&m.all), out.len));
            p[at] ^= 0x21;
            buf_clear(&out);
            xdec_free(d);
        }
        struct xdec *d;
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, p, enc.len - 1, &out), 0); /* cut short: waits, takes nothing */
        CHECK_EQ(xdec_feed(d, p, enc.len, &out), (long)enc.len);
        CHECK(out.len == m.all.len && !memcmp(buf_head(&out), buf_head(&m.all), out.len));
        xdec_free(d);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
}

int main(void)
{
    test_bigimg();
    test_budget();
    test_pixcache();
    test_lossy();
    TEST("That requests of every kind round-trip in both byte orders") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            requests_of_every_kind(&m, msb);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That requests decode fed one byte at a time") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            requests_of_every_kind(&m, msb);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 1, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 7, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That BIG-REQUESTS requests round-trip, small and large") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            big_req(&m, msb, 72, 8);
            big_req(&m, msb, 72, 28 + 8000);
            big_req(&m, msb, 72, 300000);        /* beyond a reference's size */
            big_req(&m, msb, 70, 12 + 4 + 8 * 100);
            big_req(&m, msb, 139, 64);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 4096, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That setup replies (success, failed, authenticate) cross verbatim and the rest follows") {
        for (int msb = 0; msb < 2; msb++)
            for (uint8_t st = 0; st < 3; st++) {
                struct msgs m = { 0 };
                setup_reply(&m, msb, st, st == 1 ? 600 : 20);
                reply(&m, msb, 0, 1, 0, 3);
                CHECK(round_trip(XC_SERVER, msb, &m, 0, NULL));
                CHECK(round_trip(XC_SERVER, msb, &m, 1, NULL));
                buf_free(&m.all);
            }
    }
    TEST("That replies, events of every code, GenericEvents and errors round-trip") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            setup_reply(&m, msb, 1, 100);
            reply(&m, msb, 0, 1, 0, 1);
            reply(&m, msb, 0, 2, 0, 1);
            reply(&m, msb, 8, 3, 4000, 9);
            reply(&m, msb, 8, 9, 4000, 9);
            reply(&m, msb, 8, 9, 4000, 10);
            reply(&m, msb, 8, 65535, 20, 10);
            for (int c = 2; c < 35; c++)
                event(&m, msb, (uint8_t)c, (uint16_t)(c * 3), (uint32_t)c * 1000, (int16_t)c, (int16_t)-c);
            event(&m, msb, 6 | 0x80, 7, 1, 2, 3);          /* SendEvent */
            event(&m, msb, 11, 0xabcd, 0x12345678, 4, 4);  /* KeymapNotify: no sequence number */
            uint8_t err[32] = { 0, 3 };
            st16(err + 2, 100, msb);
            st32(err + 4, 0xdeadbeef, msb);
            add(&m, err, 32);
            uint8_t ge[32 + 40] = { 35, 131 };
            st16(ge + 2, 101, msb);
            st32(ge + 4, 10, msb);
            st16(ge + 8, 6, msb);
            for (int i = 10; i < 72; i++) ge[i] = (uint8_t)i;
            add(&m, ge, sizeof ge);
            ge[40] ^= 1;
            add(&m, ge, sizeof ge);
            CHECK(round_trip(XC_SERVER, msb, &m, 0, NULL));
            CHECK(round_trip(XC_SERVER, msb, &m, 1, NULL));
            buf_free(&m.all);
        }
    }
    TEST("That malformed messages cross verbatim") {
        struct msgs m = { 0 };
        uint8_t bad[12] = { 65, 0, 9, 0 };         /* length field says 36 bytes */
        add(&m, bad, 12);
        add(&m, bad, 5);                           /* not a multiple of 4 */
        uint8_t big0[8] = { 72, 0, 0, 0, 1, 0, 0, 0 }; /* BIG length of 4 in 8 bytes */
        add(&m, big0, 8);
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, NULL));
        struct msgs s = { 0 };
        setup_reply(&s, false, 1, 8);
        uint8_t ev[40] = { 6 };                    /* an event of 40 bytes */
        add(&s, ev, 40);
        uint8_t rp[32] = { 1, 0, 0, 0, 5 };        /* a reply whose length is wrong */
        add(&s, rp, 32);
        CHECK(round_trip(XC_SERVER, false, &s, 1, NULL));
        buf_free(&m.all); buf_free(&s.all);
    }
    TEST("That repeats cost a reference and pointer motion a few bytes") {
        struct msgs m = { 0 };
        setup_reply(&m, false, 1, 8);
        for (int i = 0; i < 50; i++)
            event(&m, false, 6, (uint16_t)(100 + i), 5000u + 10u * i, (int16_t)(200 + i), (int16_t)(300 - 2 * i));
        size_t size;
        CHECK(round_trip(XC_SERVER, false, &m, 0, &size));
        CHECK(size < 20 + 50 * 12);
        struct msgs r = { 0 };
        for (int i = 0; i < 50; i++)
            req(&r, false, 43, 0, 4, NULL);
        CHECK(round_trip(XC_REQUESTS, false, &r, 0, &size));
        CHECK(size <= 4 + 49 * 2);
        buf_free(&m.all); buf_free(&r.all);
    }
    TEST("That RENDER trapezoids that move a little are coded as small differences") {
        struct msgs r = { 0 };
        for (int i = 0; i < 20; i++) {
            uint8_t t[20 + 40 * 2] = { 0 }; /* the request from byte 4 */
            for (int k = 0; k < 2; k++) { /* a thin trapezoid 3 pixels high, moving right */
                uint8_t *e = t + 20 + 40 * k;
                int32_t x = (100 + 2 * i + 7 * k) << 16, top = (50 + 3 * k) << 16, bottom = top + (3 << 16);
                int32_t v[10] = { top, bottom, x, top, x + 0x8000, bottom, x + (5 << 16), top, x + (5 << 16) + 0x8000, bottom };
                for (int f = 0; f < 10; f++)
                    st32(e + 4 * f, (uint32_t)v[f], false);
            }
            req(&r, false, 139, 10, 4 + sizeof t, t);
        }
        size_t size;
        CHECK(round_trip(XC_REQUESTS, false, &r, 0, &size));
        CHECK(size <= 20 * 56); /* mostly zero differences, which the link's coder squeezes */
        printf("  20 requests of 2 trapezoids (104 bytes each): %zu bytes\n", size);
        buf_free(&r.all);
    }
    TEST("That xclock's RENDER trapezoids of polygons round-trip as a table of vertex values") {
        struct msgs one = { 0 }, m = { 0 };
        add_hex(&one, xclock_traps_hex); /* one string: cut it into its requests */
        CHECK_EQ(one.all.len, 352);
        for (size_t at = 0; at + 4 <= one.all.len;) {
            const uint8_t *p = buf_head(&one.all) + at;
            size_t len = 4u * ld16(p + 2, false);
            add(&m, p, len);
            at += len;
        }
        buf_free(&one.all);
        CHECK_EQ(m.n, 3);
        size_t size;
        for (size_t chunk = 0; chunk < 4; chunk++)
            CHECK(round_trip(XC_REQUESTS, false, &m, chunk, chunk ? NULL : &size));
        printf("  3 Trapezoids of xclock (352 bytes): %zu bytes\n", size);
        CHECK(size <= 180); /* field deltas took 265: each vertex value is sent once a request */
        /* The same in the other byte order (the model takes values in the request's order). */
        struct msgs b = { 0 };
        traps_to_msb(&m, &b);
        CHECK(round_trip(XC_REQUESTS, true, &b, 0, NULL));
        CHECK(round_trip(XC_REQUESTS, true, &b, 5, NULL));
        buf_free(&b.all);
        buf_free(&m.all);
    }
    TEST("That xeyes' ellipses of trapezoids round-trip by recent values and mirrored edges") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, xeyes_traps_hex);
        CHECK_EQ(m.n, 4);
        size_t size, size1;
        for (size_t chunk = 0; chunk < 4; chunk++)
            CHECK(round_trip(XC_REQUESTS, false, &m, chunk, chunk ? NULL : &size));
        /* the first eye alone: sub-model 3, its slices turned from the two before (sources
         * 64 and 65, as they are), one K for both axes (flag 8), symmetric (flag 16): the
         * lower half's residuals all 0; turned from its top (flag 32): c after the first slice */
        struct msgs one = { 0 };
        add(&one, buf_head(&m.all), m.off[1]);
        struct xenc *e;
        struct buf enc = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        CHECK_EQ(xenc_message(e, buf_head(&one.all), one.all.len, &enc), 0);
        size1 = enc.len;
        const uint8_t *sub3 = memmem(buf_head(&enc), enc.len, "\x03\x40\x41", 3);
        CHECK(sub3 && (sub3[3] & ~4) == (8 | 16 | 32));
        size_t z1 = zstd_size(&enc);
        const uint8_t *lower = buf_head(&enc) + enc.len - 8 * 2; /* two residuals a slice */
        for (int k = 0; k < 16; k++)
            CHECK_EQ(lower[k], 0);
        xenc_free(e);
        buf_free(&enc); buf_free(&one.all);
        /* its first two slices alone: sub-model 2, the right edges mirrored (tag 254) */
        uint8_t two[24 + 80];
        memcpy(two, buf_head(&m.all), sizeof two);
        st16(two + 2, sizeof two / 4, false);
        xenc_new(&e, XC_REQUESTS, false);
        CHECK_EQ(xenc_message(e, two, sizeof two, &enc), 0);
        size_t mirrors = 0;
        for (size_t k = 0; k < enc.len; k++)
            mirrors += buf_head(&enc)[k] == 254;
        CHECK(mirrors >= 2);
        xenc_free(e);
        buf_free(&enc);
        printf("  4 Trapezoids of xeyes (%zu bytes): %zu bytes, the first eye %zu (%zu after zstd)\n", m.all.len, size,
               size1, z1);
        CHECK(size < m.all.len * 35 / 100); /* sub-model 2 alone: 627 */
        CHECK(size1 < 240);
        CHECK(size <= 285 && size1 <= 103);
        CHECK(z1 <= 90); /* not turned from its top: 95; nor symmetric: 104 */ /* with K of y sent and the first right p2.x from p1.x: 324 and 118 */
        struct msgs b = { 0 }; /* the other byte order */
        traps_to_msb(&m, &b);
        CHECK(round_trip(XC_REQUESTS, true, &b, 0, NULL));
        CHECK(round_trip(XC_REQUESTS, true, &b, 3, NULL));
        buf_free(&b.all);
        buf_free(&m.all);
    }
    TEST("That trapezoids moved, mirrored or turned from recent bodies round-trip as such (sub-model 3)") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            int32_t v[10 * 12];
            ellipse_traps(v, 8, 60.0, 50.0, 30.0, 40.0, 0.4);
            traps_req(&m, msb, v, 80);
            for (size_t i = 0; i < 80; i++) /* moved by (37.25, -3.5): exactly */
                v[i] += (int32_t)(trap_is_y(i) ? -3.5 * 65536 : 37.25 * 65536);
            traps_req(&m, msb, v, 80);
            int32_t w[80];
            ellipse_traps(v, 8, 60.0, 50.0, 30.0, 40.0, 0.4);
            mirror_traps(w, v, 8, 1); /* in x about 200 */
            traps_req(&m, msb, w, 80);
            mirror_traps(w, v, 8, 2); /* in y about 100 */
            traps_req(&m, msb, w, 80);
            for (int k = 0; k < 12; k++) { /* a shape of 3 trapezoids turned 6 degrees at a time */
                for (size_t j = 0; j < 30; j++)
                    v[j] = (int32_t)lround(65536 * ((trap_is_y(j) ? 90.0 : 80.0) + (40.0 + (double)(j % 7)) *
                                                    cos(k * 0.10471975511965977 + (double)j)));
                traps_req(&m, msb, v, 30);
            }
            size_t size;
            for (size_t chunk = 0; chunk < 8; chunk += 7)
                CHECK(round_trip(XC_REQUESTS, msb, &m, chunk, &size));
            /* the code: moved (source 0, no r2, as it is), mirrored in x and in y, turned (the
             * sources and refl bytes after the sub-model byte) */
            struct xenc *e;
            struct buf enc = { 0 }, one = { 0 }, four = { 0 };
            xenc_new(&e, XC_REQUESTS, msb);
            for (int i = 0; i < m.n; i++) {
                CHECK_EQ(xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc), 0);
                if (i == 0)
                    CHECK_EQ(buf_append(&one, buf_head(&enc), enc.len), 0);
                if (i == 3)
                    CHECK_EQ(buf_append(&four, buf_head(&enc), enc.len), 0);
            }
            int seen[4] = { 0 };
            for (size_t k = 0; k + 4 <= enc.len; k++) {
                const uint8_t *c = buf_head(&enc) + k;
                if (c[0] == 3 && c[1] < 64 && c[2] == 0xff && (c[3] & ~7) == 8 && (c[3] & 3) < 3)
                    seen[c[3] & 3]++; /* refl, flag 4: repeats exact, flag 8: K of y paired */
                if (c[0] == 3 && c[1] < 5 && c[2] == 2 * c[1] + 1 && (c[3] & ~4) == 8)
                    seen[3]++;
            }
            /* An ellipse turned half a turn is itself: its mirror in y is its mirror in x
             * moved, and the search takes the first candidate that predicts every value. */
            CHECK(seen[0] >= 1 && seen[1] >= 1 && seen[0] + seen[2] >= 2 && seen[3] >= 6);
            size_t z1 = zstd_size(&one), z4 = zstd_size(&four);
            printf("  a skewed ellipse of 8 trapezoids, moved, mirrored twice, 12 turned shapes (%s, %zu bytes): "
                   "%zu bytes; after zstd the ellipse %zu, with its copies %zu\n", msb ? "MSB" : "LSB", m.all.len,
                   size, z1, z4);
            CHECK(z4 < 2 * z1); /* the three copies cost less than the ellipse */
            xenc_free(e);
            buf_free(&enc); buf_free(&one); buf_free(&four);
            buf_free(&m.all);
        }
    }
    TEST("That requests of a known extension's name cost its index (NAMED), and others round-trip") {
        /* xeyes' QueryExtensions as it asks them (and XInput's GetExtensionVersion, extension
         * 130 minor 1, the same layout), then a name not in the table, a name with padding
         * that is not zero, a body longer than the name needs, a byte 1 that is not zero */
        static const char *const names[] = { "BIG-REQUESTS", "XKEYBOARD", "RENDER", "SHAPE",
                                             "Generic Event Extension", "XInputExtension", "XFIXES",
                                             "DAMAGE", "Present", "NOT-AN-EXTENSION" };
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
                uint8_t q[8 + 32] = { 0 };
                size_t n = strlen(names[i]);
                st16(q, (uint16_t)n, msb);
                memcpy(q + 4, names[i], n);
                req(&m, msb, 98, 0, 8 + (n + 3) / 4 * 4, q);
                if (i == 5)
                    req(&m, msb, 130, 1, 8 + (n + 3) / 4 * 4, q);
            }
            size_t size10;
            struct msgs known = { 0 };
            for (int i = 0; i < 10; i++)
                add(&known, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i]);
            CHECK(round_trip(XC_REQUESTS, msb, &known, 0, &size10));
            printf("  9 QueryExtension and a GetExtensionVersion of known names (%zu bytes): %zu bytes\n",
                   known.all.len, size10);
            CHECK_EQ(size10, 9 * 3 + 4); /* byte0, NAMED, [minor], index (the names: 179 + 24) */
            uint8_t odd[8 + 8] = { 0 };
            st16(odd, 6, msb);
            memcpy(odd + 4, "RENDER\0\x01", 8); /* padding not zero */
            req(&m, msb, 98, 0, sizeof odd + 4, odd);
            st16(odd, 5, msb); /* RENDE: not a name of the table */
            req(&m, msb, 98, 0, sizeof odd + 4, odd);
            st16(odd, 2, msb); /* a body longer than the name needs */
            req(&m, msb, 98, 0, sizeof odd + 4, odd);
            st16(odd, 6, msb);
            memcpy(odd + 4, "RENDER\0\0", 8);
            req(&m, msb, 98, 1, sizeof odd + 4, odd); /* QueryExtension's byte 1 not zero */
            req(&m, msb, 16, 0, sizeof odd + 4, odd); /* InternAtom "RENDER": not NAMED */
            for (size_t chunk = 0; chunk < 3; chunk++)
                CHECK(round_trip(XC_REQUESTS, msb, &m, chunk, NULL));
            buf_free(&m.all);
            buf_free(&known.all);
        }
        /* NAMED records: QueryExtension RENDER (index 11), then GetExtensionVersion of
         * extension 130 (minor 1) XInputExtension (19) */
        uint8_t rec[] = { 98, 0x80, 11, 130, 0x80, 1, 19 };
        struct xdec *d;
        struct buf out = { 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK(out.len == 16 + 24 && !memcmp(buf_head(&out), "\x62\0\x04\0\x06\0\0\0RENDER\0\0", 16) &&
              !memcmp(buf_head(&out) + 16, "\x82\x01\x06\0\x0f\0\0\0XInputExtension\0", 24));
        xdec_free(d);
        cut_short_waits(rec, 3);
        cut_short_waits(rec + 3, 4);
        struct flip bad[] = {
            { 2, 48 },   /* no such name */
            { 0, 16 },   /* a core request but QueryExtension */
            { 1, 0x81 }, /* NAMED with another bit */
        };
        refused_each(rec, sizeof rec, bad, sizeof bad / sizeof *bad, false);
        xdec_new(&d, XC_SERVER, false); /* never on server messages */
        xdec_setup_seen(d);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
    TEST("That corrupt or cut trapezoids of sub-model 3 are refused or awaited") {
        /* One trapezoid, no reference, all head words zero: sources this body 1 back (not
         * there: every value from its base field, 0) and none, K and c 0, ten residuals 0. */
        uint8_t rec[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 64, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        struct xdec *d;
        struct buf out = { 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK_EQ(out.len, 64);
        /* then moved from it, recent body 0: residual 5 on value 0 (zz 10) */
        uint8_t moved[sizeof rec];
        memcpy(moved, rec, sizeof rec);
        moved[8] = 0, moved[15] = 10;
        CHECK_EQ(xdec_feed(d, moved, sizeof moved, &out), (long)sizeof moved);
        CHECK_EQ(out.len, 128);
        CHECK_EQ(ld32(buf_head(&out) + 64 + 24, false), 5);
        moved[8] = 1; /* recent body 1 is the first: the second decoded as MODEL too */
        CHECK_EQ(xdec_feed(d, moved, sizeof moved, &out), (long)sizeof moved);
        /* repeats exact (flag 4): the values the sources repeat have no residual. Recent body
         * 1 is ten 5s (the first record's zeros repeated the first value): values 1-9 repeat
         * value 0, one residual (K 0: 7) */
        uint8_t exact[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 1, 255, 4, 0, 0, 0, 0, 14 };
        CHECK_EQ(xdec_feed(d, exact, sizeof exact, &out), (long)sizeof exact);
        CHECK_EQ(out.len, 256);
        CHECK_EQ(ld32(buf_head(&out) + 192 + 24, false), 7);
        CHECK_EQ(ld32(buf_head(&out) + 192 + 24 + 36, false), 7);
        /* the same with K of y paired (flag 8): K of x only, then c */
        uint8_t paired[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 1, 255, 4 | 8, 0, 0, 0, 14 };
        CHECK_EQ(xdec_feed(d, paired, sizeof paired, &out), (long)sizeof paired);
        CHECK_EQ(out.len, 320);
        CHECK(!memcmp(buf_head(&out) + 256, buf_head(&out) + 192, 64));
        moved[8] = 5; /* no such recent body yet */
        CHECK_EQ(xdec_feed(d, moved, sizeof moved, &out), -EBADMSG);
        xdec_free(d);
        cut_short_waits(rec, sizeof rec);
        struct flip bad[] = {
            { 7, 4 },    /* no such sub-model */
            { 8, 255 },  /* r1 none */
            { 8, 0 },    /* recent body 0 of none */
            { 8, 72 },   /* neither a recent body nor this one */
            { 9, 72 },
            { 10, 3 },   /* no such reflection */
            { 10, 1 },   /* a reflection of this body */
            { 10, 32 },  /* from the top of a body not its own source */
            { 10, 64 },  /* an unknown flag */
        };
        refused_each(rec, sizeof rec, bad, sizeof bad / sizeof *bad, true);
        /* A recent body of another length; a K and a residual beyond 32 bits. */
        uint8_t longer[] = { 138, 0x07, 10, 26, 0, 0, 2, 3, 0, 255, 0, 0, 0, 0, 0 };
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK_EQ(xdec_feed(d, longer, sizeof longer, &out), -EBADMSG);
        xdec_free(d);
        uint8_t wide_k[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 64, 255, 0, 0xff, 0xff, 0xff, 0xff, 0x7f };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, wide_k, sizeof wide_k, &out), -EBADMSG);
        xdec_free(d);
        uint8_t wide_r[] = { 138, 0x07, 10, 16, 0, 0, 2, 3, 64, 255, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x7f };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, wide_r, sizeof wide_r, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
    TEST("That corrupt or cut trapezoid tables are refused or awaited") {
        /* Trapezoids of one trapezoid, no reference, all head words zero: a table code of
         * one new value 0 and nine references to it; then the same broken. */
        uint8_t rec[] = { 138, 0x07, 10, 16, 0, 0, 2, 1, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        struct xdec *d;
        struct buf out = { 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, rec, sizeof rec, &out), (long)sizeof rec);
        CHECK_EQ(out.len, 64);
        CHECK_EQ(buf_head(&out)[1], 10);
        xdec_free(d);
        cut_short_waits(rec, sizeof rec);
        struct { size_t at; uint8_t v; } bad[] = {
            { 7, 3 },    /* no such sub-model */
            { 8, 0 },    /* index 0 of an empty table */
            { 10, 1 },   /* index 1 of a table of one */
            { 10, 254 }, /* neither an index nor a new value */
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            uint8_t c[sizeof rec];
            memcpy(c, rec, sizeof rec);
            c[bad[i].at] = bad[i].v;
            xdec_new(&d, XC_REQUESTS, false);
            buf_clear(&out);
            CHECK_EQ(xdec_feed(d, c, sizeof c, &out), -EBADMSG);
            CHECK_EQ(out.len, 0);
            xdec_free(d);
        }
        /* Sub-model 2: the same code decodes (index 0 is the newest value); a mirrored or
         * parallel edge only where a right p2.x is (value 8 of 10). */
        uint8_t rec2[sizeof rec];
        memcpy(rec2, rec, sizeof rec);
        rec2[7] = 2;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, rec2, sizeof rec2, &out), (long)sizeof rec2);
        CHECK_EQ(out.len, 64);
        xdec_free(d);
        uint8_t mirror[] = { 138, 0x07, 10, 16, 0, 0, 2, 2, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 254, 0, 0 };
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, mirror, sizeof mirror, &out), (long)sizeof mirror);
        xdec_free(d);
        uint8_t corner[sizeof mirror]; /* the mirror's place a corner: 0 + 0 - 0, then 0 */
        memcpy(corner, mirror, sizeof corner);
        corner[17] = 252;
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, corner, sizeof corner, &out), (long)sizeof corner);
        xdec_free(d);
        corner[7] = 1; /* not in sub-model 1 */
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, corner, sizeof corner, &out), -EBADMSG);
        xdec_free(d);
        for (size_t at = 8; at < 17; at++) {
            if (at == 9)
                continue; /* the first value's varint */
            uint8_t c[sizeof mirror];
            memcpy(c, mirror, sizeof c);
            c[17] = 0; /* the mirror's place now an index, and a mirror before it */
            c[at] = at == 8 ? 253 : 254;
            if (at == 8)
                c[9] = 0; /* value 0: a parallel with no varint after it */
            xdec_new(&d, XC_REQUESTS, false);
            buf_clear(&out);
            CHECK_EQ(xdec_feed(d, c, sizeof c, &out), -EBADMSG);
            xdec_free(d);
        }
        /* A new value beyond 32 bits. */
        uint8_t wide[] = { 138, 0x07, 10, 16, 0, 0, 2, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
                           0, 0, 0, 0, 0, 0, 0, 0, 0 };
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, wide, sizeof wide, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
    TEST("That QueryFont replies, the real one of \"fixed\" and large glyph tables, round-trip and shrink") {
        struct buf all = { 0 }, enc = { 0 };
        for (size_t i = 0; i + 1 < sizeof fixed_font_reply_hex; i += 2) {
            unsigned v;
            sscanf(fixed_font_reply_hex + i, "%2x", &v);
            uint8_t b = (uint8_t)v;
            CHECK_EQ(buf_append(&all, &b, 1), 0);
        }
        CHECK_EQ(all.len, 3316);
        encode_server(false, &all, &enc);
        CHECK(decode_server(false, &enc, 0, &all));
        CHECK(decode_server(false, &enc, 1, &all));
        CHECK(enc.len < all.len / 2);
        printf("  the QueryFont reply of \"fixed\" (%zu bytes): %zu bytes\n", all.len, enc.len);
        for (int msb = 0; msb < 2; msb++) {
            buf_clear(&all); buf_clear(&enc);
            font_reply(&all, msb, 7, 30, 65536);  /* a unicode font's table */
            font_reply(&all, msb, 8, 0, 20);      /* small: no model (a body of 268 bytes is) */
            font_reply(&all, msb, 9, 2, 17);
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 4093, &all));
            CHECK(enc.len < all.len / 6);
            printf("  glyph tables (%zu bytes, %s): %zu bytes\n", all.len, msb ? "MSB" : "LSB", enc.len);
        }
        buf_free(&all); buf_free(&enc);
    }
    TEST("That a font table coded against an earlier one (its bold, the same font again) round-trips and costs little") {
        for (int msb = 0; msb < 2; msb++) {
            struct buf all = { 0 }, enc = { 0 }, one = { 0 };
            font_reply(&all, msb, 7, 3, 65536);
            encode_server(msb, &all, &one); /* the medium alone */
            size_t tab = all.len;
            uint8_t *bold = malloc(tab);
            memcpy(bold, buf_head(&all), tab);
            CHECK_EQ(buf_append(&all, bold, tab), 0); /* queried again */
            for (size_t o = 60 + 24; o + 12 <= tab; o += 12) /* the bold: one pixel wider ink */
                if (ld16(bold + o + 4, msb))
                    st16(bold + o + 2, (uint16_t)(ld16(bold + o + 2, msb) + 1), msb);
            CHECK_EQ(buf_append(&all, bold, tab), 0);
            font_reply(&all, msb, 9, 3, 65536); /* another font of the same size: none fits */
            free(bold);
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 65519, &all));
            size_t z1 = zstd_size(&one), z4 = zstd_size(&enc); /* what the link sends */
            CHECK(z4 < 2 * z1 + z1 / 4);
            printf("  a glyph table (%zu bytes, %s): %zu bytes after zstd; again, its bold and another: %zu bytes\n",
                   tab, msb ? "MSB" : "LSB", z1, z4);
            buf_free(&all); buf_free(&enc); buf_free(&one);
        }
    }
    TEST("That a CJK font's table, its ideographs those of JIS X 0208 (by iconv), round-trips and its bitmap costs little") {
        iconv_t cd = iconv_open("UTF-32LE", "EUC-JP");
        CHECK(cd != (iconv_t)-1);
        for (int msb = 0; msb < 2 && cd != (iconv_t)-1; msb++) {
            struct buf all = { 0 }, enc = { 0 };
            font_reply(&all, msb, 7, 1, 65536);
            uint8_t *p = (uint8_t *)buf_head(&all), *ci = p + 60 + 8;
            st16(p + 40, 0, msb); st16(p + 42, 255, msb); p[48] = 0; p[49] = 255; /* 256 x 256 */
            memset(ci, 0, 12 * 65536); /* no glyph but... */
            unsigned n = 0;
            for (unsigned b1 = 0xa1; b1 < 0xff; b1++)
                for (unsigned b2 = 0xa1; b2 < 0xff; b2++) {
                    char in[2] = { (char)b1, (char)b2 }, *ip = in;
                    uint32_t u = 0;
                    char *op = (char *)&u;
                    size_t il = 2, ol = 4;
                    if (iconv(cd, &ip, &il, &op, &ol) == (size_t)-1 || u < 0x4e00 || u > 0x9fff)
                        continue;
                    uint8_t *g = ci + 12 * (size_t)u; /* ... JIS X 0208's ideographs, one shape */
                    st16(g + 2, 11, msb); st16(g + 4, 12, msb); st16(g + 6, 10, msb); st16(g + 8, 1, msb);
                    n++;
                }
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 1000, &all));
            size_t z = zstd_size(&enc);
            buf_clear(&enc);
            memset(ci + 12 * 0x4e00, 0, 12); /* one ideograph fewer: the bitmap flips one bit */
            ci[12 * 0x4e01 + 2] = 11; ci[12 * 0x4e01 + 4 + msb] = 12;
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(n > 6000);
            CHECK(z < 600); /* the bitmap alone would take over 2000 */
            CHECK(zstd_size(&enc) < z + 40);
            printf("  a CJK font table (%u ideographs, %s): %zu bytes after zstd\n", n, msb ? "MSB" : "LSB", z);
            buf_free(&all); buf_free(&enc);
        }
        if (cd != (iconv_t)-1)
            iconv_close(cd);
    }
    TEST("That image replies of few colours round-trip as palettes of 1, 2 and 4 bits") {
        const unsigned colours[] = { 1, 2, 3, 4, 5, 16, 17, 200 };
        for (int msb = 0; msb < 2; msb++)
            for (size_t c = 0; c < sizeof colours / sizeof *colours; c++) {
                struct buf all = { 0 }, enc = { 0 };
                uint32_t npx = 360000 + (uint32_t)c; /* the last index byte partly used */
                image_reply(&all, msb, 3, npx, colours[c]);
                image_reply(&all, msb, 4, 65 + (uint32_t)c, colours[c]);
                encode_server(msb, &all, &enc);
                CHECK(decode_server(msb, &enc, 0, &all));
                CHECK(decode_server(msb, &enc, 777, &all));
                if (colours[c] <= 16) {
                    unsigned bits = colours[c] <= 2 ? 1 : colours[c] <= 4 ? 2 : 4;
                    CHECK(enc.len <= (size_t)npx * bits / 8 + 200);
                }
                buf_free(&all); buf_free(&enc);
            }
    }
    TEST("That corrupt or cut glyph tables and palettes are refused or awaited") {
        struct buf all = { 0 }, enc = { 0 };
        image_reply(&all, false, 3, 1001, 3); /* 2-bit indices, 1001 of them */
        encode_server(false, &all, &enc);
        uint8_t *c = malloc(enc.len);
        memcpy(c, buf_head(&enc), enc.len);
        c[enc.len - 1] |= 1; /* an unused bit of the last index byte */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        memcpy(c, buf_head(&enc), enc.len);
        c[enc.len - 251] = 0xff; /* index 3 of a palette of 3 */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        for (size_t cut = 0; cut < enc.len; cut += 7) /* cut short: the setup record (10 bytes) alone */
            CHECK_EQ(decode_server_result(false, buf_head(&enc), cut), cut < 10 ? 0 : 10);
        free(c);
        buf_clear(&all); buf_clear(&enc);
        font_reply(&all, false, 3, 0, 100);
        memset((uint8_t *)buf_head(&all) + 60, 0, 1200); /* every glyph absent: a bitmap of zeros */
        encode_server(false, &all, &enc);
        CHECK(decode_server(false, &enc, 0, &all));
        c = malloc(enc.len);
        memcpy(c, buf_head(&enc), enc.len);
        CHECK_EQ(c[enc.len - 1], 0);
        c[enc.len - 1] = 0x10; /* an unused bit of the bitmap (100 glyphs) */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        c[enc.len - 1] = 0x08; /* a glyph present, but the code ends before its index */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        c[enc.len - 1] = 0;
        c[enc.len - 14] = 4; /* a character set beyond the three */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        c[enc.len - 14] = 0;
        c[enc.len - 16] = 1; /* a reference table where there is none */
        CHECK_EQ(decode_server_result(false, c, enc.len), -EBADMSG);
        free(c);
        buf_clear(&all); buf_clear(&enc);
        font_reply(&all, false, 3, 2, 300);
        encode_server(false, &all, &enc);
        CHECK(decode_server(false, &enc, 0, &all));
        c = malloc(enc.len);
        int refused = 0;
        for (int t = 0; t < 3000; t++) {
            memcpy(c, buf_head(&enc), enc.len);
            c[8 + rnd() % (enc.len - 8)] ^= (uint8_t)(1 + rnd() % 255);
            refused += decode_server_result(false, c, enc.len) < 0;
        }
        CHECK(refused > 0);
        free(c);
        buf_free(&all); buf_free(&enc);
    }
    TEST("That ListFonts replies (real names, a font directory, edge cases) round-trip and shrink") {
        for (int msb = 0; msb < 2; msb++) {
            struct buf all = { 0 }, enc = { 0 };
            size_t nreal = sizeof real_font_names / sizeof *real_font_names;
            names_reply(&all, msb, 4, real_font_names, nreal);
            size_t one = all.len;
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 5, &all));
            CHECK(enc.len < one * 2 / 3);
            printf("  %zu real font names (%zu bytes, %s): %zu bytes\n", nreal, one, msb ? "MSB" : "LSB", enc.len);
            char **syn;
            size_t nsyn = synth_font_names(&syn);
            buf_clear(&all); buf_clear(&enc);
            names_reply(&all, msb, 5, (const char *const *)syn, nsyn);
            one = all.len;
            for (size_t k = 8; k <= sizeof edge_font_names / sizeof *edge_font_names; k++)
                names_reply(&all, msb, (uint16_t)(6 + k), edge_font_names, k); /* every padding */
            names_reply(&all, msb, 30, real_font_names + 3, 7);                /* too few: not the model */
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            CHECK(decode_server(msb, &enc, 333, &all));
            printf("  a font directory and edge cases (%zu bytes, %s): %zu bytes\n", all.len, msb ? "MSB" : "LSB", enc.len);
            buf_clear(&all); buf_clear(&enc);
            names_reply(&all, msb, 5, (const char *const *)syn, nsyn);
            encode_server(msb, &all, &enc);
            CHECK(enc.len < one / 15);
            /* 1500 families, each again after 1499 others: beyond what the sender searches */
            char **many = calloc(3000, sizeof *many);
            for (size_t i = 0; i < 3000; i++) {
                many[i] = malloc(96);
                snprintf(many[i], 96, "-f%zu-fam%zu-medium-r-normal--%zu-0-75-75-c-60-iso8859-1", i % 7, i % 1500, i % 3);
            }
            buf_clear(&all); buf_clear(&enc);
            names_reply(&all, msb, 6, (const char *const *)many, 3000);
            encode_server(msb, &all, &enc);
            CHECK(decode_server(msb, &enc, 0, &all));
            for (size_t i = 0; i < 3000; i++)
                free(many[i]);
            free(many);
            for (size_t i = 0; i < nsyn; i++)
                free(syn[i]);
            free(syn);
            buf_free(&all); buf_free(&enc);
        }
    }
    TEST("That corrupt or cut font name lists are refused or awaited, never overrun") {
        struct buf all = { 0 }, enc = { 0 };
        names_reply(&all, false, 4, real_font_names, sizeof real_font_names / sizeof *real_font_names);
        encode_server(false, &all, &enc);
        uint8_t *c = malloc(enc.len);
        for (size_t cut = 0; cut < enc.len; cut += 5)
            CHECK_EQ(decode_server_result(false, buf_head(&enc), cut), cut < 10 ? 0 : 10);
        int refused = 0;
        for (int t = 0; t < 5000; t++) {
            memcpy(c, buf_head(&enc), enc.len);
            c[10 + rnd() % (enc.len - 10)] ^= (uint8_t)(1 + rnd() % 255);
            if (t % 2)
                c[10 + rnd() % (enc.len - 10)] = (uint8_t)rnd();
            refused += decode_server_result(false, c, enc.len) < 0;
        }
        CHECK(refused > 2500);
        free(c);
        buf_free(&all); buf_free(&enc);
    }
    TEST("That PutImage of few colours round-trips as palettes, whatever the depth") {
        /* depth, bytes per row, rows, colours; rows of 24-bit pixels of 10 and 13 pixels,
         * 8-bit rows with padding, 1-bit bitmaps */
        const struct { uint8_t depth; uint16_t stride, h; unsigned colours; } im[] = {
            { 24, 40, 10, 2 }, { 24, 52, 7, 3 }, { 24, 40, 10, 16 }, { 24, 40, 10, 40 },
            { 8, 16, 9, 5 }, { 1, 4, 15, 2 }, { 16, 6, 5, 4 },
        };
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            size_t raw = 0;
            for (size_t i = 0; i < sizeof im / sizeof *im; i++)
                for (int rep = 0; rep < 3; rep++) {
                    size_t blen = (size_t)im[i].stride * im[i].h;
                    uint8_t *t = calloc(1, 20 + blen);
                    st32(t, 0x200002, msb); st32(t + 4, 0x200003, msb);
                    st16(t + 8, (uint16_t)(im[i].stride * 8 / (im[i].depth > 16 ? 32 : im[i].depth > 8 ? 16 : 8)), msb);
                    st16(t + 10, im[i].h, msb);
                    st16(t + 12, (uint16_t)(rnd() % 500), msb); st16(t + 14, (uint16_t)(rnd() % 500), msb);
                    t[17] = im[i].depth;
                    unsigned psz = im[i].depth > 16 ? 4 : im[i].depth > 8 ? 2 : 1;
                    for (size_t k = 0; k < blen; k += psz) {
                        uint32_t c = rnd() % im[i].colours * 0x01030507u;
                        memcpy(t + 20 + k, &c, psz);
                    }
                    req(&m, msb, 72, im[i].depth == 1 ? 0 : 2, 24 + blen, t);
                    raw += 24 + blen;
                    free(t);
                }
            size_t size;
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, &size));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 5, NULL));
            CHECK(size < raw / 2);
            printf("  %d PutImage requests of few colours (%zu bytes): %zu bytes\n", m.n, raw, size);
            buf_free(&m.all);
        }
        /* A palette index beyond the palette is refused: two colours, then index 1 made 2. */
        struct msgs m = { 0 };
        uint8_t t[20 + 40 * 10] = { 0 };
        st16(t + 8, 10, false); st16(t + 10, 10, false); t[17] = 24;
        t[20 + 4] = 0xff; /* pixel 1 differs: palette { 0, 0xff } */
        req(&m, false, 72, 2, sizeof t + 4, t);
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        CHECK_EQ(xenc_message(e, buf_head(&m.all), m.all.len, &enc), 0);
        uint8_t *c = (uint8_t *)buf_head(&enc);
        CHECK_EQ(c[enc.len - 30], 3); /* the palette mark: 3, n-1 = 1, 2 pixels, 10 rows of 2 bytes */
        CHECK_EQ(c[enc.len - 20], 0x40); /* row 0: pixels 0 and 1 */
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, c, enc.len, &out), (long)enc.len);
        xdec_free(d);
        c[enc.len - 1] = 0x01; /* an unused bit of the last row */
        xdec_new(&d, XC_REQUESTS, false);
        buf_clear(&out);
        CHECK_EQ(xdec_feed(d, c, enc.len, &out), -EBADMSG);
        xdec_free(d);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
    TEST("That RENDER AddGlyphs and AddTraps round-trip, subpixel glyphs and rows of traps shrink") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            if (!msb) add_hex(&m, addglyphs_argb_hex);
            add_glyphs(&m, msb, 40, 3, 7, 11, 4);  /* subpixel glyphs */
            add_glyphs(&m, msb, 43, 2, 5, 9, 1);   /* A8 glyphs: another model's */
            add_glyphs(&m, msb, 45, 1, 300, 200, 4); /* BIG-REQUESTS-sized, but not BIG here */
            uint8_t junk[24] = { 0 };              /* a count beyond the body: no model */
            st32(junk + 4, 1000, msb);
            req(&m, msb, 138, 20, 4 + sizeof junk, junk);
            uint8_t t[8 + 24 * 100] = { 0 };       /* AddTraps: 100 traps stepping evenly */
            st32(t, 0x200020, msb);
            for (int i = 0; i < 100; i++) {
                int32_t v[6] = { i * 65536, (10 + i) * 65536, 10 * i * 65536, (10 - i) * 65536, (20 - i) * 65536, (10 * i + 10) * 65536 };
                for (int f = 0; f < 6; f++) st32(t + 8 + 24 * i + 4 * f, (uint32_t)v[f], msb);
            }
            req(&m, msb, 138, 32, 4 + sizeof t, t);
            t[8 + 24 * 50] ^= 0x40;                 /* one trap off: still whole */
            req(&m, msb, 138, 32, 4 + sizeof t, t);
            size_t size;
            CHECK(round_trip(XC_REQUESTS, msb, &m, 0, &size));
            CHECK(round_trip(XC_REQUESTS, msb, &m, 3, NULL));
            printf("  AddGlyphs and AddTraps (%zu bytes, %s): %zu bytes\n", m.all.len, msb ? "MSB" : "LSB", size);
            buf_free(&m.all);
        }
        struct msgs m = { 0 };
        uint8_t t[8 + 24 * 100] = { 0 };
        for (int i = 0; i < 100; i++)
            for (int f = 0; f < 6; f++) st32(t + 8 + 24 * i + 4 * f, (uint32_t)((i * (f + 1)) << 16), false);
        req(&m, false, 138, 32, 4 + sizeof t, t);
        size_t size;
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, &size));
        CHECK(size < 1300); /* a byte a field: zeros but for the first trap */
        buf_free(&m.all);
    }
    TEST("That real glyphs, icons and masks round-trip through the pixel coder and shrink well") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, real_a8_hex);
        add_hex_msgs(&m, real_argb_hex);
        add_hex_msgs(&m, real_pi32_hex);
        add_hex_msgs(&m, real_pi8_hex);
        size_t size = encoded_size(XC_REQUESTS, false, &m);
        CHECK(round_trip(XC_REQUESTS, false, &m, 1, NULL));
        CHECK(round_trip(XC_REQUESTS, false, &m, 7, NULL));
        CHECK(size < m.all.len * 45 / 100);
        printf("  %d real glyphs and images (%zu bytes): %zu bytes\n", m.n, m.all.len, size);
        buf_free(&m.all);
        /* Glyphs of every layout and byte order, a glyph of no pixels, a count of zero, and
         * a body the GLYPHINFOs do not add up to (no model). */
        for (int msb = 0; msb < 2; msb++) {
            struct msgs g = { 0 };
            add_glyphs(&g, msb, 7, 4, 9, 12, 1);
            add_glyphs(&g, msb, 11, 2, 1, 5, 4);
            add_glyphs(&g, msb, 13, 3, 6, 7, 4);
            add_glyphs(&g, msb, 16, 1, 0, 0, 1);
            add_glyphs(&g, msb, 17, 0, 0, 0, 1);
            uint8_t bad[8 + 16 + 12] = { 0 };
            st32(bad + 4, 1, msb);
            st16(bad + 12, 3, msb); st16(bad + 14, 5, msb); /* 3 x 5: 20 or 60 bytes, not 12 */
            req(&g, msb, 138, 20, 4 + sizeof bad, bad);
            CHECK(round_trip(XC_REQUESTS, msb, &g, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &g, 3, NULL));
            buf_free(&g.all);
        }
    }
    TEST("That bitmaps (PutImage of depth 1: icons, masks) round-trip through the pixel coder's bits and shrink") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, real_bitmaps_hex);
        size_t size = encoded_size(XC_REQUESTS, false, &m);
        CHECK(round_trip(XC_REQUESTS, false, &m, 1, NULL));
        CHECK(round_trip(XC_REQUESTS, false, &m, 7, NULL));
        CHECK(size < m.all.len * 40 / 100);
        printf("  %d real bitmaps (%zu bytes): %zu bytes\n", m.n, m.all.len, size);
        buf_free(&m.all);
        /* Both byte orders; random bits (padding included), a bitmap of one row, one too
         * small (64 bytes is the least) and one too large for the bits (16 KiB the most). */
        const struct { uint16_t stride, h; } bm[] = { { 8, 16 }, { 4, 17 }, { 64, 1 }, { 4, 15 }, { 128, 129 } };
        for (int msb = 0; msb < 2; msb++) {
            struct msgs g = { 0 };
            for (size_t i = 0; i < sizeof bm / sizeof *bm; i++) {
                size_t blen = (size_t)bm[i].stride * bm[i].h;
                uint8_t *t = calloc(1, 20 + blen);
                st32(t, 0x200002, msb); st32(t + 4, 0x200003, msb);
                st16(t + 8, (uint16_t)(bm[i].stride * 8 - 3), msb); st16(t + 10, bm[i].h, msb);
                t[17] = 1;
                for (size_t k = 0; k < blen; k++)
                    t[20 + k] = (uint8_t)(k % 7 < 3 ? rnd() : k % 5 ? 0xff : 0);
                req(&g, msb, 72, (uint8_t)(i & 1), 24 + blen, t);
                free(t);
            }
            CHECK(round_trip(XC_REQUESTS, msb, &g, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &g, 5, NULL));
            buf_free(&g.all);
        }
    }
    TEST("That a large glyph of few changes still sends a code of the least size a decoder takes") {
        /* One A8 glyph of 256 x 256 (64 KiB): 17 values in its first row, then all zeros.
         * Its pixel code alone is about 20 bytes, shorter than B / 1024: zeros end it. */
        struct msgs m = { 0 };
        size_t blen = 16 + 256u * 256;
        uint8_t *t = calloc(1, 8 + blen);
        st32(t + 4, 1, false);
        st32(t + 8, 77, false);
        st16(t + 12, 256, false); st16(t + 14, 256, false);
        for (int i = 0; i < 17; i++) t[8 + 16 + i] = (uint8_t)(i * 9);
        req(&m, false, 138, 20, 12 + blen - 4 + 4, t);
        size_t size = encoded_size(XC_REQUESTS, false, &m);
        CHECK(size != (size_t)-1 && size >= blen / 1024);
        CHECK(size < blen / 1024 + 32);
        CHECK(round_trip(XC_REQUESTS, false, &m, 100, NULL));
        free(t);
        buf_free(&m.all);
    }
    TEST("That an image drawn again among the latest 64 costs its index, and a wrong index is refused") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs m = { 0 };
            for (unsigned i = 0; i < 70; i++)
                gradient_image(&m, msb, 8, 8, i, (uint16_t)i);
            size_t first = encoded_size(XC_REQUESTS, msb, &m);
            for (unsigned i = 10; i < 70; i++) /* the latest 60 again, oldest first, elsewhere */
                gradient_image(&m, msb, 8, 8, i, (uint16_t)(100 + i));
            size_t size = encoded_size(XC_REQUESTS, msb, &m);
            CHECK(size != (size_t)-1 && size - first < 60 * 12);
            CHECK(round_trip(XC_REQUESTS, msb, &m, 5, NULL));
            printf("  60 images drawn again (%s): %zu bytes\n", msb ? "MSB" : "LSB", size - first);
            buf_free(&m.all);
        }
        struct msgs m = { 0 };
        for (unsigned i = 0; i < 9; i++) /* further back than the 7 references, over 2 KiB */
            gradient_image(&m, false, 40, 40, i, 0);
        gradient_image(&m, false, 40, 40, 0, 50);
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, NULL));
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        for (int i = 0; i < m.n; i++)
            CHECK_EQ(xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc), 0);
        uint8_t *c = (uint8_t *)buf_head(&enc);
        CHECK_EQ(c[enc.len - 2], 5); /* drawn again: filter 5, index 8 */
        CHECK_EQ(c[enc.len - 1], 8);
        c[enc.len - 1] = 9; /* only nine images are kept */
        xdec_new(&d, XC_REQUESTS, false);
        CHECK_EQ(xdec_feed(d, c, enc.len, &out), -EBADMSG);
        xdec_free(d);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
    TEST("That CompositeGlyphs items round-trip, a line of text one glyph on costs little, and odd items cross") {
        struct msgs m = { 0 };
        add_hex_msgs(&m, real_cg8_hex);
        add_hex_msgs(&m, real_cg16_hex);
        CHECK(round_trip(XC_REQUESTS, false, &m, 0, NULL));
        buf_free(&m.all);
        for (int msb = 0; msb < 2; msb++) {
            struct msgs l = { 0 };
            for (int line = 0; line < 40; line++) { /* x11perf: 80 glyphs, each line one on */
                uint8_t it[8 + 80] = { 80 };
                st16(it + 4, 20, msb); st16(it + 6, (uint16_t)(20 + 12 * line), msb);
                for (int g = 0; g < 80; g++) it[8 + g] = (uint8_t)(line + g + 3);
                composite_glyphs(&l, msb, 0, it, sizeof it);
            }
            /* after the first line, every line's code is the same bytes: the zstd stage's */
            struct xenc *e;
            struct buf enc = { 0 };
            size_t at[41] = { 0 };
            xenc_new(&e, XC_REQUESTS, msb);
            for (int i = 0; i < l.n; i++) {
                CHECK_EQ(xenc_message(e, buf_head(&l.all) + l.off[i], l.off[i + 1] - l.off[i], &enc), 0);
                at[i + 1] = enc.len;
            }
            for (int i = 2; i < l.n; i++)
                CHECK(at[i + 1] - at[i] == at[2] - at[1] && memcmp(buf_head(&enc) + at[i], buf_head(&enc) + at[1], at[2] - at[1]) == 0);
            printf("  a line of 80 glyphs one on (%s): %zu bytes, the same each time\n", msb ? "MSB" : "LSB", at[2] - at[1]);
            xenc_free(e);
            buf_free(&enc);
            /* 16- and 32-bit ids, several items, a glyphset switch, ids that step down */
            for (unsigned k = 1; k < 3; k++) {
                unsigned size = k == 1 ? 2 : 4;
                uint8_t it[(8 + 4 * 4) + 12 + (8 + 4 * 4)] = { 0 };
                uint8_t *p = it;
                p[0] = 3; st16(p + 4, 5, msb); st16(p + 6, 9, msb);
                for (unsigned g = 0; g < 3; g++) {
                    uint32_t id = 70000u - 9000u * g;
                    if (size == 2) st16(p + 8 + 2 * g, (uint16_t)id, msb); else st32(p + 8 + 4 * g, id, msb);
                }
                p += 8 + ((3 * size + 3) & ~3u);
                p[0] = 255; st32(p + 8, 0x200013, msb);
                p += 12;
                p[0] = 2; st16(p + 4, 0xfff0, msb);
                if (size == 2) { st16(p + 8, 1, msb); st16(p + 10, 0xffff, msb); } else { st32(p + 8, 1, msb); st32(p + 12, 0xffffffffu, msb); }
                p += 8 + ((2 * size + 3) & ~3u);
                composite_glyphs(&l, msb, k, it, (size_t)(p - it));
                composite_glyphs(&l, msb, k, it, (size_t)(p - it));
            }
            uint8_t odd[12] = { 9 };               /* 9 glyphs do not fit: sent raw */
            composite_glyphs(&l, msb, 0, odd, sizeof odd);
            composite_glyphs(&l, msb, 2, odd, 4);   /* shorter than an item's header */
            CHECK(round_trip(XC_REQUESTS, msb, &l, 0, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &l, 3, NULL));
            buf_free(&l.all);
        }
    }
    TEST("That truncated streams yield only whole messages and wait for the rest") {
        struct msgs m = { 0 };
        requests_of_every_kind(&m, false);
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, dec = { 0 };
        xenc_new(&e, XC_REQUESTS, false);
        for (int i = 0; i < m.n; i++)
            xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc);
        for (size_t cut = 0; cut < enc.len; cut += 3) {
            xdec_new(&d, XC_REQUESTS, false);
            buf_clear(&dec);
            long used = xdec_feed(d, buf_head(&enc), cut, &dec);
            CHECK(used >= 0 && (size_t)used <= cut);
            bool whole = false; /* the output ends on a message boundary */
            for (int i = 0; i <= m.n; i++) whole |= m.off[i] == dec.len;
            CHECK(whole);
            CHECK(memcmp(buf_head(&dec) ? buf_head(&dec) : (const uint8_t *)"", buf_head(&m.all), dec.len) == 0);
            xdec_free(d);
        }
        xenc_free(e);
        buf_free(&enc); buf_free(&dec); buf_free(&m.all);
    }
    TEST("That corrupt streams are refused cleanly") {
        struct xdec *d;
        struct buf out = { 0 };
        const uint8_t ref_missing[] = { 65, 0x02, 5 };             /* slot 2 of an empty class */
        const uint8_t esc_zero[] = { 1, 0xff, 0 };                  /* a verbatim message of 0 bytes */
        const uint8_t high_bit[] = { 65, 0x87, 5 };
        const uint8_t long_varint[] = { 65, 0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1 };
        const uint8_t huge[] = { 65, 0x07, 0xff, 0xff, 0xff, 0xff, 0x0f };
        const uint8_t *cases[] = { ref_missing, esc_zero, high_bit, long_varint, huge };
        size_t sizes[] = { sizeof ref_missing, sizeof esc_zero, sizeof high_bit, sizeof long_varint, sizeof huge };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            xdec_new(&d, XC_REQUESTS, false);
            CHECK_EQ(xdec_feed(d, cases[i], sizes[i], &out), -EBADMSG);
            CHECK_EQ(xdec_feed(d, cases[i], sizes[i], &out), -EBADMSG); /* and stays refused */
            CHECK_EQ(out.len, 0);
            xdec_free(d);
        }
        const uint8_t not_setup[] = { 1, 0x07, 0, 8 };             /* the server side must start verbatim */
        xdec_new(&d, XC_SERVER, false);
        CHECK_EQ(xdec_feed(d, not_setup, sizeof not_setup, &out), -EBADMSG);
        xdec_free(d);
        buf_free(&out);
    }
    TEST("That flipped bytes in an encoded stream never crash the decoder") {
        struct msgs m = { 0 };
        requests_of_every_kind(&m, true);
        struct xenc *e; struct xdec *d;
        struct buf enc = { 0 }, out = { 0 };
        xenc_new(&e, XC_REQUESTS, true);
        for (int i = 0; i < m.n; i++)
            xenc_message(e, buf_head(&m.all) + m.off[i], m.off[i + 1] - m.off[i], &enc);
        int refused = 0;
        for (int t = 0; t < 2000; t++) {
            uint8_t *copy = malloc(enc.len);
            memcpy(copy, buf_head(&enc), enc.len);
            copy[rnd() % enc.len] ^= (uint8_t)(1 + rnd() % 255);
            xdec_new(&d, XC_REQUESTS, true);
            buf_clear(&out);
            refused += xdec_feed(d, copy, enc.len, &out) < 0;
            xdec_free(d);
            free(copy);
        }
        CHECK(refused > 0);
        xenc_free(e);
        buf_free(&enc); buf_free(&out); buf_free(&m.all);
    }
    TEST("That random messages round-trip in both directions and byte orders") {
        for (int round = 0; round < 200; round++) {
            bool msb = round & 1;
            enum xc_dir dir = round & 2 ? XC_SERVER : XC_REQUESTS;
            struct msgs m = { 0 };
            if (dir == XC_SERVER) setup_reply(&m, msb, 1, 4 * (rnd() % 50));
            int n = 1 + (int)(rnd() % 40);
            uint16_t seq = (uint16_t)rnd();
            for (int i = 0; i < n; i++) {
                size_t len = 4 * (rnd() % 4 == 0 ? 1 + rnd() % 300 : 1 + rnd() % 12);
                uint8_t *p = malloc(len + 32);
                for (size_t k = 0; k < len + 32; k++) p[k] = (uint8_t)(rnd() % 4 ? rnd() % 3 : rnd());
                if (m.n > 1 && rnd() % 3 == 0) { /* a near-repeat of an earlier message */
                    int j = (int)(rnd() % (unsigned)m.n);
                    size_t jl = m.off[j + 1] - m.off[j];
                    if (jl <= len + 32) memcpy(p, buf_head(&m.all) + m.off[j], jl);
                    p[rnd() % (len + 32)] ^= 1;
                }
                if (dir == XC_REQUESTS) {
                    p[0] = (uint8_t)(rnd() % 3 == 0 ? 128 + rnd() % 4 : 60 + rnd() % 20);
                    if (rnd() % 8 == 0) { st16(p + 2, 0, msb); st32(p + 4, (uint32_t)((len + 4) / 4), msb); len += 4; }
                    else st16(p + 2, (uint16_t)(len / 4), msb);
                    if (rnd() % 16 == 0) p[2] ^= 1; /* malformed now and then */
                } else {
                    seq = (uint16_t)(seq + rnd() % 3);
                    int kind = (int)(rnd() % 4);
                    p[0] = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? (uint8_t)(2 + rnd() % 33) : 35;
                    if (kind == 1 || kind == 3) { len += 32; st32(p + 4, (uint32_t)((len - 32) / 4), msb); }
                    else len = 32;
                    st16(p + 2, seq, msb);
                }
                add(&m, p, len);
                free(p);
            }
            size_t chunk = rnd() % 3 == 0 ? 1 + rnd() % 16 : 0;
            if (!round_trip(dir, msb, &m, chunk, NULL)) {
                CHECK(!"random round trip");
                printf("  round %d failed\n", round);
            }
            buf_free(&m.all);
        }
    }
    TEST("That many large distinct messages round-trip under the reference budget") {
        struct msgs m = { 0 };
        for (int i = 0; i < 40; i++) {
            size_t len = 200000;
            uint8_t *p = malloc(len);
            for (size_t k = 0; k < len; k++) p[k] = (uint8_t)(k * (unsigned)(i + 1) >> 4);
            p[0] = (uint8_t)(60 + i % 30);
            p[1] = 0;
            st16(p + 2, 0, false);
            st32(p + 4, (uint32_t)(len / 4), false);
            add(&m, p, len);
            free(p);
        }
        CHECK(round_trip(XC_REQUESTS, false, &m, 65536, NULL));
        buf_free(&m.all);
    }
    TEST("That a channel's reference store evicts alike at both ends, by its size") {
        /* Five distinct 20 KiB NoOperations, then the same five again, three times: each
         * repeat comes five messages later. A store of 128 KiB keeps five (a repeat costs a
         * reference), one of 64 KiB three (every repeat is new again), one of 0 none. */
        struct msgs m = { 0 };
        for (int i = 0; i < 20; i++) {
            size_t len = 20000;
            uint8_t *p = malloc(len);
            rng_state = 777u + (uint32_t)(i % 5);
            for (size_t j = 4; j < len; j++) p[j] = (uint8_t)rnd();
            p[0] = 127; p[1] = 0;
            st16(p + 2, (uint16_t)(len / 4), false);
            add(&m, p, len);
            free(p);
        }
        size_t full = 0, fits = 0, small = 0, none = 0;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &full));
        rt_store = 2 * XC_STORE_UNIT;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &fits));
        rt_store = XC_STORE_UNIT;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &small));
        rt_store = 0;
        CHECK(round_trip(XC_REQUESTS, false, &m, 4096, &none));
        rt_store = XC_STORE_MAX;
        CHECK(fits == full);
        CHECK(fits < none / 3);
        CHECK(small > none / 2);
        buf_free(&m.all);
    }
    return test_summary();
}
