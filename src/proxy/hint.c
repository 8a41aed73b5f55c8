/* hint.c -- what the app side reads of a new local client (hint.h). */
#include "proxy/hint.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where Xt finds a class's app-defaults on Debian and most others (XFILESEARCHPATH's default). */
static const char *const xt_dirs[] = { "/etc/X11/app-defaults", "/usr/share/X11/app-defaults", NULL };

const char *hint_env_value(const uint8_t *env, size_t n, const char *name, size_t *len)
{
    size_t name_len = strlen(name);
    for (size_t at = 0; at < n;) {
        const uint8_t *end = memchr(env + at, 0, n - at);
        size_t entry = end ? (size_t)(end - env) - at : n - at;
        if (entry > name_len && env[at + name_len] == '=' && !memcmp(env + at, name, name_len)) {
            *len = entry - name_len - 1;
            return (const char *)env + at + name_len + 1;
        }
        at += entry + 1;
    }
    return NULL;
}

bool hint_locale_utf8(const char *locale, size_t len)
{
    /* language[_territory][.codeset][@modifier]: the codeset, its letters and digits only */
    const char *dot = memchr(locale, '.', len);
    if (!dot)
        return false;
    char codeset[8];
    size_t k = 0;
    for (const char *c = dot + 1; c < locale + len && *c != '@'; c++) {
        if (!isalnum((unsigned char)*c))
            continue;
        if (k == sizeof codeset - 1)
            return false;
        codeset[k++] = (char)tolower((unsigned char)*c);
    }
    codeset[k] = 0;
    return !strcmp(codeset, "utf8");
}

bool hint_env_utf8(const uint8_t *env, size_t n)
{
    static const char *const order[] = { "LC_ALL", "LC_CTYPE", "LANG" };
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        size_t len;
        const char *v = hint_env_value(env, n, order[i], &len);
        if (v && len)
            return hint_locale_utf8(v, len);
    }
    return false;
}

static bool ends_with_font(const char *name, size_t len)
{
    size_t last = len;
    while (last && name[last - 1] != '.' && name[last - 1] != '*')
        last--;
    return len - last >= 4 && !strncasecmp(name + len - 4, "font", 4);
}

/* An XLFD whose charset is one of two-byte characters: its QueryFont reply runs to hundreds
 * of KB (fontset.h's bound leaves it out anyway; not asking spares the server's time). */
static bool two_byte_charset(const char *v, size_t len)
{
    static const char *const registries[] = { "iso10646", "jisx0208", "jisx0212", "jisx0213", "gb2312", "gbk",
                                              "gb18030", "ksc5601", "ksx1001", "big5", "cns11643" };
    size_t dashes = 0, at = 0;
    for (size_t i = 0; i < len; i++)
        if (v[i] == '-' && ++dashes == 13)
            at = i + 1;
    if (dashes != 14)
        return false;
    for (size_t i = 0; i < sizeof registries / sizeof *registries; i++)
        if (!strncasecmp(v + at, registries[i], strlen(registries[i])))
            return true;
    return false;
}

static void add_font(struct hint *h, const char *v, size_t len)
{
    if (!len || len > sizeof h->font[0] || h->n_fonts == HINT_MAX_FONTS)
        return;
    for (size_t i = 0; i < len; i++)
        if (v[i] < 0x20 || v[i] > 0x7e || v[i] == '\\')
            return; /* escapes (Xrm's \n, \ooo) are not font names */
    if (len == 13 && !strncasecmp(v, "XtDefaultFont", 13))
        return; /* Xt's own name for its default: resolved by Xt, not the server */
    if (two_byte_charset(v, len))
        return;
    for (uint8_t i = 0; i < h->n_fonts; i++)
        if (h->font_len[i] == len && !memcmp(h->font[i], v, len))
            return;
    memcpy(h->font[h->n_fonts], v, len);
    h->font_len[h->n_fonts++] = (uint8_t)len;
}

/* A menu's resource: menus are mostly made when first shown, after the window maps
 * (xterm's), so their fonts would cross for nothing at start. */
static bool menu_resource(const char *name, size_t len)
{
    for (size_t i = 0; i + 4 <= len; i++)
        if (!strncasecmp(name + i, "menu", 4))
            return true;
    return false;
}

/* One resource line ("name: value"), its continuations joined. */
static void scan_line(const char *line, size_t n, struct hint *h)
{
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == n || line[i] == '!' || line[i] == '#')
        return; /* empty, a comment, or a directive (#include, #ifdef) */
    const char *colon = memchr(line + i, ':', n - i);
    if (!colon)
        return;
    size_t name_end = (size_t)(colon - line);
    while (name_end > i && (line[name_end - 1] == ' ' || line[name_end - 1] == '\t'))
        name_end--;
    if (!ends_with_font(line + i, name_end - i) || menu_resource(line + i, name_end - i))
        return;
    size_t v = (size_t)(colon - line) + 1, v_end = n;
    while (v < n && (line[v] == ' ' || line[v] == '\t'))
        v++;
    while (v_end > v && (line[v_end - 1] == ' ' || line[v_end - 1] == '\t' || line[v_end - 1] == '\r'))
        v_end--;
    add_font(h, line + v, v_end - v);
}

