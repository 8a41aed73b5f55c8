/* fuzz_learnt.c -- libFuzzer target for the file of questions remembered across sessions
 * (learnt_parse), on bytes that may be anything. The identity expected is the one the input
 * names (bytes 20..51), so inputs get past that check to the checksum and the entries. */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "proxy/learnt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct learnt *l;
    if (learnt_new(&l, NULL) < 0)
        return 0;
    uint8_t id[LEARNT_ID_SIZE] = { 0 };
    if (size >= 20 + LEARNT_ID_SIZE)
        memcpy(id, data + 20, LEARNT_ID_SIZE);
    learnt_set_identity(l, id);
    if (learnt_parse(l, data, size) == 0) {
        if (learnt_count(l) > LEARNT_MAX_QUESTIONS || size > LEARNT_MAX_BYTES)
            __builtin_trap();
        struct buf b = { 0 };
        learnt_encode(l, &b); /* a file read is written back byte for byte */
        if (b.len != size || memcmp(buf_head(&b), data, size))
            __builtin_trap();
        buf_free(&b);
        learnt_note(l, LEARNT_FONT, (const uint8_t *)"fixed", 5, (const uint8_t[LEARNT_ANSWER_SIZE]){ 0 });
        if (learnt_count(l) > LEARNT_MAX_QUESTIONS)
            __builtin_trap();
    }
    learnt_free(l);
    return 0;
}
