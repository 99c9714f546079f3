/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the comparison of a live table with its LUKS2 header (luks_mapping.c): every field
 * changed is refused and named. No device-mapper needed.
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
#include "luks_mapping.h"

/* A header thaw setup writes and the live table libcryptsetup 2.6 makes of it. */
static const struct luks_mapping_want plain = {
        .cipher = "aes", .mode = "xts-plain64", .key_size = 64, .sector_size = 4096, .offset = 32768,
        .maj = 254, .min = 16,
};

static struct luks_mapping_live plain_live(void)
{
        struct luks_mapping_live l = { .targets = 1, .type = "crypt" };

        assert_int_equal(parse("aes-xts-plain64 :64:logon:cryptsetup:x-d0 0 254:16 32768 1 sector_size:4096",
                               &l.crypt), 0);
        return l;
}

static const struct luks_mapping_want aead = {
        .cipher = "aes", .mode = "xts-plain64", .integrity = "hmac(sha256)", .tag_size = 32, .key_size = 96,
        .sector_size = 4096, .offset = 32768, .maj = 254, .min = 16,
};

static struct luks_mapping_live aead_live(void)
{
        struct luks_mapping_live l = { .targets = 1, .type = "crypt", .lower_dm = true, .lower_targets = 1,
                                       .lower_type = "integrity" };

        assert_int_equal(parse("capi:authenc(hmac(sha256),xts(aes))-plain64 :96:logon:cryptsetup:x-d0 0 253:3 0 "
                               "2 integrity:32:aead sector_size:4096", &l.crypt), 0);
        assert_int_equal(dm_integrity_parse("254:16 32768 32 J 2 block_size:4096 fix_padding", &l.integrity), 0);
        return l;
}

static void refused(const struct luks_mapping_want *w, const struct luks_mapping_live *l, const char *why)
{
        char got[512] = "";

        assert_int_equal(luks_mapping_compare(w, l, got, sizeof(got)), -EPROTO);
        if (!strstr(got, why))
                fail_msg("wanted \"%s\", got \"%s\"", why, got);
}

static void test_compare_plain(void **state)
{
        struct luks_mapping_live l = plain_live();
        struct luks_mapping_want w = plain;
        char why[512];

        (void)state;
        assert_int_equal(luks_mapping_compare(&plain, &l, why, sizeof(why)), 0);
        l.targets = 2;
        refused(&plain, &l, "live table has 2 targets, not one crypt target");
        l = plain_live();
        snprintf(l.type, sizeof(l.type), "linear");
        refused(&plain, &l, "live table is a linear target, not crypt");
        l = plain_live();
        l.start = 8;
        refused(&plain, &l, "live table's crypt target starts at sector 8, not 0");
        l = plain_live();
        snprintf(l.crypt.cipher, sizeof(l.crypt.cipher), "cipher_null-ecb");
        refused(&plain, &l, "live table cipher is cipher_null-ecb, the header says aes-xts-plain64");
        l = plain_live();
        l.crypt.key_size = 32;
        refused(&plain, &l, "live table key is 256 bits, the header says 512");
        l = plain_live();
        l.crypt.iv_offset = 1;
        refused(&plain, &l, "live table IV offset is 1, not 0");
        l = plain_live();
        l.crypt.sector_size = 512;
        refused(&plain, &l, "live table sector size is 512, the header says 4096");
        l = plain_live();
        l.crypt.offset = 0;
        refused(&plain, &l, "live table data offset is 0 sectors, the header says 32768");
        l = plain_live();
        l.crypt.min = 17;
        refused(&plain, &l, "live table maps device 254:17, the header is on 254:16");
        l = plain_live();
        l.crypt.tag_size = 32;
        snprintf(l.crypt.integrity, sizeof(l.crypt.integrity), "aead");
        refused(&plain, &l, "live table has integrity:32:aead, the header says none");
        /* A header that itself says cipher_null maps "as it says", and is refused all the same. */
        l = plain_live();
        snprintf(w.cipher, sizeof(w.cipher), "cipher_null");
        snprintf(w.mode, sizeof(w.mode), "ecb");
        snprintf(l.crypt.cipher, sizeof(l.crypt.cipher), "cipher_null-ecb");
        refused(&w, &l, "live table cipher is cipher_null-ecb, not aes-xts-plain64");
}

static void test_compare_integrity(void **state)
{
        struct luks_mapping_live l = aead_live();
        char why[512];

        (void)state;
        assert_int_equal(luks_mapping_compare(&aead, &l, why, sizeof(why)), 0);
        /* Stripped of its integrity: the plain cipher straight on the device. */
        l = plain_live();
        l.crypt.key_size = 96;
        refused(&aead, &l, "live table cipher is aes-xts-plain64, the header says "
                           "capi:authenc(hmac(sha256),xts(aes))-plain64");
        l = aead_live();
        l.crypt.tag_size = 0;
        l.crypt.integrity[0] = '\0';
        refused(&aead, &l, "live table has no authenticated integrity (integrity:0:none), the header says "
                           "hmac(sha256)");
        l = aead_live();
        l.crypt.tag_size = 16;
        refused(&aead, &l, "live table integrity tag is 16 bytes, the header says 32");
        l = aead_live();
        l.lower_dm = false;
        refused(&aead, &l, "live table's crypt target is on 253:3, which is not one dm-integrity target");
        l = aead_live();
        snprintf(l.lower_type, sizeof(l.lower_type), "linear");
        refused(&aead, &l, "which is not one dm-integrity target");
        l = aead_live();
        l.crypt.offset = 8;
        refused(&aead, &l, "live table data offset is 8 sectors on the dm-integrity mapping, not 0");
        l = aead_live();
        l.integrity.maj = 8;
        refused(&aead, &l, "dm-integrity mapping is on device 8:16, the header is on 254:16");
        l = aead_live();
        l.integrity.offset = 0;
        refused(&aead, &l, "dm-integrity data offset is 0 sectors, the header says 32768");
        l = aead_live();
        l.integrity.tag_size = 4;
        refused(&aead, &l, "dm-integrity tag is 4 bytes, the header says 32");
        l = aead_live();
        l.integrity.block_size = 512;
        refused(&aead, &l, "dm-integrity block size is 512, the header says 4096");
        l = aead_live();
        l.integrity.mode = 'R';
        refused(&aead, &l, "dm-integrity mode is R, not J, B or D (R checks no tag)");
        l = aead_live();
        l.integrity.internal_hash = true;
        refused(&aead, &l, "dm-integrity has an internal hash, which the header does not say");
}

static void test_check_without_dm(void **state)
{
        char why[256];

        (void)state;
        /* No device-mapper under this root: cannot tell, so refused, and said. */
        assert_true(luks_mapping_check("/nonexistent-root", NULL, "thaw-swap", why, sizeof(why)) < 0);
        assert_non_null(strstr(why, "its live table cannot be read"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_compare_plain),
                cmocka_unit_test(test_compare_integrity),
                cmocka_unit_test(test_check_without_dm),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
