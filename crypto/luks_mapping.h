/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Is an active mapping encrypted as its LUKS2 header says? Its live table compared with the header. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dev/dm.h"
#include "luks_policy.h"

/* The two ciphers thaw's containers are mapped with, without and with integrity. */
#define LUKS_MAPPING_CIPHER "aes-xts-plain64"
#define LUKS_MAPPING_CIPHER_AEAD "capi:authenc(hmac(sha256),xts(aes))-plain64"

/* What the LUKS2 header says (libcryptsetup's reading of it). */
struct luks_mapping_want {
        char cipher[64];        /* crypt_get_cipher(): "aes" */
        char mode[64];          /* crypt_get_cipher_mode(): "xts-plain64" */
        char integrity[64];     /* crypt_get_integrity_info(): "hmac(sha256)", "" for none */
        uint32_t tag_size;      /* bytes of integrity tag per sector, 0 for none */
        size_t key_size;        /* crypt_get_volume_key_size(), bytes (the hmac key included) */
        uint32_t sector_size;   /* crypt_get_sector_size() */
        uint64_t offset;        /* crypt_get_data_offset(), 512-byte sectors */
        unsigned maj, min;      /* the device the header is on */
};

/* What the kernel maps: the mapping's live table and, under a crypt target, a dm device's. */
struct luks_mapping_live {
        size_t targets;
        char type[DM_TARGET_TYPE_MAX];  /* of the first target */
        uint64_t start;
        struct dm_crypt crypt;          /* if type is "crypt" */
        bool lower_dm;                  /* the crypt target's device is a mapping itself: */
        size_t lower_targets;
        char lower_type[DM_TARGET_TYPE_MAX];
        uint64_t lower_start;
        struct dm_integrity integrity;  /* if lower_type is "integrity" */
};

/*
 * 0 if live maps what w describes: one crypt target from sector 0, the header's cipher (and that
 * one of the two above, never cipher_null), key size, IV offset 0, sector size, data offset and
 * device, with integrity exactly when the header has it (then through a dm-integrity mapping of
 * the same device, tag size and block size, not in recovery mode). -EPROTO with why naming the
 * field ("live table cipher is cipher_null-ecb, the header says aes-xts-plain64") if not.
 */
int luks_mapping_compare(const struct luks_mapping_want *w, const struct luks_mapping_live *live, char *why,
                         size_t size);

/*
 * Compare the live table of /dev/mapper/name (through ROOT/dev/mapper/control) with the LUKS2
 * header of dev, or if dev is NULL of the device under the mapping (ROOT/dev/<kernel name>). 0 if
 * it is mapped as the header says; -EPROTO if not, other -errno if it cannot tell (no such mapping,
 * no header); why says which in every failure.
 */
int luks_mapping_check(const char *root, const char *dev, const char *name, char *why, size_t size);
/*
 * luks_mapping_check(), and first the header policy p (profile and pin, luks_policy.h) on the same
 * loaded header: -LUKS_EPOLICY with why naming the field if the header is refused. What thaw
 * hibernate checks, so that no image goes where the next boot would refuse to look.
 */
int luks_mapping_check_policy(const char *root, const char *dev, const char *name, const struct luks_policy *p,
                              char *why, size_t size);
