/* shaper.c -- per-direction serialisation, delay, jitter, drop-tail queue and loss model.
 * Must stay pure (time comes in as an argument) so tests can drive it with a fake clock.
 * Workload: called per packet, up to ~1e6 times a second: no allocation on the fast path. */
#include "shaper.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

#define QUEUE_RING_MAX (1u << 20)     /* admitted-but-unstarted packets tracked at most */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint32_t emu_shaper_rand_ppm(struct emu_shaper *s)
{
    return (uint32_t)((splitmix64(&s->rng) >> 11) % EMU_PPM);
}

static int chance(struct emu_shaper *s, uint32_t ppm)
{
    return ppm >= EMU_PPM || (ppm > 0 && emu_shaper_rand_ppm(s) < ppm);
}

int emu_shaper_init(struct emu_shaper *s, const struct emu_params *link, int dir, struct emu_channel *chan)
{
    memset(s, 0, sizeof *s);
    s->link = link;
    s->p = &link->dir[dir];
    s->chan = chan;
    s->rng = link->seed * 2 + (uint64_t)dir + 0x1234567ULL;
    s->q_cap = 64;
    s->q = calloc(s->q_cap, sizeof *s->q);
    return s->q ? 0 : -ENOMEM;
}

void emu_shaper_free(struct emu_shaper *s)
{
    free(s->q);
    s->q = NULL;
}

int64_t emu_shaper_ser_ns(const struct emu_shaper *s, uint32_t wire_bytes, unsigned n_pkts)
{
    int64_t ns = s->link->per_packet_ns * n_pkts;
    if (s->p->rate_bps)
        ns += (int64_t)(((uint64_t)wire_bytes * s->link->bits_per_byte * EMU_NS_PER_S
                         + s->p->rate_bps - 1) / s->p->rate_bps);
    return ns;
}

int64_t emu_shaper_backlog_ns(const struct emu_shaper *s, int64_t now_ns)
{
    int64_t b = s->chan->busy_until_ns - now_ns;
    return b > 0 ? b : 0;
}

/* Forgets queue entries that have started by now. */
static void queue_advance(struct emu_shaper *s, int64_t now_ns)
{
    while (s->q_len && s->q[s->q_head].start_ns <= now_ns) {
        s->q_bytes -= s->q[s->q_head].wire_bytes;
        s->q_head = (s->q_head + 1) % s->q_cap;
        s->q_len--;
    }
}

void emu_shaper_queue(struct emu_shaper *s, int64_t now_ns, uint32_t *pkts, uint64_t *bytes)
{
    queue_advance(s, now_ns);
    *pkts = s->q_len;
    *bytes = s->q_bytes;
}

static int queue_push(struct emu_shaper *s, int64_t start_ns, uint32_t wire_bytes)
{
    if (s->q_len == s->q_cap) {
        if (s->q_cap >= QUEUE_RING_MAX) return -ENOBUFS;
        struct emu_qent *nq = calloc((size_t)s->q_cap * 2, sizeof *nq);
        if (!nq) return -ENOMEM;
        for (uint32_t i = 0; i < s->q_len; i++) nq[i] = s->q[(s->q_head + i) % s->q_cap];
        free(s->q);
        s->q = nq;
        s->q_head = 0;
        s->q_cap *= 2;
    }
    s->q[(s->q_head + s->q_len) % s->q_cap] = (struct emu_qent){ start_ns, wire_bytes };
    s->q_len++;
    s->q_bytes += wire_bytes;
    return 0;
}

static int queue_full(struct emu_shaper *s, int64_t now_ns, uint32_t wire_bytes)
{
    const struct emu_dir_params *p = s->p;
    if (p->queue_pkts && s->q_len >= p->queue_pkts) return 1;
    if (p->queue_bytes && s->q_bytes + wire_bytes > p->queue_bytes) return 1;
    if (p->queue_ns && emu_shaper_backlog_ns(s, now_ns) > p->queue_ns) return 1;
    return 0;
}

int emu_shaper_would_drop(struct emu_shaper *s, int64_t now_ns, uint32_t wire_bytes)
{
    queue_advance(s, now_ns);
    return queue_full(s, now_ns, wire_bytes);
}

static int in_drop_list(const struct emu_dir_params *p, uint64_t n)
{
    for (unsigned i = 0; i < p->n_drop; i++)
        if (n >= p->drop[i].first && n <= p->drop[i].last) return 1;
    return 0;
}

/* One Gilbert-Elliott step: the state moves, then the state's loss applies. */
static int ge_lost(struct emu_shaper *s)
{
    const struct emu_ge_params *ge = &s->p->ge;
    if (s->ge_bad) { if (chance(s, ge->r_ppm)) s->ge_bad = 0; }
    else if (chance(s, ge->p_ppm)) s->ge_bad = 1;
    return chance(s, s->ge_bad ? ge->bad_loss_ppm : ge->good_loss_ppm);
}

static int64_t jitter_ns(struct emu_shaper *s)
{
    int64_t j = s->p->jitter_ns;
    if (j <= 0) return 0;
    uint64_t r = splitmix64(&s->rng) % (uint64_t)(2 * j + 1);
    return (int64_t)r - j;
}

void emu_shaper_schedule(struct emu_shaper *s, int64_t now_ns, uint32_t wire_bytes, unsigned n_pkts,
                         struct emu_sched *out)
{
    out->arrive_ns = now_ns;
    out->start_ns = s->chan->busy_until_ns > now_ns ? s->chan->busy_until_ns : now_ns;
    if (s->p->trace) /* the trace's capacity instead of the rate; medium access first */
        out->finish_ns = emu_trace_finish(s->p->trace, &s->chan->trace_pos, out->start_ns + s->link->per_packet_ns * n_pkts,
                                          (uint64_t)wire_bytes * s->link->bits_per_byte);
    else
        out->finish_ns = out->start_ns + emu_shaper_ser_ns(s, wire_bytes, n_pkts);
    s->chan->busy_until_ns = out->finish_ns;
    int64_t d = out->finish_ns + s->p->delay_ns + jitter_ns(s);
    if (d < out->finish_ns) d = out->finish_ns;
    if (!s->link->reorder && d < s->last_deliver_ns) d = s->last_deliver_ns;
    if (d > s->last_deliver_ns) s->last_deliver_ns = d;
    out->deliver_ns = d;
}

enum emu_verdict emu_shaper_offer(struct emu_shaper *s, int64_t now_ns, uint32_t wire_bytes,
                                  struct emu_sched *out)
{
    uint64_t n = ++s->n_offered;
    queue_advance(s, now_ns);
    if (queue_full(s, now_ns, wire_bytes)) return EMU_DROP_QUEUE;
    emu_shaper_schedule(s, now_ns, wire_bytes, 1, out);
    if (out->start_ns > now_ns && queue_push(s, out->start_ns, wire_bytes) != 0) {
        /* Out of tracking room: undo the booking and drop as a full queue. */
        s->chan->busy_until_ns = out->start_ns;
        return EMU_DROP_QUEUE;
    }
    if (in_drop_list(s->p, n)) return EMU_DROP_PATTERN;
    int lost = chance(s, s->p->loss_ppm);
    if (s->p->ge.on && ge_lost(s)) lost = 1;
    return lost ? EMU_DROP_LOSS : EMU_PASS;
}

const char *emu_verdict_name(enum emu_verdict v)
{
    static const char *const names[EMU_VERDICTS] = { "pass", "queue", "loss", "pattern" };
    return (unsigned)v < EMU_VERDICTS ? names[v] : "?";
}
