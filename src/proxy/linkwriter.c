/* linkwriter.c -- what goes onto the link, and when: the scheduler (round robin over the
 * channels, input ahead of bulk), the flush policy (write at once, or hold briefly to fill a
 * packet), the pacer's and the kernel queue's budgets, ACKs of what the peer sent, and the
 * memory bound (stop reading X peers while too much is held). Its one entry per loop turn
 * is linkwriter_pump(), called before each sleep. Must not block. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "link/transport.h"
#include "proxy/session_private.h"
#include "proxy/spare.h"

/* ---------------------------------------------------------------- memory bound
 * What a side holds is the codec (fixed once the window is agreed: codec_reserve, plus
 * codec_text_reserve for text chunks) and its buffers. Above the high mark the session stops reading its X peers (the app side's
 * clients, the display side's server connections), which then block as on a slow server,
 * until the link has drained it below the low mark. Nothing is dropped. */

/* The high mark leaves room, within the bound, for the codec, the process, one turn of
 * reads (64 events of READ_CHUNK) and one message crossing while paused, held twice (being
 * read, and framed into the queue behind it). With 16 MiB requests that room is 36 MiB, so
 * under a 64 MiB bound the mark falls to its floor, an eighth of the bound. */

void linkwriter_set_window(struct session *s, int window_log)
{
    uint64_t limit = s->cfg.max_memory, floor = limit / 8;
    /* the body models: this side's encoders' budget, and as much again for its decoders
     * (bounded by the peer's budget, the same with the same --max-memory) */
    uint64_t fixed = codec_reserve(window_log) + codec_text_reserve() + MEM_BASE + BUF_KEPT_BYTES + 64 * READ_CHUNK +
                     2 * (uint64_t)XS_MAX_REQUEST_BYTES + 2 * (uint64_t)s->xc_budget.cap +
                     s->refs_budget.cap + (s->dict ? XC_PIXCACHE_BYTES + 2 * pixcache_budget(s) : 0);
    s->mem_high = limit > fixed + floor ? limit - fixed : floor;
    s->mem_low = s->mem_high / 4 * 3;
}

static uint64_t held_trim(struct buf *b)
{
    buf_trim(b, BUF_KEEP);
    return b->cap;
}

/* Once per loop turn: gives idle memory back, counts what is held, and pauses or resumes
 * reading. Bytes of partial messages (a request being read, a message being received) cannot
 * drain until their message is whole: once everything else has drained below the low mark,
 * one channel at a time may finish reading the message it is in, and one may receive the
 * rest of a partial message beyond its credit. So a message larger than what is left still
 * passes, nothing waits on itself, and partial messages complete only as fast as the link
 * drains what they become (not all at once: each would then be held whole). */
static void mem_check(struct session *s)
{
    buf_clear(&s->xc_scratch); /* scratch of one call: its last contents are spent */
    uint64_t held = held_trim(&s->link_rx) + held_trim(&s->link_tx) + held_trim(&s->wire_rx) + held_trim(&s->wire_tx) +
                    held_trim(&s->xc_scratch) + held_trim(&s->replay);
    uint64_t partial = 0;
    for (struct channel *ch = s->channels; ch; ch = ch->next) {
        uint64_t in = held_trim(&ch->from_x), rx = held_trim(&ch->from_link) + held_trim(&ch->dec_in);
        uint64_t tx = held_trim(&ch->to_x);
        held += in + rx + tx + held_trim(&ch->to_link);
        /* Bytes for an X peer drain only as it reads, and a client blocked writing to us
         * reads nothing until we read it (a PutImage crossing a GetImage reply): they do not
         * keep the exceptions below from being granted, or nothing would move. */
        partial += (ch->from_x.len ? in : 0) + (ch->from_link.len + ch->dec_in.len ? rx : 0) + tx;
    }
    s->mem_held = held;
    if (held > s->mem_peak)
        s->mem_peak = held;
    bool was = s->mem_paused;
    if (held > s->mem_high)
        s->mem_paused = true;
    else if (held < s->mem_low)
        s->mem_paused = false;
    if (s->mem_paused && !was) {
        s->mem_pauses++;
        log_debug("memory: %llu KiB held, above %llu KiB: not reading X peers", (unsigned long long)held / 1024,
                  (unsigned long long)s->mem_high / 1024);
    }
    if (!s->mem_paused) {
        s->mem_reader = s->mem_receiver = NULL;
        return;
    }
    if (s->mem_reader && (s->mem_reader->dead || !s->mem_reader->from_x.len))
        s->mem_reader = NULL;
    if (s->mem_receiver && (s->mem_receiver->dead || !(s->mem_receiver->from_link.len + s->mem_receiver->dec_in.len)))
        s->mem_receiver = NULL;
    if (held - partial >= s->mem_low) /* the link is still draining: no new exception */
        return;
    for (struct channel *ch = s->channels; ch && (!s->mem_reader || !s->mem_receiver); ch = ch->next) {
        if (ch->dead)
            continue;
        if (!s->mem_reader && ch->from_x.len)
            s->mem_reader = ch;
        if (!s->mem_receiver && ch->from_link.len + ch->dec_in.len)
            s->mem_receiver = ch;
    }
}

