/* dict_builtin.h -- the built-in dictionaries of the link's streams (docs/PROTOCOL.md 2.5):
 * a recorded session start and the first messages of a few small X programs, per
 * direction, compiled in so that both sides hold the same bytes (CAP_BUILTIN). */
#ifndef TINCAN_DICT_BUILTIN_H
#define TINCAN_DICT_BUILTIN_H

#include <stddef.h>
#include <stdint.h>

extern const uint8_t dict_builtin_up[];    /* app side -> display side */
extern const size_t dict_builtin_up_len;
extern const uint8_t dict_builtin_down[];  /* display side -> app side */
extern const size_t dict_builtin_down_len;

#endif
