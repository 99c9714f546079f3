/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key sources and the provider chain: "fwcfg:NAME,keyfile:PATH,…". */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/clock.h"
#include "secret.h"

enum keysrc_type {
        KEYSRC_FWCFG,   /* fwcfg:NAME   -> ROOT/sys/firmware/qemu_fw_cfg/by_name/NAME/raw */
        KEYSRC_KEYFILE, /* keyfile:PATH -> ROOT/PATH */
        KEYSRC_SMBIOS,  /* smbios:NAME  -> io.systemd.credential[.binary]:NAME= in ROOT/sys/firmware/dmi/entries/11-* */
        KEYSRC_DRIVE,   /* drive:LABEL:PATH -> PATH on the ISO 9660 or vfat file system labelled LABEL */
        KEYSRC_IMDS,    /* imds:aws|gcp|azure[+b64]:PATH -> http://169.254.169.254/PATH,
                           imds:http://HOST[:PORT]/PATH[;header=NAME:VALUE]...[;b64] */
        KEYSRC_TPM2,    /* tpm2[:pcrs=7+11][,bank=sha256][,lock=15] -> the thaw-tpm2 token's sealed key */
        KEYSRC_SYSTEMD_TPM2, /* systemd-tpm2 -> the key systemd-cryptenroll sealed, in its systemd-tpm2 token */
        KEYSRC_PASSPHRASE, /* passphrase[:console] -> typed on the console; last in a chain only */
        KEYSRC__MAX,
};

#define KEYSRC_ARG_MAX 256
#define KEYCHAIN_MAX 8
#define KEYCHAIN_SPEC_MAX 2048
#define KEYSRC_ALLOW_MAX 512 /* imds_allow_urls() */

struct keysrc {
        enum keysrc_type type;
        char arg[KEYSRC_ARG_MAX];
};

struct keychain {
        size_t n;
        struct keysrc src[KEYCHAIN_MAX];
};

struct luks_tokens; /* luks.h */

/*
 * What a key provider may see: where to look, until when, and the LUKS2 device it is to unlock
 * with the tokens read from its header once (a TPM2 provider takes its sealed blob from there).
 * The tokens are outside input: a provider parses strictly the ones of its own type, and never
 * lets them choose where a key comes from (the chain does).
 */
struct keysrc_ctx {
        const char *root;                 /* path prefix, "" on a real system */
        int64_t deadline_ms;              /* CLOCK_MONOTONIC: wait for a late source until then */
        const char *device;               /* the LUKS2 device; NULL when there is none yet (setup) */
        const struct luks_tokens *tokens; /* its tokens; NULL if none could be read */
        /* If not NULL: a provider that fails may say why here, in one line without secrets
         * ("PCR mismatch", a decoded TPM error); the caller empties it before each call. */
        char *detail;
        size_t detail_size;
};

/* A key source ready to be enrolled: the key of its new keyslot and the JSON of its token. */
struct keysrc_enrollment {
        struct secret *key;
        char *token; /* malloc()ed, holds no key material (a sealed blob at most) */
        bool typed;  /* a passphrase a person types: its keyslot is stretched with argon2id */
};

/*
 * Parse a comma-separated chain. A source without arguments may be its bare name ("tpm2"), and a
 * piece that is neither "type:…" nor a bare name continues the source before it, so sources
 * whose arguments hold commas read naturally: "tpm2:pcrs=7,bank=sha256,fwcfg:opt/thaw/key".
 */
/*
 * Parse a comma-separated chain; -EINVAL on an empty, unknown or malformed source, -E2BIG on too
 * many, -ERANGE for a tpm2 source whose pcrs= names a PCR of 16-23 (resettable by software).
 */
int keychain_parse(const char *spec, struct keychain *out);
int keysrc_parse(const char *one, struct keysrc *out);
/* "fwcfg:NAME" (or a bare "tpm2") back into text; -ENAMETOOLONG on truncation. */
int keysrc_format(const struct keysrc *s, char *buf, size_t size);
int keychain_format(const struct keychain *c, char *buf, size_t size);
const char *keysrc_type_name(enum keysrc_type t);     /* "fwcfg", "keyfile", … */
/* Why keysrc_fetch() failed, in words ("not found", "empty"…; else strerror()), for log lines. */
const char *keysrc_strerror(int r);

/*
 * Fetch the key from one source. ctx->root is a path prefix ("" on a real system) for every /sys,
 * /dev, /etc access. Waits (polling) until ctx->deadline_ms on CLOCK_MONOTONIC for a source that
 * may appear late (fw_cfg module loading, a TPM driver). Returns 0 and *out, or: -ENOENT absent at deadline, -EMSGSIZE larger
 * than SECRET_MAX, -ENODATA empty, -EBADMSG present but malformed (bad base64), -ENODEV no drive
 * with that label at deadline, -EMEDIUMTYPE a drive neither ISO 9660 nor vfat, -EACCES a path
 * leading off the drive or a metadata service refusing the request, -ETIMEDOUT, -ECONNREFUSED
 * a service not reachable, -EPROTO a bad answer, -ENOPKG libcurl not installed, -EPERM an imds:URL
 * neither link-local nor allowed, other -errno from I/O. A tpm2 source adds the TPM2_* codes of
 * tpm2.h (-ENOKEY: no thaw-tpm2 token on the device). *out untouched on failure.
 */
int keysrc_fetch(const struct keysrc *s, const struct keysrc_ctx *ctx, struct secret **out);

/*
 * Make the key of a new keyslot for source s and the token that records it: a sealing source
 * (tpm2) makes a fresh random key and seals it; every other source fetches its key once. The
 * token is "thaw-<type>" naming the source, with the provider's own fields. Errors as
 * keysrc_fetch(). On success the caller owns out (keysrc_enrollment_free()).
 */
int keysrc_enroll(const struct keysrc *s, const struct keysrc_ctx *ctx, struct keysrc_enrollment *out);
/* Wipe and free what an enrollment holds; the struct itself is the caller's. NULL ok. */
void keysrc_enrollment_free(struct keysrc_enrollment *e);

/*
 * The origins ("http://HOST[:PORT]", comma-separated; "" for none) that imds:URL sources may name
 * besides link-local addresses, for the rest of the process. 0, or -EINVAL if list is malformed.
 */
int imds_allow_urls(const char *list);
