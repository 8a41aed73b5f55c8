/* session_private.h -- private to src/proxy: the session and channel structures that
 * session.c (the link, the scheduler) and channel.c (one X connection) share. */
#ifndef TINCAN_SESSION_PRIVATE_H
#define TINCAN_SESSION_PRIVATE_H

#include <fcntl.h>

#include "common/buf.h"
#include "link/codec.h"
#include "link/dict.h"
#include "link/frame.h"
#include "link/handshake.h"
#include "loop/loop.h"
#include "proxy/expose.h"
#include "proxy/observer.h"
#include "proxy/ownwin.h"
#include "proxy/pacer.h"
#include "proxy/predict.h"
#include "proxy/session.h"
#include "proxy/stats.h"
#include "x11/xstream.h"
#include "xcodec/xcodec.h"

#define READ_CHUNK (64u * 1024)            /* bytes per read() */
#define LINK_OUT_HIGH (64u * 1024)         /* stop packing the link buffer above this */
#define DATA_CHUNK (4u * 1024)             /* one channel's share per scheduler round */
#define LINK_TARGET_MIN (2u * 1024)        /* unsent bytes a TCP link may hold, at least */
#define LINK_TARGET_MAX (256u * 1024)      /* ... and at most */
#define TO_LINK_HIGH (256u * 1024)         /* stop reading an X peer above this much queued */
#define MAX_CHANNELS 1024u                 /* live channels per session */
#define DECOMPRESS_STEP (256u * 1024)      /* link bytes decompressed before frames are handled */
#define ACK_BYTES 512u                     /* acknowledge the link when this much has come ... */
#define ACK_INTERVAL_NS (5u * 1000000)     /* ... at most every 5 ms ... */
#define ACK_DELAY_NS (50u * 1000000)       /* ... or 50 ms after the first byte not acknowledged */
#define ACK_FEW 128u                       /* below this much (half the pacer's least window,
                                            * so no peer's window waits on it), never an ACK
                                            * of its own: on a write that goes anyway, ... */
#define ACK_FEW_DELAY_NS (500u * 1000000)  /* ... of DATA alone once 500 ms old; and never
                                            * when only ACK frames came */
#define SERVER_OWED_MAX (16u << 20)        /* display side: replies one client may have the server
                                            * hold for it (a GetImage flood: the server keeps what
                                            * it owes in memory, and a busy one may fail under it) */
#define SMALL_QUEUE 1024u                  /* a channel with this little queued is served first */
#define MEM_DEFAULT (64u << 20)            /* session_config.max_memory when 0 */
#define MEM_BASE (8u << 20)                /* of the bound: the process itself (code, libraries, tables) */
#define BUF_KEEP (16u * 1024)              /* an idle buffer keeps at most this much allocated */
#define FLUSH_BYTES (16u * 1024)           /* held link bytes beyond this are written at once */
#define TX_REFS_MAX 128u                   /* DATA payloads gathered for one write (linkwriter.c) */
enum flush_why { FLUSH_AT_ONCE, FLUSH_URGENT, FLUSH_FULL, FLUSH_DEADLINE, FLUSH_COALESCED, FLUSH_N }; /* why a
                                            * link write went (COALESCED: after a hold for contention) */
#define COALESCE_SMALL 1024u               /* contention: writes of at most this many frame bytes wait ... */
#define COALESCE_QUEUE_US 10000u           /* ... while the kernel's round trip is this far above its least
                                            * (and its least again: a delayed ACK is not a queue), a
                                            * queue on the path (other stations' airtime), ... */
#define COALESCE_MAX_IN_FLIGHT 2048u      /* ... not a queue of our own bulk (more link bytes in flight,
                                            * or channels waiting for the window) ... */
#define COALESCE_RX_BULK_BPS 16000u        /* ... nor of the peer's (this much coming a second) ... */
#define COALESCE_MAX_NS (100u * 1000000)   /* ... while a write is in flight, at most a round trip and this */
#define COALESCE_POLL_NS (4u * 1000000)    /* ... looking again this often (the kernel tells no ACK) */
#define XC_BUDGET_SHARE 8 /* of --max-memory, for the body models of this side's encoders:
                           * at 64 MiB, two channels with image models and two with font tables */
