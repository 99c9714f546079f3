/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of dm.c: the live-table parsers (keys wiped, options, malformed and oversized tables),
 * device numbers from a fake /sys, and /dev/mapper/NAME.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dev/dm.h"
#include "dmtable.h"
#include "fakesys.h"

/* 64 bytes of key in hex, as the kernel shows a key that is not in the keyring. */
#define HEXKEY "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff" \
               "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

static void test_hex_key_only_size_kept(void **state)
{
        char buf[] = "aes-xts-plain64 " HEXKEY " 0 254:16 32768 1 sector_size:4096";
        size_t len = strlen(buf);
        struct dm_crypt c;

        (void)state;
        assert_int_equal(dm_crypt_parse(buf, &c), 0);
        assert_string_equal(c.cipher, "aes-xts-plain64");
        assert_int_equal(c.key_size, 64);
        assert_false(c.key_in_keyring);
        assert_int_equal(c.iv_offset, 0);
        assert_int_equal(c.maj, 254);
        assert_int_equal(c.min, 16);
        assert_int_equal(c.offset, 32768);
        assert_int_equal(c.sector_size, 4096);
        assert_int_equal(c.tag_size, 0);
        /* The key is gone from the input, and nothing of it is in the result. */
        for (size_t i = 0; i < len; i++)
                assert_int_equal(buf[i], 0);
        assert_null(memmem(&c, sizeof(c), "00112233", 8));
        assert_null(memmem(&c, sizeof(c), "\x00\x11\x22\x33\x44\x55", 6));
}

static void test_failed_parse_wipes_too(void **state)
{
        char buf[] = "aes-xts-plain64 " HEXKEY " 0 254:16 32768 1 bogus_option";
        size_t len = strlen(buf);
        struct dm_crypt c = { .key_size = 7 };

        (void)state;
        assert_int_equal(dm_crypt_parse(buf, &c), -EBADMSG);
        for (size_t i = 0; i < len; i++)
                assert_int_equal(buf[i], 0);
        assert_int_equal(c.key_size, 7); /* untouched on failure */
}

static void test_keyring_key(void **state)
{
        struct dm_crypt c;

        (void)state;
        assert_int_equal(parse("aes-xts-plain64 :64:logon:cryptsetup:8a6f-d0 0 254:16 32768 1 sector_size:4096",
                               &c), 0);
        assert_int_equal(c.key_size, 64);
        assert_true(c.key_in_keyring);
        assert_null(memmem(&c, sizeof(c), "cryptsetup", 10));
        assert_int_equal(parse("aes-xts-plain64 :0:logon:x 0 254:16 0", &c), -EBADMSG);
        assert_int_equal(parse("aes-xts-plain64 :64:logon 0 254:16 0", &c), -EBADMSG);
        assert_int_equal(parse("aes-xts-plain64 :64::desc 0 254:16 0", &c), -EBADMSG);
        assert_int_equal(parse("aes-xts-plain64 :99999:logon:x 0 254:16 0", &c), -EBADMSG);
}

static void test_options(void **state)
{
        struct dm_crypt c;

        (void)state;
        assert_int_equal(parse("capi:authenc(hmac(sha256),xts(aes))-plain64 :96:logon:cryptsetup:u-d0 0 254:1 0 "
                               "4 allow_discards no_read_workqueue integrity:32:aead sector_size:4096", &c), 0);
        assert_string_equal(c.cipher, "capi:authenc(hmac(sha256),xts(aes))-plain64");
        assert_int_equal(c.key_size, 96);
        assert_true(c.allow_discards);
        assert_int_equal(c.tag_size, 32);
        assert_string_equal(c.integrity, "aead");
        assert_int_equal(c.sector_size, 4096);
        assert_int_equal(parse("aes-xts-plain64 - 0 8:0 0 1 iv_large_sectors", &c), 0);
        assert_true(c.iv_large_sectors);
        assert_int_equal(c.key_size, 0);
        assert_int_equal(c.sector_size, 512);
        assert_int_equal(parse("cipher_null-ecb - 0 8:0 4096", &c), 0);
        assert_string_equal(c.cipher, "cipher_null-ecb");
}

static void test_malformed(void **state)
{
        static const char *const bad[] = {
                "",
                "aes-xts-plain64",
                "aes-xts-plain64 " HEXKEY,
                "aes-xts-plain64 " HEXKEY " 0 254:16",
                "aes-xts-plain64 " HEXKEY " 0 254 32768",
                "aes-xts-plain64 " HEXKEY " 0 254:16 -1",
                "aes-xts-plain64 " HEXKEY " x 254:16 0",
                "aes-xts-plain64 0g 0 254:16 0",               /* not hex */
                "aes-xts-plain64 abc 0 254:16 0",              /* odd length */
                "aes-xts-plain64 - 0 254:16 0 2 allow_discards", /* fewer options than said */
                "aes-xts-plain64 - 0 254:16 0 1 allow_discards more",
                "aes-xts-plain64 - 0 254:16 0 1 sector_size:1000",
                "aes-xts-plain64 - 0 254:16 0 1 integrity:32",
                "aes-xts-plain64 - 0 254:16 0 1 integrity:0:aead",
                "aes-xts-plain64 - 0 254:16 0 1 journal_crypt:aes", /* unknown: refused */
                "aes-xts-plain64 - 0 254:16 99999999999999999999999 0",
        };
        struct dm_crypt c;

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = parse(bad[i], &c);

                if (r != -EBADMSG && r != -E2BIG)
                        fail_msg("accepted or odd error %d: \"%s\"", r, bad[i]);
        }
}

