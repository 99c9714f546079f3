/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the fwcfg key source (key_fwcfg.c) against a fixture tree: sizes, waits, a late driver. */
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

#define FWCFG "/sys/firmware/qemu_fw_cfg/by_name/"

/* Atomically publish the late key, as the driver would: the file appears whole. */
static int publish_late_key(void)
{
        char a[PATH_MAX], b[PATH_MAX];

        snprintf(a, sizeof(a), "%s" FWCFG "opt/late/raw.tmp", root);
        snprintf(b, sizeof(b), "%s" FWCFG "opt/late/raw", root);
        return rename(a, b);
}

static void test_fwcfg(void **state)
{
        static const uint8_t key[32] = { 1, 2, 3, 0, 5, 255 };
        struct secret *k = NULL;

        (void)state;
        put(FWCFG "opt/thaw/key/raw", key, sizeof(key));
        fetch_one("fwcfg:opt/thaw/key", 0, 0, &k);
        assert_int_equal(k->len, sizeof(key));
        assert_memory_equal(k->data, key, sizeof(key));
        secret_freep(&k);
}

static void test_fwcfg_bad_sizes(void **state)
{
        static uint8_t big[SECRET_MAX + 1];
        struct secret *k = NULL;

        (void)state;
        put(FWCFG "opt/big/raw", big, sizeof(big));
        fetch_one("fwcfg:opt/big", 0, -EMSGSIZE, &k);
        put(FWCFG "opt/max/raw", big, SECRET_MAX);
        fetch_one("fwcfg:opt/max", 0, 0, &k);
        assert_int_equal(k->len, SECRET_MAX);
        secret_freep(&k);
        put(FWCFG "opt/empty/raw", "", 0);
        fetch_one("fwcfg:opt/empty", 0, -ENODATA, &k);
        assert_null(k);
}

static void test_fwcfg_missing_is_bounded(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms(), took;

        (void)state;
        fetch_one("fwcfg:opt/absent", 300, -ENOENT, &k);
        took = clock_now_ms() - start;
        assert_null(k);
        assert_true(took >= 300);
        assert_true(took < 1000);
        start = clock_now_ms();
        fetch_one("fwcfg:opt/absent", -5000, -ENOENT, &k); /* deadline passed: one look only */
        assert_true(clock_now_ms() - start < 100);
}

/* Once the driver is there, an absent name is final after a short grace: the rest of the timeout
 * stays for the next source in the chain. */
static void test_fwcfg_absent_with_driver_is_quick(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms();

        (void)state;
        mkdirs(FWCFG "opt/other");
        fetch_one("fwcfg:opt/never", 10000, -ENOENT, &k);
        assert_null(k);
        assert_true(clock_now_ms() - start < 2000);
}

/* The fw_cfg driver may load after we start: a key that appears before the deadline is found. */
static void test_fwcfg_appears_late(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms();
        pid_t pid;
        int status;

        (void)state;
        mkdirs(FWCFG "opt/late");
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                usleep(250 * 1000);
                put(FWCFG "opt/late/raw.tmp", "late-key", 8);
                _exit(publish_late_key() ? 1 : 0);
        }
        fetch_one("fwcfg:opt/late", 3000, 0, &k);
        assert_true(clock_now_ms() - start < 1500);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(k->len, 8);
        assert_memory_equal(k->data, "late-key", 8);
        secret_freep(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fwcfg),
                cmocka_unit_test(test_fwcfg_bad_sizes),
                cmocka_unit_test(test_fwcfg_missing_is_bounded),
                cmocka_unit_test(test_fwcfg_appears_late),
                cmocka_unit_test(test_fwcfg_absent_with_driver_is_quick),
        };

        return cmocka_run_group_tests(tests, fakekeys_setup, fakekeys_teardown);
}
