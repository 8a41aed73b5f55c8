/* textcoder.h -- the link's coder for text-like writes (docs/PROTOCOL.md 2.4): context
 * mixing of the previous 1-6 bytes and the word, with a match model, over one direction's
 * history, for whole writes of up to TC_MAX_INPUT bytes (a terminal's lines of text with
 * their X requests). A write is decoded only once its whole code is there, so unlike the
 * small coder it needs no undo. Both ends run the same integer code. */
#ifndef TINCAN_TEXTCODER_H
#define TINCAN_TEXTCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define TC_MAX_INPUT 65536u                  /* bytes of one write, at most */
#define TC_MAX_CODE (12u * TC_MAX_INPUT + 8)  /* its code, at most (12 bits per bit at worst) */
#define TC_HISTORY (1u << 18)                /* what the match model looks back into */
#define TC_FEED_MAX 65536u                   /* what another chunk gives the history, at most */

struct tc_model;

/* 0 or -ENOMEM. */
int tc_new(struct tc_model **out);
void tc_free(struct tc_model *m);
/* Bytes a model holds. */
size_t tc_memory(void);
/* Bytes of the direction that were not coded here (other chunks, a prime): the first
 * limit (of tc_write_start) of them join the history and the contexts of the next byte,
 * as on the other end, in any number of calls. */
void tc_feed(struct tc_model *m, const uint8_t *p, size_t n);
/* A link write (whole frames) begins: at every chunk, coded here or not, at both ends;
 * tc_feed then takes at most limit of its bytes. */
void tc_write_start(struct tc_model *m, size_t limit);
/* Appends the code of p[0, n), 1 <= n <= TC_MAX_INPUT: 0, -EINVAL or -ENOMEM. */
int tc_encode(struct tc_model *m, const uint8_t *p, size_t n, struct buf *out);
/* Decodes the code in[0, code_len) of n bytes into out: 0, or -EBADMSG when the code does
 * not end where its bits say (the model is then of no further use: the link is corrupt). */
int tc_decode(struct tc_model *m, const uint8_t *in, size_t code_len, uint8_t *out, size_t n);
/* Whether a write is text enough to be worth the CPU (about 0.3 us a byte per end). */
bool tc_suits(const uint8_t *p, size_t n);

#endif