/* ---------------------------------------------------------------- link output */

/* Writes b to the link: 0 when all is out, 1 when the socket is full, -1 when the link broke.
 * Everything but the handshake (hs_tx) is the link's stream: counted, paced, kept to resend. */
static int link_write_buf(struct session *s, struct buf *b)
{
    bool stream = b != &s->hs_tx;
    while (b->len) {
        uint64_t t0 = clock_ns();
        ssize_t n = write(s->link_out, buf_head(b), b->len);
        s->stats.write_ns += clock_ns() - t0;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 1;
            if (s->state == SESSION_HANDSHAKE)
                session_end(s, false, "link lost: %s", strerror(errno));
            else
                relink_lost(s, strerror(errno));
            return -1;
        }
        s->stats.link_writes++;
        s->stats.link_bytes_out += (uint64_t)n;
        if (stream) {
            pacer_on_send(&s->pacer, (uint64_t)n, s->now());
            relink_sent(s, buf_head(b), (size_t)n);
        }
        buf_consume(b, (size_t)n);
    }
    return 0;
}

/* How long link_tx may wait for more frames: on a slow link each write costs a flushed
 * zstd block (3-10 bytes of its own) and usually a packet, so a few ms of gathering buys
 * bytes; on a fast one it only buys latency. */
uint64_t linkwriter_flush_delay_ns(const struct session *s)
{
    switch (s->cfg.link_speed) {
    case CODEC_SPEED_MODEM: return 10000000;
    case CODEC_SPEED_ISDN: return 5000000;
    case CODEC_SPEED_ADSL: return 2000000;
    case CODEC_SPEED_LAN: return 0;
    }
    uint64_t r = s->link_rate_Bps; /* auto: by the measured rate; unknown (not TCP): at once */
    return !r ? 0 : r < 16000 ? 10000000 : r < 64000 ? 5000000 : r < 1000000 ? 2000000 : 0;
}

static bool channels_waiting(const struct session *s)
{
    for (const struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->on_link && ch->to_link.len && ch->send_credit)
            return true;
    return false;
}


/* ---------------------------------------------------------------- the one way onto the link
 * Every frame of the link's stream is appended to link_tx here: the scheduler's DATA and
 * CLOSE, and the control frames of others (link_send, link_frame_begin/end). Here they are
 * counted, and here a failure is handled: what was half appended is taken back and the
 * session ends (a lost control frame would leave the halves disagreeing).
 * Control frames (OPEN, WINDOW, FACT, CLOSE, SPARE, GOODBYE, PING, ACK) make the next write
 * go at once: the peer acts on them; the ACK because the pacer's round trip and rate come
 * from its timing. Not PREDICTED: the client has its answer already, and the display side
 * needs it only before the request it precedes, which the scheduler queues behind it. */

static struct buf *link_frame_begin(struct session *s)
{
    s->tx_begin = s->link_tx.len;
    return &s->link_tx;
}

static int link_frame_end(struct session *s, int rc)
{
    if (rc < 0) {
        s->link_tx.len = s->tx_begin;
        session_end(s, false, "cannot queue a frame for the link: %s", strerror(-rc));
        return rc;
    }
    for (size_t at = s->tx_begin; at < s->link_tx.len;) {
        struct frame f;
        long n = frame_decode(buf_head(&s->link_tx) + at, s->link_tx.len - at, &f);
        if (n <= 0 || f.type != FRAME_PREDICTED)
            s->tx_urgent = true;
        if (n <= 0 || (f.type != FRAME_DATA && f.type != FRAME_PREDICTED && f.type != FRAME_ACK))
            s->tx_control = true; /* a write that the peer acts on: a trickle's ACK rides it */
        if (n <= 0)
            break;
        s->stats.link_frames_out++;
        at += (size_t)n;
    }
    return 0;
}

