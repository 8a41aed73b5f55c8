/* observer_probe.c -- the facts the observer asks for when its connection opens and keeps
 * current: the server's extensions, atoms (and the atom census, polled every 500 ms and as
 * clients connect), the handshake replies of extensions, colour arithmetic, fonts, root
 * properties and the keyboard's mappings; sent as FACT frames on channel 0 (predict.h,
 * docs/PROTOCOL.md 3.2). Clients' setup requests wait for the first answers (held). */
#include "proxy/observer_private.h"

/* ---------------------------------------------------------------- probes at start */

/* Handshakes clients commonly open with, in order per extension (the bytes after the
 * header); each reply is keyed by the requests of that extension up to it. */
static const struct {
    const char *ext;
    uint8_t minor;
    uint8_t body[24];
    uint8_t body_len;
} probes[] = {
    { "BIG-REQUESTS", XP_BIGREQ_OP_ENABLE, { 0 }, 0 },                              /* Enable */
    { "XKEYBOARD", XP_XKB_OP_USE_EXTENSION, { 1, 0, 0, 0 }, 4 },                     /* UseExtension 1.0 (Xlib) */
    /* GetMap of the core keyboard's types, symbols and modifier map (Xlib's XkbGetMap, as
     * xterm asks it); asked again when the keyboard changes (PROBE_GET_MAP) */
    { "XKEYBOARD", XP_XKB_OP_GET_MAP, { 0x00, 0x01, 7, 0 }, 24 },
    { "RENDER", XP_RENDER_OP_QUERY_VERSION, { 0, 0, 0, 0, 11, 0, 0, 0 }, 8 },        /* 0.11 (libXrender, xcb) */
    { "RENDER", XP_RENDER_OP_QUERY_PICT_FORMATS, { 0 }, 0 },
    { "XFIXES", XP_XFIXES_OP_QUERY_VERSION, { 6, 0, 0, 0, 0, 0, 0, 0 }, 8 },         /* 6.0 (libXfixes) */
    /* GTK 3's start, as it sends them */
    { "Generic Event Extension", XP_GE_OP_QUERY_VERSION, { 1, 0, 0, 0 }, 4 },        /* 1.0 */
    { "SHAPE", XP_SHAPE_OP_QUERY_VERSION, { 0 }, 0 },
    { "RANDR", XP_RANDR_OP_QUERY_VERSION, { 1, 0, 0, 0, 6, 0, 0, 0 }, 8 },           /* 1.6 */
    { "Composite", XP_COMPOSITE_OP_QUERY_VERSION, { 0, 0, 0, 0, 4, 0, 0, 0 }, 8 },   /* 0.4 */
    { "DAMAGE", XP_DAMAGE_OP_QUERY_VERSION, { 1, 0, 0, 0, 1, 0, 0, 0 }, 8 },         /* 1.1 */
    /* GetExtensionVersion, twice (libXi) */
    { "XInputExtension", XP_XINPUT_OP_GET_EXTENSION_VERSION,
      { 15, 0, 0, 0, 'X', 'I', 'n', 'p', 'u', 't', 'E', 'x', 't', 'e', 'n', 's', 'i', 'o', 'n' }, 19 },
    { "XInputExtension", XP_XINPUT_OP_GET_EXTENSION_VERSION,
      { 15, 0, 0, 0, 'X', 'I', 'n', 'p', 'u', 't', 'E', 'x', 't', 'e', 'n', 's', 'i', 'o', 'n' }, 19 },
    { "XInputExtension", XP_XINPUT_OP_XI_QUERY_VERSION, { 2, 0, 4, 0 }, 4 },         /* 2.4 */
    { "SYNC", XP_SYNC_OP_INITIALIZE, { 3, 1, 0, 0 }, 4 },                            /* 3.1 (libXext, GTK 3's frame clock) */
    { "DOUBLE-BUFFER", XP_DBE_OP_QUERY_VERSION, { 1, 0, 0, 0 }, 4 },                 /* 1.0 (libXext; emacs) */
    /* the visuals with back buffers, of every screen (none named): emacs's AllocateBackBuffer
     * is quiet on a window of one of them (predict_quiet.c) */
    { "DOUBLE-BUFFER", XP_DBE_OP_GET_VISUAL_INFO, { 0, 0, 0, 0 }, 4 },
};
#define N_PROBES (sizeof probes / sizeof *probes)
_Static_assert(N_PROBES == PROBE_SLOTS, "PROBE_SLOTS counts probes[]");

/* Sends a fact on channel 0 and learns it here too, so both sides' predictors agree. */
void obs_send_session_fact(struct observer *o, struct buf *payload)
{
    if (payload->len && predict_on_fact(o->s->predict, buf_head(payload), payload->len) == 0) {
        (void)!link_send(o->s, FRAME_FACT, 0, buf_head(payload), payload->len); /* on failure the session ends */
    }
    buf_clear(payload);
}

void observer_send_fact(struct observer *o, struct buf *payload)
{
    if (o->s->predict)
        obs_send_session_fact(o, payload);
    buf_clear(payload);
}

/* A root property is no longer known: tell the app side (once). */
void obs_property_changed(struct observer *o, uint32_t property)
{
    if (!o->s->predict || !predict_property_known(o->s->predict, o->root, property))
        return;
    struct buf fact = { 0 };
    predict_fact_property(&fact, o->root, property, PROP_UNKNOWN, 0, 0, NULL, 0);
    obs_send_session_fact(o, &fact);
    buf_free(&fact);
    log_debug("observer: root property %u changed: no longer answered at the app side", property);
}