void hint_app_defaults_fonts(const uint8_t *file, size_t n, struct hint *h)
{
    char line[HINT_MAX_LINE];
    size_t len = 0;
    bool too_long = false;
    for (size_t at = 0; at < n && h->n_fonts < HINT_MAX_FONTS; at++) {
        if (file[at] == '\\' && at + 1 < n && file[at + 1] == '\n') {
            at++; /* a continuation: the line goes on */
        } else if (file[at] != '\n') {
            if (len < sizeof line)
                line[len++] = (char)file[at];
            else
                too_long = true; /* no font name is that long */
        } else {
            if (!too_long)
                scan_line(line, len, h);
            len = 0;
            too_long = false;
        }
    }
    if (len && !too_long) /* the last line, without its newline */
        scan_line(line, len, h);
}

/* Up to max bytes of a file, into a fresh buffer (freed by the caller). -errno. */
static long read_bounded(int dirfd, const char *path, size_t max, uint8_t **out)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct stat st;
    uint8_t *b = NULL;
    long rc = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
    if (!rc && !(b = malloc(max)))
        rc = -ENOMEM;
    size_t got = 0;
    while (!rc && got < max) {
        ssize_t r = read(fd, b + got, max - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : 0;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    *out = b;
    return (long)got;
}

/* The app-defaults of program base in dir: the file whose name is base in any case (Xt's
 * class is mostly the program's name with its first letter or two capitalised). */
static void scan_dir(const char *dir, const char *base, struct hint *h)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcasecmp(e->d_name, base))
            continue;
        uint8_t *file = NULL;
        long n = read_bounded(dirfd(d), e->d_name, HINT_MAX_APP_DEFAULTS, &file);
        if (n == (long)HINT_MAX_APP_DEFAULTS) { /* cut: not the last line, which may be cut too */
            while (n && file[n - 1] != '\n')
                n--;
        }
        if (n > 0)
            hint_app_defaults_fonts(file, (size_t)n, h);
        free(file);
        break;
    }
    closedir(d);
}

/* The basename of argv[0] in a cmdline block, as a C string in out; false if none fits. */
static bool program_name(const uint8_t *cmdline, size_t n, char *out, size_t cap)
{
    const uint8_t *end = memchr(cmdline, 0, n);
    size_t len = end ? (size_t)(end - cmdline) : n, start = len;
    while (start && cmdline[start - 1] != '/')
        start--;
    if (len - start == 0 || len - start >= cap || cmdline[start] == '.')
        return false;
    memcpy(out, cmdline + start, len - start);
    out[len - start] = 0;
    return true;
}

static void read_fonts(const char *proc, const uint8_t *env, size_t env_len, const struct hint_want *want,
                       struct hint *h)
{
    uint8_t *cmdline = NULL;
    long n = read_bounded(AT_FDCWD, proc, HINT_MAX_CMDLINE, &cmdline);
    char base[256], own[4096];
    if (n > 0 && program_name(cmdline, (size_t)n, base, sizeof base)) {
        for (const char *const *d = want->dirs ? want->dirs : xt_dirs; *d; d++)
            scan_dir(*d, base, h);
        size_t len;
        const char *v = want->dirs ? NULL : hint_env_value(env, env_len, "XAPPLRESDIR", &len);
        if (v && len && len < sizeof own && !memchr(v, 0, len)) { /* the user's own, merged over them */
            memcpy(own, v, len);
            own[len] = 0;
            scan_dir(own, base, h);
        }
    }
    free(cmdline);
}

int hint_of_pid(pid_t pid, const struct hint_want *want, struct hint *h)
{
    *h = (struct hint){ 0 };
    if (pid <= 0 || !(want->locale || want->fonts))
        return -ENOENT;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
    uint8_t *env = NULL;
    long n = read_bounded(AT_FDCWD, path, HINT_MAX_ENVIRON, &env);
    if (n < 0)
        return (int)n;
    if (want->locale && hint_env_utf8(env, (size_t)n))
        h->flags |= HINT_FONT_SET;
    if (want->fonts) {
        snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
        read_fonts(path, env, (size_t)n, want, h);
    }
    free(env);
    return h->flags || h->n_fonts ? 0 : -ENOENT;
}

int hint_of_client(int fd, const struct hint_want *want, struct hint *h)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    *h = (struct hint){ 0 };
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof cr)
        return -ENOENT; /* not a unix socket: a TCP client */
    if (cr.uid != getuid())
        return -EPERM;  /* another user's program: its environment is its own */
    return hint_of_pid(cr.pid, want, h);
}

void hint_to_frame(const struct hint *h, struct frame_hint *f)
{
    *f = (struct frame_hint){ .flags = h->flags, .n_fonts = h->n_fonts };
    for (uint8_t i = 0; i < h->n_fonts; i++) {
        f->font[i] = (const uint8_t *)h->font[i];
        f->font_len[i] = h->font_len[i];
    }
}
