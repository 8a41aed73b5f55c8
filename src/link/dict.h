/* dict.h -- the persistent compression cache: per link direction, the last bytes of a
 * session's zstd stream, saved at both ends so the next session's stream starts primed
 * with them (docs/PROTOCOL.md 2.2). Files are read from disk and may be corrupt or foreign:
 * every one is verified against its content hash before it is offered or used. */
#ifndef TINCAN_DICT_H
#define TINCAN_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define DICT_MAX_BYTES (16u << 20)     /* a dictionary is at most the zstd window */
#define DICT_HASH_SIZE 32              /* BLAKE2b-256 */
#define DICT_FILE_VERSION 1
#define DICT_HEADER_SIZE 52
#define DICT_OFFER_MAX 8               /* hashes a side may announce */
#define DICT_OFFER_PER_DIR 2           /* newest files offered per kind */
#define DICT_STORE_MAX_FILES 16
#define DICT_STORE_MAX_BYTES (128ull << 20)

/* What a cache file holds: the last bytes of a link direction's stream (which side
 * compresses it), or the pixel bodies of the up direction (xcodec/pixcache.c). */
enum dict_dir { DICT_UP = 0 /* app -> display */, DICT_DOWN = 1 /* display -> app */, DICT_PIX = 2, DICT_TILES = 3 };
#define DICT_KINDS 4

/* A parsed cache file; content points into the parsed bytes. */
struct dict_view {
    uint8_t dir;
    uint8_t hash[DICT_HASH_SIZE];
    const uint8_t *content;
    size_t len;
};

/* The hashes one side announces at link start (frame DICT_OFFER). */
struct dict_offer {
    size_t n;
    struct dict_offer_entry {
        uint8_t dir;
        uint8_t hash[DICT_HASH_SIZE];
    } e[DICT_OFFER_MAX];
};

/* A cache directory and what this side offers from it; paths of the offered files are kept
 * so the chosen ones can be loaded (and verified again) once the peer has answered. */
struct dict_store {
    char dir[512];
    size_t max_files;
    uint64_t max_bytes;
    struct dict_offer offer;
    char paths[DICT_OFFER_MAX][600];
};

/* The key of a dictionary: BLAKE2b-256 over a label, the direction and the content. */
void dict_hash(uint8_t dir, const uint8_t *p, size_t n, uint8_t out[DICT_HASH_SIZE]);

/* Pure parsers, for bytes from disk or from the peer. 0 or -EBADMSG (never trusts lengths). */
int dict_parse(const uint8_t *file, size_t n, struct dict_view *v);
int dict_offer_parse(const uint8_t *p, size_t n, struct dict_offer *o);
int dict_offer_encode(struct buf *out, const struct dict_offer *o);
/* The dictionary both sides use for direction dir: the first entry of the app side's
 * offer that the display side offers too. Both sides compute the same answer. Returns its
 * index in app, or -1 for none. */
int dict_offer_choose(const struct dict_offer *app, const struct dict_offer *display, uint8_t dir);

/* Opens (creating, mode 0700) the cache directory and lists the newest valid files into
 * st->offer. Invalid files are skipped with one log line each. 0 or -errno. */
int dict_store_open(struct dict_store *st, const char *dir);
/* Loads the offered entry i, verifying it again. *p is malloc'd (caller frees). 0 or -errno. */
int dict_store_load(const struct dict_store *st, size_t i, uint8_t **p, size_t *n);
/* Saves content for direction dir atomically (temp file, fsync-free rename), mode 0600,
 * then deletes the oldest files beyond the bounds. 0 or -errno. */
int dict_store_save(const struct dict_store *st, uint8_t dir, const uint8_t *p, size_t n);
/* Deletes the oldest cache files until at most max_files and max_bytes remain. */
int dict_store_bound(const struct dict_store *st);
/* The default directory: $XDG_CACHE_HOME/tincan or ~/.cache/tincan. 0 or -ENOENT. */
int dict_default_dir(char *out, size_t cap);

/* Files of the cache directory, for every cache kept there (this one, proxy/learnt.c). */
/* mkdir -p, each new level 0700; the last level must be ours and closed to others. 0 or -errno. */
int dict_make_dir(const char *path);
/* Reads a whole regular file of at most max bytes (no symlinks); *p is malloc'd. 0 or -errno. */
int dict_read_file(const char *path, size_t max, uint8_t **p, size_t *n);
/* Writes dir/name from the parts atomically (temp file, fsync-free rename), mode 0600. 0 or -errno. */
int dict_write_file(const char *dir, const char *name, const uint8_t *const parts[], const size_t lens[],
                    size_t n_parts);
/* Deletes the oldest files whose names end in suffix until at most max_files and max_bytes
 * remain. 0 or -errno. */
int dict_bound_files(const char *dir, const char *suffix, size_t max_files, uint64_t max_bytes);

#endif
