/* replay_capture.h -- test_replay's recorded sessions: the capture file of
 * bench/xcodec/capture.py, loaded from NAME.SIDE.cap.zst (or .cap). For test_replay.c only:
 * its definitions are static, and it expects REPLAY_DIR and MAX_CONNS. */
#ifndef TINCAN_REPLAY_CAPTURE_H
#define TINCAN_REPLAY_CAPTURE_H

/* --- the capture file (bench/xcodec/capture.py): "TCXCAP1\n", then records of
 * conn:u32le dir:u8 (0 client->server, 1 server->client, 2 close) t_ns:u64le len:u32le bytes --- */

struct record {
    uint32_t conn;
    uint8_t dir;
    uint64_t t_ns;
    const uint8_t *data;
    uint32_t len;
};

struct capture {
    uint8_t *file;
    size_t file_len;
    struct record *rec;
    size_t n;
};

static int read_whole(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    struct stat st;
    fstat(fd, &st);
    uint8_t *p = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    ssize_t n;
    while (got < (size_t)st.st_size && (n = read(fd, p + got, (size_t)st.st_size - got)) > 0)
        got += (size_t)n;
    close(fd);
    *out = p;
    *len = got;
    return 0;
}

/* Loads NAME.SIDE.cap.zst (as committed) or NAME.SIDE.cap (fresh from record.sh). */
static int capture_load(struct capture *c, const char *name, const char *side)
{
    char path[512];
    uint8_t *raw;
    size_t raw_len;
    memset(c, 0, sizeof *c);
    snprintf(path, sizeof path, "%s/%s.%s.cap.zst", REPLAY_DIR, name, side);
    if (read_whole(path, &raw, &raw_len) == 0) {
        unsigned long long size = ZSTD_getFrameContentSize(raw, raw_len);
        if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > (1u << 30)) {
            free(raw);
            return -EINVAL;
        }
        c->file = malloc(size);
        size_t n = ZSTD_decompress(c->file, size, raw, raw_len);
        free(raw);
        if (ZSTD_isError(n))
            return -EINVAL;
        c->file_len = n;
    } else {
        snprintf(path, sizeof path, "%s/%s.%s.cap", REPLAY_DIR, name, side);
        if (read_whole(path, &c->file, &c->file_len) < 0)
            return -ENOENT;
    }
    if (c->file_len < 8 || memcmp(c->file, "TCXCAP1\n", 8) != 0)
        return -EINVAL;
    size_t cap = 1024;
    c->rec = malloc(cap * sizeof *c->rec);
    for (size_t p = 8; p + 17 <= c->file_len;) {
        const uint8_t *h = c->file + p;
        struct record r = { .conn = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24,
                            .dir = h[4] };
        for (int i = 0; i < 8; i++)
            r.t_ns |= (uint64_t)h[5 + i] << (8 * i);
        r.len = (uint32_t)h[13] | (uint32_t)h[14] << 8 | (uint32_t)h[15] << 16 | (uint32_t)h[16] << 24;
        p += 17;
        if (r.len > c->file_len - p || r.conn == 0 || r.conn >= MAX_CONNS || r.dir > 2)
            return -EINVAL;
        r.data = c->file + p;
        p += r.len;
        if (c->n == cap)
            c->rec = realloc(c->rec, (cap *= 2) * sizeof *c->rec);
        c->rec[c->n++] = r;
    }
    return 0;
}

static void capture_free(struct capture *c)
{
    free(c->file);
    free(c->rec);
}

#endif
