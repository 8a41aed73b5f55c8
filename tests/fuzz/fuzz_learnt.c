/* fuzz_learnt.c -- libFuzzer target for the file of questions remembered across sessions
 * (learnt_parse), on bytes that may be anything. The identity expected is the one the input
 * names (bytes 20..51), and each input is tried twice: as it is, and with its checksum made
 * right (bytes 52..83), so mutations reach the entries behind the checksum. */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "proxy/learnt.h"

static void parse_one(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_one(data, size);
    if (size < LEARNT_HEADER_SIZE || size > LEARNT_MAX_BYTES || sodium_init() < 0)
        return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    static const char label[] = "tincan learnt v1"; /* as learnt.c computes it */
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 32);
    crypto_generichash_update(&st, (const uint8_t *)label, sizeof label);
    crypto_generichash_update(&st, fixed + 20, LEARNT_ID_SIZE);
    crypto_generichash_update(&st, fixed + LEARNT_HEADER_SIZE, size - LEARNT_HEADER_SIZE);
    crypto_generichash_final(&st, fixed + 20 + LEARNT_ID_SIZE, 32);
    parse_one(fixed, size);
    free(fixed);
    return 0;
}

static void parse_one(const uint8_t *data, size_t size)
{
    struct learnt *l;
    if (learnt_new(&l, NULL) < 0)
        return;
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
}
