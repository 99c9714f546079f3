/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The TPM2 lock at the end of `thaw resume`: extend the lock PCRs whatever the outcome. */
#pragma once
#include <stdint.h>
#include "keysrc.h"

struct luks_tokens;

/*
 * The lock PCRs this boot must extend (bit i: PCR i): lock= of each tpm2 source in chain, and
 * tpm2-lock-pcr of each well-formed thaw-tpm2 token in tokens (either may be NULL). 0 if the boot
 * could use no thaw-tpm2 key.
 */
uint32_t tpm2_lock_pcrs(const struct keychain *chain, const struct luks_tokens *tokens);

/*
 * Extend each PCR in pcrs (TPM2_LOCK_PCR_MIN..MAX only), opening the TPM as the tpm2 source does
 * (waiting until deadline_ms for a late device). 0 once all are extended; -ENODEV if there is no
 * TPM (nothing to lock); another negative errno with why filled if one could not be extended.
 */
int tpm2_lock_boot(const char *root, uint32_t pcrs, int64_t deadline_ms, char *why, size_t size);
