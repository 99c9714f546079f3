/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the swap-in plan (swapplan.c): the ordering, the ranges, the floor, what is still in swap. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakepagemap.h"
#include "faketree.h"
#include "system/power.h"
#include "swapin/swapplan.h"

static void test_sort_order(void **state)
{
        struct swapped_page v[] = {
                pg(1, 0x9000, 0, 30, 1), pg(2, 0x1000, 1, 1, 1), pg(1, 0x1000, 0, 10, 1),
                pg(3, 0x5000, 0, 99, 0), pg(2, 0x8000, 0, 20, 1),
        };

        (void)state;
        swapplan_sort(v, 5);
        /* --first pages lead; then swap area 0 front to back, then area 1. */
        assert_int_equal(v[0].proc, 3);
        assert_int_equal(v[1].offset, 10);
        assert_int_equal(v[2].offset, 20);
        assert_int_equal(v[3].offset, 30);
        assert_int_equal(v[4].type, 1);
}

static void test_ranges(void **state)
{
        /* Sorted by offset: 1 has 0x1000.. at 10,11,12; 2 interleaves at 13; 1 again at 14 (not adjacent). */
        struct swapped_page v[] = {
                pg(1, 0x1000, 0, 10, 1), pg(1, 0x2000, 0, 11, 1), pg(1, 0x3000, 0, 12, 1),
                pg(2, 0x7000, 0, 13, 1), pg(1, 0x4000, 0, 14, 1), pg(1, 0x9000, 0, 15, 1),
                pg(2, 0x8000, 0, 16, 1),
        };
        struct swap_range r[7];
        size_t n;

        (void)state;
        n = swapplan_ranges(v, 7, r);
        assert_int_equal(n, 5);
        /* Process 1's ranges first, each in swap order; then process 2's. */
        assert_int_equal(r[0].proc, 1);
        assert_int_equal(r[0].addr, 0x1000);
        assert_int_equal(r[0].pages, 3);
        assert_int_equal(r[1].addr, 0x4000);
        assert_int_equal(r[1].pages, 1);
        assert_int_equal(r[2].addr, 0x9000);
        assert_int_equal(r[3].proc, 2);
        assert_int_equal(r[3].addr, 0x7000);
        assert_int_equal(r[4].addr, 0x8000);
        assert_int_equal(swapplan_ranges(v, 0, r), 0);
}

/* Contiguous in memory but not in swap (or the other way round) is not one range. */
static void test_ranges_need_both(void **state)
{
        struct swapped_page v[] = { pg(1, 0x1000, 0, 10, 1), pg(1, 0x2000, 0, 12, 1),
                                    pg(1, 0x5000, 0, 13, 1) };
        struct swap_range r[3];

        (void)state;
        assert_int_equal(swapplan_ranges(v, 3, r), 3);
}

static void test_floor(void **state)
{
        uint64_t kib = 0;

        (void)state;
        assert_int_equal(swapplan_room_kib(500000, 100000, 0), 400000);
        assert_int_equal(swapplan_room_kib(500000, 100000, 350000), 50000);
        assert_int_equal(swapplan_room_kib(500000, 100000, 400000), 0);
        assert_int_equal(swapplan_room_kib(500000, 100000, 900000), 0);
        assert_int_equal(swapplan_room_kib(90000, 100000, 0), 0);
        /* A tenth of RAM, at least 64 MiB, never more than half. */
        assert_int_equal(swapplan_floor_default_kib(1048576), 104857);
        assert_int_equal(swapplan_floor_default_kib(262144), 65536);
        assert_int_equal(swapplan_floor_default_kib(100000), 50000);

        assert_int_equal(swapplan_parse_size("128M", 1048576, &kib), 0);
        assert_int_equal(kib, 131072);
        assert_int_equal(swapplan_parse_size("1G", 1048576, &kib), 0);
        assert_int_equal(kib, 1048576);
        assert_int_equal(swapplan_parse_size("4096", 1048576, &kib), 0);
        assert_int_equal(kib, 4);
        assert_int_equal(swapplan_parse_size("25%", 1048576, &kib), 0);
        assert_int_equal(kib, 262144);
        assert_int_equal(swapplan_parse_size("101%", 1048576, &kib), -ERANGE);
        assert_int_equal(swapplan_parse_size("", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("M", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("12X", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("-5M", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("99999999999999999T", 1048576, &kib), -ERANGE);
}

static void test_swapped(void **state)
{
        struct power_meminfo m = { 0 };

        (void)state;
        ft_puts("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 300000 kB\nAnonPages: 600000 kB\n"
                                 "Shmem: 1000 kB\nSwapCached: 200000 kB\nSwapTotal: 2000000 kB\n"
                                 "SwapFree: 1500000 kB\n");
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        /* 500 MB of swap in use, 200 MB of it also in RAM: 300 MB still only in swap. */
        assert_int_equal(swapplan_swapped_kib(&m), 300000);
        m.swap_cached_kib = 600000;
        assert_int_equal(swapplan_swapped_kib(&m), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sort_order),
                cmocka_unit_test(test_ranges),
                cmocka_unit_test(test_ranges_need_both),
                cmocka_unit_test(test_floor),
                cmocka_unit_test_setup_teardown(test_swapped, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
