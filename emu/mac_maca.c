/* mac_maca.c -- the MACA model: a MACA process per (station, destination) stream; a packet
 * is received when no other transmission its receiver hears overlaps it (no carrier sense,
 * half duplex). Must decide only from what a station received, as the radio does.
 * Workload: 4-8 events per packet at 256 kbit/s, a few hundred a second. */
#include "mac_maca.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define N EMU_MEDIUM_STATIONS
#define TX_RING 64                    /* recent transmissions kept to find overlaps */
#define MARGIN_NS 1000                /* a timeout falls just after the answer it waits for */

enum { EV_TIMER = 1, EV_TX_END };
enum { P_IDLE = 0, P_BACKOFF, P_WAIT_CTS, P_WAIT_ACK };

struct mtx { int64_t start_ns, end_ns; int src, dst, kind; uint32_t n, seq, bo; uint64_t id; };

struct mproc {                        /* one MACA process: a station's stream to one destination */
    int state;
    uint64_t gen;                     /* of its one current timer */
    int64_t timer_ns;
    uint32_t seq, attempts;
};

struct msta {
    uint32_t bo;                      /* backoff in slots; copied from every packet heard */
    int64_t defer_until_ns;           /* defer rules */
    int64_t busy_until_ns;            /* transmitting, or waiting for the DATA it granted */
    uint32_t rx_seq[N];               /* seq + 1 of the last packet delivered from each sender */
};

struct maca {
    struct emu_maca_cfg c;
    struct msta s[N];
    struct mproc up[N], down[N];      /* station i -> base; base -> station i */
    struct mtx tx[TX_RING];
    uint64_t tx_id;
    struct emu_maca_counters k;
    int lose_next;
};

void emu_maca_default(struct emu_maca_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->rate_bps = 256000;
    c->ctrl_bytes = 24;
    c->turnaround_ns = 1250000;
    c->slot_ns = 0;
    c->bo_min = 4;                    /* a quiet cell waits 2.5 slots on average: ~1.9 ms */
    c->bo_max = 64;
    c->bo_factor_pct = 200;
    c->bo_step = 1;
    c->short_bytes = 64;
    c->retry_limit = 8;
}

int64_t emu_maca_ctrl_ns(const struct emu_maca_cfg *c, uint64_t rate_bps)
{
    return emu_bits_ns((uint64_t)c->ctrl_bytes * 8, rate_bps);
}

int64_t emu_maca_data_ns(const struct emu_maca_cfg *c, uint32_t ip_bytes, uint64_t rate_bps)
{
    return emu_bits_ns((uint64_t)(c->ctrl_bytes + ip_bytes) * 8, rate_bps);
}

static struct maca *state(const struct emu_medium *m) { return m->mac_state; }

static uint64_t rate_of(const struct emu_medium *m, const struct maca *d, int a, int b)
{
    int peer = a != EMU_MEDIUM_BASE ? a : b;
    uint64_t r = peer >= 0 && peer < N ? m->st[peer].p.rate_bps : 0;
    return r ? r : d->c.rate_bps;
}

static int hears(const struct maca *d, int r, int s) { return !d->c.hidden || d->c.hears[r][s]; }

