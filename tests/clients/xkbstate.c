/* xkbstate.c -- test client for the keyboard's state answered at the app side (statewatch.c,
 * PROTOCOL.md 3.2): asks XKEYBOARD's queries as GTK 3 (firefox) and emacs's Xlib ask them at
 * start, and ListExtensions, and prints each reply as hex (its sequence number left out), so
 * that runs directly and through tincan print the same (but for ListExtensions: tincan
 * hides the extensions that cannot cross a link).
 *   xkbstate ask        UseExtension 1.0, SelectEvents as Xlib does, then the queries
 *   xkbstate flags      ... then PerClientFlags as GTK 3 sends it (detectable auto-repeat),
 *                       twice, then one that turns it off
 *   xkbstate randr      RANDR's start as GTK 3's: QueryVersion 1.6, SelectInput of the root,
 *                       GetScreenResourcesCurrent, GetMonitors (active ones) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

static xcb_connection_t *c;
static uint8_t xkb;

/* Sends a request of these bytes (LSB; length in words at 2) and prints its reply. */
static void ask(const char *what, const uint8_t *req, size_t len)
{
    struct iovec iov[3] = { { 0 }, { 0 }, { (void *)req, len } }; /* xcb uses the two before */
    xcb_protocol_request_t pr = { .count = 1, .ext = NULL, .opcode = req[0], .isvoid = 0 };
    unsigned seq = xcb_send_request(c, XCB_REQUEST_RAW, iov + 2, &pr);
    xcb_generic_error_t *e = NULL;
    uint8_t *r = xcb_wait_for_reply(c, seq, &e);
    if (!r) {
        printf("%s: error %u\n", what, e ? e->error_code : 0);
        free(e);
        return;
    }
    uint32_t words = r[4] | r[5] << 8 | (uint32_t)r[6] << 16 | (uint32_t)r[7] << 24;
    printf("%s: %02x%02x", what, r[0], r[1]);
    for (size_t i = 4; i < 32 + 4 * (size_t)words; i++)
        printf("%02x", r[i]);
    printf("\n");
    free(r);
}

/* A request: the extension's opcode, minor, then 32-bit words (LSB). */
static size_t build(uint8_t *b, uint8_t major, uint8_t minor, const uint32_t *w, unsigned n)
{
    b[0] = major;
    b[1] = minor;
    b[2] = (uint8_t)(1 + n);
    b[3] = 0;
    for (unsigned i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            b[4 + 4 * i + k] = (uint8_t)(w[i] >> 8 * k);
    return 4 + 4 * n;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) {
        fprintf(stderr, "xkbstate: cannot open display\n");
        return 1;
    }
    uint8_t b[64];
    if (!strcmp(argv[1], "randr")) {
        xcb_query_extension_reply_t *rr = xcb_query_extension_reply(c, xcb_query_extension(c, 5, "RANDR"), NULL);
        if (!rr || !rr->present)
            return 1;
        uint8_t m = rr->major_opcode;
        uint32_t root = xcb_setup_roots_iterator(xcb_get_setup(c)).data->root;
        free(rr);
        ask("QueryVersion", b, build(b, m, 0, (uint32_t[2]){ 1, 6 }, 2));
        build(b, m, 4, (uint32_t[2]){ root, 0x0b }, 2); /* SelectInput: screen, CRTC, output property */
        xcb_protocol_request_t pr = { .count = 1, .opcode = m, .isvoid = 1 };
        struct iovec iov[3] = { { 0 }, { 0 }, { b, 12 } };
        xcb_send_request(c, XCB_REQUEST_RAW, iov + 2, &pr);
        ask("GetScreenResourcesCurrent", b, build(b, m, 25, &root, 1));
        ask("GetMonitors", b, build(b, m, 42, (uint32_t[2]){ root, 1 }, 2));
        xcb_disconnect(c);
        return 0;
    }
    xcb_query_extension_reply_t *qe =
        xcb_query_extension_reply(c, xcb_query_extension(c, 9, "XKEYBOARD"), NULL);
    if (!qe || !qe->present)
        return 1;
    xkb = qe->major_opcode;
    free(qe);
    ask("UseExtension", b, build(b, xkb, 0, (uint32_t[1]){ 1 }, 1));
    /* GTK 3's SelectEvents of the core keyboard: NewKeyboard, Map and State, all details */
    uint32_t sel[3] = { 0x00070100, 0x00070000, 0x00ff00ff };
    build(b, xkb, 1, sel, 3);
    xcb_protocol_request_t pr = { .count = 1, .opcode = xkb, .isvoid = 1 };
    struct iovec iov[3] = { { 0 }, { 0 }, { b, 16 } };
    xcb_send_request(c, XCB_REQUEST_RAW, iov + 2, &pr);
    if (!strcmp(argv[1], "flags")) {
        uint32_t on[6] = { 0x100, 1, 1, 0, 0, 0 }, off[6] = { 0x100, 1, 0, 0, 0, 0 };
        ask("PerClientFlags on", b, build(b, xkb, 21, on, 6));
        ask("PerClientFlags on again", b, build(b, xkb, 21, on, 6));
        ask("PerClientFlags off", b, build(b, xkb, 21, off, 6));
        ask("PerClientFlags query", b, build(b, xkb, 21, (uint32_t[6]){ 0x100 }, 6));
    }
    ask("GetState", b, build(b, xkb, 4, (uint32_t[1]){ 0x100 }, 1));
    ask("GetControls", b, build(b, xkb, 6, (uint32_t[1]){ 0x100 }, 1));
    ask("GetMap 07", b, build(b, xkb, 8, (uint32_t[6]){ 0x00070100 }, 6));
    ask("GetMap 47", b, build(b, xkb, 8, (uint32_t[6]){ 0x00470100 }, 6));
    ask("GetMap ff", b, build(b, xkb, 8, (uint32_t[6]){ 0x00ff0100 }, 6));
    /* of the core keyboard's own id, as clients ask once a reply named it */
    uint8_t *r = NULL;
    {
        build(b, xkb, 4, (uint32_t[1]){ 0x100 }, 1);
        struct iovec v[3] = { { 0 }, { 0 }, { b, 8 } };
        xcb_protocol_request_t q = { .count = 1, .opcode = xkb, .isvoid = 0 };
        r = xcb_wait_for_reply(c, xcb_send_request(c, XCB_REQUEST_RAW, v + 2, &q), NULL);
    }
    uint32_t id = r ? r[1] : 0x100;
    free(r);
    ask("GetState id", b, build(b, xkb, 4, (uint32_t[1]){ id }, 1));
    ask("GetControls id", b, build(b, xkb, 6, (uint32_t[1]){ id }, 1));
    ask("GetNames id 1800", b, build(b, xkb, 17, (uint32_t[2]){ id, 0x1800 }, 2));
    ask("GetNames id 3fff", b, build(b, xkb, 17, (uint32_t[2]){ id, 0x3fff }, 2));
    ask("GetMap id 47", b, build(b, xkb, 8, (uint32_t[6]){ id | 0x47u << 16 }, 6));
    ask("ListExtensions", b, build(b, 99, 0, NULL, 0));
    xcb_disconnect(c);
    return 0;
}
