/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal interface of key providers: one table entry per key source type. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "keysrc.h"
#include "secret.h"

struct json_object;

struct key_provider {
        const char *name;                  /* the "name:" prefix of a source, e.g. "fwcfg" */
        /* 0 if arg is well formed for this provider, -EINVAL if not ("" for a bare name). */
        int (*check)(const char *arg);
        /* Fetch the key named by arg; contract of keysrc_fetch(). */
        int (*fetch)(const char *arg, const struct keysrc_ctx *ctx, struct secret **out);
        /*
         * Optional, for sources that make their key at enrollment (tpm2 seals a fresh one): the
         * new key into *key, and the provider's fields added to token, which already holds type,
         * keyslots and thaw-source. NULL: enrollment fetch()es the key and adds no field.
         */
        int (*enroll)(const char *arg, const struct keysrc_ctx *ctx, struct secret **key,
                      struct json_object *token);
};

extern const struct key_provider key_fwcfg_provider;
extern const struct key_provider key_keyfile_provider;
extern const struct key_provider key_smbios_provider;
extern const struct key_provider key_drive_provider;
extern const struct key_provider key_imds_provider;
extern const struct key_provider key_tpm2_provider;
extern const struct key_provider key_systemd_tpm2_provider;
extern const struct key_provider key_passphrase_provider;

/* Read the regular file at path into a new secret; -ENOENT if absent, -EINVAL if not a regular file. */
int keysrc_read_path(const char *path, struct secret **out);

/*
 * A key a kernel driver publishes in sysfs (fw_cfg, dmi-sysfs): find(arg, out) every poll_ms until
 * it says other than -ENOENT or deadline_ms passes. The driver may load after we start, but once
 * its directory dir is there a missing key is final after grace_ms, so the next source in the chain
 * still gets the rest of the timeout. find()'s result, or -ENOENT.
 */
int keysrc_wait_driver(const char *dir, int64_t deadline_ms, int64_t grace_ms, int64_t poll_ms,
                       int (*find)(void *arg, struct secret **out), void *arg, struct secret **out);

/* The credential name (text or base64 binary form) in one raw SMBIOS type 11 structure (tests). */
int smbios_find_credential(const uint8_t *raw, size_t len, const char *name, struct secret **out);

/* "LABEL:/PATH" into its label and path; -EINVAL unless both are well formed (tests). */
int drive_split(const char *arg, char *label, size_t lsize, char *path, size_t psize);
/* mnt + path, resolved, into out; -EACCES if it resolves outside mnt, -ENOENT if absent (tests). */
int drive_key_path(const char *mnt, const char *path, char *out, size_t size);

/*
 * Let imds: sources use base ("http://HOST[:PORT]", no path) instead of the link-local metadata
 * address. For tests and explicit administrator choice only; the boot never calls it. 0 or -EINVAL.
 */
int imds_allow_base(const char *base);

/*
 * Let tpm2 sources use tcti ("swtpm:host=127.0.0.1,port=2321") instead of ROOT/dev/tpmrm0. For
 * tests and explicit administrator choice only; the boot never calls it. 0 or -EINVAL.
 */
int tpm2_use_tcti(const char *tcti);

struct tpm2;
/*
 * The TPM for the tpm2 and systemd-tpm2 sources: the tpm2_use_tcti() one, or ROOT/dev/tpmrm0,
 * waiting until ctx->deadline_ms for a driver that is late to make it. Says why in ctx->detail.
 */
int tpm2_open_boot(const struct keysrc_ctx *ctx, struct tpm2 **out);
