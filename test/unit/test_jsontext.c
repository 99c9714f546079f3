/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of jsontext.c: outside JSON text is one object, within its size and depth, or refused with a reason. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jsontext.h"

static int parse(const char *json, size_t max, int depth, struct json_object **o, char *why, size_t size)
{
        *o = NULL;
        why[0] = '\0';
        return jsontext_object(json, max, depth, o, why, size);
}

static void test_object(void **state)
{
        struct json_object *o, *v;
        char why[128];

        (void)state;
        assert_int_equal(parse("{\"type\":\"thaw-tpm2\",\"keyslots\":[\"1\"]}", 64, 4, &o, why, sizeof(why)), 0);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "type", &v));
        assert_string_equal(json_object_get_string(v), "thaw-tpm2");
        json_object_put(o);
        /* Exactly max bytes is within the cap. */
        assert_int_equal(parse("{\"a\":1}", strlen("{\"a\":1}"), 4, &o, why, sizeof(why)), 0);
        json_object_put(o);
}

static void test_too_large(void **state)
{
        struct json_object *o;
        char why[128];

        (void)state;
        assert_int_equal(parse("{\"a\":1}", strlen("{\"a\":1}") - 1, 4, &o, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "larger than 6 bytes");
        assert_null(o);
}

static void test_not_one_object(void **state)
{
        static const char *bad[] = { "", "{", "{\"a\":1}{}", "{\"a\":1} x", "not json" };
        struct json_object *o;
        char why[128];

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(parse(bad[i], 64, 4, &o, why, sizeof(why)), -EINVAL);
                assert_string_equal(why, "not valid JSON (or nested too deeply)");
                assert_null(o);
        }
        assert_int_equal(parse("[1,2]", 64, 4, &o, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "not a JSON object");
        assert_null(o);
        assert_int_equal(parse("\"text\"", 64, 4, &o, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "not a JSON object");
        /* No reason wanted: still refused. */
        assert_int_equal(jsontext_object("[]", 64, 4, &o, NULL, 0), -EINVAL);
}

static void test_depth(void **state)
{
        struct json_object *o;
        char why[128];

        (void)state;
        /* json-c's depth: three nested containers need a depth of 4. */
        assert_int_equal(parse("{\"a\":{\"b\":[1]}}", 64, 4, &o, why, sizeof(why)), 0);
        json_object_put(o);
        assert_int_equal(parse("{\"a\":{\"b\":[1]}}", 64, 3, &o, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "not valid JSON (or nested too deeply)");
        assert_null(o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_object),
                cmocka_unit_test(test_too_large),
                cmocka_unit_test(test_not_one_object),
                cmocka_unit_test(test_depth),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
