/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the systemd-tpm2 token reader, on a token systemd 252's systemd-cryptenroll wrote. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "systemd_tpm2_token.h"

/* Written by systemd-cryptenroll 252.39 --tpm2-device=swtpm:… --tpm2-pcrs=7 (a sealed blob: no secret). */
#define BLOB "AJ4AIHaPujG3461WB3K55Pl+5DFg/dHSTrrhhUEFXn/QFpfMABBGATMJ9rPdDoRDKYVS7iYW2s95yyI8FnRWMhJEbcJWs+8oe" \
             "576nufy3qD1hnQM1aglvgqdrmqDZggdregRE/s+HVLQ8+Tdp/qzHa35zWCv8pJFBs38fWpGUZ69++aSwqMrrMB4u1Gipvv+4" \
             "lpczpnAhzlRdAXruBhwgQBOAAgACwAAABIAIItWgtgbKUNdCNeSeBUGEdx+WSOy/vzOaEoJV3tAEwqLABAAINENoo23Q70TE4" \
             "eKxNADw7bFL6Sntg/0ZmVpxOxkKqVj"
#define POLICY "8b5682d81b29435d08d79278150611dc7e5923b2fefcce684a09577b40130a8b"
#define REAL "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"1\"],\"tpm2-blob\":\"" BLOB "\",\"tpm2-pcrs\":[7]," \
             "\"tpm2-pcr-bank\":\"sha256\",\"tpm2-primary-alg\":\"ecc\",\"tpm2-policy-hash\":\"" POLICY "\"," \
             "\"tpm2-pin\":false}"
#define HEAD "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"1\"],\"tpm2-blob\":\"" BLOB "\",\"tpm2-policy-hash\":\"" POLICY "\""

static void test_real_token(void **state)
{
        static const uint8_t policy[] = { 0x8b, 0x56, 0x82, 0xd8 };
        struct systemd_tpm2_token t;
        char why[160] = "";

        (void)state;
        assert_int_equal(systemd_tpm2_token_parse(REAL, &t, why, sizeof(why)), 0);
        assert_string_equal(why, "");
        assert_int_equal(t.keyslots, 1u << 1);
        assert_int_equal(t.pcrs, 1u << 7);
        assert_string_equal(t.bank, "sha256");
        assert_int_equal(t.primary, SYSTEMD_TPM2_PRIMARY_ECC);
        assert_int_equal(t.blob_len, 240); /* TPM2B_PRIVATE (2 + 0x9e) + TPM2B_PUBLIC (2 + 0x4e) */
        assert_int_equal(t.blob[0], 0x00);
        assert_int_equal(t.blob[1], 0x9e);
        assert_memory_equal(t.policy, policy, sizeof(policy));
        assert_false(t.pin);
}

/* Fields systemd < 250 did not write have systemd's defaults: SHA-256 bank, ECC primary, no PIN. */
static void test_defaults_and_rsa(void **state)
{
        struct systemd_tpm2_token t;

        (void)state;
        assert_int_equal(systemd_tpm2_token_parse(HEAD ",\"tpm2-pcrs\":[0,7,23]}", &t, NULL, 0), 0);
        assert_int_equal(t.pcrs, 1u << 0 | 1u << 7 | 1u << 23);
        assert_string_equal(t.bank, "sha256");
        assert_int_equal(t.primary, SYSTEMD_TPM2_PRIMARY_ECC);
        assert_int_equal(systemd_tpm2_token_parse(HEAD ",\"tpm2-pcrs\":[7],\"tpm2-primary-alg\":\"rsa\","
                                                  "\"tpm2-pcr-bank\":\"sha1\"}", &t, NULL, 0), 0);
        assert_int_equal(t.primary, SYSTEMD_TPM2_PRIMARY_RSA);
        assert_string_equal(t.bank, "sha1");
}

