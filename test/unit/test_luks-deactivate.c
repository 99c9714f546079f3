/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of luks_deactivate() against a fake device-mapper: this file defines the libcryptsetup
 * calls luks_deactivate() makes, so they replace the library's in this test program only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <libcryptsetup.h>

#include "luks.h"

static struct {
        int init_err;        /* crypt_init_by_name() result */
        int deactivate_err;  /* crypt_deactivate() result: -EBUSY while udev holds the device */
        int deferred_err;    /* crypt_deactivate_by_name() result */
        int inits, frees, deactivates, by_name;
        uint32_t by_name_flags;
        char name[64];
} dm;

static char fake_cd; /* stands for a struct crypt_device: never dereferenced */

int crypt_init_by_name(struct crypt_device **cd, const char *name)
{
        dm.inits++;
        if (dm.init_err)
                return dm.init_err;
        snprintf(dm.name, sizeof(dm.name), "%s", name);
        *cd = (struct crypt_device *)&fake_cd;
        return 0;
}

void crypt_free(struct crypt_device *cd)
{
        if (cd)
                dm.frees++;
}

int crypt_deactivate(struct crypt_device *cd, const char *name)
{
        (void)cd;
        (void)name;
        dm.deactivates++;
        return dm.deactivate_err;
}

int crypt_deactivate_by_name(struct crypt_device *cd, const char *name, uint32_t flags)
{
        (void)cd;
        (void)name;
        dm.by_name++;
        dm.by_name_flags = flags;
        return dm.deferred_err;
}

static int setup(void **state)
{
        (void)state;
        memset(&dm, 0, sizeof(dm));
        return 0;
}

static void test_closes(void **state)
{
        (void)state;
        assert_int_equal(luks_deactivate("thaw-swap"), 0);
        assert_string_equal(dm.name, "thaw-swap");
        assert_int_equal(dm.deactivates, 1);
        assert_int_equal(dm.by_name, 0); /* not busy: removed at once, nothing deferred */
        assert_int_equal(dm.frees, 1);
}

/* udev's blkid still holds the fresh device: removal is deferred to its last close, and that is success. */
static void test_busy_deferred(void **state)
{
        (void)state;
        dm.deactivate_err = -EBUSY;
        assert_int_equal(luks_deactivate("thaw-swap"), 0);
        assert_int_equal(dm.deactivates, 1);
        assert_int_equal(dm.by_name, 1);
        assert_int_equal(dm.by_name_flags, CRYPT_DEACTIVATE_DEFERRED);
        assert_int_equal(dm.frees, 1);
}

static void test_deferred_fails(void **state)
{
        (void)state;
        dm.deactivate_err = -EBUSY;
        dm.deferred_err = -ENOTSUP; /* a kernel without deferred removal */
        assert_int_equal(luks_deactivate("thaw-swap"), -ENOTSUP);
        assert_int_equal(dm.frees, 1);
}

static void test_other_errors_not_deferred(void **state)
{
        (void)state;
        dm.deactivate_err = -EINVAL;
        assert_int_equal(luks_deactivate("thaw-swap"), -EINVAL);
        assert_int_equal(dm.by_name, 0);
        memset(&dm, 0, sizeof(dm));
        dm.init_err = -ENODEV; /* not active */
        assert_int_equal(luks_deactivate("thaw-swap"), -ENODEV);
        assert_int_equal(dm.deactivates + dm.by_name + dm.frees, 0);
        assert_int_equal(luks_deactivate(NULL), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_closes, setup),
                cmocka_unit_test_setup(test_busy_deferred, setup),
                cmocka_unit_test_setup(test_deferred_fails, setup),
                cmocka_unit_test_setup(test_other_errors_not_deferred, setup),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
