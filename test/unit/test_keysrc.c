/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the key source chain (keysrc.c): parsing (a tpm2 source's options in a chain too),
 * formatting, what a fetch refuses.
 */
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

static void test_parse_valid(void **state)
{
        struct keychain c;

        (void)state;
        assert_int_equal(keychain_parse("fwcfg:opt/thaw/key", &c), 0);
        assert_int_equal(c.n, 1);
        assert_int_equal(c.src[0].type, KEYSRC_FWCFG);
        assert_string_equal(c.src[0].arg, "opt/thaw/key");
        assert_int_equal(keychain_parse("fwcfg:opt/thaw/key,keyfile:/etc/thaw/key.bin", &c), 0);
        assert_int_equal(c.n, 2);
        assert_int_equal(c.src[1].type, KEYSRC_KEYFILE);
        assert_string_equal(c.src[1].arg, "/etc/thaw/key.bin");
        assert_string_equal(keysrc_type_name(KEYSRC_FWCFG), "fwcfg");
        assert_string_equal(keysrc_type_name(KEYSRC_KEYFILE), "keyfile");
        assert_int_equal(keychain_parse("smbios:thaw-key,fwcfg:opt/k", &c), 0);
        assert_int_equal(c.src[0].type, KEYSRC_SMBIOS);
        assert_string_equal(c.src[0].arg, "thaw-key");
        assert_string_equal(keysrc_type_name(KEYSRC_SMBIOS), "smbios");
        assert_int_equal(keychain_parse("drive:config-2:/openstack/thaw.key,smbios:k", &c), 0);
        assert_int_equal(c.src[0].type, KEYSRC_DRIVE);
        assert_string_equal(c.src[0].arg, "config-2:/openstack/thaw.key");
        assert_string_equal(keysrc_type_name(KEYSRC_DRIVE), "drive");
        assert_null(keysrc_type_name(KEYSRC__MAX));
}

static void test_parse_invalid(void **state)
{
        static const char *const bad[] = {
                "", ",", "fwcfg:a,", ",fwcfg:a", "fwcfg:a,,keyfile:/k", "fwcfg", "fwcfg:", "keyfile:",
                "tpm2:x", "FWCFG:a", " fwcfg:a", "fwcfg:/opt/a", "fwcfg:opt//a", "fwcfg:opt/a/",
                "fwcfg:opt/../a", "fwcfg:..", "fwcfg:opt/a b", "fwcfg:opt/ä",
                "fwcfg:opt/0123456789012345678901234567890123456789012345678901", /* 56 chars */
                "keyfile:relative", "keyfile:/a/../etc/shadow", "keyfile:/..", "keyfile:/a b",
                "keyfile:/a\tb", "smbios:", "smbios:a,b", "smbios:a=b", "smbios:a/b", "smbios:a b",
                "smbios:..", "smbios:.", "drive:", "drive:CIDATA", "drive:CIDATA:", "drive::/k",
                "drive:CIDATA:/", "drive:CIDATA:k", "drive:CI DATA:/k", "drive:CI/DATA:/k",
                "drive:CIDATA:/a/../k", "drive:CIDATA:/..", "drive:CIDATA:/./k", "drive:CIDATA:/a//k",
                "drive:CIDATA:/a/", "drive:CIDATA:/a:b", "drive:CIDATA:/a b",
                "drive:012345678901234567890123456789012:/k", /* 33 characters */
        };
        struct keychain c = { .n = 42 };
        char many[KEYCHAIN_SPEC_MAX];
        char huge[KEYCHAIN_SPEC_MAX + 8];

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keychain_parse(bad[i], &c) != -EINVAL)
                        fail_msg("accepted or wrong error: \"%s\"", bad[i]);
        }
        assert_int_equal(c.n, 42); /* output untouched on failure */
        many[0] = '\0';
        for (int i = 0; i < KEYCHAIN_MAX + 1; i++)
                strcat(many, i ? ",fwcfg:opt/k" : "fwcfg:opt/k");
        assert_int_equal(keychain_parse(many, &c), -E2BIG);
        memset(huge, 'a', sizeof(huge) - 1);
        huge[sizeof(huge) - 1] = '\0';
        memcpy(huge, "keyfile:/", 9);
        assert_int_equal(keychain_parse(huge, &c), -E2BIG);
        assert_int_equal(c.n, 42);
        assert_int_equal(keychain_parse(NULL, &c), -EINVAL);
}

