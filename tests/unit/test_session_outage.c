/* test_session_outage.c -- a session whose link is cut, stalls or is replaced (session_rig.h's
 * relay): every request and event arrives once and in order, silent links are noticed, other
 * sessions, wrong secrets and stale generations are refused, a link cut between the two
 * halves' RESUMEs does not keep the next out, the grace period ends it; on a plain link and
 * on a zstd link. */
#include "session_rig.h"
#include "proxy/session_private.h"

/* n NoOperation requests of 4 bytes whose length field is spelt out in 4-byte units
 * plus a counter in the padding-free form: 127, 0, 1, 0 would all look alike, so each is
 * a NoOperation of 2 units carrying its number (the server ignores a NoOperation's body). */
static void numbered_requests(struct buf *out, uint32_t first, uint32_t n)
{
    for (uint32_t i = first; i < first + n; i++) {
        uint8_t rq[8] = { 127, 0, 2, 0 };
        st32(rq + 4, i, false);
        CHECK_EQ(buf_append(out, rq, sizeof rq), 0);
    }
}

/* Numbered events from the server: KeymapNotify (11) has no sequence number and 31 bytes
 * of its own, which carry the number. */
static void numbered_events(struct buf *out, uint32_t first, uint32_t n)
{
    for (uint32_t i = first; i < first + n; i++) {
        uint8_t ev[32] = { 11 };
        st32(ev + 4, i, false);
        CHECK_EQ(buf_append(out, ev, sizeof ev), 0);
    }
}

/* Writes all of b to fd (non-blocking), pumping while it is full. */
static void feed(struct rig *r, int fd, const struct buf *b)
{
    for (size_t at = 0; at < b->len;) {
        ssize_t w = write(fd, buf_head(b) + at, b->len - at);
        if (w > 0)
            at += (size_t)w;
        pump(r, 1);
        fake_now += 1000000;
    }
}

/* Reads from fd until want bytes came (or many turns passed). */
static void collect(struct rig *r, int fd, struct buf *got, size_t want)
{
    for (int i = 0; i < 20000 && got->len < want; i++) {
        pump(r, 1);
        fake_now += 1000000;
        uint8_t tmp[16384];
        ssize_t n = read(fd, tmp, sizeof tmp);
        if (n > 0)
            CHECK_EQ(buf_append(got, tmp, (size_t)n), 0);
    }
}

/* Exactly one half has taken the new link as its own: it read the peer's RESUME, the
 * other has not read this half's yet. */
static bool one_half_up(struct rig *r)
{
    return (session_state(r->app) == SESSION_UP) != (session_state(r->disp) == SESSION_UP);
}

/* Runs the rig, checking between every half's turn, until one half alone has adopted the
 * new link; then cuts the relay, so that what it held (the other half's RESUME) is lost.
 * The relay moves one packet a turn: as a real one, it holds the RESUMEs in flight. The
 * half that runs first in a turn is the one that takes the link. */
static bool cut_between_resumes(struct rig *r, struct relay *y, enum session_state *app_state, bool display_first)
{
    struct loop *first = display_first ? r->disp_loop : r->app_loop;
    struct loop *second = display_first ? r->app_loop : r->disp_loop;
    for (int i = 0; i < 400; i++) {
        loop_run_once(first, 0);
        if (one_half_up(r))
            break;
        relay_move(y);
        loop_run_once(second, 0);
        if (one_half_up(r))
            break;
        relay_move(y);
        session_tick(r->app);
        session_tick(r->disp);
    }
    bool asymmetric = one_half_up(r);
    *app_state = session_state(r->app);
    relay_cut(y);
    pump(r, 10);
    return asymmetric;
}

/* A new link to r's display side from a peer that knows the session (its secret and both
 * tokens), driven by hand: the test decides when its bytes go. */
struct fake_peer {
    int fd;
    struct handshake hs;
    struct buf in, out, resume; /* resume: its RESUME, held until the test lets it go */
    int rc; /* hs_feed's last: 1 once the display side's RESUME came, < 0 refused */
};

