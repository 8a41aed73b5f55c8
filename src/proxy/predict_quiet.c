/* predict_quiet.c -- quiet requests: without a reply, touching only the client's own resources
 * (ids in its range) from a fixed list, so that only a client's bug or the server's running
 * out of memory makes them fail; later requests may then be answered locally (PROTOCOL.md 3.2). */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"

void predict_learn_connection(struct predict_questions *pq, const uint8_t *setup, size_t size, bool msb)
{
    if (size < 20 || setup[0] != 1)
        return;
    pq->id_base = ld32(setup + 12, msb);
    pq->id_mask = ld32(setup + 16, msb);
    pq->have_ids = true;
}

static bool own_id(const struct predict_questions *pq, const uint8_t *req, uint32_t size, uint32_t at, bool msb)
{
    if (!pq->have_ids || size < at + 4)
        return false;
    uint32_t id = ld32(req + at, msb);
    return id && (id & ~pq->id_mask) == pq->id_base;
}

static bool own_or_none(const struct predict_questions *pq, const uint8_t *req, uint32_t size, uint32_t at, bool msb)
{
    return size >= at + 4 && (!ld32(req + at, msb) || own_id(pq, req, size, at, msb));
}

/* The reply the connection got to its first request of this extension, when that request
 * was the handshake `minor` (requests of the extension before it fail or are refused). */
static const struct exchange *ext_opened(const struct predictor *p, const struct predict_questions *pq,
                                         const uint8_t *req, uint8_t minor, bool msb)
{
    const struct predict_history *h = pq->hist && req[0] >= 128 ? &pq->hist[req[0] - 128] : NULL;
    uint32_t first = h && h->len >= 4 ? 4u * ld16(h->bytes + 2, msb) : 0;
    if (!first || first > h->len || h->bytes[1] != minor)
        return NULL;
    return pd_exchange_find(p, EX_REQ, msb, h->bytes, first);
}

/* The core keyboard's XKB device id, from a GetMap reply the display side got for
 * UseCoreKbd (a device id is a byte; 0x100 when not known). */
static uint16_t core_keyboard_id(const struct predictor *p, uint8_t major)
{
    for (uint32_t i = 0; i < p->n_ex; i++) {
        const struct exchange *e = &p->ex[i];
        uint32_t at = pd_exchange_get_map_at(e, major);
        if (at && at + 6 <= e->key_len && ld16(e->key + at + 4, e->msb) == 0x100)
            return e->reply[1];
    }
    return 0x100;
}

/* Extension requests that only create, change or free the client's own resources. Each
 * fails only for a bug of the client (a wrong id, format or value) or for want of memory. */
static bool quiet_extension(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                            const uint8_t *req, uint32_t size, bool msb)
{
    const struct exchange *e;
    if (!strcmp(cls->ext, "XKEYBOARD")) {
        /* SelectEvents on the core keyboard, after UseExtension said yes (else BadAccess) */
        e = ext_opened(p, pq, req, 0, msb);
        if (cls->minor != 1 || size < 16 || !e || e->reply[1] != 1)
            return false;
        return ld16(req + 4, msb) == 0x100 /* UseCoreKbd */ || ld16(req + 4, msb) == core_keyboard_id(p, req[0]);
    }
    if (!strcmp(cls->ext, "XFIXES")) {
        /* XFIXES 2 requests, after QueryVersion agreed on 2 or later (the server refuses
         * requests beyond the version agreed): SetCursorName on its own cursor, */
        e = ext_opened(p, pq, req, 0, msb);
        if (!e || ld32(e->reply + 8, e->msb) < 2 || !own_id(pq, req, size, 4, msb))
            return false;
        /* SelectSelectionInput on its own window, of an atom that exists (else BadAtom), with
         * the three defined event bits (else BadValue): events only when owners change later */
        if (cls->minor == 2)
            return size == 16 && predict_atom_known(p, ld32(req + 8, msb)) && ld32(req + 12, msb) <= 7;
        return cls->minor == 23;
    }
    if (strcmp(cls->ext, "RENDER"))
        return false;
    switch (cls->minor) {
    case 4:                         /* CreatePicture: no alpha map or clip mask (other resources) */
        return own_id(pq, req, size, 4, msb) && own_id(pq, req, size, 8, msb) && size >= 20 &&
               !(ld32(req + 16, msb) & (1u << 1 | 1u << 6));
    case 5:                         /* ChangePicture, likewise */
        return own_id(pq, req, size, 4, msb) && size >= 12 && !(ld32(req + 8, msb) & (1u << 1 | 1u << 6));
    case 6: case 7:                 /* SetPictureClipRectangles, FreePicture */
    case 17: case 19: case 20: case 22: /* Create/FreeGlyphSet, AddGlyphs, FreeGlyphs */
    case 33:                        /* CreateSolidFill */
        return own_id(pq, req, size, 4, msb);
    case 8:                         /* Composite: source, mask (or none), destination */
        return own_id(pq, req, size, 8, msb) && own_or_none(pq, req, size, 12, msb) && own_id(pq, req, size, 16, msb);
    case 26:                        /* FillRectangles */
        return own_id(pq, req, size, 8, msb);
    case 27:                        /* CreateCursor from its own picture */
        return own_id(pq, req, size, 4, msb) && own_id(pq, req, size, 8, msb);
    default:
        return false;
    }
}

bool predict_quiet(const struct predictor *p, const struct predict_questions *pq, const struct msg_class *cls,
                   const uint8_t *req, uint32_t size, bool msb)
{
    if (cls->kind != MSG_REQUEST || size < 4)
        return false;
    if (cls->ext)
        return req[0] >= 128 && quiet_extension(p, pq, cls, req, size, msb);
    switch (cls->major) {
    case 36: case 37:                                  /* Grab/UngrabServer: no reply, error or event */
        return size == 4;
    case 1: case 2: case 8: case 9: case 10: case 12:  /* Create/ChangeAttributes/Map/MapSub/Unmap/Configure Window */
    case 18: case 19:                                  /* Change/DeleteProperty on its own window */
    case 46:                                           /* CloseFont */
    case 53: case 54: case 55: case 56: case 59: case 60: /* Create/FreePixmap, Create/ChangeGC, SetClipRectangles, FreeGC */
    case 61:                                           /* ClearArea */
    case 93: case 94: case 95: case 96:                /* Create(Glyph)Cursor, FreeCursor, RecolorCursor */
        return own_id(pq, req, size, 4, msb);
    case 28:                                           /* GrabButton on its own window */
        return own_id(pq, req, size, 4, msb) && own_or_none(pq, req, size, 12, msb) && own_or_none(pq, req, size, 16, msb);
    case 64: case 65: case 66: case 67: case 68: case 69: case 70: case 71: /* drawing, own drawable and GC */
    case 72: case 74: case 75: case 76: case 77:       /* PutImage, text */
        return own_id(pq, req, size, 4, msb) && own_id(pq, req, size, 8, msb);
    case XP_OP_OPEN_FONT: {                               /* a font that opened before in this session */
        uint16_t len = size >= 12 ? ld16(req + 8, msb) : 0;
        if (!own_id(pq, req, size, 4, msb) || (uint32_t)len + 12 > size)
            return false;
        for (uint32_t i = 0; i < p->n_fonts_ok; i++)
            if (p->fonts_ok[i].len == len && !memcmp(p->fonts_ok[i].name, req + 12, len))
                return true;
        return pd_exchange_find(p, EX_FONT, msb, req + 12, len);
    }
    default:
        return false;
    }
}
