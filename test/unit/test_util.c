/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of util_sync_dir_of(), the fsync of a renamed file's directory. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/util.h"

static void test_sync_dir_of(void **state)
{
        char dir[] = "/tmp/thaw-util-XXXXXX", path[PATH_MAX];

        (void)state;
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/swapfile", dir);
        assert_int_equal(util_sync_dir_of(path), 0);              /* the file need not exist */
        assert_int_equal(util_sync_dir_of("/swapfile"), 0);       /* its directory is / */
        assert_int_equal(util_sync_dir_of("swapfile"), -EINVAL);  /* no directory named */
        snprintf(path, sizeof(path), "%s/gone/swapfile", dir);
        assert_int_equal(util_sync_dir_of(path), -ENOENT);
        assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sync_dir_of),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