/* The keyboard's mappings from GetKeyboardMapping's and GetModifierMapping's replies. */
bool obs_send_keyboard(struct observer *o, const uint8_t *km, uint32_t km_size, const uint8_t *mm, uint32_t mm_size)
{
    uint32_t keys = o->max_keycode >= o->min_keycode ? o->max_keycode - o->min_keycode + 1u : 0;
    struct xp_get_keyboard_mapping_reply k;
    struct xp_get_modifier_mapping_reply m;
    if (!km || !mm || !keys || o->min_keycode < 8 || !xp_get_keyboard_mapping_reply_view(km, km_size, false, &k) ||
        !xp_get_modifier_mapping_reply_view(mm, mm_size, false, &m) || !k.keysyms_per_keycode ||
        k.length != keys * k.keysyms_per_keycode ||
        km_size != XP_GET_KEYBOARD_MAPPING_REPLY_SIZE + 4 * keys * k.keysyms_per_keycode || !k.keysyms || !m.keycodes)
        return false;
    struct buf fact = { 0 };
    predict_fact_keyboard(&fact, true, o->min_keycode, o->max_keycode, k.keysyms_per_keycode, k.keysyms,
                          m.keycodes_per_modifier, m.keycodes);
    obs_send_session_fact(o, &fact);
    buf_free(&fact);
    return true;
}

/* Sends one request given as bytes after its header. */
void obs_send_bytes(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len,
                       struct pending p)
{
    uint32_t words[72];
    uint8_t bytes[sizeof words] = { 0 };
    if (body_len > sizeof words)
        return;
    if (body_len)
        memcpy(bytes, body, body_len); /* the bytes as they are: words go out in this order, LSB */
    for (unsigned i = 0; i < (body_len + 3u) / 4; i++)
        xp_card32_at(bytes, sizeof bytes, i, false, &words[i]);
    obs_send_request_minor(o, major, minor, words, (body_len + 3u) / 4, p);
}

static void probe_send(struct observer *o, uint8_t major, uint8_t minor, const void *body, uint16_t body_len,
                       enum probe_step step, uint32_t index)
{
    o->probe.outstanding++;
    obs_send_bytes(o, major, minor, body, body_len, (struct pending){ .kind = P_PROBE, .tag = step, .window = index });
}

static void probe_atoms(struct observer *o)
{
    uint32_t first = o->probe.atom_next;
    for (uint32_t id = first; id < first + PROBE_ATOM_BATCH && id <= PROBE_MAX_ATOMS; id++)
        probe_send(o, XP_OP_GET_ATOM_NAME, 0, &(uint8_t[4]){ (uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), 0 },
                   4, S_ATOM, id);
    o->probe.atom_next = first + PROBE_ATOM_BATCH;
}

/* Fonts Xlib and Xt open without asking about them first (cursors; the default font). */
static const char *const probe_font_names[] = { "cursor", "fixed" };

static void probe_color_request(struct observer *o, uint8_t major, const uint8_t *body, uint16_t body_len)
{
    size_t at = o->probe.color_reqs.len;
    uint8_t *rq = buf_append_space(&o->probe.color_reqs, 4u + body_len);
    if (!rq) {
        o->probe.colors_bad = true;
        return;
    }
    rq[0] = major;
    rq[1] = 0;
    xp_request_set_length(rq, (4u + body_len) / 4, false, false);
    memcpy(rq + XP_REQUEST_HEADER_SIZE, body, body_len);
    o->probe.colors_left++;
    probe_send(o, major, 0, body, body_len, S_COLOR, (uint32_t)at);
}

/* The TrueColor arithmetic (predict.c) checked against the server on its default colormap,
 * where AllocColor and QueryColors allocate nothing; and every name of the colour table
 * (color_table.h) looked up: on a local connection 753 requests cost a few milliseconds,
 * and each name a program asks for would otherwise be a round trip over the link. */
static void probe_colors(struct observer *o)
{
    uint32_t all = 0, cmap = predict_truecolor_colormap(o->s->predict, &all);
    if (!cmap)
        return;
    o->probe.colormap = cmap;
    static const uint16_t rgb[][3] = { { 0, 0, 0 }, { 0xffff, 0xffff, 0xffff }, { 0xff00, 0x5300, 0 },
                                       { 0x1234, 0x8765, 0xfedc }, { 0x7fff, 0x8000, 0x0101 } };
    uint8_t b[XP_LOOKUP_COLOR_BODY_SIZE + COLOR_TABLE_NAME_MAX + 4];
    for (size_t i = 0; i < sizeof rgb / sizeof *rgb; i++) {
        xp_alloc_color_body_put(b, sizeof b, false, &(struct xp_alloc_color_body){
            .cmap = cmap, .red = rgb[i][0], .green = rgb[i][1], .blue = rgb[i][2] });
        probe_color_request(o, XP_OP_ALLOC_COLOR, b, XP_ALLOC_COLOR_BODY_SIZE);
    }
    const uint32_t pixels[] = { 0, all, all & 0x55555555u, all & 0x0f0f0f0fu, all & 0xf0f0f0f0u };
    const size_t n_pixels = sizeof pixels / sizeof *pixels;
    xp_query_colors_body_put(b, sizeof b, false, &(struct xp_query_colors_body){ .cmap = cmap });
    for (size_t i = 0; i < n_pixels; i++)
        xp_card32_put(b + XP_QUERY_COLORS_BODY_SIZE, 4 * n_pixels, i, pixels[i], false);
    probe_color_request(o, XP_OP_QUERY_COLORS, b, (uint16_t)(XP_QUERY_COLORS_BODY_SIZE + 4 * n_pixels));
    memset(o->probe.color_off, 0, sizeof o->probe.color_off);
    for (size_t i = 0; i < COLOR_TABLE_SIZE; i++) {
        uint16_t len = (uint16_t)strlen(color_table[i].name);
        memset(b, 0, sizeof b);
        xp_lookup_color_body_put(b, sizeof b, false, &(struct xp_lookup_color_body){ .cmap = cmap, .name_len = len });
        memcpy(b + XP_LOOKUP_COLOR_BODY_SIZE, color_table[i].name, len);
        probe_color_request(o, XP_OP_LOOKUP_COLOR, b, (uint16_t)(XP_LOOKUP_COLOR_BODY_SIZE + len + xw_pad4(len)));
    }
}

