/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The TPM2 counter: its index and auth value; with THAW_TEST_TCTI (test/host/t-tpm-counter.sh
 * starts a swtpm for it), define, read and increment on a TPM, and each refusal.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "base/clock.h"
#include "secret.h"
#include "tpm2.h"
#include "tpm2_counter.h"

#define UUID_A "86ef0599-941f-4d25-80e6-68a97b7d5ffe"
#define UUID_B "86ef0599-941f-4d25-80e6-68a97b7d5ffd"

static struct secret *key_of(uint8_t fill)
{
        struct secret *s = NULL;

        assert_int_equal(secret_new(32, &s), 0);
        memset(s->data, fill, 32);
        s->len = 32;
        return s;
}

/* In the TCG registry's owner range, away from systemd's, one per UUID, the same every time. */
static void test_index(void **state)
{
        uint32_t a = tpm2_counter_index(UUID_A), b = tpm2_counter_index(UUID_B);
        uint8_t d[32];

        (void)state;
        assert_true(a >= 0x01800000 && a <= 0x01BFFFFF);
        assert_true(a < 0x01800400 || a > 0x018005FF);
        assert_int_equal(a & 0xFFFF0000u, TPM2_COUNTER_BASE);
        assert_int_equal(a, tpm2_counter_index(UUID_A));
        assert_int_not_equal(a, b);
        assert_non_null(EVP_Digest(UUID_A, strlen(UUID_A), d, NULL, EVP_sha256(), NULL));
        assert_int_equal(a, TPM2_COUNTER_BASE | (uint32_t)d[0] << 8 | d[1]);
}

/* HMAC-SHA256(ticket key, "thaw-tpm-counter-v1"), and another key gives another auth. */
static void test_auth(void **state)
{
        struct secret *k = key_of(7), *k2 = key_of(8), *a = NULL, *b = NULL;
        uint8_t want[32];
        unsigned n = 0;

        (void)state;
        assert_non_null(HMAC(EVP_sha256(), k->data, 32, (const uint8_t *)"thaw-tpm-counter-v1", 19, want, &n));
        assert_int_equal(tpm2_counter_auth(k, &a), 0);
        assert_int_equal(a->len, TPM2_COUNTER_AUTH_SIZE);
        assert_memory_equal(a->data, want, 32);
        assert_int_equal(tpm2_counter_auth(k2, &b), 0);
        assert_memory_not_equal(a->data, b->data, 32);
        assert_int_equal(tpm2_counter_auth(NULL, &b), -EINVAL);
        secret_free(a);
        secret_free(b);
        secret_free(k);
        secret_free(k2);
}

static struct tpm2 *tpm_or_skip(void)
{
        const char *tcti = getenv("THAW_TEST_TCTI");
        struct tpm2 *t = NULL;

        if (!tcti || !*tcti) {
                fprintf(stderr, "skip: no THAW_TEST_TCTI (test/host/t-tpm-counter.sh sets it)\n");
                skip();
        }
        assert_int_equal(tpm2_open(tcti, &t), 0);
        return t;
}

static int64_t soon(void)
{
        return clock_now_ms() + 10000;
}

/* Define (written once, value read back), read, increment; defined again: the same index, untouched. */
static void test_define_read_increment(void **state)
{
        struct tpm2 *t = tpm_or_skip();
        struct secret *k = key_of(1), *auth = NULL;
        uint32_t idx = tpm2_counter_index(UUID_A);
        uint64_t v0 = 0, v = 0;
        bool created = false;

        (void)state;
        assert_int_equal(tpm2_counter_auth(k, &auth), 0);
        assert_int_equal(tpm2_counter_read(t, idx, auth, soon(), &v), -ENOENT);
        assert_int_equal(tpm2_counter_define(t, idx, auth, soon(), &v0, &created), 0);
        assert_true(created);
        assert_true(v0 >= 1);
        assert_int_equal(tpm2_counter_read(t, idx, auth, soon(), &v), 0);
        assert_int_equal(v, v0);
        assert_int_equal(tpm2_counter_increment(t, idx, auth, soon(), &v), 0);
        assert_int_equal(v, v0 + 1);
        assert_int_equal(tpm2_counter_increment(t, idx, auth, soon(), &v), 0);
        assert_int_equal(v, v0 + 2);
        created = true;
        assert_int_equal(tpm2_counter_define(t, idx, auth, soon(), &v, &created), 0);
        assert_false(created);
        assert_int_equal(v, v0 + 2);
        assert_int_equal(tpm2_counter_read(t, idx, auth, soon(), &v), 0);
        assert_int_equal(v, v0 + 2);
        secret_free(auth);
        secret_free(k);
        tpm2_close(t);
}

/* Security: another volume's auth neither reads nor increments it, nor passes a define as ours. */
static void test_wrong_auth(void **state)
{
        struct tpm2 *t = tpm_or_skip();
        struct secret *k = key_of(2), *other = key_of(3), *auth = NULL, *bad = NULL;
        uint32_t idx = tpm2_counter_index(UUID_B);
        uint64_t v0 = 0, v = 0;

        (void)state;
        assert_int_equal(tpm2_counter_auth(k, &auth), 0);
        assert_int_equal(tpm2_counter_auth(other, &bad), 0);
        assert_int_equal(tpm2_counter_define(t, idx, auth, soon(), &v0, NULL), 0);
        assert_int_equal(tpm2_counter_increment(t, idx, bad, soon(), &v), -EACCES);
        assert_int_equal(tpm2_counter_read(t, idx, bad, soon(), &v), -EACCES);
        assert_int_equal(tpm2_counter_define(t, idx, bad, soon(), &v, NULL), -EACCES);
        /* NO_DA: the failures above did not lock the TPM; the right auth still works at once. */
        assert_int_equal(tpm2_counter_read(t, idx, auth, soon(), &v), 0);
        assert_int_equal(v, v0);
        secret_free(auth);
        secret_free(bad);
        secret_free(k);
        secret_free(other);
        tpm2_close(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_index),
                cmocka_unit_test(test_auth),
                cmocka_unit_test(test_define_read_increment),
                cmocka_unit_test(test_wrong_auth),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
