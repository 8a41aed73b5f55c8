/* test_session.c -- both halves of a session in one process (session_rig.h): the handshake,
 * channels, flow control, local answers, the memory bound, bad peers; each test on a plain
 * link and on a zstd link. The link's outages are test_session_outage.c's. */
#include "session_rig.h"
#include "link/transport.h"
#include "proxy/session_private.h"

static void session_tests(void)
{
    STEST("That a client with the cookie reaches the server, and requests and replies cross") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        pump(&r, 10);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        int c = client_connect(&r);
        client_setup(c, r.cookie);
        pump(&r, 10);
        CHECK_EQ(r.n_upstream, 1);
        server_accept(&r, 0);
        struct buf got = { 0 };
        drain(&r, c, &got);
        CHECK_EQ(got.len, 8);
        buf_clear(&got);
        uint8_t req[4] = { 43, 0, 1, 0 }; /* GetInputFocus */
        write(c, req, 4);
        drain(&r, r.upstream[0], &got);
        CHECK(got.len == 4 && !memcmp(buf_head(&got), req, 4));
        /* Padding is not carried: a FreePixmap with garbage in its unused byte reaches the
         * server with a zero there, the rest as sent. */
        uint8_t free_pixmap[8] = { 54, 0x5a, 2, 0, 1, 0, 0x40, 0 }, want[8] = { 54, 0, 2, 0, 1, 0, 0x40, 0 };
        buf_clear(&got);
        write(c, free_pixmap, 8);
        drain(&r, r.upstream[0], &got);
        CHECK(got.len == 8 && !memcmp(buf_head(&got), want, 8));
        uint8_t reply[32] = { 1, 0, 1, 0 };
        write(r.upstream[0], reply, 32);
        buf_clear(&got);
        drain(&r, c, &got);
        CHECK(got.len == 32 && !memcmp(buf_head(&got), reply, 32));
        CHECK_EQ(session_stats(r.app)->clients_total, 1);
        buf_free(&got);
        close(c);
        rig_stop(&r);
    }
    STEST("That a client without the cookie is refused before the link is used") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_connect(&r);
        uint8_t wrong[16] = { 0 };
        client_setup(c, wrong);
        struct buf got = { 0 };
        drain(&r, c, &got);
        CHECK(got.len >= 8 && buf_head(&got)[0] == 0); /* Failed */
        CHECK_EQ(r.n_upstream, 0);
        CHECK(closed(c));
        CHECK_EQ(session_stats(r.app)->clients_refused, 1);
        buf_free(&got);
        close(c);
        rig_stop(&r);
    }
    STEST("That a client sending garbage is cut off alone while another carries on") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        int good = client_connect(&r), bad = client_connect(&r);
        client_setup(good, r.cookie);
        client_setup(bad, r.cookie);
        pump(&r, 10);
        CHECK_EQ(r.n_upstream, 2);
        server_accept(&r, 0);
        server_accept(&r, 1);
        struct buf got = { 0 };
        drain(&r, good, &got);
        drain(&r, bad, &got);
        uint8_t junk[8] = { 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff }; /* zero length without BIG-REQUESTS */
        write(bad, junk, sizeof junk);
        pump(&r, 20);
        CHECK(closed(bad));
        CHECK_EQ(session_stats(r.app)->clients_dropped, 1);
        uint8_t req[4] = { 43, 0, 1, 0 };
        write(good, req, 4);
        buf_clear(&got);
        int which = -1;
        for (int i = 0; i < 2; i++) {
            struct buf g2 = { 0 };
            drain(&r, r.upstream[i], &g2);
            if (g2.len == 4)
                which = i;
            buf_free(&g2);
        }
        CHECK(which >= 0);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        buf_free(&got);
        close(good);
        close(bad);
        rig_stop(&r);
    }
    STEST("That a large upload arrives intact through flow control") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        /* 40 PutImage-sized requests of 64 KiB: ten times the channel window. */
        size_t req_size = 65536, n_req = 40, sent = 0, off = 0;
        uint8_t *all = malloc(req_size * n_req);
        for (size_t i = 0; i < n_req; i++) {
            uint8_t *p = all + i * req_size;
            for (size_t j = 0; j < req_size; j++)
                p[j] = (uint8_t)(i * 7 + j);
            p[0] = 72;
            p[1] = 2;
            st16(p + 2, (uint16_t)(req_size / 4 - 1), false);
            p[22] = p[23] = 0; /* PutImage's padding: not carried, so zero as it arrives */
            /* the last 4 bytes become a NoOperation, so every request is framed correctly */
            p[req_size - 4] = 127;
            p[req_size - 3] = 0;
            st16(p + req_size - 2, 1, false);
        }
        struct buf up = { 0 };
        while (up.len < req_size * n_req) {
            if (sent < req_size * n_req) {
                ssize_t w = write(c, all + sent, req_size * n_req - sent);
                if (w > 0)
                    sent += (size_t)w;
            }
            pump(&r, 2);
            fake_now += 1000000; /* a ms a turn: ACK timers run on the sessions' clock */
            uint8_t tmp[8192]; /* the server reads slowly */
            ssize_t n = read(r.upstream[0], tmp, sizeof tmp);
            if (n > 0)
                CHECK_EQ(buf_append(&up, tmp, (size_t)n), 0);
            if (++off > 200000)
                break;
        }
        CHECK_EQ(up.len, req_size * n_req);
        CHECK(up.len == req_size * n_req && !memcmp(buf_head(&up), all, up.len));
        free(all);
        buf_free(&up);
        close(c);
        rig_stop(&r);
    }
    STEST("That large requests and replies of two clients at once cross intact through partial link writes") {
        /* 200 KiB requests and 300 KiB replies: each moves whole between a half's buffers
         * (buf_offer), and its DATA goes in writevs that a 16 KiB socket buffer cuts short. */
        rig_link_sndbuf = 16384;
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c[2] = { client_ready(&r, 0), client_ready(&r, 1) };
        enum { N = 6, REQ = 200 * 1024, REPLY = 300 * 1024 };
        uint8_t *all = malloc((size_t)N * (REQ + 20)), *replies = malloc((size_t)N * REPLY);
        size_t per = REQ + 20; /* a PutImage, then a GetImage asking for one reply */
        for (size_t i = 0; i < N; i++) {
            uint8_t *p = all + i * per;
            for (size_t j = 0; j < REQ; j++)
                p[j] = (uint8_t)(i * 13 + j * 7);
            p[0] = 72, p[1] = 2, p[22] = p[23] = 0;
            st16(p + 2, REQ / 4, false);
            memset(p + REQ, 0, 20);
            p[REQ] = 73, p[REQ + 1] = 2;
            st16(p + REQ + 2, 5, false);
            uint8_t *q = replies + i * REPLY;
            for (size_t j = 0; j < REPLY; j++)
                q[j] = (uint8_t)(i * 5 + j * 3);
            q[0] = 1, q[1] = 24;
            st16(q + 2, (uint16_t)(2 * i + 2), false); /* the GetImage's sequence number */
            st32(q + 4, (REPLY - 32) / 4, false);
        }
        struct buf up[2] = { 0 }, down[2] = { 0 };
        size_t sent[2] = { 0 }, answered[2] = { 0 }, total = (size_t)N * per;
        for (int turn = 0; turn < 100000 && (down[0].len < (size_t)N * REPLY || down[1].len < (size_t)N * REPLY); turn++) {
            for (int k = 0; k < 2; k++) {
                ssize_t w = sent[k] < total ? write(c[k], all + sent[k], total - sent[k]) : 0;
                if (w > 0)
                    sent[k] += (size_t)w;
                uint8_t tmp[65536];
                ssize_t n = read(r.upstream[k], tmp, sizeof tmp);
                if (n > 0)
                    CHECK_EQ(buf_append(&up[k], tmp, (size_t)n), 0);
                /* each whole PutImage + GetImage the server has read gets its reply */
                size_t owed = (up[k].len / per) * REPLY;
                ssize_t a = answered[k] < owed ? write(r.upstream[k], replies + answered[k], owed - answered[k]) : 0;
                if (a > 0)
                    answered[k] += (size_t)a;
                while ((n = read(c[k], tmp, sizeof tmp)) > 0)
                    CHECK_EQ(buf_append(&down[k], tmp, (size_t)n), 0);
            }
            pump(&r, 1);
            fake_now += 1000000;
        }
        for (int k = 0; k < 2; k++) {
            CHECK(up[k].len == total && !memcmp(buf_head(&up[k]), all, total));
            CHECK(down[k].len == (size_t)N * REPLY && !memcmp(buf_head(&down[k]), replies, down[k].len));
            buf_free(&up[k]);
            buf_free(&down[k]);
            close(c[k]);
        }
        free(all);
        free(replies);
        rig_stop(&r);
        rig_link_sndbuf = 0;
    }
    STEST("That a client leaving closes its server connection and nothing else") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        uint8_t half[6] = { 72, 2, 100, 0, 1, 2 }; /* the start of a request, then gone */
        write(c, half, sizeof half);
        close(c);
        pump(&r, 20);
        struct buf got = { 0 };
        drain(&r, r.upstream[0], &got);
        CHECK(closed(r.upstream[0]));
        CHECK_EQ(session_channel_count(r.app), 0);
        CHECK_EQ(session_channel_count(r.disp), 0);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        buf_free(&got);
        rig_stop(&r);
    }
    STEST("That a corrupt link frame ends the link with an error") {
        struct rig r;
        int sv[2];
        socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
        struct loop *l;
        loop_new(&l);
        struct session *s;
        struct session_config dc = { .role = ROLE_DISPLAY, .connect_upstream = fake_connect, .connect_ctx = &r };
        r.n_upstream = 0;
        session_new(&s, l, &dc, sv[1], sv[1]);
        char banner[64];
        struct buf bad = { 0 };
        CHECK_EQ(buf_append(&bad, banner, (size_t)snprintf(banner, sizeof banner, "TINCAN %d app 0 none\n", LINK_PROTOCOL_VERSION)), 0);
        uint8_t session_payload[2 * HS_TOKEN_SIZE + 1] = { 7 }; /* a new session's SESSION frame */
        CHECK_EQ(frame_encode(&bad, FRAME_SESSION, 0, session_payload, sizeof session_payload), 0);
        CHECK_EQ(buf_append(&bad, "\x7e\0\0", 3), 0); /* then a frame of no known type */
        write(sv[0], buf_head(&bad), bad.len);
        buf_free(&bad);
        for (int i = 0; i < 10; i++)
            loop_run_once(l, 0);
        CHECK_EQ(session_state(s), SESSION_ENDED);
        CHECK(session_end_reason(s) && strstr(session_end_reason(s), "corrupt"));
        session_free(s);
        loop_free(l);
        close(sv[0]);
    }
    STEST("That a known QueryExtension is answered at the app side, exactly, and only when exact") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        uint8_t qe[16] = { 98, 0, 4, 0, 6, 0, 0, 0, 'R', 'E', 'N', 'D', 'E', 'R', 0, 0 };
        uint8_t answer[32] = { 1, 0, 1, 0, 0, 0, 0, 0, 1, 139, 0, 142 };
        struct buf got = { 0 };
        /* The first client's question crosses the link; tincan learns the answer. */
        int a = client_ready(&r, 0);
        ask_server(&r, a, 0, qe, sizeof qe, answer, &got);
        CHECK(got.len == 32 && !memcmp(buf_head(&got), answer, 32));
        /* The second client gets the same answer before the server has seen the question. */
        int b = client_ready(&r, 1);
        write(b, qe, sizeof qe);
        for (int i = 0; i < 5; i++)
            loop_run_once(r.app_loop, 0);
        uint8_t tmp[64];
        ssize_t n = read(b, tmp, sizeof tmp);
        CHECK(n == 32 && !memcmp(tmp, answer, 32));
        CHECK_EQ(session_stats(r.app)->answered_locally, 1);
        /* The request still reaches the server; its reply is not delivered twice. */
        buf_clear(&got);
        drain(&r, r.upstream[1], &got);
        CHECK(got.len == sizeof qe && !memcmp(buf_head(&got), qe, sizeof qe));
        write(r.upstream[1], answer, 32);
        uint8_t ev[32] = { 12, 0, 1, 0 }; /* an Expose after it */
        write(r.upstream[1], ev, 32);
        buf_clear(&got);
        drain(&r, b, &got);
        CHECK(got.len == 32 && !memcmp(buf_head(&got), ev, 32));
        /* After a request that might fail or cause events, the next question waits for the server. */
        uint8_t map[8] = { 8, 0, 2, 0, 1, 0, 0, 0 };
        write(b, map, sizeof map);
        write(b, qe, sizeof qe);
        buf_clear(&got);
        drain(&r, b, &got);
        CHECK_EQ(got.len, 0);
        CHECK_EQ(session_stats(r.app)->answered_locally, 1);
        buf_free(&got);
        close(a);
        close(b);
        rig_stop(&r);
    }
    STEST("That while a client holds the server grabbed another's requests wait at the app side, until it ungrabs or goes") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        struct buf got = { 0 };
        int a = client_ready(&r, 0), b = client_ready(&r, 1);
        const uint8_t grab[4] = { 36, 0, 1, 0 }, ungrab[4] = { 37, 0, 1, 0 };
        const uint8_t map[8] = { 8, 0, 2, 0, 1, 0, 0x20, 0 };
        CHECK_EQ(write(a, grab, 4), 4);
        drain(&r, r.upstream[0], &got);
        CHECK(got.len == 4 && !memcmp(buf_head(&got), grab, 4));
        CHECK_EQ(write(b, map, 8), 8);
        buf_clear(&got);
        drain(&r, r.upstream[1], &got);
        CHECK_EQ(got.len, 0); /* the server would not take it yet either */
        CHECK_EQ(write(a, ungrab, 4), 4);
        buf_clear(&got);
        drain(&r, r.upstream[1], &got);
        CHECK(got.len == 8 && !memcmp(buf_head(&got), map, 8));
        /* A client that goes while it holds the grab ends it (the server ends it so). */
        CHECK_EQ(write(a, grab, 4), 4);
        drain(&r, r.upstream[0], &got);
        CHECK_EQ(write(b, map, 8), 8);
        buf_clear(&got);
        drain(&r, r.upstream[1], &got);
        CHECK_EQ(got.len, 0);
        close(a);
        buf_clear(&got);
        drain(&r, r.upstream[1], &got);
        CHECK(got.len == 8 && !memcmp(buf_head(&got), map, 8));
        buf_free(&got);
        close(b);
        rig_stop(&r);
    }
    STEST("That answers given here in a row each drop the server's own reply (PREDICTED steps)") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        uint8_t qe[16] = { 98, 0, 4, 0, 6, 0, 0, 0, 'R', 'E', 'N', 'D', 'E', 'R', 0, 0 };
        uint8_t answer[32] = { 1, 0, 1, 0, 0, 0, 0, 0, 1, 139, 0, 142 };
        struct buf got = { 0 };
        int a = client_ready(&r, 0);
        ask_server(&r, a, 0, qe, sizeof qe, answer, &got);
        int b = client_ready(&r, 1);
        for (int i = 0; i < 3; i++) /* requests 1, 2 and 3 of this client, all answered here */
            write(b, qe, sizeof qe);
        pump(&r, 5);
        buf_clear(&got);
        drain(&r, b, &got);
        CHECK_EQ(got.len, 96);
        buf_clear(&got);
        drain(&r, r.upstream[1], &got);
        CHECK_EQ(got.len, 3 * sizeof qe);
        for (uint16_t seq = 1; seq <= 3; seq++) { /* the server's replies: dropped */
            st16(answer + 2, seq, false);
            write(r.upstream[1], answer, 32);
        }
        uint8_t ev[32] = { 12, 0, 3, 0 }; /* an Expose after them: the only thing to arrive */
        write(r.upstream[1], ev, 32);
        buf_clear(&got);
        drain(&r, b, &got);
        CHECK(got.len == 32 && !memcmp(buf_head(&got), ev, 32));
        CHECK_EQ(session_stats(r.app)->answered_locally, 3);
        buf_free(&got);
        close(a);
        close(b);
        rig_stop(&r);
    }
    STEST("That an event from before a locally answered request keeps the sequence numbers rising") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        uint8_t qe[16] = { 98, 0, 4, 0, 6, 0, 0, 0, 'R', 'E', 'N', 'D', 'E', 'R', 0, 0 };
        uint8_t answer[32] = { 1, 0, 1, 0, 0, 0, 0, 0, 1, 139, 0, 142 };
        struct buf got = { 0 };
        int a = client_ready(&r, 0);
        ask_server(&r, a, 0, qe, sizeof qe, answer, &got);
        /* Answered here as request 2; an Expose the server sent after request 1 arrives later. */
        write(a, qe, sizeof qe);
        pump(&r, 5);
        uint8_t ev[32] = { 12, 0, 1, 0 };
        write(r.upstream[0], ev, 32);
        buf_clear(&got);
        drain(&r, a, &got);
        CHECK_EQ(got.len, 64);
        if (got.len == 64) {
            CHECK_EQ(ld16(buf_head(&got) + 2, false), 2);      /* the local answer to request 2 */
            CHECK_EQ(ld16(buf_head(&got) + 32 + 2, false), 2); /* the Expose, renumbered from 1 */
        }
        buf_free(&got);
        close(a);
        rig_stop(&r);
    }
    STEST("That atoms are answered at the app side: predefined at once, others once learnt") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        struct buf got = { 0 };
        int a = client_ready(&r, 0);
        /* WM_NAME is predefined (39): no need to ask the server. */
        uint8_t wm_name[16] = { 16, 0, 4, 0, 7, 0, 0, 0, 'W', 'M', '_', 'N', 'A', 'M', 'E', 0 };
        write(a, wm_name, sizeof wm_name);
        buf_clear(&got);
        for (int i = 0; i < 5; i++)
            loop_run_once(r.app_loop, 0);
        uint8_t tmp[64];
        CHECK_EQ(read(a, tmp, sizeof tmp), 32);
        CHECK(tmp[0] == 1 && ld16(tmp + 2, false) == 1 && ld32(tmp + 8, false) == 39);
        /* _TINCAN is not: the server's answer (300) crosses once, then both sides know it. */
        uint8_t tc[16] = { 16, 0, 4, 0, 7, 0, 0, 0, '_', 'T', 'I', 'N', 'C', 'A', 'N', 0 };
        write(a, tc, sizeof tc);
        drain(&r, r.upstream[0], &got);
        CHECK_EQ(got.len, 32); /* both InternAtoms reached the server */
        uint8_t reply1[32] = { 1, 0, 1, 0 }, reply2[32] = { 1, 0, 2, 0 };
        st32(reply1 + 8, 39, false);
        st32(reply2 + 8, 300, false);
        write(r.upstream[0], reply1, 32); /* dropped: the client has it */
        write(r.upstream[0], reply2, 32);
        buf_clear(&got);
        drain(&r, a, &got);
        CHECK(got.len == 32 && ld32(buf_head(&got) + 8, false) == 300);
        uint8_t gan[8] = { 17, 0, 2, 0 };
        st32(gan + 4, 300, false);
        write(a, gan, sizeof gan);
        for (int i = 0; i < 5; i++)
            loop_run_once(r.app_loop, 0);
        ssize_t n = read(a, tmp, sizeof tmp);
        CHECK(n == 40 && ld16(tmp + 8, false) == 7 && !memcmp(tmp + 32, "_TINCAN", 7));
        CHECK_EQ(session_stats(r.app)->answered_locally, 2);
        buf_free(&got);
        close(a);
        rig_stop(&r);
    }
    STEST("That a client acting at once on a local answer (BIG-REQUESTS) is framed right on both sides") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        uint8_t qe[20] = { 98, 0, 5, 0, 12, 0, 0, 0, 'B', 'I', 'G', '-', 'R', 'E', 'Q', 'U', 'E', 'S', 'T', 'S' };
        uint8_t answer[32] = { 1, 0, 1, 0, 0, 0, 0, 0, 1, 133, 0, 0 };
        struct buf got = { 0 };
        int a = client_ready(&r, 0);
        ask_server(&r, a, 0, qe, sizeof qe, answer, &got);
        /* The second client: its question is answered here; it enables BIG-REQUESTS and
         * sends a request in the long form before the server has answered anything. */
        int b = client_ready(&r, 1);
        uint8_t burst[20 + 4 + 12] = { 0 };
        memcpy(burst, qe, 20);
        uint8_t enable[4] = { 133, 0, 1, 0 }, big[12] = { 127, 0, 0, 0 };
        memcpy(burst + 20, enable, 4);
        st32(big + 4, 3, false);
        memcpy(burst + 24, big, 12);
        write(b, burst, sizeof burst);
        buf_clear(&got);
        drain(&r, r.upstream[1], &got);
        CHECK(got.len == sizeof burst && !memcmp(buf_head(&got), burst, sizeof burst));
        CHECK_EQ(session_stats(r.disp)->clients_dropped + session_stats(r.app)->clients_dropped, 0);
        CHECK_EQ(session_channel_count(r.disp), 2);
        buf_free(&got);
        close(a);
        close(b);
        rig_stop(&r);
    }
    STEST("That above its memory bound the app side stops reading its clients, and everything arrives once the server reads") {
        rig_max_memory = 16u << 20; /* high mark: 2 MiB */
        struct rig r;
        rig_start(&r, NULL, NULL);
        enum { N = 7 };
        int c[N];
        for (int i = 0; i < N; i++)
            c[i] = client_ready(&r, i);
        /* The last client enables BIG-REQUESTS and sends one request larger than the mark. */
        uint8_t qe[20] = { 98, 0, 5, 0, 12, 0, 0, 0, 'B', 'I', 'G', '-', 'R', 'E', 'Q', 'U', 'E', 'S', 'T', 'S' };
        uint8_t answer[32] = { 1, 0, 1, 0, 0, 0, 0, 0, 1, 133, 0, 0 }, enable[4] = { 133, 0, 1, 0 };
        struct buf got = { 0 };
        ask_server(&r, c[N - 1], N - 1, qe, sizeof qe, answer, &got);
        uint8_t enabled[32] = { 1, 0, 2, 0, 0, 0, 0, 0, 0xff, 0xff, 0x3f, 0 };
        ask_server(&r, c[N - 1], N - 1, enable, sizeof enable, enabled, &got);
        size_t big = 3u << 20, small = 65536, per_small = 40 * small;
        /* Bytes no encoding shrinks (the structured one would send zeros or repeats as
         * almost nothing, and nothing would wait). */
        uint8_t *bigreq = malloc(big), *smallreq = malloc(per_small);
        uint32_t x = 12345;
        for (size_t i = 0; i < big; i++)
            x ^= x << 13, x ^= x >> 17, x ^= x << 5, bigreq[i] = (uint8_t)x;
        for (size_t i = 0; i < per_small; i++)
            x ^= x << 13, x ^= x >> 17, x ^= x << 5, smallreq[i] = (uint8_t)x;
        bigreq[0] = 127; /* NoOperation in the long form */
        bigreq[1] = bigreq[2] = bigreq[3] = 0;
        st32(bigreq + 4, (uint32_t)(big / 4), false);
        for (size_t at = 0; at < per_small; at += small) { /* NoOperations of 64 KiB */
            smallreq[at] = 127;
            st16(smallreq + at + 2, (uint16_t)(small / 4), false);
        }
        size_t sent[N] = { 0 }, recv[N] = { 0 };
        bool paused = false;
        uint64_t most = 0;
        /* The server reads nothing: the clients write until they block. */
        for (int turn = 0; turn < 400; turn++) {
            for (int i = 0; i < N; i++) {
                size_t total = i == N - 1 ? big : per_small;
                if (sent[i] < total) {
                    ssize_t w = write(c[i], (i == N - 1 ? bigreq : smallreq) + sent[i], total - sent[i]);
                    if (w > 0)
                        sent[i] += (size_t)w;
                }
            }
            pump(&r, 1);
            fake_now += 1000000; /* a ms a turn: ACK timers run on the sessions' clock (on a
                                  * loaded machine the pacer's window may wait for one) */
            paused |= session_reading_paused(r.app);
            if (session_memory_held(r.app) > most)
                most = session_memory_held(r.app);
        }
        CHECK(paused);
        CHECK(most < 2 * big + (4u << 20)); /* the mark, one large message held twice, one turn of reads */
        size_t total_sent = 0;
        for (int i = 0; i < N; i++)
            total_sent += sent[i];
        CHECK(total_sent < N * per_small); /* the clients were blocked, not read into memory */
        /* Now the server reads: everything the clients wrote arrives, and they go on. */
        uint8_t *tmp = malloc(1 << 20);
        for (int turn = 0; turn < 20000; turn++) {
            bool done = true;
            for (int i = 0; i < N; i++) {
                size_t total = i == N - 1 ? big : per_small;
                if (sent[i] < total) {
                    ssize_t w = write(c[i], (i == N - 1 ? bigreq : smallreq) + sent[i], total - sent[i]);
                    if (w > 0)
                        sent[i] += (size_t)w;
                }
                ssize_t n = read(r.upstream[i], tmp, 1 << 20);
                if (n > 0)
                    recv[i] += (size_t)n;
                if (recv[i] < total)
                    done = false;
            }
            pump(&r, 1);
            fake_now += 1000000;
            if (done)
                break;
        }
        for (int i = 0; i < N; i++)
            CHECK_EQ(recv[i], i == N - 1 ? big : per_small);
        pump(&r, 4);
        CHECK(!session_reading_paused(r.app));
        CHECK_EQ(session_stats(r.app)->clients_dropped, 0);
        free(tmp);
        free(bigreq);
        free(smallreq);
        buf_free(&got);
        for (int i = 0; i < N; i++)
            close(c[i]);
        rig_stop(&r);
        rig_max_memory = 0;
    }
    STEST("That on a slow link DATA waits a few ms to be written with more, but what a peer waits for goes at once") {
        rig_speed = CODEC_SPEED_MODEM;
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        struct buf got = { 0 };
        uint8_t noop[4] = { 127, 0, 1, 0 }, focus[4] = { 43, 0, 1, 0 };
        uint64_t writes = session_stats(r.app)->link_writes;
        write(c, noop, 4);
        write(c, noop, 4);
        drain(&r, r.upstream[0], &got);
        CHECK_EQ(got.len, 0); /* held: nobody waits for a NoOperation */
        CHECK_EQ(session_stats(r.app)->link_writes, writes);
        fake_now += 9000000;
        drain(&r, r.upstream[0], &got);
        CHECK_EQ(got.len, 0);
        fake_now += 2000000; /* 10 ms on a modem link: written, both in one write */
        drain(&r, r.upstream[0], &got);
        CHECK_EQ(got.len, 8);
        CHECK_EQ(session_stats(r.app)->link_writes, writes + 1);
        /* A request owed a reply goes at once, and takes what waits with it. */
        buf_clear(&got);
        write(c, noop, 4);
        pump(&r, 2);
        write(c, focus, 4);
        drain(&r, r.upstream[0], &got);
        CHECK(got.len == 8 && !memcmp(buf_head(&got) + 4, focus, 4));
        /* The reply too (display side), without the clock moving. */
        uint8_t reply[32] = { 1, 0, 2, 0 };
        write(r.upstream[0], reply, 32);
        buf_clear(&got);
        drain(&r, c, &got);
        CHECK_EQ(got.len, 32);
        /* A block as full as it gets (FLUSH_BYTES, or all the pacer allows now): written
         * without waiting. (Bytes that no encoding shrinks: a NoOperation of 20 KiB of noise.) */
        uint8_t many[20480];
        uint32_t x = 777;
        for (size_t i = 0; i < sizeof many; i++)
            x ^= x << 13, x ^= x >> 17, x ^= x << 5, many[i] = (uint8_t)x;
        many[0] = 127;
        st16(many + 2, sizeof many / 4, false);
        uint64_t before = session_stats(r.disp)->link_bytes_in;
        write(c, many, sizeof many);
        pump(&r, 20);
        CHECK(session_stats(r.disp)->link_bytes_in - before >= 4096);
        buf_free(&got);
        close(c);
        rig_stop(&r);
        rig_speed = CODEC_SPEED_AUTO;
    }
    STEST("That an idle link goes quiet: ACK frames alone are not acknowledged on a timer") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        struct buf got = { 0 };
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 };
        ask_server(&r, c, 0, focus, 4, reply, &got);
        /* Each side acknowledges what came (at most 500 ms on), then nothing more crosses. */
        for (int i = 0; i < 4; i++) {
            fake_now += 600000000;
            pump(&r, 4);
        }
        uint64_t out_app = session_stats(r.app)->link_frames_out, out_disp = session_stats(r.disp)->link_frames_out;
        for (int i = 0; i < 10; i++) {
            fake_now += 600000000;
            pump(&r, 4);
        }
        CHECK_EQ(session_stats(r.app)->link_frames_out, out_app);
        CHECK_EQ(session_stats(r.disp)->link_frames_out, out_disp);
        buf_free(&got);
        close(c);
        rig_stop(&r);
    }
    STEST("That a trickle's ACK never goes in a write of its own, and rides on the next write that goes (a CLOSE)") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        struct buf got = { 0 };
        rig_wait_ms(&r, 3000); /* whatever the set-up left to acknowledge */
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 };
        ask_server(&r, c, 0, focus, 4, reply, &got);
        CHECK_EQ(got.len, 32);
        /* The reply is a few link bytes: the app side writes nothing for them, however long
         * the link stays quiet (no PING without a grace period). */
        uint64_t writes = session_stats(r.app)->link_writes;
        CHECK(rig_in_flight(r.disp) > 0);
        rig_wait_ms(&r, 1500);
        CHECK_EQ(session_stats(r.app)->link_writes, writes);
        CHECK(rig_in_flight(r.disp) > 0);
        /* The client goes: its CLOSE carries the ACK, in the same write. */
        close(c);
        pump(&r, 20);
        CHECK_EQ(session_stats(r.app)->link_writes, writes + 1);
        CHECK_EQ(rig_in_flight(r.disp), 0);
        buf_free(&got);
        rig_stop(&r);
    }
    STEST("That a trickle's ACK rides on DATA only once it is 500 ms old, and never makes held DATA go at once") {
        rig_speed = CODEC_SPEED_MODEM; /* DATA nobody waits for is held 10 ms */
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        struct buf got = { 0 };
        rig_wait_ms(&r, 3000);
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 }, noop[4] = { 127, 0, 1, 0 };
        ask_server(&r, c, 0, focus, 4, reply, &got);
        drain(&r, r.upstream[0], &got);
        /* 100 ms on, a NoOperation goes alone: the ACK waits. */
        rig_wait_ms(&r, 100);
        uint64_t writes = session_stats(r.app)->link_writes;
        write(c, noop, 4);
        rig_wait_ms(&r, 20);
        CHECK_EQ(session_stats(r.app)->link_writes, writes + 1);
        CHECK(rig_in_flight(r.disp) > 0);
        /* 600 ms on, the next one takes it, still held its 10 ms: one write. */
        rig_wait_ms(&r, 500);
        write(c, noop, 4);
        pump(&r, 4);
        CHECK_EQ(session_stats(r.app)->link_writes, writes + 1);
        rig_wait_ms(&r, 20);
        CHECK_EQ(session_stats(r.app)->link_writes, writes + 2);
        CHECK_EQ(rig_in_flight(r.disp), 0);
        buf_free(&got);
        close(c);
        rig_stop(&r);
        rig_speed = CODEC_SPEED_AUTO;
    }
    STEST("That 128 bytes not acknowledged get their ACK within 50 ms with nothing else to write (a peer may wait for its window)") {
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        struct buf got = { 0 };
        rig_wait_ms(&r, 3000);
        /* A GetImage's reply of 256 bytes of noise, which no coder shrinks: more than
         * ACK_FEW, less than a lump (ACK_BYTES), which would go at once. */
        uint8_t getimage[20] = { 73, 2, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 8, 0, 8, 0, 0xff, 0xff, 0xff, 0xff };
        uint8_t big[32 + 256] = { 1, 24, 2, 0 };
        st32(big + 4, 256 / 4, false);
        uint32_t x = 99;
        for (size_t i = 32; i < sizeof big; i++)
            x ^= x << 13, x ^= x >> 17, x ^= x << 5, big[i] = (uint8_t)x;
        write(c, getimage, sizeof getimage);
        drain(&r, r.upstream[0], &got);
        uint64_t writes = session_stats(r.app)->link_writes;
        write(r.upstream[0], big, sizeof big);
        pump(&r, 20);
        CHECK(rig_in_flight(r.disp) >= 128 && rig_in_flight(r.disp) < 512);
        int waited = 0;
        while (rig_in_flight(r.disp) && waited < 200) {
            rig_wait_ms(&r, 1);
            waited++;
        }
        CHECK_EQ(rig_in_flight(r.disp), 0);
        CHECK(waited <= 51);
        CHECK_EQ(session_stats(r.app)->link_writes, writes + 1); /* the ACK, alone */
        buf_clear(&got);
        drain(&r, c, &got);
        CHECK_EQ(got.len, sizeof big);
        buf_free(&got);
        close(c);
        rig_stop(&r);
    }
    STEST("That with a grace period the keepalive PING's answer carries a trickle's ACK") {
        rig_grace_s = 30;
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        struct buf got = { 0 };
        rig_wait_ms(&r, 3000);
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 };
        ask_server(&r, c, 0, focus, 4, reply, &got);
        long long trickle = rig_in_flight(r.disp);
        rig_wait_ms(&r, 1900);
        CHECK_EQ(rig_in_flight(r.disp), trickle);
        rig_wait_ms(&r, 2000); /* the display side's link has been quiet 2 s: PING, and the answer */
        /* What may be left is the display side's answer to the app side's own PING: an
         * ACK, a few bytes that nobody acknowledges. */
        CHECK(rig_in_flight(r.disp) < trickle && rig_in_flight(r.disp) <= 8);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        buf_free(&got);
        close(c);
        rig_stop(&r);
        rig_grace_s = 0;
    }
    STEST("That sessions with different secrets never open a channel") {
        struct rig r;
        rig_start(&r, (const uint8_t *)"aaaaaaaaaaaaaaaaaaaa", (const uint8_t *)"bbbbbbbbbbbbbbbbbbbb");
        int c = client_connect(&r);
        client_setup(c, r.cookie);
        pump(&r, 20);
        CHECK_EQ(session_state(r.disp), SESSION_ENDED);
        CHECK(session_refused(r.disp) || session_refused(r.app));
        CHECK_EQ(r.n_upstream, 0);
        close(c);
        rig_stop(&r);
    }
}

