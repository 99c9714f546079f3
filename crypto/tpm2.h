/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A TPM2 through tpm2-tss ESAPI: seal and unseal a key under a PCR policy, read and extend PCRs. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "secret.h"

#define TPM2_TCTI_BOOT "device:/dev/tpmrm0"  /* the kernel's resource manager; ROOT prefixed at boot */
#define TPM2_PCR_COUNT 24                    /* PCRs 0..23 of the PC Client platform */
#define TPM2_DIGEST_MAX 64                   /* SHA-512 */
#define TPM2_POLICY_SIZE 32                  /* policies are SHA-256, the sealed object's name algorithm */
#define TPM2_BLOB_MAX 1024                   /* marshalled TPM2B_PRIVATE + TPM2B_PUBLIC; ours are ~250 */
#define TPM2_SEALED_MAX 128                  /* a sealed key: TPM2 allows 128 bytes of sealed data */
#define TPM2_NAME_MAX (2 + TPM2_DIGEST_MAX)  /* an object's name: its nameAlg, then the digest */

/* The storage primary key's name (nameAlg || H(public area)), which identifies that key of that TPM. */
struct tpm2_name {
        uint8_t name[TPM2_NAME_MAX];
        size_t len;                          /* 0: none (a token enrolled before names were kept) */
};

/*
 * Failures a caller must tell apart (besides -ENOMEM, -EINVAL and -EMSGSIZE):
 *   -ENODEV       no TPM: the device is absent, or the TCTI cannot reach it
 *   -ENOPKG       the TCTI library for that TCTI string is not installed
 *   -EKEYREJECTED the policy fails: a PCR differs from its sealed value (boot chain, or lock PCR moved)
 *   -EXDEV        the sealed blob does not load on this TPM: a different or fresh TPM
 *   -ETIMEDOUT    the TPM did not answer a command in time (tpm2_set_deadline()); it is not asked again
 *   -EIO          any other TPM error: tpm2_error() says which, decoded
 */
struct tpm2;

/* Open the TPM behind tcti ("device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321", …). */
int tpm2_open(const char *tcti, struct tpm2 **out);
void tpm2_close(struct tpm2 *t); /* NULL ok */
/*
 * Wait for each TPM answer until deadline_ms (CLOCK_MONOTONIC; 0: none), but at least 2 s and at
 * most 30 s; without a deadline, 30 s. Then -ETIMEDOUT, and the TPM is not asked again.
 */
void tpm2_set_deadline(struct tpm2 *t, int64_t deadline_ms);
/* The last TPM or TSS error, decoded by Tss2_RC_Decode ("tpm:error(2.0): …"); "" if none. */
const char *tpm2_error(const struct tpm2 *t);

/* "sha1", "sha256", "sha384", "sha512" <-> TPM2_ALG_ID; 0 / NULL if unknown. */
uint16_t tpm2_bank_from_name(const char *name);
const char *tpm2_bank_name(uint16_t bank);
/* Digest size of a bank's hash, 0 if unknown. */
size_t tpm2_bank_size(uint16_t bank);

/* PCR pcr of bank into out (tpm2_bank_size(bank) bytes). */
int tpm2_pcr_read(struct tpm2 *t, uint16_t bank, unsigned pcr, uint8_t *out);
/*
 * Extend pcr in every bank the TPM keeps with a measurement of what (TPM2_PCR_Event), so that a
 * policy expecting its former value no longer holds in any bank.
 */
int tpm2_pcr_extend(struct tpm2 *t, unsigned pcr, const char *what);

/*
 * The PolicyPCR policy digest (SHA-256) for the PCRs in mask of bank having the values
 * values[pcr] (tpm2_bank_size(bank) bytes each; other entries unused), computed in software:
 * H(zeros || TPM_CC_PolicyPCR || TPML_PCR_SELECTION || H(values in PCR order)). So a policy can
 * expect a value a PCR does not hold now, as the lock PCR's reset value after it was extended.
 */
int tpm2_policy_pcr(uint16_t bank, uint32_t mask, const uint8_t values[][TPM2_DIGEST_MAX],
                    uint8_t policy[TPM2_POLICY_SIZE]);

/*
 * Seal data (1..TPM2_SEALED_MAX bytes) under the storage primary key with authPolicy policy: only a
 * policy session that satisfies it unseals it, never the empty password. The sealed blob
 * (TPM2B_PRIVATE then TPM2B_PUBLIC, marshalled) into blob, its length into *blob_len, and the
 * primary key's name into *primary (may be NULL), for tpm2_unseal() to check.
 */
int tpm2_seal(struct tpm2 *t, const uint8_t policy[TPM2_POLICY_SIZE], const struct secret *data,
              uint8_t *blob, size_t blob_size, size_t *blob_len, struct tpm2_name *primary);

/*
 * Load blob under the storage primary key and unseal it in a PolicyPCR session over the PCRs in
 * mask of bank (their current values), with the response encrypted. The secret into *out. With
 * primary (may be NULL, or of len 0: not checked), the primary key must have that name before it
 * is used at all: -EXDEV if not (another TPM, or something between us and the TPM answering for it).
 */
int tpm2_unseal(struct tpm2 *t, uint16_t bank, uint32_t mask, const uint8_t *blob, size_t blob_len,
                const struct tpm2_name *primary, struct secret **out);

/*
 * The same for a blob systemd 252's systemd-cryptenroll sealed: under systemd's own primary key
 * (ECC P-256, or RSA 2048 when rsa), a PolicyPCR session, no PIN. The secret as unsealed.
 */
int tpm2_unseal_systemd(struct tpm2 *t, bool rsa, uint16_t bank, uint32_t mask, const uint8_t *blob,
                        size_t blob_len, struct secret **out);

/* The authPolicy recorded in a sealed blob (to compare with a token's); -EINVAL if malformed. */
int tpm2_blob_policy(const uint8_t *blob, size_t blob_len, uint8_t policy[TPM2_POLICY_SIZE]);
