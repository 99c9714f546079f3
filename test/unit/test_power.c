/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of power.c on a fake /sys and /proc: hibernation offered, active swap, meminfo, the image estimate. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/swap.h>
#include <cmocka.h>

#include "fakesys.h"
#include "system/power.h"

static void test_power_available(void **state)
{
        char why[256];

        (void)state;
        assert_int_equal(power_hibernation_available(ft_root, why, sizeof(why)), 1);
        assert_int_equal(power_mode_offered(ft_root, "platform"), 1);
        assert_int_equal(power_mode_offered(ft_root, "shutdown"), 1);
        assert_int_equal(power_mode_offered(ft_root, "plat"), 0);
        ft_puts("/sys/power/disk", "[disabled]\n");
        assert_int_equal(power_hibernation_available(ft_root, why, sizeof(why)), 0);
        assert_non_null(strstr(why, "[disabled]"));
        ft_puts("/sys/power/disk", "[shutdown] reboot\n");
        ft_puts("/sys/power/state", "freeze mem\n");
        assert_int_equal(power_hibernation_available(ft_root, why, sizeof(why)), 0);
        assert_non_null(strstr(why, "disk"));
        ft_puts("/sys/power/state", "freeze mem disk\n");
        assert_int_equal(power_hibernation_available(ft_root, why, sizeof(why)), 1);
}

/* swapoff and swapon again keep a priority the admin set; an automatic one cannot be asked for. */
static void test_power_swapon_flags(void **state)
{
        (void)state;
        assert_int_equal(power_swapon_flags(7), SWAP_FLAG_PREFER | 7);
        assert_int_equal(power_swapon_flags(0), SWAP_FLAG_PREFER);
        assert_int_equal(power_swapon_flags(32767), SWAP_FLAG_PREFER | 32767);
        assert_int_equal(power_swapon_flags(99999), SWAP_FLAG_PREFER | 32767);
        assert_int_equal(power_swapon_flags(-2), 0);
}

static void test_power_swaps_meminfo(void **state)
{
        struct power_meminfo m;
        struct power_swap s;

        (void)state;
        assert_int_equal(power_swap_find(ft_root, "dm-3", "/dev/mapper/thaw-swap", &s), 0);
        assert_int_equal(s.size_kib, 1048572);
        assert_int_equal(s.used_kib, 1024);
        assert_int_equal(power_swap_find(ft_root, "dm-0", "/dev/mapper/other", &s), -ENOENT);
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/mapper/thaw-swap partition 10 0 -2\n");
        assert_int_equal(power_swap_find(ft_root, "dm-3", "/dev/mapper/thaw-swap", &s), 0);
        assert_int_equal(s.size_kib, 10);
        assert_int_equal(s.priority, -2);
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/mapper/thaw-swap partition 10 0 7\n");
        assert_int_equal(power_swap_find(ft_root, "dm-3", "/dev/mapper/thaw-swap", &s), 0);
        assert_int_equal(s.priority, 7);
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(m.mem_total_kib, 2000000);
        assert_int_equal(m.anon_kib, 250000);
        assert_int_equal(m.shmem_kib, 20000); /* not ShmemHugePages */
        assert_int_equal(m.pagetables_kib, 15000); /* not SecPageTables */
        assert_int_equal(power_image_estimate_kib(&m), 320000);
}

/* Another active swap that Linux would use before thaw's, or as much: zram and lower priorities aside. */
static void test_power_swap_rival(void **state)
{
        const char *mine[] = { "/dev/dm-3", "/dev/mapper/thaw-swap", "", NULL };
        struct power_rival rv = { .count = 99 };

        (void)state;
        /* Only thaw's swap. */
        assert_int_equal(power_swap_rival(ft_root, mine, -2, &rv), 0);
        assert_int_equal(rv.count, 99); /* untouched */
        ft_puts("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n"
                               "/dev/dm-3 partition 1048572 0 -2\n"
                               "/dev/zram0 partition 500000 0 100\n"
                               "/swap\\040file file 400000 1000 -3\n");
        /* zram (memory, in the image itself) and a lower priority are no rivals. */
        assert_int_equal(power_swap_rival(ft_root, mine, -2, &rv), 0);
        /* thaw's swap at the lowest priority: the file outranks it, its name unescaped. */
        assert_int_equal(power_swap_rival(ft_root, mine, -4, &rv), 1);
        assert_string_equal(rv.name, "/swap file");
        assert_int_equal(rv.priority, -3);
        assert_int_equal(rv.free_kib, 399000);
        assert_int_equal(rv.count, 1);
        /* The same priority shares the swap-out in turns: a rival too; the highest is named. */
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n"
                               "/dev/vdb2 partition 1000 0 5\n"
                               "/dev/mapper/thaw-swap partition 1048572 0 5\n"
                               "/dev/vdc partition 2000 500 10\n");
        assert_int_equal(power_swap_rival(ft_root, mine, 5, &rv), 1);
        assert_string_equal(rv.name, "/dev/vdc");
        assert_int_equal(rv.priority, 10);
        assert_int_equal(rv.count, 2);
        assert_int_equal(power_swap_rival(ft_root, mine, 11, &rv), 0);
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n");
        assert_int_equal(power_swap_rival(ft_root, mine, -2, &rv), 0);
}

/* max(AnonPages+Shmem+SUnreclaim+PageTables+KernelStack, min(image_size, MemTotal-MemAvailable)) */
static void test_power_image_estimate(void **state)
{
        struct power_meminfo m;
        char path[PATH_MAX];

        (void)state;
        /* The unfreeable part wins over a smaller use of memory. */
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(m.image_size_kib, 800000);
        assert_int_equal(power_image_estimate_kib(&m), 320000);
        /* Much in use (page cache): the kernel shrinks it to image_size, no further. */
        ft_puts("/proc/meminfo", "MemTotal: 2000000 kB\nMemAvailable: 500000 kB\nAnonPages: 250000 kB\n"
                                 "Shmem: 20000 kB\nSUnreclaim: 30000 kB\nPageTables: 15000 kB\n"
                                 "KernelStack: 5000 kB\n");
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(power_image_estimate_kib(&m), 800000);
        /* ...and to what is in use when image_size is larger. */
        ft_puts("/sys/power/image_size", "1900000000\n");
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(power_image_estimate_kib(&m), 1500000);
        /* image_size 0: "as small as possible", which is the unfreeable part. */
        ft_puts("/sys/power/image_size", "0\n");
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(power_image_estimate_kib(&m), 320000);
        /* No image_size file: only the memory in use bounds it. */
        ft_abs(path, sizeof(path), "/sys/power/image_size");
        unlink(path);
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(power_image_estimate_kib(&m), 1500000);
        /* Old kernels: the optional fields count as 0 (MemAvailable too: all of MemTotal in use). */
        ft_puts("/sys/power/image_size", "409600000\n");
        ft_puts("/proc/meminfo", "MemTotal: 2000000 kB\nAnonPages: 300000 kB\nShmem: 20000 kB\n");
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(power_image_estimate_kib(&m), 400000);
        ft_puts("/proc/meminfo", "MemTotal: 2000000 kB\nShmem: 20000 kB\n");
        assert_int_equal(power_meminfo(ft_root, &m), -ENODATA);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_power_available, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_power_swaps_meminfo, fakesys_setup, ft_teardown),
                cmocka_unit_test(test_power_swapon_flags),
                cmocka_unit_test_setup_teardown(test_power_swap_rival, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_power_image_estimate, fakesys_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