#define REFS_BUDGET_SHARE 8 /* of --max-memory, for the channels' reference stores (the app
                             * side grants them; the display side holds what it is told) */
#define LINK_RATE_AGE_NS (100u * 1000000)  /* the link's delivery rate is read at least this often */

enum channel_phase {
    CH_SETUP,   /* app side: waiting for the client's setup request */
    CH_OPEN,    /* carrying X traffic */
};

struct channel {
    uint32_t id;
    struct session *s;
    int fd;                       /* the X peer: a client (app side) or the server (display side) */
    struct watch w;
    struct xstream xs;
    enum channel_phase phase;
    size_t refs_held;             /* memory of each of its coders' store (OPEN's refs) and the
                                   * recent trapezoids that come with one */
    struct buf from_x, to_x, from_link, to_link;
    uint64_t send_credit;         /* DATA bytes we may still send */
    uint64_t link_received;       /* DATA bytes received */
    uint64_t link_granted;        /* credit handed back to the peer */
    bool on_link;                 /* the peer knows this channel (OPEN sent or received) */
    bool x_closed;                /* our X peer is gone: send CLOSE once to_link is out */
    bool peer_closed;             /* CLOSE received: flush to_x, then close */
    bool dead;                    /* freed before the next sleep */
    bool font_set_hint;           /* display side: the client's locale makes UTF-8 font sets (hint.h) */
    bool requests_held;           /* display side: from_link holds requests that wait (request_waits) */
    bool setup_held;              /* display side: its setup request waits for the observer's first
                                   * probes (observer_hold_setup): nothing of to_x may reach the
                                   * server before it, though the client's requests may come */
    bool grabbing;                /* both sides: it sent GrabServer and no UngrabServer since: the
                                   * server may serve it alone (DESIGN.md "Server grabs") */
    bool urgent;                  /* to_link holds a message someone waits for (a request owed
                                   * an answer, an answer, an input event): write it at once */
    uint32_t last_answered;       /* sequence number of the last request counted as a round trip */
    uint32_t last_unpredicted;    /* app side: the latest request not answered locally */
    struct msg_class unpredicted_cls; /* ... its class (for the debug log of round trips) */
    bool focus_known;             /* focus_reply is the client's last GetInputFocus reply from the
                                   * server and (app side) nothing else from the server has reached
                                   * the client since, nor has it sent a request that could move
                                   * the focus (docs/PROTOCOL.md 3.2); ... */
    uint64_t focus_at_ns;         /* ... app side: when it reached the client */
    uint8_t focus_reply[32];
    uint32_t seq_floor;           /* the latest request answered at the app side (PREDICTED) */
    struct predict_questions pq;  /* questions whose answers teach the predictor */
    struct expose_state ex;       /* app side: GCs, pixmaps and window facts, for NoExpose */
    struct ownwin_state own;      /* both sides: the client's own windows, for local answers */
    struct xenc *enc;             /* structured encoding of what goes to the link (CAP_XCODEC) */
    struct xdec *dec;             /* ... and decoding of what comes from it */
    struct buf dec_in;            /* encoded bytes of a message not yet whole */
    uint64_t link_in, link_out;   /* DATA bytes from / to the link, for `tincan info` */
    uint64_t round_trips;         /* app side: this client's share of stats.round_trips */
    uint32_t struct_seq;          /* display side: the latest request that may change windows */
    uint32_t struct_confirmed;    /* ... the latest such whose effects the observer has seen */
    uint32_t sync_tag;            /* ... the one the observer is confirming now, or 0 */
    uint32_t watches_pending;     /* ... windows whose watch is not yet in place: maps wait */
    struct {                      /* display side: replies the app side gave; drop the server's */
        struct dropped_reply {
            uint32_t seq;
            bool event;           /* a NoExpose, not a reply */
            bool own_window;      /* a reply about the client's own window (ownwin.h) */
            bool atom_none;       /* an InternAtom the app side answered None (docs/PROTOCOL.md 3.2) */
            bool state;           /* a query of watched state (statewatch.h): the server's may be newer */
            bool focus;           /* a GetInputFocus answered as the channel's last one (PREDICTED note 2) */
            struct buf expected;  /* the reply the app side gave, computed here too */
        } *q;
        uint32_t head, len, cap;
    } drops;
    struct channel *next;
};

