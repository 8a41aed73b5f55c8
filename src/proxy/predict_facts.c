/* predict_facts.c -- FACT frames on channel 0 (docs/PROTOCOL.md 3.2): both sides decode every
 * kind here, in the same order, so both learn the same; and the display side's encoders of
 * extensions, root properties, the keyboard and fonts that open. */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"

int predict_fact_extension(struct buf *out, const char *name, size_t name_len, const uint8_t reply[32])
{
    uint8_t head[2] = { FACT_EXTENSION, (uint8_t)name_len };
    if (name_len > 255)
        return -EINVAL;
    return buf_append(out, head, 2) || buf_append(out, name, name_len) || buf_append(out, reply + XP_REPLY_HEADER_SIZE, QE_BODY) ? -ENOMEM : 0;
}

int predict_fact_property(struct buf *out, uint32_t window, uint32_t property, uint8_t state, uint32_t type,
                          uint8_t format, const uint8_t *data, size_t len)
{
    uint8_t kind = FACT_PROPERTY;
    if (buf_append(out, &kind, 1) || buf_put_varint(out, window) || buf_put_varint(out, property) ||
        buf_append(out, &state, 1))
        return -ENOMEM;
    if (state != PROP_VALUE)
        return 0;
    return buf_put_varint(out, type) || buf_append(out, &format, 1) || buf_put_varint(out, len) ||
           buf_append(out, data, len) ? -ENOMEM : 0;
}

int predict_fact_selection(struct buf *out, uint32_t selection, uint32_t owner)
{
    uint8_t kind = FACT_SELECTION;
    return buf_append(out, &kind, 1) || buf_put_varint(out, selection) || buf_put_varint(out, owner) ? -ENOMEM : 0;
}

int predict_fact_keyboard(struct buf *out, bool known, uint8_t min_keycode, uint8_t max_keycode, uint8_t per_keycode,
                          const uint8_t *keysyms, uint8_t per_modifier, const uint8_t *modifiers)
{
    uint8_t head[5] = { FACT_KEYBOARD, known, min_keycode, max_keycode, per_keycode };
    if (!known)
        return buf_append(out, head, 2) ? -ENOMEM : 0;
    size_t n = min_keycode <= max_keycode ? 4u * (max_keycode - min_keycode + 1u) * per_keycode : 0;
    return buf_append(out, head, 5) || buf_append(out, keysyms, n) || buf_append(out, &per_modifier, 1) ||
           buf_append(out, modifiers, 8u * per_modifier) ? -ENOMEM : 0;
}

bool predict_keyboard_known(const struct predictor *p) { return p->kb.known; }

int predict_fact_font(struct buf *out, const char *name, size_t len)
{
    uint8_t kind = FACT_FONTS, head = (uint8_t)len;
    if (!len || len > 255)
        return -EINVAL;
    return (!out->len && buf_append(out, &kind, 1)) || buf_append(out, &head, 1) || buf_append(out, name, len)
               ? -ENOMEM : 0;
}

