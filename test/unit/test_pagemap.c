/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the pagemap reader (pagemap.c) on fixture files: entries decoded, mappings scanned. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakepagemap.h"
#include "faketree.h"
#include "swapin/pagemap.h"

static void test_entry_decode(void **state)
{
        unsigned type = 99;
        uint64_t off = 99;

        (void)state;
        assert_int_equal(pagemap_swap_entry(SWP(0, 12345), &type, &off), 1);
        assert_int_equal(type, 0);
        assert_int_equal(off, 12345);
        assert_int_equal(pagemap_swap_entry(SWP(3, (1ULL << 50) - 1), &type, &off), 1);
        assert_int_equal(type, 3);
        assert_int_equal(off, (1ULL << 50) - 1);
        /* Soft-dirty and exclusive bits (55, 56) are not part of the offset. */
        assert_int_equal(pagemap_swap_entry(SWP(1, 7) | (1ULL << 55) | (1ULL << 56), &type, &off), 1);
        assert_int_equal(off, 7);
        type = 99;
        assert_int_equal(pagemap_swap_entry(0, &type, &off), 0);
        assert_int_equal(pagemap_swap_entry(PRESENT(42), &type, &off), 0);
        /* A migration entry (a high swap type) is not a page in a swap area. */
        assert_int_equal(pagemap_swap_entry(SWP(30, 5), &type, &off), 0);
        assert_int_equal(type, 99);
        /* Without CAP_SYS_ADMIN the kernel reports the bit but no type and offset. */
        assert_int_equal(pagemap_swap_entry(PAGEMAP_SWAPPED, &type, &off), 1);
        assert_int_equal(off, 0);
}

static void test_scan_fixture(void **state)
{
        struct swapped_list l = { 0 };
        const uint64_t heap[] = { PRESENT(1), SWP(0, 500), SWP(0, 501), 0, SWP(0, 100) };
        const uint64_t shared[] = { SWP(0, 7) }, none[] = { SWP(0, 8) }, stack[] = { SWP(1, 3) };

        (void)state;
        /* smaps as the kernel writes it; the stack's lines have no Swap: (read as before). */
        ft_puts("/proc/42/smaps",
                "00400000-00405000 rw-p 00000000 00:00 0                          [heap]\n"
                "Size:                 20 kB\n"
                "Swap:                 12 kB\n"
                "SwapPss:              12 kB\n"
                "VmFlags: rd wr mr mw me ac sd\n"
                "00500000-00501000 rw-s 00000000 00:05 17                         /dev/zero (deleted)\n"
                "Swap:                  4 kB\n"
                "00600000-00601000 ---p 00000000 00:00 0 \n"
                "Swap:                  4 kB\n"
                "7ffff000-80000000 rw-p 00000000 00:00 0                          [stack]\n"
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0          [vsyscall]\n"
                "Swap:                  0 kB\n");
        put_entries("/proc/42/pagemap", 0x400000, heap, 5);
        put_entries("/proc/42/pagemap", 0x500000, shared, 1);
        put_entries("/proc/42/pagemap", 0x600000, none, 1);
        put_entries("/proc/42/pagemap", 0x7ffff000, stack, 1);

        assert_int_equal(pagemap_scan(ft_root, 42, 7, 1, &l), 4);
        assert_int_equal(l.n, 4);
        assert_int_equal(l.v[0].addr, 0x401000);
        assert_int_equal(l.v[0].offset, 500);
        assert_int_equal(l.v[1].addr, 0x402000);
        assert_int_equal(l.v[2].addr, 0x404000);
        assert_int_equal(l.v[2].offset, 100);
        assert_int_equal(l.v[3].addr, 0x7ffff000);
        assert_int_equal(l.v[3].type, 1);
        for (size_t i = 0; i < l.n; i++) {
                assert_int_equal(l.v[i].proc, 7);
                assert_int_equal(l.v[i].cls, 1);
        }
        /* A process that is gone: an error, and the list is unchanged. */
        assert_int_equal(pagemap_scan(ft_root, 43, 8, 1, &l), -ENOENT);
        assert_int_equal(l.n, 4);
        swapped_list_free(&l);
}

/* A maps line longer than the reader's line buffer does not derail the next line. */
static void test_scan_long_path(void **state)
{
        struct swapped_list l = { 0 };
        char maps[2048];
        const uint64_t e[] = { SWP(0, 9) };

        (void)state;
        snprintf(maps, sizeof(maps), "00400000-00401000 rw-p 00000000 00:00 0 /%01000d\n"
                                     "Swap:                  0 kB\n"
                                     "00800000-00801000 rw-p 00000000 00:00 0\n"
                                     "Swap:                  4 kB\n", 0);
        ft_puts("/proc/5/smaps", maps);
        put_entries("/proc/5/pagemap", 0x800000, e, 1);
        assert_int_equal(pagemap_scan(ft_root, 5, 0, 0, &l), 1);
        assert_int_equal(l.v[0].addr, 0x800000);
        swapped_list_free(&l);
}

/*
 * A mapping whose smaps says Swap: 0 kB is not read at all, however large: its pagemap here holds
 * swap entries that would be listed if it were. A mapping with swap next to it still is.
 */
static void test_scan_skips_unswapped(void **state)
{
        struct swapped_list l = { 0 };
        const uint64_t decoy[] = { SWP(0, 1), SWP(0, 2) }, real[] = { PRESENT(3), SWP(0, 77) };

        (void)state;
        ft_puts("/proc/9/smaps",
                "10000000-10010000000 rw-p 00000000 00:00 0 \n"
                "Size:           1073741824 kB\n"
                "Rss:                   8 kB\n"
                "Swap:                  0 kB\n"
                "SwapPss:               0 kB\n"
                "VmFlags: rd wr mr mw me nr sd\n"
                "7f0000000000-7f0000002000 rw-p 00000000 00:00 0 \n"
                "Size:                  8 kB\n"
                "Swap:                  4 kB\n"
                "VmFlags: rd wr mr mw me ac sd\n");
        put_entries("/proc/9/pagemap", 0x10000000, decoy, 2);
        put_entries("/proc/9/pagemap", 0x7f0000000000, real, 2);
        assert_int_equal(pagemap_scan(ft_root, 9, 0, 1, &l), 1);
        assert_int_equal(l.v[0].addr, 0x7f0000001000);
        assert_int_equal(l.v[0].offset, 77);
        swapped_list_free(&l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_entry_decode),
                cmocka_unit_test_setup_teardown(test_scan_fixture, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_scan_long_path, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_scan_skips_unswapped, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