/* A link that connected (or was accepted) while the session has one, or has lost it: it
 * proves the secret and names this session before it replaces the old one (relink.c). */
#define MAX_CANDIDATES 4                   /* peers in their handshake at once: an idle one
                                            * cannot keep the right peer out */
struct link_candidate {
    struct session *s;
    int in, out;                  /* -1: this slot is free */
    struct watch w_in, w_out;
    struct handshake hs;
    struct buf rx, tx;
    uint64_t deadline_ns;
};

/* The spare X connection (spare.h): the display side's, or the app side's copy of its reply. */
struct spare_state {
    bool enabled;                 /* both sides offered CAP_SPARE */
    int fd;                       /* display side: the connection, or -1 */
    struct watch w;
    uint32_t id, next_id;
    struct buf rx;                /* ... its setup reply as read */
    struct buf last;              /* both sides: the setup reply of the last SPARE (a delta's base) */
    bool ready, offered;          /* ... read whole; sent in a SPARE frame */
    bool checked, check_pending;  /* ... the root seen as its reply says, after it was read */
    uint32_t failures;            /* ... spares lost in a row */
    uint64_t next_check_ns;       /* ... when to compare its reply with the server again */
    int old_fd;                   /* ... the spare it replaced, still claimable by an OPEN */
    uint32_t old_id;              /*     that crossed the newer SPARE on the link, or -1 */
    struct buf old_rx;
    uint64_t old_until_ns;        /* ... closed then (0: the newer one is not offered yet) */
    bool any_offered;             /* ... a SPARE (or an empty one: none) has been sent */
    bool have, have_msb;          /* app side: a spare is on offer */
    bool first_seen;              /* ... a SPARE has come: clients no longer wait for one */
    void (*clients_may_go)(struct session *s); /* ... then those waiting go on (channel_session_up) */
    uint64_t wait_until_ns;       /* ... until then, at most this long after the link came up */
    uint32_t have_id;
    uint16_t have_major, have_minor;
    struct buf have_setup;
};
struct session {
    struct loop *loop;
    struct session_config cfg;
    enum session_state state;
    int link_in, link_out;
    struct watch link_in_w, link_out_w;  /* one watch when link_in == link_out */
    struct handshake hs;
    struct buf link_rx, hs_tx, link_tx;  /* frames, uncompressed */
    struct codec *codec;                 /* set when both sides offered CAP_ZSTD */
    struct dict_store *dict;             /* the compression cache; NULL when off */
    struct xc_pixcache *pixcache;        /* with the cache and CAP_XCODEC: the last session's pixel bodies */
    struct xc_tilecache *tilecache;      /* ... and tiles of earlier sessions' large images */
    uint64_t dict_cut[2];                /* per codec_dir: the stream offsets to save up to */
    bool dict_cut_set;                   /* GOODBYE sent or received: both sides agree on them */
    struct buf wire_rx, wire_tx;         /* compressed link bytes */
    uint64_t handshake_deadline_ns;
    bool goodbye;                 /* end once link_tx is written */
    bool refused;
    char end_reason[256];
    bool ended_clean;
    struct channel *channels;     /* list, in scheduling order */
    struct channel *by_slot[MAX_CHANNELS];
    uint32_t next_id;
    size_t n_channels;
    struct stats stats;
    uint64_t idle_ns_at_start;    /* the loop's idle time before this session began */
    bool link_is_tcp;             /* the kernel reports unsent bytes (TCP_NOTSENT_LOWAT applies) */
    uint32_t lowat;               /* the TCP link's current low-water mark */
    struct predictor *predict;    /* facts for local answers; NULL when disabled */
    bool xcodec;                  /* both offered CAP_XCODEC: channels encode their messages */
    struct pacer pacer;           /* how much may be in flight on the link (ACK frames) */
    uint64_t ack_sent;            /* the link bytes read that our last ACK reported */
    uint64_t ack_sent_ns;
    uint64_t ack_first_ns;        /* when the first byte not yet acknowledged came, or 0 */
    bool ack_worthy;              /* a frame other than ACK came since our last ACK */
    struct buf xc_scratch;        /* one message's encoding, or one DATA frame's decoding */
    struct observer *observer;    /* display side: our own X connection; NULL if none */
    struct spare_state spare;     /* a connection set up ahead of the next client */
    bool observer_tried;
    struct learnt *learnt;        /* display side: questions remembered across sessions (learnt.h); NULL if none */
    struct fontset *fontset;      /* display side: font sets asked ahead (fontset.h); NULL if none */
    struct xc_budget xc_budget;   /* body models' memory of this side's encoders (xcodec.h) */
    struct xc_budget refs_budget; /* the channels' reference stores, both coders of each */
    struct statewatch *statewatch; /* display side: RANDR's and XInput's state told ahead (statewatch.h); NULL if none */
    /* Memory bound (DESIGN.md "Bounded memory"): bytes held in buffers, and the marks
     * between which reading X peers stops and starts again. */
    uint64_t mem_held, mem_peak, mem_high, mem_low;
    bool mem_paused;              /* above the high mark, not yet below the low one */
    uint32_t mem_pauses;          /* times it paused, for the statistics */
    struct channel *mem_reader;   /* paused: the one channel that may finish a message it is reading */
    struct channel *mem_receiver; /* paused: the one channel granted credit for a partial message */
    /* Flush policy (DESIGN.md "Fewer, larger link writes"): link_tx is held briefly on a
     * slow link to gather more frames into one compressed block. */
    uint64_t (*now)(void);        /* clock_ns, or a test's clock */
    size_t tx_begin;              /* where the frames being queued (link_frame_begin) start */
    /* DATA payloads packed this pump but not copied into link_tx: written from the channel's
     * to_link with writev, and copied only if the write does not take them (linkwriter.c,
     * "Gathered DATA"). Empty outside linkwriter_pump's packing and writing. */
    struct tx_ref { size_t at; const uint8_t *p; size_t n; } tx_refs[TX_REFS_MAX];
    unsigned n_tx_refs;
    size_t tx_ref_bytes;
    uint64_t rate_told_Bps;       /* the link rate the channels' encoders were last told (bigimg.c) */
    bool goodbye_when_up;         /* session_goodbye came during the handshake: said when it is done */
    bool tx_urgent;               /* link_tx holds something a peer waits for */
    bool tx_control;              /* ... a frame the peer acts on (not DATA, PREDICTED or ACK) */
    uint64_t hold_since;          /* when link_tx began to be held; 0: not held */
    uint64_t link_rate_Bps;       /* the TCP link's measured delivery rate; 0: unknown */
    uint64_t link_rate_ns;        /* ... when last read from the kernel */
    bool kq_known;                /* the kernel's unsent bytes were read: kq_unsent ... */
    uint64_t kq_unsent, kq_out;   /* ... when link_bytes_out was kq_out */
    uint32_t flushes[FLUSH_N];    /* link writes of frames by why: enum flush_why */
    bool coalescing;              /* link_tx is held for contention (link_coalesce) */
    uint64_t rx_mark_ns, rx_mark_bytes, rx_recent_Bps; /* ... what the link brought lately */
    /* The link's life across outages (relink.c, DESIGN.md "Outages", PROTOCOL.md 1.3). */
    uint32_t caps;                /* the capabilities agreed at the first handshake */
    int window_log;               /* ... and the compression window */
    uint8_t token[HS_TOKEN_SIZE], token_peer[HS_TOKEN_SIZE]; /* the session's identity, both halves' */
    uint64_t generation;          /* links attached after the first (as this side counts them) */
    uint64_t peer_generation;     /* ... the peer's count is known to be at least this */
    uint64_t rx_adopted;          /* rx_stream when the last link was taken: more, the peer took it too */
    uint64_t tx_stream, rx_stream; /* bytes of the link stream (after the handshakes) written, read */
    struct buf replay;            /* stream bytes written that the peer has not acknowledged */
    uint64_t replay_start;        /* ... the stream offset of its first byte */
    uint64_t rx_last_ns;          /* when the link last brought bytes */
    uint64_t ping_ns;             /* when we last asked a quiet link for an ACK; 0: not since */
    bool ack_now;                 /* a PING came: acknowledge at once */
    uint64_t detached_ns;         /* SESSION_DETACHED: when the link was lost */
    uint64_t outage_from_ns;      /* ... when it last carried anything (the outage's start) */
    uint64_t outage_longest_ns;   /* the longest outage so far */
    struct link_candidate cand[MAX_CANDIDATES];
    int exit_status, peer_exit_status; /* the app side's command's, told in GOODBYE; -1: none */
    bool notice_shown;            /* display side: the outage notice is on the screen (notice.c) */
    uint64_t notice_ns;           /* ... last drawn */
};

