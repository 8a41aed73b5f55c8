/* test_vectors.c -- conformance vectors of the link's coders: for each set of capabilities
 * (a zstd level, CAP_SMALL, CAP_BUILTIN), a sequence of link writes and the exact bytes
 * each becomes (docs/PROTOCOL.md 2.1, 2.4, 2.5). They are kept in tests/vectors/coders.txt,
 * for a second implementation to check itself against, and this test checks ours:
 *   - every recorded stream decodes, by a fresh decoder, to the recorded writes;
 *   - the encoder makes exactly the recorded bytes. zstd's encoder may choose other matches
 *     in another libzstd release (the format is the same), and the small coder's model is
 *     fed what zstd made, so with another release than the one the file names only
 *     decoding is checked (the test says so in its name).
 * `build/tests/test_vectors --bless` writes the file again (when the format changes on
 * purpose, with a new protocol version). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/buf.h"
#include "link/codec.h"
#include "link/dict_builtin.h"
#include "link/smallcoder.h"
#include "test.h"

#define VECTORS_FILE "tests/vectors/coders.txt"
#define MAX_WRITES 64

struct caps {
    const char *name;
    int level;
    bool small, builtin;
};

static const struct caps cap_sets[] = {
    { "zstd", 3, false, false },
    { "zstd-small", 3, true, false },
    { "zstd-small-builtin", 3, true, true },
    { "zstd9-small-builtin", 9, true, true }, /* text chunks: at levels 7 and up */
};
#define N_CAPS (sizeof cap_sets / sizeof cap_sets[0])

/* The writes: what X traffic looks like on the link, from the app side (requests) and of
 * our own text; varied sizes around the small coder's limit. */
struct write_set {
    struct buf w[MAX_WRITES];
    size_t n;
};

static void add(struct write_set *ws, const void *p, size_t n)
{
    if (ws->n < MAX_WRITES)
        CHECK_EQ(buf_append(&ws->w[ws->n++], p, n), 0);
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v), put16(p + 2, (uint16_t)(v >> 16)); }

static void make_writes(struct write_set *ws)
{
    memset(ws, 0, sizeof *ws);
    /* A DATA frame's worth of pointer motion: MotionNotify-like events, moving. */
    for (int i = 0; i < 6; i++) {
        uint8_t ev[32] = { 6, 0 };
        put16(ev + 2, (uint16_t)(100 + i));
        put32(ev + 4, 123456 + 16u * (uint32_t)i);
        put32(ev + 8, 0x2a0);
        put32(ev + 12, 0x400001);
        put16(ev + 24, (uint16_t)(300 + 7 * i));
        put16(ev + 26, (uint16_t)(200 - 3 * i));
        add(ws, ev, sizeof ev);
    }
    /* Small requests: ChangeGC, then PolySegment. */
    uint8_t gc[16] = { 56, 0, 4, 0 };
    put32(gc + 4, 0x400005), put32(gc + 8, 4), put32(gc + 12, 0xff00ff);
    add(ws, gc, sizeof gc);
    uint8_t seg[28] = { 66, 0, 7, 0 };
    put32(seg + 4, 0x400002), put32(seg + 8, 0x400005);
    for (int k = 0; k < 8; k++)
        put16(seg + 12 + 2 * k, (uint16_t)(10 * k + 3));
    add(ws, seg, sizeof seg);
    /* Terminal lines as ImageText8, the way a terminal draws them. */
    static const char *const lines[] = {
        "tincan carries X11 programs over slow links; these lines are its own test text.",
        "A line of a terminal: $ ls -l /usr/share/doc | head -n 20",
        "total 1234  drwxr-xr-x 2 root root 4096 Dec  2 00:00 adduser",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        size_t n = strlen(lines[i]), len = 16 + ((n + 3) & ~(size_t)3);
        uint8_t rq[128] = { 76, (uint8_t)n };
        put16(rq + 2, (uint16_t)(len / 4));
        put32(rq + 4, 0x400002), put32(rq + 8, 0x400005);
        put16(rq + 12, 2), put16(rq + 14, (uint16_t)(13 + 15 * i));
        memcpy(rq + 16, lines[i], n);
        add(ws, rq, len);
    }
    /* A screenful of text in one write (above the small coder's limit: zstd, or text). */
    struct buf screen = { 0 };
    for (int row = 0; row < 24; row++) {
        char line[96];
        int n = snprintf(line, sizeof line, "%2d  the quick brown fox of row %d jumps over %d lazy dogs; ok\n", row, row,
                         row * 3 + 1);
        CHECK_EQ(buf_append(&screen, line, (size_t)n), 0);
    }
    add(ws, buf_head(&screen), screen.len);
    buf_free(&screen);
    /* Pixels that compress poorly (an image's body). */
    uint8_t px[2048];
    uint32_t x = 0x9e3779b9u;
    for (size_t i = 0; i < sizeof px; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        px[i] = (uint8_t)x;
    }
    add(ws, px, sizeof px);
    /* Earlier writes again: matches in the history. */
    add(ws, buf_head(&ws->w[6]), ws->w[6].len);
    add(ws, buf_head(&ws->w[8]), ws->w[8].len);
    uint8_t ev[32] = { 6, 0 };
    put16(ev + 2, 200);
    add(ws, ev, sizeof ev);
}

