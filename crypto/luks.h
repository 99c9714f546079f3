/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LUKS2 container of the thaw swap device, through libcryptsetup only. */
#pragma once
#include <stdbool.h>
#include "keysrc.h"
#include "secret.h"

#define LUKS_TOKEN_PREFIX "thaw-"   /* token type is "thaw-<source type>", e.g. "thaw-fwcfg" */
#define LUKS_PBKDF2_ITER 1000       /* the key is 256 random bits: stretching buys nothing */
/*
 * The most PBKDF2 iterations a keyslot may ask for before luks_activate() tries it. The header is
 * not authenticated: a crafted (or admin-added) argon2 or huge-iteration keyslot would stall every
 * boot for seconds or minutes per key, or exhaust the initramfs's memory. Ours use LUKS_PBKDF2_ITER.
 */
#define LUKS_PBKDF2_ITER_MAX 100000
/*
 * The most argon2 work (passes times KiB of memory) a passphrase keyslot may ask for: 16 GiB-passes,
 * about 10 s on one current core (1 GiB at 16 passes, 64 MiB at 256).
 */
#define LUKS_ARGON2_WORK_MAX (16ull << 20)

/* 1 if dev carries a LUKS2 header, 0 if not (none, LUKS1, damaged), -ENOENT if dev is absent, other -errno. */
int luks_probe(const char *dev);

/*
 * Format dev as LUKS2 (aes-xts-plain64, 512-bit volume key, 4096-byte sectors) and add one keyslot
 * per source: keys[i] unlocks it, and a token "thaw-<type>" naming srcs->src[i] (never the key)
 * is bound to that keyslot. label goes into the LUKS2 header label (may be NULL).
 */
int luks_format(const char *dev, const char *label, const struct keychain *srcs, struct secret *const *keys);

/*
 * Activate dev as /dev/mapper/name with key, trying only the active keyslots that use PBKDF2 with at
 * most LUKS_PBKDF2_ITER_MAX iterations. -EPERM: none of them takes this key.
 */
int luks_activate(const char *dev, const char *name, const struct secret *key);
/*
 * The same for a passphrase typed by a person: argon2i/argon2id keyslots are tried too, when their
 * memory cost is at most argon2_max_kib (the caller passes half of MemTotal) and their work at
 * most LUKS_ARGON2_WORK_MAX. A keyslot refused for its cost is named in why, one clause each
 * ("keyslot 1 (argon2id) needs 1048576 KiB of memory, more than half of the RAM (250000 KiB): not
 * tried"); why is "" if none was. -EPERM: no allowed keyslot takes this key.
 */
int luks_activate_passphrase(const char *dev, const char *name, const struct secret *key,
                             uint64_t argon2_max_kib, char *why, size_t size);
/* Close /dev/mapper/name; if it is busy, deferred: the kernel removes it at its last close (0). */
int luks_deactivate(const char *name);
/* Test key against dev's keyslots without activating anything (works without device-mapper). */
int luks_check_key(const char *dev, const struct secret *key);
/* 1 if the mapping name is active, 0 if not. */
int luks_is_active(const char *name);

/*
 * The key sources named by the device's thaw-* tokens, in token order. 0 with out->n == 0 if none.
 * For setup and inspection only: the header is unauthenticated, so boot never picks a source by it.
 */
int luks_token_sources(const char *dev, struct keychain *out);
/* LUKS2 UUID of dev into buf (37 bytes suffices). */
int luks_uuid(const char *dev, char *buf, size_t size);
