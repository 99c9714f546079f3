/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the tpm2 key source (key_tpm2.c) where there is no TPM: how long it waits, what it says. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "base/clock.h"
#include "keysrc.h"
#include "luks.h"

static char root[256];

/* A device with a thaw-tpm2 token, but no TPM: said, after the grace or at the deadline. */
static void fetch_no_tpm(int with_driver, int64_t wait_ms, int64_t min_ms, int64_t max_ms, const char *text)
{
        static struct luks_tokens tokens;
        char detail[512] = "", path[1024];
        struct keysrc_ctx kc = { .root = root, .tokens = &tokens, .detail = detail,
                                 .detail_size = sizeof(detail) };
        struct secret *key = NULL;
        struct keysrc src;
        int64_t t0;

        memset(&tokens, 0, sizeof(tokens));
        tokens.n = 1;
        snprintf(tokens.t[0].type, sizeof(tokens.t[0].type), "thaw-tpm2");
        tokens.t[0].json = (char *)"{}";
        snprintf(path, sizeof(path), "rm -rf '%s/sys' && mkdir -p '%s/sys/module%s'", root, root,
                 with_driver ? "/tpm_tis" : "");
        assert_int_equal(system(path), 0);
        assert_int_equal(keysrc_parse("tpm2", &src), 0);
        t0 = clock_now_ms();
        kc.deadline_ms = t0 + wait_ms;
        assert_int_equal(keysrc_fetch(&src, &kc, &key), -ENODEV);
        assert_null(key);
        if (clock_now_ms() - t0 < min_ms || clock_now_ms() - t0 > max_ms)
                fail_msg("gave up after %lld ms, not within %lld..%lld", (long long)(clock_now_ms() - t0),
                         (long long)min_ms, (long long)max_ms);
        assert_non_null(strstr(detail, text));
}

static void test_no_tpm(void **state)
{
        (void)state;
        snprintf(root, sizeof(root), "%s/thaw-tpm2-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        assert_non_null(mkdtemp(root));
        /* No driver: it may still load, so the wait lasts until the deadline. */
        fetch_no_tpm(0, 1500, 1400, 4000, "no TPM2 device (/dev/tpmrm0) appeared within the timeout");
        /* A driver that found nothing: a short grace, not the whole timeout. */
        fetch_no_tpm(1, 20000, 900, 8000, "no TPM2 device (/dev/tpmrm0): the TPM driver found none");
        /* Without a thaw-tpm2 token the TPM is not even looked for. */
        {
                struct luks_tokens none = { 0 };
                char detail[128] = "";
                struct keysrc_ctx kc = { .root = root, .tokens = &none, .detail = detail,
                                         .detail_size = sizeof(detail), .deadline_ms = clock_now_ms() + 20000 };
                struct secret *key = NULL;
                struct keysrc src;

                assert_int_equal(keysrc_parse("tpm2", &src), 0);
                assert_int_equal(keysrc_fetch(&src, &kc, &key), -ENOKEY);
                assert_string_equal(detail, "no thaw-tpm2 token on the device");
        }
        {
                char cmd[300];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
                assert_int_equal(system(cmd), 0);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_no_tpm),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
