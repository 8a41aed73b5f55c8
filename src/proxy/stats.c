/* stats.c -- message accounting and the statistics table. */
#include "proxy/stats.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

void stats_init(struct stats *st)
{
    memset(st, 0, sizeof *st);
    st->start_ns = clock_ns();
}

static uint32_t class_key(const struct msg_class *c)
{
    return 1u << 24 | (uint32_t)c->kind << 16 | (uint32_t)c->major << 8 | c->minor;
}

void stats_count(struct stats *st, const struct msg_class *cls, enum stat_dir dir, uint32_t bytes)
{
    uint32_t key = class_key(cls);
    uint32_t h = (key * 2654435761u) % STATS_SLOTS;
    for (uint32_t i = 0; i < STATS_SLOTS; i++) {
        struct stat_entry *e = &st->slots[(h + i) % STATS_SLOTS];
        if (e->key == 0) {
            e->key = key;
            e->ext = cls->ext;
            e->name = cls->name;
        }
        if (e->key == key) {
            e->msgs[dir]++;
            e->bytes[dir] += bytes;
            return;
        }
    }
    /* Table full (over a thousand distinct classes): the totals still count on the link. */
}

enum msg_kind stats_entry_kind(const struct stat_entry *e) { return (enum msg_kind)((e->key >> 16) & 0xff); }

void stats_entry_name(const struct stat_entry *e, char *name, size_t cap)
{
    unsigned kind = stats_entry_kind(e), major = (e->key >> 8) & 0xff, minor = e->key & 0xff;
    if (e->name)
        snprintf(name, cap, "%s%s%s", e->ext ? e->ext : "", e->ext ? ":" : "", e->name);
    else if (kind == MSG_REQUEST || kind == MSG_REPLY)
        snprintf(name, cap, "%s(%u.%u)", e->ext ? e->ext : "unknown", major, minor);
    else
        snprintf(name, cap, "%s(%u)", e->ext ? e->ext : "unknown", major);
}

