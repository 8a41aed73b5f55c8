/* medium.c -- the shared cell's stations, queues and virtual-clock event queue; the MAC model
 * (ops table) decides who transmits when. Must stay pure and deterministic for a seed, so unit
 * tests get exact times. Workload: one heap operation per MAC event. */
#include "medium.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_QUEUE_PKTS 100

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint32_t emu_medium_rand(struct emu_medium *m, uint32_t n)
{
    return n ? (uint32_t)((splitmix64(&m->rng) >> 11) % n) : 0;
}

int emu_medium_noise(struct emu_medium *m, int st)
{
    uint32_t ppm = m->st[st].p.loss_ppm;
    return ppm >= 1000000 || (ppm > 0 && emu_medium_rand(m, 1000000) < ppm);
}

int64_t emu_bits_ns(uint64_t bits, uint64_t rate_bps)
{
    if (!rate_bps) return 0;
    return (int64_t)((bits * 1000000000ULL + rate_bps - 1) / rate_bps);
}

int emu_medium_init(struct emu_medium *m, const struct emu_mac_ops *mac, const void *cfg, uint64_t seed,
                    const struct emu_medium_hooks *hooks)
{
    memset(m, 0, sizeof *m);
    m->mac = mac;
    m->rng = seed * 2 + 0x5eedULL;
    if (hooks) m->hooks = *hooks;
    m->st[EMU_MEDIUM_BASE].present = 1;
    m->st[EMU_MEDIUM_BASE].p.queue_pkts = DEFAULT_QUEUE_PKTS;
    return mac->init(m, cfg);
}

void emu_medium_free(struct emu_medium *m)
{
    if (m->mac) m->mac->free(m);
    for (int i = 0; i < EMU_MEDIUM_STATIONS; i++)
        for (int j = 0; j < EMU_MEDIUM_STATIONS; j++) free(m->st[i].q[j].f);
    free(m->ev);
    memset(m, 0, sizeof *m);
}

/* --- queues --- */

static int base_per_dest(const struct emu_medium *m)
{
    return m->mac->per_dest_queues || m->ap_sched != EMU_AP_FIFO;
}

struct emu_mqueue *emu_medium_queue(struct emu_medium *m, int st, int dst)
{
    int per_dest = st == EMU_MEDIUM_BASE && base_per_dest(m);
    return &m->st[st].q[per_dest ? dst : 0];
}

int emu_medium_set_ap_sched(struct emu_medium *m, int sched)
{
    if (sched < EMU_AP_FIFO || sched > EMU_AP_AIRTIME || (sched != EMU_AP_FIFO && m->mac->per_dest_queues))
        return -EINVAL;
    m->ap_sched = sched;
    m->ap_cur = m->ap_last = 0;
    return 0;
}

/* Round robin: the next backlogged destination after the last one served. Airtime: the same
 * order, but a destination is served while it has credit; one without credit gets a quantum
 * and waits for the next round (deficit round robin, with the airtime used as the cost). */
static int ap_pick(struct emu_medium *m)
{
    struct emu_station *b = &m->st[EMU_MEDIUM_BASE];
    int last = m->ap_last, any = 0;
    for (int j = 1; j < EMU_MEDIUM_STATIONS; j++) any |= b->q[j].len > 0;
    if (!any) return 0;
    if (m->ap_sched == EMU_AP_RR) {
        for (int k = 1; k < EMU_MEDIUM_STATIONS; k++) {
            int j = (last + k - 1) % (EMU_MEDIUM_STATIONS - 1) + 1;
            if (b->q[j].len) return j;
        }
        return 0;
    }
    for (;;) {                        /* ends: every round adds a quantum to each backlogged one */
        for (int k = 0; k < EMU_MEDIUM_STATIONS - 1; k++) {
            int j = (last + k + EMU_MEDIUM_STATIONS - 2) % (EMU_MEDIUM_STATIONS - 1) + 1;
            if (!b->q[j].len) continue;
            if (m->ap_deficit_ns[j] > 0) return j;
            m->ap_deficit_ns[j] += EMU_AP_QUANTUM_NS;
        }
    }
}

struct emu_mqueue *emu_medium_base_queue(struct emu_medium *m)
{
    struct emu_station *b = &m->st[EMU_MEDIUM_BASE];
    if (!base_per_dest(m)) return &b->q[0];
    if (!m->ap_cur || !b->q[m->ap_cur].len) {
        int j = ap_pick(m);
        if (!j) return &b->q[m->ap_last ? m->ap_last : 1];
        m->ap_cur = j;
    }
    return &b->q[m->ap_cur];
}

void emu_medium_charge(struct emu_medium *m, int dst, int64_t ns)
{
    if (m->ap_sched == EMU_AP_AIRTIME && dst > 0 && dst < EMU_MEDIUM_STATIONS) m->ap_deficit_ns[dst] -= ns;
}

struct emu_mframe *emu_mqueue_head(struct emu_mqueue *q)
{
    return q->len ? &q->f[q->head] : NULL;
}

static int queue_push(struct emu_mqueue *q, const struct emu_mframe *f, uint32_t limit)
{
    if (q->len >= limit) return -ENOBUFS;
    if (q->len == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 16;
        struct emu_mframe *nf = malloc(cap * sizeof *nf);
        if (!nf) return -ENOMEM;
        for (uint32_t i = 0; i < q->len; i++) nf[i] = q->f[(q->head + i) % q->cap];
        free(q->f);
        q->f = nf;
        q->cap = cap;
        q->head = 0;
    }
    q->f[(q->head + q->len) % q->cap] = *f;
    q->len++;
    return 0;
}

