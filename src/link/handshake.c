/* handshake.c -- link banner, version check and mutual HMAC-SHA256 authentication
 * (libsodium). Input is from an unauthenticated peer: sizes are fixed and checked. */
#include "link/handshake.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "link/frame.h"

static const char *role_name(enum link_role r) { return r == ROLE_APP ? "app" : "display"; }

int hs_init(struct handshake *hs, enum link_role role, const uint8_t *secret, size_t secret_len, uint32_t caps)
{
    if (sodium_init() < 0)
        return -EIO;
    memset(hs, 0, sizeof *hs);
    hs->role = role;
    hs->caps = caps;
    hs->window_log = HS_WINDOW_LOG_DEFAULT;
    if (secret) {
        if (secret_len > HS_MAX_SECRET)
            return -EINVAL;
        hs->auth = true;
        memcpy(hs->secret, secret, secret_len);
        hs->secret_len = secret_len;
        randombytes_buf(hs->nonce_self, sizeof hs->nonce_self);
    }
    return 0;
}

void hs_wipe(struct handshake *hs) { sodium_memzero(hs, sizeof *hs); }

int hs_start(struct handshake *hs, struct buf *out)
{
    char banner[HS_MAX_BANNER];
    int n = snprintf(banner, sizeof banner, "TINCAN %d %s %x %s %d\n", LINK_PROTOCOL_VERSION, role_name(hs->role),
                     hs->caps, hs->auth ? "hmac-sha256" : "none", hs->window_log);
    int rc = buf_append(out, banner, (size_t)n);
    if (!rc && hs->auth)
        rc = frame_encode(out, FRAME_AUTH_NONCE, 0, hs->nonce_self, sizeof hs->nonce_self);
    return rc;
}

/* proof = HMAC(secret, label || prover's role || verifier's nonce || prover's nonce) */
static void make_proof(const struct handshake *hs, enum link_role prover, const uint8_t *verifier_nonce,
                       const uint8_t *prover_nonce, uint8_t out[HS_PROOF_SIZE])
{
    static const char label[] = "tincan link v1 proof";
    uint8_t r = (uint8_t)prover;
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, hs->secret, hs->secret_len);
    crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, sizeof label);
    crypto_auth_hmacsha256_update(&st, &r, 1);
    crypto_auth_hmacsha256_update(&st, verifier_nonce, HS_NONCE_SIZE);
    crypto_auth_hmacsha256_update(&st, prover_nonce, HS_NONCE_SIZE);
    crypto_auth_hmacsha256_final(&st, out);
    sodium_memzero(&st, sizeof st);
}

static int fail(struct handshake *hs, int rc, const char *fmt, const char *arg)
{
    snprintf(hs->error, sizeof hs->error, fmt, arg);
    return rc;
}

static int parse_banner(struct handshake *hs, struct buf *in)
{
    const uint8_t *p = buf_head(in);
    size_t n = in->len < HS_MAX_BANNER ? in->len : HS_MAX_BANNER;
    const uint8_t *nl = p ? memchr(p, '\n', n) : NULL;
    if (!nl)
        return in->len >= HS_MAX_BANNER || (in->len > 0 && p[0] != 'T') ? fail(hs, -EPROTO, "%s", "peer is not a tincan link (no banner)") : 0;
    char line[HS_MAX_BANNER];
    size_t len = (size_t)(nl - p);
    memcpy(line, p, len);
    line[len] = 0;
    buf_consume(in, len + 1);
    int version;
    char role[16], auth[16];
    unsigned caps;
    int window_log = HS_WINDOW_LOG_DEFAULT; /* a peer that names none uses the old fixed window */
    int fields = sscanf(line, "TINCAN %d %15s %x %15s %d", &version, role, &caps, auth, &window_log);
    if (fields < 4)
        return fail(hs, -EPROTO, "peer is not a tincan link (banner \"%.60s\")", line);
    if (version != LINK_PROTOCOL_VERSION) {
        char msg[64];
        snprintf(msg, sizeof msg, "%d, this tincan speaks %d", version, LINK_PROTOCOL_VERSION);
        return fail(hs, -EPROTO, "peer speaks link protocol version %s: upgrade the older side", msg);
    }
    const char *want = hs->role == ROLE_APP ? "display" : "app";
    if (strcmp(role, want) != 0)
        return fail(hs, -EPROTO, "peer is a tincan %.16s side too: one side must be app, the other display", role);
    bool peer_auth = strcmp(auth, "hmac-sha256") == 0;
    if (!peer_auth && strcmp(auth, "none") != 0)
        return fail(hs, -EPROTO, "peer offers unknown authentication \"%.16s\"", auth);
    if (peer_auth != hs->auth)
        return fail(hs, -EACCES, "%s", hs->auth ? "peer does not prove the session secret: refused"
                                                 : "peer requires a session secret and this side has none");
    if (window_log < HS_WINDOW_LOG_MIN || window_log > 62) {
        char w[16];
        snprintf(w, sizeof w, "%d", window_log);
        return fail(hs, -EPROTO, "peer offers a compression window of 2^%s bytes, outside what this side accepts", w);
    }
    hs->caps &= caps;
    /* Both use the smaller: it bounds both sides' memory. A peer that names none (an older
     * tincan) uses 2^24 whatever we say, so we must too. */
    if (window_log < hs->window_log || fields < 5)
        hs->window_log = window_log;
    hs->got_banner = true;
    return 0;
}

