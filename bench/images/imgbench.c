/* imgbench.c -- codes the large images real programs draw (extract.py's .img files) with
 * tincan's xcodec and with the lossless codecs of Debian, side by side: bytes, and CPU ms
 * to encode and decode. Test tool only; checks that every lossless code decodes exactly. */
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <zstd.h>

#include "common/buf.h"
#include "xcodec/xcodec.h"

struct img {
    char name[256], cls[256];
    uint32_t w, h, count;
    uint8_t *px; /* 4 * w * h, B G R X */
};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int load(const char *path, struct img *im)
{
    FILE *f = fopen(path, "rb");
    uint8_t hd[24];
    if (!f || fread(hd, 1, 24, f) != 24 || memcmp(hd, "TCIMG1\n\0", 8)) {
        if (f) fclose(f);
        return -1;
    }
    memcpy(&im->w, hd + 8, 4), memcpy(&im->h, hd + 12, 4), memcpy(&im->count, hd + 20, 4);
    size_t n = 4ull * im->w * im->h;
    im->px = malloc(n);
    int ok = im->px && fread(im->px, 1, n, f) == n;
    fclose(f);
    const char *b = strrchr(path, '/');
    snprintf(im->name, sizeof im->name, "%s", b ? b + 1 : path);
    snprintf(im->cls, sizeof im->cls, "%s", im->name);
    char *dash = strrchr(im->cls, '-');
    if (dash) *dash = 0; /* the capture: program and document */
    return ok ? 0 : -1;
}

/* The columns: each codes an image, returns its size, and checks its decode. */
enum { C_ZSTD, C_FILTERS, C_TINCAN, C_SESSION, C_PNG, C_WEBP1, C_WEBP2, C_WEBP3, C_WEBP5, C_WEBP9, C_JXL1, C_JXL3, C_JXL7,
       C_JXL9, C_N };
static const char *const cname[C_N] = { "zstd-9 raw", "tincan filters", "tincan", "tincan session", "PNG-9", "WebP-z1", "WebP-z2",
                                        "WebP-z3", "WebP-z5", "WebP-z9", "JXL-e1", "JXL-e3", "JXL-e7", "JXL-e9" };
struct res { double bytes, enc_ms, dec_ms; unsigned fails; };

static size_t zstd_of(const void *p, size_t n, int level, uint8_t **out)
{
    size_t cap = ZSTD_compressBound(n);
    *out = malloc(cap);
    ZSTD_CCtx *z = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog, 21); /* the link's at the default memory bound */
    size_t r = ZSTD_compress2(z, *out, cap, p, n);
    ZSTD_freeCCtx(z);
    return ZSTD_isError(r) ? 0 : r;
}

static int c_zstd(const struct img *im, struct res *r)
{
    size_t n = 4ull * im->w * im->h;
    uint8_t *z, *back = malloc(n);
    double t0 = cpu_now();
    size_t k = zstd_of(im->px, n, 9, &z);
    double t1 = cpu_now();
    size_t d = ZSTD_decompress(back, n, z, k);
    double t2 = cpu_now();
    r->bytes += k, r->enc_ms += 1e3 * (t1 - t0), r->dec_ms += 1e3 * (t2 - t1);
    r->fails += d != n || memcmp(back, im->px, n);
    free(z), free(back);
    return 0;
}

/* A PutImage of the image as a client sends it (LSB, ZPixmap, depth 24), through a fresh
 * channel direction's encoder and decoder, then zstd-9 as on the link. */
