/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of device specs against a fixture /dev tree with udev-style symlinks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <blkid.h>

#include "dev/devspec.h"
#include "faketree.h"

static int setup(void **state)
{
        if (ft_setup(state) < 0)
                return -1;
        ft_puts("/dev/vdb", "");
        ft_puts("/dev/vdc1", "");
        ft_symlink("../../vdb", "/dev/disk/by-uuid/0b2c3f5e-1111-4222-8333-444455556666");
        ft_symlink("../../vdc1", "/dev/disk/by-partuuid/cafe-01");
        ft_symlink("../../vdb", "/dev/disk/by-label/thaw swap");
        ft_symlink("../../vdz", "/dev/disk/by-label/dangling");
        ft_symlink("../../vdc1", "/dev/disk/by-partlabel/swap");
        return 0;
}

static void expect(const char *spec, const char *rel)
{
        char out[PATH_MAX], want[PATH_MAX];

        ft_abs(want, sizeof(want), rel);
        assert_int_equal(devspec_resolve(ft_root, spec, out, sizeof(out)), 0);
        assert_string_equal(out, want);
}

static void test_tags_and_paths(void **state)
{
        (void)state;
        expect("UUID=0b2c3f5e-1111-4222-8333-444455556666", "/dev/vdb");
        expect("UUID=\"0b2c3f5e-1111-4222-8333-444455556666\"", "/dev/vdb");
        expect("PARTUUID=cafe-01", "/dev/vdc1");
        expect("LABEL=thaw swap", "/dev/vdb");
        expect("PARTLABEL=swap", "/dev/vdc1");
        expect("/dev/vdb", "/dev/vdb");
        expect("/dev/disk/by-partuuid/cafe-01", "/dev/vdc1");
}

static void test_not_there(void **state)
{
        char out[PATH_MAX] = "untouched";

        (void)state;
        assert_int_equal(devspec_resolve(ft_root, "UUID=ffff", out, sizeof(out)), -ENOENT);
        assert_int_equal(devspec_resolve(ft_root, "LABEL=dangling", out, sizeof(out)), -ENOENT);
        assert_int_equal(devspec_resolve(ft_root, "/dev/vdq", out, sizeof(out)), -ENOENT);
        assert_string_equal(out, "untouched");
}

static void test_malformed(void **state)
{
        char out[PATH_MAX];

        (void)state;
        const char *bad[] = { "", "vdb", "UUID=", "UUID=\"\"", "LABEL=../../vdb", "LABEL=..", "UUID=a/b",
                              "/etc/passwd", "/dev/../etc/passwd", "PARTLABL=x", "uuid=abc",
                              "PARTLABEL=../vdb" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(devspec_check(bad[i]), -EINVAL);
                assert_int_equal(devspec_resolve(ft_root, bad[i], out, sizeof(out)), -EINVAL);
        }
        assert_int_equal(devspec_check("UUID=x"), 0);
        assert_int_equal(devspec_check("/dev/vdb"), 0);
}

static void test_small_output(void **state)
{
        char out[8];

        (void)state;
        assert_int_equal(devspec_resolve(ft_root, "/dev/vdb", out, sizeof(out)), -ENAMETOOLONG);
}

/* A device that appears later (udev making the link) is found by the next call. */
static void test_appears_later(void **state)
{
        char out[PATH_MAX];

        (void)state;
        assert_int_equal(devspec_resolve(ft_root, "UUID=late", out, sizeof(out)), -ENOENT);
        ft_symlink("../../vdb", "/dev/disk/by-uuid/late");
        assert_int_equal(devspec_resolve(ft_root, "UUID=late", out, sizeof(out)), 0);
}

/*
 * The libblkid fallback, replaced here: this definition wins over libblkid's in this test program.
 * It counts the scans and finds the device only once blkid_has is set.
 */
static int scans;
static const char *blkid_has;

char *blkid_evaluate_tag(const char *token, const char *value, blkid_cache *cache)
{
        char path[PATH_MAX];

        (void)token;
        (void)value;
        (void)cache;
        scans++;
        if (!blkid_has)
                return NULL;
        ft_abs(path, sizeof(path), blkid_has);
        return strdup(path);
}

/* On a real root (""), a tag udev has not linked is scanned for at most once a second, and at the end. */
static void test_poll_scans_rarely(void **state)
{
        struct devspec_wait w = { 0 };
        char out[PATH_MAX], want[PATH_MAX];
        const char *spec = "UUID=thaw-unit-test-no-such-uuid";
        int64_t t = 5000;

        (void)state;
        scans = 0;
        blkid_has = NULL;
        /* 200 ms polls for 2.2 s: scans at 1.0 s and 2.0 s after the start, never at the start. */
        for (int i = 0; i <= 11; i++, t += 200)
                assert_int_equal(devspec_poll("", spec, &w, t, false, out, sizeof(out)), -ENOENT);
        assert_int_equal(scans, 2);
        /* The final attempt scans regardless. */
        assert_int_equal(devspec_poll("", spec, &w, t, true, out, sizeof(out)), -ENOENT);
        assert_int_equal(scans, 3);

        /* A wait with no time at all (timeout 0) still scans once: its first attempt is its last. */
        memset(&w, 0, sizeof(w));
        blkid_has = "/dev/vdb";
        assert_int_equal(devspec_poll("", spec, &w, 0, true, out, sizeof(out)), 0);
        ft_abs(want, sizeof(want), "/dev/vdb");
        assert_string_equal(out, want);
        assert_int_equal(scans, 4);

        /* A fixture root never scans; one-shot devspec_resolve() on a real root does. */
        memset(&w, 0, sizeof(w));
        assert_int_equal(devspec_poll(ft_root, "UUID=ffff", &w, 0, true, out, sizeof(out)), -ENOENT);
        assert_int_equal(scans, 4);
        assert_int_equal(devspec_resolve("", spec, out, sizeof(out)), 0);
        assert_int_equal(scans, 5);
        blkid_has = NULL;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tags_and_paths),
                cmocka_unit_test(test_not_there),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_small_output),
                cmocka_unit_test(test_appears_later),
                cmocka_unit_test(test_poll_scans_rarely),
        };

        return cmocka_run_group_tests(tests, setup, ft_teardown);
}