static struct mproc *proc(struct maca *d, int st, int dst)
{
    return st == EMU_MEDIUM_BASE ? &d->down[dst] : &d->up[st];
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Puts a packet on the air from at_ns; returns its end. */
static int64_t transmit(struct emu_medium *m, struct maca *d, int src, int dst, int kind, uint32_t n,
                        uint32_t seq, int64_t at_ns)
{
    uint64_t rate = rate_of(m, d, src, dst);
    int64_t dur = kind == EMU_MACA_DATA ? emu_maca_data_ns(&d->c, n, rate) : emu_maca_ctrl_ns(&d->c, rate);
    uint64_t id = ++d->tx_id;
    d->tx[id % TX_RING] = (struct mtx){ at_ns, at_ns + dur, src, dst, kind, n, seq, d->s[src].bo, id };
    d->s[src].busy_until_ns = max64(d->s[src].busy_until_ns, at_ns + dur);
    d->k.sent[kind]++;
    m->st[src].c.airtime_ns += dur;
    emu_medium_at(m, at_ns + dur, EV_TX_END, (int)(id % TX_RING), 0, id);
    return at_ns + dur;
}

static void set_timer(struct emu_medium *m, struct mproc *p, int st, int dst, int64_t t_ns)
{
    p->gen++;
    p->timer_ns = t_ns;
    emu_medium_at(m, t_ns, EV_TIMER, st, dst, p->gen);
}

static void start_backoff(struct emu_medium *m, struct maca *d, int st, int dst)
{
    struct mproc *p = proc(d, st, dst);
    struct msta *s = &d->s[st];
    p->state = P_BACKOFF;
    int64_t from = max64(m->now_ns, max64(s->defer_until_ns, s->busy_until_ns));
    set_timer(m, p, st, dst, from + (int64_t)(1 + emu_medium_rand(m, s->bo)) * d->c.slot_ns);
}

static void bo_up(struct maca *d, int st)
{
    uint32_t bo = d->s[st].bo, up = (uint32_t)((uint64_t)bo * d->c.bo_factor_pct / 100);
    if (up <= bo) up = bo + 1;
    d->s[st].bo = up > d->c.bo_max ? d->c.bo_max : up;
}

static void next_or_idle(struct emu_medium *m, struct maca *d, int st, int dst)
{
    if (emu_mqueue_head(emu_medium_queue(m, st, dst))) start_backoff(m, d, st, dst);
    else { proc(d, st, dst)->state = P_IDLE; proc(d, st, dst)->gen++; }
}

static void success(struct emu_medium *m, struct maca *d, int st, int dst)
{
    struct mproc *p = proc(d, st, dst);
    struct msta *s = &d->s[st];
    s->bo = s->bo > d->c.bo_min + d->c.bo_step ? s->bo - d->c.bo_step : d->c.bo_min;
    struct emu_mqueue *q = emu_medium_queue(m, st, dst);
    if (q->len && m->hooks.acked) m->hooks.acked(m->hooks.arg, emu_mqueue_head(q), m->now_ns);
    emu_medium_pop(m, q, 0);
    p->seq++;
    p->attempts = 0;
    next_or_idle(m, d, st, dst);
}

static void failure(struct emu_medium *m, struct maca *d, int st, int dst)
{
    struct mproc *p = proc(d, st, dst);
    bo_up(d, st);
    m->st[st].c.collisions++;
    if (++p->attempts >= d->c.retry_limit) {
        emu_medium_pop(m, emu_medium_queue(m, st, dst), EMU_MDROP_RETRY);
        p->seq++;
        p->attempts = 0;
    }
    next_or_idle(m, d, st, dst);
}

/* The base would start two of its own processes' packets on top of each other: it sends a
 * JAM instead and both back off as after a collision. Returns 1 if it jammed. */
static int base_jam(struct emu_medium *m, struct maca *d, int dst)
{
    int64_t window = emu_maca_ctrl_ns(&d->c, d->c.rate_bps);
    int clash = 0;
    for (int j = 1; j < N; j++)
        if (j != dst && d->down[j].state == P_BACKOFF && d->down[j].timer_ns < m->now_ns + window) clash = 1;
    if (!clash) return 0;
    d->k.jams++;
    transmit(m, d, EMU_MEDIUM_BASE, -1, EMU_MACA_JAM, 0, 0, m->now_ns + d->c.turnaround_ns);
    bo_up(d, EMU_MEDIUM_BASE);
    for (int j = 1; j < N; j++)
        if (j == dst || (d->down[j].state == P_BACKOFF && d->down[j].timer_ns < m->now_ns + window))
            start_backoff(m, d, EMU_MEDIUM_BASE, j);
    return 1;
}

/* A process's backoff ran out: send RTS(n), or a short packet as unsolicited DATA, after a
 * turnaround (every packet of an exchange has one before it: RTS-CTS is 2 x (1.25 + 0.75) ms). */
static void attempt(struct emu_medium *m, struct maca *d, int st, int dst)
{
    struct mproc *p = proc(d, st, dst);
    struct msta *s = &d->s[st];
    struct emu_mframe *f = emu_mqueue_head(emu_medium_queue(m, st, dst));
    if (!f) { p->state = P_IDLE; return; }
    if (s->defer_until_ns > m->now_ns || s->busy_until_ns > m->now_ns) { start_backoff(m, d, st, dst); return; }
    if (st == EMU_MEDIUM_BASE && base_jam(m, d, dst)) return;
    uint64_t rate = rate_of(m, d, st, dst);
    int64_t at = m->now_ns + d->c.turnaround_ns;      /* the radio turns to transmit first */
    m->st[st].c.attempts++;
    if (f->bytes <= d->c.short_bytes) {
        int64_t end = transmit(m, d, st, dst, EMU_MACA_DATA, f->bytes, p->seq, at);
        p->state = P_WAIT_ACK;
        set_timer(m, p, st, dst, end + d->c.turnaround_ns + emu_maca_ctrl_ns(&d->c, rate) + MARGIN_NS);
    } else {
        int64_t end = transmit(m, d, st, dst, EMU_MACA_RTS, f->bytes, p->seq, at);
        p->state = P_WAIT_CTS;
        set_timer(m, p, st, dst, end + d->c.turnaround_ns + emu_maca_ctrl_ns(&d->c, rate) + MARGIN_NS);
    }
}

/* Did r receive t intact: no other transmission r hears (or makes) overlaps it? */
static int clean(const struct maca *d, const struct mtx *t, int r)
{
    for (int i = 0; i < TX_RING; i++) {
        const struct mtx *o = &d->tx[i];
        if (!o->id || o->id == t->id) continue;
        if (o->end_ns > t->start_ns && o->start_ns < t->end_ns && (o->src == r || hears(d, r, o->src))) return 0;
    }
    return 1;
}

/* Defer rules of a bystander that heard t. */
static void defer(struct emu_medium *m, struct maca *d, const struct mtx *t, int r)
{
    uint64_t rate = rate_of(m, d, t->src, t->dst);
    int64_t until = 0;                                /* ACK and JAM ask nothing of bystanders */
    if (t->kind == EMU_MACA_RTS) until = t->end_ns + d->c.turnaround_ns + emu_maca_ctrl_ns(&d->c, rate);  /* CTS */
    if (t->kind == EMU_MACA_CTS) until = t->end_ns + d->c.turnaround_ns + emu_maca_data_ns(&d->c, t->n, rate);
    if (t->kind == EMU_MACA_DATA) until = t->end_ns + d->c.turnaround_ns + emu_maca_ctrl_ns(&d->c, rate); /* ACK */
    d->s[r].defer_until_ns = max64(d->s[r].defer_until_ns, until);
}

static void got_rts(struct emu_medium *m, struct maca *d, const struct mtx *t, int r)
{
    struct msta *s = &d->s[r];
    if (s->defer_until_ns > t->end_ns || s->busy_until_ns > t->end_ns) return;   /* must stay quiet */
    int64_t at = t->end_ns + d->c.turnaround_ns;
    if (s->rx_seq[t->src] == t->seq + 1) {            /* delivered already: its ACK was lost */
        d->k.re_acks++;
        transmit(m, d, r, t->src, EMU_MACA_ACK, 0, t->seq, at);
        return;
    }
    int64_t end = transmit(m, d, r, t->src, EMU_MACA_CTS, t->n, t->seq, at);
    s->busy_until_ns = end + d->c.turnaround_ns + emu_maca_data_ns(&d->c, t->n, rate_of(m, d, r, t->src));
}

static void got_data(struct emu_medium *m, struct maca *d, const struct mtx *t, int r)
{
    struct msta *s = &d->s[r];
    s->busy_until_ns = 0;                             /* the granted DATA came */
    transmit(m, d, r, t->src, EMU_MACA_ACK, 0, t->seq, t->end_ns + d->c.turnaround_ns);   /* before the hook: */
    if (s->rx_seq[t->src] == t->seq + 1) { d->k.re_acks++; return; }   /* what it sends next waits for the ACK */
    s->rx_seq[t->src] = t->seq + 1;
    struct emu_mframe *f = emu_mqueue_head(emu_medium_queue(m, t->src, r));
    if (!f) return;
    m->st[t->src].c.delivered++;
    m->st[t->src].c.delivered_bytes += f->bytes;
    if (m->hooks.delivered) m->hooks.delivered(m->hooks.arg, f, m->now_ns);
}

static void on_tx_end(struct emu_medium *m, struct maca *d, int slot, uint64_t id)
{
    struct mtx t = d->tx[slot];
    if (t.id != id) return;
    for (int r = 0; r < N; r++) {
        if (r == t.src || !m->st[r].present || !hears(d, r, t.src) || !clean(d, &t, r)) continue;
        if (t.dst == r) {
            if (emu_medium_noise(m, t.src != EMU_MEDIUM_BASE ? t.src : r)) { m->st[t.src].c.noise_losses++; continue; }
            if (d->lose_next == t.kind) { d->lose_next = 0; continue; }
        }
        if (t.kind != EMU_MACA_JAM) d->s[r].bo = t.bo;   /* backoff copying */
        if (t.dst != r) { defer(m, d, &t, r); continue; }
        struct mproc *p = proc(d, r, t.src);
        switch (t.kind) {
        case EMU_MACA_RTS: got_rts(m, d, &t, r); break;
        case EMU_MACA_DATA: got_data(m, d, &t, r); break;
        case EMU_MACA_CTS:
            if (p->state == P_WAIT_CTS && p->seq == t.seq) {
                int64_t end = transmit(m, d, r, t.src, EMU_MACA_DATA, t.n, t.seq, t.end_ns + d->c.turnaround_ns);
                p->state = P_WAIT_ACK;
                set_timer(m, p, r, t.src, end + d->c.turnaround_ns +
                          emu_maca_ctrl_ns(&d->c, rate_of(m, d, r, t.src)) + MARGIN_NS);
            }
            break;
        case EMU_MACA_ACK:
            if ((p->state == P_WAIT_ACK || p->state == P_WAIT_CTS) && p->seq == t.seq) success(m, d, r, t.src);
            break;
        }
    }
}

static void on_timer(struct emu_medium *m, struct maca *d, int st, int dst, uint64_t gen)
{
    struct mproc *p = proc(d, st, dst);
    if (gen != p->gen) return;
    if (p->state == P_BACKOFF) attempt(m, d, st, dst);
    else if (p->state == P_WAIT_CTS) { d->k.missed_cts++; failure(m, d, st, dst); }
    else if (p->state == P_WAIT_ACK) { d->k.missed_ack++; failure(m, d, st, dst); }
}

static int maca_init(struct emu_medium *m, const void *cfg)
{
    struct maca *d = calloc(1, sizeof *d);
    if (!d) return -ENOMEM;
    if (cfg) d->c = *(const struct emu_maca_cfg *)cfg;
    else emu_maca_default(&d->c);
    if (!d->c.slot_ns) d->c.slot_ns = emu_maca_ctrl_ns(&d->c, d->c.rate_bps);
    if (!d->c.bo_min || d->c.bo_min > d->c.bo_max || d->c.slot_ns <= 0 || !d->c.retry_limit) { free(d); return -EINVAL; }
    for (int i = 0; i < N; i++) d->s[i].bo = d->c.bo_min;
    m->mac_state = d;
    return 0;
}

static void maca_free(struct emu_medium *m)
{
    free(m->mac_state);
    m->mac_state = NULL;
}

static void maca_wake(struct emu_medium *m, int st)
{
    struct maca *d = state(m);
    for (int dst = 0; dst < N; dst++) {
        if (dst == st || (st != EMU_MEDIUM_BASE && dst != EMU_MEDIUM_BASE)) continue;
        if (proc(d, st, dst)->state == P_IDLE && emu_mqueue_head(emu_medium_queue(m, st, dst)))
            start_backoff(m, d, st, dst);
    }
}

static void maca_event(struct emu_medium *m, const struct emu_mevent *e)
{
    struct maca *d = state(m);
    if (e->kind == EV_TIMER) on_timer(m, d, e->a, e->b, e->gen);
    else if (e->kind == EV_TX_END) on_tx_end(m, d, e->a, e->gen);
}

static void maca_left(struct emu_medium *m, int st)
{
    struct maca *d = state(m);
    uint64_t g1 = d->up[st].gen + 1, g2 = d->down[st].gen + 1;
    d->up[st] = (struct mproc){ .gen = g1 };
    d->down[st] = (struct mproc){ .gen = g2 };
    memset(&d->s[st], 0, sizeof d->s[st]);
    d->s[st].bo = d->c.bo_min;
    d->s[EMU_MEDIUM_BASE].rx_seq[st] = 0;
}

const struct emu_maca_counters *emu_maca_counters(const struct emu_medium *m) { return &state(m)->k; }

int emu_maca_set_backoff(struct emu_medium *m, int st, uint32_t bo)
{
    if (st < 0 || st >= N || m->mac != &emu_mac_maca || !bo) return -EINVAL;
    state(m)->s[st].bo = bo;
    return 0;
}

uint32_t emu_maca_backoff(const struct emu_medium *m, int st) { return state(m)->s[st].bo; }
int64_t emu_maca_defer_until(const struct emu_medium *m, int st) { return state(m)->s[st].defer_until_ns; }
void emu_maca_lose_next(struct emu_medium *m, enum emu_maca_kind kind) { state(m)->lose_next = (int)kind; }

const struct emu_mac_ops emu_mac_maca = {
    .name = "maca", .per_dest_queues = 1,
    .init = maca_init, .free = maca_free, .wake = maca_wake, .event = maca_event, .left = maca_left,
};
