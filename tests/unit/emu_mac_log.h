/* emu_mac_log.h -- for the MAC models' unit tests (test_emu_dcf, test_emu_maca): the
 * medium's delivered, acknowledged and dropped hooks recording what happened and when. */
#ifndef TINCAN_EMU_MAC_LOG_H
#define TINCAN_EMU_MAC_LOG_H

#include <stdint.h>

#include "medium.h"

struct log {
    int n_deliv, n_acked, n_drop, last_drop_why;
    int64_t deliv_ns[64], acked_ns[64];
    int deliv_src[64];
};

static void on_deliv(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct log *l = arg;
    if (l->n_deliv < 64) { l->deliv_src[l->n_deliv] = f->src; l->deliv_ns[l->n_deliv] = now; }
    l->n_deliv++;
}
static void on_acked(void *arg, const struct emu_mframe *f, int64_t now)
{
    struct log *l = arg;
    (void)f;
    if (l->n_acked < 64) l->acked_ns[l->n_acked] = now;
    l->n_acked++;
}
static void on_drop(void *arg, const struct emu_mframe *f, int why, int64_t now)
{
    struct log *l = arg;
    (void)f; (void)now;
    l->n_drop++;
    l->last_drop_why = why;
}

#endif
