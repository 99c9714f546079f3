/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the drive key source (key_drive.c): its label and path, the path on the drive, fetch errors. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "fakekeys.h"
#include "key_provider.h"
#include "keysrc.h"

static void test_drive_split(void **state)
{
        char label[33] = "x", path[KEYSRC_ARG_MAX] = "y";

        (void)state;
        assert_int_equal(drive_split("CIDATA:/thaw/key", label, sizeof(label), path, sizeof(path)), 0);
        assert_string_equal(label, "CIDATA");
        assert_string_equal(path, "/thaw/key");
        assert_int_equal(drive_split("01234567890123456789012345678901:/k.bin", label, sizeof(label), path,
                                     sizeof(path)), 0);
        assert_string_equal(label, "01234567890123456789012345678901");
        assert_int_equal(drive_split("CIDATA:/a/..b/.c", label, sizeof(label), path, sizeof(path)), 0);
        assert_string_equal(path, "/a/..b/.c"); /* names that merely start with dots are names */
        assert_int_equal(drive_split("CIDATA:/thaw/key", label, 6, path, sizeof(path)), -EINVAL);
        assert_int_equal(drive_split("C:/k", label, sizeof(label), path, 2), -EINVAL);
}

/* The key path is resolved on the mounted drive and must stay on it. */
static void test_drive_key_path(void **state)
{
        char mnt[PATH_MAX], out[PATH_MAX] = "untouched", want[PATH_MAX];

        (void)state;
        put("mnt/thaw/key", "k", 1);
        put("o/outside", "o", 1);
        mkdirs("mnt/dir");
        snprintf(mnt, sizeof(mnt), "%s/mnt", root);
        assert_int_equal(symlink("../o/outside", strcat(strcpy(want, mnt), "/up")), 0);
        assert_int_equal(symlink("/etc/passwd", strcat(strcpy(want, mnt), "/abs")), 0);
        assert_int_equal(symlink("thaw/key", strcat(strcpy(want, mnt), "/inside")), 0);
        assert_int_equal(drive_key_path(mnt, "/up", out, sizeof(out)), -EACCES);
        assert_int_equal(drive_key_path(mnt, "/abs", out, sizeof(out)), -EACCES);
        assert_int_equal(drive_key_path(mnt, "/none", out, sizeof(out)), -ENOENT);
        assert_int_equal(drive_key_path(mnt, "/thaw/key/x", out, sizeof(out)), -ENOENT);
        assert_string_equal(out, "untouched");
        assert_int_equal(drive_key_path(mnt, "/inside", out, sizeof(out)), 0);
        assert_string_equal(out, strcat(strcpy(want, mnt), "/thaw/key"));
        assert_int_equal(drive_key_path(mnt, "/thaw/key", out, sizeof(out)), 0);
        assert_string_equal(out, want);
        assert_int_equal(drive_key_path(mnt, "/thaw/key", out, 4), -ENAMETOOLONG);
}

/* No drive with the label: the wait is bounded. One that holds neither ISO 9660 nor vfat is
 * refused before any mount, and no temporary mount point is left behind. */
static void test_drive_fetch_errors(void **state)
{
        struct secret *k = NULL;
        char dev[PATH_MAX], run[PATH_MAX], cmd[2 * PATH_MAX + 64];
        int64_t start = clock_now_ms(), took;

        (void)state;
        fetch_one("drive:NOSUCHLABEL:/thaw/key", 300, -ENODEV, &k);
        took = clock_now_ms() - start;
        assert_true(took >= 300 && took < 1500);
        put("dev/fake", "not a file system", 17);
        mkdirs("run/thaw");
        mkdirs("dev/disk/by-label");
        snprintf(dev, sizeof(dev), "%s/dev/disk/by-label/FAKE", root);
        assert_int_equal(symlink("../../fake", dev), 0);
        fetch_one("drive:FAKE:/thaw/key", 1000, -EMEDIUMTYPE, &k);
        assert_null(k);
        snprintf(run, sizeof(run), "%s/run/thaw", root);
        snprintf(cmd, sizeof(cmd), "test -d '%s' && test -z \"$(ls -A '%s')\"", run, run);
        assert_int_equal(system(cmd), 0); /* no drive-XXXXXX left behind */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_drive_split),
                cmocka_unit_test_setup_teardown(test_drive_key_path, fakekeys_setup, fakekeys_teardown),
                cmocka_unit_test_setup_teardown(test_drive_fetch_errors, fakekeys_setup, fakekeys_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
