/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the LUKS2 header policy and fingerprint: a real thaw header changed one field at a time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json.h>
#include "luks_policy.h"

#define UUID "86ef0599-941f-4d25-80e6-68a97b7d5ffd"

/* `thaw setup --device x.img --key keyfile:/key --format-only`, as luksDump --dump-json-metadata
 * shows it (salts and digest of a throwaway key). */
static const char *const header =
        "{\"keyslots\":{\"0\":{\"type\":\"luks2\",\"key_size\":64,\"af\":{\"type\":\"luks1\",\"stripes\":4000,"
        "\"hash\":\"sha256\"},\"area\":{\"type\":\"raw\",\"offset\":\"32768\",\"size\":\"258048\","
        "\"encryption\":\"aes-xts-plain64\",\"key_size\":64},\"kdf\":{\"type\":\"pbkdf2\",\"hash\":\"sha256\","
        "\"iterations\":1000,\"salt\":\"aTERrxrqROoFs1Po6SUYNfoFEOuUH9Iga/L3zUzKwAc=\"}}},"
        "\"tokens\":{\"0\":{\"type\":\"thaw-keyfile\",\"keyslots\":[\"0\"],\"thaw-source\":\"keyfile:/key\"}},"
        "\"segments\":{\"0\":{\"type\":\"crypt\",\"offset\":\"16777216\",\"size\":\"dynamic\",\"iv_tweak\":\"0\","
        "\"encryption\":\"aes-xts-plain64\",\"sector_size\":4096}},"
        "\"digests\":{\"0\":{\"type\":\"pbkdf2\",\"keyslots\":[\"0\"],\"segments\":[\"0\"],\"hash\":\"sha256\","
        "\"iterations\":1000,\"salt\":\"+KtBqivWucy+6iJflh5QrlKfsUZrNPwWFFDEuocdT9Y=\","
        "\"digest\":\"k4nGKZAdCHDLhylqGJVDExEhAcuWDvooEk5pBMCmA44=\"}},"
        "\"config\":{\"json_size\":\"12288\",\"keyslots_size\":\"16744448\"}}";

static const struct luks_policy thaw = { .profile = LUKS_PROFILE_THAW };
static const struct luks_policy foreign = { .profile = LUKS_PROFILE_FOREIGN };

