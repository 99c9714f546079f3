/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /etc/thaw/provision.conf: what the image builder asks thaw provision to set up, read strictly. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "keysrc.h"

#define PROVCONF_PATH "/etc/thaw/provision.conf"
#define PROVCONF_MAX 16384      /* the whole file */
#define PROVCONF_LINE_MAX 2560  /* one line: a key chain of KEYCHAIN_SPEC_MAX and its name */
#define PROVCONF_WHY_MAX 512

/* The size rule: bytes = MemTotal * milli / 1000 + MemTotal * pct / 100 + add, at least min. */
struct provsize {
        uint64_t milli;   /* "1.5x": 1500; "ram...": 1000 */
        uint64_t pct;     /* "ram+10%": 10 */
        uint64_t add;     /* "ram+512M": bytes */
        uint64_t min;     /* min=: bytes */
};

struct provconf {
        char device[ARGS_DEVICE_MAX];   /* device=: a partition (UUID=, PARTUUID=, LABEL=, /dev/...) */
        char swapfile[ARGS_DEVICE_MAX]; /* swapfile=: an absolute path on the encrypted root */
        char key[KEYCHAIN_SPEC_MAX];    /* key=: the chain to enroll (thaw setup --key) */
        char unlock[KEYCHAIN_SPEC_MAX]; /* unlock=: swapfile only, a key the root takes (--unlock) */
        char name[ARGS_NAME_MAX];       /* name=: device only, the mapping (default thaw-swap) */
        struct provsize size;           /* size= (default ram), min= (default 0) */
};

/*
 * Parse the text of provision.conf: NAME=VALUE lines, '#' comments, blank lines. Strict: an
 * unknown or repeated name, a malformed value, device= and swapfile= together or neither, no
 * key=, unlock= or name= where they do not apply are refused. On failure why says which line and
 * what is wrong ("line 3: size=ram+ten: ...") and *out is untouched. -EINVAL, -EFBIG (too long).
 */
int provconf_parse(const char *text, struct provconf *out, char *why, size_t size);
/* Read ROOT/etc/thaw/provision.conf and parse it. -ENOENT if there is none. */
int provconf_load(const char *root, struct provconf *out, char *why, size_t size);
/* Parse a size rule: "ram", "ram+10%", "ram+512M", "1.5x" (at most three decimals). */
int provconf_parse_size(const char *s, struct provsize *out);
/* Parse a size: bytes, or with K, M, G, T (powers of 1024). */
int provconf_parse_bytes(const char *s, uint64_t *out);