int link_send(struct session *s, uint8_t type, uint32_t channel, const void *payload, size_t len)
{
    return link_frame_end(s, frame_encode(link_frame_begin(s), type, channel, payload, len));
}

int link_send_frames(struct session *s, const struct buf *frames)
{
    return link_frame_end(s, buf_append(link_frame_begin(s), buf_head(frames), frames->len));
}

/* ---------------------------------------------------------------- gathered DATA
 * Without the zstd stage (--compress 0: a LAN, this machine), a DATA frame's payload is not
 * copied into link_tx: its header is, and the payload is written from the channel's to_link
 * in the same writev, within the same pump (the bytes stay where they are until then: nothing
 * appends to to_link, trims or frees it between packing and writing). Whatever the write does
 * not take is copied into link_tx at once, so link_tx outside the pump is what it always was:
 * the link's bytes do not change, only a copy per byte goes (an eighth of a half's time on
 * loopback). */

/* Bytes waiting in link_tx, with the gathered payloads. */
static size_t link_tx_bytes(const struct session *s) { return s->link_tx.len + s->tx_ref_bytes; }

/* Copies the gathered payloads into link_tx where they belong: link_tx is then whole. */
static int tx_refs_settle(struct session *s)
{
    if (!s->n_tx_refs)
        return 0;
    struct buf whole = { 0 };
    size_t from = 0;
    int rc = buf_reserve(&whole, link_tx_bytes(s));
    for (unsigned i = 0; !rc && i < s->n_tx_refs; i++) {
        rc = buf_append(&whole, buf_head(&s->link_tx) + from, s->tx_refs[i].at - from);
        if (!rc)
            rc = buf_append(&whole, s->tx_refs[i].p, s->tx_refs[i].n);
        from = s->tx_refs[i].at;
    }
    if (!rc)
        rc = buf_append(&whole, buf_head(&s->link_tx) + from, s->link_tx.len - from);
    s->n_tx_refs = 0;
    s->tx_ref_bytes = 0;
    if (rc < 0) {
        buf_free(&whole);
        session_end(s, false, "%s", "out of memory writing the link");
        return rc;
    }
    buf_free(&s->link_tx);
    s->link_tx = whole;
    return 0;
}

/* A DATA frame of this pump: the header into link_tx, the payload gathered (or copied, as any
 * frame, with the zstd stage or when the list is full). As link_send, and counted alike. */
static int link_send_data(struct session *s, uint32_t channel, const uint8_t *payload, size_t n)
{
    if (s->codec || s->n_tx_refs == TX_REFS_MAX)
        return link_send(s, FRAME_DATA, channel, payload, n);
    s->tx_begin = s->link_tx.len;
    int rc = frame_encode_header(&s->link_tx, FRAME_DATA, channel, n);
    if (rc < 0)
        return link_frame_end(s, rc);
    s->tx_refs[s->n_tx_refs++] = (struct tx_ref){ .at = s->link_tx.len, .p = payload, .n = n };
    s->tx_ref_bytes += n;
    s->tx_urgent = true; /* as link_frame_end for any frame but PREDICTED; DATA is not control */
    s->stats.link_frames_out++;
    return 0;
}

/* Writes link_tx and the gathered payloads in one writev, then settles what is left (a full
 * socket, a broken link) into link_tx and goes on as link_write_buf. */
