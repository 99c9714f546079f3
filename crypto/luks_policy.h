/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LUKS2 header policy: what a header must look like before thaw tries any key on it, and its fingerprint. */
#pragma once
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Which headers are acceptable:
 * THAW: what `thaw setup` writes (one aes-xts-plain64 segment with 4096-byte sectors, integrity
 *   only as hmac(sha256), cheap PBKDF2 keyslots, argon2id passphrase keyslots within the caps;
 *   keyslots other tools add, systemd-cryptenroll's, must look the same).
 * FOREIGN: a container thaw did not format (an encrypted root holding the swap file, resume_offset=
 *   set): 512- or 4096-byte sectors, the performance flags an admin may set with `cryptsetup refresh
 *   --persistent`, and keyslots over the caps, which are kept but never tried (luks.c's
 *   slot_allowed()). cipher_null anywhere, a digest over its cap or a mapping-changing requirement
 *   are refused in both.
 */
enum luks_profile {
        LUKS_PROFILE_THAW,
        LUKS_PROFILE_FOREIGN,
};

#define LUKS_FP_PREFIX "sha256:"
#define LUKS_FP_LEN (7 + 64)           /* "sha256:" and 64 lowercase hex digits */
#define LUKS_FP_SIZE (LUKS_FP_LEN + 1)
#define LUKS_POLICY_JSON_MAX (4u << 20) /* LUKS2 metadata areas are at most 4 MiB */
#define LUKS_POLICY_WHY_MAX 512
/* A header the policy (or the pin) refuses: distinct from -EPERM, "this key does not open it". */
#define LUKS_EPOLICY EMEDIUMTYPE

/*
 * The most PBKDF2 iterations the digest may ask for. The digest runs once for every keyslot tried
 * (a wrong key included), so it bounds each try. THAW: thaw writes 1000 (no benchmark). FOREIGN:
 * cryptsetup luksFormat benchmarks the digest for 125 ms; on a CPU with SHA extensions that is up
 * to about 500,000 PBKDF2-SHA256 iterations, so 1,000,000 accepts real installers' headers and
 * costs about 0.25 s on such a CPU, 1-2.5 s under QEMU TCG, per try.
 */
#define LUKS_DIGEST_ITER_MAX_THAW 100000
#define LUKS_DIGEST_ITER_MAX_FOREIGN 1000000
/*
 * The most argon2 memory a keyslot may ask for to be acceptable in a thaw header (thaw's own
 * passphrase slots ask for 64 MiB; cryptsetup's default ceiling is 1 GiB). Work is capped by
 * LUKS_ARGON2_WORK_MAX (luks.h); argon2 slots are only ever tried for a passphrase a person types.
 */
#define LUKS_ARGON2_KIB_MAX 1048576
#define LUKS_ARGON2_CPUS_MAX 16

/* What to check on a header before any key is tried; passed in, never global. */
struct luks_policy {
        enum luks_profile profile;
        const char *pin;      /* "sha256:<64 hex>" (rd.thaw.header= / header=), NULL or "": none */
        int64_t deadline_ms;  /* clock_now_ms() after which no further keyslot is tried (the first is); 0: none */
};

/*
 * Check header json (crypt_dump_json() of the header libcryptsetup loaded; at most
 * LUKS_POLICY_JSON_MAX bytes) with LUKS2 UUID uuid against p (NULL: THAW, no pin). fp (may be
 * NULL, LUKS_FP_SIZE bytes) receives the fingerprint whenever the JSON parses, refused or not.
 * 0: acceptable; -LUKS_EPOLICY: refused, why names the field ("segment 0 encryption is
 * cipher_null-ecb: not a header thaw wrote") or the pin; -EINVAL: not LUKS2 JSON (why says so);
 * -ENOMEM.
 */
int luks_policy_check_json(const char *json, const char *uuid, const struct luks_policy *p, char *fp,
                           char *why, size_t size);

/* 1 if s is "sha256:" and 64 lowercase hex digits. */
int luks_fp_valid(const char *s);
