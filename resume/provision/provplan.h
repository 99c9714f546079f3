/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What thaw provision would change: the size rule against this machine's memory, the swap as it is. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "image/swsusp.h"
#include "provision/provconf.h"

#define PROVPLAN_MIB (UINT64_C(1) << 20)
/* A partition thaw formats gives its swap this much less: LUKS2's default header and keyslots. */
#define PROVPLAN_LUKS_BYTES (16 * PROVPLAN_MIB)
/* A swap file leaves at least this much free on the root, which must go on working. */
#define PROVPLAN_SPARE_BYTES (256 * PROVPLAN_MIB)
/* The swap file is made under PATH PROVPLAN_FRESH and renamed to PATH once complete. */
#define PROVPLAN_FRESH ".thaw-new"

/* What is there now (provplan_observe()). */
struct provstate {
        bool configured;                /* there is a thaw.conf */
        char conf_device[ARGS_DEVICE_MAX]; /* its device= */
        uint64_t conf_offset;           /* its offset= (a swap file's resume_offset=) */
        bool exists;                    /* the swap file, the partition */
        uint64_t bytes;                 /* its size */
        bool kind_known;                /* kind was read: a swap file; a partition's open mapping */
        enum swsusp_kind kind;          /* what the swap's first page holds */
        bool offset_known;              /* a swap file: file_offset was read (FIEMAP) */
        uint64_t file_offset;           /* its first page on the device (resume_offset=) */
        bool blank;                     /* that page is all zero */
        bool regular;                   /* a swap file: lstat() says a regular file (no link, no device) */
        char unsafe_dir[128];           /* a swap file: a directory on its path others can write, "" if none */
        bool fresh;                     /* a swap file: PATH.thaw-new is there (a stopped setup or grow) */
        bool fresh_regular;             /* ... and is a regular file */
        uint64_t fresh_bytes;           /* ... the room its allocated blocks take */
        bool active;                    /* a swap file: it is active swap (ROOT/proc/swaps) */
        char device[PATH_MAX];          /* a partition: device= resolved once (under root), "" if not there */
        size_t device_root;             /* ... the length of its root prefix: device + device_root is shown */
        char in_use[256];               /* a partition: why it is in use (devcheck_in_use()), "" if not */
        char luks_uuid[64];             /* a partition: the LUKS2 UUID on it, "" if it is not LUKS2 */
        char signature[64];             /* a partition: another signature on it (blkid), "" if none */
        uint64_t room;                  /* a swap file: free bytes on its file system */
        uint64_t mem_total_kib;         /* MemTotal */
        bool initramfs_stale;           /* ARGS_STALE_PATH is there: a change not in the initramfs yet */
        bool tpm2;                      /* a TPM2: ROOT/dev/tpmrm0, or the firmware's ACPI TPM2 table
                                           (its driver may not have made the device yet) */
};

enum provplan_action {
        PROVPLAN_NOTHING,       /* set up, and large enough: nothing changes */
        PROVPLAN_FIRST,         /* nothing set up yet: thaw setup with provision.conf's settings */
        PROVPLAN_GROW,          /* a swap file smaller than the size rule: made again, larger */
        PROVPLAN_REPOINT,       /* thaw.conf's offset= is not where the swap file starts: rewritten */
        PROVPLAN_REFUSE_IMAGE,  /* it would change, but a hibernation image is on the swap */
        PROVPLAN_REFUSE_ROOM,   /* no room: a partition too small, a root too full */
        PROVPLAN_REFUSE_OTHER,  /* something is there that thaw provision does not own */
};

struct provplan {
        enum provplan_action action;
        uint64_t want;               /* bytes of swap the size rule asks for, whole MiB */
        uint64_t have;               /* bytes of swap there are now (0: none) */
        uint64_t offset;             /* REPOINT: the offset= to write */
        bool replace_leftover;       /* FIRST: first remove the plain swap file (no image, not active) at PATH */
        bool rebuild_initramfs;      /* the initramfs is rebuilt: after a change, or one not carried into it yet */
        bool remove_fresh;           /* FIRST, GROW: first remove PATH.thaw-new, which a power cut left */
        char key[KEYCHAIN_SPEC_MAX]; /* FIRST: the chain to enroll: key=, its tpm2 sources left out
                                        on an instance with no TPM2 */
        bool tpm2_left_out;          /* ... as they were */
        char why[PROVCONF_WHY_MAX];  /* one line: what it does, or why it refuses and what to do */
};

/*
 * The size rule on a machine with mem_total_kib of memory: bytes, rounded up to whole MiB, at
 * least min=. -ERANGE if it does not fit 2^62 bytes.
 */
int provplan_size(const struct provsize *rule, uint64_t mem_total_kib, uint64_t *out);
/* Look at ROOT: thaw.conf, the swap provision.conf names, memory. -errno only for meminfo. */
int provplan_observe(const char *root, const struct provconf *c, struct provstate *out);
/* Decide from c and what is there (pure). A hibernation image on the swap is never touched. */
int provplan_decide(const struct provconf *c, const struct provstate *s, struct provplan *out);
/* "nothing", "first setup", "grow", "refused: image", ... */
const char *provplan_action_name(enum provplan_action a);
