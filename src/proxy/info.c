/* info.c -- a session's live state as `tincan info` shows it, as text or as one JSON
 * object: the link's measured rate and RTT, compression, memory against the bound,
 * outages, each client, and bytes and messages per message class. Reads the session; changes nothing. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/version.h"
#include "proxy/session_private.h"

static const char *state_name(enum session_state st)
{
    return st == SESSION_HANDSHAKE ? "handshake" : st == SESSION_UP ? "up" : "ended";
}

/* A JSON string (quotes included); bytes below 0x20, quotes and backslashes escaped. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; s && *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static double ratio(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

/* What this side knows of a client's process: on the app side the peer of a local X
 * connection (SO_PEERCRED, then /proc/PID/comm). The display side's peer is the X server. */
static int client_process(const struct session *s, const struct channel *ch, char *prog, size_t cap)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    prog[0] = 0;
    if (!is_app(s) || ch->fd < 0 || getsockopt(ch->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
        len != sizeof cr || cr.pid <= 0)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/comm", (long)cr.pid);
    FILE *c = fopen(path, "r");
    if (c) {
        if (fgets(prog, (int)cap, c))
            prog[strcspn(prog, "\n")] = 0;
        fclose(c);
    }
    return (int)cr.pid;
}

struct info_totals {
    uint64_t msgs[MSG_KIND_COUNT][2], bytes[MSG_KIND_COUNT][2];
};

static void totals_of(const struct stats *st, struct info_totals *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < STATS_SLOTS; i++) {
        const struct stat_entry *e = &st->slots[i];
        if (!e->key)
            continue;
        for (int d = 0; d < 2; d++) {
            t->msgs[stats_entry_kind(e)][d] += e->msgs[d];
            t->bytes[stats_entry_kind(e)][d] += e->bytes[d];
        }
    }
}

