/* hint.h -- what the app side can read of a new local client on its own machine, to tell
 * the display side before the client asks (FRAME_HINT, docs/PROTOCOL.md 3.6): whether the
 * client's locale makes font sets of libX11's UTF-8 charsets (from its environment), and
 * the fonts its app-defaults file names. Everything is read-only and bounded; a client
 * whose process cannot be read (a TCP client, another user's) gets no hint. */
#ifndef TINCAN_HINT_H
#define TINCAN_HINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "link/frame.h"

#define HINT_MAX_ENVIRON (128u * 1024)     /* bytes read of /proc/PID/environ */
#define HINT_MAX_CMDLINE 4096u             /* ... of /proc/PID/cmdline */
#define HINT_MAX_APP_DEFAULTS (64u * 1024) /* ... of an app-defaults file */
#define HINT_MAX_LINE 1024u                /* a resource line, continuations joined */

/* A hint as read, owning its names. */
struct hint {
    uint8_t flags;                         /* HINT_FONT_SET */
    uint8_t n_fonts;
    uint8_t font_len[HINT_MAX_FONTS];
    char font[HINT_MAX_FONTS][255];
};

/* Which parts to read (the app side's switches). */
struct hint_want {
    bool locale, fonts;
    const char *const *dirs;               /* app-defaults directories, NULL-terminated; NULL: Xt's */
};

/* The value of NAME in an environment block (NAME=value entries, each ended by a NUL but
 * perhaps the last), or NULL. Pure. */
const char *hint_env_value(const uint8_t *env, size_t n, const char *name, size_t *len);
/* Whether the LC_CTYPE locale that setlocale(LC_CTYPE, "") takes from this environment
 * (LC_ALL, LC_CTYPE, LANG: the first one set and not empty) names a UTF-8 codeset. Pure. */
bool hint_env_utf8(const uint8_t *env, size_t n);
bool hint_locale_utf8(const char *locale, size_t len);
/* Adds the values of an app-defaults file's resources whose last component ends in "font"
 * (any case), each once, up to HINT_MAX_FONTS in all. Pure. */
void hint_app_defaults_fonts(const uint8_t *file, size_t n, struct hint *h);

/* Reads the process pid (its environment, its program's app-defaults). 0, or -errno if
 * there is nothing to say. */
int hint_of_pid(pid_t pid, const struct hint_want *want, struct hint *h);
/* The same for the peer of a unix socket, when it runs as this user. */
int hint_of_client(int fd, const struct hint_want *want, struct hint *h);

/* The hint as FRAME_HINT's fields (pointing into h). */
void hint_to_frame(const struct hint *h, struct frame_hint *f);

#endif
