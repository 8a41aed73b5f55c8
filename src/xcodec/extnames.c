/* extnames.c -- QueryExtension's body model: a name of a known extension as its index
 * in a fixed table (docs/PROTOCOL.md 5.2). Every program asks for a few extensions at
 * start; a name new to the session otherwise crosses as its bytes (or, before, as
 * differences from the previous name), some 10 to 30 link bytes each. */
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
#define EXT_BODY_MAX 64 /* bytes: longer bodies are never a table name */

bool xc_extname_fits(uint32_t blen) { return blen >= 4 && blen <= EXT_BODY_MAX; }

/* The name's length (bytes 4-5 of the request) and whether the body is that many bytes
 * padded with zeros to a multiple of 4. */
static bool padded_name(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, uint16_t *n)
{
    *n = ld16(fixed + 4, msb);
    if (blen != (*n + 3u) / 4 * 4)
        return false;
    for (uint32_t k = *n; body && k < blen; k++)
        if (body[k])
            return false;
    return true;
}

int xc_extname_encode(const uint8_t *fixed, const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    uint16_t n;
    if (!xc_extname_fits(blen) || !padded_name(fixed, body, blen, msb, &n))
        return 1;
    for (uint8_t i = 0; i < EXT_NAMES; i++)
        if (strlen(ext_names[i]) == n && !memcmp(ext_names[i], body, n))
            return buf_append(out, &i, 1) < 0 ? -ENOMEM : 0;
    return 1;
}

int xc_extname_decode(const uint8_t *fixed, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    uint8_t i;
    uint16_t n;
    int rc = rd_u8(r, &i);
    if (rc < 0)
        return rc;
    if (i >= EXT_NAMES || !padded_name(fixed, NULL, blen, msb, &n) || strlen(ext_names[i]) != n)
        return -EBADMSG;
    memcpy(dst, ext_names[i], n);
    memset(dst + n, 0, blen - n);
    return 0;
}
