/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key sources and the provider chain: "fwcfg:NAME,keyfile:PATH,…". */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "clock.h"
#include "secret.h"

enum keysrc_type {
        KEYSRC_FWCFG,   /* fwcfg:NAME   -> ROOT/sys/firmware/qemu_fw_cfg/by_name/NAME/raw */
        KEYSRC_KEYFILE, /* keyfile:PATH -> ROOT/PATH */
        KEYSRC_SMBIOS,  /* smbios:NAME  -> io.systemd.credential[.binary]:NAME= in ROOT/sys/firmware/dmi/entries/11-* */
        KEYSRC_DRIVE,   /* drive:LABEL:PATH -> PATH on the ISO 9660 or vfat file system labelled LABEL */
        KEYSRC_IMDS,    /* imds:aws|gcp|azure[+b64]:PATH -> http://169.254.169.254/PATH */
        /* later: KEYSRC_TPM2, KEYSRC_PASSPHRASE */
        KEYSRC__MAX,
};

#define KEYSRC_ARG_MAX 256
#define KEYCHAIN_MAX 8
#define KEYCHAIN_SPEC_MAX 2048

struct keysrc {
        enum keysrc_type type;
        char arg[KEYSRC_ARG_MAX];
};

struct keychain {
        size_t n;
        struct keysrc src[KEYCHAIN_MAX];
};

/* Parse a comma-separated chain; -EINVAL on an empty, unknown or malformed source, -E2BIG on too many. */
int keychain_parse(const char *spec, struct keychain *out);
int keysrc_parse(const char *one, struct keysrc *out);
/* "fwcfg:NAME" back into text; -ENAMETOOLONG on truncation. */
int keysrc_format(const struct keysrc *s, char *buf, size_t size);
int keychain_format(const struct keychain *c, char *buf, size_t size);
const char *keysrc_type_name(enum keysrc_type t);     /* "fwcfg", "keyfile", … */

/*
 * Fetch the key from one source. root is a path prefix ("" on a real system) for every /sys, /dev,
 * /etc access. Waits (polling) until deadline_ms on CLOCK_MONOTONIC for a source that may appear
 * late (fw_cfg module loading). Returns 0 and *out, or: -ENOENT absent at deadline, -EMSGSIZE larger
 * than SECRET_MAX, -ENODATA empty, -EBADMSG present but malformed (bad base64), -ENODEV no drive
 * with that label at deadline, -EMEDIUMTYPE a drive neither ISO 9660 nor vfat, -EACCES a path
 * leading off the drive or a metadata service refusing the request, -ETIMEDOUT, -ECONNREFUSED
 * a service not reachable, -EPROTO a bad answer, -ENOPKG libcurl not installed, other -errno from
 * I/O. *out untouched on failure.
 */
int keysrc_fetch(const struct keysrc *s, const char *root, int64_t deadline_ms, struct secret **out);