static void test_refused(void **state)
{
        static const struct {
                const char *json, *why;
                int r;
        } cases[] = {
                { HEAD ",\"tpm2-pcrs\":[7],\"tpm2-pin\":true}", "it needs a PIN (enrolled with --tpm2-with-pin=yes)",
                  -EOPNOTSUPP },
                { HEAD ",\"tpm2-pcrs\":[7],\"tpm2_pubkey_pcrs\":[11],\"tpm2_pubkey\":\"AA==\"}",
                  "signed PCR policies (tpm2_pubkey_pcrs) are not supported", -EOPNOTSUPP },
                { HEAD ",\"tpm2-pcrs\":[]}", "it binds no PCR (enrolled with an empty --tpm2-pcrs=)", -EOPNOTSUPP },
                { HEAD ",\"tpm2-pcrs\":[7],\"tpm2_srk\":\"AA==\"}", "field \"tpm2_srk\" is not systemd 252's",
                  -EOPNOTSUPP },
                { HEAD ",\"tpm2-pcrs\":[24]}", "\"tpm2-pcrs\" names PCR 24, not 0..23", -EINVAL },
                { HEAD ",\"tpm2-pcrs\":[\"7\"]}", "\"tpm2-pcrs\" holds something other than a PCR number", -EINVAL },
                { HEAD ",\"tpm2-pcrs\":7}", "\"tpm2-pcrs\" is missing or not an array", -EINVAL },
                { HEAD "}", "\"tpm2-pcrs\" is missing or not an array", -EINVAL },
                { HEAD ",\"tpm2-pcrs\":[7],\"tpm2-pcr-bank\":\"md5\"}", "\"tpm2-pcr-bank\" \"md5\" is not a PCR bank",
                  -EINVAL },
                { HEAD ",\"tpm2-pcrs\":[7],\"tpm2-primary-alg\":7}", "\"tpm2-primary-alg\" is not a string", -EINVAL },
                { HEAD ",\"tpm2-pcrs\":[7],\"tpm2-pin\":\"no\"}", "\"tpm2-pin\" is not a boolean", -EINVAL },
                { "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"1\"],\"tpm2-pcrs\":[7],\"tpm2-policy-hash\":\"" POLICY "\"}",
                  "\"tpm2-blob\" is missing", -EINVAL },
                { "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"1\"],\"tpm2-pcrs\":[7],\"tpm2-blob\":\"AJ4*\","
                  "\"tpm2-policy-hash\":\"" POLICY "\"}", "\"tpm2-blob\" is not base64", -EINVAL },
                { "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"1\"],\"tpm2-pcrs\":[7],\"tpm2-blob\":\"" BLOB "\","
                  "\"tpm2-policy-hash\":\"8b56\"}", "\"tpm2-policy-hash\" is not 64 hex digits", -EINVAL },
                { "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"1\"],\"tpm2-pcrs\":[7],\"tpm2-blob\":\"" BLOB "\","
                  "\"tpm2-policy-hash\":\"zz5682d81b29435d08d79278150611dc7e5923b2fefcce684a09577b40130a8b\"}",
                  "\"tpm2-policy-hash\" is not hex", -EINVAL },
                { "{\"type\":\"systemd-tpm2\",\"keyslots\":[],\"tpm2-pcrs\":[7],\"tpm2-blob\":\"" BLOB "\","
                  "\"tpm2-policy-hash\":\"" POLICY "\"}", "\"keyslots\" names no keyslot", -EINVAL },
                { "{\"type\":\"systemd-fido2\",\"keyslots\":[\"1\"]}", "not a systemd-tpm2 token", -EINVAL },
                { "[]", "not a JSON object", -EINVAL },
                { "{\"type\":\"systemd-tpm2\"", "not valid JSON (or nested too deeply)", -EINVAL },
                { HEAD ",\"tpm2-pcrs\":[[[[[7]]]]]}", "not valid JSON (or nested too deeply)", -EINVAL },
        };
        struct systemd_tpm2_token t = { .pcrs = 0xabc };
        char why[160];

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                why[0] = '\0';
                if (systemd_tpm2_token_parse(cases[i].json, &t, why, sizeof(why)) != cases[i].r)
                        fail_msg("case %zu: not %d (%s)", i, cases[i].r, why);
                assert_string_equal(why, cases[i].why);
        }
        assert_int_equal(t.pcrs, 0xabc); /* untouched on failure */
}

static void test_oversized_blob(void **state)
{
        static char json[SYSTEMD_TPM2_JSON_MAX + 2], blob[1500];
        struct systemd_tpm2_token t;
        char why[160];

        (void)state;
        memset(blob, 'A', 1400);
        blob[1400] = '\0'; /* 1050 bytes once decoded */
        snprintf(json, sizeof(json), "{\"type\":\"systemd-tpm2\",\"keyslots\":[\"1\"],\"tpm2-pcrs\":[7],"
                 "\"tpm2-blob\":\"%s\",\"tpm2-policy-hash\":\"" POLICY "\"}", blob);
        assert_int_equal(systemd_tpm2_token_parse(json, &t, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "\"tpm2-blob\" is larger than 1024 bytes");
        memset(json, ' ', sizeof(json) - 1);
        json[sizeof(json) - 1] = '\0';
        json[0] = '{';
        assert_int_equal(systemd_tpm2_token_parse(json, &t, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "larger than 8192 bytes");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_real_token),
                cmocka_unit_test(test_defaults_and_rsa),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_oversized_blob),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
