/* codec.c -- zstd streaming compression of the link (libzstd). Workload: many small
 * flushes (a few hundred bytes each on interactive traffic), some large ones (images). */
#include "link/codec.h"

#include <errno.h>
#include <stdlib.h>
#include <zstd.h>

struct codec {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
};

int codec_new(struct codec **out, int level)
{
    struct codec *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->cctx = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    if (!c->cctx || !c->dctx) {
        codec_free(c);
        return -ENOMEM;
    }
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog, CODEC_WINDOW_LOG);
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 0);
    ZSTD_DCtx_setParameter(c->dctx, ZSTD_d_windowLogMax, CODEC_WINDOW_LOG_MAX);
    *out = c;
    return 0;
}

void codec_free(struct codec *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    free(c);
}

int codec_compress(struct codec *c, const uint8_t *p, size_t n, struct buf *out)
{
    ZSTD_inBuffer in = { p, n, 0 };
    for (;;) {
        size_t room = ZSTD_compressBound(n - in.pos) + 64;
        uint8_t *dst = buf_append_space(out, room);
        if (!dst)
            return -ENOMEM;
        ZSTD_outBuffer o = { dst, room, 0 };
        size_t left = ZSTD_compressStream2(c->cctx, &o, &in, ZSTD_e_flush);
        out->len -= room - o.pos;
        if (ZSTD_isError(left))
            return -EIO;
        if (left == 0 && in.pos == n)
            return 0;
    }
}

int codec_decompress(struct codec *c, struct buf *in, struct buf *out, size_t max_out)
{
    uint8_t *dst = buf_append_space(out, max_out);
    if (!dst)
        return -ENOMEM;
    ZSTD_inBuffer i = { buf_head(in), in->len, 0 };
    ZSTD_outBuffer o = { dst, max_out, 0 };
    int rc = 0;
    for (;;) {
        size_t r = ZSTD_decompressStream(c->dctx, &o, &i);
        if (ZSTD_isError(r)) {
            rc = -EBADMSG;
            break;
        }
        if (o.pos == o.size) { /* full: there may be more for this input */
            rc = 1;
            break;
        }
        if (i.pos == i.size)
            break;
    }
    out->len -= max_out - o.pos;
    buf_consume(in, i.pos);
    return rc;
}
