/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What `thaw resume` did at boot, in ROOT/run/thaw/state (key=value lines) for the real system. */
#pragma once
#include <stddef.h>

#define STATE_PATH "/run/thaw/state"
#define STATE_MAX 4096

struct state {
        char outcome[32];  /* resume_outcome_name() */
        char reason[32];   /* imgcheck_name() when a check refused the image, else "" */
        char device[256];  /* the mapping or device it was about */
        char message[1024]; /* the outcome line, as logged */
        char ticket[512];  /* what happened to the image's ticket at this boot, "" if nothing */
};

/* Replace the state file. Newlines in values become spaces. */
int state_write(const char *root, const struct state *s);
/* Read it back; -ENOENT if thaw resume never wrote one this boot. Unknown keys are skipped. */
int state_read(const char *root, struct state *out);