static void test_format_round_trip(void **state)
{
        const char *spec = "fwcfg:opt/thaw/key,keyfile:/etc/thaw/key,fwcfg:opt/thaw/spare";
        struct keychain c, d;
        char buf[KEYCHAIN_SPEC_MAX], small[10] = "untouched";

        (void)state;
        assert_int_equal(keychain_parse(spec, &c), 0);
        assert_int_equal(keychain_format(&c, buf, sizeof(buf)), 0);
        assert_string_equal(buf, spec);
        assert_int_equal(keychain_parse(buf, &d), 0);
        assert_memory_equal(&c, &d, sizeof(c));
        assert_int_equal(keysrc_format(&c.src[1], buf, sizeof(buf)), 0);
        assert_string_equal(buf, "keyfile:/etc/thaw/key");
        assert_int_equal(keysrc_format(&c.src[0], small, sizeof(small)), -ENAMETOOLONG);
        assert_int_equal(keychain_format(&c, small, sizeof(small)), -ENAMETOOLONG);
        assert_string_equal(small, "untouched");
}

static void test_fetch_invalid(void **state)
{
        struct keysrc_ctx kc = { .root = root };
        struct keysrc s = { .type = KEYSRC__MAX };
        struct secret *k = NULL;

        (void)state;
        assert_int_equal(keysrc_fetch(&s, &kc, &k), -EINVAL);
        s.type = KEYSRC_FWCFG;
        snprintf(s.arg, sizeof(s.arg), "../../../etc/shadow"); /* built by hand, never parsed */
        assert_int_equal(keysrc_fetch(&s, &kc, &k), -EINVAL);
        assert_null(k);
}

static void chain_ok(const char *spec, size_t n, const char *first_arg, const char *formatted)
{
        struct keychain c;
        char buf[KEYCHAIN_SPEC_MAX];

        if (keychain_parse(spec, &c) != 0)
                fail_msg("\"%s\" was refused", spec);
        assert_int_equal(c.n, n);
        assert_string_equal(c.src[0].arg, first_arg);
        assert_int_equal(keychain_format(&c, buf, sizeof(buf)), 0);
        assert_string_equal(buf, formatted);
}

/* Commas inside a tpm2 source's options do not cut the chain; the next "type:" or bare name does. */
static void test_chain(void **state)
{
        (void)state;
        chain_ok("tpm2", 1, "", "tpm2");
        chain_ok("tpm2,fwcfg:opt/thaw/key", 2, "", "tpm2,fwcfg:opt/thaw/key");
        chain_ok("tpm2:pcrs=7+11,bank=sha256,fwcfg:opt/thaw/key", 2, "pcrs=7+11,bank=sha256",
                 "tpm2:pcrs=7+11,bank=sha256,fwcfg:opt/thaw/key");
        chain_ok("tpm2,bank=sha1,lock=14", 1, "bank=sha1,lock=14", "tpm2:bank=sha1,lock=14");
        chain_ok("fwcfg:a,tpm2:lock=8", 2, "a", "fwcfg:a,tpm2:lock=8");
}

static void test_chain_bad(void **state)
{
        static const char *const bad[] = {
                "tpm2:", "tpm2:pcrs=24", "tpm2:pcrs=7+7", "tpm2:pcrs=", "tpm2:pcrs=7+", "tpm2:pcrs=007",
                "tpm2:bank=md5", "tpm2:lock=16", "tpm2:lock=7", "tpm2:lock=23", "tpm2:pcrs=15",
                "tpm2:pcrs=7,pcrs=8", "tpm2:color=red", "tpm2:pcrs=7,,fwcfg:a", "tpm2:pcrs=7,",
                "tpm2,", "fwcfg:a,b", "fwcfg", "keyfile", "tpm2x", "tpm2:pcrs=7 ",
        };
        struct keychain c;

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keychain_parse(bad[i], &c) != -EINVAL)
                        fail_msg("\"%s\" was accepted", bad[i]);
        }
}

/* PCRs 16-23 can be reset by software: a policy on them is refused with its own error. */
static void test_chain_resettable(void **state)
{
        static const char *const bad[] = {
                "tpm2:pcrs=16", "tpm2:pcrs=7+23", "tpm2:pcrs=16+7,bank=sha256", "fwcfg:a,tpm2:pcrs=20",
        };
        struct keychain c;

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keychain_parse(bad[i], &c) != -ERANGE)
                        fail_msg("\"%s\" was not refused as resettable", bad[i]);
        }
        assert_int_equal(keychain_parse("tpm2:pcrs=0+7+14", &c), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_valid),
                cmocka_unit_test(test_parse_invalid),
                cmocka_unit_test(test_format_round_trip),
                cmocka_unit_test(test_fetch_invalid),
                cmocka_unit_test(test_chain),
                cmocka_unit_test(test_chain_bad),
                cmocka_unit_test(test_chain_resettable),
        };

        return cmocka_run_group_tests(tests, fakekeys_setup, fakekeys_teardown);
}