static void color_table_off(struct observer *o, int i)
{
    if (i >= 0 && !(o->probe.color_off[i / 8] >> (i % 8) & 1)) {
        o->probe.color_off[i / 8] |= (uint8_t)(1u << (i % 8));
        o->probe.n_colors_off++;
    }
}

static void probe_color_answer(struct observer *o, const struct pending *p, const uint8_t *msg, uint32_t size,
                               bool error)
{
    const uint8_t *rq = buf_head(&o->probe.color_reqs) + p->window;
    struct xp_request_header h; /* the request as it was sent (probe_color_request) */
    if (!xp_request_header_view(rq, o->probe.color_reqs.len - p->window, false, &h))
        return;
    uint32_t rq_size = 4u * h.length;
    bool lookup = h.major == XP_OP_LOOKUP_COLOR;
    struct xp_lookup_color_req lq;
    struct xp_lookup_color_reply lr;
    int entry = lookup && xp_lookup_color_req_view(rq, rq_size, false, &lq) && lq.name
                    ? predict_color_table_find(lq.name, lq.name_len) : -1;
    if (error && lookup) {
        color_table_off(o, entry); /* the server does not know the name */
    } else if (error || !predict_color_check(o->s->predict, rq, rq_size, msg, size)) {
        o->probe.colors_bad = true;
        log_info("observer: the server's answer to a colour request (%u) is not the TrueColor arithmetic: colours "
                 "are asked of the server until a real answer matches", h.major);
    } else if (entry >= 0 && xp_lookup_color_reply_view(msg, size, false, &lr)) {
        const uint16_t exact[3] = { lr.exact_red, lr.exact_green, lr.exact_blue };
        const uint8_t *want = color_table[entry].rgb;
        if (exact[0] != want[0] * 257u || exact[1] != want[1] * 257u || exact[2] != want[2] * 257u) {
            /* another database: this name is told with the server's value */
            color_table_off(o, entry);
            predict_fact_color_name(&o->probe.colors, (const char *)lq.name, lq.name_len, exact);
        }
        o->probe.n_colors++;
    }
    if (--o->probe.colors_left)
        return;
    struct buf fact = { 0 };
    if (!o->probe.colors_bad && predict_fact_colors(o->s->predict, &fact, o->probe.colormap) == 0 &&
        buf_append(&fact, buf_head(&o->probe.colors), o->probe.colors.len) == 0) {
        obs_send_session_fact(o, &fact);
        /* Not a table this server's database resembles: its names are asked of the server. */
        if (o->probe.n_colors_off <= PROBE_COLOR_TABLE_MAX_OFF &&
            predict_fact_color_table(&fact, o->probe.color_off) == 0)
            obs_send_session_fact(o, &fact);
    }
    buf_free(&fact);
}

/* Fonts opened (and closed) on this connection: OpenFont of them is quiet for clients. */
static void probe_fonts(struct observer *o)
{
    for (uint32_t k = 0; k < sizeof probe_font_names / sizeof *probe_font_names; k++) {
        uint8_t b[XP_OPEN_FONT_BODY_SIZE + 256] = { 0 };
        uint32_t fid = o->probe.font_base + 1 + k;
        uint16_t len = (uint16_t)strlen(probe_font_names[k]);
        xp_open_font_body_put(b, sizeof b, false, &(struct xp_open_font_body){ .fid = fid, .name_len = len });
        memcpy(b + XP_OPEN_FONT_BODY_SIZE, probe_font_names[k], len);
        /* no answer when it opens; an error names it */
        obs_send_bytes(o, XP_OP_OPEN_FONT, 0, b, (uint16_t)(XP_OPEN_FONT_BODY_SIZE + len + xw_pad4(len)),
                   (struct pending){ .kind = P_PROBE, .tag = S_FONT, .window = k });
        if (!strcmp(probe_font_names[k], "fixed")) { /* the server's default font: most core-font programs load it */
            uint8_t q[XP_QUERY_FONT_BODY_SIZE];
            xp_query_font_body_put(q, sizeof q, false, &(struct xp_query_font_body){ .font = fid });
            probe_send(o, XP_OP_QUERY_FONT, 0, q, sizeof q, S_FONT_QUERY, k);
        }
        obs_send_request(o, XP_OP_CLOSE_FONT, &fid, 1, (struct pending){ .kind = P_SELECT });
    }
    probe_send(o, XP_OP_GET_INPUT_FOCUS /* after the errors, if any */, 0, NULL, 0, S_FONTS_DONE, 0);
}