static void test_oversized(void **state)
{
        char big[2 * (DM_KEY_MAX + 1) + 64], name[DM_CIPHER_MAX + 64];
        struct dm_crypt c;

        (void)state;
        memset(big, 'a', sizeof(big));
        memcpy(big, "aes ", 4);
        snprintf(big + 4 + 2 * (DM_KEY_MAX + 1), sizeof(big) - 4 - 2 * (DM_KEY_MAX + 1), " 0 8:0 0");
        assert_int_equal(dm_crypt_parse(big, &c), -E2BIG);
        memset(name, 'c', sizeof(name));
        snprintf(name + DM_CIPHER_MAX, sizeof(name) - DM_CIPHER_MAX, " - 0 8:0 0");
        assert_int_equal(dm_crypt_parse(name, &c), -E2BIG);
        assert_int_equal(parse("aes - 0 8:0 0 33 a", &c), -E2BIG); /* more options than the cap */
}

static void test_integrity_target(void **state)
{
        struct dm_integrity g;

        (void)state;
        assert_int_equal(dm_integrity_parse("254:16 32768 32 J 7 journal_sectors:2720 interleave_sectors:32768 "
                                            "buffer_sectors:128 journal_watermark:50 commit_time:10000 "
                                            "block_size:4096 fix_padding", &g), 0);
        assert_int_equal(g.maj, 254);
        assert_int_equal(g.min, 16);
        assert_int_equal(g.offset, 32768);
        assert_int_equal(g.tag_size, 32);
        assert_int_equal(g.mode, 'J');
        assert_int_equal(g.block_size, 4096);
        assert_false(g.meta_device);
        assert_int_equal(dm_integrity_parse("254:16 0 32 J 1", &g), -EBADMSG);
        assert_int_equal(dm_integrity_parse("254:16 0 32 JJ 0", &g), -EBADMSG);
        assert_int_equal(dm_integrity_parse("254:16 0 32 J 0 extra", &g), -EBADMSG);
        assert_int_equal(dm_integrity_parse("254:16 0", &g), -EBADMSG);
}

static void test_dm_devnum(void **state)
{
        unsigned maj = 0, min = 0;
        char kname[DM_KNAME_MAX];

        (void)state;
        assert_int_equal(dm_devnum(ft_root, "thaw-swap", &maj, &min, kname, sizeof(kname)), 0);
        assert_int_equal(maj, 253);
        assert_int_equal(min, 3);
        assert_string_equal(kname, "dm-3");
        assert_int_equal(dm_devnum(ft_root, "other", &maj, &min, NULL, 0), 0);
        assert_int_equal(min, 0);
        maj = min = 99;
        assert_int_equal(dm_devnum(ft_root, "thaw", &maj, &min, NULL, 0), -ENOENT); /* no prefix match */
        assert_int_equal(maj, 99);
        fake_dm("dm-9", "broken\n", "garbage\n");
        assert_int_equal(dm_devnum(ft_root, "broken", &maj, &min, NULL, 0), -EINVAL);
}

/* One checked builder for /dev/mapper/NAME: a name cannot climb out of /dev/mapper or be cut. */
static void test_dm_mapper_path(void **state)
{
        char buf[DM_MAPPER_PATH_MAX], small[16] = "keep", longname[200];

        (void)state;
        assert_int_equal(dm_mapper_path("thaw-swap", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/dev/mapper/thaw-swap");
        assert_int_equal(dm_mapper_path("../sda", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path("..", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path("", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path(NULL, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(dm_mapper_path("thaw-swap", small, sizeof(small)), -ENAMETOOLONG);
        memset(longname, 'a', 127);
        longname[127] = '\0'; /* the longest name args_name_valid() lets in fits the buffer */
        assert_int_equal(dm_mapper_path(longname, buf, sizeof(buf)), 0);
        assert_int_equal(strlen(buf), 12 + 127);
        longname[127] = 'a';
        longname[128] = '\0';
        assert_int_equal(dm_mapper_path(longname, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hex_key_only_size_kept),
                cmocka_unit_test(test_failed_parse_wipes_too),
                cmocka_unit_test(test_keyring_key),
                cmocka_unit_test(test_options),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_oversized),
                cmocka_unit_test(test_integrity_target),
                cmocka_unit_test_setup_teardown(test_dm_devnum, fakesys_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_dm_mapper_path, fakesys_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
