/* test_learnt.c -- the questions remembered across sessions (proxy/learnt.c): the store's
 * order and bounds, its file (round trip, corrupt, truncated and foreign files), the file
 * per server in the cache directory, and the hooks that learn from a client's replies. */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/log.h"
#include "link/frame.h"
#include "proxy/learnt.h"
#include "test.h"

static char root[] = "/tmp/tincan-test-learnt.XXXXXX";
static const uint8_t answer_a[LEARNT_ANSWER_SIZE] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t answer_b[LEARNT_ANSWER_SIZE] = { 9, 9, 9, 9, 9, 9, 9, 9 };

/* A ListFonts request as Xlib sends it: max_names, the pattern, padding. */
static size_t list_fonts(uint8_t *out, const char *pattern, uint16_t max)
{
    size_t n = strlen(pattern), size = 8 + ((n + 3) & ~(size_t)3);
    memset(out, 0, size);
    out[0] = 49;
    st16(out + 2, (uint16_t)(size / 4), false);
    st16(out + 4, max, false);
    st16(out + 6, (uint16_t)n, false);
    memcpy(out + 8, pattern, n);
    return size;
}

static void note_font(struct learnt *l, const char *name)
{
    learnt_note(l, LEARNT_FONT, (const uint8_t *)name, strlen(name), answer_a);
}

static bool is_font(const struct learnt *l, size_t i, const char *name)
{
    const struct learnt_question *q = learnt_at(l, i);
    return q && q->kind == LEARNT_FONT && q->len == strlen(name) && !memcmp(q->bytes, name, q->len);
}

/* A server's setup reply: success, release, resource ids, and a vendor string. */
static size_t setup_reply(uint8_t *out, const char *vendor, uint32_t release)
{
    size_t v = strlen(vendor), size = 40 + ((v + 3) & ~(size_t)3);
    memset(out, 0, size);
    out[0] = 1;
    st16(out + 2, 11, false);
    st32(out + 8, release, false);
    st32(out + 12, 0x00400000, false);
    st32(out + 16, 0x001fffff, false);
    st16(out + 24, (uint16_t)v, false);
    memcpy(out + 40, vendor, v);
    return size;
}

static size_t count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > strlen(suffix) && !strcmp(e->d_name + len - strlen(suffix), suffix))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* The questions of a server (display number, vendor, release 1) kept in dir. */
static struct learnt *learnt_of_server(const char *dir, uint32_t number, const char *vendor)
{
    struct xdisplay_addr disp = { .number = number };
    uint8_t setup[128];
    size_t n = setup_reply(setup, vendor, 1);
    struct learnt *l;
    learnt_new(&l, dir);
    learnt_on_setup(l, &disp, setup, n);
    return l;
}

