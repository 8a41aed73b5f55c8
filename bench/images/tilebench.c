/* tilebench.c -- two sessions' large images (putimages.py files) through tincan's xcodec at
 * 256 kbit/s's effort: the first cold, the second with the first's tiles (tilecache.c) and
 * without; every image decoded and compared. Prints each session's code after zstd -9 (the
 * whole stream at once, as the link's compressor sees it) and its tiles sent as references.
 * usage: tilebench FIRST.rq SECOND.rq [SECOND.rq...]   (each later session loads the one before) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "xcodec/xcodec.h"

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) || (*n = (size_t)ftell(f), fseek(f, 0, SEEK_SET)))
        return NULL;
    uint8_t *p = malloc(*n ? *n : 1);
    if (!p || fread(p, 1, *n, f) != *n)
        return NULL;
    fclose(f);
    return p;
}

static size_t zstd9(const struct buf *b)
{
    size_t cap = ZSTD_compressBound(b->len);
    void *z = malloc(cap);
    size_t n = ZSTD_compress(z, cap, buf_head(b), b->len, 9);
    free(z);
    return ZSTD_isError(n) ? b->len : n;
}

/* One session of the requests in p[0, n): encoded, decoded and compared; the tiles' file
 * to save (when tc_e). Returns the zstd size, 0 on a mismatch. */
static size_t session(const uint8_t *p, size_t n, struct xc_tilecache *tc_e, struct xc_tilecache *tc_d,
                      size_t *raw, size_t *images)
{
    struct xenc *e;
    struct xdec *d;
    struct buf enc = { 0 }, dec = { 0 };
    xenc_new(&e, XC_REQUESTS, false);
    xdec_new(&d, XC_REQUESTS, false);
    xenc_set_link_rate(e, 32000);
    xenc_set_tilecache(e, tc_e);
    xdec_set_tilecache(d, tc_d);
    *raw = *images = 0;
    size_t ok = 1;
    for (size_t at = 0; ok && at + 4 <= n;) {
        uint32_t len = (uint32_t)p[at] | (uint32_t)p[at + 1] << 8 | (uint32_t)p[at + 2] << 16 | (uint32_t)p[at + 3] << 24;
        const uint8_t *m = p + at + 4;
        at += 4 + len;
        size_t mark = enc.len;
        if (xenc_message(e, m, len, &enc) != 0 ||
            xdec_feed(d, buf_head(&enc) + mark, enc.len - mark, &dec) != (long)(enc.len - mark) || dec.len != len ||
            memcmp(buf_head(&dec), m, len))
            ok = 0;
        buf_clear(&dec);
        *raw += len, ++*images;
    }
    size_t z = ok ? zstd9(&enc) : 0;
    xenc_free(e), xdec_free(d);
    buf_free(&enc), buf_free(&dec);
    return z;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tilebench FIRST.rq SECOND.rq...\n");
        return 2;
    }
    struct buf file = { 0 };
    for (int s = 1; s < argc; s++) {
        size_t n, raw, imgs;
        uint8_t *p = slurp(argv[s], &n);
        if (!p)
            return perror(argv[s]), 1;
        size_t without = session(p, n, NULL, NULL, &raw, &imgs);
        struct xc_tilecache *ce, *cd;
        xc_tilecache_new(&ce, 8u << 20), xc_tilecache_new(&cd, 8u << 20);
        if (file.len && (xc_tilecache_load(ce, buf_head(&file), file.len) || xc_tilecache_load(cd, buf_head(&file), file.len)))
            return fprintf(stderr, "cannot load the tiles saved\n"), 1;
        size_t with = session(p, n, ce, cd, &raw, &imgs);
        struct buf fe = { 0 }, fd = { 0 };
        if (xc_tilecache_save(ce, &fe) || xc_tilecache_save(cd, &fd) || fe.len != fd.len || memcmp(buf_head(&fe), buf_head(&fd), fe.len))
            return fprintf(stderr, "the two ends' tile files differ\n"), 1;
        printf("%s: %zu images, %.1f MB; zstd -9 of the code: without tiles %zu B, with the tiles of %s %zu B "
               "(%.2f), %llu tiles sent as references; saved %zu tiles\n",
               argv[s], imgs, raw / 1e6, without, s > 1 ? argv[s - 1] : "none", with, without ? (double)with / without : 0,
               (unsigned long long)xc_tilecache_hits(ce), fe.len ? (fe.len - 4) / 1024 : 0);
        if (!with || !without)
            return fprintf(stderr, "an image did not come back exactly\n"), 1;
        buf_free(&file);
        file = fe;
        buf_free(&fd);
        xc_tilecache_free(ce), xc_tilecache_free(cd);
        free(p);
    }
    buf_free(&file);
    return 0;
}
