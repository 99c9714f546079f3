/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device-mapper mappings as sysfs shows them, and their live tables as the kernel reports them. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DM_KNAME_MAX 32
#define DM_MAPPER_PATH_MAX 160 /* "/dev/mapper/" and a name shorter than ARGS_NAME_MAX */

/* "/dev/mapper/NAME" into buf; -EINVAL for a name that is not a usable dm name, -ENAMETOOLONG. */
int dm_mapper_path(const char *name, char *buf, size_t size);

/*
 * Find the mapping called name: scans ROOT/sys/block/<X>/dm/name and reads ROOT/sys/block/<X>/dev.
 * Fills *maj, *min and kname ("dm-0"; may be NULL). -ENOENT if no mapping has that name.
 */
int dm_devnum(const char *root, const char *name, unsigned *maj, unsigned *min, char *kname,
              size_t ksize);

#define DM_TABLE_MAX (64 * 1024) /* the most a live table may take (ioctl header included) */
#define DM_TARGETS_MAX 8         /* thaw's mappings have one target; a few more are still read */
#define DM_TARGET_TYPE_MAX 16    /* DM_MAX_TYPE_NAME */

/* One target of a live table. */
struct dm_target {
        uint64_t start, length;           /* 512-byte sectors */
        char type[DM_TARGET_TYPE_MAX];    /* "crypt", "integrity", "linear"… */
        char *params;                     /* its table line; a crypt target's may hold the key */
};

/* A mapping's live table; its buffer may hold a volume key: always dm_table_free() it. */
struct dm_table {
        unsigned maj, min;                /* the mapping's own device */
        size_t n;
        struct dm_target t[DM_TARGETS_MAX];
        char *buf;                        /* the ioctl buffer the params point into */
        size_t size;
};

/*
 * Read the live table of the mapping called name (or, if name is NULL, of device maj:min) through
 * the DM_TABLE_STATUS ioctl on ROOT/dev/mapper/control. -ENXIO: no such mapping; -E2BIG: more than
 * DM_TARGETS_MAX targets or DM_TABLE_MAX bytes. On failure nothing is left to free.
 */
int dm_table_read(const char *root, const char *name, unsigned maj, unsigned min, struct dm_table *out);
/* Wipe (explicit_bzero) and free what dm_table_read() filled in; a zeroed table is fine. */
void dm_table_free(struct dm_table *t);

#define DM_CIPHER_MAX 128
#define DM_KEY_MAX 256           /* bytes of a crypt target's key (the kernel's own cap is lower) */
#define DM_OPTS_MAX 32

/* A crypt target's parameters: <cipher> <key> <iv_offset> <dev> <offset> [<#opt> <opt>...] */
struct dm_crypt {
        char cipher[DM_CIPHER_MAX];       /* "aes-xts-plain64", "capi:authenc(hmac(sha256),xts(aes))-plain64" */
        size_t key_size;                  /* bytes; only the key's size is kept, never the key */
        bool key_in_keyring;              /* ":<size>:<type>:<desc>" rather than the key in hex */
        uint64_t iv_offset;
        unsigned maj, min;                /* the device under it */
        uint64_t offset;                  /* where on it the data starts, 512-byte sectors */
        uint32_t sector_size;             /* 512 unless sector_size:<n> */
        uint32_t tag_size;                /* integrity:<n>:<type>, 0 if none */
        char integrity[16];               /* that <type>: "aead", "none"; "" if none */
        bool iv_large_sectors, allow_discards;
};

/*
 * Parse a crypt target's parameters. Security: the key field is the volume key itself (in hex)
 * unless it is in the keyring; params is wiped with explicit_bzero() before returning, whatever
 * the result, and nothing of the key but its size is kept. -EBADMSG: malformed or an unknown
 * option; -E2BIG: a field over its cap.
 */
int dm_crypt_parse(char *params, struct dm_crypt *out);

/* An integrity target's parameters: <dev> <offset> <tag_size> <mode> <#opt> [<opt>...] */
struct dm_integrity {
        unsigned maj, min;                /* the device under it */
        uint64_t offset;                  /* where on it the integrity superblock starts, sectors */
        uint32_t tag_size;
        char mode;                        /* 'J'ournal, 'B'itmap, 'D'irect, 'R'ecovery (no checks) */
        uint32_t block_size;              /* 512 unless block_size:<n> */
        bool meta_device, internal_hash;
};

/* Parse an integrity target's parameters (not wiped: they hold no key). -EBADMSG, -E2BIG. */
int dm_integrity_parse(const char *params, struct dm_integrity *out);