static void free_writes(struct write_set *ws)
{
    for (size_t i = 0; i < MAX_WRITES; i++)
        buf_free(&ws->w[i]);
}

/* A codec of one side as both halves would make it with these capabilities. */
static struct codec *make_codec(const struct caps *c, enum codec_dir dir)
{
    struct codec *k = NULL;
    if (codec_new_window(&k, c->level, CODEC_SPEED_AUTO, codec_window_for(64u << 20)) < 0)
        return NULL;
    if (c->small && codec_use_small(k) < 0) {
        codec_free(k);
        return NULL;
    }
    if (c->builtin && codec_set_builtin(k, dir, dict_builtin_up, dict_builtin_up_len) < 0) {
        codec_free(k);
        return NULL;
    }
    return k;
}

static void hex_out(FILE *f, const char *tag, const struct buf *b)
{
    fprintf(f, "%s ", tag);
    for (size_t i = 0; i < b->len; i++)
        fprintf(f, "%02x", buf_head(b)[i]);
    fputc('\n', f);
}

static int hex_in(const char *s, struct buf *b)
{
    buf_clear(b);
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    if (n % 2)
        return -EINVAL;
    for (size_t i = 0; i < n; i += 2) {
        unsigned v;
        if (sscanf(s + i, "%2x", &v) != 1 || buf_append(b, &(uint8_t){ (uint8_t)v }, 1) < 0)
            return -EINVAL;
    }
    return 0;
}

/* One recorded vector: its writes and what each became. */
struct vector {
    char name[64];
    int level;
    int small, builtin;
    struct buf w[MAX_WRITES], out[MAX_WRITES];
    size_t n;
};

static int read_vectors(struct vector *v, size_t cap, size_t *n, unsigned *zstd_version)
{
    FILE *f = fopen(VECTORS_FILE, "r");
    if (!f)
        return -ENOENT;
    static char line[1 << 16];
    *n = 0;
    struct vector *cur = NULL;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "zstd-version %u", zstd_version) == 1)
            continue;
        if (!strncmp(line, "vector ", 7)) {
            if (*n == cap) {
                rc = -E2BIG;
                break;
            }
            cur = &v[(*n)++];
            memset(cur, 0, sizeof *cur);
            if (sscanf(line, "vector %63s level=%d small=%d builtin=%d", cur->name, &cur->level, &cur->small,
                       &cur->builtin) != 4)
                rc = -EINVAL;
        } else if (cur && !strncmp(line, "write ", 6) && cur->n < MAX_WRITES) {
            rc = hex_in(line + 6, &cur->w[cur->n]);
        } else if (cur && !strncmp(line, "out ", 4) && cur->n < MAX_WRITES) {
            rc = hex_in(line + 4, &cur->out[cur->n++]);
        } else {
            rc = -EINVAL;
        }
    }
    fclose(f);
    return rc;
}

static void free_vector(struct vector *v)
{
    for (size_t i = 0; i < MAX_WRITES; i++) {
        buf_free(&v->w[i]);
        buf_free(&v->out[i]);
    }
}

