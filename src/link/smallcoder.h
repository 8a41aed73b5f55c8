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
#define SC_MAX_CODE 8448u   /* code of one write, at most (a bit settles 4 bytes at worst) */

struct sc_model;

/* 0 or -ENOMEM. */
int sc_new(struct sc_model **out);
void sc_free(struct sc_model *m);
/* Bytes the model holds. */
size_t sc_memory(void);
/* Codes n bytes (1..SC_MAX_INPUT) and appends the code to out: 0, -EINVAL or -ENOMEM. */
int sc_encode(struct sc_model *m, const uint8_t *p, size_t n, struct buf *out);
/* Decodes one write's code (code[0, len), len <= SC_MAX_CODE) and appends its bytes to out.
 * 0, -EBADMSG (a code no encoder makes) or -ENOMEM. Any other input decodes to some bytes:
 * the frames after it are checked as ever. */
int sc_decode(struct sc_model *m, const uint8_t *code, size_t len, struct buf *out);

#endif