void emu_medium_pop(struct emu_medium *m, struct emu_mqueue *q, int why)
{
    if (!q->len) return;
    struct emu_mframe f = q->f[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    /* The base's next frame is chosen afresh: round robin moves on after every frame. */
    if (m->ap_cur && q == &m->st[EMU_MEDIUM_BASE].q[m->ap_cur]) { m->ap_last = m->ap_cur; m->ap_cur = 0; }
    if (why) {
        struct emu_station_counters *c = &m->st[f.src].c;
        if (why == EMU_MDROP_RETRY) c->drop_retry++;
        if (why == EMU_MDROP_LEFT) c->drop_left++;
        if (m->hooks.dropped) m->hooks.dropped(m->hooks.arg, &f, why, m->now_ns);
    }
}

int emu_medium_join(struct emu_medium *m, int i, const struct emu_station_params *p)
{
    if (i < 0 || i >= EMU_MEDIUM_STATIONS || !p) return -EINVAL;
    m->st[i].present = 1;
    m->st[i].p = *p;
    if (!m->st[i].p.queue_pkts) m->st[i].p.queue_pkts = DEFAULT_QUEUE_PKTS;
    return 0;
}

int emu_medium_leave(struct emu_medium *m, int i)
{
    if (i <= 0 || i >= EMU_MEDIUM_STATIONS || !m->st[i].present) return -EINVAL;
    m->st[i].present = 0;
    for (int j = 0; j < EMU_MEDIUM_STATIONS; j++)
        while (m->st[i].q[j].len) emu_medium_pop(m, &m->st[i].q[j], EMU_MDROP_LEFT);
    /* Frames for it at the base: from a per-destination queue, or picked out of the one FIFO. */
    struct emu_mqueue *bq = emu_medium_queue(m, EMU_MEDIUM_BASE, i);
    if (base_per_dest(m)) {
        while (bq->len) emu_medium_pop(m, bq, EMU_MDROP_LEFT);
        m->ap_deficit_ns[i] = 0;
    } else {
        uint32_t keep = 0;
        for (uint32_t k = 0; k < bq->len; k++) {
            struct emu_mframe f = bq->f[(bq->head + k) % bq->cap];
            if (f.dst == i) {
                m->st[EMU_MEDIUM_BASE].c.drop_left++;
                if (m->hooks.dropped) m->hooks.dropped(m->hooks.arg, &f, EMU_MDROP_LEFT, m->now_ns);
            } else {
                bq->f[(bq->head + keep++) % bq->cap] = f;
            }
        }
        bq->len = keep;
    }
    if (m->mac->left) m->mac->left(m, i);
    return 0;
}

int emu_medium_would_drop(struct emu_medium *m, int src, int dst)
{
    if (src < 0 || dst < 0 || src >= EMU_MEDIUM_STATIONS || dst >= EMU_MEDIUM_STATIONS ||
        !m->st[src].present || !m->st[dst].present)
        return 1;
    return emu_medium_queue(m, src, dst)->len >= m->st[src].p.queue_pkts;
}

int emu_medium_send(struct emu_medium *m, int src, int dst, uint32_t bytes, void *user)
{
    if (src < 0 || dst < 0 || src >= EMU_MEDIUM_STATIONS || dst >= EMU_MEDIUM_STATIONS || src == dst ||
        (src != EMU_MEDIUM_BASE && dst != EMU_MEDIUM_BASE) || !m->st[src].present || !m->st[dst].present)
        return -EINVAL;
    struct emu_station *s = &m->st[src];
    struct emu_mframe f = { ++m->next_id, src, dst, bytes, m->now_ns, user };
    struct emu_mqueue *q = emu_medium_queue(m, src, dst);
    s->c.offered++;
    int rc = queue_push(q, &f, s->p.queue_pkts);
    if (rc < 0) { s->c.drop_queue++; return rc; }
    if (q->len == 1) m->mac->wake(m, src);
    return 0;
}

/* --- events --- */

static int ev_before(const struct emu_mevent *a, const struct emu_mevent *b)
{
    return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

int emu_medium_at(struct emu_medium *m, int64_t t_ns, int kind, int a, int b, uint64_t gen)
{
    if (m->n_ev == m->cap_ev) {
        uint32_t cap = m->cap_ev ? m->cap_ev * 2 : 64;
        struct emu_mevent *ev = realloc(m->ev, cap * sizeof *ev);
        if (!ev) return -ENOMEM;
        m->ev = ev;
        m->cap_ev = cap;
    }
    struct emu_mevent e = { t_ns < m->now_ns ? m->now_ns : t_ns, m->ev_seq++, kind, a, b, gen };
    uint32_t i = m->n_ev++;
    while (i && ev_before(&e, &m->ev[(i - 1) / 2])) {
        m->ev[i] = m->ev[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    m->ev[i] = e;
    return 0;
}

static struct emu_mevent ev_pop(struct emu_medium *m)
{
    struct emu_mevent top = m->ev[0], last = m->ev[--m->n_ev];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m->n_ev) break;
        if (c + 1 < m->n_ev && ev_before(&m->ev[c + 1], &m->ev[c])) c++;
        if (!ev_before(&m->ev[c], &last)) break;
        m->ev[i] = m->ev[c];
        i = c;
    }
    if (m->n_ev) m->ev[i] = last;
    return top;
}

int64_t emu_medium_next_ns(const struct emu_medium *m)
{
    return m->n_ev ? m->ev[0].t_ns : INT64_MAX;
}

void emu_medium_run(struct emu_medium *m, int64_t until_ns)
{
    while (m->n_ev && m->ev[0].t_ns <= until_ns) {
        struct emu_mevent e = ev_pop(m);
        m->now_ns = e.t_ns;
        m->mac->event(m, &e);
    }
    if (until_ns > m->now_ns) m->now_ns = until_ns;
}
