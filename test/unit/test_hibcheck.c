/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the hibernate checks (hibcheck.c): can the next boot resume, on a fake /sys and /proc. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "args.h"
#include "fakesys.h"
#include "hibernate/hibcheck.h"

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

/* thaw provision changed thaw.conf, and the initramfs was not rebuilt since. */
static void test_hibcheck_initramfs_stale(void **state)
{
        struct thaw_args a = configured();
        struct hibcheck h;

        (void)state;
        ft_puts(ARGS_STALE_PATH, "");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 1);
        assert_non_null(strstr(h.problems, "the initramfs does not carry the current /etc/thaw/thaw.conf yet"));
        assert_non_null(strstr(h.problems, "run thaw provision"));
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

/* Only thaw's swap takes the memory and the image: another swap as high or higher is refused. */
static void test_hibcheck_other_swap(void **state)
{
        struct thaw_args a = configured();
        struct hibcheck h;

        (void)state;
        /* A lower priority and zram are fine. */
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/dm-3 partition 1048572 0 -2\n"
                               "/dev/zram0 partition 400000 0 100\n/dev/vdb2 partition 400000 0 -3\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 0);
        assert_int_equal(h.priority, -2);
        assert_false(h.resume_elsewhere);
        /* A swap set up by fstab with pri=5 outranks thaw's swap at the kernel's -2. */
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/dm-3 partition 1048572 0 -2\n"
                               "/dev/vdb2 partition 400000 0 5\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 1);
        assert_non_null(strstr(h.problems, "/dev/vdb2 is active swap of priority 5, not below thaw's swap "
                                           "(-2): memory pushed out before the image is made would go "
                                           "there, and systemctl hibernate would write the image there; "
                                           "swapoff it, or give thaw's swap the highest priority"));
        /* thaw's swap given the highest priority: ready. */
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/dev/dm-3 partition 1048572 0 32767\n"
                               "/dev/vdb2 partition 400000 0 5\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 0);
        /* resume= naming another swap is said, not refused: thaw hibernate writes its own. */
        ft_puts("/sys/power/resume", "254:18\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 0);
        assert_true(h.resume_elsewhere);
        assert_string_equal(h.resume_now, "254:18 offset 0");
        ft_puts("/sys/power/resume", "253:3\n");
        assert_int_equal(hibcheck_run(ft_root, &a, "shutdown", &h), 0);
        assert_false(h.resume_elsewhere);
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
                cmocka_unit_test_setup_teardown(test_hibcheck_ready, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_initramfs_stale, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_problems, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_other_swap, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_hibcheck_next_boot, fakesys_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
