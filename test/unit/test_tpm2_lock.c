/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of tpm2_lock.c: which PCRs the boot locks, from the chain and the device's tokens. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "faketpm2token.h"
#include "keysrc.h"
#include "luks.h"
#include "tpm2_lock.h"

/* json with the first from replaced by to, malloc()ed. */
static char *replaced(const char *json, const char *from, const char *to)
{
        const char *p = strstr(json, from);
        char *out;

        if (!p)
                fail_msg("'%s' not in %s", from, json);
        assert_true(asprintf(&out, "%.*s%s%s", (int)(p - json), json, to, p + strlen(from)) > 0);
        return out;
}

/*
 * The PCRs the boot locks: each tpm2 source's lock=, and each well-formed thaw-tpm2 token's lock PCR
 * (a token the chain does not name still holds a key); other and malformed tokens add nothing.
 */
static void test_lock_pcrs(void **state)
{
        struct luks_tokens *tokens = calloc(1, sizeof(*tokens));
        char *good = good_token(), *lock14 = replaced(good, "\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":14");
        char *lock14b = replaced(lock14, "[7,15]", "[7,14]");
        char *broken = replaced(good, "\"tpm2-bank\"", "\"tpm2-bonk\"");
        struct keychain chain;

        (void)state;
        assert_int_equal(tpm2_lock_pcrs(NULL, NULL), 0);
        assert_int_equal(keychain_parse("fwcfg:opt/k,keyfile:/k", &chain), 0);
        assert_int_equal(tpm2_lock_pcrs(&chain, NULL), 0);
        assert_int_equal(keychain_parse("fwcfg:opt/k,tpm2:pcrs=7,lock=13,tpm2", &chain), 0);
        assert_int_equal(tpm2_lock_pcrs(&chain, NULL), 1u << 13 | 1u << 15);
        assert_int_equal(keychain_parse("systemd-tpm2,keyfile:/k", &chain), 0);
        tokens->n = 4;
        snprintf(tokens->t[0].type, sizeof(tokens->t[0].type), "thaw-tpm2");
        tokens->t[0].json = broken;
        snprintf(tokens->t[1].type, sizeof(tokens->t[1].type), "thaw-keyfile");
        tokens->t[1].json = good;
        snprintf(tokens->t[2].type, sizeof(tokens->t[2].type), "thaw-tpm2");
        tokens->t[2].json = lock14;                     /* lock PCR not in its policy: malformed */
        snprintf(tokens->t[3].type, sizeof(tokens->t[3].type), "thaw-tpm2");
        tokens->t[3].json = lock14b;
        assert_int_equal(tpm2_lock_pcrs(&chain, tokens), 1u << 14);
        tokens->t[3].json = good;
        assert_int_equal(tpm2_lock_pcrs(NULL, tokens), 1u << 15);
        /* Only lock PCRs are extended: 8-15, never one a policy reads from firmware. */
        assert_int_equal(tpm2_lock_boot("", 1u << 7, 0, NULL, 0), -EINVAL);
        assert_int_equal(tpm2_lock_boot("", 1u << 16, 0, NULL, 0), -EINVAL);
        free(good);
        free(lock14);
        free(lock14b);
        free(broken);
        free(tokens);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lock_pcrs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
