/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The thaw-tpm2 LUKS2 token and the tpm2: source's options, both parsed strictly. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tpm2.h"

#define TPM2_TOKEN_TYPE "thaw-tpm2"
#define TPM2_DEFAULT_PCRS (1u << 7)   /* PCR 7: Secure Boot policy, as systemd-cryptenroll's default */
/*
 * The lock PCR, extended once the key is unsealed so nothing later in this boot (the resumed
 * system included) can unseal it again. 15: of the PCRs 0-15 that only a platform reset resets
 * (16-23 can be reset by software, which would undo the lock), 0-7 are the firmware's, 8-9 grub's
 * (and the kernel's EFI stub measures the initrd into 9), 10 IMA's, 11-13 systemd-stub's, 14
 * shim's; 15 is used by none of them, and systemd uses it the same way (tpm2-measure-pcr=).
 * Something else extending 15 before thaw runs makes the unseal fail: choose another with lock=.
 */
#define TPM2_LOCK_PCR_DEFAULT 15
#define TPM2_LOCK_PCR_MIN 8
#define TPM2_LOCK_PCR_MAX 15
/*
 * A policy binds PCRs 0-15 only: 16-23 can be reset by software at locality 0 (the debug PCR 16,
 * and 23 for applications, among them), so anyone could reset one and extend it to the sealed value.
 */
#define TPM2_PCR_POLICY_MAX 15
#define TPM2_RESETTABLE_WHY "a policy on them protects nothing; choose among PCRs 0-15"

/* The options of a tpm2 source: tpm2[:pcrs=7+11][,bank=sha256][,lock=15]. */
struct tpm2_opts {
        uint32_t pcrs;    /* bit i: PCR i, the lock PCR not included */
        uint16_t bank;    /* TPM2_ALG_SHA256… */
        unsigned lock;    /* TPM2_LOCK_PCR_MIN..MAX */
};

/* 0, -ERANGE if pcrs= names a PCR of 16-23, or -EINVAL for anything else malformed ("" gives the defaults). */
int tpm2_opts_parse(const char *arg, struct tpm2_opts *out);

/* What a thaw-tpm2 token holds besides type, keyslots and thaw-source. */
struct tpm2_token {
        struct tpm2_opts opts;              /* from its thaw-source */
        uint32_t pcrs;                      /* the policy's PCRs, the lock PCR included */
        uint16_t bank;
        unsigned lock;
        uint8_t policy[TPM2_POLICY_SIZE];
        uint8_t blob[TPM2_BLOB_MAX];
        size_t blob_len;
        struct tpm2_name primary;           /* tpm2-primary-name; len 0 in tokens from before it */
};

/*
 * Parse a thaw-tpm2 token: luks_token_check() (which checks the tpm2-* fields too, so the token
 * plugin's validate() and thaw agree), then its contents into out. -EINVAL for anything else, with a
 * short reason in why (may be NULL).
 */
int tpm2_token_parse(const char *json, struct tpm2_token *out, char *why, size_t why_size);

struct json_object;
/*
 * The tpm2-* fields of a token object (luks_token_check() has judged the others): each present,
 * of its type and size, none unknown, the lock PCR among the policy's PCRs, the policy the one the
 * blob records. Fills t (may be NULL). -EINVAL with a reason in why (may be NULL).
 */
int tpm2_token_check_fields(struct json_object *o, struct tpm2_token *t, char *why, size_t why_size);
/* Add the tpm2-* fields of t to a token object. */
int tpm2_token_fields(const struct tpm2_token *t, struct json_object *o);

/* "7+11" for a PCR mask, into buf. */
void tpm2_pcrs_format(uint32_t mask, char *buf, size_t size);