static inline bool is_app(const struct session *s) { return s->cfg.role == ROLE_APP; }

/* App side: whether another client of the session holds the server grabbed (its GrabServer
 * came, its UngrabServer not yet, and it is still connected). */
static inline bool session_grabbed_by_other(const struct channel *ch)
{
    for (const struct channel *c = ch->s->channels; c; c = c->next)
        if (c != ch && c->grabbing && !c->dead && !c->x_closed)
            return true;
    return false;
}

/* Whether a channel may read its X peer: not while the session holds more than its high
 * mark, except the one channel finishing a message (a message larger than what is left
 * of the bound still passes, one at a time), and a channel that holds the server grabbed:
 * what the others hold drains only once it lets go, which it does on what it reads (its
 * queue for the link still bounds it). At the app side, not while another client holds
 * the server grabbed either (setups still are read): the server serves none but that one
 * until it lets go, and coding the others' requests meanwhile only holds the loop the
 * grabbing client waits on (coding a 4 MiB image kept a grab over 1 s: core_grab). */
static inline bool session_may_read(const struct channel *ch)
{
    if (is_app(ch->s) && ch->phase != CH_SETUP && !ch->grabbing && session_grabbed_by_other(ch))
        return false;
    return !ch->s->mem_paused || ch == ch->s->mem_reader || ch->grabbing;
}