static int by_bytes_desc(const void *a, const void *b)
{
    const struct stat_entry *x = *(const struct stat_entry *const *)a, *y = *(const struct stat_entry *const *)b;
    uint64_t bx = x->bytes[0] + x->bytes[1], by = y->bytes[0] + y->bytes[1];
    return bx < by ? 1 : bx > by ? -1 : (x->key > y->key) - (x->key < y->key);
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

void stats_print(const struct stats *st, FILE *f, const char *title, uint64_t idle_ns)
{
    const struct stat_entry *rows[STATS_SLOTS];
    size_t n = 0;
    uint64_t tot_msgs[MSG_KIND_COUNT][2] = { { 0 } }, tot_bytes[MSG_KIND_COUNT][2] = { { 0 } };
    for (size_t i = 0; i < STATS_SLOTS; i++) {
        const struct stat_entry *e = &st->slots[i];
        if (!e->key)
            continue;
        rows[n++] = e;
        unsigned kind = (e->key >> 16) & 0xff;
        for (int d = 0; d < 2; d++) {
            tot_msgs[kind][d] += e->msgs[d];
            tot_bytes[kind][d] += e->bytes[d];
        }
    }
    qsort(rows, n, sizeof *rows, by_bytes_desc);
    uint64_t elapsed = clock_ns() - st->start_ns;
    fprintf(f, "\n== tincan %s statistics, %.3f s ==\n", title, (double)elapsed / 1e9);
    fprintf(f, "time: idle %.1f ms, reading %.1f ms, writing %.1f ms, encoding %.1f ms\n", ms(idle_ns),
            ms(st->read_ns), ms(st->write_ns), ms(st->encode_ns));
    fprintf(f, "link: %llu bytes in (%llu frames), %llu bytes out (%llu frames, %llu writes)\n",
            (unsigned long long)st->link_bytes_in, (unsigned long long)st->link_frames_in,
            (unsigned long long)st->link_bytes_out, (unsigned long long)st->link_frames_out,
            (unsigned long long)st->link_writes);
    if (st->frame_bytes_out || st->frame_bytes_in)
        fprintf(f, "link compression: %llu frame bytes out -> %llu on the link (%.1f%%), %llu in <- %llu\n",
                (unsigned long long)st->frame_bytes_out, (unsigned long long)st->link_bytes_out,
                st->frame_bytes_out ? 100.0 * (double)st->link_bytes_out / (double)st->frame_bytes_out : 0.0,
                (unsigned long long)st->frame_bytes_in, (unsigned long long)st->link_bytes_in);
    if (st->xc_raw_out)
        fprintf(f, "structured encoding: %llu X bytes out -> %llu (%.1f%%) before the link's compression\n",
                (unsigned long long)st->xc_raw_out, (unsigned long long)st->xc_encoded_out,
                100.0 * (double)st->xc_encoded_out / (double)st->xc_raw_out);
    fprintf(f, "clients: %llu connected, %llu refused, %llu dropped for bad input\n",
            (unsigned long long)st->clients_total, (unsigned long long)st->clients_refused,
            (unsigned long long)st->clients_dropped);
    if (st->round_trips || st->answered_locally)
        fprintf(f, "round trips: %llu answers arrived for a client's latest request (it may have waited on each); "
                "%llu requests answered here\n", (unsigned long long)st->round_trips,
                (unsigned long long)st->answered_locally);
    if (st->outages)
        fprintf(f, "link outages: %llu, %.1f s without a link, %llu stream bytes sent again\n",
                (unsigned long long)st->outages, (double)st->outage_ns / 1e9, (unsigned long long)st->bytes_replayed);
    if (st->server_grabs)
        fprintf(f, "server grabs by clients: %llu\n", (unsigned long long)st->server_grabs);
    if (st->setups_answered)
        fprintf(f, "connection setups answered here (spare connections): %llu\n", (unsigned long long)st->setups_answered);
    if (st->noexpose_missed)
        fprintf(f, "NoExpose answered at the app side but not sent by the server: %llu (the client got the real events too)\n",
                (unsigned long long)st->noexpose_missed);
    if (st->ownwin_missed)
        fprintf(f, "answers about a client's own window contradicted by the server: %llu (another client changed it)\n",
                (unsigned long long)st->ownwin_missed);
    if (st->state_missed)
        fprintf(f, "RANDR or XInput queries answered at the app side from state that changed meanwhile: %llu\n",
                (unsigned long long)st->state_missed);
    if (st->atom_none_missed)
        fprintf(f, "InternAtom answered None at the app side for an atom another client had just made: %llu\n",
                (unsigned long long)st->atom_none_missed);
    fprintf(f, "%-8s %12s %14s %12s %14s\n", "class", "msgs from X", "bytes from X", "msgs to X", "bytes to X");
    for (int k = 0; k < MSG_KIND_COUNT; k++)
        if (tot_msgs[k][0] || tot_msgs[k][1])
            fprintf(f, "%-8s %12llu %14llu %12llu %14llu\n", msg_kind_name((enum msg_kind)k),
                    (unsigned long long)tot_msgs[k][0], (unsigned long long)tot_bytes[k][0],
                    (unsigned long long)tot_msgs[k][1], (unsigned long long)tot_bytes[k][1]);
    fprintf(f, "%-8s %-36s %10s %12s %10s %12s\n", "kind", "message", "msgs from", "bytes from", "msgs to", "bytes to");
    for (size_t i = 0; i < n; i++) {
        const struct stat_entry *e = rows[i];
        unsigned kind = stats_entry_kind(e);
        char name[64];
        stats_entry_name(e, name, sizeof name);
        fprintf(f, "%-8s %-36.36s %10llu %12llu %10llu %12llu\n", msg_kind_name((enum msg_kind)kind), name,
                (unsigned long long)e->msgs[0], (unsigned long long)e->bytes[0],
                (unsigned long long)e->msgs[1], (unsigned long long)e->bytes[1]);
    }
    fflush(f);
}
