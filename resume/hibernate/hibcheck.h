/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Can this system hibernate to the thaw swap so that the next boot resumes? */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "dev/dm.h"

#define HIBCHECK_PROBLEMS_MAX 2048

struct hibcheck {
        unsigned maj, min;          /* the mapping's device number */
        char kname[DM_KNAME_MAX];   /* "dm-0" */
        char swapfile[4096];        /* with resume_offset=: the active swap file at that page */
        uint64_t free_kib;          /* free space on that swap */
        uint64_t needed_kib;        /* power_image_estimate_kib() */
        int priority;               /* that swap's priority in /proc/swaps */
        bool resume_elsewhere;      /* /sys/power/resume names another swap than this one */
        char resume_now[64];        /* what it names then: "8:2 offset 0" */
        char problems[HIBCHECK_PROBLEMS_MAX]; /* one line per failed check: what is wrong, what to do */
};

/*
 * Check that the next boot's thaw resume would resume (a: the settings it reads, from thaw.conf and
 * this boot's command line: not disabled, no noresume, a device and a key source; no ARGS_STALE_PATH,
 * so the initramfs carries the current thaw.conf), that
 * /dev/mapper/a->name is an active mapping and active swap with room for the image (with
 * a->offset: an active swap file on it whose first block is that page), that
 * no other active swap but zram has a priority as high as its own (power_swap_rival()), that
 * hibernation is available and that mode is offered in ROOT/sys/power/disk. Returns the number of
 * failed checks (0: ready), each described in out->problems.
 */
int hibcheck_run(const char *root, const struct thaw_args *a, const char *mode, struct hibcheck *out);
/*
 * Only that thaw's swap (a->name, a->offset) is active swap and no other swap but zram has a
 * priority as high as its own (the systemd-sleep hook, which cannot refuse). Returns the number of
 * failed checks (0, 1), described in out->problems.
 */
int hibcheck_rival(const char *root, const struct thaw_args *a, struct hibcheck *out);