static void write_json(struct session *s, FILE *f, uint64_t now)
{
    const struct stats *st = &s->stats;
    fprintf(f, "{\"pid\": %ld, \"side\": \"%s\", \"version\": \"%s\", \"protocol\": %d, \"state\": \"%s\", "
               "\"uptime_s\": %.3f,\n",
            (long)getpid(), is_app(s) ? "app" : "display", TINCAN_VERSION, LINK_PROTOCOL_VERSION,
            state_name(s->state), (double)(now - st->start_ns) / 1e9);
    fprintf(f, " \"link\": {\"rate_bytes_per_s\": %llu, \"rtt_ms\": %.3f, \"window_bytes\": %zu, "
               "\"in_flight_bytes\": %llu, \"kernel_rate_bytes_per_s\": %llu, \"bytes_in\": %llu, \"bytes_out\": %llu, "
               "\"frames_in\": %llu, \"frames_out\": %llu, \"writes\": %llu},\n",
            (unsigned long long)pacer_rate(&s->pacer), (double)pacer_rtt_ns(&s->pacer) / 1e6, pacer_window(&s->pacer),
            (unsigned long long)(s->pacer.sent - s->pacer.acked), (unsigned long long)s->link_rate_Bps,
            (unsigned long long)st->link_bytes_in, (unsigned long long)st->link_bytes_out,
            (unsigned long long)st->link_frames_in, (unsigned long long)st->link_frames_out,
            (unsigned long long)st->link_writes);
    fprintf(f, " \"compression\": {\"zstd_level\": %d, \"window_bytes\": %llu, \"frame_bytes_out\": %llu, "
               "\"link_bytes_out\": %llu, \"ratio_out\": %.4f, \"frame_bytes_in\": %llu, \"link_bytes_in\": %llu, "
               "\"ratio_in\": %.4f, \"structured_x_bytes\": %llu, \"structured_bytes\": %llu, \"structured_ratio\": %.4f},\n",
            s->codec ? codec_level(s->codec) : 0, s->codec ? 1ull << codec_window_log(s->codec) : 0ull,
            (unsigned long long)st->frame_bytes_out, (unsigned long long)st->link_bytes_out,
            ratio(st->link_bytes_out, st->frame_bytes_out), (unsigned long long)st->frame_bytes_in,
            (unsigned long long)st->link_bytes_in, ratio(st->link_bytes_in, st->frame_bytes_in),
            (unsigned long long)st->xc_raw_out, (unsigned long long)st->xc_encoded_out,
            ratio(st->xc_encoded_out, st->xc_raw_out));
    fprintf(f, " \"memory\": {\"held_bytes\": %llu, \"peak_bytes\": %llu, \"bound_bytes\": %llu, \"high_mark_bytes\": %llu, "
               "\"compression_bytes\": %llu, \"reading_paused\": %s, \"pauses\": %u},\n",
            (unsigned long long)s->mem_held, (unsigned long long)s->mem_peak, (unsigned long long)s->cfg.max_memory,
            (unsigned long long)s->mem_high, (unsigned long long)(s->codec ? codec_memory(s->codec) : 0),
            s->mem_paused ? "true" : "false", s->mem_pauses);
    uint64_t current = session_outage_now_ns(s, now);
    fprintf(f, " \"outages\": {\"count\": %llu, \"total_s\": %.3f, \"longest_s\": %.3f, \"current_s\": %.3f, "
               "\"bytes_replayed\": %llu},\n",
            (unsigned long long)st->outages, (double)(st->outage_ns + current) / 1e9,
            (double)(current > s->outage_longest_ns ? current : s->outage_longest_ns) / 1e9, (double)current / 1e9,
            (unsigned long long)st->bytes_replayed);
    fprintf(f, " \"clients_total\": %llu, \"clients_refused\": %llu, \"clients_dropped\": %llu, \"round_trips\": %llu, "
               "\"answered_locally\": %llu,\n",
            (unsigned long long)st->clients_total, (unsigned long long)st->clients_refused,
            (unsigned long long)st->clients_dropped, (unsigned long long)st->round_trips,
            (unsigned long long)st->answered_locally);
    fputs(" \"clients\": [", f);
    const char *sep = "";
    for (const struct channel *ch = s->channels; ch; ch = ch->next) {
        if (ch->dead)
            continue;
        char prog[64];
        int pid = client_process(s, ch, prog, sizeof prog);
        fprintf(f, "%s\n  {\"id\": %u, \"pid\": ", sep, ch->id);
        if (pid)
            fprintf(f, "%d", pid);
        else
            fputs("null", f);
        fputs(", \"program\": ", f);
        if (prog[0])
            json_str(f, prog);
        else
            fputs("null", f);
        fprintf(f, ", \"link_bytes_out\": %llu, \"link_bytes_in\": %llu, \"requests\": %u, \"round_trips\": ",
                (unsigned long long)ch->link_out, (unsigned long long)ch->link_in, ch->xs.seq_sent);
        if (is_app(s))
            fprintf(f, "%llu", (unsigned long long)ch->round_trips);
        else
            fputs("null", f); /* counted where the client waits: the app side */
        fprintf(f, ", \"queued_bytes\": %zu}", ch->to_link.len + ch->to_x.len);
        sep = ",";
    }
    fputs("],\n", f);
    struct info_totals t;
    totals_of(st, &t);
    fputs(" \"kinds\": [", f);
    sep = "";
    for (int k = 0; k < MSG_KIND_COUNT; k++) {
        if (!t.msgs[k][0] && !t.msgs[k][1])
            continue;
        fprintf(f, "%s\n  {\"kind\": \"%s\", \"msgs_from_x\": %llu, \"bytes_from_x\": %llu, \"msgs_to_x\": %llu, "
                   "\"bytes_to_x\": %llu}",
                sep, msg_kind_name((enum msg_kind)k), (unsigned long long)t.msgs[k][0],
                (unsigned long long)t.bytes[k][0], (unsigned long long)t.msgs[k][1], (unsigned long long)t.bytes[k][1]);
        sep = ",";
    }
    fputs("],\n \"classes\": [", f);
    sep = "";
    for (size_t i = 0; i < STATS_SLOTS; i++) {
        const struct stat_entry *e = &st->slots[i];
        if (!e->key)
            continue;
        char name[64];
        stats_entry_name(e, name, sizeof name);
        fprintf(f, "%s\n  {\"kind\": \"%s\", \"name\": ", sep, msg_kind_name(stats_entry_kind(e)));
        json_str(f, name);
        fprintf(f, ", \"msgs_from_x\": %llu, \"bytes_from_x\": %llu, \"msgs_to_x\": %llu, \"bytes_to_x\": %llu}",
                (unsigned long long)e->msgs[0], (unsigned long long)e->bytes[0], (unsigned long long)e->msgs[1],
                (unsigned long long)e->bytes[1]);
        sep = ",";
    }
    fputs("]}\n", f);
}

