/* test.h -- the unit-test harness: named checks, one PASS/FAIL line each, a summary line.
 * Every test binary prints "N passed, N failed" last; tests/run.sh adds them up. */
#ifndef TINCAN_TEST_H
#define TINCAN_TEST_H

#include <stdio.h>
#include <string.h>

static int test_passed_, test_failed_, test_current_failed_;
static const char *test_current_;

/* CHECK fails the current test but lets it go on, so one run shows every broken expectation. */
#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        test_current_failed_ = 1; } } while (0)
#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); if (a_ != b_) { \
        fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, a_, #b, b_); \
        test_current_failed_ = 1; } } while (0)

/* TEST("That ...") { body } runs body once and reports it by its sentence. */
#define TEST(sentence) for (int once_ = test_begin_(sentence); once_; once_ = test_end_())

static inline int test_begin_(const char *name) { test_current_ = name; test_current_failed_ = 0; return 1; }
static inline int test_end_(void)
{
    if (test_current_failed_) { test_failed_++; printf("FAIL: %s\n", test_current_); }
    else { test_passed_++; printf("PASS: %s\n", test_current_); }
    fflush(stdout);
    return 0;
}
static inline int test_summary(void)
{
    printf("%d passed, %d failed\n", test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}

#endif
