/* params.h -- what an emulated link is: per-direction impairments, link-wide framing,
 * named profiles, and the parsing of their command-line options. Pure data, no I/O
 * except error messages on stderr from the parsers and the read of a --trace file. */
#ifndef EMU_PARAMS_H
#define EMU_PARAMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct emu_trace;

enum { EMU_UP = 0, EMU_DOWN = 1, EMU_NDIR = 2 };   /* up: listen/A side -> connect/B side */
#define EMU_DROP_RANGES_MAX 32
#define EMU_PPM 1000000u

enum emu_framing { EMU_FRAMING_NONE = 0, EMU_FRAMING_PPP = 1 };

/* Gilbert-Elliott two-state loss: per packet, move good->bad with p, bad->good with r. */
struct emu_ge_params {
    bool on;
    uint32_t p_ppm, r_ppm;            /* transition probabilities, parts per million */
    uint32_t bad_loss_ppm;            /* loss while bad (1-h), default 100% */
    uint32_t good_loss_ppm;           /* loss while good (1-k), default 0% */
};

struct emu_drop_range { uint64_t first, last; };   /* 1-based packet numbers, inclusive */

struct emu_dir_params {
    uint64_t rate_bps;                /* 0: unlimited */
    int64_t delay_ns;                 /* one-way propagation delay */
    int64_t jitter_ns;                /* uniform +- around delay */
    uint32_t loss_ppm;                /* independent random loss */
    struct emu_ge_params ge;
    struct emu_drop_range drop[EMU_DROP_RANGES_MAX];
    unsigned n_drop;
    uint32_t queue_pkts;              /* drop-tail limits; 0: no limit of that kind */
    uint64_t queue_bytes;
    int64_t queue_ns;
    struct emu_trace *trace;          /* --trace: capacity over time instead of rate_bps (trace.h) */
};

struct emu_params {
    struct emu_dir_params dir[EMU_NDIR];
    uint32_t mtu;                     /* packet mode: MTU of both TUN devices */
    unsigned bits_per_byte;           /* 8, or 10 on an async serial line (start+stop bits) */
    enum emu_framing framing;         /* what is counted on the wire per packet */
    uint32_t overhead_bytes;          /* extra fixed bytes per packet (link headers) */
    int64_t per_packet_ns;            /* medium access time per packet (e.g. 802.11 DCF) */
    uint32_t segment_overhead_bytes;  /* stream mode: bytes charged per MSS of payload */
    bool half_duplex;                 /* both directions share one channel */
    bool reorder;                     /* jitter may reorder packets */
    bool vj;                          /* RFC 1144 header compression on the line */
    uint64_t seed;
    char profile[32];
};

struct emu_profile {
    const char *name;
    const char *summary;              /* one line for --list-profiles */
    const char *options;              /* the option string the profile stands for */
};

/* Defaults: an unlimited, lossless, full-duplex link, MTU 1500, 8 bits per byte. */
void emu_params_default(struct emu_params *p);

/* The table of named profiles, terminated by a NULL name. */
const struct emu_profile *emu_profiles(void);
const struct emu_profile *emu_profile_find(const char *name);
void emu_profiles_print(FILE *out);

/* Applies a profile by name to p: 0, or -ENOENT for an unknown name. */
int emu_params_apply_profile(struct emu_params *p, const char *name);

/* Applies one link option ("--rate", value "256k"); "--rate-up"/"--rate-down" set one
 * direction. Returns 0, -ENOENT if name is not a link option, -EINVAL on a bad value
 * (with a message on stderr). takes_value tells if the option needs a value. */
int emu_params_set(struct emu_params *p, const char *name, const char *value);
bool emu_params_is_flag(const char *name);
bool emu_params_knows(const char *name);
void emu_params_help(FILE *out);

/* Writes a one-line human description of the link. */
void emu_params_describe(const struct emu_params *p, FILE *out);

/* Unit parsers, exposed for tests. Each returns 0 or -EINVAL. */
int emu_parse_rate_bps(const char *s, uint64_t *bps);      /* "9600", "256k", "1.5M", "1G", "10kbit" */
int emu_parse_time_ns(const char *s, int64_t *ns);         /* "20ms", "1.5s", "300us", "0"; bare = ms */
int emu_parse_ppm(const char *s, uint32_t *ppm);           /* "1%", "0.5%", "0.01" (fraction) */
int emu_parse_u64(const char *s, uint64_t *v);             /* decimal, with k/M/G (x1000) suffix */

#endif
