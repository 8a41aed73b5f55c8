/* dict.c -- the cache directory of primed-stream dictionaries: file format, verification,
 * atomic saves and the disk bound; the DICT_OFFER payload. Workload: a handful of files of
 * up to 4 MiB, read once at link start, written once at a clean end. */
#include "link/dict.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

/* File layout (little-endian):
 *   magic "TINCDICT" | version u32 | dir u8 | 3 zero bytes | length u32 | hash[32] | content */
static const uint8_t file_magic[8] = { 'T', 'I', 'N', 'C', 'D', 'I', 'C', 'T' };
#define FILE_SUFFIX ".tcd"

void dict_hash(uint8_t dir, const uint8_t *p, size_t n, uint8_t out[DICT_HASH_SIZE])
{
    static const char label[] = "tincan dict v1";
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, DICT_HASH_SIZE);
    crypto_generichash_update(&st, (const uint8_t *)label, sizeof label);
    crypto_generichash_update(&st, &dir, 1);
    crypto_generichash_update(&st, p, n);
    crypto_generichash_final(&st, out, DICT_HASH_SIZE);
}

int dict_parse(const uint8_t *file, size_t n, struct dict_view *v)
{
    struct rd r = rd_make(file, n, false);
    const uint8_t *magic, *hash, *pad;
    uint32_t version, len;
    uint8_t dir;
    if (rd_bytes(&r, &magic, sizeof file_magic) || memcmp(magic, file_magic, sizeof file_magic) ||
        rd_u32(&r, &version) || version != DICT_FILE_VERSION || rd_u8(&r, &dir) || dir >= DICT_KINDS ||
        rd_bytes(&r, &pad, 3) || rd_u32(&r, &len) || len == 0 || len > DICT_MAX_BYTES ||
        rd_bytes(&r, &hash, DICT_HASH_SIZE) || rd_left(&r) != len)
        return -EBADMSG;
    if (pad[0] | pad[1] | pad[2])
        return -EBADMSG;
    v->dir = dir;
    v->content = file + r.pos;
    v->len = len;
    dict_hash(dir, v->content, len, v->hash);
    return sodium_memcmp(v->hash, hash, DICT_HASH_SIZE) == 0 ? 0 : -EBADMSG;
}

/* Payload: count:u8, then count x (dir:u8, hash[32]). */
int dict_offer_parse(const uint8_t *p, size_t n, struct dict_offer *o)
{
    struct rd r = rd_make(p, n, false);
    uint8_t count;
    if (rd_u8(&r, &count) || count > DICT_OFFER_MAX || rd_left(&r) != (size_t)count * (1 + DICT_HASH_SIZE))
        return -EBADMSG;
    o->n = count;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *h;
        if (rd_u8(&r, &o->e[i].dir) || o->e[i].dir >= DICT_KINDS || rd_bytes(&r, &h, DICT_HASH_SIZE))
            return -EBADMSG;
        memcpy(o->e[i].hash, h, DICT_HASH_SIZE);
    }
    return 0;
}

int dict_offer_encode(struct buf *out, const struct dict_offer *o)
{
    if (o->n > DICT_OFFER_MAX)
        return -EINVAL;
    uint8_t count = (uint8_t)o->n;
    int rc = buf_append(out, &count, 1);
    for (size_t i = 0; i < o->n && !rc; i++) {
        rc = buf_append(out, &o->e[i].dir, 1);
        if (!rc)
            rc = buf_append(out, o->e[i].hash, DICT_HASH_SIZE);
    }
    return rc;
}

int dict_offer_choose(const struct dict_offer *app, const struct dict_offer *display, uint8_t dir)
{
    for (size_t i = 0; i < app->n; i++) {
        if (app->e[i].dir != dir)
            continue;
        for (size_t j = 0; j < display->n; j++)
            if (display->e[j].dir == dir && !memcmp(app->e[i].hash, display->e[j].hash, DICT_HASH_SIZE))
                return (int)i;
    }
    return -1;
}

