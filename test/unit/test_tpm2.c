/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of tpm2.c: the PolicyPCR digest for known values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <tss2/tss2_mu.h>
#include "tpm2.h"

/* The digest a PolicyPCR session reaches, for known values (checked against a TPM in test/host). */
static void test_policy_pcr(void **state)
{
        uint8_t values[TPM2_PCR_COUNT][TPM2_DIGEST_MAX], a[TPM2_POLICY_SIZE], b[TPM2_POLICY_SIZE];

        (void)state;
        memset(values, 0, sizeof(values));
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 7 | 1u << 15, values, a), 0);
        values[15][0] = 1; /* the lock PCR after an extend */
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 7 | 1u << 15, values, b), 0);
        assert_memory_not_equal(a, b, sizeof(a));
        values[3][0] = 1; /* a PCR outside the selection does not count */
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 7 | 1u << 15, values, a), 0);
        assert_memory_equal(a, b, sizeof(a));
        assert_int_equal(tpm2_policy_pcr(0x1234, 1u << 7, values, a), -EINVAL);
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 0, values, a), -EINVAL);
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 24, values, a), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_policy_pcr),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