/* Whether a partial message in from_link still counts as buffered when credit is returned:
 * while paused, only one channel at a time may receive beyond its window. */
static inline bool session_holds_partial(const struct channel *ch)
{
    return ch->s->mem_paused && ch != ch->s->mem_receiver;
}



/* channel.c */
struct channel *channel_new(struct session *s, uint32_t id, int fd);
struct channel *channel_find(struct session *s, uint32_t id);
/* App side: a client has connected; watch it for its setup request. 0 or -errno. */
int channel_start_client(struct channel *ch);
void channel_drop(struct channel *ch, const char *why);
/* channel.c's core, for the roles' files (channel_app.c, channel_display.c): framing whole
 * messages of p[0..n) into out (the bytes used, or -errno) and of `in` plus new bytes; the
 * channel's coders; what the X socket's events do; what from_x holds, framed and queued. */
long channel_frame_span(struct channel *ch, const uint8_t *p, size_t n, struct buf *out, bool requests, enum stat_dir dir);
int channel_frame_input(struct channel *ch, struct buf *in, const uint8_t *p, size_t n, struct buf *out, bool requests,
                        enum stat_dir dir);
int channel_codecs(struct channel *ch, enum xc_dir dir, bool msb, uint8_t refs);
void channel_on_x_event(struct watch *w, unsigned events);
void channel_read_more(struct channel *ch);
const char *channel_errno_text(long rc);
bool channel_is_copy(const struct msg_class *cls);
/* The oldest answer the app side gave ahead is done with (display side). */
void channel_drop_pop(struct channel *ch);
/* channel_app.c: a client's setup request (0, or -errno: refused); a request on its way to
 * the link; a server message on its way to the client (msg: as the client gets it). */
int channel_app_accept_setup(struct channel *ch);
void channel_app_on_request(struct channel *ch, const struct msg_class *cls, const uint8_t *msg,
                            const struct xw_request *rq, uint32_t seq);
void channel_app_on_server_msg(struct channel *ch, const struct xw_server_msg *m, const struct msg_class *cls,
                               uint8_t *msg);
/* channel_display.c: a request on its way to the server; whether a server message is an
 * answer the app side gave already (dropped); whether a request must wait. */
void channel_display_on_request(struct channel *ch, const struct msg_class *cls, const uint8_t *msg,
                                const struct xw_request *rq, uint32_t seq);
bool channel_display_drops_server_msg(struct channel *ch, const struct xw_server_msg *m, const struct msg_class *cls,
                                      const uint8_t *msg, size_t len);
