/* mac_dcf.h -- IEEE 802.11b DCF (CSMA/CA with binary exponential backoff) as a MAC model of
 * the shared medium (medium.h): every station hears every other, so collisions happen only
 * when backoff counters reach zero in the same slot; EIFS after a garbled frame. Timing constants are parameters. */
#ifndef EMU_MAC_DCF_H
#define EMU_MAC_DCF_H

#include <stdint.h>

#include "medium.h"

struct emu_dcf_cfg {
    int64_t difs_ns, sifs_ns, slot_ns;        /* 50, 10, 20 us */
    uint32_t cw_min, cw_max;                  /* 31, 1023 slots */
    uint32_t retry_limit;                     /* transmissions of a frame before it is dropped: 7 */
    int64_t plcp_ns;                          /* preamble + PLCP header at 1 Mbit/s: 192 us (short: 96) */
    uint32_t mac_overhead_bytes;              /* MAC header 24 + LLC/SNAP 8 + FCS 4 = 36 per data frame */
    uint32_t ack_bytes, rts_bytes, cts_bytes; /* 14, 20, 14 */
    uint64_t basic_rate_bps;                  /* control frames: the highest basic rate <= the data rate */
    uint32_t rts_threshold_bytes;             /* RTS/CTS before data frames longer than this; 0: never */
    int64_t eifs_ns;                          /* after a frame heard in error, those who did not send
                                               * it wait EIFS = SIFS + ACK at 1 Mbit/s with the long
                                               * preamble + DIFS = 364 us (instead of DIFS); 0: off */
};

void emu_dcf_default(struct emu_dcf_cfg *c);

/* Airtime of one PHY frame of mpdu_bytes at rate_bps: PLCP preamble and header, then the bits. */
int64_t emu_dcf_frame_ns(const struct emu_dcf_cfg *c, uint32_t mpdu_bytes, uint64_t rate_bps);
/* Rate of control frames (RTS, CTS, ACK) answering or preceding data at rate_bps. */
uint64_t emu_dcf_ctrl_rate(const struct emu_dcf_cfg *c, uint64_t rate_bps);
/* Medium time of a successful exchange of an ip_bytes packet at rate_bps, from the start of
 * its first frame to the end of the ACK: [RTS SIFS CTS SIFS] DATA SIFS ACK. */
int64_t emu_dcf_exchange_ns(const struct emu_dcf_cfg *c, uint32_t ip_bytes, uint64_t rate_bps);

/* Tests: sets station st's backoff counter to slots (as if drawn). 0 or -EINVAL. */
int emu_dcf_set_backoff(struct emu_medium *m, int st, uint32_t slots);
/* Current contention window of st (cw_min after a success, doubled per failure). */
uint32_t emu_dcf_cw(const struct emu_medium *m, int st);

extern const struct emu_mac_ops emu_mac_dcf;

#endif
