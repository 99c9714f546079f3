/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the shared monotonic clock and sleep every wait in thaw is measured with. */
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

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sleep_measured),
                cmocka_unit_test(test_sleep_nothing),
                cmocka_unit_test(test_monotonic),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
