/* stats.h -- per-session accounting in the manner of nxproxy: messages and bytes by
 * message class and direction, link bytes, and where the time went. Updated once per
 * message (hot path: a hash lookup); printed as a table on SIGUSR1 and at exit. */
#ifndef TINCAN_STATS_H
#define TINCAN_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "x11/xstream.h"

enum stat_dir { STAT_FROM_X, STAT_TO_X };  /* read from our X peer / written to it */

struct stat_entry {
    uint32_t key;                 /* kind, major, minor; 0 = empty slot */
    const char *ext, *name;
    uint64_t msgs[2], bytes[2];
};

#define STATS_SLOTS 1024u

struct stats {
    struct stat_entry slots[STATS_SLOTS];
    uint64_t link_bytes_in, link_bytes_out, link_frames_in, link_frames_out;
    uint64_t link_writes;
    uint64_t frame_bytes_in, frame_bytes_out;  /* before decompression / after compression */
    uint64_t clients_total, clients_refused, clients_dropped;
    uint64_t round_trips;         /* answers to a client's latest request: it was (or could be) waiting */
    uint64_t answered_locally;    /* requests the app side answered without the link */
    uint64_t setups_answered;     /* ... of them, connection setups (a spare connection's) */
    uint64_t xc_raw_out, xc_encoded_out; /* X bytes given to the structured encoding, and its output */
    uint64_t ownwin_missed;       /* display side: an answer about a client's own window that the server contradicted */
    uint64_t noexpose_missed;     /* display side: a NoExpose answered at the app side that the server did not send */
    uint64_t atom_none_missed;    /* display side: InternAtom answered None at the app side, but the atom existed */
    uint64_t state_missed;        /* display side: a RANDR or XInput query answered from state that then changed */
    uint64_t server_grabs;        /* GrabServer requests that began a client's grab */
    uint64_t outages, outage_ns, bytes_replayed; /* links lost and replaced; time without one; stream resent */
    uint64_t read_ns, write_ns, encode_ns;
    uint64_t start_ns;
};

void stats_init(struct stats *st);
void stats_count(struct stats *st, const struct msg_class *cls, enum stat_dir dir, uint32_t bytes);
/* A used slot's message kind, and its name as the table prints it ("RENDER:Composite"). */
enum msg_kind stats_entry_kind(const struct stat_entry *e);
void stats_entry_name(const struct stat_entry *e, char *name, size_t cap);
/* idle_ns: time the loop spent waiting. title names the side ("app side"). */
void stats_print(const struct stats *st, FILE *f, const char *title, uint64_t idle_ns);

#endif