/* After authentication (hashes of cached content are for the authenticated peer only):
 * send ours, then wait for the peer's. */
static int exchange_offers(struct handshake *hs, struct buf *in, struct buf *out)
{
    int rc;
    if (hs->got_offer)
        return 1;
    if (!hs->sent_offer) {
        struct buf payload = { 0 };
        rc = dict_offer_encode(&payload, &hs->offer_self);
        if (!rc)
            rc = frame_encode(out, FRAME_DICT_OFFER, 0, buf_head(&payload), payload.len);
        buf_free(&payload);
        if (rc)
            return rc;
        hs->sent_offer = true;
    }
    struct frame f;
    long n = frame_decode(buf_head(in), in->len, &f);
    if (n == -EAGAIN)
        return 0;
    if (n < 0 || f.type != FRAME_DICT_OFFER || f.channel != 0 || dict_offer_parse(f.payload, f.len, &hs->offer_peer) < 0)
        return fail(hs, -EPROTO, "%s", "peer sent no valid DICT_OFFER at the end of the handshake");
    buf_consume(in, (size_t)n);
    hs->got_offer = true;
    return 1;
}

static bool token_zero(const uint8_t *t)
{
    for (size_t i = 0; i < HS_TOKEN_SIZE; i++)
        if (t[i])
            return false;
    return true;
}

/* The next frame of the handshake, which must be of this type on channel 0: 1 and *f, 0
 * when incomplete, or a refusal. */
static int next_frame(struct handshake *hs, struct buf *in, uint8_t type, struct frame *f, long *size)
{
    *size = frame_decode(buf_head(in), in->len, f);
    if (*size == -EAGAIN)
        return 0;
    if (*size < 0 || f->type != type || f->channel != 0)
        return fail(hs, -EPROTO, "peer sent no valid %s in the handshake", frame_type_name(type));
    return 1;
}

/* SESSION: our tokens and generation, then the peer's, checked against what we expect. */
static int exchange_session(struct handshake *hs, struct buf *in, struct buf *out)
{
    struct hs_resume *r = &hs->session;
    if (r->got_session)
        return 1;
    if (!r->sent_session) {
        struct buf p = { 0 };
        int rc = buf_append(&p, r->token_self, HS_TOKEN_SIZE);
        if (!rc)
            rc = buf_append(&p, r->resume ? r->token_peer : (const uint8_t[HS_TOKEN_SIZE]){ 0 }, HS_TOKEN_SIZE);
        if (!rc)
            rc = buf_put_varint(&p, r->generation);
        if (!rc)
            rc = frame_encode(out, FRAME_SESSION, 0, buf_head(&p), p.len);
        buf_free(&p);
        if (rc)
            return rc;
        r->sent_session = true;
    }
    struct frame f;
    long n;
    int rc = next_frame(hs, in, FRAME_SESSION, &f, &n);
    if (rc <= 0)
        return rc;
    struct rd rd = rd_make(f.payload, f.len, false);
    const uint8_t *their_self, *their_peer;
    uint64_t generation;
    if (rd_bytes(&rd, &their_self, HS_TOKEN_SIZE) || rd_bytes(&rd, &their_peer, HS_TOKEN_SIZE) ||
        rd_varint(&rd, &generation) || rd_left(&rd))
        return fail(hs, -EPROTO, "%s", "peer sent a malformed SESSION frame");
    bool peer_resumes = !token_zero(their_peer);
    if (!r->resume && peer_resumes)
        return fail(hs, -EACCES, "%s", "peer resumes a session this side does not hold (was it restarted?): refused");
    if (r->resume && !peer_resumes)
        return fail(hs, -EACCES, "%s", "peer starts a new session while this one waits to resume: refused");
    if (r->resume && (sodium_memcmp(their_self, r->token_peer, HS_TOKEN_SIZE) != 0 ||
                      sodium_memcmp(their_peer, r->token_self, HS_TOKEN_SIZE) != 0))
        return fail(hs, -EACCES, "%s", "peer resumes another session (wrong resumption token): refused");
    /* Whether the generation is this session's present or its past is the caller's to
     * judge, at HS_RESUME_READY: it knows what became of the links since this one began. */
    r->generation_peer = generation;
    if (!r->resume)
        memcpy(r->token_peer, their_self, HS_TOKEN_SIZE);
    buf_consume(in, (size_t)n);
    r->got_session = true;
    return 1;
}

