/* loop.h -- the event loop: file-descriptor watches and a hook run before each sleep
 * (where output is flushed, so writes coalesce). One backend: loop_epoll.c.
 * A watch must stay allocated until the loop has returned from the turn that unwatched it. */
#ifndef TINCAN_LOOP_H
#define TINCAN_LOOP_H

#include <stdbool.h>
#include <stdint.h>

enum { LOOP_READ = 1, LOOP_WRITE = 2, LOOP_HUP = 4 };

struct loop;
struct watch;
typedef void (*watch_fn)(struct watch *w, unsigned events);

struct watch {
    int fd;          /* -1 once unwatched */
    unsigned want;   /* LOOP_READ | LOOP_WRITE */
    watch_fn fn;
    void *data;
};

int loop_new(struct loop **out);                       /* 0 or -errno */
void loop_free(struct loop *l);
int loop_watch(struct loop *l, struct watch *w, int fd, unsigned want, watch_fn fn, void *data);
int loop_want(struct loop *l, struct watch *w, unsigned want); /* no syscall when unchanged */
void loop_unwatch(struct loop *l, struct watch *w);    /* does not close fd */
/* Hooks run before each sleep, in the order added (at most LOOP_MAX_HOOKS). 0 or -ENOSPC. */
#define LOOP_MAX_HOOKS 8
int loop_add_before_sleep(struct loop *l, void (*fn)(void *), void *data);
void loop_remove_before_sleep(struct loop *l, void (*fn)(void *), void *data);
/* From a before-sleep hook: wake no later than deadline_ns (clock_ns time), for work
 * that waits on time rather than on a file descriptor. Asked anew every turn. */
void loop_wake_by(struct loop *l, uint64_t deadline_ns);
/* Runs the before-sleep hook, waits up to timeout_ms (-1: forever) and dispatches. */
int loop_run_once(struct loop *l, int timeout_ms);
uint64_t loop_idle_ns(const struct loop *l);           /* total time spent waiting */

#endif
