/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hand a swap device with a hibernation image to the kernel through /sys/power. */
#pragma once
#include <stdint.h>

/*
 * Write offset (pages) to ROOT/sys/power/resume_offset, then "MAJ:MIN\n" to ROOT/sys/power/resume.
 * If the kernel restores the image, this never returns. When it returns, the kernel either found
 * no image or failed to load it: only the header on disk tells which.
 */
int handoff_write(const char *root, unsigned maj, unsigned min, uint64_t offset);
/*
 * What ROOT/sys/power/resume and resume_offset name now: the swap the kernel writes the next image
 * to (0:0 if unset; offset 0 without resume_offset). -EINVAL if the kernel's text is not "MAJ:MIN".
 */
int handoff_read(const char *root, unsigned *maj, unsigned *min, uint64_t *offset);
