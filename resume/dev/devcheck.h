/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Is a device safe to format? Mounts, active swap, exclusive use, and on-disk signatures. */
#pragma once
#include <stddef.h>

/*
 * 1 if dev is mounted (ROOT/proc/self/mounts), active swap (ROOT/proc/swaps) or, for a block
 * device, held by someone (exclusive open fails); why says which. 0 if free, -errno on errors.
 */
int devcheck_in_use(const char *root, const char *dev, char *why, size_t size);

/*
 * 1 if libblkid finds a file system, LUKS, swap, RAID or partition table signature on dev; type
 * receives its name ("ext4", "crypto_LUKS", "swap", "gpt"…). 0 if blank, -errno on errors.
 */
int devcheck_signature(const char *dev, char *type, size_t size);
