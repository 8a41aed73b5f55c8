/* mac_dcf.c -- the 802.11b DCF model: DIFS, slotted backoff frozen while the medium is busy,
 * collisions of equal counters, ACK or RTS/CTS exchanges, MAC retransmission up to a retry
 * limit, post-backoff, EIFS after a garbled frame. All stations hear each other (no hidden
 * terminals, no capture). The base sends from the queue its scheduler (medium.c) chooses.
 * Workload: a handful of events per frame. */
#include "mac_dcf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { EV_TX = 1, EV_DELIVER, EV_END };

struct dcf_sta {
    int has_bo;                       /* a backoff counter is running or has reached 0 */
    uint32_t bo, cw, attempts;
    int64_t ok_ns;                    /* idle medium from here on lets it send at once (DIFS/EIFS) */
    int64_t count_from_ns;            /* its counter is valid at this slot boundary */
};

struct dcf {
    struct emu_dcf_cfg c;
    struct dcf_sta s[EMU_MEDIUM_STATIONS];
    int busy;
    uint64_t gen;                     /* of the one EV_TX that is current */
    int tx[EMU_MEDIUM_STATIONS], n_tx, ok;    /* the exchange in progress */
    struct emu_mqueue *txq[EMU_MEDIUM_STATIONS];
    uint64_t tx_id[EMU_MEDIUM_STATIONS];      /* the frame each sent (it may be gone by the end) */
    int64_t garbled_end_ns;           /* end of the last frame heard in error in this exchange */
};

void emu_dcf_default(struct emu_dcf_cfg *c)
{
    *c = (struct emu_dcf_cfg){
        .difs_ns = 50000, .sifs_ns = 10000, .slot_ns = 20000,
        .cw_min = 31, .cw_max = 1023, .retry_limit = 7,
        .plcp_ns = 192000, .mac_overhead_bytes = 36,
        .ack_bytes = 14, .rts_bytes = 20, .cts_bytes = 14,
        .basic_rate_bps = 2000000, .rts_threshold_bytes = 0, .eifs_ns = 364000,
    };
}

int64_t emu_dcf_frame_ns(const struct emu_dcf_cfg *c, uint32_t mpdu_bytes, uint64_t rate_bps)
{
    return c->plcp_ns + emu_bits_ns((uint64_t)mpdu_bytes * 8, rate_bps);
}

uint64_t emu_dcf_ctrl_rate(const struct emu_dcf_cfg *c, uint64_t rate_bps)
{
    return rate_bps < c->basic_rate_bps ? rate_bps : c->basic_rate_bps;
}

static int uses_rts(const struct emu_dcf_cfg *c, uint32_t ip_bytes)
{
    return c->rts_threshold_bytes && ip_bytes + c->mac_overhead_bytes > c->rts_threshold_bytes;
}

/* Time from the start of the exchange to the end of the data frame. */
static int64_t data_end_ns(const struct emu_dcf_cfg *c, uint32_t ip_bytes, uint64_t rate_bps)
{
    uint64_t cr = emu_dcf_ctrl_rate(c, rate_bps);
    int64_t t = emu_dcf_frame_ns(c, ip_bytes + c->mac_overhead_bytes, rate_bps);
    if (uses_rts(c, ip_bytes))
        t += emu_dcf_frame_ns(c, c->rts_bytes, cr) + c->sifs_ns + emu_dcf_frame_ns(c, c->cts_bytes, cr) + c->sifs_ns;
    return t;
}

int64_t emu_dcf_exchange_ns(const struct emu_dcf_cfg *c, uint32_t ip_bytes, uint64_t rate_bps)
{
    return data_end_ns(c, ip_bytes, rate_bps) + c->sifs_ns
         + emu_dcf_frame_ns(c, c->ack_bytes, emu_dcf_ctrl_rate(c, rate_bps));
}

/* Medium time of a failed attempt: the first frame sent (RTS, or the data), then the wait
 * for the answer that does not come (SIFS + the answer's airtime). A data frame lost to noise
 * after a good RTS/CTS costs the whole exchange. */
static int64_t failed_ns(const struct emu_dcf_cfg *c, uint32_t ip_bytes, uint64_t rate_bps, int collided)
{
    uint64_t cr = emu_dcf_ctrl_rate(c, rate_bps);
    if (collided && uses_rts(c, ip_bytes))
        return emu_dcf_frame_ns(c, c->rts_bytes, cr) + c->sifs_ns + emu_dcf_frame_ns(c, c->cts_bytes, cr);
    return emu_dcf_exchange_ns(c, ip_bytes, rate_bps);
}

static struct dcf *state(const struct emu_medium *m) { return m->mac_state; }

