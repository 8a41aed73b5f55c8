/* chain_link.c -- offline measure of what a session's link sends app -> display for a
 * series of programs started one after another (as bench/compare's start-up workloads):
 * each capture's requests, coded by src/xcodec/ on a channel of its own, in DATA frames,
 * one link write per recorded client write, through the link's codec as the app side
 * runs it (small coder, zstd primed with the built-in dictionary). Prints each capture's
 * link bytes. Environment: XC_WRITES=1 each write; XC_LIST=1 each message (XC_HEX=1 with its
 * code); XC_PERMSG=1 each message a write of its own (what each costs); XC_CUT=N writes cut
 * to N bytes; XC_SHARE=1 one encoder for all clients; XC_LEVEL the zstd level (9).
 * Requests' padding is zeroed as the app side does (xstream follows each connection). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "common/buf.h"
#include "link/codec.h"
#include "link/dict_builtin.h"
#include "link/frame.h"
#include "x11/xstream.h"
#include "x11/xwire.h"
#include "xcodec/xcodec.h"

#define CHAIN_STORE (16u * XC_STORE_UNIT)

/* xs: the connection as the app side follows it, for the padding it zeroes (from the
 * extensions the replies tell). */
struct client { bool known, started, msb; struct xenc *enc; struct buf in, from_server, scratch; struct xstream xs; };

/* The server's bytes of a client: only followed, for the extensions' opcodes. */
static int follow_server(struct client *c, const uint8_t *data, size_t len)
{
    if (buf_append(&c->from_server, data, len) < 0)
        abort(); /* out of memory: a tool, not the proxy */
    for (;;) {
        struct xw_server_msg m;
        struct msg_class cls;
        long sz = xstream_next_server_msg(&c->xs, buf_head(&c->from_server), c->from_server.len, &m);
        if (sz == -EAGAIN || sz == 0) return 0;
        if (sz < 0) return -1;
        buf_clear(&c->scratch);
        if (xstream_on_server_msg(&c->xs, buf_head(&c->from_server), &m, &c->scratch, &cls) < 0) return -1;
        buf_consume(&c->from_server, (size_t)sz);
    }
}

/* One link write of the coded bytes (emptied) in a DATA frame: its link bytes, or -1. */
static long link_write(struct codec *link, uint32_t channel, struct buf *coded, struct buf *frames, struct buf *wire)
{
    if (!coded->len) return 0;
    buf_clear(frames);
    buf_clear(wire);
    if (frame_encode(frames, FRAME_DATA, channel, buf_head(coded), coded->len) < 0) return -1;
    size_t cut = getenv("XC_CUT") ? (size_t)atoi(getenv("XC_CUT")) : frames->len;
    for (size_t at = 0; at < frames->len; at += cut) { /* XC_CUT=N: writes of at most N bytes */
        size_t n = frames->len - at < cut ? frames->len - at : cut;
        if (codec_compress(link, buf_head(frames) + at, n, wire) < 0) return -1;
    }
    if (getenv("XC_WRITES"))
        printf("  write %zu -> %zu\n", frames->len, wire->len);
    buf_clear(coded);
    return (long)wire->len;
}

