/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw's settings from the kernel command line and /etc/thaw/thaw.conf (the command line wins). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/log.h"
#include "image/format.h"
#include "keysrc.h"

#define ARGS_DEVICE_MAX 256
#define ARGS_NAME_MAX 128          /* device-mapper names are shorter than 128 bytes */
#define ARGS_TIMEOUT_DEFAULT 30
#define ARGS_TIMEOUT_MAX 3600
#define ARGS_NAME_DEFAULT "thaw-swap"
#define ARGS_OFFSET_MAX (INT64_MAX / SWSUSP_PAGE) /* offset * SWSUSP_PAGE must fit an off_t */
#define ARGS_CMDLINE_MAX 16384     /* cap on /proc/cmdline or --cmdline */
#define ARGS_CONF_MAX 16384        /* cap on thaw.conf */
#define ARGS_TOKEN_MAX (KEYCHAIN_SPEC_MAX + 32)
#define ARGS_CONF_PATH "/etc/thaw/thaw.conf"
/*
 * There while the initramfs may not carry the current thaw.conf: made (synced) by thaw provision
 * before it changes thaw.conf, removed once dracut rebuilt the initramfs. thaw hibernate refuses
 * while it is there. Not under /etc/thaw, which dracut's module copies into the initramfs.
 */
#define ARGS_STALE_PATH "/var/lib/thaw/initramfs-stale"

struct thaw_args {
        char device[ARGS_DEVICE_MAX]; /* rd.thaw.device= / device=, "" if unset */
        char key[KEYCHAIN_SPEC_MAX];  /* rd.thaw.key= / key=, "": none, nothing unlocked */
        char name[ARGS_NAME_MAX];     /* rd.thaw.name= / name= */
        unsigned timeout_s;           /* rd.thaw.timeout= / timeout= */
        uint64_t offset;              /* resume_offset= / offset=, in SWSUSP_PAGE pages */
        bool noresume;                /* noresume, nohibernate, hibernate=no… */
        const char *noresume_by;      /* the parameter that set it, as shown to users; NULL if unset */
        bool disabled;                /* rd.thaw=0 */
        bool mismatch_discard;        /* rd.thaw.mismatch=discard / mismatch=: default poweroff (keep: the same) */
        bool s4_hwsig;                /* acpi_sleep=s4_hwsig: the kernel compares hardware signatures */
        bool verify;                  /* rd.thaw.verify=1 / verify=1: decompress and CRC before handoff */
        char swapin[12];              /* swapin= in thaw.conf: after a resume, prefetch (default),
                                         swapoff or off */
        uint64_t image_size_kib;      /* image_size= in thaw.conf, for thaw hibernate; UINT64_MAX: unset */
        char writer[8];               /* writer= in thaw.conf, for thaw hibernate: auto (default),
                                         kernel or thaw */
        char allow_url[KEYSRC_ALLOW_MAX]; /* allow-url= in thaw.conf only: origins imds:URL may name */
        char header[72];              /* rd.thaw.header= / header=: the pinned LUKS2 header fingerprint
                                         "sha256:<64 hex>", "" if none */
};

void args_init(struct thaw_args *a);

/*
 * Next whitespace-separated token of a kernel command line, with double quotes removed (they only
 * protect spaces, as in param="a b"). Returns 1 and advances *p, 0 at the end (or at "--"),
 * -E2BIG if the token does not fit buf (it is skipped, buf holds its start).
 */
int args_next_token(const char **p, char *buf, size_t size);

/*
 * Apply the command line to a. Unrelated parameters are ignored. A thaw parameter with a bad value
 * is ignored too (a keeps its previous value); the count of those is returned, the first one
 * copied to bad (may be NULL).
 */
int args_parse_cmdline(const char *cmdline, struct thaw_args *a, char *bad, size_t badsize);

/* Apply thaw.conf text (KEY=VALUE lines, '#' comments). Returns the count of bad lines, like above. */
int args_parse_conf(const char *text, struct thaw_args *a, char *bad, size_t badsize);

/* 1 if name is usable as a device-mapper name. */
int args_name_valid(const char *name);

/*
 * The settings of a that differ from args_init()'s, as kernel arguments ("rd.thaw.device=UUID=…
 * rd.thaw.key=… resume_offset=…"), values with spaces in double quotes; what a host-only initramfs
 * stores. -ENAMETOOLONG if buf is too small.
 */
int args_format_cmdline(const struct thaw_args *a, char *buf, size_t size);

/*
 * The value of setting KEY (a thaw.conf key: device, key, name, offset, timeout, ...) in a, as
 * thaw.conf would write it, its default included (timeout 30, name thaw-swap). Returns 1 and the
 * value in buf, 0 and "" when it has none (device, key, header, allow-url, image_size unset),
 * -ENOENT for a key thaw.conf does not have, -ENAMETOOLONG if buf is too small.
 */
int args_get(const struct thaw_args *a, const char *key, char *buf, size_t size);


/* args_load(): ROOT/etc/thaw/thaw.conf alone, as dracut's host-only image stores it (thaw config). */
#define ARGS_LOAD_CONF_ONLY 1u

/*
 * thaw's settings, the one place thaw.conf is read. By default (every command, the boot): settings
 * from ROOT/etc/thaw/thaw.conf, then the kernel command line (cmdline, or if NULL: the arguments a
 * host-only initramfs stores in ROOT/etc/cmdline.d/ *.conf, then ROOT/proc/cmdline), the later
 * winning; unreadable or bad input is reported through say (log.h; may be NULL) and skipped, the boot must
 * go on: returns 0. With ARGS_LOAD_CONF_ONLY: thaw.conf alone, messages naming ROOT; a thaw.conf
 * that cannot be read (missing included) is said at LOG_ERR and returned as a negative errno.
 */
int args_load(const char *root, const char *cmdline, unsigned flags, struct thaw_args *out, log_say_fn say,
              void *userdata);