/* e, dd: a channel's coders kept from image to image (NULL: a fresh channel per image). */
static int c_tincan(const struct img *im, struct res *r, uint64_t rate_Bps, struct xenc *se, struct xdec *sd)
{
    size_t n = 4ull * im->w * im->h, len = 24 + n;
    uint8_t *msg = malloc(len + 8);
    int big = len / 4 > 0xffff;
    uint8_t *h = msg;
    h[0] = 72, h[1] = 2;
    size_t o = 4;
    if (big) {
        h[2] = h[3] = 0;
        uint32_t l = (uint32_t)((len + 4) / 4);
        memcpy(h + 4, &l, 4);
        o = 8;
    } else {
        uint16_t l = (uint16_t)(len / 4);
        memcpy(h + 2, &l, 2);
    }
    uint32_t drw = 0x400001, gc = 0x400002;
    uint16_t w = (uint16_t)im->w, hh = (uint16_t)im->h, x = 0, y = 0;
    memcpy(h + o, &drw, 4), memcpy(h + o + 4, &gc, 4), memcpy(h + o + 8, &w, 2), memcpy(h + o + 10, &hh, 2);
    memcpy(h + o + 12, &x, 2), memcpy(h + o + 14, &y, 2);
    h[o + 16] = 0, h[o + 17] = 24, h[o + 18] = h[o + 19] = 0;
    memcpy(h + o + 20, im->px, n);
    size_t mlen = o + 20 + n;
    struct xenc *e = se;
    struct xdec *dd = sd;
    struct buf code = { 0 }, back = { 0 };
    if (!se) {
        xenc_new(&e, XC_REQUESTS, false);
        xdec_new(&dd, XC_REQUESTS, false);
    }
    xenc_set_link_rate(e, rate_Bps);
    double t0 = cpu_now();
    if (xenc_message(e, msg, mlen, &code) < 0)
        return -1;
    uint8_t *z;
    size_t k = zstd_of(buf_head(&code), code.len, 9, &z);
    double t1 = cpu_now();
    long got = xdec_feed(dd, buf_head(&code), code.len, &back);
    double t2 = cpu_now();
    r->bytes += k, r->enc_ms += 1e3 * (t1 - t0), r->dec_ms += 1e3 * (t2 - t1);
    r->fails += got != (long)code.len || back.len != mlen || memcmp(buf_head(&back), msg, mlen);
    free(z), free(msg), buf_free(&code), buf_free(&back);
    if (!se)
        xenc_free(e), xdec_free(dd);
    return 0;
}

static void png_write_cb(png_structp p, png_bytep d, png_size_t n)
{
    struct buf *b = png_get_io_ptr(p);
    buf_append(b, d, n);
}

static int write_png(const struct img *im, struct buf *out, int level)
{
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(p);
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_write_struct(&p, &info);
        return -1;
    }
    png_set_write_fn(p, out, png_write_cb, NULL);
    png_set_compression_level(p, level);
    png_set_filter(p, 0, PNG_ALL_FILTERS);
    png_set_IHDR(p, info, im->w, im->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(p, info);
    png_set_bgr(p);
    png_set_filler(p, 0, PNG_FILLER_AFTER);
    for (uint32_t y = 0; y < im->h; y++)
        png_write_row(p, im->px + 4ull * im->w * y);
    png_write_end(p, info);
    png_destroy_write_struct(&p, &info);
    return 0;
}

struct rdbuf { const uint8_t *p; size_t n, at; };
static void png_read_cb(png_structp p, png_bytep d, png_size_t n)
{
    struct rdbuf *b = png_get_io_ptr(p);
    if (b->at + n > b->n)
        png_error(p, "short");
    memcpy(d, b->p + b->at, n), b->at += n;
}

/* RGB compared with the image's bytes 0-2 (the codecs other than tincan get RGB only:
 * the fourth byte of these images is constant, and 2 bytes would say which). */
static int same_rgb(const struct img *im, const uint8_t *bgr)
{
    for (size_t i = 0; i < (size_t)im->w * im->h; i++)
        if (memcmp(im->px + 4 * i, bgr + 3 * i, 3))
            return 0;
    return 1;
}

static int c_png(const struct img *im, struct res *r)
{
    struct buf out = { 0 };
    double t0 = cpu_now();
    write_png(im, &out, 9);
    double t1 = cpu_now();
    uint8_t *bgr = malloc(3ull * im->w * im->h);
    struct rdbuf rb = { buf_head(&out), out.len, 0 };
    png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(p);
    int ok = 0;
    if (!setjmp(png_jmpbuf(p))) {
        png_set_read_fn(p, &rb, png_read_cb);
        png_read_info(p, info);
        png_set_bgr(p);
        for (uint32_t y = 0; y < im->h; y++)
            png_read_row(p, bgr + 3ull * im->w * y, NULL);
        ok = 1;
    }
    png_destroy_read_struct(&p, &info, NULL);
    double t2 = cpu_now();
    r->bytes += out.len, r->enc_ms += 1e3 * (t1 - t0), r->dec_ms += 1e3 * (t2 - t1);
    r->fails += !ok || !same_rgb(im, bgr);
    free(bgr), buf_free(&out);
    return 0;
}

