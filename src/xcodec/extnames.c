/* extnames.c -- requests that are a known extension's name (QueryExtension, XInput's
 * GetExtensionVersion: a length, two zero bytes, the name, zeros), coded as the name's
 * index in a fixed table (docs/PROTOCOL.md 5.2, NAMED records). Every program asks for a
 * few extensions at start; a name new to the session otherwise costs 10 to 30 link bytes. */
#include <errno.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

/* Part of the protocol: new names go at the end, none is ever removed or moved. The
 * extensions of Xorg and Xvfb, then others clients ask for. */
static const char *const ext_names[] = {
    "BIG-REQUESTS", "Composite", "DAMAGE", "DOUBLE-BUFFER", "GLX", "Generic Event Extension",
    "MIT-SCREEN-SAVER", "MIT-SHM", "Present", "RANDR", "RECORD", "RENDER", "SECURITY", "SHAPE",
    "SYNC", "X-Resource", "XC-MISC", "XFIXES", "XINERAMA", "XInputExtension", "XKEYBOARD", "XTEST",
    "XVideo", "DPMS", "DRI2", "DRI3", "XFree86-VidModeExtension", "XFree86-DGA", "XFree86-DRI",
    "XFree86-Bigfont", "XFree86-Misc", "XVideo-MotionCompensation", "SGI-GLX", "NV-GLX", "NV-CONTROL",
    "Multi-Buffering", "MIT-SUNDRY-NONSTANDARD", "TOG-CUP", "Extended-Visual-Information", "XpExtension",
    "LBX", "XEVIE", "Apple-WM", "Apple-DRI", "Windows-WM", "XC-APPGROUP", "XTEST1", "XTrap",
};
#define EXT_NAMES (sizeof ext_names / sizeof *ext_names)
#define QUERY_EXTENSION 98

/* Which requests may be NAMED: QueryExtension, and any extension's (whose opcode and
 * minor the server chose; only the layout counts). */
bool xc_named_op(uint8_t byte0) { return byte0 == QUERY_EXTENSION || byte0 >= 128; }

/* The request's byte 1: QueryExtension's is unused (zero), an extension's is its minor. */
static uint8_t byte1_of(uint8_t byte0, uint8_t minor) { return byte0 >= 128 ? minor : 0; }

int xc_named_index(const uint8_t *msg, size_t len, bool msb)
{
    if (len < 12 || len > 64 || !xc_named_op(msg[0]) || (msg[0] < 128 && msg[1]) ||
        ld16(msg + 2, msb) * 4u != len || msg[6] || msg[7])
        return -1;
    uint16_t n = ld16(msg + 4, msb);
    if (len != 8 + (n + 3u) / 4 * 4)
        return -1;
    for (size_t k = 8u + n; k < len; k++)
        if (msg[k])
            return -1;
    for (unsigned i = 0; i < EXT_NAMES; i++)
        if (strlen(ext_names[i]) == n && !memcmp(ext_names[i], msg + 8, n))
            return (int)i;
    return -1;
}

int xc_named_build(uint8_t byte0, uint8_t minor, uint8_t index, bool msb, struct buf *out, uint32_t *len)
{
    if (!xc_named_op(byte0) || index >= EXT_NAMES)
        return -EBADMSG;
    size_t n = strlen(ext_names[index]);
    *len = (uint32_t)(8 + (n + 3) / 4 * 4);
    uint8_t *p = buf_append_space(out, *len);
    if (!p)
        return -ENOMEM;
    memset(p, 0, *len);
    p[0] = byte0;
    p[1] = byte1_of(byte0, minor);
    st16(p + 2, (uint16_t)(*len / 4), msb);
    st16(p + 4, (uint16_t)n, msb);
    memcpy(p + 8, ext_names[index], n);
    return 0;
}