int dict_default_dir(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(out, cap, "%s/tincan", xdg);
    else if (home && home[0] == '/')
        n = snprintf(out, cap, "%s/.cache/tincan", home);
    else
        return -ENOENT;
    return n > 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

/* mkdir -p, each new level 0700. The last level must be ours and closed to others. */
int dict_make_dir(const char *path)
{
    char tmp[512];
    if (strlen(path) >= sizeof tmp)
        return -ENAMETOOLONG;
    strcpy(tmp, path);
    for (char *s = tmp + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
                return -errno;
            *s = '/';
        }
    if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (lstat(tmp, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
        return -EPERM;
    return 0;
}

int dict_read_file(const char *path, size_t max, uint8_t **p, size_t *n)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode))
        rc = -EINVAL;
    else if ((uint64_t)st.st_size > max)
        rc = -EFBIG;
    uint8_t *b = NULL;
    size_t got = 0;
    if (!rc && !(b = malloc(st.st_size ? (size_t)st.st_size : 1)))
        rc = -ENOMEM;
    while (!rc && got < (size_t)st.st_size) {
        ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = r < 0 ? -errno : -EIO;
        else
            got += (size_t)r;
    }
    close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    *p = b;
    *n = got;
    return 0;
}

struct listed {
    char name[256];
    struct timespec mtime;
    off_t size;
};

static int by_newest(const void *a, const void *b)
{
    const struct listed *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
    return strcmp(x->name, y->name);
}

static bool is_cache_name(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return name[0] != '.' && n > s && !strcmp(name + n - s, suffix);
}

/* The cache files of dir (names ending in suffix), newest first. *out is malloc'd. 0 or -errno. */
static int list_files(const char *dir, const char *suffix, struct listed **out, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    struct listed *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_cache_name(e->d_name, suffix) || strlen(e->d_name) >= sizeof v->name)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            struct listed *nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            if (!nv) {
                free(v);
                closedir(d);
                return -ENOMEM;
            }
            v = nv;
        }
        strcpy(v[n].name, e->d_name);
        v[n].mtime = st.st_mtim;
        v[n].size = st.st_size;
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, by_newest);
    *out = v;
    *count = n;
    return 0;
}

int dict_store_open(struct dict_store *st, const char *dir)
{
    memset(st, 0, sizeof *st);
    st->max_files = DICT_STORE_MAX_FILES;
    st->max_bytes = DICT_STORE_MAX_BYTES;
    if (strlen(dir) >= sizeof st->dir)
        return -ENAMETOOLONG;
    strcpy(st->dir, dir);
    if (sodium_init() < 0)
        return -EIO;
    int rc = dict_make_dir(dir);
    if (rc < 0)
        return rc;
    struct listed *v;
    size_t n, per_dir[DICT_KINDS] = { 0 };
    if ((rc = list_files(dir, FILE_SUFFIX, &v, &n)) < 0)
        return rc;
    for (size_t i = 0; i < n && st->offer.n < DICT_OFFER_MAX; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
        uint8_t *p;
        size_t len;
        struct dict_view dv;
        rc = dict_read_file(path, DICT_HEADER_SIZE + DICT_MAX_BYTES, &p, &len);
        if (!rc) {
            rc = dict_parse(p, len, &dv);
            free(p);
        }
        if (rc < 0) {
            log_warn("compression cache: ignoring %s (%s)", path,
                     rc == -EBADMSG ? "corrupt, truncated or not a tincan cache file" : strerror(-rc));
            continue;
        }
        if (per_dir[dv.dir] >= DICT_OFFER_PER_DIR)
            continue;
        per_dir[dv.dir]++;
        struct dict_offer_entry *e = &st->offer.e[st->offer.n];
        e->dir = dv.dir;
        memcpy(e->hash, dv.hash, DICT_HASH_SIZE);
        strcpy(st->paths[st->offer.n], path);
        st->offer.n++;
    }
    free(v);
    return 0;
}

