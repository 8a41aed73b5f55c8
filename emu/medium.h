/* medium.h -- a shared radio cell: a base station (or access point) and stations, each with
 * its own data rate, loss and queue, sharing one medium's airtime under a pluggable MAC model
 * (mac_dcf.c, mac_maca.c). Pure: a virtual clock in ns and an event queue; no I/O, no sleep.
 * Workload: a few thousand frames a second; one event per frame exchange step. */
#ifndef EMU_MEDIUM_H
#define EMU_MEDIUM_H

#include <stdint.h>

#define EMU_MEDIUM_STATIONS 32        /* base station included */
#define EMU_MEDIUM_BASE     0         /* station 0 is the base station / access point */

/* A network-layer packet handed to the cell, from src to dst (one of them the base). */
struct emu_mframe {
    uint64_t id;                      /* 1, 2, ... in order of emu_medium_send */
    int src, dst;
    uint32_t bytes;                   /* IP packet bytes; the MAC adds its own headers */
    int64_t enq_ns;
    void *user;                       /* the caller's, returned in the hooks */
};

struct emu_mqueue {                   /* drop-tail FIFO ring of frames */
    struct emu_mframe *f;
    uint32_t cap, head, len;
};

struct emu_station_params {
    uint64_t rate_bps;                /* PHY rate of frames to and from this station */
    uint32_t loss_ppm;                /* frame error rate (noise) of its frames, per transmission */
    uint32_t queue_pkts;              /* drop-tail limit of each of its queues; 0: 100 */
};

struct emu_station_counters {
    uint64_t offered, delivered, delivered_bytes;
    uint64_t drop_queue, drop_retry, drop_left;   /* queue full, MAC retry limit, station left */
    uint64_t attempts, collisions, noise_losses;  /* transmissions of data frames, and their fates */
    int64_t airtime_ns;               /* medium time of exchanges this station started */
};

struct emu_station {
    int present;
    struct emu_station_params p;
    struct emu_mqueue q[EMU_MEDIUM_STATIONS];   /* q[0] unless the base keeps one per destination */
    struct emu_station_counters c;
};

enum emu_mdrop { EMU_MDROP_QUEUE = 1, EMU_MDROP_RETRY, EMU_MDROP_LEFT };

struct emu_medium_hooks {
    /* f reached its receiver at now_ns (the end of its data frame). */
    void (*delivered)(void *arg, const struct emu_mframe *f, int64_t now_ns);
    /* f will never arrive (why: enum emu_mdrop). The frame is gone after the call. */
    void (*dropped)(void *arg, const struct emu_mframe *f, int why, int64_t now_ns);
    /* The sender learnt that f was delivered (its ACK arrived): the paper's write-coalescing
     * callback. May be NULL. */
    void (*acked)(void *arg, const struct emu_mframe *f, int64_t now_ns);
    void *arg;
};

struct emu_medium;

/* An event the MAC model scheduled: its own kind and operands. */
struct emu_mevent {
    int64_t t_ns;
    uint64_t seq;                     /* ties are run in scheduling order */
    int kind, a, b;
    uint64_t gen;                     /* the MAC compares it to drop events it has superseded */
};

/* A MAC model: one file each. State lives in the medium's mac pointer. */
struct emu_mac_ops {
    const char *name;
    int per_dest_queues;              /* the base keeps a queue per destination */
    int (*init)(struct emu_medium *m, const void *cfg);   /* 0 or -errno */
    void (*free)(struct emu_medium *m);
    void (*wake)(struct emu_medium *m, int st);           /* st has a frame at a queue's head */
    void (*event)(struct emu_medium *m, const struct emu_mevent *e);
    void (*left)(struct emu_medium *m, int st);           /* st left; its queues are empty */
};

/* How the base station (access point) orders its frames for the stations, when its MAC model
 * has one sender process there (DCF): one FIFO for all (the "bad apple" queue: frames for a
 * slow station hold up everyone's), a queue per destination served round robin, or per
 * destination by deficit round robin of the airtime each destination's exchanges used. */
enum emu_ap_sched { EMU_AP_FIFO = 0, EMU_AP_RR, EMU_AP_AIRTIME };
#define EMU_AP_QUANTUM_NS 1000000     /* airtime credit a backlogged destination gets per round */