static void write_text(struct session *s, FILE *f, uint64_t now)
{
    const struct stats *st = &s->stats;
    fprintf(f, "tincan %s side, pid %ld: session %s for %.1f s (link protocol %d)\n", is_app(s) ? "app" : "display",
            (long)getpid(), state_name(s->state), (double)(now - st->start_ns) / 1e9, LINK_PROTOCOL_VERSION);
    uint64_t rate = pacer_rate(&s->pacer), rtt = pacer_rtt_ns(&s->pacer);
    char rate_s[48] = "rate not measured yet", rtt_s[48] = "round trip not measured yet";
    if (rate)
        snprintf(rate_s, sizeof rate_s, "%.1f kbit/s measured", (double)rate * 8 / 1000);
    if (rtt)
        snprintf(rtt_s, sizeof rtt_s, "round trip %.1f ms", (double)rtt / 1e6);
    fprintf(f, "link: %s, %s, window %zu bytes, %llu in flight\n", rate_s, rtt_s, pacer_window(&s->pacer),
            (unsigned long long)(s->pacer.sent - s->pacer.acked));
    uint64_t current = session_outage_now_ns(s, now);
    fprintf(f, "outages (links lost): %llu, %.1f s in all, the longest %.1f s, %llu bytes sent again%s\n",
            (unsigned long long)st->outages, (double)(st->outage_ns + current) / 1e9,
            (double)(current > s->outage_longest_ns ? current : s->outage_longest_ns) / 1e9,
            (unsigned long long)st->bytes_replayed, current ? "; the link is out now" : "");
    fprintf(f, "clients now: %zu\n", s->n_channels);
    fprintf(f, "  %6s %8s %-16s %12s %12s %9s %11s\n", "id", "pid", "program", "to link", "from link", "requests",
            "round trips");
    for (const struct channel *ch = s->channels; ch; ch = ch->next) {
        if (ch->dead)
            continue;
        char prog[64], pid_s[16] = "-", rt[24] = "-";
        int pid = client_process(s, ch, prog, sizeof prog);
        if (pid)
            snprintf(pid_s, sizeof pid_s, "%d", pid);
        if (is_app(s))
            snprintf(rt, sizeof rt, "%llu", (unsigned long long)ch->round_trips);
        fprintf(f, "  %6u %8s %-16s %12llu %12llu %9u %11s\n", ch->id, pid_s, prog[0] ? prog : "-",
                (unsigned long long)ch->link_out, (unsigned long long)ch->link_in, ch->xs.seq_sent, rt);
    }
    /* Then the table SIGUSR1 prints: time, link, compression, clients, memory, per class. */
    session_print_stats(s, f);
}

int session_write_info(struct session *s, FILE *f, bool json)
{
    uint64_t now = clock_ns();
    if (json)
        write_json(s, f, now);
    else
        write_text(s, f, now);
    return ferror(f) ? -EIO : 0;
}