static struct emu_mqueue *sendq(struct emu_medium *m, int st)
{
    return st == EMU_MEDIUM_BASE ? emu_medium_base_queue(m) : emu_medium_queue(m, st, 0);
}

static struct emu_mframe *head(struct emu_medium *m, int st)
{
    return m->st[st].present ? emu_mqueue_head(sendq(m, st)) : NULL;
}

static void draw(struct emu_medium *m, struct dcf_sta *s)
{
    s->has_bo = 1;
    s->bo = emu_medium_rand(m, s->cw + 1);
}

/* Counts down every running counter by the idle slots that have passed by now. */
static void advance(struct emu_medium *m, struct dcf *d)
{
    if (d->busy) return;
    for (int i = 0; i < EMU_MEDIUM_STATIONS; i++) {
        struct dcf_sta *s = &d->s[i];
        if (m->now_ns <= s->count_from_ns) continue;
        int64_t k = (m->now_ns - s->count_from_ns) / d->c.slot_ns;
        if (s->has_bo) s->bo = s->bo > k ? s->bo - (uint32_t)k : 0;
        s->count_from_ns += k * d->c.slot_ns;
    }
}

/* When the first contender's counter reaches 0; INT64_MAX if nobody has a frame. */
static int64_t next_start_ns(struct emu_medium *m, struct dcf *d)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < EMU_MEDIUM_STATIONS; i++) {
        if (!head(m, i) || !d->s[i].has_bo) continue;
        int64_t t = d->s[i].count_from_ns + (int64_t)d->s[i].bo * d->c.slot_ns;
        if (t < m->now_ns) t = m->now_ns;     /* counter at 0 already: go as soon as it has a frame */
        if (t < best) best = t;
    }
    return best;
}

static void schedule_round(struct emu_medium *m, struct dcf *d)
{
    if (d->busy) return;
    advance(m, d);
    int64_t t = next_start_ns(m, d);
    d->gen++;
    if (t != INT64_MAX) emu_medium_at(m, t, EV_TX, 0, 0, d->gen);
}

static void on_tx(struct emu_medium *m, struct dcf *d)
{
    advance(m, d);
    d->n_tx = 0;
    for (int i = 0; i < EMU_MEDIUM_STATIONS; i++)
        if (head(m, i) && d->s[i].has_bo && d->s[i].bo == 0) d->tx[d->n_tx++] = i;
    if (!d->n_tx) { schedule_round(m, d); return; }
    d->busy = 1;
    int collided = d->n_tx > 1;
    int64_t end = m->now_ns;
    d->garbled_end_ns = INT64_MIN;
    for (int k = 0; k < d->n_tx; k++) {
        int st = d->tx[k];
        struct emu_mframe *f = head(m, st);
        d->txq[k] = sendq(m, st);
        d->tx_id[k] = f->id;
        uint64_t rate = m->st[emu_mframe_peer(f)].p.rate_bps;
        struct emu_station_counters *c = &m->st[st].c;
        c->attempts++;
        d->ok = !collided && !emu_medium_noise(m, emu_mframe_peer(f));
        int64_t dur = d->ok ? emu_dcf_exchange_ns(&d->c, f->bytes, rate) : failed_ns(&d->c, f->bytes, rate, collided);
        c->collisions += collided;
        c->noise_losses += !collided && !d->ok;
        c->airtime_ns += dur;
        if (st == EMU_MEDIUM_BASE) emu_medium_charge(m, f->dst, dur);
        if (d->ok) emu_medium_at(m, m->now_ns + data_end_ns(&d->c, f->bytes, rate), EV_DELIVER, st, 0, 0);
        if (!d->ok) {                         /* the frame the others heard garbled */
            uint64_t cr = emu_dcf_ctrl_rate(&d->c, rate);
            int64_t g = collided && uses_rts(&d->c, f->bytes) ? emu_dcf_frame_ns(&d->c, d->c.rts_bytes, cr)
                                                               : data_end_ns(&d->c, f->bytes, rate);
            if (m->now_ns + g > d->garbled_end_ns) d->garbled_end_ns = m->now_ns + g;
        }
        if (m->now_ns + dur > end) end = m->now_ns + dur;
    }
    emu_medium_at(m, end, EV_END, 0, 0, 0);
}

static void on_deliver(struct emu_medium *m, struct dcf *d, int st)
{
    struct emu_mframe *f = NULL;
    for (int k = 0; k < d->n_tx; k++)
        if (d->tx[k] == st && (f = emu_mqueue_head(d->txq[k])) && f->id != d->tx_id[k]) f = NULL;
    if (!f || !m->st[st].present) return;       /* gone meanwhile: a station left */
    m->st[st].c.delivered++;
    m->st[st].c.delivered_bytes += f->bytes;
    if (m->hooks.delivered) m->hooks.delivered(m->hooks.arg, f, m->now_ns);
}

