/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of kconfig.c: the embedded kernel/thaw.config fragment, its parser, config values, releases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "kconfig61.h"
#include "system/kconfig.h"

static void test_fragment_embedded(void **state)
{
        struct kconfig_want w[KCONFIG_WANT_MAX];
        const char *frag = kconfig_thaw_fragment();
        int n, lines = 0;

        (void)state;
        for (const char *p = frag; (p = strstr(p, "\nCONFIG_")); p++)
                lines++;
        n = kconfig_parse_fragment(frag, w, KCONFIG_WANT_MAX);
        assert_int_equal(n, lines); /* every option line of kernel/thaw.config, none lost */
        assert_string_equal(w[0].name, "CONFIG_HIBERNATION");
        assert_int_equal(w[0].value, 'y');
        assert_false(w[0].optional);
        assert_non_null(strstr(w[0].why, "Hibernation itself"));
        for (int i = 0; i < n; i++) {
                assert_true(w[i].why[0] != '\0'); /* each option says why */
                if (strcmp(w[i].name, "CONFIG_HIBERNATION_COMP_LZ4") == 0) {
                        assert_true(w[i].optional);
                        assert_int_equal(w[i].since_major, 6);
                        assert_int_equal(w[i].since_minor, 9);
                }
                if (strcmp(w[i].name, "CONFIG_DM_CRYPT") == 0)
                        assert_true(w[i].value == 'm' && !w[i].optional);
        }
}

static void test_fragment_errors(void **state)
{
        struct kconfig_want w[2];

        (void)state;
        assert_int_equal(kconfig_parse_fragment("# a\nCONFIG_A=n\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("# a\n# @sometimes\nCONFIG_A=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("# a\n# @since six\nCONFIG_A=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("CONFIG_a-b=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("junk\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("CONFIG_=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("CONFIG_A=y\nCONFIG_B=m\nCONFIG_C=y\n", w, 2), -E2BIG);
        /* A blank line ends a comment block: B gets no why from A's comment. */
        assert_int_equal(kconfig_parse_fragment("# why A\n# @optional\nCONFIG_A=y\n\n# header\n\nCONFIG_B=m",
                                                w, 2), 2);
        assert_true(w[0].optional);
        assert_string_equal(w[0].why, "why A");
        assert_false(w[1].optional);
        assert_string_equal(w[1].why, "");
}

static void test_value_and_release(void **state)
{
        unsigned a, b;

        (void)state;
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_HIBERNATION"), 'y');
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_DM_CRYPT"), 'm');
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_IKCONFIG"), 'n');   /* is not set */
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_NOPE"), 'n');       /* absent */
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_LOCALVERSION"), 'v');
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_HIBERNATE"), 'n');  /* a prefix */
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_HIBERNATION_SNAPSHOT_DEV"), 'y');

        assert_int_equal(kconfig_parse_release(REL, &a, &b), 0);
        assert_true(a == 6 && b == 1);
        assert_int_equal(kconfig_parse_release("6.10", &a, &b), 0);
        assert_true(a == 6 && b == 10);
        assert_int_equal(kconfig_parse_release("linux", &a, &b), -EINVAL);
        assert_int_equal(kconfig_parse_release("6", &a, &b), -EINVAL);
        assert_int_equal(kconfig_parse_release("-6.1", &a, &b), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fragment_embedded),
                cmocka_unit_test(test_fragment_errors),
                cmocka_unit_test(test_value_and_release),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
