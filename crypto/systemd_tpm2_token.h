/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "systemd-tpm2" LUKS2 token of systemd 252's systemd-cryptenroll, read strictly. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYSTEMD_TPM2_TYPE "systemd-tpm2"
#define SYSTEMD_TPM2_BLOB_MAX 1024   /* marshalled TPM2B_PRIVATE + TPM2B_PUBLIC; systemd's are ~230 */
#define SYSTEMD_TPM2_POLICY_SIZE 32  /* systemd's policy sessions hash with SHA-256 */
#define SYSTEMD_TPM2_JSON_MAX 8192

enum systemd_tpm2_primary {
        SYSTEMD_TPM2_PRIMARY_ECC,    /* "ecc", and the default: systemd < 250 wrote no field */
        SYSTEMD_TPM2_PRIMARY_RSA,
};

struct systemd_tpm2_token {
        uint32_t keyslots;                 /* bit i: bound to keyslot i */
        uint32_t pcrs;                     /* "tpm2-pcrs": bit i for PCR i (0..23), never 0 */
        char bank[8];                      /* "tpm2-pcr-bank": "sha1" … "sha512"; "sha256" if absent */
        enum systemd_tpm2_primary primary; /* "tpm2-primary-alg" */
        uint8_t blob[SYSTEMD_TPM2_BLOB_MAX]; /* "tpm2-blob", base64-decoded */
        size_t blob_len;
        uint8_t policy[SYSTEMD_TPM2_POLICY_SIZE]; /* "tpm2-policy-hash", hex-decoded */
        bool pin;                          /* "tpm2-pin" */
};

/*
 * Parse one token's JSON. 0 and *out for a systemd-tpm2 token thaw can unseal; -EINVAL for a
 * malformed one, -EOPNOTSUPP for a well-formed one that needs what thaw does not do (a PIN, a
 * signed PCR policy, no PCR at all, a newer systemd's fields); why (may be NULL) says which in
 * one line. *out untouched on failure.
 */
int systemd_tpm2_token_parse(const char *json, struct systemd_tpm2_token *out, char *why, size_t size);
