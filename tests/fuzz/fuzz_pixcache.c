/* fuzz_pixcache.c -- libFuzzer target for a cache file's set of pixel bodies
 * (xc_pixcache_load: bytes from disk that may be anything). A set it takes must be in the
 * saved form already: saved again untouched, it gives back the very same bytes. */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "xcodec/xcodec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xc_pixcache *c;
    if (xc_pixcache_new(&c, XC_PIXCACHE_BYTES) < 0)
        return 0;
    if (xc_pixcache_load(c, data, size) == 0) {
        struct buf again = { 0 };
        if (xc_pixcache_loaded(c) == 0 || xc_pixcache_save(c, &again) < 0 || again.len != size ||
            memcmp(buf_head(&again), data, size))
            __builtin_trap();
        buf_free(&again);
    }
    xc_pixcache_free(c);
    return 0;
}