/* RESUME: how much of the peer's stream we hold, then how much of ours it holds. */
static int exchange_resume(struct handshake *hs, struct buf *in, struct buf *out)
{
    struct hs_resume *r = &hs->session;
    if (!r->ready) {
        r->ready = true; /* the caller sets received_self before calling again */
        return HS_RESUME_READY;
    }
    if (!r->sent_resume) {
        struct buf p = { 0 };
        int rc = buf_put_varint(&p, r->received_self);
        if (!rc)
            rc = frame_encode(out, FRAME_RESUME, 0, buf_head(&p), p.len);
        buf_free(&p);
        if (rc)
            return rc;
        r->sent_resume = true;
    }
    struct frame f;
    long n;
    int rc = next_frame(hs, in, FRAME_RESUME, &f, &n);
    if (rc <= 0)
        return rc;
    struct rd rd = rd_make(f.payload, f.len, false);
    if (rd_varint(&rd, &r->received_peer) || rd_left(&rd))
        return fail(hs, -EPROTO, "%s", "peer sent a malformed RESUME frame");
    buf_consume(in, (size_t)n);
    r->got_resume = true;
    return 1;
}

int hs_feed(struct handshake *hs, struct buf *in, struct buf *out)
{
    int rc;
    if (!hs->got_banner && ((rc = parse_banner(hs, in)) < 0 || !hs->got_banner))
        return rc;
    while (hs->auth && !hs->got_proof) {
        struct frame f;
        long n = frame_decode(buf_head(in), in->len, &f);
        if (n == -EAGAIN)
            return 0;
        if (n < 0)
            return fail(hs, -EPROTO, "%s", "corrupt frame during authentication");
        if (!hs->got_nonce && f.type == FRAME_AUTH_NONCE && f.len == HS_NONCE_SIZE) {
            memcpy(hs->nonce_peer, f.payload, HS_NONCE_SIZE);
            hs->got_nonce = true;
            uint8_t proof[HS_PROOF_SIZE];
            make_proof(hs, hs->role, hs->nonce_peer, hs->nonce_self, proof);
            if ((rc = frame_encode(out, FRAME_AUTH_PROOF, 0, proof, sizeof proof)) < 0)
                return rc;
        } else if (hs->got_nonce && f.type == FRAME_AUTH_PROOF && f.len == HS_PROOF_SIZE) {
            uint8_t expect[HS_PROOF_SIZE];
            enum link_role peer = hs->role == ROLE_APP ? ROLE_DISPLAY : ROLE_APP;
            make_proof(hs, peer, hs->nonce_self, hs->nonce_peer, expect);
            if (sodium_memcmp(expect, f.payload, HS_PROOF_SIZE) != 0)
                return fail(hs, -EACCES, "%s", "peer failed to prove the session secret (wrong secret?): refused");
            hs->got_proof = true;
        } else {
            return fail(hs, -EACCES, "unexpected %s frame before authentication: refused", frame_type_name(f.type));
        }
        buf_consume(in, (size_t)n);
    }
    if ((rc = exchange_session(hs, in, out)) <= 0)
        return rc;
    if (hs->session.resume)
        return hs->session.got_resume ? 1 : exchange_resume(hs, in, out);
    return (hs->caps & CAP_DICT) ? exchange_offers(hs, in, out) : 1;
}

int secret_load_file(const char *path, uint8_t *out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, out, HS_MAX_SECRET);
    int e = errno;
    close(fd);
    if (n < 0)
        return -e;
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ' || out[n - 1] == '\t'))
        n--;
    if (n < 16)
        return -EINVAL;
    *len = (size_t)n;
    return 0;
}

int secret_create_file(const char *path)
{
    if (sodium_init() < 0)
        return -EIO;
    uint8_t raw[32];
    char hex[sizeof raw * 2 + 2];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2hex(hex, sizeof hex, raw, sizeof raw);
    strcat(hex, "\n");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, hex, strlen(hex));
    int e = errno;
    close(fd);
    sodium_memzero(raw, sizeof raw);
    return w == (ssize_t)strlen(hex) ? 0 : -(w < 0 ? e : EIO);
}