int main(void)
{
    log_setup(LOG_ERROR, "test"); /* the "ignoring" lines are expected here */
    if (!mkdtemp(root))
        return 1;
    uint8_t id[LEARNT_ID_SIZE] = { 7 }, other_id[LEARNT_ID_SIZE] = { 8 };

    TEST("That questions written to a file are read back, in the same order, with their answers' hashes") {
        struct learnt *a, *b;
        learnt_new(&a, NULL);
        learnt_new(&b, NULL);
        learnt_set_identity(a, id);
        learnt_set_identity(b, id);
        uint8_t req[64];
        size_t n = list_fonts(req, "-*-helvetica-*", 100);
        CHECK(learnt_note(a, LEARNT_LIST_FONTS, req, n, answer_a));
        req[0] = 50;
        CHECK(learnt_note(a, LEARNT_LIST_FONTS_WITH_INFO, req, n, answer_a));
        note_font(a, "fixed");
        struct buf file = { 0 };
        CHECK_EQ(learnt_encode(a, &file), 0);
        CHECK_EQ(learnt_parse(b, buf_head(&file), file.len), 0);
        CHECK_EQ(learnt_count(b), 3);
        CHECK(is_font(b, 0, "fixed"));
        CHECK_EQ(learnt_at(b, 1)->kind, LEARNT_LIST_FONTS_WITH_INFO);
        CHECK_EQ(learnt_at(b, 2)->kind, LEARNT_LIST_FONTS);
        CHECK(learnt_at(b, 2)->len == n && !memcmp(learnt_at(b, 2)->bytes + 8, "-*-helvetica-*", 14));
        CHECK(!memcmp(learnt_at(b, 2)->answer, answer_a, LEARNT_ANSWER_SIZE));
        struct buf again = { 0 };
        learnt_encode(b, &again); /* the same bytes again */
        CHECK(again.len == file.len && !memcmp(buf_head(&again), buf_head(&file), file.len));
        buf_free(&file);
        buf_free(&again);
        learnt_free(a);
        learnt_free(b);
    }

    TEST("That a question asked again moves first, and the least recently used goes when full") {
        struct learnt *l;
        learnt_new(&l, NULL);
        note_font(l, "a");
        note_font(l, "b");
        note_font(l, "c");
        CHECK(learnt_note(l, LEARNT_FONT, (const uint8_t *)"a", 1, NULL)); /* a client asked again */
        CHECK(is_font(l, 0, "a") && is_font(l, 1, "c") && is_font(l, 2, "b"));
        CHECK(!learnt_note(l, LEARNT_FONT, (const uint8_t *)"zz", 2, NULL)); /* unknown, no answer: not kept */
        CHECK_EQ(learnt_count(l), 3);
        char name[16];
        for (unsigned i = 0; i < LEARNT_MAX_QUESTIONS - 3; i++) {
            snprintf(name, sizeof name, "font-%u", i);
            note_font(l, name);
        }
        CHECK_EQ(learnt_count(l), LEARNT_MAX_QUESTIONS);
        note_font(l, "one more");
        CHECK_EQ(learnt_count(l), LEARNT_MAX_QUESTIONS);
        CHECK(is_font(l, 0, "one more"));
        CHECK(is_font(l, LEARNT_MAX_QUESTIONS - 1, "c")); /* b, the least recently used, went */
        for (size_t i = 0; i < learnt_count(l); i++)
            CHECK(!is_font(l, i, "b"));
        learnt_drop(l, LEARNT_FONT, (const uint8_t *)"a", 1);
        CHECK_EQ(learnt_count(l), LEARNT_MAX_QUESTIONS - 1);
        learnt_free(l);
    }

    TEST("That the questions' bytes stay within the byte bound, and bad questions are refused") {
        struct learnt *l;
        learnt_new(&l, NULL);
        learnt_set_identity(l, id);
        char big[LEARNT_MAX_QUESTION];
        for (unsigned i = 0; i < 200; i++) {
            memset(big, 'a' + i % 26, sizeof big);
            snprintf(big, 16, "%u-", i);
            big[strlen(big)] = '-';
            CHECK(learnt_note(l, LEARNT_FONT, (const uint8_t *)big, sizeof big, answer_a));
        }
        struct buf file = { 0 };
        learnt_encode(l, &file);
        CHECK(file.len <= LEARNT_MAX_BYTES);
        CHECK(learnt_count(l) < 200 && learnt_count(l) > 50);
        buf_free(&file);
        uint8_t req[64];
        size_t n = list_fonts(req, "*", 10);
        CHECK(!learnt_note(l, LEARNT_FONT, (const uint8_t *)big, sizeof big + 1, answer_a)); /* too long */
        CHECK(!learnt_note(l, LEARNT_LIST_FONTS_WITH_INFO, req, n, answer_a)); /* not that request */
        CHECK(!learnt_note(l, LEARNT_LIST_FONTS, req, n - 4, answer_a));       /* length disagrees */
        CHECK(!learnt_note(l, 9, req, n, answer_a));
        CHECK(!learnt_note(l, LEARNT_FONT, req, 0, answer_a));
        learnt_free(l);
    }

    TEST("That a corrupt, truncated, foreign or other-version file is refused and changes nothing") {
        struct learnt *a, *b;
        learnt_new(&a, NULL);
        learnt_new(&b, NULL);
        learnt_set_identity(a, id);
        learnt_set_identity(b, id);
        note_font(a, "fixed");
        note_font(a, "cursor");
        note_font(b, "kept");
        struct buf file = { 0 };
        learnt_encode(a, &file);
        uint8_t *p = malloc(file.len);
        memcpy(p, buf_head(&file), file.len);
        size_t bad = 0;
        for (size_t i = 0; i < file.len; i++) { /* every byte flipped */
            p[i] ^= 0x20;
            bad += learnt_parse(b, p, file.len) != 0;
            p[i] ^= 0x20;
        }
        CHECK_EQ(bad, file.len);
        for (size_t n = 0; n < file.len; n++)
            bad += learnt_parse(b, p, n) != 0;
        CHECK_EQ(bad, 2 * file.len);
        CHECK(learnt_parse(b, NULL, 0) != 0);
        CHECK(learnt_count(b) == 1 && is_font(b, 0, "kept"));
        learnt_set_identity(b, other_id); /* another server's file */
        CHECK(learnt_parse(b, p, file.len) != 0);
        learnt_set_identity(b, id);
        CHECK_EQ(learnt_parse(b, p, file.len), 0);
        CHECK(learnt_count(b) == 2 && is_font(b, 0, "cursor"));
        free(p);
        buf_free(&file);
        learnt_free(a);
        learnt_free(b);
    }

    TEST("That an answer's hash leaves out sequence numbers and sees everything else") {
        uint8_t r1[40] = { 1, 0, 5, 0, 2, 0, 0, 0, 9 }, r2[40];
        memcpy(r2, r1, sizeof r1);
        st16(r2 + 2, 777, false);
        uint8_t h1[LEARNT_ANSWER_SIZE], h2[LEARNT_ANSWER_SIZE];
        learnt_answer_hash(NULL, 0, r1, sizeof r1, h1);
        learnt_answer_hash(NULL, 0, r2, sizeof r2, h2);
        CHECK(!memcmp(h1, h2, sizeof h1));
        r2[39] = 1;
        learnt_answer_hash(NULL, 0, r2, sizeof r2, h2);
        CHECK(memcmp(h1, h2, sizeof h1));
        uint8_t two[72] = { 0 }; /* ListFontsWithInfo: replies before the last, then the last */
        memcpy(two, r1, sizeof r1);
        two[40] = 1;
        uint8_t h3[LEARNT_ANSWER_SIZE];
        learnt_answer_hash(NULL, 0, two, sizeof two, h2);
        learnt_answer_hash(two, 40, two + 40, 32, h3);
        CHECK(!memcmp(h2, h3, sizeof h2));
    }

    TEST("That each server has its own file in the cache directory, read back at the next session") {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/cache/tincan", root);
        struct xdisplay_addr disp = { .number = 5 };
        uint8_t setup[128], setup2[128];
        size_t n = setup_reply(setup, "The X.Org Foundation", 12101004);
        size_t n2 = setup_reply(setup2, "Another vendor", 1);
        struct learnt *l;
        learnt_new(&l, dir);
        learnt_on_setup(l, &disp, setup, n);
        note_font(l, "fixed");
        CHECK_EQ(learnt_save(l, true), 0);
        learnt_on_setup(l, &disp, setup2, n2); /* another server: its own, empty */
        CHECK_EQ(learnt_count(l), 0);
        note_font(l, "other");
        learnt_free(l); /* not saved: "other" is lost, that is all */
        CHECK_EQ(count_files(dir, LEARNT_FILE_SUFFIX), 1);

        learnt_new(&l, dir);
        learnt_on_setup(l, &disp, setup, n);
        CHECK(learnt_count(l) == 1 && is_font(l, 0, "fixed"));
        learnt_free(l);
        disp.number = 6; /* the same vendor on another display: another server */
        learnt_new(&l, dir);
        learnt_on_setup(l, &disp, setup, n);
        CHECK_EQ(learnt_count(l), 0);
        learnt_free(l);
    }

    TEST("That a damaged file on disk is ignored, and replaced at the next save") {
        char dir[300], path[600];
        snprintf(dir, sizeof dir, "%s/damaged", root);
        struct xdisplay_addr disp = { .number = 5 };
        uint8_t setup[128];
        size_t n = setup_reply(setup, "Vendor", 1);
        struct learnt *l = learnt_of_server(dir, 5, "Vendor");
        note_font(l, "fixed");
        learnt_save(l, true);
        learnt_free(l);
        DIR *d = opendir(dir);
        struct dirent *e;
        path[0] = 0;
        while (d && (e = readdir(d)))
            if (strstr(e->d_name, LEARNT_FILE_SUFFIX))
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (d)
            closedir(d);
        CHECK(path[0]);
        CHECK_EQ(truncate(path, 90), 0);
        learnt_new(&l, dir);
        learnt_on_setup(l, &disp, setup, n);
        CHECK_EQ(learnt_count(l), 0);
        note_font(l, "new");
        CHECK_EQ(learnt_save(l, true), 0);
        learnt_free(l);
        learnt_new(&l, dir);
        learnt_on_setup(l, &disp, setup, n);
        CHECK(learnt_count(l) == 1 && is_font(l, 0, "new"));
        learnt_free(l);
    }

    TEST("That a client's exit writes the file only when a question or an answer changed, not for a change of order") {
        char dir[300], cmd[400];
        snprintf(dir, sizeof dir, "%s/quiet", root);
        struct learnt *l = learnt_of_server(dir, 7, "Quiet");
        note_font(l, "fixed");
        note_font(l, "8x13");
        CHECK_EQ(learnt_save(l, false), 0);
        CHECK_EQ(count_files(dir, LEARNT_FILE_SUFFIX), 1);
        snprintf(cmd, sizeof cmd, "rm -f %s/*%s", dir, LEARNT_FILE_SUFFIX);
        CHECK_EQ(system(cmd), 0);
        note_font(l, "8x13");  /* asked again, already first */
        note_font(l, "fixed"); /* asked again: only the order changes */
        CHECK_EQ(learnt_save(l, false), 0);
        CHECK_EQ(count_files(dir, LEARNT_FILE_SUFFIX), 0);
        CHECK_EQ(learnt_save(l, true), 0); /* the session's end keeps the order too */
        CHECK_EQ(count_files(dir, LEARNT_FILE_SUFFIX), 1);
        CHECK_EQ(system(cmd), 0);
        learnt_note(l, LEARNT_FONT, (const uint8_t *)"fixed", 5, answer_b); /* a new answer */
        CHECK_EQ(learnt_save(l, false), 0);
        CHECK_EQ(count_files(dir, LEARNT_FILE_SUFFIX), 1);
        learnt_free(l);
    }

    TEST("That at most LEARNT_MAX_FILES servers' files are kept") {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/many", root);
        struct xdisplay_addr disp = { .number = 1 };
        uint8_t setup[128];
        for (uint32_t i = 0; i < LEARNT_MAX_FILES + 4; i++) {
            size_t n = setup_reply(setup, "V", i);
            struct learnt *l;
            learnt_new(&l, dir);
            learnt_on_setup(l, &disp, setup, n);
            note_font(l, "fixed");
            CHECK_EQ(learnt_save(l, true), 0);
            learnt_free(l);
        }
        CHECK_EQ(count_files(dir, LEARNT_FILE_SUFFIX), LEARNT_MAX_FILES);
    }

    TEST("That a client's QueryFont and ListFonts replies are learnt, an MSB client's are not, and asking again moves one first") {
        struct learnt *l;
        struct predictor *p;
        learnt_new(&l, NULL);
        predict_new(&p);
        struct predict_questions pq = { 0 };
        struct msg_class cls = { .kind = MSG_REQUEST };
        /* OpenFont "fixed" as fid 0x400001, then QueryFont of it (seq 2). */
        uint8_t open[20] = { 45, 0, 5, 0, 1, 0, 0x40, 0, 5, 0, 0, 0, 'f', 'i', 'x', 'e', 'd' };
        uint8_t query[8] = { 47, 0, 2, 0, 1, 0, 0x40, 0 };
        cls.major = 45;
        predict_ask(&pq, &cls, open, sizeof open, 1, false);
        predict_track(p, &pq, &cls, open, sizeof open, false);
        cls.major = 47;
        predict_ask(&pq, &cls, query, sizeof query, 2, false);
        uint8_t lf[64];
        size_t n = list_fonts(lf, "*", 5);
        cls.major = 49;
        predict_ask(&pq, &cls, lf, n, 3, false);
        uint8_t reply[64] = { 1 };
        struct msg_class rc = { .kind = MSG_REPLY, .major = 47 };
        learnt_on_reply(l, &pq, &rc, 2, reply, 32, false);
        rc.major = 49;
        learnt_on_reply(l, &pq, &rc, 3, reply, 32, true); /* MSB: not kept */
        CHECK_EQ(learnt_count(l), 1);
        learnt_on_reply(l, &pq, &rc, 3, reply, 32, false);
        CHECK_EQ(learnt_count(l), 2);
        CHECK(is_font(l, 1, "fixed"));
        CHECK(learnt_at(l, 0)->kind == LEARNT_LIST_FONTS && learnt_at(l, 0)->len == n);
        cls.major = 47; /* QueryFont again: moves the font first */
        learnt_on_request(l, &pq, &cls, query, sizeof query, false);
        CHECK(is_font(l, 0, "fixed"));
        predict_questions_free(&pq);
        predict_free(p);
        learnt_free(l);
    }

    TEST("That a FONT fact lets the app side answer QueryFont of a font opened by that name, and only that") {
        struct predictor *p;
        predict_new(&p);
        struct predict_questions pq = { 0 };
        uint8_t reply[40] = { 1, 0, 0, 0, 2, 0, 0, 0, 42 };
        struct buf fact = { 0 };
        CHECK_EQ(predict_fact_reply(&fact, FACT_FONT, false, (const uint8_t *)"fixed", 5, reply, sizeof reply), 0);
        CHECK_EQ(predict_on_fact(p, buf_head(&fact), fact.len), 0);
        fact.data[fact.off + fact.len - 40] = 7; /* a reply that is not one: refused */
        CHECK(predict_on_fact(p, buf_head(&fact), fact.len) != 0);
        uint8_t open[20] = { 45, 0, 5, 0, 1, 0, 0x40, 0, 5, 0, 0, 0, 'f', 'i', 'x', 'e', 'd' };
        uint8_t query[8] = { 47, 0, 2, 0, 1, 0, 0x40, 0 };
        struct msg_class cls = { .kind = MSG_REQUEST, .major = 45 };
        predict_track(p, &pq, &cls, open, sizeof open, false);
        cls.major = 47;
        struct buf out = { 0 };
        CHECK(predict_answer(p, &pq, &cls, query, sizeof query, 9, false, &out));
        CHECK(out.len == sizeof reply && ld16(buf_head(&out) + 2, false) == 9 && buf_head(&out)[8] == 42);
        buf_clear(&out);
        open[12] = 'F'; /* another name: not known */
        cls.major = 45;
        predict_track(p, &pq, &cls, open, sizeof open, false);
        cls.major = 47;
        CHECK(!predict_answer(p, &pq, &cls, query, sizeof query, 10, false, &out));
        CHECK(!predict_answer(p, &pq, &cls, query, sizeof query, 10, true, &out)); /* nor to an MSB client */
        buf_free(&out);
        buf_free(&fact);
        predict_questions_free(&pq);
        predict_free(p);
    }

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return test_summary();
}
