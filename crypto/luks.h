/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LUKS2 container of the thaw swap device, through libcryptsetup only. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "keysrc.h"
#include "luks_policy.h"
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
/* The argon2id cost of a recovery passphrase's keyslot (thaw enroll --key passphrase). */
#define LUKS_PASSPHRASE_KIB 65536
#define LUKS_PASSPHRASE_PASSES 4

/* 1 if dev carries a LUKS2 header, 0 if not (none, LUKS1, damaged), -ENOENT if dev is absent, other -errno. */
int luks_probe(const char *dev);

/* How far a long step has got (bytes done of total), for the caller to show; called often. */
struct luks_progress {
        void (*fn)(uint64_t done, uint64_t total, void *userdata);
        void *userdata;
};

/*
 * Format dev as LUKS2 (aes-xts-plain64, 512-bit volume key, 4096-byte sectors) and add one PBKDF2
 * keyslot per enrollment: e[i].key unlocks it, and the token e[i].token (keysrc_enroll(): it names
 * the source, never holds the key) is bound to it. label goes into the LUKS2 label (may be NULL).
 * integrity adds dm-integrity with an hmac(sha256) tag per sector (a 768-bit volume key) and writes
 * every sector once so that each has a valid tag; it needs device-mapper, dm-integrity and authenc.
 * progress (may be NULL) is told how far that writing has got.
 */
int luks_format(const char *dev, const char *label, size_t n, const struct keysrc_enrollment *e,
                bool integrity, const struct luks_progress *progress);

/*
 * Add one more enrollment to dev: unlock (the key of one of its cheap keyslots, see
 * luks_activate()) recovers the volume key, e->key gets a new PBKDF2 keyslot and e->token is bound
 * to it. 0 and *token_id; -EPERM if unlock opens no cheap keyslot.
 */
int luks_enroll(const char *dev, const struct secret *unlock, const struct keysrc_enrollment *e, int *token_id,
                const struct luks_policy *p);

/*
 * The ticket key of dev (ticket.h), from the volume key that key (of one of its cheap keyslots)
 * recovers; left in root's keyring too, as an unlock does. -EPERM if key opens no cheap keyslot.
 */
int luks_ticket_key(const char *dev, const struct secret *key, const struct luks_policy *p, struct secret **out);

/*
 * Remove token id and the keyslots bound to it that no other token refers to; those another token
 * refers to stay, and go into *kept (bit i: keyslot i; may be NULL). -ENOENT: no such token;
 * -EBUSY: it would remove the last active keyslot (the device could never be opened again).
 */
int luks_token_remove(const char *dev, int id, uint32_t *kept, const struct luks_policy *p);

#define LUKS_TOKENS_MAX 32             /* LUKS2 token ids are 0..31 */
#define LUKS_TOKEN_READ_MAX 65536      /* any token's JSON, ours or another tool's, capped */

/* One token of a LUKS2 header as read: outside input, to be parsed strictly by its user. */
struct luks_token_info {
        int id;
        char type[64];      /* "thaw-tpm2", "systemd-tpm2", … */
        char *json;         /* the token's JSON text, at most LUKS_TOKEN_READ_MAX bytes */
        uint32_t keyslots;  /* bit i: bound to keyslot i */
};

struct luks_tokens {
        size_t n;
        struct luks_token_info t[LUKS_TOKENS_MAX];
};

/* Every token of dev, in id order (tokens larger than the cap are left out). */
int luks_tokens_read(const char *dev, struct luks_tokens **out);
void luks_tokens_free(struct luks_tokens *t);   /* NULL ok */

/*
 * Activate dev as /dev/mapper/name with key, trying only the active keyslots that use PBKDF2 with at
 * most LUKS_PBKDF2_ITER_MAX iterations. -EPERM: none of them takes this key.
 */
int luks_activate(const char *dev, const char *name, const struct secret *key, const struct luks_policy *p);
/*
 * The same for a passphrase typed by a person: argon2i/argon2id keyslots are tried too, when their
 * memory cost is at most argon2_max_kib (the caller passes half of MemTotal) and their work at
 * most LUKS_ARGON2_WORK_MAX. A keyslot refused for its cost is named in why, one clause each
 * ("keyslot 1 (argon2id) needs 1048576 KiB of memory, more than half of the RAM (250000 KiB): not
 * tried"); why is "" if none was. -EPERM: no allowed keyslot takes this key.
 */
