/* predict_color.c -- TrueColor default colormaps, learnt from the setup reply: the sample
 * server's arithmetic answers AllocColor, QueryColors, AllocNamedColor and LookupColor, trusted
 * once a real reply (or the display side's own check) has matched it, never after one has not. */
#include "proxy/predict_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link/frame.h"
#include "proxy/color_table.h"

static struct truecolor_map *cmap_find(const struct predictor *p, uint32_t colormap)
{
    for (uint32_t i = 0; i < p->n_cmaps; i++)
        if (p->cmaps[i].colormap == colormap)
            return (struct truecolor_map *)&p->cmaps[i];
    return NULL;
}

static unsigned mask_shift(uint32_t mask)
{
    unsigned s = 0;
    while (s < 32 && !(mask >> s & 1))
        s++;
    return s;
}

/* One component as the sample server computes it: the request's value is first rounded to
 * bits_per_rgb bits (miResolveColor), then the nearest of the map's entries is taken
 * (FindBestPixel; the first of equals wins); entry i holds i scaled to 16 bits and
 * rounded to bits_per_rgb the same way (miInitializeColormap). */
static uint16_t resolve(const struct truecolor_map *m, uint16_t v)
{
    return (uint16_t)(((uint32_t)(v >> (16u - m->bits_per_rgb)) * 65535u) / ((1u << m->bits_per_rgb) - 1));
}

/* Entry i of a component's map (miInitializeColormap): what QueryColors says of it. */
static uint16_t entry_value(const struct truecolor_map *m, uint32_t mask, uint32_t i)
{
    uint32_t limc = mask >> mask_shift(mask);
    return resolve(m, (uint16_t)((i * 65535u) / limc));
}

static void component(const struct truecolor_map *m, uint32_t mask, uint16_t want, uint32_t *pixel, uint16_t *got)
{
    uint32_t limc = mask >> mask_shift(mask);
    uint32_t v = resolve(m, want);
    uint32_t best = 0, best_value = 0;
    uint64_t best_d = UINT64_MAX;
    for (uint32_t i = 0; i <= limc; i++) {
        uint32_t e = entry_value(m, mask, i);
        int64_t d = (int64_t)e - (int64_t)v;
        if ((uint64_t)(d * d) < best_d) {
            best_d = (uint64_t)(d * d);
            best = i;
            best_value = e;
        }
    }
    *pixel |= best << mask_shift(mask);
    *got = (uint16_t)best_value;
}

/* AllocColor's answer to the values asked (red, green, blue): the visual's values and the pixel. */
static void truecolor_alloc(const struct truecolor_map *m, const uint16_t rgb[3], struct xp_alloc_color_reply *out)
{
    uint32_t pixel = 0;
    component(m, m->red_mask, rgb[0], &pixel, &out->red);
    component(m, m->green_mask, rgb[1], &pixel, &out->green);
    component(m, m->blue_mask, rgb[2], &pixel, &out->blue);
    if (m->depth == 32) /* the server sets the bits no colour uses (alpha) */
        pixel |= ~(m->red_mask | m->green_mask | m->blue_mask);
    out->pixel = pixel;
}

/* A plausible TrueColor description: contiguous masks of at most 16 bits, rgb bits 1..16. */
static bool truecolor_sane(const struct truecolor_map *m)
{
    const uint32_t masks[3] = { m->red_mask, m->green_mask, m->blue_mask };
    for (int i = 0; i < 3; i++) {
        uint32_t v = masks[i] ? masks[i] >> mask_shift(masks[i]) : 0;
        if (!v || v > 0xffff || (v & (v + 1)))
            return false;
    }
    return m->bits_per_rgb >= 1 && m->bits_per_rgb <= 16;
}