struct emu_medium {
    const struct emu_mac_ops *mac;
    void *mac_state;
    struct emu_medium_hooks hooks;
    int64_t now_ns;                   /* the virtual clock: time of the event being run */
    uint64_t rng, next_id, ev_seq;
    struct emu_mevent *ev;            /* min-heap by (t_ns, seq) */
    uint32_t n_ev, cap_ev;
    struct emu_station st[EMU_MEDIUM_STATIONS];
    int ap_sched;                     /* enum emu_ap_sched */
    int ap_cur;                       /* destination the base serves now; 0: pick at the next ask */
    int ap_last;                      /* the one served last: where the next pick starts */
    int64_t ap_deficit_ns[EMU_MEDIUM_STATIONS];   /* EMU_AP_AIRTIME: credit left per destination */
};

/* Prepares m with MAC model mac (cfg is the model's, e.g. struct emu_dcf_cfg; NULL: its
 * defaults). Only the base station is present. 0 or -errno. */
int emu_medium_init(struct emu_medium *m, const struct emu_mac_ops *mac, const void *cfg, uint64_t seed,
                    const struct emu_medium_hooks *hooks);
void emu_medium_free(struct emu_medium *m);

/* The base's queueing (enum emu_ap_sched), before any frame is sent; -EINVAL for a MAC model
 * that keeps its own queue per destination (MACA) or an unknown value. */
int emu_medium_set_ap_sched(struct emu_medium *m, int sched);

/* Station i (1..EMU_MEDIUM_STATIONS-1, or 0 to set the base's queue) joins or changes its
 * parameters. 0 or -EINVAL. */
int emu_medium_join(struct emu_medium *m, int i, const struct emu_station_params *p);
/* Station i leaves: frames queued at it and for it are dropped (EMU_MDROP_LEFT). */
int emu_medium_leave(struct emu_medium *m, int i);

/* Queues bytes from src to dst at the medium's clock (run it to now first). One of src and
 * dst is the base. 0, -ENOBUFS (queue full: counted and dropped, no hook), -EINVAL. */
int emu_medium_send(struct emu_medium *m, int src, int dst, uint32_t bytes, void *user);

/* Would a packet from src to dst find its queue full (or a station absent)? Lets a caller
 * decide before work it cannot undo (header compression). */
int emu_medium_would_drop(struct emu_medium *m, int src, int dst);

/* Time of the next event, or INT64_MAX. */
int64_t emu_medium_next_ns(const struct emu_medium *m);
/* Runs every event due by until_ns, then sets the clock to until_ns. */
void emu_medium_run(struct emu_medium *m, int64_t until_ns);

/* --- for MAC models --- */

/* Schedules an event; returns 0 or -ENOMEM. t_ns must not be before the clock. */
int emu_medium_at(struct emu_medium *m, int64_t t_ns, int kind, int a, int b, uint64_t gen);
/* The queue station st sends from for destination dst. */
struct emu_mqueue *emu_medium_queue(struct emu_medium *m, int st, int dst);
struct emu_mframe *emu_mqueue_head(struct emu_mqueue *q);
/* The queue the base's one sender process sends from now, by its ap_sched: the FIFO, or the
 * destination chosen by round robin or airtime deficit, kept until its head frame is popped
 * (a frame's retransmissions stay with it). Never NULL; may be empty. */
struct emu_mqueue *emu_medium_base_queue(struct emu_medium *m);
/* The MAC used ns of airtime for an exchange of the base's for dst (EMU_AP_AIRTIME counts it). */
void emu_medium_charge(struct emu_medium *m, int dst, int64_t ns);
/* Removes q's head: delivered (the hooks were called by the MAC) or dropped with why. */
void emu_medium_pop(struct emu_medium *m, struct emu_mqueue *q, int why);
/* Uniform in [0, n). */
uint32_t emu_medium_rand(struct emu_medium *m, uint32_t n);
/* Does a transmission to or from station st fail to noise? Draws from the generator. */
int emu_medium_noise(struct emu_medium *m, int st);
/* The station at the far end of a frame (the one that is not the base). */
static inline int emu_mframe_peer(const struct emu_mframe *f) { return f->src ? f->src : f->dst; }

/* Airtime of bits at rate_bps, rounded up to the ns. */
int64_t emu_bits_ns(uint64_t bits, uint64_t rate_bps);

#endif
