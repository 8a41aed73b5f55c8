/* spare.c -- the X connection set up ahead of need (spare.h, docs/PROTOCOL.md 3.5).
 * Workload: one connection at a time; its setup reply (a few KiB) crosses the link once
 * per client, ahead of it. */
#include "proxy/spare.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "proxy/session_private.h"
#include "x11/xdisplay.h"
#include "xproto_wire.h"

#define SPARE_MAX_SETUP (256u * 1024)   /* a larger setup reply is not kept ahead */
#define SPARE_MAX_FAILURES 3            /* spares lost in a row before we stop opening them */
#define SPARE_MSB false                 /* clients are little-endian nearly everywhere */
#define SPARE_CHECK_NS 1000000000ull    /* how often a spare on offer is checked against the server */
#define SPARE_FIRST_WAIT_NS 3000000000ull /* new clients wait at most this long for the first spare */
#define SPARE_OLD_GRACE_NS 10000000000ull /* a replaced spare stays claimable this long after the new one
                                         * is offered: an OPEN naming it may be on the link (10 s: a
                                         * satellite link's round trip, many times over) */

/* A SPARE frame: the setup reply of spare id, or (empty) the spare withdrawn. */
static void spare_send(struct session *s, uint32_t id, const uint8_t *setup, size_t len)
{
    struct buf frame = { 0 };
    int rc = spare_frame_encode(&frame, id, SPARE_MSB, setup, len);
    if (rc == 0)
        (void)!link_send_frames(s, &frame); /* on failure the session ends */
    buf_free(&frame);
}

/* No spare could be made before any was offered: an empty SPARE tells the app side not to
 * hold clients for one. */
static void spare_none(struct session *s)
{
    struct spare_state *sp = &s->spare;
    if (sp->any_offered)
        return;
    sp->any_offered = true;
    spare_send(s, ++sp->next_id, NULL, 0);
}

static void old_close(struct session *s)
{
    struct spare_state *sp = &s->spare;
    if (sp->old_fd >= 0)
        close(sp->old_fd);
    sp->old_fd = -1;
    buf_free(&sp->old_rx);
}

static void spare_close(struct session *s)
{
    struct spare_state *sp = &s->spare;
    if (sp->fd >= 0) {
        loop_unwatch(s->loop, &sp->w);
        close(sp->fd);
    }
    sp->fd = -1;
    sp->ready = sp->offered = sp->checked = sp->check_pending = false;
    buf_free(&sp->rx);
}

/* The spare closed or broke before a client took it: withdraw it, and try once more. */
static void spare_lost(struct session *s, const char *why)
{
    struct spare_state *sp = &s->spare;
    bool offered = sp->offered;
    uint32_t id = sp->id;
    spare_close(s);
    log_info("spare X connection %u lost: %s", id, why);
    if (offered)
        spare_send(s, id, NULL, 0);
    if (++sp->failures < SPARE_MAX_FAILURES)
        spare_open(s);
}

/* How many of the n bytes at p are whole MappingNotify events; n itself only if all are.
 * The server sends one to every client, a spare too, whatever it selected, when the
 * keyboard or pointer mapping changes (xdotool typing a character the keymap lacks does).
 * A client that takes the spare asks for the mappings after it connects, as one connecting
 * now would: the events are not for it, and the spare stays good. (They were taken for a
 * broken connection: the spare was withdrawn, and a client whose OPEN had named it, on the
 * link meanwhile, was closed.) */
static size_t mapping_notifies(const uint8_t *p, size_t n)
{
    size_t at = 0;
    while (n - at >= 32 && (p[at] & 0x7f) == XP_EV_MAPPING_NOTIFY)
        at += 32;
    return at;
}

static void on_spare_event(struct watch *w, unsigned events)
{
    (void)events;
    struct session *s = w->data;
    struct spare_state *sp = &s->spare;
    if (sp->ready) { /* nothing may come before a request but MappingNotify: else closed or broken */
        uint8_t tmp[4096];
        ssize_t n = recv(sp->fd, tmp, sizeof tmp, MSG_PEEK);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        size_t events_len = n > 0 ? mapping_notifies(tmp, (size_t)n) : 0;
        if (n <= 0 || events_len != (size_t)n) {
            spare_lost(s, n < 0 ? strerror(errno) : n == 0 ? "closed by the server" : "unexpected bytes");
            return;
        }
        (void)!read(sp->fd, tmp, events_len);
        return;
    }
    uint8_t *p = buf_append_space(&sp->rx, 4096);
    if (!p) {
        spare_lost(s, "out of memory");
        return;
    }
    ssize_t n = read(sp->fd, p, 4096);
    sp->rx.len -= 4096 - (n > 0 ? (size_t)n : 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        spare_lost(s, n < 0 ? strerror(errno) : n == 0 ? "closed by the server" : "unexpected bytes");
        return;
    }
    const uint8_t *r = buf_head(&sp->rx);
    uint16_t units;
    if (sp->rx.len < XP_SETUP_PREFIX_SIZE || !xp_peek16(r, sp->rx.len, XP_SETUP_LENGTH_AT, SPARE_MSB, &units))
        return;
    size_t size = XP_SETUP_PREFIX_SIZE + 4 * (size_t)units;
    if (r[XP_SETUP_STATUS_AT] != 1) { /* refused (or asked for more authentication): clients will be told themselves */
        log_info("the X server refused the spare connection: clients connect the ordinary way");
        sp->failures = SPARE_MAX_FAILURES;
        spare_close(s);
        spare_none(s);
        return;
    }
    if (size > SPARE_MAX_SETUP) {
        sp->failures = SPARE_MAX_FAILURES;
        spare_close(s);
        spare_none(s);
        return;
    }
    if (sp->rx.len < size)
        return;
    if (sp->rx.len > size) {
        if (mapping_notifies(buf_head(&sp->rx) + size, sp->rx.len - size) != sp->rx.len - size) {
            spare_lost(s, "unexpected bytes");
            return;
        }
        sp->rx.len = size; /* what came after the reply: MappingNotify, not for the client */
    }
    sp->ready = true;
    spare_offer(s);
}

void spare_open(struct session *s)
{
    struct spare_state *sp = &s->spare;
    if (is_app(s) || sp->fd >= 0 || !sp->enabled || s->state != SESSION_UP)
        return;
    if (sp->failures >= SPARE_MAX_FAILURES) {
        spare_none(s); /* given up: nobody should wait for one */
        return;
    }
    int fd = s->cfg.connect_upstream ? s->cfg.connect_upstream(s->cfg.connect_ctx) : xdisplay_connect(&s->cfg.upstream);
    if (fd < 0) {
        sp->failures++;
        log_info("cannot open a spare X connection: %s", strerror(-fd));
        spare_none(s);
        return;
    }
    struct buf req = { 0 };
    int rc = xdisplay_setup_request(&s->cfg.upstream, &req, SPARE_MSB, 11, 0);
    /* A few dozen bytes into a new socket's empty buffer: written whole. */
    ssize_t n = rc < 0 ? -1 : write(fd, buf_head(&req), req.len);
    bool ok = n == (ssize_t)req.len;
    buf_free(&req);
    if (!ok || net_set_nonblock(fd) < 0 || loop_watch(s->loop, &sp->w, fd, LOOP_READ, on_spare_event, s) < 0) {
        close(fd);
        sp->failures++;
        return;
    }
    sp->fd = fd;
    sp->id = ++sp->next_id;
    log_debug("spare X connection %u opened", sp->id);
}

void spare_offer(struct session *s)
{
    struct spare_state *sp = &s->spare;
    if (is_app(s) || !sp->ready || sp->offered || s->state != SESSION_UP)
        return;
    if (s->observer && observer_probing(s->observer))
        return; /* its facts first: a client answered locally right after setup needs them */
    if (!sp->checked && s->observer && (sp->check_pending || observer_check_root(s->observer))) {
        sp->check_pending = true; /* offered when the root is seen as the reply says (spare_check_root) */
        return;
    }
    sp->offered = sp->any_offered = true;
    if (sp->old_fd >= 0 && !sp->old_until_ns)
        sp->old_until_ns = s->now() + SPARE_OLD_GRACE_NS;
    log_debug("spare X connection %u: its setup reply (%zu bytes) goes ahead", sp->id, sp->rx.len);
    /* Most of it is the last one's: a new resource-id base, perhaps new root masks. */
    struct buf frame = { 0 };
    int rc = spare_frame_encode_delta(&frame, sp->id, SPARE_MSB, buf_head(&sp->last), sp->last.len, buf_head(&sp->rx),
                                      sp->rx.len);
    if (rc < 0) {
        buf_clear(&frame);
        rc = spare_frame_encode(&frame, sp->id, SPARE_MSB, buf_head(&sp->rx), sp->rx.len);
    }
    rc = rc < 0 ? rc : link_send_frames(s, &frame);
    buf_free(&frame);
    if (rc < 0)
        return;
    buf_clear(&sp->last);
    if (buf_append(&sp->last, buf_head(&sp->rx), sp->rx.len) < 0)
        buf_free(&sp->last); /* the next one goes whole */
}

int spare_claim(struct session *s, uint32_t id, int *fd, struct buf *setup)
{
    struct spare_state *sp = &s->spare;
    if (sp->old_fd >= 0 && sp->old_id == id) {
        *fd = sp->old_fd;
        sp->old_fd = -1;
        int rc = buf_append(setup, buf_head(&sp->old_rx), sp->old_rx.len);
        buf_free(&sp->old_rx);
        return rc;
    }
    if (sp->fd < 0 || !sp->offered || sp->id != id)
        return -ENOENT;
    loop_unwatch(s->loop, &sp->w);
    *fd = sp->fd;
    sp->fd = -1;
    int rc = buf_append(setup, buf_head(&sp->rx), sp->rx.len);
    sp->ready = sp->offered = sp->checked = sp->check_pending = false;
    sp->failures = 0;
    buf_free(&sp->rx);
    return rc;
}

void spare_tick(struct session *s)
{
    struct spare_state *sp = &s->spare;
    uint64_t now = s->now();
    if (is_app(s)) {
        if (sp->enabled && !sp->first_seen && sp->wait_until_ns) {
            if (now >= sp->wait_until_ns) { /* none came: clients connect the ordinary way */
                sp->first_seen = true;
                sp->clients_may_go(s);
            } else {
                loop_wake_by(s->loop, sp->wait_until_ns);
            }
        }
        return;
    }
    if (sp->old_fd >= 0 && sp->old_until_ns) {
        if (now >= sp->old_until_ns)
            old_close(s);
        else
            loop_wake_by(s->loop, sp->old_until_ns);
    }
    if (!sp->offered || !s->observer)
        return;
    if (now >= sp->next_check_ns) {
        observer_check_root(s->observer);
        sp->next_check_ns = now + SPARE_CHECK_NS;
    }
    loop_wake_by(s->loop, sp->next_check_ns);
}

/* Screen 0 in a setup reply: its root, current-input-masks, width and height. */
static bool setup_screen0(const struct buf *setup, uint32_t *root, uint32_t *masks, uint16_t *w, uint16_t *h)
{
    struct xp_setup v;
    struct xp_screen sc;
    if (!xp_setup_view(buf_head(setup), setup->len, SPARE_MSB, &v) || !v.roots_len)
        return false;
    size_t skip = ((v.vendor_len + 3u) & ~(size_t)3) + (size_t)XP_FORMAT_SIZE * v.pixmap_formats_len;
    if (skip > v.rest_len || !xp_screen_view(v.rest + skip, v.rest_len - skip, SPARE_MSB, &sc))
        return false;
    *root = sc.root;
    *masks = sc.current_input_masks;
    *w = sc.width_in_pixels;
    *h = sc.height_in_pixels;
    return true;
}

void spare_check_root(struct session *s, uint32_t root, uint32_t masks, uint16_t width, uint16_t height)
{
    struct spare_state *sp = &s->spare;
    uint32_t r, m;
    uint16_t w, h;
    if (is_app(s) || !sp->ready || !setup_screen0(&sp->rx, &r, &m, &w, &h) || r != root)
        return;
    sp->check_pending = false;
    if (m == masks && w == width && h == height) {
        sp->checked = true;
        spare_offer(s);
        return;
    }
    /* Changed since the spare connected: a new one gets a reply as of now. Its SPARE
     * replaces this one at the app side; until then (and a while after, for an OPEN already
     * on its way) this one may still be claimed, a little out of date. */
    log_debug("spare X connection %u: the root changed (masks 0x%x -> 0x%x, %ux%u -> %ux%u): replaced", sp->id, m,
              masks, w, h, width, height);
    old_close(s);
    if (sp->offered) {
        loop_unwatch(s->loop, &sp->w);
        sp->old_fd = sp->fd;
        sp->old_id = sp->id;
        sp->old_rx = sp->rx;
        sp->old_until_ns = 0;
        sp->rx = (struct buf){ 0 };
        sp->fd = -1;
    }
    spare_close(s);
    spare_open(s);
}

void spare_free(struct session *s)
{
    spare_close(s);
    old_close(s);
    buf_free(&s->spare.have_setup);
    buf_free(&s->spare.last);
}

/* ---------------------------------------------------------------- app side */

/* Clients held for the first SPARE go on. */
static void release_waiting(struct session *s)
{
    if (!s->spare.first_seen) {
        s->spare.first_seen = true;
        s->spare.clients_may_go(s);
    }
}

void spare_expect(struct session *s)
{
    if (is_app(s) && s->spare.enabled)
        s->spare.wait_until_ns = s->now() + SPARE_FIRST_WAIT_NS;
}

bool spare_awaited(const struct session *s)
{
    const struct spare_state *sp = &s->spare;
    return is_app(s) && sp->enabled && !sp->first_seen && s->now() < sp->wait_until_ns;
}

int spare_on_frame(struct session *s, const struct frame *f)
{
    uint32_t id;
    bool msb;
    struct spare_state *sp = &s->spare;
    struct buf got = { 0 };
    if (!is_app(s) || f->channel != 0)
        return -EBADMSG;
    int rc = spare_frame_read(f, buf_head(&sp->last), sp->last.len, &id, &msb, &got);
    if (rc < 0) { /* without memory too: the next delta's base would be lost */
        buf_free(&got);
        return rc;
    }
    const uint8_t *setup = buf_head(&got);
    size_t len = got.len;
    if (len) { /* the base of the next delta, whatever this one is worth */
        buf_free(&sp->last);
        sp->last = got;
    }
    if (!len) { /* withdrawn */
        buf_free(&got);
        if (sp->have && sp->have_id == id)
            sp->have = false;
        release_waiting(s); /* a withdrawal first: there is none to wait for */
        return 0;
    }
    /* It must be a successful setup reply of protocol 11.0 whose length is its size. */
    uint16_t units;
    if (!xp_peek16(setup, len, XP_SETUP_LENGTH_AT, msb, &units) || len < XP_SETUP_PREFIX_SIZE ||
        setup[XP_SETUP_STATUS_AT] != 1 || XP_SETUP_PREFIX_SIZE + 4 * (size_t)units != len)
        return -EBADMSG;
    buf_clear(&sp->have_setup);
    if (buf_append(&sp->have_setup, setup, len) < 0) {
        sp->have = false;
        release_waiting(s);
        return 0; /* clients connect the ordinary way */
    }
    sp->have = true;
    sp->have_id = id;
    sp->have_msb = msb;
    sp->have_major = (uint16_t)(msb ? setup[2] << 8 | setup[3] : setup[3] << 8 | setup[2]);
    sp->have_minor = (uint16_t)(msb ? setup[4] << 8 | setup[5] : setup[5] << 8 | setup[4]);
    release_waiting(s);
    return 0;
}

bool spare_fits(const struct session *s, bool msb, uint16_t major, uint16_t minor)
{
    const struct spare_state *sp = &s->spare;
    return sp->have && sp->have_msb == msb && major == sp->have_major && minor == sp->have_minor;
}

uint32_t spare_take(struct session *s, struct buf *setup)
{
    struct spare_state *sp = &s->spare;
    if (!sp->have || buf_append(setup, buf_head(&sp->have_setup), sp->have_setup.len) < 0)
        return 0;
    sp->have = false;
    buf_clear(&sp->have_setup);
    return sp->have_id;
}

/* ---------------------------------------------------------------- the frame */

int spare_frame_encode(struct buf *out, uint32_t id, bool msb, const uint8_t *setup, size_t len)
{
    struct buf head = { 0 };
    int rc = buf_put_varint(&head, id);
    if (!rc)
        rc = buf_append(&head, &(uint8_t){ msb }, 1);
    if (!rc)
        rc = frame_encode_header(out, FRAME_SPARE, 0, head.len + len);
    if (!rc)
        rc = buf_append(out, buf_head(&head), head.len);
    if (!rc && len)
        rc = buf_append(out, setup, len);
    buf_free(&head);
    return rc;
}

/* A delta's changes: runs of (skip, length, bytes) where setup differs from base. Equal
 * stretches shorter than a run's head are carried in the run. */
static int delta_runs(struct buf *out, const uint8_t *base, const uint8_t *setup, size_t len)
{
    size_t at = 0, i = 0;
    while (i < len) {
        if (base[i] == setup[i]) {
            i++;
            continue;
        }
        size_t end = i + 1, same = 0;
        for (size_t j = end; j < len && same < 3; j++) {
            same = base[j] == setup[j] ? same + 1 : 0;
            if (!same)
                end = j + 1;
        }
        if (buf_put_varint(out, i - at) || buf_put_varint(out, end - i) || buf_append(out, setup + i, end - i))
            return -ENOMEM;
        at = i = end;
    }
    return 0;
}

int spare_frame_encode_delta(struct buf *out, uint32_t id, bool msb, const uint8_t *base, size_t base_len,
                             const uint8_t *setup, size_t len)
{
    if (!base || !len || base_len != len)
        return -EINVAL;
    struct buf body = { 0 };
    int rc = buf_put_varint(&body, id);
    if (!rc)
        rc = buf_append(&body, &(uint8_t){ (uint8_t)(2 | msb) }, 1);
    if (!rc)
        rc = delta_runs(&body, base, setup, len);
    if (!rc && body.len >= len) /* no shorter: the whole reply */
        rc = -EINVAL;
    if (!rc)
        rc = frame_encode(out, FRAME_SPARE, 0, buf_head(&body), body.len);
    buf_free(&body);
    return rc;
}

int spare_frame_read(const struct frame *f, const uint8_t *base, size_t base_len, uint32_t *id, bool *msb,
                     struct buf *setup)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t v;
    uint8_t m;
    if (rd_varint(&r, &v) < 0 || v == 0 || v > UINT32_MAX || rd_u8(&r, &m) < 0 || m > 3)
        return -EBADMSG;
    *id = (uint32_t)v;
    *msb = m & 1;
    if (!(m & 2)) /* the whole reply, or none */
        return buf_append(setup, f->payload + r.pos, rd_left(&r)) < 0 ? -ENOMEM : 0;
    if (!base_len) /* a delta before any whole reply */
        return -EBADMSG;
    if (buf_append(setup, base, base_len) < 0)
        return -ENOMEM;
    uint8_t *p = setup->data + setup->off + setup->len - base_len;
    for (size_t at = 0; rd_left(&r);) {
        uint64_t skip, n;
        const uint8_t *bytes;
        if (rd_varint(&r, &skip) < 0 || rd_varint(&r, &n) < 0 || n == 0 || skip > base_len - at ||
            n > base_len - at - skip || rd_bytes(&r, &bytes, (size_t)n) < 0)
            return -EBADMSG;
        memcpy(p + at + skip, bytes, (size_t)n);
        at += (size_t)(skip + n);
    }
    return 0;
}

int spare_frame_parse(const struct frame *f, uint32_t *id, bool *msb, const uint8_t **setup, size_t *len)
{
    struct rd r = rd_make(f->payload, f->len, false);
    uint64_t v;
    uint8_t m;
    if (rd_varint(&r, &v) < 0 || v == 0 || v > UINT32_MAX || rd_u8(&r, &m) < 0 || m > 1)
        return -EBADMSG;
    *id = (uint32_t)v;
    *msb = m;
    *len = rd_left(&r);
    *setup = f->payload + r.pos;
    return 0;
}

static void listen_probes_done(void *ctx, struct observer *o)
{
    (void)o;
    spare_offer(ctx);
}

static void listen_root(void *ctx, uint32_t root, uint32_t masks, uint16_t width, uint16_t height)
{
    spare_check_root(ctx, root, masks, width, height);
}

void spare_listen(struct session *s, struct observer_listener *out)
{
    *out = (struct observer_listener){ .ctx = s, .on_probes_done = listen_probes_done, .on_root = listen_root };
}
