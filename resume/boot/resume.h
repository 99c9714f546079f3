/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The decisions of `thaw resume`: unlock the swap device, hand an image to the kernel, or step aside. */
#pragma once
#include <stdint.h>

#include "args.h"
#include "keysrc.h"
#include "luks_policy.h"
#include "secret.h"
#include "ticket.h"

/* Exactly one outcome per run; each is reported by one line through say(). */
enum resume_outcome {
        RESUME_DISABLED,       /* rd.thaw=0 */
        RESUME_NO_DEVICE,      /* no rd.thaw.device= */
        RESUME_NORESUME,       /* noresume, nohibernate, hibernate=no: nothing unlocked */
        RESUME_BAD_DEVICE,     /* rd.thaw.device= is not a device spec */
        RESUME_DEVICE_TIMEOUT, /* the device did not appear in time */
        RESUME_NOT_LUKS,       /* not a LUKS2 container, or unreadable */
        RESUME_BAD_HEADER,     /* the header fails the policy or the pin: nothing tried, nothing unlocked */
        RESUME_NO_KEY_SOURCE,  /* no rd.thaw.key= nor key= in thaw.conf: nothing unlocked */
        RESUME_NO_KEY,         /* no key source unlocked it */
        RESUME_NO_MAPPING,     /* unlocked, but the mapping cannot be used: closed again */
        RESUME_BAD_MAPPING,    /* the live table is not what the header says: closed, nothing read */
        RESUME_NO_IMAGE,       /* no image: swap ready */
        RESUME_FOREIGN,        /* neither image nor swap at resume_offset: mapping closed */
        RESUME_OFFSET_MISMATCH, /* no image at resume_offset, but one at page 0: mapping closed */
        RESUME_UNAVAILABLE,    /* an image, but this kernel cannot resume: mapping closed, image kept */
        RESUME_CONSUMED,       /* the kernel took the image and did not restore it */
        RESUME_KEPT,           /* the kernel did not look: mapping closed, image kept */
        RESUME_MISMATCH_KEPT,  /* a pre-handoff check failed: no handoff, mapping closed, image kept */
        RESUME_MISMATCH_DISCARDED, /* a check failed, rd.thaw.mismatch=discard: swap ready */
        RESUME_STALE,          /* the ticket refused it (not fresh, not authentic): image discarded */
        RESUME_POWEROFF,       /* a check a boot on the right machine would pass failed: powered off */
};

/* The steps that need device-mapper or the kernel; tests replace them. */
struct resume_ops {
        int (*probe)(const char *dev);
        int (*fetch)(const struct keysrc *s, const struct keysrc_ctx *ctx, struct secret **out);
        /* The device's tokens, for providers that keep their sealed key there (may be NULL). */
        int (*tokens)(const char *dev, struct luks_tokens **out);
        void (*tokens_free)(struct luks_tokens *t);
        /* The header policy (luks_header_check()): 0, or -LUKS_EPOLICY with why; no key tried. */
        int (*check_header)(const char *dev, const struct luks_policy *p, char *fp, char *why, size_t size);
        int (*activate)(const char *dev, const char *name, const struct secret *key, const struct luks_policy *p);
        /* For a typed passphrase: argon2 keyslots within argon2_max_kib too (may be NULL). */
        int (*activate_passphrase)(const char *dev, const char *name, const struct secret *key,
                                   uint64_t argon2_max_kib, const struct luks_policy *p, char *why, size_t size);
        int (*deactivate)(const char *name);
        int (*is_active)(const char *name);
        /*
         * 0 if /dev/mapper/name is mapped as dev's LUKS2 header says (luks_mapping_check()), else
         * -errno and why. NULL: not checked (tests of other steps only).
         */
        int (*check_mapping)(const char *root, const char *dev, const char *name, char *why, size_t size);
        int (*handoff)(const char *root, unsigned maj, unsigned min, uint64_t offset);
        /*
         * The image ticket (ticket.h): read it, change its state (no key needed), and the volume's
         * ticket key from the keyring. NULL ticket_read: no ticket step (tests of other steps only).
         */
        int (*ticket_read)(const char *dev, struct ticket *t, char *why, size_t size);
        int (*ticket_set_state)(const char *dev, enum ticket_state s, const char *why);
        int (*ticket_key)(const char *dev, struct secret **out);
        /* The markers now of the file system recorded as rec (fresh.h's fresh_fs_read_fn). */
        int (*fs_read)(const struct fsmark *rec, enum fsmark_level level, char *dev, size_t dsize, struct fsmark *m,
                       char *why, size_t size);
        /* Power off now, nothing mounted (rd.thaw.mismatch=poweroff): returns only if it could not. */
        int (*poweroff)(const char *root);
        /*
         * The TPM2 counter of dev's volume (tpm2_counter.h), under the auth derived from its ticket
         * key: read it, or increment it (the new value into *value). why says what failed. NULL: no
         * TPM (a ticket that names a counter cannot be checked).
         */
        int (*tpm_counter_read)(const char *root, const char *dev, const struct secret *key, int64_t deadline_ms,
                                uint64_t *value, char *why, size_t size);
        int (*tpm_counter_increment)(const char *root, const char *dev, const struct secret *key,
                                     int64_t deadline_ms, uint64_t *value, char *why, size_t size);
        /* Extend the TPM2 lock PCRs (tpm2_lock_boot()); NULL: no TPM lock. */
        int (*tpm_lock)(const char *root, uint32_t pcrs, int64_t deadline_ms, char *why, size_t size);
};

extern const struct resume_ops resume_default_ops; /* libcryptsetup, key sources, /sys/power */

/* Receives each message, without the "thaw: " prefix; level is a syslog level. */
typedef log_say_fn resume_say_fn;

struct resume_ctx {
        const char *root;              /* "" on a real system */
        const struct thaw_args *args;
        const struct resume_ops *ops;
        resume_say_fn say;
        void *userdata;
        struct resume_lock *lock;      /* resume_run()'s own; NULL in callers' contexts */
        struct resume_result *result;  /* resume_run()'s own, for the state file; NULL in callers' contexts */
};

/* A message through c->say (nothing if NULL), for the files of boot/. */
#define resume_say(c, level, ...) log_sayf((c)->say, (c)->userdata, level, __VA_ARGS__)

/*
 * Run the resume decisions. Returns only if no image was restored, after writing what happened to
 * ROOT/run/thaw/state (a failure to write it is reported through say).
 */
enum resume_outcome resume_run(const struct resume_ctx *c);
/* Short name of an outcome, as in the state file: "no-image", "mismatch-kept"… */
const char *resume_outcome_name(enum resume_outcome o);