void predict_learn_setup(struct predictor *p, const uint8_t *setup, size_t size, bool msb)
{
    struct xp_setup s;
    if (p->setup_learnt || !xp_setup_view(setup, size, msb, &s) || s.status != 1)
        return;
    p->setup_learnt = true; /* every client sees the same server */
    size_t skip = s.vendor_len + xw_pad4(s.vendor_len) + (size_t)XP_FORMAT_SIZE * s.pixmap_formats_len;
    if (skip > s.rest_len)
        return;
    /* the screens, each followed by its depths, each by its visuals: each view's rest is the next */
    const uint8_t *at = s.rest + skip;
    size_t left = s.rest_len - skip;
    struct xp_screen sc;
    struct xp_depth d;
    struct xp_visualtype v;
    for (unsigned i = 0; i < s.roots_len && xp_screen_view(at, left, msb, &sc); i++) {
        at = sc.rest, left = sc.rest_len;
        for (unsigned k = 0; k < sc.allowed_depths_len; k++) {
            if (!xp_depth_view(at, left, msb, &d))
                return;
            at = d.rest, left = d.rest_len;
            for (unsigned n = 0; n < d.visuals_len; n++) {
                if (!xp_visualtype_view(at, left, msb, &v))
                    return;
                at = v.rest, left = v.rest_len;
                struct truecolor_map m = { .colormap = sc.default_colormap, .depth = d.depth,
                                           .bits_per_rgb = v.bits_per_rgb_value, .red_mask = v.red_mask,
                                           .green_mask = v.green_mask, .blue_mask = v.blue_mask };
                if (v.visual_id == sc.root_visual && v.class == XP_VISUAL_CLASS_TRUE_COLOR && truecolor_sane(&m) &&
                    p->n_cmaps < PREDICT_MAX_COLORMAPS && !cmap_find(p, sc.default_colormap))
                    p->cmaps[p->n_cmaps++] = m;
            }
        }
    }
}

/* The colormap a colour request names, when its answer is arithmetic: a TrueColor default
 * map, trusted (a real reply or the display side's own check matched the formula) unless
 * any_trust (the display side checking the formula itself). */
static const struct truecolor_map *color_map(const struct predictor *p, uint32_t cmap, bool any_trust)
{
    const struct truecolor_map *m = cmap_find(p, cmap);
    return m && !m->broken && (m->verified || any_trust) ? m : NULL;
}

/* QueryColors (dix QueryColors, TrueColor): each pixel's fields index the component maps.
 * A pixel with bits outside the three masks is not answered (the server may call it BadValue). */
static bool answer_query_colors(const struct predictor *p, const uint8_t *req, uint32_t size, uint16_t seq, bool msb,
                                bool any_trust, struct buf *out)
{
    struct xp_query_colors_req q;
    const struct truecolor_map *m = xp_query_colors_req_view(req, size, msb, &q) ? color_map(p, q.cmap, any_trust) : NULL;
    uint32_t n = m ? (uint32_t)q.rest_len / 4 : 0, all = m ? m->red_mask | m->green_mask | m->blue_mask : 0, pixel;
    if (!m || size % 4 || n > PREDICT_MAX_QUERY_COLORS)
        return false;
    for (uint32_t i = 0; xp_card32_at(q.rest, q.rest_len, i, msb, &pixel); i++)
        if (pixel & ~all)
            return false;
    uint8_t *r = pd_reply_space(out, 8u * n);
    if (!r)
        return false;
    xp_query_colors_reply_put(r, XP_QUERY_COLORS_REPLY_SIZE, msb,
                              &(struct xp_query_colors_reply){ .sequence = seq, .length = 2 * n, .colors_len = (uint16_t)n });
    const uint32_t masks[3] = { m->red_mask, m->green_mask, m->blue_mask };
    uint16_t v[3];
    for (uint32_t i = 0; xp_card32_at(q.rest, q.rest_len, i, msb, &pixel); i++) {
        for (int c = 0; c < 3; c++)
            v[c] = entry_value(m, masks[c], (pixel & masks[c]) >> mask_shift(masks[c]));
        xp_rgb_put(r + XP_QUERY_COLORS_REPLY_SIZE + XP_RGB_SIZE * i, XP_RGB_SIZE, msb,
                   &(struct xp_rgb){ .red = v[0], .green = v[1], .blue = v[2] });
    }
    return true;
}