static int bless(void)
{
    FILE *f = fopen(VECTORS_FILE, "w");
    if (!f)
        return -errno;
    fprintf(f, "# tincan conformance vectors: the link's coders (docs/PROTOCOL.md 2.1, 2.4, 2.5).\n"
               "# Each vector: the capabilities both sides agreed (a zstd level, CAP_SMALL, CAP_BUILTIN with the\n"
               "# app side's built-in dictionary), then link writes in order, each followed by the bytes it\n"
               "# becomes on the link (hex). Written by `build/tests/test_vectors --bless`; zstd chunks were\n"
               "# made by the libzstd release named below (another may choose other matches).\n"
               "zstd-version %u\n",
            ZSTD_versionNumber());
    struct write_set ws;
    make_writes(&ws);
    int rc = 0;
    for (size_t c = 0; c < N_CAPS && !rc; c++) {
        const struct caps *cs = &cap_sets[c];
        struct codec *tx = make_codec(cs, CODEC_TX);
        if (!tx) {
            rc = -ENOMEM;
            break;
        }
        fprintf(f, "vector %s level=%d small=%d builtin=%d\n", cs->name, cs->level, cs->small, cs->builtin);
        struct buf out = { 0 };
        for (size_t i = 0; i < ws.n && !rc; i++) {
            buf_clear(&out);
            rc = codec_compress(tx, buf_head(&ws.w[i]), ws.w[i].len, &out);
            hex_out(f, "write", &ws.w[i]);
            hex_out(f, "out", &out);
        }
        buf_free(&out);
        codec_free(tx);
    }
    free_writes(&ws);
    return fclose(f) == 0 ? rc : -EIO;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--bless")) {
        TEST("That the conformance vectors are written (--bless)")
            CHECK_EQ(bless(), 0);
        return test_summary();
    }
    static struct vector v[N_CAPS + 4];
    size_t n = 0;
    unsigned zstd_version = 0;
    TEST("That the conformance vectors are read (from the top of the tree)") {
        CHECK_EQ(read_vectors(v, sizeof v / sizeof v[0], &n, &zstd_version), 0);
        CHECK_EQ(n, N_CAPS);
    }
    struct write_set ws;
    make_writes(&ws);
    bool same_zstd = zstd_version == ZSTD_versionNumber();
    for (size_t k = 0; k < n; k++) {
        const struct caps *cs = NULL;
        for (size_t c = 0; c < N_CAPS; c++)
            if (!strcmp(cap_sets[c].name, v[k].name))
                cs = &cap_sets[c];
        static char sentence[256];
        snprintf(sentence, sizeof sentence, "That vector %.60s's recorded stream decodes to its writes", v[k].name);
        TEST(sentence) {
            CHECK(cs != NULL);
            struct codec *rx = cs ? make_codec(cs, CODEC_RX) : NULL;
            CHECK(rx != NULL);
            struct buf in = { 0 }, got = { 0 };
            for (size_t i = 0; rx && i < v[k].n; i++) {
                buf_clear(&got);
                CHECK_EQ(buf_append(&in, buf_head(&v[k].out[i]), v[k].out[i].len), 0);
                int rc;
                do
                    rc = codec_decompress(rx, &in, &got, 1 << 16);
                while (rc == 1);
                CHECK_EQ(rc, 0);
                CHECK_EQ(in.len, 0);
                CHECK_EQ(got.len, v[k].w[i].len);
                CHECK(got.len == v[k].w[i].len && !memcmp(buf_head(&got), buf_head(&v[k].w[i]), got.len));
            }
            buf_free(&in);
            buf_free(&got);
            if (rx)
                codec_free(rx);
        }
        snprintf(sentence, sizeof sentence, "That vector %.60s's writes are the test's and are coded to the recorded bytes%s",
                 v[k].name, same_zstd ? "" : " (not compared: another libzstd release than the file's)");
        TEST(sentence) {
            CHECK_EQ(v[k].n, ws.n);
            struct codec *tx = cs ? make_codec(cs, CODEC_TX) : NULL;
            CHECK(tx != NULL);
            struct buf out = { 0 };
            for (size_t i = 0; tx && i < v[k].n && i < ws.n; i++) {
                CHECK(v[k].w[i].len == ws.w[i].len && !memcmp(buf_head(&v[k].w[i]), buf_head(&ws.w[i]), ws.w[i].len));
                buf_clear(&out);
                CHECK_EQ(codec_compress(tx, buf_head(&v[k].w[i]), v[k].w[i].len, &out), 0);
                if (same_zstd) {
                    CHECK_EQ(out.len, v[k].out[i].len);
                    CHECK(out.len == v[k].out[i].len && !memcmp(buf_head(&out), buf_head(&v[k].out[i]), out.len));
                }
            }
            buf_free(&out);
            if (tx)
                codec_free(tx);
        }
        free_vector(&v[k]);
    }
    free_writes(&ws);
    return test_summary();
}