bool channel_request_waits(struct channel *ch, const uint8_t *req, const struct xw_request *rq);
/* How the observer tells the channels that a held setup or held requests may go (observer.h). */
void channel_listen(struct session *s, struct observer_listener *out);
void channel_update_interest(struct channel *ch);
void channel_others_interest(struct channel *ch);
/* Display side: appends the setup request for a new upstream connection (the user's cookie). */
void channel_write_x(struct channel *ch);
void channel_grant(struct channel *ch);
void reap_channels(struct session *s);
/* Handlers of the link frames that concern one channel. 0, or -EBADMSG for a corrupt frame. */
int channel_on_open(struct session *s, const struct frame *f);
int channel_on_data(struct session *s, const struct frame *f);
int channel_on_close(struct session *s, const struct frame *f);
int channel_on_window(struct session *s, const struct frame *f);
int channel_on_predicted(struct session *s, const struct frame *f);
int channel_on_fact(struct session *s, const struct frame *f);
int channel_on_hint(struct session *s, const struct frame *f);
/* App side: the link is up; clients that connected before it may go on. */
void channel_session_up(struct session *s);
/* Display side: requests held back for a window watch may go on now. */
void channel_resume_requests(struct channel *ch);
/* Display side: the client's setup request (OPEN's parameters) goes to the server now. */
void channel_send_setup(struct channel *ch, const struct frame_open *o);

/* session.c */
void session_end(struct session *s, bool clean, const char *fmt, const char *arg);
/* Watches the session's link fds (link_in, link_out) for the link's events. 0 or -errno. */
int session_watch_link(struct session *s);
/* The link is readable: reads it and handles whole frames (session.c). */
void session_on_link_readable(struct session *s);
/* linkwriter.c: one turn of the link's output (scheduler, flush policy, ACKs, memory bound),
 * before each sleep; the compression window agreed (it sizes the memory marks); the flush
 * policy's current hold time. */
void linkwriter_pump(struct session *s);
/* The pixel cache's share of the body models' budget. */
static inline size_t pixcache_budget(const struct session *s) { return s->xc_budget.cap / 2; }
/* The tiles kept for the next session: as many as the encoders' body models may hold (8 MiB
 * under the default bound: a browser session's distinct tiles), at most XC_TILES_MAX. */
static inline size_t tilecache_budget(const struct session *s) { return s->xc_budget.cap; }
void linkwriter_set_window(struct session *s, int window_log);
uint64_t linkwriter_flush_delay_ns(const struct session *s);
/* Whether a small write held held_ns waits longer under contention: the kernel's round trip
 * above its least by COALESCE_QUEUE_US and by the least again, a write in flight, neither
 * side's bulk (in_flight: our link bytes not acknowledged; rx_Bps: what the link brings), for at most a round trip
 * and COALESCE_MAX_NS (DESIGN.md "Coalescing under contention"). */
struct transport_queue;
bool linkwriter_coalesce_holds(const struct transport_queue *q, uint64_t in_flight, uint64_t rx_Bps, uint64_t held_ns);
/* The one way a frame goes onto the link (linkwriter.c): link_send queues one frame;
 * link_send_frames whole frames made by an encoder of their own (frame_open_encode,
 * spare_frame_encode, ...). Frames are counted, control frames make the next write go at
 * once, and a failure takes back what was half appended and ends the session: 0 or
 * -errno, and on -errno the caller stops what it was doing. */
__attribute__((warn_unused_result)) int link_send(struct session *s, uint8_t type, uint32_t channel,
                                                  const void *payload, size_t len);
__attribute__((warn_unused_result)) int link_send_frames(struct session *s, const struct buf *frames);

/* relink.c: the link's life across outages */
/* The link broke or fell silent: detach (keep every channel) when resumable, else end. */
void relink_lost(struct session *s, const char *why);
/* n stream bytes at p were written to the link: kept until the peer acknowledges them. */
void relink_sent(struct session *s, const uint8_t *p, size_t n);
/* The peer has read `acked` bytes of our stream. */
void relink_acked(struct session *s, uint64_t acked);
/* Once per loop turn: liveness probes, silence, the grace period, candidates' deadlines. */
void relink_tick(struct session *s);
void relink_free(struct session *s);
/* The current outage's length so far (0: none), for `tincan info`. */
uint64_t session_outage_now_ns(const struct session *s, uint64_t now_ns);

#endif
