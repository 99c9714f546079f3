/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of imds_url.c: the imds:URL form (what parses, its origin, link-local) and the allow list. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "imds_url.h"
#include "keysrc.h"

/* The imds:URL form: what parses, its canonical origin, whether it is link-local. */
static void test_url_parse(void **state)
{
        static const struct {
                const char *arg, *origin;
                bool ll;
        } good[] = {
                { "http://169.254.169.254/openstack/latest/user_data", "http://169.254.169.254", true },
                { "http://169.254.169.254:80/x;b64", "http://169.254.169.254", true },
                { "http://169.254.0.1:8080/x?a=1&b=2", "http://169.254.0.1:8080", true },
                { "http://[fe80::a9fe:a9fe%25eth0]/x", "http://[fe80::a9fe:a9fe%25eth0]", true },
                { "http://[FE80::1]:81/x", "http://[fe80::1]:81", true },
                { "http://[fd00:ec2::254]/latest/x", "http://[fd00:ec2::254]", false },
                { "http://10.0.0.5/k", "http://10.0.0.5", false },
                { "http://Metadata.Google.Internal/k", "http://metadata.google.internal", false },
                { "http://169.254.1/k", "http://169.254.1", false },     /* not dotted quad: a name */
                { "http://0251.254.1.1/k", "http://0251.254.1.1", false }, /* octal: a name too */
                { "http://169.255.169.254/k", "http://169.255.169.254", false },
                { "http://[fec0::1]/k", "http://[fec0::1]", false },
        };
        static const char *const bad[] = {
                "https://169.254.169.254/x", "http://169.254.169.254", "http:///x", "http://a@169.254.169.254/x",
                "http://169.254.169.254/x#f", "http://169.254.169.254/a/../k", "http://169.254.169.254/..",
                "http://169.254.169.254/%2e%2e/k", "http://169.254.169.254/a b", "http://169.254.169.254:0/x",
                "http://169.254.169.254:65536/x", "http://169.254.169.254:/x", "http://169.254.169.254:08/x",
                "http://[fe80::1/x", "http://[fe80::1]x/x", "http://[nothex]/x", "http://[fe80::1%25]/x",
                "http://[fe80::1%eth0]/x", "http://host_name/x", "http://169.254.169.254/x;",
                "http://169.254.169.254/x;;b64", "http://169.254.169.254/x;b64;b64", "http://169.254.169.254/x;b32",
                "http://169.254.169.254/x;header=", "http://169.254.169.254/x;header=X", "http://169.254.169.254/x;header=X:",
                "http://169.254.169.254/x;header=:v", "http://169.254.169.254/x;header=X Y:v",
                "http://169.254.169.254/x;header=Host:evil", "http://169.254.169.254/x;header=X:a%0d%0aY:b",
                "http://169.254.169.254/x;header=X:%zz", "http://169.254.169.254/x;header=X:%2",
                "http://169.254.169.254/x;header=X:\"q\"",
                "http://169.254.169.254/x;header=A:1;header=B:2;header=C:3;header=D:4;header=E:5",
        };
        struct imds_url u;
        struct keysrc s;

        (void)state;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                if (imds_url_parse(good[i].arg, &u) != 0)
                        fail_msg("refused: %s", good[i].arg);
                assert_string_equal(u.origin, good[i].origin);
                if (u.link_local != good[i].ll)
                        fail_msg("%s: link-local %d", good[i].arg, u.link_local);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (imds_url_parse(bad[i], &u) != -EINVAL)
                        fail_msg("accepted: %s", bad[i]);
        }
        /* In a chain: the URL form is one source among others; its ',' would split it. */
        assert_int_equal(keysrc_parse("imds:http://169.254.169.254/k;header=X:a%2Cb;b64", &s), 0);
        assert_int_equal(imds_url_parse(s.arg, &u), 0);
        assert_string_equal(u.url, "http://169.254.169.254/k");
        assert_int_equal(u.n_headers, 1);
        assert_string_equal(u.header[0], "X: a,b");
        assert_true(u.b64);
        assert_int_equal(keysrc_parse("imds:http://169.254.169.254/k,x", &s), -EINVAL);
}

/* Only link-local, or an origin of the allow list. */
static void test_url_allowed(void **state)
{
        struct imds_url ll, lan, v6;

        (void)state;
        assert_int_equal(imds_url_parse("http://169.254.169.254/k", &ll), 0);
        assert_int_equal(imds_url_parse("http://10.0.0.5:8080/k", &lan), 0);
        assert_int_equal(imds_url_parse("http://[fd00:ec2::254]/k", &v6), 0);
        assert_int_equal(imds_url_allowed(&ll, NULL), 1);
        assert_int_equal(imds_url_allowed(&lan, NULL), 0);
        assert_int_equal(imds_url_allowed(&lan, ""), 0);
        assert_int_equal(imds_url_allowed(&lan, "http://10.0.0.5"), 0);       /* another port */
        assert_int_equal(imds_url_allowed(&lan, "http://10.0.0.50:8080"), 0); /* not a prefix match */
        assert_int_equal(imds_url_allowed(&lan, "http://10.0.0.5:8080"), 1);
        assert_int_equal(imds_url_allowed(&lan, "http://[fd00:ec2::254],http://10.0.0.5:8080/"), 1);
        assert_int_equal(imds_url_allowed(&v6, "http://[FD00:EC2::254]:80"), 1);
        assert_int_equal(imds_url_allowed(&lan, "http://10.0.0.5:8080/path"), -EINVAL);
        assert_int_equal(imds_url_allowed(&lan, "http://10.0.0.5:8080,"), -EINVAL);
        assert_int_equal(imds_url_allowed(&lan, ",http://10.0.0.5:8080"), -EINVAL);
        assert_int_equal(imds_url_allowed(&lan, "10.0.0.5:8080"), -EINVAL);
        assert_int_equal(imds_allow_check("http://a,http://b:1"), 0);
        assert_int_equal(imds_allow_check("https://a"), -EINVAL);
        assert_int_equal(imds_allow_urls("http://user@a"), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_url_parse),
                cmocka_unit_test(test_url_allowed),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
