/* fuzz_xstream.c -- libFuzzer target for X11 framing and per-connection state: the first
 * byte picks the byte order; the rest is a client's byte stream, then (after a 0xff 0xff
 * separator, if any) the server's, both cut into reads the way sockets deliver them. */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "x11/xstream.h"

static void feed_requests(struct xstream *xs, const uint8_t *p, size_t n)
{
    while (n) {
        struct xw_request rq;
        struct msg_class cls;
        long size = xstream_next_request(xs, p, n, &rq);
        if (size < 0 || xstream_on_request(xs, p, &rq, &cls) < 0)
            return;
        p += size;
        n -= (size_t)size;
    }
}

static void feed_server(struct xstream *xs, const uint8_t *p, size_t n)
{
    struct buf out = { 0 };
    while (n) {
        struct xw_server_msg m;
        struct msg_class cls;
        long size = xstream_next_server_msg(xs, p, n, &m);
        if (size < 0 || xstream_on_server_msg(xs, p, &m, &out, &cls) < 0)
            break;
        p += size;
        n -= (size_t)size;
    }
    buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct xstream xs;
    xstream_init(&xs, data[0] & 2);
    struct xw_setup_request sr;
    xw_parse_setup_request(data + 1, size - 1, &sr);
    xstream_on_setup_request(&xs, data[0] & 1);
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    /* Alternate client and server chunks, separated by 0xff 0xff, so replies meet their requests. */
    for (int turn = 0; n; turn ^= 1) {
        const uint8_t *sep = NULL;
        for (size_t i = 0; i + 1 < n; i++)
            if (p[i] == 0xff && p[i + 1] == 0xff) {
                sep = p + i;
                break;
            }
        size_t len = sep ? (size_t)(sep - p) : n;
        if (turn == 0)
            feed_requests(&xs, p, len);
        else
            feed_server(&xs, p, len);
        p += len;
        n -= len;
        if (sep) {
            p += 2;
            n -= 2;
        }
    }
    xstream_free(&xs);
    return 0;
}
