/* ownwin_private.h -- what the model of a client's own windows (ownwin.c) and its
 * answers (ownwin_answer.c) share: the lookups, and where each followed request names its
 * window. Not for other rooms: they go through ownwin.h. */
#ifndef TINCAN_PROXY_OWNWIN_PRIVATE_H
#define TINCAN_PROXY_OWNWIN_PRIVATE_H

#include "proxy/ownwin.h"

extern const uint8_t ownwin_window_at[128];

static inline const struct ownwin_screen *screen_of_root(const struct ownwin_state *o, uint32_t root)
{
    for (uint32_t i = 0; i < o->n_screens; i++)
        if (o->screens[i].root == root)
            return &o->screens[i];
    return NULL;
}

static inline struct ownwin_win *win_get(const struct ownwin_state *o, uint32_t id)
{
    const struct idmap_entry *e = id ? idmap_get(&o->by_id, id) : NULL;
    return e ? &o->wins[e->a] : NULL;
}

static inline bool redirectable(const struct ownwin_state *o, const struct ownwin_win *w)
{
    return w->parent == w->root && !w->override_redirect;
}

static inline struct ownwin_prop *prop_get(const struct ownwin_win *w, uint32_t atom)
{
    for (uint32_t i = 0; i < w->n_props; i++)
        if (w->props[i].atom == atom)
            return &w->props[i];
    return NULL;
}

#endif
