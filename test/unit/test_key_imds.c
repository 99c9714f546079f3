/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The imds: key source (key_imds.c) against a fake metadata service of the test's own on 127.0.0.1. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "key_provider.h"
#include "keysrc.h"

#define SERVER "test/host/imds-server.py"
#define SERVER_LIFETIME "60" /* seconds: the server ends by itself even if this test crashes */

static pid_t server;
static char portfile[PATH_MAX];
static char origin[64]; /* http://127.0.0.1:PORT of the fake service */

static int start_server(void **state)
{
        char base[64], port[16] = "";
        FILE *f = NULL;

        (void)state;
        snprintf(portfile, sizeof(portfile), "%s/thaw-imds-%d.port", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                 (int)getpid());
        unlink(portfile);
        server = fork();
        if (server < 0)
                return -1;
        if (server == 0) {
                execlp("python3", "python3", SERVER, portfile, SERVER_LIFETIME, (char *)NULL);
                _exit(127);
        }
        /* Up to 15 s: python3 alone took more than the 5 s this once waited on a host at load 8. */
        for (int i = 0; i < 300 && !(f = fopen(portfile, "re")); i++)
                usleep(50 * 1000);
        if (!f)
                return -1;
        if (!fgets(port, sizeof(port), f))
                port[0] = '\0';
        fclose(f);
        unlink(portfile);
        snprintf(base, sizeof(base), "http://127.0.0.1:%s", port);
        snprintf(origin, sizeof(origin), "%s", base);
        return imds_allow_base(base);
}

static int stop_server(void **state)
{
        (void)state;
        if (server > 0) {
                kill(server, SIGTERM);
                waitpid(server, NULL, 0);
        }
        return 0;
}

static const uint8_t key32[32] = { 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                   16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31 };

/* Fetch spec with wait_ms to go; expect r, and within at most max_ms. */
static void fetch(const char *spec, int64_t wait_ms, int expect, int64_t max_ms, struct secret **out)
{
        struct keysrc s;
        int64_t start = clock_now_ms();
        struct keysrc_ctx kc = { .root = "", .deadline_ms = start + wait_ms };

        assert_int_equal(keysrc_parse(spec, &s), 0);
        assert_int_equal(keysrc_fetch(&s, &kc, out), expect);
        if (clock_now_ms() - start > max_ms)
                fail_msg("%s took %lld ms, more than %lld", spec, (long long)(clock_now_ms() - start),
                         (long long)max_ms);
}

static void expect_key(const char *spec)
{
        struct secret *k = NULL;

        fetch(spec, 3000, 0, 3000, &k);
        assert_int_equal(k->len, sizeof(key32));
        assert_memory_equal(k->data, key32, sizeof(key32));
        secret_freep(&k);
}

static void test_parse(void **state)
{
        static const char *const good[] = { "imds:aws:/latest/meta-data/tags/instance/thaw-key",
                                            "imds:gcp+b64:/computeMetadata/v1/instance/attributes/k",
                                            "imds:azure:/metadata/instance?api-version=2021-02-01" };
        static const char *const bad[] = { "imds:", "imds:aws", "imds:aws:", "imds:aws:latest", "imds:ec2:/x",
                                           "imds:aws+b32:/x", "imds:aws+b64x:/x", "imds:+b64:/x",
                                           "imds:aws:/a/../b", "imds:aws:/a b", "imds:aws:/a@b",
                                           "imds:aws:/a#b", "imds:aws:/%2e%2e", "imds:AWS:/x" };
        struct keysrc s;

        (void)state;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                assert_int_equal(keysrc_parse(good[i], &s), 0);
                assert_int_equal(s.type, KEYSRC_IMDS);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keysrc_parse(bad[i], &s) != -EINVAL)
                        fail_msg("accepted: %s", bad[i]);
        }
        assert_string_equal(keysrc_type_name(KEYSRC_IMDS), "imds");
        /* Only a bare http://HOST[:PORT] can be allowed as the base. */
        assert_int_equal(imds_allow_base("https://127.0.0.1"), -EINVAL);
        assert_int_equal(imds_allow_base("http://127.0.0.1/x"), -EINVAL);
        assert_int_equal(imds_allow_base("http://user@127.0.0.1"), -EINVAL);
        assert_int_equal(imds_allow_base("http://"), -EINVAL);
}

/* AWS IMDSv2: the PUT with the TTL header gets a token, the GET carries it (else 401). */
static void test_flavours(void **state)
{
        (void)state;
        expect_key("imds:aws:/latest/raw");
        expect_key("imds:aws+b64:/latest/b64");
        expect_key("imds:gcp:/computeMetadata/raw");
        expect_key("imds:gcp+b64:/computeMetadata/b64");
        expect_key("imds:azure:/metadata/raw");
        expect_key("imds:azure+b64:/metadata/b64");
}