/* The rule that holds small writes under contention (linkwriter.c), on what TCP_INFO says:
 * the rig's socketpairs have no kernel round trip to show. */
static void coalesce_tests(void)
{
    TEST("That a small write waits under contention only while one is in flight, for at most a round trip and 100 ms") {
        /* A cell with others' airtime: 2 ms at best, 60 ms now, a segment unacknowledged. */
        struct transport_queue q = { .rtt_us = 60000, .min_rtt_us = 2000, .unacked = 1 };
        CHECK(linkwriter_coalesce_holds(&q, 100, 3000, 0));
        CHECK(linkwriter_coalesce_holds(&q, 100, 3000, 59000000));
        CHECK(!linkwriter_coalesce_holds(&q, 100, 3000, 60000000)); /* a round trip: it goes */
        q.rtt_us = 900000;
        CHECK(linkwriter_coalesce_holds(&q, 100, 3000, 99000000));
        CHECK(!linkwriter_coalesce_holds(&q, 100, 3000, 100000000)); /* and never past 100 ms */
        q.unacked = 0;
        CHECK(!linkwriter_coalesce_holds(&q, 100, 3000, 0)); /* nothing in flight: at once */
        q.unsent = 30;
        CHECK(linkwriter_coalesce_holds(&q, 100, 3000, 0)); /* the kernel still holds the last one */
    }
    TEST("That no write waits where the queue is not contention: none, a delayed ACK, either side's bulk") {
        struct transport_queue quiet = { .rtt_us = 11000, .min_rtt_us = 2000, .unacked = 1 };
        CHECK(!linkwriter_coalesce_holds(&quiet, 100, 0, 0)); /* a quiet cell */
        struct transport_queue none = { .rtt_us = 50000, .min_rtt_us = 0, .unacked = 1 };
        CHECK(!linkwriter_coalesce_holds(&none, 100, 0, 0)); /* nothing measured */
        /* 256 kbit/s, 20 ms each way: 41 ms at best, a delayed ACK's 40 ms on top. */
        struct transport_queue slow = { .rtt_us = 80000, .min_rtt_us = 41000, .unacked = 1 };
        CHECK(!linkwriter_coalesce_holds(&slow, 100, 0, 0));
        /* The same link under an upload: this side's own segments fill the queue, or the
         * peer's bulk comes this way (its pacer keeps that queue short; holding would not). */
        struct transport_queue up = { .rtt_us = 300000, .min_rtt_us = 41000, .unacked = 1 };
        CHECK(!linkwriter_coalesce_holds(&up, 6000, 0, 0));
        CHECK(!linkwriter_coalesce_holds(&up, 100, 32000, 0));
        CHECK(linkwriter_coalesce_holds(&up, 100, 1000, 0));
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    coalesce_tests();
    session_tests();
    rig_compress = 3;
    session_tests();
    return test_summary();
}
