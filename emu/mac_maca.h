/* mac_maca.h -- the MACA channel access of the PARC in-building radio (256 kbit/s, hand-held
 * pads) as a MAC model of the shared medium (medium.h): RTS/CTS/DATA/ACK, defer rules, backoff
 * with copying, a MACA process per destination at the base, JAM, unsolicited short DATA. */
#ifndef EMU_MAC_MACA_H
#define EMU_MAC_MACA_H

#include <stdint.h>

#include "medium.h"

enum emu_maca_kind { EMU_MACA_RTS = 1, EMU_MACA_CTS, EMU_MACA_DATA, EMU_MACA_ACK, EMU_MACA_JAM };

struct emu_maca_cfg {
    uint64_t rate_bps;                /* stations without a rate of their own: 256 kbit/s */
    uint32_t ctrl_bytes;              /* RTS, CTS, ACK, JAM, and the DATA header: 24 (0.75 ms) */
    int64_t turnaround_ns;            /* receive-to-transmit and processing before each packet: 1.25 ms */
    int64_t slot_ns;                  /* contention slot: a control-packet time; 0: that at rate_bps */
    uint32_t bo_min, bo_max;          /* backoff bounds, in slots: 4, 64; a wait is 1..bo slots */
    uint32_t bo_factor_pct;           /* backoff x this/100 on a missed CTS or ACK: 200 */
    uint32_t bo_step;                 /* backoff - this on success: 1 */
    uint32_t short_bytes;             /* packets of at most this many bytes go as unsolicited DATA: 64 */
    uint32_t retry_limit;             /* attempts before a packet is dropped: 8 */
    uint8_t hears[EMU_MEDIUM_STATIONS][EMU_MEDIUM_STATIONS];   /* 0: i cannot hear j (see maca_hear_all) */
    int hidden;                       /* use hears[][]; 0: everyone hears everyone */
};

void emu_maca_default(struct emu_maca_cfg *c);

/* Airtime of a control packet and of a DATA packet carrying ip_bytes, at rate_bps. */
int64_t emu_maca_ctrl_ns(const struct emu_maca_cfg *c, uint64_t rate_bps);
int64_t emu_maca_data_ns(const struct emu_maca_cfg *c, uint32_t ip_bytes, uint64_t rate_bps);

/* Counters of the model, beyond the medium's per-station ones. */
struct emu_maca_counters {
    uint64_t sent[EMU_MACA_JAM + 1];  /* packets transmitted, by kind */
    uint64_t jams;                    /* the base's own processes would have collided */
    uint64_t re_acks;                 /* an RTS or DATA already delivered answered with an ACK */
    uint64_t missed_cts, missed_ack;
};
const struct emu_maca_counters *emu_maca_counters(const struct emu_medium *m);

/* Tests: station st's backoff, and the time until which it defers. */
int emu_maca_set_backoff(struct emu_medium *m, int st, uint32_t bo);
uint32_t emu_maca_backoff(const struct emu_medium *m, int st);
int64_t emu_maca_defer_until(const struct emu_medium *m, int st);
/* Tests: the next packet of this kind is lost at its addressee. */
void emu_maca_lose_next(struct emu_medium *m, enum emu_maca_kind kind);

extern const struct emu_mac_ops emu_mac_maca;

#endif