static void probe_fonts_done(struct observer *o)
{
    struct buf fact = { 0 };
    for (uint32_t k = 0; k < sizeof probe_font_names / sizeof *probe_font_names; k++)
        if (!(o->probe.fonts_bad >> k & 1)) {
            predict_fact_font(&fact, probe_font_names[k], strlen(probe_font_names[k]));
            o->probe.n_fonts++;
        }
    obs_send_session_fact(o, &fact);
    buf_free(&fact);
}

/* The keyboard's GetMap reply is now a fact: keep its key to ask again, and have the server
 * say when the keyboard changes. Core MappingNotify is not enough: once a connection has
 * used XKEYBOARD, the server sends it only for the map components the connection selected. */
static void xkb_watch(struct observer *o, const uint8_t *key, size_t key_len)
{
    buf_clear(&o->xkb.key);
    if (buf_append(&o->xkb.key, key, key_len) < 0)
        return;
    /* SelectEvents on the core keyboard: NewKeyboardNotify and MapNotify, every detail */
    uint8_t select[XP_XKB_SELECT_EVENTS_REQ_SIZE];
    xp_xkb_select_events_req_put(select, sizeof select, false, &(struct xp_xkb_select_events_req){
        .major_opcode = o->xkb.major, .length = sizeof select / 4, .device_spec = XP_XKB_ID_USE_CORE_KBD,
        .affect_which = XP_XKB_EVENT_TYPE_NEW_KEYBOARD_NOTIFY | XP_XKB_EVENT_TYPE_MAP_NOTIFY,
        .select_all = XP_XKB_EVENT_TYPE_NEW_KEYBOARD_NOTIFY | XP_XKB_EVENT_TYPE_MAP_NOTIFY, .affect_map = 0xff, .map = 0xff });
    obs_send_bytes(o, o->xkb.major, XP_XKB_OP_SELECT_EVENTS, select + XP_REQUEST_HEADER_SIZE,
                   sizeof select - XP_REQUEST_HEADER_SIZE, (struct pending){ .kind = P_SELECT });
}

/* GetMap as probed, again (after a change); an answer older than the latest change is dropped. */
static void xkb_ask_map(struct observer *o)
{
    const uint8_t *key = buf_head(&o->xkb.key);
    size_t len = o->xkb.key.len;
    if (!len || !o->s->predict)
        return;
    struct xp_request_header use, get; /* UseExtension first, then GetMap */
    if (!xp_request_header_view(key, len, false, &use) || 4u * use.length > len ||
        !xp_request_header_view(key + 4u * use.length, len - 4u * use.length, false, &get))
        return;
    uint32_t at = 4u * use.length + XP_REQUEST_HEADER_SIZE;
    obs_send_bytes(o, get.major, get.data, key + at, (uint16_t)(len - at),
               (struct pending){ .kind = P_PROBE, .tag = S_XKB_MAP, .channel = o->xkb.generation });
}

static void xkb_map_answer(struct observer *o, const struct pending *p, const uint8_t *msg, uint32_t size, bool error)
{
    if (error || p->channel != o->xkb.generation)
        return; /* the keyboard changed again meanwhile: a newer answer comes */
    struct buf fact = { 0 };
    predict_fact_exchange(&fact, false, buf_head(&o->xkb.key), o->xkb.key.len, msg, size);
    obs_send_session_fact(o, &fact);
    buf_free(&fact);
}

/* The keyboard changed (core MappingNotify, or XKEYBOARD's MapNotify or NewKeyboardNotify):
 * what the app side knows of it is forgotten, then asked again. */
void obs_keyboard_changed(struct observer *o)
{
    if (!o->s->predict)
        return;
    struct buf fact = { 0 };
    predict_fact_keyboard(&fact, false, 0, 0, 0, NULL, 0, NULL); /* also forgets GetMap replies */
    obs_send_session_fact(o, &fact);
    buf_free(&fact);
    log_debug("observer: the keyboard mapping changed: asking again");
    if (!o->kb_fetching) {
        /* Asked after the change: the answers say the new mappings. */
        o->kb_fetching = true;
        uint32_t kb = o->min_keycode | (uint32_t)(o->max_keycode - o->min_keycode + 1) << 8;
        obs_send_request(o, XP_OP_GET_KEYBOARD_MAPPING, &kb, 1, (struct pending){ .kind = P_KEYMAP });
        obs_send_request(o, XP_OP_GET_MODIFIER_MAPPING, NULL, 0, (struct pending){ .kind = P_MODMAP });
    }
    o->xkb.generation++;
    xkb_ask_map(o);
}

/* Clients held back until the facts are told. */
static void release_held(struct observer *o)
{
    uint32_t n = o->n_held;
    o->n_held = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct channel *ch = channel_find(o->s, o->held[i].channel);
        if (ch)
            OBS_TELL(o, on_setup_released, ch, &o->held[i].open);
    }
    OBS_TELL(o, on_probes_done, o);
}

bool observer_probing(const struct observer *o)
{
    return o->probe.active && !o->broken;
}