static int link_write_tx(struct session *s)
{
    if (!s->n_tx_refs)
        return link_write_buf(s, &s->link_tx);
    struct iovec iov[2 * TX_REFS_MAX + 1];
    int k = 0;
    size_t from = 0;
    for (unsigned i = 0; i < s->n_tx_refs; i++) {
        if (s->tx_refs[i].at > from)
            iov[k++] = (struct iovec){ (void *)(buf_head(&s->link_tx) + from), s->tx_refs[i].at - from };
        iov[k++] = (struct iovec){ (void *)s->tx_refs[i].p, s->tx_refs[i].n };
        from = s->tx_refs[i].at;
    }
    if (s->link_tx.len > from)
        iov[k++] = (struct iovec){ (void *)(buf_head(&s->link_tx) + from), s->link_tx.len - from };
    uint64_t t0 = clock_ns();
    ssize_t n = writev(s->link_out, iov, k);
    s->stats.write_ns += clock_ns() - t0;
    if (n <= 0) /* as link_write_buf will find it, with link_tx whole */
        return tx_refs_settle(s) < 0 ? -1 : link_write_buf(s, &s->link_tx);
    s->stats.link_writes++;
    s->stats.link_bytes_out += (uint64_t)n;
    pacer_on_send(&s->pacer, (uint64_t)n, s->now());
    size_t left = (size_t)n;
    for (int i = 0; i < k && left; i++) {
        size_t part = iov[i].iov_len < left ? iov[i].iov_len : left;
        relink_sent(s, iov[i].iov_base, part);
        left -= part;
    }
    if ((size_t)n == link_tx_bytes(s)) {
        s->n_tx_refs = 0;
        s->tx_ref_bytes = 0;
        buf_clear(&s->link_tx);
        return 0;
    }
    /* The rest: dropped from the front of link_tx and the list, then settled. */
    left = (size_t)n;
    size_t tx_done = 0; /* bytes of link_tx itself written */
    unsigned r = 0;
    from = 0;
    while (left) {
        size_t seg = (r < s->n_tx_refs ? s->tx_refs[r].at : s->link_tx.len) - from;
        if (left < seg) {
            tx_done += left;
            left = 0;
            break;
        }
        tx_done += seg;
        left -= seg;
        if (r == s->n_tx_refs)
            break;
        if (left < s->tx_refs[r].n) { /* partly written: its rest stays gathered */
            s->tx_refs[r].p += left;
            s->tx_refs[r].n -= left;
            s->tx_ref_bytes -= left;
            left = 0;
            break;
        }
        left -= s->tx_refs[r].n;
        s->tx_ref_bytes -= s->tx_refs[r].n;
        from = s->tx_refs[r].at;
        r++;
    }
    memmove(s->tx_refs, s->tx_refs + r, (s->n_tx_refs - r) * sizeof s->tx_refs[0]);
    s->n_tx_refs -= r;
    for (unsigned i = 0; i < s->n_tx_refs; i++)
        s->tx_refs[i].at -= tx_done;
    buf_consume(&s->link_tx, tx_done);
    if (tx_refs_settle(s) < 0)
        return -1;
    return link_write_buf(s, &s->link_tx);
}

/* Under contention, fewer packets per event (docs/DESIGN.md, "Coalescing under contention"):
 * on a TCP link whose round trip the kernel sees COALESCE_QUEUE_US above its least (a
 * queue: on a shared radio, the other stations' airtime), a small write waits while an
 * earlier one is in flight, and what gathers meanwhile (events, drawing) goes as one write
 * when the kernel has it acknowledged, or after a round trip (at most COALESCE_MAX_NS). */
bool linkwriter_coalesce_holds(const struct transport_queue *q, uint64_t in_flight, uint64_t rx_Bps, uint64_t held_ns)
{
    uint64_t queue_us = q->min_rtt_us > COALESCE_QUEUE_US ? q->min_rtt_us : COALESCE_QUEUE_US;
    if (!q->min_rtt_us || q->rtt_us <= q->min_rtt_us + queue_us || (!q->unacked && !q->unsent))
        return false;
    if (in_flight > COALESCE_MAX_IN_FLIGHT || rx_Bps >= COALESCE_RX_BULK_BPS)
        return false; /* the queue is this link's own bulk, which the pacer keeps short */
    uint64_t bound = (uint64_t)q->rtt_us * 1000u;
    return held_ns < (bound < COALESCE_MAX_NS ? bound : COALESCE_MAX_NS);
}

static bool link_coalesce(struct session *s, uint64_t now)
{
    if (now - s->rx_mark_ns >= 100000000u) { /* what the link brought over the last 100 ms or more */
        s->rx_recent_Bps = s->rx_mark_ns ? (s->stats.link_bytes_in - s->rx_mark_bytes) * 1000000000u / (now - s->rx_mark_ns) : 0;
        s->rx_mark_ns = now;
        s->rx_mark_bytes = s->stats.link_bytes_in;
    }
    struct transport_queue q;
    if (!s->link_is_tcp || s->tx_control || s->goodbye || s->wire_tx.len || link_tx_bytes(s) > COALESCE_SMALL ||
        channels_waiting(s) || transport_queue_info(s->link_out, &q) < 0 ||
        !linkwriter_coalesce_holds(&q, s->pacer.sent - s->pacer.acked, s->rx_recent_Bps,
                                   s->hold_since ? now - s->hold_since : 0))
        return false;
    if (!s->hold_since)
        s->hold_since = now;
    s->coalescing = true;
    loop_wake_by(s->loop, clock_ns() + COALESCE_POLL_NS);
    return true;
}