/* The header with the value at path ("segments/0/encryption") set to the JSON text value (NULL: removed). */
static char *with(const char *path, const char *value)
{
        struct json_object *h = json_tokener_parse(header), *o = h;
        char buf[256], *save = NULL, *part, *last = NULL, *out;

        assert_non_null(h);
        snprintf(buf, sizeof(buf), "%s", path);
        for (part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
                if (last) {
                        struct json_object *next = NULL;

                        if (!json_object_object_get_ex(o, last, &next)) {
                                next = json_object_new_object();
                                json_object_object_add(o, last, next);
                        }
                        o = next;
                }
                last = part;
        }
        if (value)
                json_object_object_add(o, last, json_tokener_parse(value));
        else
                json_object_object_del(o, last);
        out = strdup(json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
        json_object_put(h);
        assert_non_null(out);
        return out;
}

static int verdict(const char *json, const struct luks_policy *p, char *why, size_t size)
{
        return luks_policy_check_json(json, UUID, p, NULL, why, size);
}

static void test_good_headers(void **state)
{
        char fp[LUKS_FP_SIZE], why[LUKS_POLICY_WHY_MAX];
        char *integrity = with("segments/0/integrity", "{\"type\":\"hmac(sha256)\",\"journal_encryption\":\"none\","
                               "\"journal_integrity\":\"none\"}"), *i96;

        (void)state;
        assert_int_equal(luks_policy_check_json(header, UUID, &thaw, fp, why, sizeof(why)), 0);
        assert_string_equal(why, "");
        assert_true(luks_fp_valid(fp));
        assert_int_equal(verdict(header, &foreign, why, sizeof(why)), 0);
        assert_int_equal(verdict(header, NULL, why, sizeof(why)), 0);
        /* --integrity: hmac(sha256) and a 96-byte volume key (the keyslot area key stays 64). */
        assert_int_equal(verdict(integrity, &thaw, why, sizeof(why)), -LUKS_EPOLICY);
        assert_string_equal(why, "keyslot 0 holds a 64-byte volume key (96 for this segment): not a header thaw wrote");
        free(integrity);
        i96 = with("keyslots/0/key_size", "96");
        assert_int_equal(verdict(i96, &thaw, why, sizeof(why)), -LUKS_EPOLICY); /* integrity stripped */
        free(i96);
        {
                struct json_object *h = json_tokener_parse(header), *s, *k;
                char *t;

                json_object_object_get_ex(json_object_object_get(h, "segments"), "0", &s);
                json_object_object_add(s, "integrity", json_tokener_parse("{\"type\":\"hmac(sha256)\","
                                       "\"journal_encryption\":\"none\",\"journal_integrity\":\"none\"}"));
                json_object_object_get_ex(json_object_object_get(h, "keyslots"), "0", &k);
                json_object_object_add(k, "key_size", json_object_new_int(96));
                t = strdup(json_object_to_json_string(h));
                json_object_put(h);
                assert_int_equal(verdict(t, &thaw, why, sizeof(why)), 0);
                free(t);
        }
        /* A passphrase keyslot as thaw enroll makes it (argon2id, 64 MiB, 4 passes). */
        i96 = with("keyslots/0/kdf", "{\"type\":\"argon2id\",\"time\":4,\"memory\":65536,\"cpus\":1,\"salt\":\"AAAA\"}");
        assert_int_equal(verdict(i96, &thaw, why, sizeof(why)), 0);
        free(i96);
        /* systemd-cryptenroll's keyslots: pbkdf2 with sha512. */
        i96 = with("keyslots/0/kdf/hash", "\"sha512\"");
        assert_int_equal(verdict(i96, &thaw, why, sizeof(why)), 0);
        free(i96);
}

struct change {
        const char *path, *value;
        const char *thaw_why;     /* the refusal under THAW, NULL if accepted */
        const char *foreign_why;  /* the same under FOREIGN */
};

#define NOT " not a header thaw wrote"
static const struct change changes[] = {
        { "segments/0/encryption", "\"cipher_null-ecb\"", "segment 0 encryption is cipher_null-ecb:" NOT,
          "segment 0 encryption is cipher_null-ecb:" NOT },
        { "segments/0/encryption", "\"aes-cbc-essiv:sha256\"", "segment 0 encryption is aes-cbc-essiv:sha256:" NOT,
          "segment 0 encryption is aes-cbc-essiv:sha256:" NOT },
        { "segments/0/type", "\"linear\"", "segment 0 type is linear:" NOT, "segment 0 type is linear:" NOT },
        { "segments/0/flags", "[\"backup-previous\"]", "segment 0 has flags:" NOT, "segment 0 has flags:" NOT },
        { "segments/0/iv_tweak", "\"8\"", "segment 0 iv_tweak is 8:" NOT, "segment 0 iv_tweak is 8:" NOT },
        { "segments/0/size", "\"1048576\"", "segment 0 size is 1048576, not dynamic:" NOT,
          "segment 0 size is 1048576, not dynamic:" NOT },
        { "segments/0/sector_size", "512", "segment 0 sector_size is 512:" NOT, NULL },
        { "segments/0/sector_size", "1024", "segment 0 sector_size is 1024:" NOT, "segment 0 sector_size is 1024:" NOT },
        { "segments/0/offset", NULL, "segment 0 has no offset:" NOT, "segment 0 has no offset:" NOT },
        { "segments/0/other", "1", "segment 0 has a field other:" NOT, "segment 0 has a field other:" NOT },
        { "segments/0/integrity", "{\"type\":\"hmac(sha1)\",\"journal_encryption\":\"none\",\"journal_integrity\":\"none\"}",
          "segment 0 integrity is hmac(sha1), not hmac(sha256) without journal encryption or integrity:" NOT,
          "segment 0 integrity is hmac(sha1), not hmac(sha256) without journal encryption or integrity:" NOT },
        { "segments/0/integrity", "{\"type\":\"hmac(sha256)\",\"journal_encryption\":\"cbc(aes)\",\"journal_integrity\":\"none\"}",
          "segment 0 integrity is hmac(sha256), not hmac(sha256) without journal encryption or integrity:" NOT, "*" },
        { "segments/1", "{\"type\":\"crypt\"}", "the header has 2 segments, not exactly segment 0:" NOT, "*" },
        { "config/requirements", "{\"mandatory\":[\"online-reencrypt-v2\"]}", "config has requirements (reencryption?):" NOT,
          "config has requirements (reencryption?):" NOT },
        { "config/flags", "[\"allow-discards\"]", "config flag allow-discards changes the mapping:" NOT, NULL },
        { "config/flags", "[\"no-journal\"]", "config flag no-journal changes the mapping:" NOT,
          "config flag no-journal changes the mapping:" NOT },
        { "digests/0/iterations", "4294967295", "digest 0 asks for 4294967295 PBKDF2 iterations (at most 100000):" NOT,
          "digest 0 asks for 4294967295 PBKDF2 iterations (at most 1000000):" NOT },
        { "digests/0/iterations", "500000", "digest 0 asks for 500000 PBKDF2 iterations (at most 100000):" NOT, NULL },
        { "digests/0/iterations", "0", "digest 0 asks for 0 PBKDF2 iterations (at most 100000):" NOT,
          "digest 0 asks for 0 PBKDF2 iterations (at most 1000000):" NOT },
        { "digests/0/type", "\"argon2id\"", "digest 0 type is argon2id:" NOT, "*" },
        { "digests/0/hash", "\"md5\"", "digest 0 hash is md5:" NOT, "*" },
        { "digests/0/segments", "[]", "digest 0 is not bound to segment 0 alone:" NOT, "*" },
        { "digests/1", "{\"type\":\"pbkdf2\"}", "the header has 2 digests, not exactly digest 0:" NOT, "*" },
        { "keyslots/0/area/encryption", "\"cipher_null-ecb\"", "keyslot 0 area encryption is cipher_null-ecb:" NOT,
          "keyslot 0 area encryption is cipher_null-ecb:" NOT },
        { "keyslots/0/area/type", "\"datashift\"", "keyslot 0 area is not raw with a 512-bit key:" NOT, "*" },
        { "keyslots/0/area/key_size", "32", "keyslot 0 area is not raw with a 512-bit key:" NOT, "*" },
        { "keyslots/0/type", "\"reencrypt\"", "keyslot 0 type is reencrypt:" NOT, "*" },
        { "keyslots/0/key_size", "32", "keyslot 0 holds a 32-byte volume key (64 for this segment):" NOT, "*" },
        { "keyslots/0/af/stripes", "1", "keyslot 0 af is not luks1 with 4000 stripes:" NOT, "*" },
        { "keyslots/0/af/type", "\"luks2\"", "keyslot 0 af is not luks1 with 4000 stripes:" NOT, "*" },
        { "keyslots/0/kdf/iterations", "100001", "keyslot 0 kdf pbkdf2 costs more than thaw allows:" NOT, NULL },
        { "keyslots/0/kdf/type", "\"scrypt\"", "keyslot 0 kdf is scrypt:" NOT, "*" },
        { "keyslots/0/kdf", "{\"type\":\"argon2id\",\"time\":4,\"memory\":4194304,\"cpus\":4,\"salt\":\"AAAA\"}",
          "keyslot 0 kdf argon2id costs more than thaw allows:" NOT, NULL },
        { "keyslots/0/kdf", "{\"type\":\"argon2i\",\"time\":4,\"memory\":65536,\"cpus\":64,\"salt\":\"AAAA\"}",
          "keyslot 0 kdf argon2i is malformed:" NOT, "*" },
        { "keyslots/0/kdf/salt", NULL, "keyslot 0 kdf has no salt:" NOT, "*" },
        { "keyslots/0/extra", "1", "keyslot 0 has a field extra:" NOT, "*" },
        { "keyslots/x", "{}", "a keyslot is numbered x:" NOT, "*" },
};

static void test_every_change_named(void **state)
{
        char why[LUKS_POLICY_WHY_MAX];

        (void)state;
        for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
                const struct change *c = &changes[i];
                const char *fw = c->foreign_why && strcmp(c->foreign_why, "*") == 0 ? c->thaw_why : c->foreign_why;
                char *json = with(c->path, c->value);

                print_message("%s = %s\n", c->path, c->value ? c->value : "(removed)");
                assert_int_equal(verdict(json, &thaw, why, sizeof(why)), -LUKS_EPOLICY);
                assert_string_equal(why, c->thaw_why);
                if (fw) {
                        assert_int_equal(verdict(json, &foreign, why, sizeof(why)), -LUKS_EPOLICY);
                        assert_string_equal(why, fw);
                } else {
                        assert_int_equal(verdict(json, &foreign, why, sizeof(why)), 0);
                }
                free(json);
        }
}