static const struct color_name *color_find(const struct predictor *p, const uint8_t *name, uint16_t len)
{
    for (uint32_t i = 0; i < p->n_colors; i++) {
        const struct color_name *c = &p->colors[i];
        bool same = c->len == len;
        for (uint16_t k = 0; same && k < len; k++) /* ASCII case folding, as strncasecmp in the C locale */
            same = c->name[k] == (name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
        if (same)
            return c;
    }
    return NULL;
}

int predict_color_table_find(const uint8_t *name, uint16_t len)
{
    if (!len || len > COLOR_TABLE_NAME_MAX)
        return -1;
    uint8_t lower[COLOR_TABLE_NAME_MAX + 1];
    for (uint16_t k = 0; k < len; k++)
        lower[k] = (uint8_t)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
    lower[len] = 0;
    int lo = 0, hi = COLOR_TABLE_SIZE - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp((const char *)lower, color_table[mid].name); /* by bytes: the table's order */
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

/* A name's exact value: one the display side told by name, else the colour table's entry
 * when the display side has checked the table against its server. */
static bool color_exact(const struct predictor *p, const uint8_t *name, uint16_t len, uint16_t rgb[3])
{
    const struct color_name *c = color_find(p, name, len);
    if (c) {
        memcpy(rgb, c->rgb, sizeof c->rgb);
        return true;
    }
    int i = p->color_table_on ? predict_color_table_find(name, len) : -1;
    if (i < 0 || p->color_table_off[i / 8] >> (i % 8) & 1)
        return false;
    for (int k = 0; k < 3; k++)
        rgb[k] = (uint16_t)(color_table[i].rgb[k] * 257u);
    return true;
}

/* AllocNamedColor (the name's exact value, then AllocColor of it) and LookupColor (the exact
 * value, then the screen's resolution of it), for names the display side looked up or
 * checked in the colour table. */
static bool answer_named_color(const struct predictor *p, uint8_t major, const uint8_t *req, uint32_t size,
                               uint16_t seq, bool msb, bool any_trust, struct buf *out)
{
    union {
        struct xp_alloc_named_color_req alloc;
        struct xp_lookup_color_req lookup;
    } q;
    bool alloc = major == XP_OP_ALLOC_NAMED_COLOR;
    const struct truecolor_map *m = NULL;
    uint16_t exact[3];
    if (alloc ? xp_alloc_named_color_req_view(req, size, msb, &q.alloc) && q.alloc.name
              : xp_lookup_color_req_view(req, size, msb, &q.lookup) && q.lookup.name)
        m = color_map(p, alloc ? q.alloc.cmap : q.lookup.cmap, any_trust);
    bool known = m && (alloc ? color_exact(p, q.alloc.name, q.alloc.name_len, exact)
                             : color_exact(p, q.lookup.name, q.lookup.name_len, exact));
    uint8_t *r = known ? pd_reply_space(out, 0) : NULL;
    if (!r)
        return false;
    if (alloc) {
        struct xp_alloc_color_reply got;
        truecolor_alloc(m, exact, &got);
        xp_alloc_named_color_reply_put(r, XP_ALLOC_NAMED_COLOR_REPLY_SIZE, msb, &(struct xp_alloc_named_color_reply){
            .sequence = seq, .pixel = got.pixel, .exact_red = exact[0], .exact_green = exact[1],
            .exact_blue = exact[2], .visual_red = got.red, .visual_green = got.green, .visual_blue = got.blue });
    } else {
        xp_lookup_color_reply_put(r, XP_LOOKUP_COLOR_REPLY_SIZE, msb, &(struct xp_lookup_color_reply){
            .sequence = seq, .exact_red = exact[0], .exact_green = exact[1], .exact_blue = exact[2],
            .visual_red = resolve(m, exact[0]), .visual_green = resolve(m, exact[1]),
            .visual_blue = resolve(m, exact[2]) });
    }
    return true;
}

/* The colour requests with arithmetic answers (AllocColor, QueryColors, AllocNamedColor,
 * LookupColor); any_trust: whether or not the formula has been trusted yet. */
bool pd_answer_color(const struct predictor *p, uint8_t major, const uint8_t *req, uint32_t size, uint16_t seq,
                     bool msb, bool any_trust, struct buf *out)
{
    if (major == XP_OP_QUERY_COLORS)
        return answer_query_colors(p, req, size, seq, msb, any_trust, out);
    if (major == XP_OP_ALLOC_NAMED_COLOR || major == XP_OP_LOOKUP_COLOR)
        return answer_named_color(p, major, req, size, seq, msb, any_trust, out);
    struct xp_alloc_color_req q;
    const struct truecolor_map *m = major == XP_OP_ALLOC_COLOR && xp_alloc_color_req_view(req, size, msb, &q)
                                        ? color_map(p, q.cmap, any_trust) : NULL;
    uint8_t *r = m ? pd_reply_space(out, 0) : NULL;
    if (!r)
        return false;
    struct xp_alloc_color_reply a = { .sequence = seq };
    truecolor_alloc(m, (const uint16_t[3]){ q.red, q.green, q.blue }, &a);
    xp_alloc_color_reply_put(r, XP_ALLOC_COLOR_REPLY_SIZE, msb, &a);
    return true;
}

bool predict_color_check(const struct predictor *p, const uint8_t *req, uint32_t size, const uint8_t *reply,
                         uint32_t reply_size)
{
    struct xp_lookup_color_req q;
    struct xp_lookup_color_reply a;
    if (size >= 4 && req[0] == XP_OP_LOOKUP_COLOR) {
        /* the exact value is the name's (asked for); the visual one is the arithmetic's */
        const struct truecolor_map *m = xp_lookup_color_req_view(req, size, false, &q) ? color_map(p, q.cmap, true) : NULL;
        return m && reply_size == XP_LOOKUP_COLOR_REPLY_SIZE && reply[0] == XP_REPLY &&
               xp_lookup_color_reply_view(reply, reply_size, false, &a) && !a.length &&
               a.visual_red == resolve(m, a.exact_red) && a.visual_green == resolve(m, a.exact_green) &&
               a.visual_blue == resolve(m, a.exact_blue);
    }
    struct buf want = { 0 };
    struct xp_server_header w, r;
    bool same = size >= 4 && pd_answer_color(p, req[0], req, size, 0, false, true, &want) && want.len == reply_size &&
                xp_server_header_view(buf_head(&want), want.len, false, &w) &&
                xp_server_header_view(reply, reply_size, false, &r) && reply_size >= XP_SERVER_MSG_SIZE &&
                w.code == r.code && w.data == r.data && w.length == r.length &&
                memcmp(buf_head(&want) + XP_REPLY_HEADER_SIZE, reply + XP_REPLY_HEADER_SIZE,
                       reply_size - XP_REPLY_HEADER_SIZE) == 0; /* all but the sequence number */
    buf_free(&want);
    return same;
}

void pd_learn_alloc_color(struct predictor *p, const struct predict_question *q, const uint8_t *reply, bool msb)
{
    struct truecolor_map *m = cmap_find(p, q->atom);
    if (!m || m->broken)
        return;
    struct xp_alloc_color_reply want, got;
    uint16_t rgb[3];
    memcpy(rgb, q->name, sizeof rgb);
    truecolor_alloc(m, rgb, &want);
    if (xp_alloc_color_reply_view(reply, XP_ALLOC_COLOR_REPLY_SIZE, msb, &got) && want.red == got.red &&
        want.green == got.green && want.blue == got.blue && want.pixel == got.pixel)
        m->verified = true;
    else
        m->broken = true; /* not the sample server's arithmetic: ask the server from now on */
}

int predict_fact_colors(const struct predictor *p, struct buf *out, uint32_t colormap)
{
    const struct truecolor_map *m = cmap_find(p, colormap);
    uint8_t kind = FACT_COLORS, tail[2] = { m ? m->bits_per_rgb : 0, m ? m->depth : 0 };
    if (!m)
        return -ENOENT;
    return buf_append(out, &kind, 1) || buf_put_varint(out, colormap) || buf_put_varint(out, m->red_mask) ||
           buf_put_varint(out, m->green_mask) || buf_put_varint(out, m->blue_mask) || buf_append(out, tail, 2)
               ? -ENOMEM : 0;
}

int predict_fact_color_name(struct buf *out, const char *name, size_t len, const uint16_t rgb[3])
{
    uint8_t head = (uint8_t)len, v[6];
    if (!len || len > 255)
        return -EINVAL;
    for (int k = 0; k < 3; k++)
        xp_card16_put(v, sizeof v, (size_t)k, rgb[k], false);
    return buf_append(out, &head, 1) || buf_append(out, name, len) || buf_append(out, v, 6) ? -ENOMEM : 0;
}

uint32_t predict_truecolor_colormap(const struct predictor *p, uint32_t *pixel_mask)
{
    if (!p->n_cmaps)
        return 0;
    *pixel_mask = p->cmaps[0].red_mask | p->cmaps[0].green_mask | p->cmaps[0].blue_mask;
    return p->cmaps[0].colormap;
}

/* FACT_COLORS: the colormap's description (the app side may not have seen a setup reply
 * yet), trusted from now on, and the colour names. */
int pd_fact_colors(struct predictor *p, struct rd *r)
{
    uint64_t colormap, masks[3];
    uint8_t bits, depth, len;
    const uint8_t *name, *rgb;
    if (rd_varint(r, &colormap) || rd_varint(r, &masks[0]) || rd_varint(r, &masks[1]) || rd_varint(r, &masks[2]) ||
        rd_u8(r, &bits) || rd_u8(r, &depth) || !colormap || colormap > UINT32_MAX || masks[0] > UINT32_MAX ||
        masks[1] > UINT32_MAX || masks[2] > UINT32_MAX)
        return -EBADMSG;
    struct truecolor_map d = { .colormap = (uint32_t)colormap, .red_mask = (uint32_t)masks[0],
                               .green_mask = (uint32_t)masks[1], .blue_mask = (uint32_t)masks[2],
                               .bits_per_rgb = bits, .depth = depth };
    if (!truecolor_sane(&d))
        return -EBADMSG;
    struct color_name names[PREDICT_MAX_COLOR_NAMES];
    uint32_t n = 0;
    while (rd_left(r)) {
        if (rd_u8(r, &len) || !len || rd_bytes(r, &name, len) || rd_bytes(r, &rgb, 6))
            return -EBADMSG;
        if (n == PREDICT_MAX_COLOR_NAMES)
            continue;
        names[n].len = len;
        for (uint8_t k = 0; k < len; k++)
            names[n].name[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
        for (int k = 0; k < 3; k++)
            xp_card16_at(rgb, 6, (size_t)k, false, &names[n].rgb[k]);
        n++;
    }
    struct truecolor_map *m = cmap_find(p, d.colormap);
    if (!m && p->n_cmaps < PREDICT_MAX_COLORMAPS)
        m = &p->cmaps[p->n_cmaps++];
    if (!m)
        return 0;
    bool broken = m->colormap == d.colormap && m->broken;
    *m = d;
    m->broken = broken; /* a real reply that did not match is not outweighed */
    m->verified = true;
    for (uint32_t i = 0; i < n && p->n_colors < PREDICT_MAX_COLOR_NAMES; i++)
        if (!color_find(p, (const uint8_t *)names[i].name, names[i].len))
            p->colors[p->n_colors++] = names[i];
    return 0;
}

int predict_fact_color_table(struct buf *out, const uint8_t off[COLOR_TABLE_OFF_BYTES])
{
    uint8_t head[9] = { FACT_COLOR_TABLE };
    for (int k = 0; k < 8; k++)
        head[1 + k] = (uint8_t)(color_table_hash >> 8 * k);
    if (buf_append(out, head, sizeof head) || buf_put_varint(out, COLOR_TABLE_SIZE))
        return -ENOMEM;
    for (uint32_t i = 0; i < COLOR_TABLE_SIZE; i++)
        if (off[i / 8] >> (i % 8) & 1 && buf_put_varint(out, i))
            return -ENOMEM;
    return 0;
}

/* FACT_COLOR_TABLE: the display side looked up every name of its colour table; when it is
 * ours (the same hash and size), every entry but those listed is answered from now on. A
 * table of another build is not ours: nothing is learnt, and nothing is wrong. */
int pd_fact_color_table(struct predictor *p, struct rd *r)
{
    const uint8_t *hash;
    uint64_t count, index, prev = 0;
    uint8_t off[COLOR_TABLE_OFF_BYTES] = { 0 };
    if (rd_bytes(r, &hash, 8) || rd_varint(r, &count))
        return -EBADMSG;
    uint64_t h = 0;
    for (int k = 7; k >= 0; k--)
        h = h << 8 | hash[k];
    for (bool first = true; rd_left(r); first = false) {
        if (rd_varint(r, &index) || index >= count || (!first && index <= prev))
            return -EBADMSG; /* ascending, within the table */
        if (index < COLOR_TABLE_SIZE)
            off[index / 8] |= (uint8_t)(1u << (index % 8));
        prev = index;
    }
    if (h != color_table_hash || count != COLOR_TABLE_SIZE)
        return 0;
    memcpy(p->color_table_off, off, sizeof off);
    p->color_table_on = true;
    return 0;
}
