/* codec.h -- the link's entropy stage: one zstd stream per direction for the life of
 * the link, flushed at every link write so nothing waits for more data to compress.
 * Each zstd frame of a stream is primed with the last bytes that went before it in that
 * direction (at link start: the cached dictionary both sides agreed on), so a warm
 * session refers back to the previous one. Sits between the frames and the transport;
 * knows nothing of frames. */
#ifndef TINCAN_CODEC_H
#define TINCAN_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define CODEC_DEFAULT_LEVEL 3
#define CODEC_LEVEL_AUTO (-1)      /* session_config.compress_level: choose by link speed */
#define CODEC_WINDOW_LOG 24        /* 16 MiB of history: the largest window, and a peer's
                                    * that does not say (PROTOCOL.md 1) */
#define CODEC_WINDOW_LOG_MIN 17    /* 128 KiB: the smallest window a memory bound chooses */
#define CODEC_WINDOW_LOG_MAX 24    /* what the decompressor accepts from a peer, at most */
#define CODEC_PRIME_MAX (16u << 20) /* bytes a frame is primed with, at most: the largest window */

/* Link speed presets (like nxproxy's link=): the zstd level each starts at; auto starts at
 * the default and follows the measured link rate. */
enum codec_speed { CODEC_SPEED_AUTO, CODEC_SPEED_MODEM, CODEC_SPEED_ISDN, CODEC_SPEED_ADSL, CODEC_SPEED_LAN };
enum codec_dir { CODEC_TX, CODEC_RX };

struct codec;

/* level: a zstd level (fixed), or CODEC_LEVEL_AUTO to follow speed. 0 or -ENOMEM.
 * window_log (CODEC_WINDOW_LOG_MIN..CODEC_WINDOW_LOG) sizes the window, the prime and the
 * history of both directions, so both sides of a link must use the same one. */
int codec_new(struct codec **out, int level);
int codec_new_speed(struct codec **out, int level, enum codec_speed speed);
int codec_new_window(struct codec **out, int level, enum codec_speed speed, int window_log);
/* The window log a memory bound (bytes) affords: the codec of one side then holds about
 * codec_reserve() bytes at most, an eighth of the bound or less. */
int codec_window_for(uint64_t bound);
uint64_t codec_reserve(int window_log);
/* What text chunks (PROTOCOL.md 2.4) may add to that, at most. */
uint64_t codec_text_reserve(void);
/* What the codec holds now (zstd's contexts, histories, prefixes), in bytes. */
uint64_t codec_memory(const struct codec *c);
int codec_window_log(const struct codec *c);
void codec_free(struct codec *c);
/* Primes direction d with the bytes that preceded the stream (a cached dictionary), before
 * any data has gone through it. Copies p. 0, -EINVAL (data already flowed) or -ENOMEM. */
int codec_prime(struct codec *c, enum codec_dir d, const uint8_t *p, size_t n);
/* From now on, both directions are chunks (PROTOCOL.md 2.4): a write of at most
 * SC_MAX_INPUT bytes goes through the small coder, a larger one through zstd. Both sides
 * call it, before any data (both offered CAP_SMALL). 0, -EINVAL (too late) or -ENOMEM. */
int codec_use_small(struct codec *c);
/* Whether this side may send text chunks (on by default; only the sender decides, the
 * receiver decodes them either way). */
void codec_text_tx(struct codec *c, bool on);
/* CAP_BUILTIN: every zstd frame of direction d is primed with p[0, n) (static: not
 * copied) before the history, and so is the small coder's history. Call after
 * codec_use_small and codec_prime, before any data. 0, -EINVAL or -ENOMEM. */
int codec_set_builtin(struct codec *c, enum codec_dir d, const uint8_t *p, size_t n);
/* Compresses n bytes (one link write) and flushes: appends what decodes them all to out. */
int codec_compress(struct codec *c, const uint8_t *p, size_t n, struct buf *out);
/* Decompresses from in, appending at most max_out bytes to out and consuming the input it
 * used. Returns 1 if it stopped because of max_out (call again after using out), 0 when
 * all input is used, -EBADMSG on corrupt input. Bounding each step keeps a small
 * compressed message that expands hugely (a blank image) from ballooning memory. With
 * chunks (codec_use_small), max_out must be SC_MAX_INPUT at least (else -EINVAL). */
int codec_decompress(struct codec *c, struct buf *in, struct buf *out, size_t max_out);

/* Bytes that have gone through direction d's stream (not counting the prime). */
uint64_t codec_total(const struct codec *c, enum codec_dir d);
/* The last at most window bytes of direction d (prime included) that end at stream
 * offset end (<= codec_total). Points into the codec, valid until its next call.
 * 0, or -ERANGE when those bytes are no longer held. */
int codec_history(const struct codec *c, enum codec_dir d, uint64_t end, const uint8_t **p, size_t *n);

/* The link's recent delivery rate (bytes per second; 0: unknown). With an automatic
 * level, the codec turns compression down when it costs more time than it saves. */
void codec_set_link_rate(struct codec *c, uint64_t rate_Bps);
int codec_level(const struct codec *c);
/* Sets the level from the next compression on: the frame ends and a new one starts,
 * primed with the history, so nothing already sent is lost to references. */
void codec_set_level(struct codec *c, int level);
/* The zstd level a preset starts at. */
int codec_speed_level(enum codec_speed s);
/* "modem", "isdn", "adsl", "lan", "auto" -> preset; -1 if unknown. */
int codec_speed_parse(const char *s);

#endif
