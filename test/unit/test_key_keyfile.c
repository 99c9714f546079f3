/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the keyfile key source (key_keyfile.c) against a fixture tree. */
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

static void test_keyfile(void **state)
{
        struct secret *k = NULL;
        int64_t start;

        (void)state;
        put("etc/thaw/key", "secret-bytes", 12);
        fetch_one("keyfile:/etc/thaw/key", 0, 0, &k);
        assert_int_equal(k->len, 12);
        assert_memory_equal(k->data, "secret-bytes", 12);
        secret_freep(&k);
        start = clock_now_ms();
        fetch_one("keyfile:/etc/thaw/nokey", 10000, -ENOENT, &k); /* no waiting for a file */
        assert_true(clock_now_ms() - start < 100);
        mkdirs("etc/thaw/dir");
        fetch_one("keyfile:/etc/thaw/dir", 0, -EINVAL, &k);
        assert_null(k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_keyfile),
        };

        return cmocka_run_group_tests(tests, fakekeys_setup, fakekeys_teardown);
}
