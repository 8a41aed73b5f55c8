/* clock.h -- monotonic time in nanoseconds, the one time base of the emulator.
 * Never wall-clock time (except where a pcap header needs it, see pcap.c). */
#ifndef EMU_CLOCK_H
#define EMU_CLOCK_H

#include <stdint.h>
#include <time.h>

#define EMU_NS_PER_S  1000000000LL
#define EMU_NS_PER_MS 1000000LL
#define EMU_NS_PER_US 1000LL

/* Waking from a sleep takes tens of microseconds on a virtual machine; the loops sleep until
 * this much before a deadline and then treat it as due, so deliveries land on time on average. */
#define EMU_EARLY_NS (50 * EMU_NS_PER_US)

static inline int64_t emu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * EMU_NS_PER_S + ts.tv_nsec;
}

static inline struct timespec emu_ns_to_timespec(int64_t ns)
{
    if (ns < 0) ns = 0;
    struct timespec ts = { .tv_sec = ns / EMU_NS_PER_S, .tv_nsec = ns % EMU_NS_PER_S };
    return ts;
}

#endif