int predict_on_fact(struct predictor *p, const uint8_t *payload, size_t len)
{
    struct rd r = rd_make(payload, len, false);
    uint8_t kind, n, msb;
    const uint8_t *name, *body;
    uint64_t a, l, kl;
    if (rd_u8(&r, &kind))
        return -EBADMSG;
    switch (kind) {
    case FACT_EXTENSION: {
        if (rd_u8(&r, &n) || rd_bytes(&r, &name, n) || rd_bytes(&r, &body, QE_BODY) || rd_left(&r))
            return -EBADMSG;
        int i = pd_find_extension(name, n);
        if (i >= 0) {
            p->ext[i].known = true;
            memcpy(p->ext[i].body, body, QE_BODY);
        } else if (p->n_other_ext < PREDICT_MAX_OTHER_EXT) { /* answered by its name */
            p->other_ext[p->n_other_ext].len = n;
            memcpy(p->other_ext[p->n_other_ext].name, name, n);
            memcpy(p->other_ext[p->n_other_ext++].body, body, QE_BODY);
        }
        return 0;
    }
    case FACT_ATOMS:
        while (rd_left(&r)) {
            if (rd_varint(&r, &a) || rd_varint(&r, &l) || a == 0 || a > UINT32_MAX || l > PREDICT_MAX_NAME ||
                rd_bytes(&r, &name, (size_t)l))
                return -EBADMSG;
            pd_atom_add(p, (uint32_t)a, (const char *)name, (size_t)l);
        }
        return 0;
    case FACT_EXCHANGE:
    case FACT_FONT: /* the same fields; keyed by a font's name (learnt.h) */
        if (rd_u8(&r, &msb) || msb > 1 || rd_varint(&r, &kl) || kl == 0 || kl > PREDICT_MAX_KEY ||
            rd_bytes(&r, &name, (size_t)kl) || rd_varint(&r, &l) || l > PREDICT_MAX_REPLY ||
            rd_bytes(&r, &body, (size_t)l) || rd_left(&r) || !pd_reply_whole(body, (size_t)l, msb))
            return -EBADMSG;
        pd_exchange_add(p, kind == FACT_FONT ? EX_FONT : EX_REQ, msb, name, (size_t)kl, body, (size_t)l);
        return 0;
    case FACT_PROPERTY: {
        uint64_t window, property, type = 0;
        uint8_t state, format = 0;
        body = NULL;
        l = 0;
        if (rd_varint(&r, &window) || rd_varint(&r, &property) || rd_u8(&r, &state) || window > UINT32_MAX ||
            property > UINT32_MAX || state > PROP_VALUE || (state == PROP_VALUE && !property))
            return -EBADMSG;
        if (state == PROP_VALUE &&
            (rd_varint(&r, &type) || rd_u8(&r, &format) || rd_varint(&r, &l) || type > UINT32_MAX ||
             (format != 8 && format != 16 && format != 32) || l > PREDICT_MAX_PROP_BYTES || l % (format / 8) ||
             rd_bytes(&r, &body, (size_t)l)))
            return -EBADMSG;
        if (rd_left(&r))
            return -EBADMSG;
        pd_prop_set(p, (uint32_t)window, (uint32_t)property, state, (uint32_t)type, format, body, (uint32_t)l);
        return 0;
    }
    case FACT_KEYBOARD: {
        uint8_t known, min, max, per_keycode, per_modifier;
        const uint8_t *keysyms, *mods;
        if (rd_u8(&r, &known) || known > 1)
            return -EBADMSG;
        if (!known) {
            if (rd_left(&r))
                return -EBADMSG;
            pd_forget_keyboard(p);
            return 0;
        }
        if (rd_u8(&r, &min) || rd_u8(&r, &max) || rd_u8(&r, &per_keycode) || min < 8 || max < min || !per_keycode ||
            rd_bytes(&r, &keysyms, 4u * (max - min + 1u) * per_keycode) || rd_u8(&r, &per_modifier) ||
            rd_bytes(&r, &mods, 8u * per_modifier) || rd_left(&r))
            return -EBADMSG;
        size_t n_ks = (size_t)(max - min + 1u) * per_keycode;
        uint32_t *k = malloc(n_ks * sizeof *k);
        if (!k)
            return 0; /* not known: asked of the server */
        for (size_t i = 0; i < n_ks; i++)
            xp_card32_at(keysyms, 4 * n_ks, i, false, &k[i]);
        free(p->kb.keysyms);
        p->kb.keysyms = k;
        p->kb.min = min;
        p->kb.max = max;
        p->kb.per_keycode = per_keycode;
        p->kb.per_modifier = per_modifier;
        memcpy(p->kb.modifiers, mods, 8u * per_modifier);
        p->kb.known = true;
        return 0;
    }
    case FACT_ATOM_CENSUS: {
        uint64_t next;
        if (rd_varint(&r, &next) || !next || next > UINT32_MAX || rd_left(&r))
            return -EBADMSG;
        if (next > p->census_next) /* it may come after replies that taught later atoms */
            p->census_next = (uint32_t)next;
        while (pd_atom_by_id(p, p->census_next) || pd_unnamed_has(p, p->census_next))
            p->census_next++;
        return 0;
    }
    case FACT_STATE: {
        uint8_t watched;
        uint32_t minors = 0;
        if (rd_u8(&r, &n) || rd_bytes(&r, &name, n) || rd_u8(&r, &watched) || watched > 1 ||
            (rd_left(&r) && (rd_u32(&r, &minors) || !minors)) || rd_left(&r))
            return -EBADMSG;
        int i = pd_find_extension(name, n);
        if (i >= 0) {
            pd_forget_state(p, i, minors);
            p->ext[i].watched = watched;
        }
        return 0;
    }
    case FACT_ATOM_HASHES: {
        uint64_t first;
        if (rd_varint(&r, &first) || !first || !rd_left(&r) || rd_left(&r) % 2 ||
            first + rd_left(&r) / 2 - 1 > UINT32_MAX)
            return -EBADMSG;
        for (uint32_t id = (uint32_t)first; rd_left(&r); id++) {
            const uint8_t *h;
            rd_bytes(&r, &h, 2);
            pd_unnamed_add(p, id, (uint16_t)(h[0] | h[1] << 8));
        }
        return 0;
    }
    case FACT_SELECTION: {
        uint64_t sel, owner;
        if (rd_varint(&r, &sel) || !sel || sel > UINT32_MAX || rd_varint(&r, &owner) || owner > UINT32_MAX ||
            rd_left(&r))
            return -EBADMSG;
        pd_selection_told(p, (uint32_t)sel, (uint32_t)owner);
        return 0;
    }
    case FACT_COLORS:
        return pd_fact_colors(p, &r);
    case FACT_COLOR_TABLE:
        return pd_fact_color_table(p, &r);
    case FACT_FONTS:
        while (rd_left(&r)) {
            if (rd_u8(&r, &n) || !n || rd_bytes(&r, &name, n))
                return -EBADMSG;
            bool known = false;
            for (uint32_t i = 0; i < p->n_fonts_ok && !known; i++)
                known = p->fonts_ok[i].len == n && !memcmp(p->fonts_ok[i].name, name, n);
            if (!known && p->n_fonts_ok < PREDICT_MAX_FONTS_OK) {
                p->fonts_ok[p->n_fonts_ok].len = n;
                memcpy(p->fonts_ok[p->n_fonts_ok++].name, name, n);
            }
        }
        return 0;
    default:
        return -EBADMSG;
    }
}