/* Whether link_tx waits for more: only DATA nobody waits for, less than FLUSH_BYTES, for at
 * most the link's delay since it began to wait; or a small write under contention
 * (link_coalesce). Asks the loop to wake at the deadline. */
static bool link_hold(struct session *s)
{
    uint64_t delay = linkwriter_flush_delay_ns(s);
    if (!s->link_tx.len)
        return false;
    if (link_coalesce(s, s->now()))
        return true;
    if (s->coalescing) {
        s->coalescing = false;
        s->flushes[FLUSH_COALESCED]++;
        return false;
    }
    if (!delay || s->goodbye) {
        s->flushes[FLUSH_AT_ONCE]++;
        return false;
    }
    if (s->tx_urgent) {
        s->flushes[FLUSH_URGENT]++;
        return false;
    }
    if (link_tx_bytes(s) >= FLUSH_BYTES || channels_waiting(s)) { /* as full as it will get */
        s->flushes[FLUSH_FULL]++;
        return false;
    }
    uint64_t now = s->now();
    if (!s->hold_since)
        s->hold_since = now;
    if (now - s->hold_since >= delay) {
        s->flushes[FLUSH_DEADLINE]++;
        return false;
    }
    loop_wake_by(s->loop, clock_ns() + (s->hold_since + delay - now));
    return true;
}

/* Debug: one line per link write, its frames (type:channel:length) and what zstd made of
 * them, to account for every byte on the link. */
static void trace_write(const struct session *s, size_t wire_len)
{
    char line[1024];
    size_t used = 0;
    for (size_t at = 0; at < s->link_tx.len && used < sizeof line - 40;) {
        struct frame f;
        long n = frame_decode(buf_head(&s->link_tx) + at, s->link_tx.len - at, &f);
        if (n <= 0)
            break;
        used += (size_t)snprintf(line + used, sizeof line - used, " %s:%u:%u", frame_type_name(f.type), f.channel, f.len);
        at += (size_t)n;
    }
    log_debug("link write: %zu frame bytes -> %zu:%s", s->link_tx.len, wire_len, line);
}

static void link_write_frames(struct session *s)
{
    if (link_write_buf(s, &s->hs_tx) != 0 || s->state != SESSION_UP)
        return;
    if (s->link_tx.len && link_hold(s)) {
        link_write_buf(s, &s->wire_tx);
        return;
    }
    s->tx_urgent = s->tx_control = false;
    s->hold_since = 0;
    /* The rate moves slowly: a TCP_INFO of the last 100 ms (the scheduler's, most often) will do. */
    struct transport_queue q;
    uint64_t now = s->now();
    if (s->link_tx.len && s->link_is_tcp && now - s->link_rate_ns >= LINK_RATE_AGE_NS &&
        transport_queue_info(s->link_out, &q) == 0) {
        s->link_rate_Bps = q.rate_Bps;
        s->link_rate_ns = now;
    }
    if (!s->codec) {
        link_write_tx(s);
        return;
    }
    if (s->link_tx.len) { /* one flushed zstd block per write */
        codec_set_link_rate(s->codec, s->link_rate_Bps); /* for the automatic level */
        uint64_t t0 = clock_ns();
        size_t wire0 = s->wire_tx.len;
        s->stats.frame_bytes_out += s->link_tx.len;
        int rc = codec_compress(s->codec, buf_head(&s->link_tx), s->link_tx.len, &s->wire_tx);
        s->stats.encode_ns += clock_ns() - t0;
        if (log_get_level() >= LOG_DEBUG)
            trace_write(s, s->wire_tx.len - wire0);
        buf_clear(&s->link_tx);
        if (rc < 0) {
            session_end(s, false, "%s", "cannot compress the link stream");
            return;
        }
    }
    link_write_buf(s, &s->wire_tx);
}

/* Writes what may go now. Gathered payloads left unwritten (a held write, a full socket) are
 * copied into link_tx before returning: they are valid only within this pump. */