static int webp_wr(const uint8_t *d, size_t n, const WebPPicture *pic)
{
    return buf_append(pic->custom_ptr, d, n) == 0;
}

static int c_webp(const struct img *im, struct res *r, int level)
{
    WebPConfig cfg;
    WebPPicture pic;
    struct buf out = { 0 };
    WebPConfigInit(&cfg);
    WebPConfigLosslessPreset(&cfg, level);
    cfg.exact = 1;
    WebPPictureInit(&pic);
    pic.use_argb = 1, pic.width = (int)im->w, pic.height = (int)im->h;
    double t0 = cpu_now();
    uint8_t *bgr = malloc(3ull * im->w * im->h);
    for (size_t i = 0; i < (size_t)im->w * im->h; i++)
        memcpy(bgr + 3 * i, im->px + 4 * i, 3);
    WebPPictureImportBGR(&pic, bgr, (int)(3 * im->w));
    pic.writer = webp_wr, pic.custom_ptr = &out;
    int ok = WebPEncode(&cfg, &pic);
    WebPPictureFree(&pic);
    double t1 = cpu_now();
    ok = ok && WebPDecodeBGRInto(buf_head(&out), out.len, bgr, 3ull * im->w * im->h, (int)(3 * im->w)) != NULL;
    double t2 = cpu_now();
    r->bytes += out.len, r->enc_ms += 1e3 * (t1 - t0), r->dec_ms += 1e3 * (t2 - t1);
    r->fails += !ok || !same_rgb(im, bgr);
    free(bgr), buf_free(&out);
    return 0;
}

/* cjxl and djxl as programs (Debian has the tools, not libjxl-dev): wall time of the
 * process, PNG input and output included (a few ms), under the benchmark lock. */
