/* test_xstream.c -- per-connection protocol state: sequence numbers, extension opcodes
 * learnt from QueryExtension, hidden extensions, and bad requests. */
#include <errno.h>
#include <string.h>

#include "test.h"
#include "x11/xstream.h"
#include "xproto_tables.h"

static const bool msb = false;

/* Feeds one request through framing and xstream, as the session does. */
static int send_req(struct xstream *xs, const uint8_t *p, size_t n, struct msg_class *cls)
{
    struct xw_request rq;
    long size = xstream_next_request(xs, p, n, &rq);
    if (size < 0)
        return (int)size;
    return xstream_on_request(xs, p, &rq, cls);
}

static int query_extension(struct xstream *xs, const char *name, struct msg_class *cls)
{
    uint8_t p[64] = { XW_OP_QUERY_EXTENSION };
    size_t len = strlen(name), total = 8 + len + xw_pad4(len);
    st16(p + 2, (uint16_t)(total / 4), msb);
    st16(p + 4, (uint16_t)len, msb);
    memcpy(p + 8, name, len);
    return send_req(xs, p, total, cls);
}

/* The server's answer to a QueryExtension, passed through xstream; returns what comes out. */
static void reply_query(struct xstream *xs, uint16_t seq, uint8_t major, uint8_t ev, uint8_t err, uint8_t out[32])
{
    uint8_t r[32] = { 1 };
    st16(r + 2, seq, msb);
    r[8] = 1;
    r[9] = major;
    r[10] = ev;
    r[11] = err;
    struct xw_server_msg m;
    struct buf b = { 0 };
    struct msg_class cls;
    CHECK_EQ(xstream_next_server_msg(xs, r, 32, &m), 32);
    CHECK_EQ(xstream_on_server_msg(xs, r, &m, &b, &cls), 0);
    CHECK_EQ(b.len, 32);
    memcpy(out, buf_head(&b), 32);
    buf_free(&b);
}

static void running(struct xstream *xs, bool hide)
{
    xstream_init(xs, hide);
    xstream_on_setup_request(xs, msb);
    uint8_t setup[8] = { 1, 0, 11, 0, 0, 0, 0, 0 };
    struct xw_server_msg m;
    struct buf b = { 0 };
    struct msg_class cls;
    xstream_next_server_msg(xs, setup, 8, &m);
    xstream_on_server_msg(xs, setup, &m, &b, &cls);
    buf_free(&b);
}

static uint32_t ext_pad_mask(const char *xname, uint8_t minor)
{
    for (size_t i = 0; i < xp_n_extensions; i++)
        if (!strcmp(xp_extensions[i].xname, xname))
            return minor < xp_extensions[i].n_requests ? xp_extensions[i].requests[minor].pad_mask : 0;
    return 0xffffffffu;
}

