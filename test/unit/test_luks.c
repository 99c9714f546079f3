/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host tests of the LUKS2 work on an image file: format, tokens, key checks, and what the header holds. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <libcryptsetup.h>
#include "luks.h"
#include "luks_token.h"

#define IMG_SIZE (32u << 20)
#define HEADER_SIZE (16u << 20) /* LUKS2 default: metadata and keyslot areas before the data */
#define SPEC "fwcfg:opt/thaw/key,keyfile:/etc/thaw/key"

static char dir[256], img[300], blank[300];
static struct keychain chain;
static struct secret *keys[2];

static void make_file(const char *path)
{
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, IMG_SIZE), 0); /* sparse */
        close(fd);
}

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "%s/thaw-luks-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir))
                return -1;
        snprintf(img, sizeof(img), "%s/swap.img", dir);
        snprintf(blank, sizeof(blank), "%s/blank.img", dir);
        make_file(img);
        make_file(blank);
        if (keychain_parse(SPEC, &chain) < 0 || secret_random(32, &keys[0]) < 0 || secret_random(32, &keys[1]) < 0)
                return -1;
        /* Formatted once: PBKDF2 at 1000 iterations is quick, but the tests share one container. */
        return luks_format(img, "thaw-test", &chain, keys) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[sizeof(dir) + 16];

        (void)state;
        secret_freep(&keys[0]);
        secret_freep(&keys[1]);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_probe(void **state)
{
        char missing[320];

        (void)state;
        snprintf(missing, sizeof(missing), "%s/absent.img", dir);
        assert_int_equal(luks_probe(img), 1);
        assert_int_equal(luks_probe(blank), 0);
        assert_int_equal(luks_probe(missing), -ENOENT);
        assert_int_equal(luks_uuid(missing, missing, sizeof(missing)), -ENOENT);
}

static void test_tokens_round_trip(void **state)
{
        struct keychain got = { .n = 99 };
        char spec[KEYCHAIN_SPEC_MAX];

        (void)state;
        assert_int_equal(luks_token_sources(img, &got), 0);
        assert_int_equal(keychain_format(&got, spec, sizeof(spec)), 0);
        assert_string_equal(spec, SPEC);
        assert_true(luks_token_sources(blank, &got) < 0);
}