static void test_not_json(void **state)
{
        char why[LUKS_POLICY_WHY_MAX], fp[LUKS_FP_SIZE] = "";

        (void)state;
        assert_int_equal(luks_policy_check_json("{\"keyslots\":", UUID, &thaw, fp, why, sizeof(why)), -EINVAL);
        assert_string_equal(fp, "");
        assert_int_equal(verdict("[]", &thaw, why, sizeof(why)), -EINVAL);
        assert_int_equal(verdict("{}", &thaw, why, sizeof(why)), -LUKS_EPOLICY);
        assert_int_equal(verdict(NULL, &thaw, why, sizeof(why)), -EINVAL);
}

static void fp_of(const char *json, const char *uuid, char *fp)
{
        char why[LUKS_POLICY_WHY_MAX];

        fp[0] = '\0';
        (void)luks_policy_check_json(json, uuid, &thaw, fp, why, sizeof(why));
        assert_true(luks_fp_valid(fp));
}

static void test_fingerprint(void **state)
{
        static const struct { const char *path, *value; } security[] = {
                { "segments/0/offset", "\"16781312\"" },
                { "segments/0/encryption", "\"cipher_null-ecb\"" },
                { "segments/0/sector_size", "512" },
                { "digests/0/salt", "\"AAAAqivWucy+6iJflh5QrlKfsUZrNPwWFFDEuocdT9Y=\"" },
                { "digests/0/digest", "\"AAAAKZAdCHDLhylqGJVDExEhAcuWDvooEk5pBMCmA44=\"" },
                { "digests/0/iterations", "1001" },
                { "digests/0/keyslots", "[\"0\",\"1\"]" },
                { "keyslots/0/kdf/salt", "\"AAAArxrqROoFs1Po6SUYNfoFEOuUH9Iga/L3zUzKwAc=\"" },
                { "keyslots/0/kdf/iterations", "1001" },
                { "keyslots/0/area/offset", "\"294912\"" },
                { "keyslots/0/area/size", "\"4096\"" },
                { "keyslots/0/area/encryption", "\"cipher_null-ecb\"" },
                { "keyslots/0/af/hash", "\"sha512\"" },
                { "keyslots/1", "{\"type\":\"luks2\"}" },
                { "config/flags", "[\"allow-discards\"]" },
                { "config/keyslots_size", "\"16748544\"" },
        };
        char base[LUKS_FP_SIZE], fp[LUKS_FP_SIZE];
        char *json;

        (void)state;
        fp_of(header, UUID, base);
        /* Stable: tokens change without the key, and key order is not a field. */
        json = with("tokens/1", "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"0\"]}");
        fp_of(json, UUID, fp);
        assert_string_equal(fp, base);
        free(json);
        json = with("tokens", "{}");
        fp_of(json, UUID, fp);
        assert_string_equal(fp, base);
        free(json);
        json = with("segments/0/encryption", "\"aes-xts-plain64\""); /* moved to the end of the object */
        fp_of(json, UUID, fp);
        assert_string_equal(fp, base);
        free(json);
        /* Changed by the UUID and by every security field. */
        fp_of(header, "00000000-941f-4d25-80e6-68a97b7d5ffd", fp);
        assert_string_not_equal(fp, base);
        for (size_t i = 0; i < sizeof(security) / sizeof(security[0]); i++) {
                json = with(security[i].path, security[i].value);
                fp_of(json, UUID, fp);
                print_message("%s\n", security[i].path);
                assert_string_not_equal(fp, base);
                free(json);
        }
}