int luks_activate_passphrase(const char *dev, const char *name, const struct secret *key,
                             uint64_t argon2_max_kib, const struct luks_policy *p, char *why, size_t size);
/* Close /dev/mapper/name; if it is busy, deferred: the kernel removes it at its last close (0). */
int luks_deactivate(const char *name);
/*
 * Make each enrollment e[i] (keysrc_enroll() of srcs->src[i]) unlock the existing LUKS2 container
 * dev (a root file system's, say) and bind its token. A key that a cheap keyslot already takes
 * keeps that slot (and an existing token naming the same source is not added again); any other
 * gets a new PBKDF2 keyslot added with existing, a key that any of dev's keyslots takes (may be
 * NULL if every key is enrolled). -EPERM: existing does not unlock dev; -ENOKEY: a key needs a
 * slot and existing is NULL.
 */
int luks_enroll_sources(const char *dev, const struct secret *existing, const struct keychain *srcs,
                        const struct keysrc_enrollment *e, const struct luks_policy *p);
/* Test key against dev's keyslots without activating anything (works without device-mapper). */
int luks_check_key(const char *dev, const struct secret *key, const struct luks_policy *p);
/*
 * Every function above that tries a key (luks_activate*, luks_check_key, luks_enroll*,
 * luks_token_remove) first checks the header it loaded against p (NULL: LUKS_PROFILE_THAW, no pin)
 * and fails with -LUKS_EPOLICY before any key is tried if it does not pass; luks_activate* check it
 * again after activating on the same loaded header (and close the mapping if it fails). luks_activate*
 * always try the first allowed keyslot, even past p->deadline_ms, and no further one past it (-ETIME:
 * the key did not open the keyslots tried before the deadline). Each try is bounded by the caps the
 * policy puts on the digest and the keyslots tried.
 */

/*
 * Check dev's header against p (NULL: THAW, no pin) without trying any key: 0 if it passes,
 * -LUKS_EPOLICY with the reason in why if not, other -errno if it cannot be read. fp (may be NULL,
 * LUKS_FP_SIZE bytes) gets the header's fingerprint whenever it could be computed.
 */
int luks_header_check(const char *dev, const struct luks_policy *p, char *fp, char *why, size_t size);
struct crypt_device;
/*
 * crypt_init() of dev with libcryptsetup's log silenced, as every crypto/ file that opens a header
 * must (a library never prints): 0 and *out (the caller crypt_free()s it), or its negative errno.
 */
int luks_init_quiet(const char *dev, struct crypt_device **out);
/* The same on a header libcryptsetup has loaded already (the token plugin's cd). */
int luks_header_check_cd(struct crypt_device *cd, const struct luks_policy *p, char *why, size_t size);
/*
 * 1 if thaw itself would try keyslot slot of cd's header: active, and PBKDF2 with at most
 * LUKS_PBKDF2_ITER_MAX iterations, or (argon2_max_kib > 0, for a passphrase a person types) argon2i/id
 * with at most argon2_max_kib KiB of memory and LUKS_ARGON2_WORK_MAX work; 0 if not (inactive,
 * out of range, another KDF or over the caps). luks_activate*() and the token plugin both use it:
 * through a token libcryptsetup runs every bound keyslot's KDF itself, with no cap of its own.
 */
int luks_slot_cheap_cd(struct crypt_device *cd, int slot, uint64_t argon2_max_kib);

/* 1 if the mapping name is active, 0 if not. */
int luks_is_active(const char *name);
/* 1 if the active mapping name has authenticated encryption (dm-integrity), 0 if not, or -errno. */
int luks_active_integrity(const char *name);

/*
 * The key sources named by the device's thaw-* tokens, in token order. 0 with out->n == 0 if none.
 * For setup and inspection only: the header is unauthenticated, so boot never picks a source by it.
 */
int luks_token_sources(const char *dev, struct keychain *out);
/*
 * Turn libcryptsetup's metadata locking (flock() in /run/cryptsetup) off for this process, for
 * good: for thaw's writer, whose ticket is written while every other process is frozen (one of
 * them could hold the lock, and the write would wait forever). 0 or -errno.
 */
int luks_locking_off(void);
/* The device the active mapping name was opened from (its LUKS2 header's), into dev. */
int luks_active_device(const char *name, char *dev, size_t size);
/* LUKS2 UUID of dev into buf (37 bytes suffices). */
int luks_uuid(const char *dev, char *buf, size_t size);