static void fake_start(struct rig *r, struct fake_peer *f, const uint8_t *secret, uint64_t generation)
{
    int sv[2];
    memset(f, 0, sizeof *f);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    f->fd = sv[0];
    CHECK_EQ(hs_init(&f->hs, ROLE_APP, secret, 20, r->app->caps), 0);
    f->hs.window_log = r->app->window_log;
    f->hs.session = (struct hs_resume){ .resume = true, .generation = generation };
    memcpy(f->hs.session.token_self, r->app->token, HS_TOKEN_SIZE);
    memcpy(f->hs.session.token_peer, r->app->token_peer, HS_TOKEN_SIZE);
    CHECK_EQ(hs_start(&f->hs, &f->out), 0);
    CHECK_EQ(session_attach(r->disp, sv[1], sv[1]), 0);
}

/* One turn: what the peer has to say goes (its RESUME only if send_resume), the rig runs,
 * the display side's answer is fed to the handshake. At HS_RESUME_READY the peer says it
 * has read `received` of the display side's stream. */
static void fake_turn(struct rig *r, struct fake_peer *f, bool send_resume, uint64_t received)
{
    ssize_t w = f->out.len ? write(f->fd, buf_head(&f->out), f->out.len) : 0;
    if (w > 0)
        buf_consume(&f->out, (size_t)w);
    w = send_resume && f->resume.len ? write(f->fd, buf_head(&f->resume), f->resume.len) : 0;
    if (w > 0)
        buf_consume(&f->resume, (size_t)w);
    pump(r, 1);
    uint8_t tmp[4096];
    ssize_t n = read(f->fd, tmp, sizeof tmp);
    if (n > 0)
        CHECK_EQ(buf_append(&f->in, tmp, (size_t)n), 0);
    if (f->rc == 0 || f->rc == HS_RESUME_READY) {
        f->rc = hs_feed(&f->hs, &f->in, &f->out);
        if (f->rc == HS_RESUME_READY) {
            f->hs.session.received_self = received;
            f->rc = hs_feed(&f->hs, &f->in, &f->resume);
        }
    }
}

static void fake_free(struct rig *r, struct fake_peer *f)
{
    close(f->fd);
    pump(r, 2);
    buf_free(&f->in);
    buf_free(&f->out);
    buf_free(&f->resume);
    hs_wipe(&f->hs);
}

/* Whether the display side took the peer's generation for this session's: it went as far
 * as its RESUME. The peer never sends its own. */
static bool stale_peer_answered(struct rig *r, const uint8_t *secret, uint64_t generation)
{
    struct fake_peer f;
    fake_start(r, &f, secret, generation);
    for (int i = 0; i < 50 && f.rc == 0; i++)
        fake_turn(r, &f, false, 0);
    bool answered = f.rc == 1 || f.rc == HS_RESUME_READY;
    fake_free(r, &f);
    return answered;
}