/* Each service refuses a request without its own header: the key of another flavour is not read. */
static void test_headers_required(void **state)
{
        struct secret *k = NULL;

        (void)state;
        fetch("imds:aws:/computeMetadata/raw", 3000, -EACCES, 3000, &k);
        fetch("imds:gcp:/metadata/raw", 3000, -EACCES, 3000, &k);
        fetch("imds:azure:/latest/raw", 3000, -EACCES, 3000, &k);
        assert_null(k);
}

static void test_errors(void **state)
{
        struct secret *k = NULL;

        (void)state;
        fetch("imds:gcp:/computeMetadata/missing", 3000, -ENOENT, 3000, &k);
        fetch("imds:gcp:/computeMetadata/big", 3000, -EMSGSIZE, 3000, &k);
        fetch("imds:gcp+b64:/computeMetadata/big", 3000, -EMSGSIZE, 3000, &k);
        fetch("imds:gcp+b64:/computeMetadata/big64", 3000, -EMSGSIZE, 3000, &k);
        fetch("imds:gcp+b64:/computeMetadata/badb64", 3000, -EBADMSG, 3000, &k);
        fetch("imds:gcp+b64:/computeMetadata/raw", 3000, -EBADMSG, 3000, &k);
        /* A server error is retried a few times, then reported. */
        fetch("imds:gcp:/computeMetadata/busy", 3000, -EPROTO, 2000, &k);
        /* A redirect is not followed: the key behind it is not fetched. */
        fetch("imds:aws:/latest/redirect", 3000, -EACCES, 3000, &k);
        assert_null(k);
}

/* The server answers after 4 s; the deadline is 1 s away: the error comes within it. */
static void test_slow_server_times_out(void **state)
{
        struct secret *k = NULL;

        (void)state;
        fetch("imds:azure:/metadata/slow", 1000, -ETIMEDOUT, 1500, &k);
        fetch("imds:azure:/metadata/raw", -1, -ETIMEDOUT, 100, &k); /* deadline passed: no request */
        assert_null(k);
}

/* Nothing listening: a few retries, then a refusal, well within the deadline. */
static void test_no_service(void **state)
{
        struct secret *k = NULL;

        (void)state;
        assert_int_equal(imds_allow_base("http://127.0.0.1:9"), 0);
        fetch("imds:gcp:/computeMetadata/raw", 5000, -ECONNREFUSED, 2000, &k);
        assert_null(k);
}

/* imds:URL against the fake service: its headers go out decoded; no key unless the origin is allowed. */
static void test_url_fetch(void **state)
{
        char spec[256];
        struct secret *k = NULL;

        (void)state;
        snprintf(spec, sizeof(spec), "imds:%s/custom/raw;header=Authorization:Bearer%%20Oracle;header=X-Thaw:a%%20b%%2Cc%%3Bd%%25",
                 origin);
        assert_int_equal(imds_allow_urls(""), 0);
        fetch(spec, 3000, -EPERM, 100, &k); /* 127.0.0.1 is not link-local: no request at all */
        assert_int_equal(imds_allow_urls("http://192.0.2.1,http://127.0.0.1:1"), 0);
        fetch(spec, 3000, -EPERM, 100, &k);
        assert_int_equal(imds_allow_urls(origin), 0);
        expect_key(spec);
        snprintf(spec, sizeof(spec), "imds:%s/custom/b64;header=Authorization:Bearer%%20Oracle;b64;header=X-Thaw:a%%20b%%2Cc%%3Bd%%25",
                 origin);
        expect_key(spec);
        /* One header short: the service refuses. */
        snprintf(spec, sizeof(spec), "imds:%s/custom/raw;header=Authorization:Bearer%%20Oracle", origin);
        fetch(spec, 3000, -EACCES, 3000, &k);
        snprintf(spec, sizeof(spec), "imds:%s/latest/raw", origin); /* no AWS token without imds:aws */
        fetch(spec, 3000, -EACCES, 3000, &k);
        snprintf(spec, sizeof(spec), "imds:%s/metadata/big;header=Metadata:true", origin);
        fetch(spec, 3000, -EMSGSIZE, 3000, &k);
        snprintf(spec, sizeof(spec), "imds:%s/metadata/badb64;header=Metadata:true;b64", origin);
        fetch(spec, 3000, -EBADMSG, 3000, &k);
        snprintf(spec, sizeof(spec), "imds:%s/metadata/slow;header=Metadata:true", origin);
        fetch(spec, 1000, -ETIMEDOUT, 1500, &k);
        assert_int_equal(imds_allow_urls(""), 0);
        assert_null(k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test_setup(test_flavours, start_server),
                cmocka_unit_test(test_headers_required),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_slow_server_times_out),
                cmocka_unit_test(test_url_fetch),
                cmocka_unit_test_teardown(test_no_service, stop_server),
        };

        if (access(SERVER, R_OK) != 0 || system("command -v python3 > /dev/null") != 0) {
                fprintf(stderr, "skip: python3 or " SERVER " missing\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