bool observer_check_root(struct observer *o)
{
    if (!o->root || o->broken)
        return false;
    obs_send_request(o, XP_OP_GET_WINDOW_ATTRIBUTES, &o->root, 1,
                 (struct pending){ .kind = P_SPARE_ROOT_ATTRS, .window = o->root });
    obs_send_request(o, XP_OP_GET_GEOMETRY, &o->root, 1, (struct pending){ .kind = P_SPARE_ROOT_GEOMETRY, .window = o->root });
    return !o->broken;
}

/* Looks for atoms made since the last look (by clients outside tincan; atoms made through
 * tincan are learnt from their replies too): GetAtomName of the next numbers, a round trip
 * on the display's machine, until BadAtom. */
static void census_poll(struct observer *o)
{
    if (o->broken || !o->census.next || o->census.polling || o->probe.active)
        return;
    o->census.polling = true;
    o->census.due_ns = o->s->now() + CENSUS_POLL_NS;
    o->census.closes_last = o->census.closes_this;
    o->census.closes_this = o->census.closes;
    uint32_t id = o->census.next;
    obs_send_request(o, XP_OP_GET_ATOM_NAME, &id, 1, (struct pending){ .kind = P_PROBE, .tag = S_POLL, .window = id });
}

/* Whether a look may leave atom to the reply that told the display side of it. */
static bool census_leave_to_reply(struct observer *o, uint32_t atom)
{
    if (!predict_atom_known(o->s->predict, atom) || o->census.n_unsure >= CENSUS_MAX_UNSURE ||
        o->census.closes != o->census.closes_last || o->census.for_setup)
        return false;
    if (o->census.n_unsure == o->census.cap_unsure) {
        uint32_t cap = o->census.cap_unsure ? 2 * o->census.cap_unsure : 64;
        struct unsure_atom *u = realloc(o->census.unsure, cap * sizeof *u);
        if (!u)
            return false;
        o->census.unsure = u;
        o->census.cap_unsure = cap;
    }
    o->census.unsure[o->census.n_unsure++] = (struct unsure_atom){ atom, 0 };
    return true;
}

/* Once nothing waits for the link but compressed bytes, the replies behind the unsure
 * atoms are within the link's first `until` bytes. */
static void census_mark_unsure(struct observer *o)
{
    struct session *s = o->s;
    if (!o->census.n_unsure || o->census.unsure[o->census.n_unsure - 1].until || s->link_tx.len)
        return;
    for (const struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->to_link.len)
            return;
    uint64_t until = s->tx_stream + s->wire_tx.len;
    for (uint32_t i = o->census.n_unsure; i-- && !o->census.unsure[i].until;)
        o->census.unsure[i].until = until;
}

void observer_on_ack(struct observer *o, uint64_t acked)
{
    if (!o)
        return;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < o->census.n_unsure; i++)
        if (!o->census.unsure[i].until || o->census.unsure[i].until > acked)
            o->census.unsure[kept++] = o->census.unsure[i];
    o->census.n_unsure = kept;
}

void observer_on_peer_close(struct observer *o)
{
    if (o)
        o->census.closes++;
    if (!o || !o->census.n_unsure)
        return;
    /* The app side may have dropped the reply that was to tell these: tell them here. */
    struct buf fact = { 0 };
    for (uint32_t i = 0; i < o->census.n_unsure; i++)
        predict_fact_known_atom(o->s->predict, &fact, o->census.unsure[i].atom);
    log_debug("observer: a client went away: %u atoms left to replies told again", o->census.n_unsure);
    o->census.n_unsure = 0;
    obs_send_session_fact(o, &fact);
    buf_free(&fact);
}

static void census_answer(struct observer *o, const struct pending *p, const uint8_t *msg, uint32_t size, bool error)
{
    struct xp_get_atom_name_reply v;
    if (!error && xp_get_atom_name_reply_view(msg, size, false, &v) && v.name && p->window == o->census.next) {
        /* A client's own atom is told by its reply. Another's by the hash of its name, not the
         * name: mostly a font's properties, which nobody asks for by name; two bytes keep the
         * census whole (docs/PROTOCOL.md 3.2). One fact for the whole look. */
        bool hashed = !census_leave_to_reply(o, p->window);
        if (hashed && o->census.hashes.len >= CENSUS_FACT_BYTES)
            obs_send_session_fact(o, &o->census.hashes);
        if (hashed && o->census.hashes.len && o->census.hash_next != p->window)
            obs_send_session_fact(o, &o->census.hashes); /* a fact's atoms follow each other */
        if (hashed) {
            predict_fact_atom_hash(&o->census.hashes, p->window, (const char *)v.name, v.name_len);
            o->census.hash_next = p->window + 1;
            o->census.any_hashed = true;
        }
        log_debug("observer: atom %u is new: %s", p->window, hashed ? "told by its name's hash" : "its reply tells it");
        o->census.next = p->window + 1;
        uint32_t id = o->census.next;
        obs_send_request(o, XP_OP_GET_ATOM_NAME, &id, 1, (struct pending){ .kind = P_PROBE, .tag = S_POLL, .window = id });
        return;
    }
    o->census.polling = false;
    obs_send_session_fact(o, &o->census.hashes); /* ahead of the census that counts them */
    /* Atoms only left to replies: the app side's census grows as it learns them in order. */
    if (o->census.next != o->census.told && o->census.any_hashed) {
        struct buf fact = { 0 };
        predict_fact_census(&fact, o->census.next);
        obs_send_session_fact(o, &fact);
        buf_free(&fact);
        o->census.told = o->census.next;
    }
    o->census.any_hashed = o->census.for_setup = false;
    release_held(o);
}