int main(void)
{
    TEST("That the padding of requests comes from xcb-proto: unused byte 1, pads, alignment to 4") {
        CHECK_EQ(xp_core_requests[16].pad_mask, 0xc0);       /* InternAtom: name_len then 2 pad */
        CHECK_EQ(xp_core_requests[43].pad_mask, 0x2);        /* GetInputFocus: byte 1 */
        CHECK_EQ(xp_core_requests[62].pad_mask, 0x2);        /* CopyArea: byte 1, then fields to the end */
        CHECK_EQ(xp_core_requests[49].pad_mask, 0x2);        /* ListFonts: byte 1 (the pattern follows) */
        CHECK_EQ(xp_core_requests[8].pad_mask, 0x2);         /* MapWindow */
        CHECK_EQ(xp_core_requests[18].pad_mask, 0xe0000);    /* ChangeProperty: 3 pad after format */
        CHECK_EQ(ext_pad_mask("SYNC", 0), 0xc0);             /* Initialize: 2 bytes, aligned to 4 */
        CHECK_EQ(ext_pad_mask("XKEYBOARD", 8), 0x0c000000); /* GetMap: 2 pad at its end */
        CHECK_EQ(ext_pad_mask("RENDER", 0), 0);              /* QueryVersion: two CARD32 */
        CHECK_EQ(ext_pad_mask("RENDER", 23), 0xe0);         /* CompositeGlyphs8: 3 pad after its op */
    }
    TEST("That extension opcodes are learnt from QueryExtension replies") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, false);
        CHECK_EQ(query_extension(&xs, "RENDER", &cls), 0);
        CHECK(cls.name && !strcmp(cls.name, "QueryExtension"));
        uint8_t out[32];
        reply_query(&xs, 1, 139, 0, 142, out);
        uint8_t req[4] = { 139, 4, 1, 0 }; /* RENDER CreatePicture, minimal */
        CHECK_EQ(send_req(&xs, req, 4, &cls), 0);
        CHECK(cls.ext && !strcmp(cls.ext, "RENDER"));
        CHECK(cls.name && !strcmp(cls.name, "CreatePicture"));
        xstream_free(&xs);
    }
    TEST("That a hidden extension is reported absent, and others are untouched") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, true);
        query_extension(&xs, "MIT-SHM", &cls);
        uint8_t out[32];
        reply_query(&xs, 1, 130, 65, 128, out);
        CHECK(out[8] == 0 && out[9] == 0 && out[10] == 0 && out[11] == 0);
        query_extension(&xs, "BIG-REQUESTS", &cls);
        reply_query(&xs, 2, 133, 0, 0, out);
        CHECK(out[8] == 1 && out[9] == 133);
        xstream_free(&xs);
    }
    TEST("That BIG-REQUESTS lengths are accepted only after BigReqEnable") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, false);
        query_extension(&xs, "BIG-REQUESTS", &cls);
        uint8_t out[32];
        reply_query(&xs, 1, 133, 0, 0, out);
        uint8_t big[12] = { 72, 2, 0, 0 };
        st32(big + 4, 3, msb);
        CHECK_EQ(send_req(&xs, big, 12, &cls), -EBADMSG);
        uint8_t enable[4] = { 133, 0, 1, 0 };
        CHECK_EQ(send_req(&xs, enable, 4, &cls), 0);
        CHECK_EQ(send_req(&xs, big, 12, &cls), 0);
        CHECK_EQ(xs.seq_sent, 3);
        xstream_free(&xs);
    }
    TEST("That ListExtensions leaves out hidden extensions and stays well-formed") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, true);
        uint8_t req[4] = { XW_OP_LIST_EXTENSIONS, 0, 1, 0 };
        send_req(&xs, req, 4, &cls);
        const char *names[] = { "MIT-SHM", "RENDER", "DRI3", "XTEST" };
        uint8_t r[128] = { 1, 4 };
        st16(r + 2, 1, msb);
        size_t at = 32;
        for (int i = 0; i < 4; i++) {
            r[at++] = (uint8_t)strlen(names[i]);
            memcpy(r + at, names[i], strlen(names[i]));
            at += strlen(names[i]);
        }
        size_t body = at - 32 + xw_pad4(at - 32);
        st32(r + 4, (uint32_t)(body / 4), msb);
        struct xw_server_msg m;
        struct buf b = { 0 };
        CHECK_EQ(xstream_next_server_msg(&xs, r, 32 + body, &m), (long)(32 + body));
        CHECK_EQ(xstream_on_server_msg(&xs, r, &m, &b, &cls), 0);
        const uint8_t *o = buf_head(&b);
        CHECK_EQ(o[1], 2);
        CHECK_EQ(b.len, 32 + 4 * ld32(o + 4, msb));
        CHECK_EQ(b.len % 4, 0);
        CHECK(o[32] == 6 && !memcmp(o + 33, "RENDER", 6) && o[39] == 5 && !memcmp(o + 40, "XTEST", 5));
        buf_free(&b);
        xstream_free(&xs);
    }
    TEST("That a ListExtensions reply lying about its names is refused") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, true);
        uint8_t req[4] = { XW_OP_LIST_EXTENSIONS, 0, 1, 0 };
        send_req(&xs, req, 4, &cls);
        uint8_t r[36] = { 1, 3 };
        st16(r + 2, 1, msb);
        st32(r + 4, 1, msb);
        r[32] = 200; /* a name longer than the reply */
        struct xw_server_msg m;
        struct buf b = { 0 };
        xstream_next_server_msg(&xs, r, 36, &m);
        CHECK_EQ(xstream_on_server_msg(&xs, r, &m, &b, &cls), -EBADMSG);
        buf_free(&b);
        xstream_free(&xs);
    }
    TEST("That sequence numbers widen across the 16-bit wrap") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, false);
        uint8_t nop[4] = { XW_OP_NO_OPERATION, 0, 1, 0 };
        for (int i = 0; i < 70000; i++)
            send_req(&xs, nop, 4, &cls);
        uint8_t ev[32] = { 12 }; /* Expose */
        st16(ev + 2, (uint16_t)69999, msb);
        struct xw_server_msg m;
        struct buf b = { 0 };
        xstream_next_server_msg(&xs, ev, 32, &m);
        xstream_on_server_msg(&xs, ev, &m, &b, &cls);
        CHECK_EQ(xs.seq_done, 69999);
        CHECK(cls.name && !strcmp(cls.name, "Expose"));
        buf_free(&b);
        xstream_free(&xs);
    }
    TEST("That the replies owed are summed by their size at most, and settled by replies and errors") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, false);
        uint8_t get_image[20] = { XP_OP_GET_IMAGE, 2, 5, 0 };
        st16(get_image + 12, 1024, msb); /* width */
        st16(get_image + 14, 768, msb);  /* height */
        uint8_t focus[4] = { XP_OP_GET_INPUT_FOCUS, 0, 1, 0 };
        CHECK_EQ(send_req(&xs, get_image, 20, &cls), 0);
        CHECK_EQ(send_req(&xs, focus, 4, &cls), 0);
        CHECK_EQ(send_req(&xs, get_image, 20, &cls), 0);
        const uint64_t image = 32 + 4ull * 1024 * 768;
        CHECK_EQ(xs.owed_bytes, 2 * image + 32);
        uint8_t err[32] = { 0, 9 }; /* BadDrawable for request 1 */
        st16(err + 2, 1, msb);
        struct xw_server_msg m;
        struct buf b = { 0 };
        CHECK_EQ(xstream_next_server_msg(&xs, err, 32, &m), 32);
        CHECK_EQ(xstream_on_server_msg(&xs, err, &m, &b, &cls), 0);
        CHECK_EQ(xs.owed_bytes, image + 32);
        uint8_t r[32] = { 1 }; /* GetInputFocus' reply; request 3 still owed */
        st16(r + 2, 2, msb);
        CHECK_EQ(xstream_next_server_msg(&xs, r, 32, &m), 32);
        CHECK_EQ(xstream_on_server_msg(&xs, r, &m, &b, &cls), 0);
        CHECK_EQ(xs.owed_bytes, image);
        buf_free(&b);
        xstream_free(&xs);
    }
    TEST("That a client asking for more than XS_MAX_OWED_BYTES of replies is refused (-ENOBUFS)") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, false);
        uint8_t get_image[20] = { XP_OP_GET_IMAGE, 2, 5, 0 };
        st16(get_image + 12, 4096, msb);
        st16(get_image + 14, 4096, msb); /* 64 MiB each */
        int rc = 0, n = 0;
        while (n < 100 && (rc = send_req(&xs, get_image, 20, &cls)) == 0)
            n++;
        CHECK_EQ(rc, -ENOBUFS);
        CHECK_EQ(n, (int)(XS_MAX_OWED_BYTES / (32 + 4ull * 4096 * 4096)));
        CHECK(xs.owed_bytes <= XS_MAX_OWED_BYTES);
        uint8_t huge[20] = { XP_OP_GET_IMAGE, 2, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
        xstream_free(&xs);
        running(&xs, false);
        CHECK_EQ(send_req(&xs, huge, 20, &cls), 0); /* one alone always goes, however large */
        CHECK_EQ(xs.owed_bytes, XS_MAX_OWED_BYTES);
        xstream_free(&xs);
    }
    TEST("That a QueryExtension whose name overruns the request is malformed") {
        struct xstream xs;
        struct msg_class cls;
        running(&xs, false);
        uint8_t p[8] = { XW_OP_QUERY_EXTENSION, 0, 2, 0, 100, 0 };
        CHECK_EQ(send_req(&xs, p, 8, &cls), -EBADMSG);
        xstream_free(&xs);
    }
    TEST("That nothing may follow a refused setup") {
        struct xstream xs;
        xstream_init(&xs, false);
        xstream_on_setup_request(&xs, msb);
        uint8_t failed[12] = { 0, 2, 11, 0, 0, 0, 1, 0, 'n', 'o' };
        struct xw_server_msg m;
        struct buf b = { 0 };
        struct msg_class cls;
        CHECK_EQ(xstream_next_server_msg(&xs, failed, 12, &m), 12);
        xstream_on_server_msg(&xs, failed, &m, &b, &cls);
        uint8_t more[32] = { 1 };
        CHECK_EQ(xstream_next_server_msg(&xs, more, 32, &m), -EBADMSG);
        buf_free(&b);
        xstream_free(&xs);
    }
    return test_summary();
}