/* Each token is bound to the keyslot its source unlocks, so a token plugin can find the slot. */
static void test_tokens_bound_to_keyslots(void **state)
{
        struct crypt_device *cd = NULL;
        const char *json = NULL;

        (void)state;
        assert_int_equal(crypt_init(&cd, img), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        assert_int_equal(crypt_token_json_get(cd, 0, &json), 0);
        assert_non_null(strstr(json, "\"keyslots\":[\"0\"]"));
        assert_int_equal(crypt_token_json_get(cd, 1, &json), 1);
        assert_non_null(strstr(json, "\"keyslots\":[\"1\"]"));
        assert_non_null(strstr(json, "\"thaw-source\":\"keyfile:/etc/thaw/key\""));
        crypt_free(cd);
}

static void test_check_key(void **state)
{
        struct secret *wrong = NULL;

        (void)state;
        assert_int_equal(luks_check_key(img, keys[0]), 0);
        assert_int_equal(luks_check_key(img, keys[1]), 0);
        assert_int_equal(secret_random(32, &wrong), 0);
        assert_int_equal(luks_check_key(img, wrong), -EPERM);
        wrong->len = 31; /* a prefix of the right key is a wrong key */
        memcpy(wrong->data, keys[0]->data, 31);
        assert_int_equal(luks_check_key(img, wrong), -EPERM);
        secret_freep(&wrong);
        assert_true(luks_check_key(blank, keys[0]) < 0);
}

static void test_uuid(void **state)
{
        char uuid[37], small[8] = "keep";

        (void)state;
        assert_int_equal(luks_uuid(img, uuid, sizeof(uuid)), 0);
        assert_int_equal(strlen(uuid), 36);
        assert_int_equal(luks_uuid(img, small, sizeof(small)), -ENAMETOOLONG);
        assert_string_equal(small, "keep");
}

static int found(const uint8_t *hay, const void *needle, size_t len)
{
        return memmem(hay, HEADER_SIZE, needle, len) != NULL;
}

/* The header names sources but never holds a key: no key's bytes appear anywhere in it. */
static void test_header_holds_no_key(void **state)
{
        static uint8_t hdr[HEADER_SIZE];
        FILE *f = fopen(img, "rbe");

        (void)state;
        assert_non_null(f);
        assert_int_equal(fread(hdr, 1, HEADER_SIZE, f), HEADER_SIZE);
        fclose(f);
        assert_true(found(hdr, "\"thaw-source\":\"fwcfg:opt/thaw/key\"", 33));
        for (int i = 0; i < 2; i++) {
                assert_false(found(hdr, keys[i]->data, keys[i]->len));
                assert_false(found(hdr, keys[i]->data, 8)); /* not even a part */
        }
}

static void test_foreign_tokens_ignored(void **state)
{
        static const char *const foreign[] = {
                "{\"type\":\"example-foreign\",\"keyslots\":[]}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"keyfile:/k\"}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"fwcfg:../x\"}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":7}",
        };
        struct crypt_device *cd = NULL;
        struct keychain got;
        char spec[KEYCHAIN_SPEC_MAX], copy[320];

        (void)state;
        snprintf(copy, sizeof(copy), "%s/copy.img", dir);
        snprintf(spec, sizeof(spec), "cp --sparse=always '%s' '%s'", img, copy);
        assert_int_equal(system(spec), 0);
        assert_int_equal(crypt_init(&cd, copy), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
                assert_true(crypt_token_json_set(cd, CRYPT_ANY_TOKEN, foreign[i]) >= 0);
        crypt_free(cd);
        assert_int_equal(luks_token_sources(copy, &got), 0);
        assert_int_equal(keychain_format(&got, spec, sizeof(spec)), 0);
        assert_string_equal(spec, SPEC);
        unlink(copy);
}

static void test_token_json(void **state)
{
        static const char *const bad[] = {
                "", "[]", "{}", "{\"type\":\"thaw-fwcfg\",\"keyslots\":[]}",
                "{\"type\":\"luks2-keyring\",\"keyslots\":[],\"thaw-source\":\"fwcfg:a\"}",
                "{\"type\":\"thaw-fwcfg\",\"thaw-source\":\"fwcfg:a\"}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":{},\"thaw-source\":\"fwcfg:a\"}",
                "{\"type\":\"thaw-keyfile\",\"keyslots\":[],\"thaw-source\":\"fwcfg:a\"}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"fwcfg:a,keyfile:/k\"}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"fwcfg:a\"} trailing",
        };
        struct keysrc s = { 0 }, back;
        char json[LUKS_TOKEN_JSON_MAX];

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (luks_token_parse(bad[i], &back) != -EINVAL)
                        fail_msg("accepted: %s", bad[i]);
        assert_int_equal(keysrc_parse("keyfile:/etc/thaw/key", &s), 0);
        assert_int_equal(luks_token_build(&s, json, sizeof(json)), 0);
        assert_string_equal(json, "{\"type\":\"thaw-keyfile\",\"keyslots\":[],\"thaw-source\":\"keyfile:/etc/thaw/key\"}");
        assert_int_equal(luks_token_parse(json, &back), 0);
        assert_int_equal(back.type, KEYSRC_KEYFILE);
        assert_string_equal(back.arg, "/etc/thaw/key");
        assert_int_equal(luks_token_build(&s, json, 10), -ENAMETOOLONG);
}

static int run(const char *cmd, char *out, size_t size)
{
        FILE *p = popen(cmd, "re");
        size_t n;

        if (!p)
                return -1;
        n = fread(out, 1, size - 1, p);
        out[n] = '\0';
        return pclose(p);
}

/* What an administrator checks with cryptsetup: cipher, sector size, PBKDF2 at the fixed count. */
static void test_luks_dump(void **state)
{
        char cmd[400], out[16384];

        (void)state;
        if (system("command -v cryptsetup >/dev/null 2>&1") != 0)
                skip();
        snprintf(cmd, sizeof(cmd), "cryptsetup luksDump '%s' 2>&1", img);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "cipher: aes-xts-plain64"));
        assert_non_null(strstr(out, "sector: 4096"));
        assert_non_null(strstr(out, "PBKDF:      pbkdf2"));
        assert_non_null(strstr(out, "Iterations: 1000"));
        assert_non_null(strstr(out, "thaw-fwcfg"));
        assert_non_null(strstr(out, "thaw-keyfile"));
        assert_non_null(strstr(out, "Label:"));
        assert_memory_equal(strstr(out, "Label:") + strcspn(strstr(out, "Label:"), "\t"), "\tthaw-test\n", 11);
        assert_null(strstr(out, "argon2"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_token_json),
                cmocka_unit_test(test_probe),
                cmocka_unit_test(test_tokens_round_trip),
                cmocka_unit_test(test_tokens_bound_to_keyslots),
                cmocka_unit_test(test_check_key),
                cmocka_unit_test(test_uuid),
                cmocka_unit_test(test_header_holds_no_key),
                cmocka_unit_test(test_foreign_tokens_ignored),
                cmocka_unit_test(test_luks_dump),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
