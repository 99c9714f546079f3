/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the thaw-tpm2 token parser (tpm2_token.c): a good token, and each refusal named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "faketpm2token.h"
#include "tpm2_token.h"

static void test_token_good(void **state)
{
        struct tpm2_token *t = calloc(1, sizeof(*t));
        char *json = good_token(), why[128] = "";

        (void)state;
        assert_int_equal(tpm2_token_parse(json, t, why, sizeof(why)), 0);
        assert_int_equal(t->pcrs, 1u << 7 | 1u << 15);
        assert_int_equal(t->lock, 15);
        assert_int_equal(t->bank, TPM2_ALG_SHA256);
        assert_int_equal(t->opts.pcrs, 1u << 7);
        assert_int_equal(t->policy[1], 7);
        assert_int_equal(t->primary.len, 0); /* a token from before the name was kept */
        free(json);
        free(t);
}

/* The storage primary key's name: written at enrollment, read back whole (nameAlg, then the digest). */
static void test_token_primary_name(void **state)
{
        struct tpm2_token *t = calloc(1, sizeof(*t));
        char *json = good_token(), *p, with[8192], why[128] = "";

        (void)state;
        p = strstr(json, "\"tpm2-lock-pcr\":15");
        assert_non_null(p);
        snprintf(with, sizeof(with), "%.*s\"tpm2-primary-name\":\"000b%s\",%s", (int)(p - json), json,
                 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", p);
        assert_int_equal(tpm2_token_parse(with, t, why, sizeof(why)), 0);
        assert_int_equal(t->primary.len, 34);
        assert_int_equal(t->primary.name[1], 0x0b);
        assert_int_equal(t->primary.name[33], 0xff);
        free(json);
        free(t);
}

/* Replace the first occurrence of from with to in a good token, and expect a refusal naming why. */
static void bad_token(const char *from, const char *to, const char *why_part)
{
        struct tpm2_token *t = calloc(1, sizeof(*t));
        char *json = good_token(), *p, bad[8192], why[128] = "";

        p = strstr(json, from);
        if (!p)
                fail_msg("'%s' not in %s", from, json);
        snprintf(bad, sizeof(bad), "%.*s%s%s", (int)(p - json), json, to, p + strlen(from));
        if (tpm2_token_parse(bad, t, why, sizeof(why)) != -EINVAL)
                fail_msg("accepted: %s", bad);
        if (!strstr(why, why_part))
                fail_msg("reason \"%s\" lacks \"%s\" for %s", why, why_part, bad);
        free(json);
        free(t);
}

static void test_token_bad(void **state)
{
        char big[5000];

        (void)state;
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":\"15\"", "tpm2-lock-pcr");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":16", "tpm2-lock-pcr");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":\"000b\"", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":\"000B"
                  "0000000000000000000000000000000000000000000000000000000000000000\"", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":\"0004"
                  "0000000000000000000000000000000000000000000000000000000000000000\"", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":34", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":14", "not among");
        bad_token(",\"tpm2-lock-pcr\":15", "", "tpm2-lock-pcr missing");
        bad_token("\"tpm2-bank\":\"sha256\"", "\"tpm2-bank\":\"md5\"", "unknown tpm2-bank");
        bad_token("\"tpm2-bank\":\"sha256\"", "\"tpm2-bank\":256", "tpm2-bank is not a string");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,7,15]", "tpm2-pcrs");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,24,15]", "tpm2-pcrs");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,16,15]", "16-23, which software can reset");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[23,15]", "16-23, which software can reset");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":\"7+15\"", "tpm2-pcrs");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,[15]]", "tpm2-pcrs");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"01", "not the blob's policy");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"0", "hex");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"000", "tpm2-policy-hash is not a string or is longer");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"0A", "hex");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":\"!", "base64");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":\"AAAA", "sealed object");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":1,\"x\":\"", "unknown field");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":1,\"tpm2-x\":\"", "unknown field");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blobx\":\"", "unknown field");
        bad_token("\"tpm2-bank\":\"sha256\",", "", "tpm2-bank missing");
        bad_token("\"type\":\"thaw-tpm2\"", "\"type\":\"thaw-fwcfg\"", "type");
        bad_token("\"thaw-source\":\"tpm2:pcrs=7\"", "\"thaw-source\":\"tpm2:pcrs=99\"", "thaw-source");
        bad_token("\"keyslots\":[]", "\"keyslots\":{}", "keyslots");
        bad_token("\"tpm2-lock-pcr\":15}", "\"tpm2-lock-pcr\":15}x", "JSON");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"extra\":1", "unknown field");
        /* A blob larger than any sealed object: refused by size before it is decoded. */
        memset(big, 'A', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        {
                char to[sizeof(big) + 16];

                snprintf(to, sizeof(to), "\"tpm2-blob\":\"%.1400s", big);
                bad_token("\"tpm2-blob\":\"", to, "tpm2-blob is not a string or is longer than");
                snprintf(to, sizeof(to), "\"tpm2-blob\":\"%s", big);
                bad_token("\"tpm2-blob\":\"", to, "larger than");
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_token_good),
                cmocka_unit_test(test_token_primary_name),
                cmocka_unit_test(test_token_bad),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