static void link_write(struct session *s)
{
    link_write_frames(s);
    tx_refs_settle(s);
}

/* Bytes waiting for the link, compressed or not yet. */
static size_t link_backlog(const struct session *s) { return link_tx_bytes(s) + s->wire_tx.len; }

/* How many bytes to pack for the link now. On TCP, the kernel may hold only about 5 ms
 * of unsent data at the link's measured rate (2 KiB to 256 KiB): the rest waits here, per
 * channel, where the scheduler still chooses what goes first. The low-water mark follows,
 * so writability wakes us when the kernel runs low. */
static size_t kernel_budget(struct session *s, size_t wanted)
{
    if (!s->link_is_tcp)
        return LINK_OUT_HIGH;
    /* The kernel holds at most what it held at the last look plus what was written since:
     * when that and all we want fit the least target, asking (a syscall a write) changes nothing. */
    uint64_t bound = s->kq_unsent + (s->stats.link_bytes_out - s->kq_out);
    if (s->kq_known && bound + wanted <= LINK_TARGET_MIN)
        return (size_t)(LINK_TARGET_MIN - bound);
    struct transport_queue q;
    if (transport_queue_info(s->link_out, &q) < 0) {
        s->kq_known = false;
        return LINK_OUT_HIGH;
    }
    s->kq_known = true;
    s->kq_unsent = q.unsent;
    s->kq_out = s->stats.link_bytes_out;
    s->link_rate_Bps = q.rate_Bps;
    s->link_rate_ns = s->now();
    uint64_t target = q.rate_Bps / 200;
    if (target < LINK_TARGET_MIN)
        target = LINK_TARGET_MIN;
    if (target > LINK_TARGET_MAX)
        target = LINK_TARGET_MAX;
    if (target > 2 * s->lowat || 2 * target < s->lowat) {
        s->lowat = (uint32_t)target;
        transport_set_lowat(s->link_out, s->lowat);
    }
    return q.unsent >= target ? 0 : (size_t)(target - q.unsent);
}

/* ... and no more than the pacer lets be in flight beyond the peer (pacer.h): the kernel
 * cannot see a queue in a relay, a modem or a router. Its window counts link bytes; the
 * scheduler packs frame bytes, which the zstd stage shrinks by the recent ratio. */
static size_t link_budget(struct session *s, size_t queued, bool small)
{
    size_t budget = kernel_budget(s, queued + link_backlog(s));
    uint64_t allow = small ? pacer_allowance_small(&s->pacer) : pacer_allowance(&s->pacer), ratio = 1;
    if (s->codec && s->stats.link_bytes_out)
        ratio = s->stats.frame_bytes_out / s->stats.link_bytes_out;
    allow *= ratio < 1 ? 1 : ratio > 8 ? 8 : ratio;
    if (allow < queued)
        pacer_note_blocked(&s->pacer);
    return allow < budget ? (size_t)allow : budget;
}

/* Packs queued channel data into link_tx, a DATA_CHUNK per channel per round, until the
 * link buffer is full or nothing is ready; then CLOSE for channels whose X peer has gone. */
static void schedule_channels(struct session *s)
{
    size_t queued = 0;
    for (const struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead && ch->on_link && ch->send_credit)
            queued += ch->to_link.len;
    size_t budget = queued ? link_budget(s, queued, false) : 0, small_budget = queued ? link_budget(s, queued, true) : 0;
    /* First the channels with little queued (a key press, a small reply, a drawing
     * request), whole; then the rest, a piece each per round. */
    bool progress = true, small_first = true; /* one pass at least: CLOSEs go even without data */
    while (progress || small_first) {
        progress = false;
        for (struct channel *ch = s->channels; ch; ch = ch->next) {
            if (ch->dead || !ch->on_link || (small_first && ch->to_link.len > SMALL_QUEUE))
                continue;
            size_t lim = small_first ? small_budget : budget; /* small ones need not wait behind bulk for an ACK */
            size_t n = ch->to_link.len, backlog = link_backlog(s), room = backlog < lim ? lim - backlog : 0;
            if (n > DATA_CHUNK)
                n = DATA_CHUNK;
            if (n > room)
                n = room;
            if (n > ch->send_credit)
                n = (size_t)ch->send_credit;
            if (n) {
                bool urgent = s->tx_urgent;
                if (link_send_data(s, ch->id, buf_head(&ch->to_link), n) < 0)
                    return;
                s->tx_urgent = urgent; /* DATA goes at once only if a peer waits for it: */
                buf_consume(&ch->to_link, n);
                ch->link_out += n;
                ch->send_credit -= n;
                progress = true;
                if (ch->urgent) /* some of it may be what a peer waits for */
                    s->tx_urgent = true;
                if (!ch->to_link.len)
                    ch->urgent = false;
            }
            if (ch->x_closed && !ch->to_link.len && !ch->peer_closed) {
                /* It is reaped before the write: its payloads are copied now. */
                if (tx_refs_settle(s) < 0 || link_send(s, FRAME_CLOSE, ch->id, NULL, 0) < 0)
                    return;
                ch->dead = true;
            }
        }
        if (small_first) { /* then everyone */
            small_first = false;
            progress = true;
        }
    }
    /* Rotate so the next turn starts with another channel. */
    if (s->channels && s->channels->next) {
        struct channel *first = s->channels, *last = first;
        while (last->next)
            last = last->next;
        s->channels = first->next;
        first->next = NULL;
        last->next = first;
    }
}

