/* loop_epoll.c -- the epoll backend of loop.h; the only file that includes <sys/epoll.h>.
 * Workload: a few dozen fds (the link, one per X client), many wake-ups per second. */
#include "loop/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/clock.h"

struct loop {
    int epfd;
    struct {
        void (*fn)(void *);
        void *data;
    } hooks[LOOP_MAX_HOOKS];
    int n_hooks;
    uint64_t idle_ns;
    uint64_t wake_by_ns;   /* 0: none asked this turn */
};

int loop_new(struct loop **out)
{
    struct loop *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        int e = errno;
        free(l);
        return -e;
    }
    *out = l;
    return 0;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    close(l->epfd);
    free(l);
}

static uint32_t to_epoll(unsigned want)
{
    return (want & LOOP_READ ? EPOLLIN : 0) | (want & LOOP_WRITE ? EPOLLOUT : 0);
}

int loop_watch(struct loop *l, struct watch *w, int fd, unsigned want, watch_fn fn, void *data)
{
    struct epoll_event ev = { .events = to_epoll(want), .data.ptr = w };
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -errno;
    w->fd = fd;
    w->want = want;
    w->fn = fn;
    w->data = data;
    return 0;
}

int loop_want(struct loop *l, struct watch *w, unsigned want)
{
    if (w->fd < 0 || w->want == want)
        return 0;
    struct epoll_event ev = { .events = to_epoll(want), .data.ptr = w };
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
        return -errno;
    w->want = want;
    return 0;
}

void loop_unwatch(struct loop *l, struct watch *w)
{
    if (w->fd < 0)
        return;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->fd = -1;
}

int loop_add_before_sleep(struct loop *l, void (*fn)(void *), void *data)
{
    if (l->n_hooks == LOOP_MAX_HOOKS)
        return -ENOSPC;
    l->hooks[l->n_hooks].fn = fn;
    l->hooks[l->n_hooks].data = data;
    l->n_hooks++;
    return 0;
}

void loop_remove_before_sleep(struct loop *l, void (*fn)(void *), void *data)
{
    for (int i = 0; i < l->n_hooks; i++)
        if (l->hooks[i].fn == fn && l->hooks[i].data == data) {
            l->hooks[i] = l->hooks[--l->n_hooks];
            return;
        }
}

void loop_wake_by(struct loop *l, uint64_t deadline_ns)
{
    if (!l->wake_by_ns || deadline_ns < l->wake_by_ns)
        l->wake_by_ns = deadline_ns;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
    l->wake_by_ns = 0;
    for (int i = 0; i < l->n_hooks; i++)
        l->hooks[i].fn(l->hooks[i].data);
    struct epoll_event evs[64];
    uint64_t t0 = clock_ns();
    if (l->wake_by_ns) {
        uint64_t ms = l->wake_by_ns > t0 ? (l->wake_by_ns - t0 + 999999) / 1000000 : 0;
        if (timeout_ms < 0 || ms < (uint64_t)timeout_ms)
            timeout_ms = (int)ms;
    }
    int n = epoll_wait(l->epfd, evs, 64, timeout_ms);
    l->idle_ns += clock_ns() - t0;
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        struct watch *w = evs[i].data.ptr;
        if (w->fd < 0) /* unwatched by an earlier callback of this batch */
            continue;
        unsigned got = (evs[i].events & EPOLLIN ? LOOP_READ : 0) | (evs[i].events & EPOLLOUT ? LOOP_WRITE : 0) |
                       (evs[i].events & (EPOLLHUP | EPOLLERR) ? LOOP_HUP : 0);
        w->fn(w, got);
    }
    return 0;
}

uint64_t loop_idle_ns(const struct loop *l) { return l->idle_ns; }
