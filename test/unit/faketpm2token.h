/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A well-formed thaw-tpm2 token, as keysrc_enroll() writes it, around a fake sealed-object blob. */
#pragma once
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <tss2/tss2_mu.h>
#include "keysrc.h"
#include "luks_token.h"
#include "tpm2.h"
#include "tpm2_token.h"

/* A sealed-object blob as tpm2_seal() makes it (the private part's bytes do not matter here). */
static inline size_t fake_blob(uint8_t *blob, size_t size, const uint8_t policy[TPM2_POLICY_SIZE])
{
        TPM2B_PRIVATE priv = { .size = 48 };
        TPM2B_PUBLIC pub = { .publicArea = {
                .type = TPM2_ALG_KEYEDHASH, .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT,
                .parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
                .authPolicy.size = TPM2_POLICY_SIZE,
                .unique.keyedHash.size = 32,
        } };
        size_t off = 0;

        memcpy(pub.publicArea.authPolicy.buffer, policy, TPM2_POLICY_SIZE);
        assert_int_equal(Tss2_MU_TPM2B_PRIVATE_Marshal(&priv, blob, size, &off), 0);
        assert_int_equal(Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, blob, size, &off), 0);
        return off;
}

/* A good token's JSON text, as keysrc_enroll() writes it. */
static char *good_token(void)
{
        static struct tpm2_token t;
        struct keysrc src;
        char base[LUKS_TOKEN_JSON_MAX];
        struct json_object *o;
        char *text;

        memset(&t, 0, sizeof(t));
        for (size_t i = 0; i < TPM2_POLICY_SIZE; i++)
                t.policy[i] = (uint8_t)(i * 7);
        t.blob_len = fake_blob(t.blob, sizeof(t.blob), t.policy);
        t.bank = TPM2_ALG_SHA256;
        t.lock = 15;
        t.pcrs = 1u << 7 | 1u << 15;
        assert_int_equal(keysrc_parse("tpm2:pcrs=7", &src), 0);
        assert_int_equal(luks_token_build(&src, base, sizeof(base)), 0);
        o = json_tokener_parse(base);
        assert_non_null(o);
        assert_int_equal(tpm2_token_fields(&t, o), 0);
        text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        return text;
}