/* Tells the peer how many of its link bytes we have read (docs/DESIGN.md, "Acknowledgements"):
 * - at once for 8 * ACK_BYTES, and a PING's at once;
 * - a lump: ACK_BYTES, or ACK_FEW with a write that goes anyway, at most every ACK_INTERVAL_NS;
 * - ACK_DELAY_NS after the first byte not yet acknowledged once ACK_FEW have come: a peer
 *   whose window is full (it is at least PACER_MIN_WINDOW, twice ACK_FEW) gets it promptly;
 * - a trickle (fewer than ACK_FEW) never in a write of its own: it rides on a write that goes
 *   anyway, at once when that write holds a frame the peer acts on (a CLOSE, a WINDOW, a PING,
 *   ...), on DATA alone once ACK_FEW_DELAY_NS old; else the peer's PING on a quiet link asks
 *   for it. An ACK-only write after the last of a trickle kept the link busy half a second
 *   after a pen stopped, and no peer's window waits on so few bytes.
 * Bytes that carried only ACK frames are acknowledged once ACK_FEW of them have come: an idle
 * link would otherwise carry ACKs of ACKs both ways forever. An ACK costs a few bytes on the
 * way back, so a trickle of input is acknowledged in lumps; its lateness adds to the peer's
 * round-trip samples, of which the pacer keeps the least. */
static void send_ack(struct session *s)
{
    uint64_t pending = s->rx_stream - s->ack_sent, now = s->now();
    if (!pending || (!s->ack_worthy && pending < ACK_FEW))
        return;
    if (!s->ack_first_ns)
        s->ack_first_ns = now;
    bool goes = s->link_tx.len > 0, urgent = s->tx_urgent;
    bool lump = pending >= ACK_BYTES || (pending >= ACK_FEW && goes);
    bool riding = false; /* a trickle's: the write it rides keeps its own urgency */
    if (s->ack_now || pending >= 8 * ACK_BYTES || (lump && now - s->ack_sent_ns >= ACK_INTERVAL_NS) ||
        (pending >= ACK_FEW && now - s->ack_first_ns >= ACK_DELAY_NS)) {
        /* due */
    } else if (pending >= ACK_FEW) {
        uint64_t due = lump ? s->ack_sent_ns + ACK_INTERVAL_NS : s->ack_first_ns + ACK_DELAY_NS;
        loop_wake_by(s->loop, clock_ns() + (due > now ? due - now : 0));
        return;
    } else if (goes && (s->tx_control || now - s->ack_first_ns >= ACK_FEW_DELAY_NS)) {
        riding = true;
    } else {
        return; /* a trickle waits for a write, more bytes, or the peer's PING */
    }
    s->ack_first_ns = 0;
    s->ack_worthy = s->ack_now = false;
    struct buf v = { 0 };
    int rc = buf_put_varint(&v, s->rx_stream);
    rc = rc < 0 ? rc : link_send(s, FRAME_ACK, 0, buf_head(&v), v.len);
    buf_free(&v);
    if (rc < 0)
        return;
    if (riding)
        s->tx_urgent = urgent;
    else
        s->tx_control = true; /* a peer's window may wait for it: never held for contention */
    s->ack_sent = s->rx_stream;
    s->ack_sent_ns = now;
}