static int c_jxl(const struct img *im, struct res *r, int effort, const char *tmp)
{
    char png[512], jxl[512], outp[512], cmd[2048];
    snprintf(png, sizeof png, "%s/in.png", tmp), snprintf(jxl, sizeof jxl, "%s/o.jxl", tmp);
    snprintf(outp, sizeof outp, "%s/back.png", tmp);
    struct buf b = { 0 };
    write_png(im, &b, 1);
    FILE *f = fopen(png, "wb");
    fwrite(buf_head(&b), 1, b.len, f), fclose(f), buf_free(&b);
    snprintf(cmd, sizeof cmd, "cjxl -q 100 -e %d --quiet %s %s >/dev/null 2>&1", effort, png, jxl);
    double t0 = wall_now();
    int rc = system(cmd);
    double t1 = wall_now();
    snprintf(cmd, sizeof cmd, "djxl %s %s >/dev/null 2>&1", jxl, outp);
    int rc2 = system(cmd);
    double t2 = wall_now();
    FILE *j = fopen(jxl, "rb");
    long n = 0;
    if (j) fseek(j, 0, SEEK_END), n = ftell(j), fclose(j);
    r->bytes += n, r->enc_ms += 1e3 * (t1 - t0), r->dec_ms += 1e3 * (t2 - t1);
    r->fails += rc != 0 || rc2 != 0 || n <= 0;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: imgbench IMG...   (IMG_JXL=0: without cjxl; IMG_SLOW=0: without WebP-z9, JXL-e9;\n"
                        "       IMG_RATE=B: tincan for a link of B bytes/s, default 32000)\n");
        return 2;
    }
    const char *ej = getenv("IMG_JXL"), *es = getenv("IMG_SLOW");
    int jxl = !ej || strcmp(ej, "0"), slow = !es || strcmp(es, "0");
    const char *er = getenv("IMG_RATE"); /* tincan's link rate, bytes/s: 256 kbit/s unless told */
    uint64_t rate = er ? strtoull(er, NULL, 10) : 32000;
    char tmp[] = "/tmp/imgbench.XXXXXX";
    if (!mkdtemp(tmp))
        return 1;
    enum { MAXCLS = 32 };
    struct { char name[256]; unsigned n; double raw, px; struct res r[C_N]; } cls[MAXCLS + 1];
    memset(cls, 0, sizeof cls);
    struct xenc *sess_e[MAXCLS + 1] = { 0 };
    struct xdec *sess_d[MAXCLS + 1] = { 0 };
    unsigned ncls = 0;
    for (int a = 1; a < argc; a++) {
        struct img im;
        if (load(argv[a], &im) < 0) {
            fprintf(stderr, "%s: not an image file\n", argv[a]);
            continue;
        }
        unsigned k = 0;
        while (k < ncls && strcmp(cls[k].name, im.cls))
            k++;
        if (k == ncls && ncls < MAXCLS)
            snprintf(cls[ncls++].name, 256, "%s", im.cls);
        struct res one[C_N];
        memset(one, 0, sizeof one);
        c_zstd(&im, &one[C_ZSTD]);
        c_tincan(&im, &one[C_FILTERS], UINT64_MAX / 2, NULL, NULL); /* a link too fast for WebP: as before */
        c_tincan(&im, &one[C_TINCAN], rate, NULL, NULL);
        if (!sess_e[k]) /* one channel per capture: its images in the order first drawn */
            xenc_new(&sess_e[k], XC_REQUESTS, false), xdec_new(&sess_d[k], XC_REQUESTS, false);
        c_tincan(&im, &one[C_SESSION], rate, sess_e[k], sess_d[k]);
        c_png(&im, &one[C_PNG]);
        c_webp(&im, &one[C_WEBP1], 1), c_webp(&im, &one[C_WEBP2], 2), c_webp(&im, &one[C_WEBP3], 3);
        c_webp(&im, &one[C_WEBP5], 5);
        if (slow)
            c_webp(&im, &one[C_WEBP9], 9);
        if (jxl) {
            c_jxl(&im, &one[C_JXL1], 1, tmp), c_jxl(&im, &one[C_JXL3], 3, tmp), c_jxl(&im, &one[C_JXL7], 7, tmp);
            if (slow)
                c_jxl(&im, &one[C_JXL9], 9, tmp);
        }
        printf("%s %ux%u", im.name, im.w, im.h);
        for (int c = 0; c < C_N; c++)
            printf(" %s=%.0f%s", cname[c], one[c].bytes, one[c].fails ? "(FAIL)" : "");
        printf("\n");
        fflush(stdout);
        for (unsigned t = 0; t < 2; t++) {
            unsigned i = t ? MAXCLS : k;
            if (i == ncls && i != MAXCLS)
                continue;
            cls[i].n++, cls[i].raw += 4.0 * im.w * im.h, cls[i].px += (double)im.w * im.h;
            for (int c = 0; c < C_N; c++)
                cls[i].r[c].bytes += one[c].bytes, cls[i].r[c].enc_ms += one[c].enc_ms,
                    cls[i].r[c].dec_ms += one[c].dec_ms, cls[i].r[c].fails += one[c].fails;
        }
        free(im.px);
    }
    snprintf(cls[MAXCLS].name, 256, "all");
    printf("\n| class | images | raw KB |");
    for (int c = 0; c < C_N; c++)
        printf(" %s KB | enc ms | dec ms |", cname[c]);
    printf("\n|---|--:|--:|");
    for (int c = 0; c < C_N; c++)
        printf("--:|--:|--:|");
    printf("\n");
    for (unsigned i = 0; i <= MAXCLS; i++) {
        if (i >= ncls && i != MAXCLS)
            continue;
        printf("| %s | %u | %.0f |", cls[i].name, cls[i].n, cls[i].raw / 1e3);
        for (int c = 0; c < C_N; c++) {
            if (!cls[i].r[c].bytes) {
                printf(" - | - | - |");
                continue;
            }
            printf(" %.1f%s | %.0f | %.0f |", cls[i].r[c].bytes / 1e3, cls[i].r[c].fails ? " FAIL" : "",
                   cls[i].r[c].enc_ms, cls[i].r[c].dec_ms);
        }
        printf("\n");
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    return system(cmd) == 0 ? 0 : 1;
}
