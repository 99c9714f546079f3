/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the /sys/power handoff, dm device numbers and hibernate checks on a fake /sys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dm.h"
#include "faketree.h"
#include "handoff.h"
#include "hibcheck.h"
#include "power.h"

static void fake_dm(const char *kname, const char *name, const char *dev)
{
        char rel[128];

        snprintf(rel, sizeof(rel), "/sys/block/%s/dm/name", kname);
        ft_puts(rel, name);
        snprintf(rel, sizeof(rel), "/sys/block/%s/dev", kname);
        ft_puts(rel, dev);
}

static int setup(void **state)
{
        if (ft_setup(state) < 0)
                return -1;
        ft_puts("/sys/block/vda/dev", "254:0\n");
        fake_dm("dm-0", "other\n", "253:0\n");
        fake_dm("dm-3", "thaw-swap\n", "253:3\n");
        ft_puts("/sys/power/resume", "0:0\n");
        ft_puts("/sys/power/resume_offset", "0\n");
        ft_puts("/sys/power/disk", "[platform] shutdown reboot suspend test_resume\n");
        ft_puts("/sys/power/state", "freeze mem disk\n");
        ft_puts("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                               "/dev/dm-3                               partition\t1048572\t\t1024\t\t-2\n");
        ft_puts("/proc/meminfo", "MemTotal:        2000000 kB\nMemFree:  100 kB\nAnonPages:    "
                                 "  300000 kB\nShmem:    20000 kB\nShmemHugePages: 0 kB\n");
        return 0;
}

static void test_dm_devnum(void **state)
{
        unsigned maj = 0, min = 0;
        char kname[DM_KNAME_MAX];

        (void)state;
        assert_int_equal(dm_devnum(ft_root, "thaw-swap", &maj, &min, kname, sizeof(kname)), 0);
        assert_int_equal(maj, 253);
        assert_int_equal(min, 3);
        assert_string_equal(kname, "dm-3");
        assert_int_equal(dm_devnum(ft_root, "other", &maj, &min, NULL, 0), 0);
        assert_int_equal(min, 0);
        maj = min = 99;
        assert_int_equal(dm_devnum(ft_root, "thaw", &maj, &min, NULL, 0), -ENOENT); /* no prefix match */
        assert_int_equal(maj, 99);
        fake_dm("dm-9", "broken\n", "garbage\n");
        assert_int_equal(dm_devnum(ft_root, "broken", &maj, &min, NULL, 0), -EINVAL);
}

/* One checked builder for /dev/mapper/NAME: a name cannot climb out of /dev/mapper or be cut. */
static void test_dm_mapper_path(void **state)
{
        char buf[DM_MAPPER_PATH_MAX], small[16] = "keep", longname[200];

        (void)state;
        assert_int_equal(dm_mapper_path("thaw-swap", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/dev/mapper/thaw-swap");
        assert_int_equal(dm_mapper_path("../sda", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path("..", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path("", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path(NULL, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path("thaw-swap", small, sizeof(small)), -ENAMETOOLONG);
        memset(longname, 'a', 127);
        longname[127] = '\0'; /* the longest name args_name_valid() lets in fits the buffer */
        assert_int_equal(dm_mapper_path(longname, buf, sizeof(buf)), 0);
        assert_int_equal(strlen(buf), 12 + 127);
        longname[127] = 'a';
        longname[128] = '\0';
        assert_int_equal(dm_mapper_path(longname, buf, sizeof(buf)), -EINVAL);
}

static void test_handoff_writes(void **state)
{
        (void)state;
        assert_int_equal(handoff_write(ft_root, 253, 3, 34816), 0);
        assert_string_equal(ft_read("/sys/power/resume_offset"), "34816\n");
        assert_string_equal(ft_read("/sys/power/resume"), "253:3\n");
        assert_int_equal(handoff_write(ft_root, 253, 3, 0), 0);
        assert_string_equal(ft_read("/sys/power/resume_offset"), "0\n");
}

static void test_handoff_missing_sysfs(void **state)
{
        char path[PATH_MAX];

        (void)state;
        ft_abs(path, sizeof(path), "/sys/power/resume_offset");
        unlink(path);
        /* Offset 0 needs no resume_offset file (kernels before 4.17); another offset does. */
        assert_int_equal(handoff_write(ft_root, 8, 16, 0), 0);
        assert_string_equal(ft_read("/sys/power/resume"), "8:16\n");
        assert_int_equal(handoff_write(ft_root, 8, 16, 5), -ENOENT);
        ft_abs(path, sizeof(path), "/sys/power/resume");
        unlink(path);
        assert_int_equal(handoff_write(ft_root, 8, 16, 0), -ENOENT);
        ft_puts("/sys/power/resume", "0:0\n"); /* sysfs files are never created by writing */
        ft_puts("/sys/power/resume_offset", "0\n");
        assert_false(ft_exists("/sys/power/resume_offset.tmp"));
}

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
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        assert_int_equal(m.mem_total_kib, 2000000);
        assert_int_equal(m.anon_kib, 300000);
        assert_int_equal(m.shmem_kib, 20000); /* not ShmemHugePages */
        assert_int_equal(power_image_estimate_kib(&m), 320000);
}

static void test_hibcheck_ready(void **state)
{
        struct hibcheck h;

        (void)state;
        assert_int_equal(hibcheck_run(ft_root, "thaw-swap", "shutdown", &h), 0);
        assert_string_equal(h.problems, "");
        assert_int_equal(h.maj, 253);
        assert_int_equal(h.min, 3);
        assert_int_equal(h.free_kib, 1048572 - 1024);
        assert_int_equal(h.needed_kib, 320000);
}

static void test_hibcheck_problems(void **state)
{
        struct hibcheck h;

        (void)state;
        assert_int_equal(hibcheck_run(ft_root, "nothere", "shutdown", &h), 1);
        assert_non_null(strstr(h.problems, "/dev/mapper/nothere is not active"));

        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n");
        assert_int_equal(hibcheck_run(ft_root, "thaw-swap", "shutdown", &h), 1);
        assert_non_null(strstr(h.problems, "is not active swap: run swapon /dev/mapper/thaw-swap"));

        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/dm-3 partition 300000 100000 -2\n");
        ft_puts("/sys/power/disk", "[disabled]\n");
        assert_int_equal(hibcheck_run(ft_root, "thaw-swap", "shutdown", &h), 2);
        assert_non_null(strstr(h.problems, "about 313 MiB needed, 195 MiB free"));
        assert_non_null(strstr(h.problems, "hibernation is not available"));

        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/dm-3 partition 1048572 0 -2\n");
        ft_puts("/sys/power/disk", "[shutdown] reboot\n");
        assert_int_equal(hibcheck_run(ft_root, "thaw-swap", "platform", &h), 1);
        assert_non_null(strstr(h.problems, "mode platform is not offered"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_dm_devnum, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_dm_mapper_path, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_handoff_writes, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_handoff_missing_sysfs, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_power_available, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_power_swaps_meminfo, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_ready, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_problems, setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
