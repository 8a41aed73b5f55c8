/* codec.h -- the link's entropy stage: one zstd stream per direction for the life of
 * the link, flushed at every link write so nothing waits for more data to compress.
 * Sits between the frames and the transport; knows nothing of frames. */
#ifndef TINCAN_CODEC_H
#define TINCAN_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define CODEC_DEFAULT_LEVEL 3
#define CODEC_WINDOW_LOG 22        /* 4 MiB of history: what the compressor may refer back to */
#define CODEC_WINDOW_LOG_MAX 23    /* what the decompressor accepts from a peer */

struct codec;

int codec_new(struct codec **out, int level);   /* 0 or -ENOMEM */
void codec_free(struct codec *c);
/* Compresses n bytes and flushes: appends a self-contained block sequence to out. */
int codec_compress(struct codec *c, const uint8_t *p, size_t n, struct buf *out);
/* Decompresses from in, appending at most max_out bytes to out and consuming the input it
 * used. Returns 1 if it stopped because of max_out (call again after using out), 0 when
 * all input is used, -EBADMSG on corrupt input. Bounding each step keeps a small
 * compressed message that expands hugely (a blank image) from ballooning memory. */
int codec_decompress(struct codec *c, struct buf *in, struct buf *out, size_t max_out);

#endif
