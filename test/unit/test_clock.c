/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the shared monotonic clock and sleep every wait in thaw is measured with, and its rate limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/clock.h"

static void test_sleep_measured(void **state)
{
        int64_t t0, took;

        (void)state;
        t0 = clock_now_ms();
        assert_true(t0 >= 0);
        clock_sleep_ms(120);
        took = clock_now_ms() - t0;
        assert_true(took >= 120 && took < 600);
}

static void test_sleep_nothing(void **state)
{
        int64_t t0 = clock_now_ms();

        (void)state;
        clock_sleep_ms(0);
        clock_sleep_ms(-5000); /* a deadline already past: no wait, no huge unsigned sleep */
        assert_true(clock_now_ms() - t0 < 50);
}

static void test_monotonic(void **state)
{
        int64_t prev = clock_now_ms();

        (void)state;
        for (int i = 0; i < 1000; i++) {
                int64_t now = clock_now_ms();

                assert_true(now >= prev);
                prev = now;
        }
}

/* Due once an interval has passed since the start or since it was last due, never twice in one. */
static void test_every_at(void **state)
{
        struct clock_every e = { .interval_ms = 5000, .next_ms = 1000 + 5000 }; /* started at 1000 */

        (void)state;
        assert_false(clock_every_due_at(&e, 1000));
        assert_false(clock_every_due_at(&e, 5999));
        assert_true(clock_every_due_at(&e, 6000));
        assert_false(clock_every_due_at(&e, 6000));
        assert_false(clock_every_due_at(&e, 10999));
        /* Late (a long step between two looks): due, and the next interval counts from then. */
        assert_true(clock_every_due_at(&e, 14000));
        assert_false(clock_every_due_at(&e, 18999));
        assert_true(clock_every_due_at(&e, 19000));
}

/* On the real clock: not due at the start, due once the interval has passed, then not at once again. */
static void test_every_now(void **state)
{
        struct clock_every e;

        (void)state;
        clock_every_start(&e, 500);
        assert_false(clock_every_due(&e));
        clock_sleep_ms(510);
        assert_true(clock_every_due(&e));
        assert_false(clock_every_due(&e));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sleep_measured),
                cmocka_unit_test(test_sleep_nothing),
                cmocka_unit_test(test_monotonic),
                cmocka_unit_test(test_every_at),
                cmocka_unit_test(test_every_now),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