/* The link's measured rate goes to every channel's encoder, which codes large images with
 * the effort the rate affords (xenc_set_link_rate). Told again when it has moved by a
 * quarter. The pacer's alone, measured end to end from the peer's ACKs: until it has one,
 * the encoders keep the effort of an unknown rate (the smallest code). The kernel's rate
 * is not taken even then: it sees the first hop alone, which may be a local one (a VPN's
 * end, an ssh forward, tincan-link), and after the handshake it is that of a few bytes
 * over that hop (16 GB/s to tincan-link on loopback): firefox's first images then went as
 * row filters, its 128x128 icon 65 KB before zstd instead of 10 KB. Taking the larger of
 * the two, a firefox page over 256 kbit/s went as the row filters' 7.7 MB instead of 0.6. */
static void tell_rate(struct session *s)
{
    uint64_t rate = pacer_rate(&s->pacer);
    uint64_t told = s->rate_told_Bps;
    if (!rate || (told && rate < told + told / 4 && rate > told - told / 4))
        return;
    s->rate_told_Bps = rate;
    log_debug("link rate for the coders: %llu B/s", (unsigned long long)rate);
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (ch->enc)
            xenc_set_link_rate(ch->enc, rate);
}

void linkwriter_pump(struct session *s)
{
    tell_rate(s);
    if (s->state == SESSION_UP || s->state == SESSION_DETACHED) /* what came before an outage still goes */
        for (struct channel *ch = s->channels; ch; ch = ch->next)
            if (!ch->dead && ch->on_link) {
                channel_write_x(ch);
                if (!ch->dead)
                    channel_grant(ch);
            }
    if (s->state == SESSION_UP) {
        schedule_channels(s);
        send_ack(s);
    }
    if (s->mem_reader && s->mem_reader->dead)
        s->mem_reader = NULL;
    if (s->mem_receiver && s->mem_receiver->dead)
        s->mem_receiver = NULL;
    if (s->state != SESSION_UP) /* no write comes in this pump: link_tx whole before channels go */
        tx_refs_settle(s);
    reap_channels(s);
    if (s->state != SESSION_ENDED)
        link_write(s);
    if (s->state == SESSION_ENDED)
        return;
    if (s->goodbye && !link_backlog(s) && !s->hs_tx.len) {
        session_end(s, true, "%s", "session ended");
        return;
    }
    /* The memory check before the channels' interest: a channel it lets finish the message
     * it reads must want to read now, and one it lets receive beyond its credit must be
     * granted it now: with every other channel paused, nothing else may wake the loop. */
    const struct channel *receiver = s->mem_receiver;
    mem_check(s);
    if (s->mem_receiver && s->mem_receiver != receiver)
        channel_grant(s->mem_receiver);
    for (struct channel *ch = s->channels; ch; ch = ch->next)
        if (!ch->dead)
            channel_update_interest(ch);
    /* Wake when the link drains: to write what is packed (unless held: the loop wakes at
     * its deadline), or to pack what channels hold. */
    bool held = s->link_tx.len && s->hold_since;
    /* Channels' data waiting on the pacer's window waits for an ACK (a read), not for the
     * socket, which is writable all along: wanting it would spin. */
    bool pending = s->hs_tx.len ||
                   (s->state == SESSION_UP && (s->wire_tx.len || (s->link_tx.len && !held) ||
                                               (channels_waiting(s) && pacer_allowance(&s->pacer))));
    if (s->state == SESSION_DETACHED)
        return;
    if (s->link_in == s->link_out)
        loop_want(s->loop, &s->link_in_w, LOOP_READ | (pending ? LOOP_WRITE : 0));
    else
        loop_want(s->loop, &s->link_out_w, pending ? LOOP_WRITE : 0);
}

static void on_link_event(struct watch *w, unsigned events)
{
    struct session *s = w->data;
    if (events & LOOP_WRITE)
        link_write(s);
    if ((events & (LOOP_READ | LOOP_HUP)) && s->state != SESSION_ENDED && w == &s->link_in_w)
        session_on_link_readable(s);
}

int session_watch_link(struct session *s)
{
    int rc = loop_watch(s->loop, &s->link_in_w, s->link_in, LOOP_READ | LOOP_WRITE, on_link_event, s);
    if (!rc && s->link_out != s->link_in)
        rc = loop_watch(s->loop, &s->link_out_w, s->link_out, LOOP_WRITE, on_link_event, s);
    return rc;
}