void obs_census_hook(void *data)
{
    struct observer *o = data;
    census_mark_unsure(o);
    if (o->broken || !o->census.next)
        return;
    uint64_t now = o->s->now();
    if (!o->census.polling && now >= o->census.due_ns)
        census_poll(o);
    loop_wake_by(o->s->loop, o->census.polling ? now + CENSUS_POLL_NS : o->census.due_ns);
}

/* Every probe has been answered: the clients held back may have their setup requests go. */
void obs_probe_finish(struct observer *o)
{
    if (!o->probe.active) {
        if (o->broken)
            o->census.polling = false;
        if (!o->census.polling)
            release_held(o);
        return;
    }
    o->probe.active = false;
    obs_send_session_fact(o, &o->probe.atoms);
    if (o->probe.atom_bad && !o->broken) {
        /* Every atom below the first BadAtom has been told. */
        o->census.next = o->census.told = o->probe.atom_bad;
        o->census.due_ns = o->s->now() + CENSUS_POLL_NS;
        struct buf fact = { 0 };
        predict_fact_census(&fact, o->census.next);
        obs_send_session_fact(o, &fact);
        buf_free(&fact);
    }
    buf_free(&o->probe.atoms);
    buf_free(&o->probe.names);
    for (size_t k = 0; k < N_PROBES; k++)
        buf_free(&o->probe.keys[k]);
    log_debug("observer: told the app side %u extensions, %u atoms, %u handshake replies, %u root properties, "
              "%u colour names (%u of the table not confirmed)%s, %u fonts in %.1f ms", o->probe.n_ext,
              o->probe.n_atoms, o->probe.n_hs, o->probe.n_props, o->probe.n_colors, o->probe.n_colors_off, o->probe.colormap && !o->probe.colors_bad ? " (TrueColor checked)" : "",
              o->probe.n_fonts, (double)(o->s->now() - o->probe.start_ns) / 1e6);
    release_held(o);
}

/* The extension names: the server's list, those it lacks that xcb-proto names, and a few more. */
static void probe_extensions(struct observer *o, const uint8_t *list, uint32_t size)
{
    struct xp_list_extensions_reply v;
    struct buf *names = &o->probe.names; /* counted strings */
    uint8_t len;
    const uint8_t *name;
    if (xp_list_extensions_reply_view(list, size, false, &v)) {
        struct rd r = rd_make(v.rest, v.rest_len, false);
        for (unsigned i = 0; i < v.names_len && !rd_u8(&r, &len) && !rd_bytes(&r, &name, len); i++) {
            uint8_t *slot = buf_append_space(names, 1u + len); /* whole, or not at all */
            if (slot) {
                slot[0] = len;
                memcpy(slot + 1, name, len);
            }
        }
    }
    size_t listed = names->len;
    static const char *const others[] = { "XFree86-Bigfont" }; /* Xlib asks when it loads a font */
    for (size_t e = 0; e < xp_n_extensions + sizeof others / sizeof *others; e++) {
        const char *xname = e < xp_n_extensions ? xp_extensions[e].xname : others[e - xp_n_extensions];
        size_t n = strlen(xname);
        bool seen = n > 255;
        for (size_t at = 0; at < listed && !seen; at += 1u + buf_head(names)[at])
            seen = buf_head(names)[at] == n && !memcmp(buf_head(names) + at + 1, xname, n);
        if (!seen) {
            uint8_t *slot = buf_append_space(names, 1u + n);
            if (slot) {
                slot[0] = (uint8_t)n;
                memcpy(slot + 1, xname, n);
            }
        }
    }
    for (size_t at = 0; at < names->len; at += 1u + buf_head(names)[at]) {
        uint8_t body[XP_QUERY_EXTENSION_BODY_SIZE + 256] = { 0 };
        xp_query_extension_body_put(body, sizeof body, false, &(struct xp_query_extension_body){ .name_len = buf_head(names)[at] });
        memcpy(body + XP_QUERY_EXTENSION_BODY_SIZE, buf_head(names) + at + 1, buf_head(names)[at]);
        probe_send(o, XW_OP_QUERY_EXTENSION, 0, body, (uint16_t)(XP_QUERY_EXTENSION_BODY_SIZE + buf_head(names)[at]), S_QE,
                   (uint32_t)at);
        o->probe.qe_left++;
    }
}

/* All QueryExtension answers are in: the handshakes of the extensions present. */
static void probe_handshakes(struct observer *o)
{
    for (size_t k = 0; k < N_PROBES; k++) {
        if (!o->probe.majors[k])
            continue;
        size_t f = k; /* the extension's first probe holds its key */
        while (f > 0 && !strcmp(probes[f - 1].ext, probes[k].ext))
            f--;
        uint16_t units = (uint16_t)(1 + (probes[k].body_len + 3) / 4);
        uint8_t rq[28] = { o->probe.majors[k], probes[k].minor };
        xp_request_set_length(rq, units, false, false);
        memcpy(rq + XP_REQUEST_HEADER_SIZE, probes[k].body, probes[k].body_len);
        if (buf_append(&o->probe.keys[f], rq, 4u * units) < 0) /* the key of probe k: a prefix of this */
            continue;
        probe_send(o, o->probe.majors[k], probes[k].minor, probes[k].body, probes[k].body_len, S_HS, (uint32_t)k);
    }
}