/* One capture: returns its link bytes, or -1. */
static long run_capture(struct codec *link, const char *path, uint32_t channel)
{
    FILE *f = fopen(path, "rb");
    char magic[8];
    if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, "TCXCAP1\n", 8)) { fprintf(stderr, "%s: not a capture\n", path); return -1; }
    static struct client cl[256];
    memset(cl, 0, sizeof cl);
    struct buf coded = { 0 }, frames = { 0 }, wire = { 0 };
    long total = 0;
    uint8_t rh[17];
    while (fread(rh, 1, 17, f) == 17) {
        uint32_t cid = rh[0] | rh[1] << 8 | rh[2] << 16 | (uint32_t)rh[3] << 24;
        uint32_t len = rh[13] | rh[14] << 8 | rh[15] << 16 | (uint32_t)rh[16] << 24;
        uint8_t *data = malloc(len ? len : 1);
        if (!data || fread(data, 1, len, f) != len) { fprintf(stderr, "truncated\n"); return -1; }
        if (cid >= 256 || len == 0) { free(data); continue; }
        struct client *c = &cl[cid];
        if (rh[4] != 0) { /* the server's */
            int rc = c->known ? follow_server(c, data, len) : 0;
            free(data);
            if (rc < 0) return -1;
            continue;
        }
        if (!c->known) {
            static struct xenc *shared; /* XC_SHARE=1: one encoder for every client (an experiment) */
            c->known = true;
            c->msb = data[0] == 'B';
            xstream_init(&c->xs, true);
            xstream_on_setup_request(&c->xs, c->msb);
            if (getenv("XC_SHARE") && shared) {
                c->enc = shared;
            } else {
                if (xenc_new(&c->enc, XC_REQUESTS, c->msb) < 0) return -1;
                xenc_set_store(c->enc, CHAIN_STORE);
                if (getenv("XC_SHARE")) shared = c->enc;
            }
        }
        if (buf_append(&c->in, data, len) < 0)
            abort(); /* out of memory: a tool, not the proxy */
        free(data);
        buf_clear(&coded);
        for (;;) {
            const uint8_t *p = buf_head(&c->in);
            size_t n = c->in.len;
            if (!n) break;
            long sz;
            if (!c->started) {
                struct xw_setup_request sr;
                sz = xw_parse_setup_request(p, n, &sr);
                if (sz == -EAGAIN) break;
                if (sz < 0) return -1;
                c->started = true;
                buf_consume(&c->in, (size_t)sz);
                continue;
            }
            struct xw_request rq;
            sz = xw_next_request(p, n, c->msb, true, 16u << 20, &rq);
            if (sz == -EAGAIN) break;
            if (sz < 0) return -1;
            struct msg_class cls;
            if (xstream_on_request(&c->xs, p, &rq, &cls) < 0) return -1;
            uint8_t *req = c->in.data + c->in.off; /* padding zeroed, as the app side sends it */
            for (uint32_t k = 0, mask = cls.pad_mask; rq.header_size == 4 && mask && k < 32 && k < sz; k++, mask >>= 1)
                if (mask & 1)
                    req[k] = 0;
            size_t before = coded.len;
            if (xenc_message(c->enc, p, (size_t)sz, &coded) < 0) return -1;
            if (getenv("XC_LIST"))
{ printf("  msg %u/%u %ld -> %zu ", p[0], p[1], sz, coded.len - before); for (size_t k = before; k < coded.len && getenv("XC_HEX"); k++) printf("%02x", buf_head(&coded)[k]); printf("\n"); }
            buf_consume(&c->in, (size_t)sz);
            if (getenv("XC_PERMSG")) { /* each message a write of its own: its cost */
                long w = link_write(link, channel + cid, &coded, &frames, &wire);
                if (w < 0) return -1;
                total += w;
                printf("    = %ld\n", w);
            }
        }
        if (!coded.len) continue;
        long w = link_write(link, channel + cid, &coded, &frames, &wire);
        if (w < 0) return -1;
        total += w;
    }
    fclose(f);
    for (int i = 0; i < 256; i++) {
        if (!getenv("XC_SHARE")) xenc_free(cl[i].enc);
        if (cl[i].known) xstream_free(&cl[i].xs);
        buf_free(&cl[i].in); buf_free(&cl[i].from_server); buf_free(&cl[i].scratch);
    }
    buf_free(&coded); buf_free(&frames); buf_free(&wire);
    return total;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: chain_link CAPTURE...\n"); return 2; }
    int level = getenv("XC_LEVEL") ? atoi(getenv("XC_LEVEL")) : 9;
    struct codec *link;
    if (codec_new_speed(&link, level, CODEC_SPEED_MODEM) < 0 || codec_use_small(link) < 0 ||
        codec_set_builtin(link, CODEC_TX, dict_builtin_up, dict_builtin_up_len) < 0)
        return 1;
    long all = 0;
    for (int a = 1; a < argc; a++) {
        printf("%s\n", argv[a]);
        long n = run_capture(link, argv[a], (uint32_t)(a * 16));
        if (n < 0) return 1;
        printf("%s: %ld link bytes\n", argv[a], n);
        all += n;
    }
    printf("all: %ld\n", all);
    codec_free(link);
    return 0;
}
