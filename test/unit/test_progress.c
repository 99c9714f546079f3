/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the swap-in's progress bar text: the bar, MiB done, MiB/s and the time left. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "swapin/progress.h"

static void test_midway(void **state)
{
        char line[PROGRESS_LINE_MAX];
        int n;

        (void)state;
        /* 120 of 400 MiB in 12 s: 10 MiB/s, 280 MiB left, 28 s. */
        n = progress_format(line, sizeof(line), 120 * 1024, 400 * 1024, 12.0);
        assert_int_equal(n, (int)strlen(line));
        assert_string_equal(line, "[#########.....................]  120 / 400 MiB    10.0 MiB/s   28 s left");
}

static void test_start_and_end(void **state)
{
        char line[PROGRESS_LINE_MAX];

        (void)state;
        /* Nothing done yet: no rate, no guess at the time left. */
        progress_format(line, sizeof(line), 0, 400 * 1024, 0.0);
        assert_string_equal(line, "[..............................]    0 / 400 MiB     0.0 MiB/s");
        progress_format(line, sizeof(line), 0, 400 * 1024, 3.0);
        assert_string_equal(line, "[..............................]    0 / 400 MiB     0.0 MiB/s");
        /* All done: a full bar, the average rate, no time left. */
        progress_format(line, sizeof(line), 400 * 1024, 400 * 1024, 8.0);
        assert_string_equal(line, "[##############################]  400 / 400 MiB    50.0 MiB/s");
        /* More counted than planned: never past the end, nor faster than what was planned. */
        progress_format(line, sizeof(line), 500 * 1024, 400 * 1024, 8.0);
        assert_string_equal(line, "[##############################]  400 / 400 MiB    50.0 MiB/s");
        /* Nothing to do at all: a full bar. */
        progress_format(line, sizeof(line), 0, 0, 1.0);
        assert_string_equal(line, "[##############################]    0 / 0 MiB     0.0 MiB/s");
}

static void test_minutes_and_stall(void **state)
{
        char line[PROGRESS_LINE_MAX];

        (void)state;
        /* 1 MiB/s with 599 MiB left: 10 min. */
        progress_format(line, sizeof(line), 1024, 600 * 1024, 1.0);
        assert_string_equal(line, "[..............................]    1 / 600 MiB     1.0 MiB/s   10 min left");
        /* 1 KiB in a day, 1 TiB to go: capped, the line keeps its width. */
        assert_true(progress_format(line, sizeof(line), 1, 1ULL << 30, 86400.0) > 0);
        assert_non_null(strstr(line, "99999 min left"));
}

static void test_too_small(void **state)
{
        char line[20];

        (void)state;
        assert_int_equal(progress_format(line, sizeof(line), 1024, 2048, 1.0), -ENOSPC);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_midway),
                cmocka_unit_test(test_start_and_end),
                cmocka_unit_test(test_minutes_and_stall),
                cmocka_unit_test(test_too_small),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
