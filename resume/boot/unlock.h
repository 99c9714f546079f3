/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The key-chain walk of `thaw resume`: each source of rd.thaw.key= in turn until one unlocks the device. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "boot/resume.h"
#include "keysrc.h"
#include "luks_policy.h"

/*
 * What the unlock and the TPM lock both need, each read once in a run, on first use: the chain of
 * rd.thaw.key= and the device's tokens. Zeroed to start; unlock_keys_free() at the end.
 */
struct unlock_keys {
        bool parsed, tokens_read;
        int chain_r;                 /* keychain_parse()'s result */
        struct keychain chain;
        struct luks_tokens *tokens;  /* NULL: none, or unreadable */
};

/* The chain, or NULL if rd.thaw.key= is not one. */
const struct keychain *unlock_keys_chain(const struct resume_ctx *c, struct unlock_keys *k);
/* dev's tokens (read from dev the first time), NULL if none, unreadable or no tokens op. */
const struct luks_tokens *unlock_keys_tokens(const struct resume_ctx *c, struct unlock_keys *k, const char *dev);
void unlock_keys_free(const struct resume_ctx *c, struct unlock_keys *k);

/*
 * The policy the boot checks the header with: a swap file (resume_offset=) lives in a container
 * thaw did not format, the root's; the pin from rd.thaw.header= / header=; the unlock's deadline.
 */
struct luks_policy unlock_policy(const struct resume_ctx *c, int64_t deadline);

/*
 * Try each source of the chain on dev, in order: 0 once one unlocks it (said); -LUKS_EPOLICY if the
 * header was refused when a key was tried, why saying how (the caller says the outcome's line); else
 * why lists what each source did.
 */
int unlock_device(const struct resume_ctx *c, struct unlock_keys *k, const char *dev, int64_t deadline, char *why,
                  size_t size);
