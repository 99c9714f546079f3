/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the /sys/power handoff (handoff.c) on a fake /sys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakesys.h"
#include "system/handoff.h"

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

/* What the kernel would write an image to now. */
static void test_handoff_read(void **state)
{
        unsigned maj = 1, min = 1;
        uint64_t off = 1;
        char path[PATH_MAX];

        (void)state;
        assert_int_equal(handoff_read(ft_root, &maj, &min, &off), 0);
        assert_true(maj == 0 && min == 0 && off == 0);
        assert_int_equal(handoff_write(ft_root, 253, 3, 34816), 0);
        assert_int_equal(handoff_read(ft_root, &maj, &min, &off), 0);
        assert_true(maj == 253 && min == 3 && off == 34816);
        ft_puts("/sys/power/resume", "garbage\n");
        assert_int_equal(handoff_read(ft_root, &maj, &min, &off), -EINVAL);
        ft_puts("/sys/power/resume", "8:2x\n");
        assert_int_equal(handoff_read(ft_root, &maj, &min, &off), -EINVAL);
        assert_true(maj == 253 && min == 3 && off == 34816); /* untouched on failure */
        ft_puts("/sys/power/resume", "8:2\n");
        ft_abs(path, sizeof(path), "/sys/power/resume_offset");
        unlink(path);
        assert_int_equal(handoff_read(ft_root, &maj, &min, &off), 0);
        assert_true(maj == 8 && min == 2 && off == 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_handoff_writes, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_handoff_read, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_handoff_missing_sysfs, fakesys_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
