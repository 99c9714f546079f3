/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the /sys/power handoff, dm device numbers and hibernate checks on a fake /sys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/swap.h>
#include <cmocka.h>

#include "args.h"
#include "dev/dm.h"
#include "faketree.h"
#include "system/handoff.h"
#include "hibernate/hibcheck.h"
#include "system/power.h"

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
        /* unfreeable 250000+20000+30000+15000+5000 = 320000 KiB; in use 300000; image_size 800000 */
        ft_puts("/proc/meminfo", "MemTotal:        2000000 kB\nMemFree:  100 kB\nMemAvailable:  1700000 kB\n"
                                 "AnonPages:      250000 kB\nShmem:    20000 kB\nKernelStack:  5000 kB\n"
                                 "PageTables:     15000 kB\nSecPageTables:  99999 kB\nSReclaimable: 77777 kB\n"
                                 "SUnreclaim:     30000 kB\nShmemHugePages: 0 kB\n");
        ft_puts("/sys/power/image_size", "819200000\n");
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

/* What thaw setup leaves: thaw.conf with device=, key=, name=. */
static struct thaw_args configured(void)
{
        struct thaw_args a;

        args_init(&a);
        assert_int_equal(args_parse_conf("device=UUID=1234\nkey=fwcfg:opt/thaw/key\nname=thaw-swap\n", &a,
                                         NULL, 0), 0);
        return a;
}

static void test_hibcheck_ready(void **state)
{
        struct thaw_args a = configured();
        struct hibcheck h;

        (void)state;
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 0);
        assert_string_equal(h.problems, "");
        assert_int_equal(h.maj, 253);
        assert_int_equal(h.min, 3);
        assert_int_equal(h.free_kib, 1048572 - 1024);
        assert_int_equal(h.needed_kib, 320000);
}

static void test_hibcheck_problems(void **state)
{
        struct thaw_args a = configured(), other = configured();
        struct hibcheck h;

        (void)state;
        snprintf(other.name, sizeof(other.name), "nothere");
        assert_int_equal(hibcheck_run(ft_root, &other, "shutdown", &h), 1);
        assert_non_null(strstr(h.problems, "/dev/mapper/nothere is not active"));

        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 1);
        assert_non_null(strstr(h.problems, "is not active swap: run swapon /dev/mapper/thaw-swap"));

        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/dm-3 partition 300000 100000 -2\n");
        ft_puts("/sys/power/disk", "[disabled]\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 2);
        assert_non_null(strstr(h.problems, "about 313 MiB needed, 195 MiB free"));
        assert_non_null(strstr(h.problems, "hibernation is not available"));

        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/dm-3 partition 1048572 0 -2\n");
        ft_puts("/sys/power/disk", "[shutdown] reboot\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "platform", &h), 1);
        assert_non_null(strstr(h.problems, "mode platform is not offered"));
}

/* The next boot would not resume: each reason is one line saying what to fix. */
static void test_hibcheck_next_boot(void **state)
{
        struct thaw_args a;
        struct hibcheck h;
        int lines = 0;

        (void)state;
        a = configured();
        assert_int_equal(args_parse_cmdline("root=/dev/vda rd.thaw=0 nohibernate resume_offset=34816", &a,
                                            NULL, 0), 0);
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 3);
        assert_non_null(strstr(h.problems, "rd.thaw=0 is on the kernel command line: the next boot would "
                                           "not resume; remove it"));
        assert_non_null(strstr(h.problems, "nohibernate is on the kernel command line: the next boot "
                                           "would not resume; remove it"));
        /* resume_offset= means a swap file, and no active one starts at that page here. */
        assert_non_null(strstr(h.problems, "no active swap file on /dev/mapper/thaw-swap starts at "
                                           "resume_offset=34816: swapon the file thaw setup --swapfile made"));

        a = configured();
        assert_int_equal(args_parse_cmdline("hibernate=noresume", &a, NULL, 0), 0);
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 1);
        assert_non_null(strstr(h.problems, "hibernate=noresume is on the kernel command line"));

        args_init(&a); /* no thaw.conf, nothing on the command line */
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 2);
        assert_non_null(strstr(h.problems, "no device configured: add device= to /etc/thaw/thaw.conf or "
                                           "rd.thaw.device= to the kernel command line"));
        assert_non_null(strstr(h.problems, "no key source configured: add key= to /etc/thaw/thaw.conf or "
                                           "rd.thaw.key= to the kernel command line"));
        /* One line per problem. */
        for (const char *p = h.problems; (p = strchr(p, '\n')); p++)
                lines++;
        assert_int_equal(lines, 2);
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
                cmocka_unit_test(test_power_swapon_flags),
                cmocka_unit_test_setup_teardown(test_power_image_estimate, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_ready, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_problems, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_next_boot, setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
