/* fuzz_hint.c -- libFuzzer target for what the app side parses of a local client's own
 * files (hint.h): its environment block (/proc/PID/environ) and its app-defaults file,
 * which a client's user controls. With bit 0 of the first byte the rest is an app-defaults
 * file, else an environment; either way the hint found must encode as a valid HINT frame. */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "link/frame.h"
#include "proxy/hint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    struct hint h;
    memset(&h, 0, sizeof h);
    if (data[0] & 1) {
        hint_app_defaults_fonts(p, n, &h);
    } else {
        size_t len;
        hint_env_value(p, n, "LANG", &len);
        if (hint_env_utf8(p, n))
            h.flags |= HINT_FONT_SET;
    }
    struct frame_hint f, back;
    hint_to_frame(&h, &f);
    struct buf out = { 0 };
    struct frame fr;
    if (frame_hint_encode(&out, 1, &f) == 0 && frame_decode(buf_head(&out), out.len, &fr) > 0 &&
        frame_hint_parse(&fr, &back) < 0)
        __builtin_trap(); /* what the app side reads must make a frame the display side takes */
    buf_free(&out);
    return 0;
}
