/* eval_xcodec.c -- offline measure of the X message codec on captures from capture.py:
 * per direction, raw bytes, zstd-3 flushed per recorded read (tincan today), and
 * xcodec + the same zstd, with CPU per MB; checks decode(encode(x)) == x throughout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "common/buf.h"
#include "x11/xwire.h"
#include "xcodec/xcodec.h"

#define MAX_CONN 256
#define XC_DUMP_MAX 4096 /* bytes of each encoded stream written as a fuzz seed */

struct dirstate {
    struct buf in;        /* bytes read, not yet framed */
    struct xenc *enc;
    struct xdec *dec;
    struct buf wire;      /* encoded bytes not yet decoded (the decoder is streaming) */
    struct buf head;      /* the first XC_DUMP_MAX encoded bytes, for XC_DUMP */
    bool started;         /* past the setup request (requests) */
};
struct conn { bool msb, known; struct dirstate d[2]; };

struct totals {
    uint64_t raw, zraw, xc, zxc, msgs, chunks;
    double enc_s, dec_s, z_s;
};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Compresses one chunk with a flush, as the link does at each write; returns bytes out. */
static size_t zflush(ZSTD_CCtx *z, const void *p, size_t n, double *secs)
{
    static uint8_t obuf[1 << 16];
    double t0 = cpu_now();
    size_t total = 0, left;
    ZSTD_inBuffer in = { p, n, 0 };
    do {
        ZSTD_outBuffer o = { obuf, sizeof obuf, 0 };
        left = ZSTD_compressStream2(z, &o, &in, ZSTD_e_flush);
        if (ZSTD_isError(left)) { fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(left)); exit(1); }
        total += o.pos;
    } while (left || in.pos < in.size);
    *secs += cpu_now() - t0;
    return total;
}

