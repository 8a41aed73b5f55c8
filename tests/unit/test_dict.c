/* test_dict.c -- the compression cache on disk: round trip, files that must be ignored,
 * the disk bound, atomic writes; the DICT_OFFER payload and the choice both sides make. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "link/dict.h"
#include "test.h"

static char root[] = "/tmp/tincan-test-dict.XXXXXX";

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(((i + seed * 7919u) * 2654435761u) >> 13);
}

/* A fresh cache directory name under root (not created). */
static const char *fresh_dir(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s/tincan", root, name);
    return path;
}

static size_t count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    if (d)
        closedir(d);
    return n;
}

/* Path of the one file in dir whose name starts with prefix. */
static void only_file(const char *dir, const char *prefix, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    out[0] = 0;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            snprintf(out, cap, "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        if (write(fd, p, n) != (ssize_t)n)
            perror("write");
        close(fd);
    }
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(*n + 1);
    if (fread(p, 1, *n, f) != *n)
        *n = 0;
    fclose(f);
    return p;
}

int main(void)
{
    log_setup(LOG_ERROR, "test"); /* the "ignoring" lines are expected here */
    if (!mkdtemp(root))
        return 1;
    size_t big = 300000;
    uint8_t *content = malloc(big);
    fill(content, big, 7);

    TEST("That a saved dictionary is offered and loads back byte for byte") {
        struct dict_store st;
        const char *dir = fresh_dir("roundtrip");
        CHECK_EQ(dict_store_open(&st, dir), 0);
        CHECK_EQ(st.offer.n, 0);
        CHECK_EQ(dict_store_save(&st, DICT_UP, content, big), 0);
        CHECK_EQ(dict_store_save(&st, DICT_DOWN, content, 1000), 0);
        struct dict_store st2;
        CHECK_EQ(dict_store_open(&st2, dir), 0);
        CHECK_EQ(st2.offer.n, 2);
        uint8_t want[DICT_HASH_SIZE];
        dict_hash(DICT_UP, content, big, want);
        int found = 0;
        for (size_t i = 0; i < st2.offer.n; i++) {
            uint8_t *p;
            size_t n;
            CHECK_EQ(dict_store_load(&st2, i, &p, &n), 0);
            if (st2.offer.e[i].dir == DICT_UP) {
                CHECK(n == big && !memcmp(p, content, big));
                CHECK(!memcmp(st2.offer.e[i].hash, want, DICT_HASH_SIZE));
                found++;
            } else {
                CHECK(n == 1000 && !memcmp(p, content, 1000));
                found++;
            }
            free(p);
        }
        CHECK_EQ(found, 2);
    }
    TEST("That the same bytes in the other direction are another dictionary") {
        uint8_t a[DICT_HASH_SIZE], b[DICT_HASH_SIZE];
        dict_hash(DICT_UP, content, 100, a);
        dict_hash(DICT_DOWN, content, 100, b);
        CHECK(memcmp(a, b, DICT_HASH_SIZE) != 0);
    }
    TEST("That the directory is 0700 and the files 0600, with no temporary file left") {
        struct dict_store st;
        const char *dir = fresh_dir("modes");
        CHECK_EQ(dict_store_open(&st, dir), 0);
        CHECK_EQ(dict_store_save(&st, DICT_UP, content, 5000), 0);
        struct stat s;
        CHECK(stat(dir, &s) == 0 && (s.st_mode & 0777) == 0700);
        char path[512];
        only_file(dir, "up-", path, sizeof path);
        CHECK(stat(path, &s) == 0 && (s.st_mode & 0777) == 0600);
        CHECK_EQ(count_entries(dir, ".tmp"), 0);
    }
    TEST("That saving the same content again replaces the file whole (a new inode, by rename)") {
        struct dict_store st;
        const char *dir = fresh_dir("atomic");
        CHECK_EQ(dict_store_open(&st, dir), 0);
        CHECK_EQ(dict_store_save(&st, DICT_UP, content, 5000), 0);
        char path[512];
        only_file(dir, "up-", path, sizeof path);
        struct stat s1, s2;
        int fd = open(path, O_RDONLY); /* a reader holding the old file keeps all of it */
        stat(path, &s1);
        CHECK_EQ(dict_store_save(&st, DICT_UP, content, 5000), 0);
        stat(path, &s2);
        CHECK(s1.st_ino != s2.st_ino);
        struct stat sf;
        CHECK(fstat(fd, &sf) == 0 && sf.st_size == 5000 + DICT_HEADER_SIZE);
        close(fd);
        CHECK_EQ(count_entries(dir, "up-"), 1);
    }
    TEST("That corrupt, truncated, foreign and wrong-version files are ignored") {
        struct dict_store st;
        const char *dir = fresh_dir("bad");
        CHECK_EQ(dict_store_open(&st, dir), 0);
        CHECK_EQ(dict_store_save(&st, DICT_UP, content, 4000), 0);
        char path[512], bad[600];
        only_file(dir, "up-", path, sizeof path);
        size_t n;
        uint8_t *good = slurp(path, &n);
        CHECK_EQ(n, 4000 + DICT_HEADER_SIZE);
        uint8_t *b = malloc(n);
        memcpy(b, good, n);
        b[n - 10] ^= 1; /* one content bit */
        snprintf(bad, sizeof bad, "%s/up-corrupt.tcd", dir);
        write_bytes(bad, b, n);
        snprintf(bad, sizeof bad, "%s/up-truncated.tcd", dir);
        write_bytes(bad, good, n - 1);
        snprintf(bad, sizeof bad, "%s/up-header-only.tcd", dir);
        write_bytes(bad, good, 20);
        snprintf(bad, sizeof bad, "%s/foreign.tcd", dir);
        write_bytes(bad, "this is not a tincan cache file, but it is long enough to have a header....", 75);
        memcpy(b, good, n);
        b[8] = 2; /* version 2 */
        snprintf(bad, sizeof bad, "%s/up-version.tcd", dir);
        write_bytes(bad, b, n);
        memcpy(b, good, n);
        b[12] = 7; /* no such direction */
        snprintf(bad, sizeof bad, "%s/up-dir.tcd", dir);
        write_bytes(bad, b, n);
        snprintf(bad, sizeof bad, "%s/empty.tcd", dir);
        write_bytes(bad, "", 0);
        snprintf(bad, sizeof bad, "%s/link.tcd", dir);
        CHECK_EQ(symlink(path, bad), 0); /* a symlink is never followed */
        struct dict_store st2;
        CHECK_EQ(dict_store_open(&st2, dir), 0);
        CHECK_EQ(st2.offer.n, 1);
        CHECK(st2.offer.n == 1 && !strcmp(st2.paths[0], path));
        struct dict_view v;
        CHECK_EQ(dict_parse(good, n, &v), 0);
        CHECK_EQ(dict_parse(good, n - 1, &v), -EBADMSG);
        CHECK_EQ(dict_parse(good, 0, &v), -EBADMSG);
        free(good);
        free(b);
    }
    TEST("That a file changed after it was offered is not loaded") {
        struct dict_store st;
        const char *dir = fresh_dir("changed");
        CHECK_EQ(dict_store_open(&st, dir), 0);
        CHECK_EQ(dict_store_save(&st, DICT_DOWN, content, 4000), 0);
        struct dict_store st2;
        CHECK_EQ(dict_store_open(&st2, dir), 0);
        CHECK_EQ(st2.offer.n, 1);
        size_t n;
        uint8_t *f = slurp(st2.paths[0], &n), *p = NULL;
        f[DICT_HEADER_SIZE] ^= 0x80;
        write_bytes(st2.paths[0], f, n);
        CHECK_EQ(dict_store_load(&st2, 0, &p, &n), -EBADMSG);
        CHECK(p == NULL);
        free(f);
    }
    TEST("That the cache keeps at most its file and byte bounds, dropping the oldest") {
        struct dict_store st;
        const char *dir = fresh_dir("bound");
        CHECK_EQ(dict_store_open(&st, dir), 0);
        st.max_files = 3;
        for (unsigned i = 0; i < 6; i++) {
            fill(content, 2000, i);
            CHECK_EQ(dict_store_save(&st, DICT_UP, content, 2000), 0);
            usleep(2000); /* distinct modification times */
        }
        CHECK_EQ(count_entries(dir, "up-"), 3);
        struct dict_store st2;
        CHECK_EQ(dict_store_open(&st2, dir), 0);
        uint8_t newest[DICT_HASH_SIZE];
        dict_hash(DICT_UP, content, 2000, newest);
        CHECK(st2.offer.n == (DICT_OFFER_PER_DIR < 3 ? DICT_OFFER_PER_DIR : 3) && !memcmp(st2.offer.e[0].hash, newest, DICT_HASH_SIZE));
        st.max_files = 100;
        st.max_bytes = 2 * (2000 + DICT_HEADER_SIZE);
        CHECK_EQ(dict_store_bound(&st), 0);
        CHECK_EQ(count_entries(dir, "up-"), 2);
        fill(content, big, 7);
    }
    TEST("That no more than a few files per direction are offered, newest first") {
        struct dict_store st;
        const char *dir = fresh_dir("offer");
        CHECK_EQ(dict_store_open(&st, dir), 0);
        for (unsigned i = 0; i < DICT_OFFER_PER_DIR + 2; i++) {
            fill(content, 1000, 100 + i);
            CHECK_EQ(dict_store_save(&st, DICT_DOWN, content, 1000), 0);
            usleep(2000);
        }
        struct dict_store st2;
        CHECK_EQ(dict_store_open(&st2, dir), 0);
        CHECK_EQ(st2.offer.n, DICT_OFFER_PER_DIR);
        fill(content, big, 7);
    }
    TEST("That a cache directory open to others is refused") {
        const char *dir = fresh_dir("open");
        struct dict_store st;
        CHECK_EQ(dict_store_open(&st, dir), 0);
        chmod(dir, 0777);
        CHECK_EQ(dict_store_open(&st, dir), -EPERM);
    }
    TEST("That DICT_OFFER round-trips and bad payloads are refused") {
        struct dict_offer o = { .n = 2 }, back;
        o.e[0].dir = DICT_UP;
        memset(o.e[0].hash, 0xab, DICT_HASH_SIZE);
        o.e[1].dir = DICT_DOWN;
        memset(o.e[1].hash, 0xcd, DICT_HASH_SIZE);
        struct buf b = { 0 };
        CHECK_EQ(dict_offer_encode(&b, &o), 0);
        CHECK_EQ(b.len, 1 + 2 * 33);
        CHECK_EQ(dict_offer_parse(buf_head(&b), b.len, &back), 0);
        CHECK(back.n == 2 && !memcmp(&back.e, &o.e, sizeof o.e[0] * 2));
        CHECK_EQ(dict_offer_parse(buf_head(&b), b.len - 1, &back), -EBADMSG);
        uint8_t empty = 0, many = DICT_OFFER_MAX + 1;
        CHECK_EQ(dict_offer_parse(&empty, 1, &back), 0);
        CHECK_EQ(back.n, 0);
        CHECK_EQ(dict_offer_parse(&many, 1, &back), -EBADMSG);
        CHECK_EQ(dict_offer_parse(NULL, 0, &back), -EBADMSG);
        b.data[1] = DICT_KINDS; /* no such kind */
        CHECK_EQ(dict_offer_parse(buf_head(&b), b.len, &back), -EBADMSG);
        buf_free(&b);
    }
    TEST("That both sides choose the same dictionary: the app side's first that both hold") {
        struct dict_offer app = { .n = 3 }, disp = { .n = 2 };
        for (int i = 0; i < 3; i++) {
            app.e[i].dir = DICT_UP;
            memset(app.e[i].hash, i + 1, DICT_HASH_SIZE);
        }
        disp.e[0] = app.e[2];
        disp.e[1] = app.e[1];
        CHECK_EQ(dict_offer_choose(&app, &disp, DICT_UP), 1);
        CHECK_EQ(dict_offer_choose(&app, &disp, DICT_DOWN), -1);
        disp.e[1].dir = DICT_DOWN; /* same hash, other direction: no match */
        CHECK_EQ(dict_offer_choose(&app, &disp, DICT_UP), 2);
    }
    free(content);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx %s; rm -rf %s", root, root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", root);
    return test_summary();
}