int dict_store_load(const struct dict_store *st, size_t i, uint8_t **p, size_t *n)
{
    if (i >= st->offer.n)
        return -EINVAL;
    uint8_t *file;
    size_t len;
    struct dict_view dv;
    int rc = dict_read_file(st->paths[i], DICT_HEADER_SIZE + DICT_MAX_BYTES, &file, &len);
    if (rc < 0)
        return rc;
    /* Verified again: the file was offered a moment ago but is only now trusted. */
    if (dict_parse(file, len, &dv) < 0 || dv.dir != st->offer.e[i].dir ||
        memcmp(dv.hash, st->offer.e[i].hash, DICT_HASH_SIZE)) {
        free(file);
        return -EBADMSG;
    }
    memmove(file, dv.content, dv.len);
    *p = file;
    *n = dv.len;
    return 0;
}

int dict_store_save(const struct dict_store *st, uint8_t dir, const uint8_t *p, size_t n)
{
    if (n == 0 || n > DICT_MAX_BYTES || dir >= DICT_KINDS)
        return -EINVAL;
    uint8_t hdr[DICT_HEADER_SIZE] = { 0 }, hash[DICT_HASH_SIZE];
    dict_hash(dir, p, n, hash);
    memcpy(hdr, file_magic, sizeof file_magic);
    st32(hdr + 8, DICT_FILE_VERSION, false);
    hdr[12] = dir;
    st32(hdr + 16, (uint32_t)n, false);
    memcpy(hdr + 20, hash, DICT_HASH_SIZE);
    _Static_assert(20 + DICT_HASH_SIZE == DICT_HEADER_SIZE, "header layout");

    char hex[2 * DICT_HASH_SIZE + 1], name[160];
    sodium_bin2hex(hex, sizeof hex, hash, DICT_HASH_SIZE);
    static const char *const kind[DICT_KINDS] = { "up", "down", "pix", "til" };
    snprintf(name, sizeof name, "%s-%s" FILE_SUFFIX, kind[dir], hex);
    const uint8_t *parts[2] = { hdr, p };
    size_t lens[2] = { sizeof hdr, n };
    int rc = dict_write_file(st->dir, name, parts, lens, 2);
    return rc ? rc : dict_store_bound(st);
}

int dict_write_file(const char *dir, const char *name, const uint8_t *const parts[], const size_t lens[],
                    size_t n_parts)
{
    char path[600], tmp[640];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return -ENAMETOOLONG;
    snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%08x", dir, (long)getpid(), randombytes_random());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = 0;
    for (size_t k = 0; k < n_parts && !rc; k++)
        for (size_t off = 0; off < lens[k] && !rc;) {
            ssize_t w = write(fd, parts[k] + off, lens[k] - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                rc = w < 0 ? -errno : -EIO;
            else
                off += (size_t)w;
        }
    if (close(fd) < 0 && !rc)
        rc = -errno;
    /* Readers see the old file or the whole new one, never a part (rename is atomic). */
    if (!rc && rename(tmp, path) < 0)
        rc = -errno;
    if (rc)
        unlink(tmp);
    return rc;
}

int dict_store_bound(const struct dict_store *st)
{
    return dict_bound_files(st->dir, FILE_SUFFIX, st->max_files, st->max_bytes);
}

int dict_bound_files(const char *dir, const char *suffix, size_t max_files, uint64_t max_bytes)
{
    struct listed *v;
    size_t n;
    int rc = list_files(dir, suffix, &v, &n);
    if (rc < 0)
        return rc;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += (uint64_t)v[i].size;
        if (i >= max_files || total > max_bytes) {
            char path[600];
            snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
            if (unlink(path) < 0 && errno != ENOENT)
                rc = -errno;
        }
    }
    free(v);
    return rc;
}
