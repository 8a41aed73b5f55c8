/* smallcoder.h -- the link's coder for small writes (docs/PROTOCOL.md 2.4): a binary
 * arithmetic coder over a context-mixing model that one direction keeps for the life of
 * the link, so a pointer event or a line request costs a few bytes, not a zstd block.
 * Owns only its model; knows nothing of frames. Both ends run the same integer code. */
#ifndef TINCAN_SMALLCODER_H
#define TINCAN_SMALLCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define SC_MAX_INPUT 256u   /* bytes of one write, at most */
#define SC_MAX_CODE 8448u   /* code of one chunk, at most (a bit settles 4 bytes at worst) */

struct sc_model;

/* 0 or -ENOMEM. */
int sc_new(struct sc_model **out);
/* Two models in one block of memory (a side's: one per direction), each freed by sc_free. */
int sc_new_pair(struct sc_model *out[2]);
void sc_free(struct sc_model *m);
/* Bytes a model holds, at most: half its pair's block (a decoding one keeps a journal too). */
size_t sc_memory(bool decoding);
/* The history the match model looks back into: both ends feed the same bytes in the same
 * order, between chunks. sc_feed_start(limit) begins a piece (a zstd chunk's bytes, or a
 * prime), of which sc_feed then takes the first limit bytes, in any number of calls. */
void sc_feed_start(struct sc_model *m, size_t limit);
void sc_feed(struct sc_model *m, const uint8_t *p, size_t n);
#define SC_FEED_MAX 16384u  /* what a zstd chunk gives the history, at most */
#define SC_FEED_PRIME 131072u /* ... and a prime (its last bytes): the whole history */
/* Appends one chunk (PROTOCOL.md 2.4) that carries n bytes (1..SC_MAX_INPUT): 0, -EINVAL
 * or -ENOMEM. */
int sc_encode(struct sc_model *m, const uint8_t *p, size_t n, struct buf *out);
/* Appends the head of a chunk of len (> 0) zstd bytes, which the caller appends next. */
int sc_encode_zstd_head(struct sc_model *m, uint32_t len, struct buf *out);
/* Appends the head of a text chunk (textcoder.h) of n (> 0) bytes whose code_len (> 0)
 * code bytes the caller appends next. */
int sc_encode_text_head(struct sc_model *m, uint32_t n, uint32_t code_len, struct buf *out);
/* Decodes the chunk at in[0, n): a small write's bytes are appended to out, or *zstd_len
 * says how many code bytes follow its head (0 for a small write): zstd's, or, when
 * *text_len is not 0, a text chunk's code of *text_len bytes; *used is the chunk's (or
 * head's) size. 0; -EAGAIN when it is not all there yet (the model is as before: call
 * again with more); -EBADMSG (a zstd chunk of 0 bytes, or a code whose ending differs
 * from the one its bits give) or -ENOMEM. Any other input decodes to something: the
 * frames it makes are checked as ever. */
int sc_decode(struct sc_model *m, const uint8_t *in, size_t n, struct buf *out, size_t *used, uint32_t *zstd_len,
              uint32_t *text_len);

#endif
