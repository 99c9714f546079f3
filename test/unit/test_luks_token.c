/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the thaw-* token JSON (luks_token.c): built, parsed back, and each malformed token's reason. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "keysrc.h"
#include "luks_token.h"

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

/* What the token plugin's validate() says for each kind of malformed token. */
static void test_token_check_reasons(void **state)
{
        static const struct {
                const char *json, *why;
        } cases[] = {
                { "[]", "not a JSON object" },
                { "{\"type\":", "not valid JSON (or nested too deeply)" },
                { "{\"keyslots\":[]}", "\"type\" is missing" },
                { "{\"type\":[],\"keyslots\":[]}", "\"type\" is not a string" },
                { "{\"type\":\"luks2-keyring\",\"keyslots\":[]}", "type \"luks2-keyring\" is not a thaw token" },
                { "{\"type\":\"thaw-fwcfg\",\"thaw-source\":\"fwcfg:a\"}", "\"keyslots\" is missing" },
                { "{\"type\":\"thaw-fwcfg\",\"keyslots\":\"0\",\"thaw-source\":\"fwcfg:a\"}",
                  "\"keyslots\" is not an array" },
                { "{\"type\":\"thaw-fwcfg\",\"keyslots\":[0],\"thaw-source\":\"fwcfg:a\"}",
                  "\"keyslots\" holds something other than a keyslot number" },
                { "{\"type\":\"thaw-fwcfg\",\"keyslots\":[\"32\"],\"thaw-source\":\"fwcfg:a\"}",
                  "\"keyslots\" holds something other than a keyslot number" },
                { "{\"type\":\"thaw-fwcfg\",\"keyslots\":[\"-1\"],\"thaw-source\":\"fwcfg:a\"}",
                  "\"keyslots\" holds something other than a keyslot number" },
                { "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":null}", "\"thaw-source\" is not a string" },
                { "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"fwcfg:a\",\"key\":\"x\"}",
                  "unknown field \"key\"" },
                { "{\"type\":\"thaw-fwcfg\",\"keyslots\":[[[[[[[[[]]]]]]]]],\"thaw-source\":\"fwcfg:a\"}",
                  "not valid JSON (or nested too deeply)" },
        };
        struct keysrc back = { .type = KEYSRC_IMDS };
        char why[160], big[LUKS_TOKEN_JSON_MAX + 64];

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                why[0] = '\0';
                assert_int_equal(luks_token_check(cases[i].json, &back, why, sizeof(why)), -EINVAL);
                assert_string_equal(why, cases[i].why);
        }
        assert_int_equal(back.type, KEYSRC_IMDS); /* untouched on failure */
        memset(big, ' ', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        memcpy(big, "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"fwcfg:a\"}", 59);
        assert_int_equal(luks_token_check(big, &back, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "larger than 4096 bytes");
        assert_int_equal(luks_token_check("{\"type\":\"thaw-fwcfg\",\"keyslots\":[\"0\",\"31\"],"
                                          "\"thaw-source\":\"fwcfg:a\"}", &back, NULL, 0), 0);
        assert_int_equal(back.type, KEYSRC_FWCFG);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_token_json),
                cmocka_unit_test(test_token_check_reasons),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
