/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the swap file checks (FIEMAP) on files in a temporary directory of the build host. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "swapfile.h"

/* FIEMAP needs a real file system (ext4, xfs, btrfs); tmpfs has none: then there is nothing to test. */
static int fiemap_works(const char *path)
{
        struct swapfile_layout l;

        return swapfile_layout(path, &l) != -EOPNOTSUPP;
}

static void test_allocated_file(void **state)
{
        struct swapfile_layout l;
        char path[PATH_MAX];

        (void)state;
        ft_abs(path, sizeof(path), "/swapfile");
        assert_int_equal(swapfile_create(path, 1 << 20), 0);
        if (!fiemap_works(path))
                skip();
        assert_int_equal(swapfile_layout(path, &l), 0);
        assert_string_equal(l.why, "");
        assert_int_equal(l.size, 1 << 20);
        assert_true(l.runs >= 1);
        assert_int_equal(l.physical % 4096, 0);
        assert_true(l.physical > 0);
        /* It is never made twice, nor through a link. */
        assert_int_equal(swapfile_create(path, 1 << 20), -EEXIST);
}

static void test_holes_refused(void **state)
{
        struct swapfile_layout l;
        char path[PATH_MAX];
        int fd;

        (void)state;
        ft_abs(path, sizeof(path), "/sparse");
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 1 << 20), 0);
        close(fd);
        if (!fiemap_works(path))
                skip();
        assert_int_equal(swapfile_layout(path, &l), 0);
        assert_string_equal(l.why, "the file has a hole at byte 0");

        /* Allocated at the start, a hole after 64 KiB. */
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(fallocate(fd, 0, 0, 65536), 0);
        close(fd);
        assert_int_equal(swapfile_layout(path, &l), 0);
        assert_string_equal(l.why, "the file has a hole at byte 65536");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_allocated_file, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_holes_refused, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
