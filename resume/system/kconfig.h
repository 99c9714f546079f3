/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel configuration: the options thaw wants (kernel/thaw.config) and the running kernel's. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define KCONFIG_NAME_MAX 64
#define KCONFIG_WHY_MAX 160
#define KCONFIG_WANT_MAX 64          /* options in a fragment */
#define KCONFIG_TEXT_MAX ((1u << 20) - 1) /* cap on a kernel config, once decompressed */

struct kconfig_want {
        char name[KCONFIG_NAME_MAX]; /* CONFIG_… */
        char value;                  /* 'y': built in; 'm': a module will do */
        bool optional;               /* "@optional" in its comment */
        unsigned since_major;        /* "@since X.Y", 0.0 if always */
        unsigned since_minor;
        char why[KCONFIG_WHY_MAX];   /* the first line of its comment */
};

/* kernel/thaw.config as it was at build time. */
const char *kconfig_thaw_fragment(void);

/*
 * Parse a fragment: CONFIG_X=y|m lines, each explained by the '#' comment block right above it.
 * Returns the number of options stored in out (at most max), -EINVAL on a line it cannot read,
 * -E2BIG if there are more than max.
 */
int kconfig_parse_fragment(const char *text, struct kconfig_want *out, size_t max);

/*
 * The running kernel's configuration: ROOT/proc/config.gz if present, else
 * ROOT/boot/config-RELEASE. On success *text is a malloc'ed NUL-terminated string (the caller
 * frees it) and src names the file read (src may be changed on failure too). -ENOENT if neither
 * exists.
 */
int kconfig_load(const char *root, const char *release, char **text, char *src, size_t srcsize);

/* How name is set in config text: 'y', 'm', 'n' (not set or absent), or 'v' (another value). */
char kconfig_value(const char *config, const char *name);

/* "6.1.0-57-amd64" -> 6, 1. -EINVAL if it does not start with MAJOR.MINOR. */
int kconfig_parse_release(const char *release, unsigned *major, unsigned *minor);

/* 1 if the kernel release major.minor is at least want's @since, 0 if the option is not there yet. */
int kconfig_applies(const struct kconfig_want *want, unsigned major, unsigned minor);