static void outage_tests(void)
{
    STEST("That a lost link keeps every client, and a new link carries both ways on, each byte once") {
        struct relay y;
        rig_relay = &y;
        rig_grace_s = 60;
        struct rig r;
        rig_start(&r, (const uint8_t *)"0123456789abcdefghij", (const uint8_t *)"0123456789abcdefghij");
        int c = client_ready(&r, 0);
        struct buf up = { 0 }, down = { 0 }, got_up = { 0 }, got_down = { 0 };
        /* Before the outage, both ways, some of it in flight when the relay is cut. */
        numbered_requests(&up, 0, 3000);
        numbered_events(&down, 0, 1000);
        feed(&r, c, &up);
        feed(&r, r.upstream[0], &down);
        y.stalled = true; /* what is written now is in flight when the relay is cut */
        struct buf in_flight = { 0 };
        numbered_requests(&in_flight, 3000, 300);
        numbered_events(&in_flight, 1000, 300);
        CHECK_EQ(write(c, buf_head(&in_flight), 300 * 8), 300 * 8);
        CHECK_EQ(write(r.upstream[0], buf_head(&in_flight) + 300 * 8, 300 * 32), 300 * 32);
        CHECK_EQ(buf_append(&up, buf_head(&in_flight), 300 * 8), 0);
        CHECK_EQ(buf_append(&down, buf_head(&in_flight) + 300 * 8, 300 * 32), 0);
        buf_free(&in_flight);
        pump(&r, 20);
        relay_cut(&y);
        pump(&r, 10);
        CHECK_EQ(session_state(r.app), SESSION_DETACHED);
        CHECK_EQ(session_state(r.disp), SESSION_DETACHED);
        CHECK_EQ(session_channel_count(r.app), 1);
        CHECK_EQ(session_channel_count(r.disp), 1);
        /* During it: the client and the server go on writing; it waits in tincan. */
        struct buf more_up = { 0 }, more_down = { 0 };
        numbered_requests(&more_up, 3300, 500);
        numbered_events(&more_down, 1300, 500);
        CHECK_EQ(write(c, buf_head(&more_up), more_up.len), (ssize_t)more_up.len);
        CHECK_EQ(write(r.upstream[0], buf_head(&more_down), more_down.len), (ssize_t)more_down.len);
        fake_now += 5000000000ull;
        pump(&r, 10);
        /* A new link, from both ends, as a redial and an accept make it. */
        int a, d;
        relay_open(&y, &a, &d);
        CHECK_EQ(session_attach(r.app, a, a), 0);
        CHECK_EQ(session_attach(r.disp, d, d), 0);
        CHECK_EQ(buf_append(&up, buf_head(&more_up), more_up.len), 0);
        CHECK_EQ(buf_append(&down, buf_head(&more_down), more_down.len), 0);
        collect(&r, r.upstream[0], &got_up, up.len);
        collect(&r, c, &got_down, down.len);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        CHECK_EQ(got_up.len, up.len);
        CHECK(got_up.len == up.len && !memcmp(buf_head(&got_up), buf_head(&up), up.len));
        CHECK_EQ(got_down.len, down.len);
        CHECK(got_down.len == down.len && !memcmp(buf_head(&got_down), buf_head(&down), down.len));
        CHECK_EQ(session_stats(r.app)->outages, 1);
        CHECK(session_stats(r.app)->bytes_replayed + session_stats(r.disp)->bytes_replayed > 0);
        buf_free(&up);
        buf_free(&down);
        buf_free(&got_up);
        buf_free(&got_down);
        buf_free(&more_up);
        buf_free(&more_down);
        close(c);
        rig_stop(&r);
        relay_cut(&y);
        rig_relay = NULL;
        rig_grace_s = 0;
    }
    STEST("That a link that falls silent without closing is noticed, then replaced") {
        struct relay y;
        rig_relay = &y;
        rig_grace_s = 60;
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        y.stalled = true; /* out of range: nothing moves, nothing closes */
        int turns = 0;
        while (session_state(r.app) == SESSION_UP && turns++ < 200) {
            fake_now += 100000000; /* 100 ms a turn */
            pump(&r, 1);
        }
        CHECK_EQ(session_state(r.app), SESSION_DETACHED);
        CHECK(turns >= 20 && turns <= 60); /* 2 s without an answer to a PING, at least; a few at most */
        struct relay old = y;
        int a, d;
        relay_open(&y, &a, &d);
        CHECK_EQ(session_attach(r.app, a, a), 0);
        CHECK_EQ(session_attach(r.disp, d, d), 0); /* the display side's old link seemed up: replaced */
        pump(&r, 20);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        struct buf got = { 0 };
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 };
        ask_server(&r, c, 0, focus, 4, reply, &got);
        CHECK(got.len == 32 && !memcmp(buf_head(&got), reply, 32));
        /* The old link comes back to life: the halves closed it; nothing of it is read. */
        old.stalled = false;
        relay_move(&old);
        pump(&r, 10);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        buf_free(&got);
        close(c);
        rig_stop(&r);
        relay_cut(&y);
        relay_cut(&old);
        rig_relay = NULL;
        rig_grace_s = 0;
    }
    STEST("That a new link of another session, or with the wrong secret, is refused and the session waits on") {
        struct relay y;
        rig_relay = &y;
        rig_grace_s = 60;
        struct rig r;
        rig_start(&r, (const uint8_t *)"0123456789abcdefghij", (const uint8_t *)"0123456789abcdefghij");
        int c = client_ready(&r, 0);
        relay_cut(&y);
        pump(&r, 5);
        CHECK_EQ(session_state(r.disp), SESSION_DETACHED);
        /* Another app side with the same secret, starting a session of its own. */
        int sv[2];
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
        struct session_config ac = { .role = ROLE_APP, .secret = (const uint8_t *)"0123456789abcdefghij",
                                     .secret_len = 20, .compress_level = rig_compress, .clock = fake_clock };
        struct session *other;
        session_new(&other, r.app_loop, &ac, sv[0], sv[0]);
        CHECK_EQ(session_attach(r.disp, sv[1], sv[1]), 0);
        pump(&r, 20);
        CHECK_EQ(session_attaching(r.disp), 0);
        CHECK_EQ(session_state(r.disp), SESSION_DETACHED);
        session_free(other);
        /* The right session, with the wrong secret: a fresh peer cannot know the tokens. */
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
        ac.secret = (const uint8_t *)"XXXXXXXXXXabcdefghij";
        session_new(&other, r.app_loop, &ac, sv[0], sv[0]);
        CHECK_EQ(session_attach(r.disp, sv[1], sv[1]), 0);
        pump(&r, 20);
        CHECK_EQ(session_state(r.disp), SESSION_DETACHED);
        session_free(other);
        /* And the real one still resumes. */
        int a, d;
        relay_open(&y, &a, &d);
        session_attach(r.app, a, a);
        session_attach(r.disp, d, d);
        pump(&r, 20);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        close(c);
        rig_stop(&r);
        relay_cut(&y);
        rig_relay = NULL;
        rig_grace_s = 0;
    }
    STEST("That a link cut between the two RESUMEs (one half took it, the other did not) is replaced by the next") {
        struct relay y;
        rig_relay = &y;
        rig_grace_s = 60;
        struct rig r;
        rig_start(&r, (const uint8_t *)"0123456789abcdefghij", (const uint8_t *)"0123456789abcdefghij");
        int c = client_ready(&r, 0);
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 };
        for (int round = 0; round < 3; round++) {
            relay_cut(&y);
            pump(&r, 5);
            CHECK_EQ(session_state(r.app), SESSION_DETACHED);
            CHECK_EQ(session_state(r.disp), SESSION_DETACHED);
            /* A request made during the outage: it must come out once, whichever link carries it. */
            CHECK_EQ(write(c, focus, 4), 4);
            pump(&r, 2);
            int a, d;
            relay_open(&y, &a, &d);
            CHECK_EQ(session_attach(r.app, a, a), 0);
            CHECK_EQ(session_attach(r.disp, d, d), 0);
            enum session_state app_state;
            CHECK(cut_between_resumes(&r, &y, &app_state, round == 1));
            CHECK_EQ(app_state, round == 1 ? SESSION_DETACHED : SESSION_UP); /* each half ahead, in turn */
            CHECK_EQ(session_state(r.app), SESSION_DETACHED);
            CHECK_EQ(session_state(r.disp), SESSION_DETACHED);
            /* The redial after it: both halves must take it, whatever each made of the last. */
            for (int tries = 0; tries < 3 && session_state(r.app) != SESSION_UP; tries++) {
                relay_cut(&y);
                relay_open(&y, &a, &d);
                session_attach(r.app, a, a);
                session_attach(r.disp, d, d);
                pump(&r, 30);
                fake_now += 1000000000ull;
            }
            CHECK_EQ(session_state(r.app), SESSION_UP);
            CHECK_EQ(session_state(r.disp), SESSION_UP);
            struct buf got = { 0 };
            uint8_t req[32];
            size_t n = 0;
            for (int i = 0; i < 200 && n < 4; i++) {
                pump(&r, 1);
                ssize_t k = read(r.upstream[0], req + n, sizeof req - n);
                if (k > 0)
                    n += (size_t)k;
            }
            CHECK_EQ(n, 4); /* the outage's request, once */
            CHECK(n == 4 && !memcmp(req, focus, 4));
            CHECK_EQ(write(r.upstream[0], reply, 32), 32);
            reply[2]++; /* the next one's sequence number */
            for (int i = 0; i < 200 && got.len < 32; i++) {
                pump(&r, 1);
                drain(&r, c, &got);
            }
            CHECK_EQ(got.len, 32);
            buf_free(&got);
        }
        close(c);
        rig_stop(&r);
        relay_cut(&y);
        rig_relay = NULL;
        rig_grace_s = 0;
    }
    STEST("That a new link naming a link before the last the peer took, or one not yet made, is refused; the link stays") {
        struct relay y;
        rig_relay = &y;
        rig_grace_s = 60;
        struct rig r;
        const uint8_t *secret = (const uint8_t *)"0123456789abcdefghij";
        rig_start(&r, secret, secret);
        int c = client_ready(&r, 0);
        relay_cut(&y);
        pump(&r, 5);
        int a, d;
        relay_open(&y, &a, &d);
        session_attach(r.app, a, a);
        session_attach(r.disp, d, d);
        pump(&r, 20);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        /* The app side's stream comes on the new link: the display side knows it took it. */
        struct buf got = { 0 };
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 };
        ask_server(&r, c, 0, focus, 4, reply, &got);
        CHECK_EQ(got.len, 32);
        CHECK_EQ(r.disp->generation, 1);
        CHECK(!stale_peer_answered(&r, secret, 0)); /* the first link's: stale */
        CHECK(!stale_peer_answered(&r, secret, 3)); /* two ahead: no link of this session */
        CHECK_EQ(session_attaching(r.disp), 0);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        reply[2]++;
        ask_server(&r, c, 0, focus, 4, reply, &got);
        CHECK_EQ(got.len, 32);
        /* And the peer's own generation is taken: the display side answers with its RESUME
         * (the link it had is let go, as for any new link; the real app side redials). */
        CHECK(stale_peer_answered(&r, secret, 1));
        buf_free(&got);
        close(c);
        rig_stop(&r);
        relay_cut(&y);
        rig_relay = NULL;
        rig_grace_s = 0;
    }
    STEST("That a new link whose RESUME comes after another link was taken and brought bytes is refused; the link stays") {
        struct relay y;
        rig_relay = &y;
        rig_grace_s = 60;
        struct rig r;
        const uint8_t *secret = (const uint8_t *)"0123456789abcdefghij";
        rig_start(&r, secret, secret);
        int c = client_ready(&r, 0);
        relay_cut(&y);
        pump(&r, 5);
        CHECK_EQ(session_state(r.disp), SESSION_DETACHED);
        /* A link that got as far as the display side's RESUME, then went quiet (a dial the
         * app side gave up on, its last bytes still on the way)... */
        struct fake_peer f;
        fake_start(&r, &f, secret, 0);
        for (int i = 0; i < 50 && f.rc != 1; i++)
            fake_turn(&r, &f, false, r.app->rx_stream);
        CHECK_EQ(f.rc, 1);
        CHECK(f.resume.len > 0);
        /* ... then the app side's next dial resumes the session, and requests cross it. */
        int a, d;
        relay_open(&y, &a, &d);
        session_attach(r.app, a, a);
        session_attach(r.disp, d, d);
        pump(&r, 20);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        struct buf got = { 0 };
        uint8_t focus[4] = { 43, 0, 1, 0 }, reply[32] = { 1, 0, 1, 0 };
        ask_server(&r, c, 0, focus, 4, reply, &got);
        CHECK_EQ(got.len, 32);
        /* The first one's RESUME arrives now: what the display side said it held is past. */
        for (int i = 0; i < 20; i++)
            fake_turn(&r, &f, true, 0);
        CHECK_EQ(f.resume.len, 0);
        CHECK_EQ(session_attaching(r.disp), 0);
        CHECK_EQ(session_state(r.disp), SESSION_UP);
        CHECK_EQ(session_state(r.app), SESSION_UP);
        /* The link the halves share still carries the next round trip, once each way. */
        reply[2]++;
        struct buf seen = { 0 };
        CHECK_EQ(write(c, focus, 4), 4);
        drain(&r, r.upstream[0], &seen);
        CHECK_EQ(seen.len, 4);
        CHECK_EQ(write(r.upstream[0], reply, 32), 32);
        buf_clear(&got);
        drain(&r, c, &got);
        CHECK_EQ(got.len, 32);
        buf_free(&seen);
        buf_free(&got);
        fake_free(&r, &f);
        close(c);
        rig_stop(&r);
        relay_cut(&y);
        rig_relay = NULL;
        rig_grace_s = 0;
    }
    STEST("That a link lost for longer than the grace period ends the session and closes its clients") {
        struct relay y;
        rig_relay = &y;
        rig_grace_s = 30;
        struct rig r;
        rig_start(&r, NULL, NULL);
        int c = client_ready(&r, 0);
        relay_cut(&y);
        pump(&r, 5);
        CHECK_EQ(session_state(r.app), SESSION_DETACHED);
        fake_now += 29000000000ull;
        pump(&r, 5);
        CHECK_EQ(session_state(r.app), SESSION_DETACHED);
        fake_now += 2000000000ull;
        pump(&r, 5);
        CHECK_EQ(session_state(r.app), SESSION_ENDED);
        CHECK_EQ(session_state(r.disp), SESSION_ENDED);
        CHECK(session_end_reason(r.app) && strstr(session_end_reason(r.app), "grace"));
        CHECK(closed(c));
        close(c);
        rig_stop(&r);
        rig_relay = NULL;
        rig_grace_s = 0;
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    outage_tests();
    rig_compress = 3;
    outage_tests();
    return test_summary();
}