/*
 * The image ticket (a thaw-ticket token, bound to no keyslot) is written at every hibernation and
 * boot: the policy takes a header that carries one, and the fingerprint (the pin) does not move.
 */
static void test_ticket_token_accepted(void **state)
{
        char base[LUKS_FP_SIZE], fp[LUKS_FP_SIZE], why[LUKS_POLICY_WHY_MAX];
        char *json = with("tokens/1", "{\"type\":\"thaw-ticket\",\"keyslots\":[],\"thaw-ticket\":1,"
                          "\"id\":\"000102030405060708090a0b0c0d0e0f\",\"time\":1700000000,"
                          "\"fs\":[{\"uuid\":\"x\",\"mnt-count\":7}],\"state\":\"consumed\"}");

        (void)state;
        fp_of(header, UUID, base);
        assert_int_equal(luks_policy_check_json(json, UUID, &thaw, fp, why, sizeof(why)), 0);
        assert_string_equal(why, "");
        assert_string_equal(fp, base);
        assert_int_equal(verdict(json, &foreign, why, sizeof(why)), 0);
        free(json);
}

static void test_pin(void **state)
{
        char fp[LUKS_FP_SIZE], why[LUKS_POLICY_WHY_MAX], want[LUKS_POLICY_WHY_MAX];
        struct luks_policy p = thaw;
        const char *other = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        char *json;

        (void)state;
        fp_of(header, UUID, fp);
        p.pin = fp;
        assert_int_equal(verdict(header, &p, why, sizeof(why)), 0);
        p.pin = other;
        assert_int_equal(verdict(header, &p, why, sizeof(why)), -LUKS_EPOLICY);
        snprintf(want, sizeof(want), "header fingerprint %.23s differs from the pinned sha256:0123456789abcdef "
                 "(rd.thaw.header=): not the header thaw set up", fp);
        assert_string_equal(why, want);
        /* A keyslot added after pinning (cryptsetup luksAddKey --pbkdf pbkdf2): policy fine, pin not. */
        json = with("keyslots/1", "{\"type\":\"luks2\",\"key_size\":64,\"af\":{\"type\":\"luks1\",\"stripes\":4000,"
                    "\"hash\":\"sha256\"},\"area\":{\"type\":\"raw\",\"offset\":\"290816\",\"size\":\"258048\","
                    "\"encryption\":\"aes-xts-plain64\",\"key_size\":64},\"kdf\":{\"type\":\"pbkdf2\","
                    "\"hash\":\"sha256\",\"iterations\":1000,\"salt\":\"AAAA\"}}");
        p.pin = fp;
        assert_int_equal(verdict(json, &thaw, why, sizeof(why)), 0);
        assert_int_equal(verdict(json, &p, why, sizeof(why)), -LUKS_EPOLICY);
        assert_non_null(strstr(why, "(rd.thaw.header=): not the header thaw set up"));
        free(json);
        /* The policy's reason comes first: it names the field. */
        json = with("segments/0/encryption", "\"cipher_null-ecb\"");
        assert_int_equal(verdict(json, &p, why, sizeof(why)), -LUKS_EPOLICY);
        assert_string_equal(why, "segment 0 encryption is cipher_null-ecb:" NOT);
        free(json);
        assert_true(luks_fp_valid(other));
        assert_false(luks_fp_valid("sha256:0123"));
        assert_false(luks_fp_valid("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"));
        assert_false(luks_fp_valid("sha1:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
        assert_false(luks_fp_valid(NULL));
}

static void test_hostile_text_shown_safely(void **state)
{
        char why[LUKS_POLICY_WHY_MAX];
        char *json = with("segments/0/encryption", "\"evil\\u001b[2J\\nx\"");

        (void)state;
        assert_int_equal(verdict(json, &thaw, why, sizeof(why)), -LUKS_EPOLICY);
        assert_string_equal(why, "segment 0 encryption is evil?[2J?x:" NOT);
        free(json);
        /* A keyslot's number is the header's text too. */
        json = with("keyslots/\x1b[2J\x07", "{}");
        assert_int_equal(verdict(json, &thaw, why, sizeof(why)), -LUKS_EPOLICY);
        assert_string_equal(why, "a keyslot is numbered ?[2J?:" NOT);
        free(json);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_good_headers),
                cmocka_unit_test(test_every_change_named),
                cmocka_unit_test(test_not_json),
                cmocka_unit_test(test_fingerprint),
                cmocka_unit_test(test_ticket_token_accepted),
                cmocka_unit_test(test_pin),
                cmocka_unit_test(test_hostile_text_shown_safely),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