void obs_probe_answer(struct observer *o, const struct pending *p, const uint8_t *msg, size_t size, bool error)
{
    struct buf fact = { 0 };
    switch ((enum probe_step)p->tag) {
    case S_FONT:                /* an error: the font does not open (not counted as outstanding) */
        if (error && p->window < 32)
            o->probe.fonts_bad |= 1u << p->window;
        return;
    case S_POLL:                /* not part of the probes at start */
        census_answer(o, p, msg, size, error);
        return;
    case S_XKB_MAP:
        xkb_map_answer(o, p, msg, size, error);
        return;
    case S_COLOR:
        probe_color_answer(o, p, msg, size, error);
        break;
    case S_FONTS_DONE:
        probe_fonts_done(o);
        break;
    case S_FONT_QUERY:          /* as a font learnt in an earlier session (FACT_FONT, learnt.h) */
        if (!error && p->window < sizeof probe_font_names / sizeof *probe_font_names &&
            predict_fact_reply(&fact, FACT_FONT, false, (const uint8_t *)probe_font_names[p->window],
                               strlen(probe_font_names[p->window]), msg, size) == 0)
            obs_send_session_fact(o, &fact);
        break;
    case S_LIST:
        if (!error) {
            probe_extensions(o, msg, (uint32_t)size);
            /* The list as clients see it answers their ListExtensions (GTK 3 asks it). */
            struct buf list = { 0 };
            const uint8_t req[4] = { XP_OP_LIST_EXTENSIONS, 0, 1, 0 };
            if (xstream_filter_list_extensions(msg, (uint32_t)size, false, &list) == 0 &&
                predict_fact_exchange(&fact, false, req, sizeof req, buf_head(&list), list.len) == 0)
                obs_send_session_fact(o, &fact);
            buf_free(&list);
        }
        break;
    case S_QE: {
        const uint8_t *names = buf_head(&o->probe.names);
        uint8_t len = names[p->window];
        const char *name = (const char *)names + p->window + 1;
        struct xp_query_extension_reply v;
        if (!error && size == XP_QUERY_EXTENSION_REPLY_SIZE && xp_query_extension_reply_view(msg, size, false, &v)) {
            uint8_t reply[XP_QUERY_EXTENSION_REPLY_SIZE];
            memcpy(reply, msg, sizeof reply);
            if (xstream_extension_hidden(name, len)) { /* as clients see it (xstream.c) */
                v.present = v.major_opcode = v.first_event = v.first_error = 0;
                xp_query_extension_reply_put(reply, sizeof reply, false, &v);
            }
            for (size_t k = 0; k < N_PROBES; k++)
                if (v.present && strlen(probes[k].ext) == len && !memcmp(probes[k].ext, name, len))
                    o->probe.majors[k] = v.major_opcode;
            if (v.present && len == 9 && !memcmp(name, "XKEYBOARD", 9)) {
                o->xkb.major = v.major_opcode;
                o->xkb.event = v.first_event;
            }
            predict_fact_extension(&fact, name, len, reply);
            obs_send_session_fact(o, &fact);
            o->probe.n_ext++;
        }
        if (!--o->probe.qe_left)
            probe_handshakes(o);
        break;
    }
    case S_ATOM: {
        struct xp_get_atom_name_reply atom;
        if (error && (!o->probe.atom_bad || p->window < o->probe.atom_bad))
            o->probe.atom_bad = p->window;
        if (error || o->probe.atoms_end) {
            o->probe.atoms_end = true; /* BadAtom: past the last atom */
        } else if (xp_get_atom_name_reply_view(msg, size, false, &atom) && atom.name) {
            predict_fact_atom(&o->probe.atoms, p->window, (const char *)atom.name, atom.name_len);
            o->probe.n_atoms++;
            if (o->probe.atoms.len >= PROBE_FACT_BYTES)
                obs_send_session_fact(o, &o->probe.atoms);
        }
        if (p->window + 1 == o->probe.atom_next && !o->probe.atoms_end && o->probe.atom_next <= PROBE_MAX_ATOMS)
            probe_atoms(o); /* the batch is all atoms: there may be more */
        break;
    }
    case S_HS: {
        size_t k = p->window;
        size_t f = k;
        while (f > 0 && !strcmp(probes[f - 1].ext, probes[k].ext))
            f--;
        if (error)
            o->probe.hs_dead[f] = true; /* what follows depends on it, and clients will not send it */
        if (!error && !o->probe.hs_dead[f]) {
            /* key: this extension's probes up to this one */
            size_t key_len = 0;
            for (size_t j = f; j <= k; j++)
                key_len += 4u * (1 + (probes[j].body_len + 3) / 4);
            predict_fact_exchange(&fact, false, buf_head(&o->probe.keys[f]), key_len, msg, size);
            obs_send_session_fact(o, &fact);
            o->probe.n_hs++;
            if (!strcmp(probes[k].ext, "XKEYBOARD") && probes[k].minor == XP_XKB_OP_GET_MAP)
                xkb_watch(o, buf_head(&o->probe.keys[f]), key_len);
            uint8_t major, first_event;
            if ((k + 1 == N_PROBES || strcmp(probes[k + 1].ext, probes[k].ext)) && o->s->predict &&
                predict_extension(o->s->predict, probes[k].ext, &major, &first_event))
                OBS_TELL(o, on_extension, o, probes[k].ext, buf_head(&o->probe.keys[f]), key_len, major, first_event,
                         o->root); /* its last handshake: RANDR's and XInput's state (statewatch.h) */
        }
        break;
    }
    case S_PROPS: {
        struct xp_list_properties_reply v;
        if (error || !xp_list_properties_reply_view(msg, size, false, &v) || !v.atoms)
            break;
        uint32_t n = v.atoms_len;
        o->props_watched = true;
        o->probe.props_left = n;
        for (uint32_t i = 0; i < n; i++) {
            /* window, property, type Any, offset 0, length: the largest value kept */
            uint32_t words[5] = { o->root, 0, 0 /* AnyPropertyType */, 0, 256u * 1024 / 4 };
            xp_card32_at(v.atoms, 4u * n, i, false, &words[1]);
            o->probe.outstanding++;
            obs_send_request(o, XP_OP_GET_PROPERTY, words, 5,
                         (struct pending){ .kind = P_PROBE, .tag = S_PROP, .window = words[1] });
        }
        if (!n)
            goto props_done;
        break;
    }
    case S_PROP: {
        struct xp_get_property_reply v;
        bool ok = !error && xp_get_property_reply_view(msg, size, false, &v);
        uint64_t bytes = ok ? (uint64_t)v.value_len * (v.format / 8) : 0;
        if (!ok || v.bytes_after /* too large */ || !v.format || bytes > v.rest_len) {
            predict_fact_property(&fact, o->root, p->window, PROP_UNKNOWN, 0, 0, NULL, 0);
        } else {
            predict_fact_property(&fact, o->root, p->window, PROP_VALUE, v.type, v.format, v.rest, (size_t)bytes);
            o->probe.n_props++;
        }
        obs_send_session_fact(o, &fact);
        if (--o->probe.props_left)
            break;
    props_done:
        /* Every other property of the root does not exist (until a PropertyNotify says otherwise). */
        predict_fact_property(&fact, o->root, 0, PROP_ABSENT, 0, 0, NULL, 0);
        obs_send_session_fact(o, &fact);
        o->probe.props_probing = false;
        if (o->changed_overflow) {
            predict_fact_property(&fact, o->root, 0, PROP_UNKNOWN, 0, 0, NULL, 0);
            obs_send_session_fact(o, &fact);
        }
        for (uint32_t i = 0; i < o->n_changed; i++)
            obs_property_changed(o, o->changed[i]);
        o->n_changed = 0;
        break;
    }
    }
    buf_free(&fact);
    if (!--o->probe.outstanding)
        obs_probe_finish(o);
}

