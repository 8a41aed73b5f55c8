/* smallcoder.h -- the link's coder for small writes (docs/PROTOCOL.md 2.4): a binary
 * arithmetic coder over a context-mixing model that one direction keeps for the life of
 * the link, so a pointer event or a line request costs a few bytes, not a zstd block.
 * Owns only its model; knows nothing of frames. Both ends run the same integer code. */
#ifndef TINCAN_SMALLCODER_H
#define TINCAN_SMALLCODER_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define SC_MAX_INPUT 256u   /* bytes of one write, at most */
#define SC_MAX_CODE 8448u   /* code of one chunk, at most (a bit settles 4 bytes at worst) */

struct sc_model;

/* 0 or -ENOMEM. */
int sc_new(struct sc_model **out);
void sc_free(struct sc_model *m);
/* Bytes the model holds. */
size_t sc_memory(void);
/* Appends one chunk (PROTOCOL.md 2.4) that carries n bytes (1..SC_MAX_INPUT): 0, -EINVAL
 * or -ENOMEM. */
int sc_encode(struct sc_model *m, const uint8_t *p, size_t n, struct buf *out);
/* Appends the head of a chunk of len (> 0) zstd bytes, which the caller appends next. */
int sc_encode_zstd_head(struct sc_model *m, uint32_t len, struct buf *out);
/* Decodes the chunk at in[0, n): a small write's bytes are appended to out, or *zstd_len
 * says how many zstd bytes follow its head (0 for a small write); *used is the chunk's (or
 * head's) size. 0; -EAGAIN when it is not all there yet (the model is as before: call
 * again with more); -EBADMSG (a zstd chunk of 0 bytes) or -ENOMEM. Any other input
 * decodes to something: the frames it makes are checked as ever. */
int sc_decode(struct sc_model *m, const uint8_t *in, size_t n, struct buf *out, size_t *used, uint32_t *zstd_len);

#endif