static void on_end(struct emu_medium *m, struct dcf *d)
{
    d->busy = 0;
    /* Who sent waits DIFS after its exchange (or ACK timeout); after a garbled frame everyone
     * else waits EIFS from its end, since it could not read the frame's duration. */
    int64_t after = m->now_ns + d->c.difs_ns, eifs = after;
    if (!d->ok && d->c.eifs_ns && d->garbled_end_ns + d->c.eifs_ns > eifs) eifs = d->garbled_end_ns + d->c.eifs_ns;
    for (int i = 0; i < EMU_MEDIUM_STATIONS; i++) d->s[i].ok_ns = d->s[i].count_from_ns = eifs;
    for (int k = 0; k < d->n_tx; k++) d->s[d->tx[k]].ok_ns = d->s[d->tx[k]].count_from_ns = after;
    for (int k = 0; k < d->n_tx; k++) {
        int st = d->tx[k];
        struct dcf_sta *s = &d->s[st];
        struct emu_mqueue *q = d->txq[k];
        struct emu_mframe *f = emu_mqueue_head(q);
        if (!f || f->id != d->tx_id[k]) continue;   /* gone meanwhile (the station left) */
        if (d->ok) {
            if (m->hooks.acked) m->hooks.acked(m->hooks.arg, emu_mqueue_head(q), m->now_ns);
            emu_medium_pop(m, q, 0);
            s->cw = d->c.cw_min;
            s->attempts = 0;
        } else if (++s->attempts >= d->c.retry_limit) {
            emu_medium_pop(m, q, EMU_MDROP_RETRY);
            s->cw = d->c.cw_min;
            s->attempts = 0;
        } else {
            s->cw = s->cw * 2 + 1 > d->c.cw_max ? d->c.cw_max : s->cw * 2 + 1;
        }
        draw(m, s);                           /* backoff after every attempt; post-backoff if idle */
    }
    d->n_tx = 0;
    schedule_round(m, d);
}

static int dcf_init(struct emu_medium *m, const void *cfg)
{
    struct dcf *d = calloc(1, sizeof *d);
    if (!d) return -ENOMEM;
    if (cfg) d->c = *(const struct emu_dcf_cfg *)cfg;
    else emu_dcf_default(&d->c);
    if (d->c.slot_ns <= 0 || d->c.cw_min > d->c.cw_max || !d->c.retry_limit) { free(d); return -EINVAL; }
    for (int i = 0; i < EMU_MEDIUM_STATIONS; i++) {
        d->s[i].cw = d->c.cw_min;
        d->s[i].ok_ns = d->s[i].count_from_ns = d->c.difs_ns;   /* the medium is idle since 0 */
    }
    m->mac_state = d;
    return 0;
}

static void dcf_free(struct emu_medium *m)
{
    free(m->mac_state);
    m->mac_state = NULL;
}

/* A frame reached the head of st's queue. A station that has no counter and finds the medium
 * idle for DIFS sends at once; one that finds it busy draws a backoff. */
static void dcf_wake(struct emu_medium *m, int st)
{
    struct dcf *d = state(m);
    advance(m, d);
    struct dcf_sta *s = &d->s[st];
    if (!s->has_bo) {
        if (!d->busy && m->now_ns >= s->ok_ns) { s->has_bo = 1; s->bo = 0; }
        else draw(m, s);
    }
    schedule_round(m, d);
}

static void dcf_event(struct emu_medium *m, const struct emu_mevent *e)
{
    struct dcf *d = state(m);
    if (e->kind == EV_TX && e->gen == d->gen) on_tx(m, d);
    else if (e->kind == EV_DELIVER) on_deliver(m, d, e->a);
    else if (e->kind == EV_END) on_end(m, d);
}

static void dcf_left(struct emu_medium *m, int st)
{
    struct dcf *d = state(m);
    struct dcf_sta *s = &d->s[st];
    s->has_bo = 0, s->bo = 0, s->cw = d->c.cw_min, s->attempts = 0;
}

int emu_dcf_set_backoff(struct emu_medium *m, int st, uint32_t slots)
{
    if (st < 0 || st >= EMU_MEDIUM_STATIONS || m->mac != &emu_mac_dcf) return -EINVAL;
    struct dcf *d = state(m);
    advance(m, d);
    d->s[st].has_bo = 1;
    d->s[st].bo = slots;
    schedule_round(m, d);
    return 0;
}

uint32_t emu_dcf_cw(const struct emu_medium *m, int st)
{
    return state(m)->s[st].cw;
}

const struct emu_mac_ops emu_mac_dcf = {
    .name = "dcf", .per_dest_queues = 0,
    .init = dcf_init, .free = dcf_free, .wake = dcf_wake, .event = dcf_event, .left = dcf_left,
};