/* Asks the server what clients ask at start; the answers become FACT frames (channel 0) as
 * they come, and clients that connect meanwhile send their setup requests only after. */
void obs_probe_start(struct observer *o)
{
    o->probe.active = true;
    o->probe.start_ns = o->s->now();
    o->probe.atom_next = 1;
    probe_send(o, XP_OP_LIST_EXTENSIONS, 0, NULL, 0, S_LIST, 0);
    probe_atoms(o); /* atoms are numbered from 1 without gaps: ask until the first BadAtom */
    probe_colors(o);
    probe_fonts(o);
    if (loop_add_before_sleep(o->s->loop, obs_census_hook, o) == 0)
        o->census.hooked = true;
    if (o->root) {
        /* Watch the root's properties first, then read them. */
        uint32_t select[3] = { o->root, XP_CW_EVENT_MASK, PROPERTY_CHANGE_MASK };
        obs_send_request(o, XP_OP_CHANGE_WINDOW_ATTRIBUTES, select, 3, (struct pending){ .kind = P_SELECT });
        o->probe.props_probing = true;
        probe_send(o, XP_OP_LIST_PROPERTIES, 0, &(uint8_t[4]){ (uint8_t)o->root, (uint8_t)(o->root >> 8),
                   (uint8_t)(o->root >> 16), (uint8_t)(o->root >> 24) }, 4, S_PROPS, 0);
    }
    if (o->max_keycode >= o->min_keycode && o->min_keycode >= 8) {
        /* The keyboard: a MappingNotify (every client gets it) says when it changes. */
        o->kb_fetching = true;
        o->probe.keyboard = true;
        o->probe.outstanding++;
        uint32_t kb = o->min_keycode | (uint32_t)(o->max_keycode - o->min_keycode + 1) << 8;
        obs_send_request(o, XP_OP_GET_KEYBOARD_MAPPING, &kb, 1, (struct pending){ .kind = P_KEYMAP });
        obs_send_request(o, XP_OP_GET_MODIFIER_MAPPING, NULL, 0, (struct pending){ .kind = P_MODMAP });
    }
    OBS_TELL(o, on_probes_sent, o); /* learnt.h: what clients asked in earlier sessions */
}

bool observer_hold_setup(struct observer *o, uint32_t channel_id, const struct frame_open *open)
{
    if (o->broken)
        return false;
    if (!o->probe.active) {
        census_poll(o); /* atoms made since the last look are told before this client's setup reply */
        if (!o->census.polling)
            return false;
        o->census.for_setup = true;
    }
    struct held *n = o->n_held == o->cap_held ? realloc(o->held, (o->cap_held * 2 + 4) * sizeof *n) : o->held;
    if (!n)
        return false;
    if (o->n_held == o->cap_held) {
        o->held = n;
        o->cap_held = o->cap_held * 2 + 4;
    }
    o->held[o->n_held++] = (struct held){ channel_id, *open };
    return true;
}
