/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the smbios key source (key_smbios.c): SMBIOS type 11 entries in a fixture tree, and their parser. */
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

#define DMI "sys/firmware/dmi/entries/"

/* A raw SMBIOS type 11 structure with the given strings; returns its length. */
static size_t type11(uint8_t *buf, size_t size, const char *const *strs, size_t n)
{
        size_t off = 5;

        memset(buf, 0, size);
        buf[0] = 11;
        buf[1] = 5;
        buf[2] = 0x2a; /* handle */
        buf[4] = (uint8_t)n;
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(strs[i]) + 1;

                assert_true(off + len + 1 <= size);
                memcpy(buf + off, strs[i], len);
                off += len;
        }
        if (n == 0)
                off++; /* an empty set is still two NULs */
        return off + 1;
}

static void put_type11(const char *entry, const char *const *strs, size_t n)
{
        static uint8_t buf[SECRET_SCRATCH_MAX];
        char rel[128];

        snprintf(rel, sizeof(rel), DMI "%s/raw", entry);
        put(rel, buf, type11(buf, sizeof(buf), strs, n));
}

static void expect_key(const char *spec, const void *key, size_t len)
{
        struct secret *k = NULL;

        fetch_one(spec, 0, 0, &k);
        assert_int_equal(k->len, len);
        assert_memory_equal(k->data, key, len);
        secret_freep(&k);
}

static void test_smbios_text_and_binary(void **state)
{
        static const char *const e0[] = { "vendor string", "io.systemd.credential:thaw-key2=other",
                                          "io.systemd.credential:thaw-text=plain key=with=equals" };
        static const char *const e1[] = { "io.systemd.credential.binary:thaw-bin=AAEC/w==" };

        (void)state;
        put_type11("11-0", e0, 3);
        put_type11("11-1", e1, 1);
        put_type11("1-0", e1, 0); /* another type's entry: never looked at */
        expect_key("smbios:thaw-text", "plain key=with=equals", 21);
        expect_key("smbios:thaw-bin", "\x00\x01\x02\xff", 4);
        expect_key("smbios:thaw-key2", "other", 5);
}

/* The first entry (in numeric order) with the credential wins; broken entries are passed over. */
static void test_smbios_order_and_broken_entries(void **state)
{
        static const char *const a[] = { "io.systemd.credential:dup=from-2" };
        static const char *const b[] = { "io.systemd.credential:dup=from-10" };
        static const uint8_t unterminated[] = { 11, 5, 0, 0, 1, 'i', 'o' };
        static const uint8_t wrong_type[] = { 12, 5, 0, 0, 1, 'x', 0, 0 };

        (void)state;
        put(DMI "11-0/raw", unterminated, sizeof(unterminated));
        put(DMI "11-1/raw", wrong_type, sizeof(wrong_type));
        put_type11("11-10", b, 1);
        put_type11("11-2", a, 1);
        expect_key("smbios:dup", "from-2", 6);
}

static void test_smbios_bad_values(void **state)
{
        static char big[SECRET_MAX + 64], bigb64[SECRET_MAX * 2];
        const char *strs[6] = {
                "io.systemd.credential:empty=", "io.systemd.credential.binary:bad=Zm9v!A==",
                "io.systemd.credential.binary:nopad=Zm9vYg", big, bigb64,
                "io.systemd.credential.binary:maxb64=",
        };
        struct secret *k = NULL;
        size_t n;

        (void)state;
        n = (size_t)snprintf(big, sizeof(big), "io.systemd.credential:big=");
        memset(big + n, 'k', SECRET_MAX + 1);
        big[n + SECRET_MAX + 1] = '\0';
        n = (size_t)snprintf(bigb64, sizeof(bigb64), "io.systemd.credential.binary:bigb64=");
        memset(bigb64 + n, 'A', (SECRET_MAX + 3) / 3 * 4 + 4); /* decodes to more than SECRET_MAX */
        put_type11("11-0", strs, 5);
        fetch_one("smbios:empty", 0, -ENODATA, &k);
        fetch_one("smbios:bad", 0, -EBADMSG, &k);
        fetch_one("smbios:nopad", 0, -EBADMSG, &k);
        fetch_one("smbios:big", 0, -EMSGSIZE, &k);
        fetch_one("smbios:bigb64", 0, -EMSGSIZE, &k);
        assert_null(k);
        /* Exactly SECRET_MAX bytes of text is a key. */
        big[n = strlen("io.systemd.credential:big=") + SECRET_MAX] = '\0';
        put_type11("11-0", strs, 1 + 3);
        expect_key("smbios:big", big + n - SECRET_MAX, SECRET_MAX);
}

static void test_smbios_parser(void **state)
{
        static const char *const s[] = { "io.systemd.credential:k=v" };
        uint8_t buf[64];
        struct secret *k = NULL;
        size_t len = type11(buf, sizeof(buf), s, 1);

        (void)state;
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), 0);
        secret_freep(&k);
        assert_int_equal(smbios_find_credential(buf, len - 2, "k", &k), -EPROTO); /* no NUL */
        assert_int_equal(smbios_find_credential(buf, 4, "k", &k), -EPROTO);
        buf[1] = 4;
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), -EPROTO);
        buf[1] = (uint8_t)(len + 1);
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), -EPROTO);
        len = type11(buf, sizeof(buf), s, 0);
        assert_int_equal(len, 7);
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), -ENOENT);
        assert_null(k);
}

static void test_smbios_missing_is_bounded(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms(), took;

        (void)state;
        fetch_one("smbios:absent", 300, -ENOENT, &k); /* no dmi-sysfs at all: wait, then give up */
        took = clock_now_ms() - start;
        assert_true(took >= 300 && took < 1000);
        put_type11("11-0", NULL, 0);
        start = clock_now_ms();
        fetch_one("smbios:absent", 10000, -ENOENT, &k); /* dmi-sysfs there: a short grace only */
        assert_true(clock_now_ms() - start < 2000);
        assert_null(k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_smbios_text_and_binary, fakekeys_setup, fakekeys_teardown),
                cmocka_unit_test_setup_teardown(test_smbios_order_and_broken_entries, fakekeys_setup, fakekeys_teardown),
                cmocka_unit_test_setup_teardown(test_smbios_bad_values, fakekeys_setup, fakekeys_teardown),
                cmocka_unit_test_setup_teardown(test_smbios_parser, fakekeys_setup, fakekeys_teardown),
                cmocka_unit_test_setup_teardown(test_smbios_missing_is_bounded, fakekeys_setup, fakekeys_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