static ZSTD_CCtx *znew(void)
{
    ZSTD_CCtx *z = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog, 22);
    return z;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: eval_xcodec CAPTURE...\n"); return 2; }
    int bad = 0;
    printf("| capture | direction | messages | raw B | zstd-flush B | xcodec B | xcodec+zstd-flush B | vs zstd | enc s/MB | dec s/MB | zstd s/MB (xc) |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (!f) { perror(argv[a]); return 1; }
        char magic[8];
        if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "TCXCAP1\n", 8)) { fprintf(stderr, "%s: not a capture\n", argv[a]); return 1; }
        /* XC_PIXCACHE=FILE: the pixel bodies of a run before (if FILE exists) for every
         * connection's requests, and this run's saved to FILE at the end (a warm session). */
        const char *pc_file = getenv("XC_PIXCACHE");
        struct xc_pixcache *pc = NULL;
        if (pc_file && xc_pixcache_new(&pc, XC_PIXCACHE_BYTES) == 0) {
            FILE *pf = fopen(pc_file, "rb");
            static uint8_t pbuf[16u << 20];
            size_t pn = pf ? fread(pbuf, 1, sizeof pbuf, pf) : 0;
            if (pf)
                fclose(pf);
            if (pn && xc_pixcache_load(pc, pbuf, pn) < 0)
                fprintf(stderr, "%s: not a set of pixel bodies\n", pc_file);
        }
        static struct conn conns[MAX_CONN];
        memset(conns, 0, sizeof conns);
        struct totals t[2] = { 0 };
        ZSTD_CCtx *zr[2] = { znew(), znew() }, *zx[2] = { znew(), znew() };
        struct buf chunk_raw = { 0 }, chunk_xc = { 0 }, dec_out = { 0 };
        uint8_t rh[17];
        while (fread(rh, 1, 17, f) == 17) {
            uint32_t cid = rh[0] | rh[1] << 8 | rh[2] << 16 | (uint32_t)rh[3] << 24;
            uint8_t dir = rh[4];
            uint32_t len = rh[13] | rh[14] << 8 | rh[15] << 16 | (uint32_t)rh[16] << 24;
            uint8_t *data = malloc(len ? len : 1);
            if (!data || fread(data, 1, len, f) != len) { fprintf(stderr, "truncated capture\n"); return 1; }
            if (cid >= MAX_CONN || dir > 1) { free(data); continue; }
            struct conn *c = &conns[cid];
            if (!c->known) {
                if (dir != 0 || len == 0) { free(data); continue; }
                c->known = true;
                c->msb = data[0] == 'B';
                for (int d = 0; d < 2; d++) {
                    if (xenc_new(&c->d[d].enc, d ? XC_SERVER : XC_REQUESTS, c->msb) < 0 ||
                        xdec_new(&c->d[d].dec, d ? XC_SERVER : XC_REQUESTS, c->msb) < 0) return 1;
                }
                xenc_set_pixcache(c->d[0].enc, pc);
                xdec_set_pixcache(c->d[0].dec, pc);
            }
            struct dirstate *ds = &c->d[dir];
            if (buf_append(&ds->in, data, len) < 0)
                abort(); /* out of memory: a tool, not the proxy */
            free(data);
            buf_clear(&chunk_raw);
            buf_clear(&chunk_xc);
            for (;;) {
                const uint8_t *p = buf_head(&ds->in);
                size_t n = ds->in.len;
                long sz;
                if (n == 0) break;
                if (dir == 0 && !ds->started) {
                    struct xw_setup_request sr;
                    sz = xw_parse_setup_request(p, n, &sr);
                    if (sz == -EAGAIN) break;
                    if (sz < 0) { fprintf(stderr, "bad setup request\n"); return 1; }
                    ds->started = true;
                    buf_consume(&ds->in, (size_t)sz);
                    continue; /* tincan sends OPEN instead */
                }
                if (dir == 0) {
                    struct xw_request rq;
                    sz = xw_next_request(p, n, c->msb, true, 16u << 20, &rq);
                } else if (!ds->started) {
                    sz = xw_setup_reply_size(p, n, c->msb);
                    if (sz > 0 && (size_t)sz > n) sz = -EAGAIN;
                    if (sz > 0) ds->started = true;
                } else {
                    struct xw_server_msg m;
                    sz = xw_next_server_msg(p, n, c->msb, 256u << 20, &m);
                }
                if (sz == -EAGAIN) break;
                if (sz < 0) { fprintf(stderr, "%s: framing error %ld\n", argv[a], sz); return 1; }
                if (buf_append(&chunk_raw, p, (size_t)sz) < 0)
                    abort(); /* out of memory: a tool, not the proxy */
                size_t before = chunk_xc.len;
                double t0 = cpu_now();
                if (xenc_message(ds->enc, p, (size_t)sz, &chunk_xc) < 0) { fprintf(stderr, "encode failed\n"); return 1; }
                double t1 = cpu_now();
                t[dir].enc_s += t1 - t0;
                /* decode what was just encoded, through the streaming decoder */
                if (buf_append(&ds->wire, buf_head(&chunk_xc) + before, chunk_xc.len - before) < 0)
                    abort(); /* out of memory: a tool, not the proxy */
                if (ds->head.len < XC_DUMP_MAX) {
                    size_t n_enc = chunk_xc.len - before, room = XC_DUMP_MAX - ds->head.len;
                    if (buf_append(&ds->head, buf_head(&chunk_xc) + before, n_enc < room ? n_enc : room) < 0)
                        abort(); /* out of memory: a tool, not the proxy */
                }
                buf_clear(&dec_out);
                t0 = cpu_now();
                long used = xdec_feed(ds->dec, buf_head(&ds->wire), ds->wire.len, &dec_out);
                t[dir].dec_s += cpu_now() - t0;
                if (used < 0 || dec_out.len != (size_t)sz || memcmp(buf_head(&dec_out), p, (size_t)sz)) {
                    fprintf(stderr, "%s: MISMATCH conn %u dir %u msg %llu (op %u len %ld, used %ld, got %zu)\n", argv[a],
                            cid, dir, (unsigned long long)t[dir].msgs, p[0], sz, used, dec_out.len);
                    bad = 1;
                    return 1;
                }
                buf_consume(&ds->wire, (size_t)used);
                t[dir].msgs++;
                if (getenv("XC_LIST")) { /* per message: where the coded bytes go, and the code */
                    fprintf(stderr, "msg %u %u %u %u %ld %zu ", cid, dir, p[0], dir == 0 ? p[1] : 0, sz,
                            chunk_xc.len - before);
                    for (size_t k = before; k < chunk_xc.len; k++)
                        fprintf(stderr, "%02x", buf_head(&chunk_xc)[k]);
                    fprintf(stderr, "\n");
                }
                buf_consume(&ds->in, (size_t)sz);
            }
            if (chunk_raw.len) {
                t[dir].chunks++;
                t[dir].raw += chunk_raw.len;
                t[dir].xc += chunk_xc.len;
                double dummy = 0;
                t[dir].zraw += zflush(zr[dir], buf_head(&chunk_raw), chunk_raw.len, &dummy);
                t[dir].zxc += zflush(zx[dir], buf_head(&chunk_xc), chunk_xc.len, &t[dir].z_s);
            }
        }
        fclose(f);
        if (pc) {
            struct buf saved = { 0 };
            FILE *pf = xc_pixcache_save(pc, &saved) == 0 && saved.len ? fopen(pc_file, "wb") : NULL;
            if (pf) {
                fwrite(buf_head(&saved), 1, saved.len, pf);
                fclose(pf);
            }
            fprintf(stderr, "%s: %llu pixel bodies coded again, %zu bytes of them saved\n", argv[a],
                    (unsigned long long)xc_pixcache_hits(pc), saved.len);
            buf_free(&saved);
            xc_pixcache_free(pc);
        }
        const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        for (int d = 0; d < 2; d++) {
            double mb = t[d].raw / 1e6;
            printf("| %s | %s | %llu | %llu | %llu | %llu | %llu | %.2f | %.3f | %.3f | %.3f |\n", name,
                   d ? "server->client" : "client->server", (unsigned long long)t[d].msgs,
                   (unsigned long long)t[d].raw, (unsigned long long)t[d].zraw, (unsigned long long)t[d].xc,
                   (unsigned long long)t[d].zxc, t[d].zraw ? (double)t[d].zxc / t[d].zraw : 0,
                   mb > 0 ? t[d].enc_s / mb : 0, mb > 0 ? t[d].dec_s / mb : 0, mb > 0 ? t[d].z_s / mb : 0);
        }
        printf("| %s | total | %llu | %llu | %llu | %llu | %llu | %.2f | | | |\n", name,
               (unsigned long long)(t[0].msgs + t[1].msgs), (unsigned long long)(t[0].raw + t[1].raw),
               (unsigned long long)(t[0].zraw + t[1].zraw), (unsigned long long)(t[0].xc + t[1].xc),
               (unsigned long long)(t[0].zxc + t[1].zxc),
               (double)(t[0].zxc + t[1].zxc) / (double)(t[0].zraw + t[1].zraw));
        /* XC_DUMP=DIR: each stream's start as a seed of fuzz_xcodec (first byte: direction, order) */
        const char *dump = getenv("XC_DUMP");
        for (int i = 0; dump && i < MAX_CONN; i++)
            for (int d = 0; d < 2; d++) {
                if (!conns[i].d[d].head.len) continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s-%d-%s", dump, name, i, d ? "server" : "requests");
                FILE *o = fopen(path, "wb");
                if (!o) { perror(path); return 1; }
                uint8_t mode = (uint8_t)((d ? 2 : 0) | (conns[i].msb ? 4 : 0));
                fwrite(&mode, 1, 1, o);
                fwrite(buf_head(&conns[i].d[d].head), 1, conns[i].d[d].head.len, o);
                fclose(o);
            }
        for (int i = 0; i < MAX_CONN; i++)
            for (int d = 0; d < 2; d++) {
                buf_free(&conns[i].d[d].head);
                xenc_free(conns[i].d[d].enc);
                xdec_free(conns[i].d[d].dec);
                buf_free(&conns[i].d[d].in);
                buf_free(&conns[i].d[d].wire);
            }
        for (int d = 0; d < 2; d++) { ZSTD_freeCCtx(zr[d]); ZSTD_freeCCtx(zx[d]); }
        buf_free(&chunk_raw); buf_free(&chunk_xc); buf_free(&dec_out);
    }
    return bad;
}
