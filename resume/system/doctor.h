/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw doctor's checks: the running kernel's config against kernel/thaw.config, and /sys/power. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define DOCTOR_ITEMS_MAX 80
#define DOCTOR_TEXT_MAX 400

enum doctor_state {
        DOCTOR_OK,
        DOCTOR_MISSING,  /* thaw cannot hibernate or resume until this is fixed */
        DOCTOR_OPTIONAL, /* absent, but only one key source or one kind of machine needs it */
        DOCTOR_SKIP,     /* not checked: does not apply, or cannot be read */
};

struct doctor_item {
        enum doctor_state state;
        char what[64];               /* "hibernation", "CONFIG_DM_CRYPT", … */
        char text[DOCTOR_TEXT_MAX];  /* what was found, and what to do if it is not ok */
};

struct doctor_report {
        char release[128];           /* the kernel release checked ("" if unknown) */
        size_t n;
        struct doctor_item items[DOCTOR_ITEMS_MAX];
};

/* Short name of a state as printed: "ok", "missing", "optional", "skip". */
const char *doctor_state_name(enum doctor_state s);

/*
 * Run every check against ROOT (/proc, /sys, /dev, /boot). fragment is a kconfig fragment as in
 * kernel/thaw.config (NULL: the embedded one). Returns the number of DOCTOR_MISSING items, or a
 * negative errno if the fragment cannot be read (a bug) or memory runs out.
 */
int doctor_run(const char *root, const char *fragment, struct doctor_report *rep);
