/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device-mapper mappings as sysfs shows them. */
#pragma once
#include <stddef.h>

#define DM_KNAME_MAX 32

/*
 * Find the mapping called name: scans ROOT/sys/block/<X>/dm/name and reads ROOT/sys/block/<X>/dev.
 * Fills *maj, *min and kname ("dm-0"; may be NULL). -ENOENT if no mapping has that name.
 */
int dm_devnum(const char *root, const char *name, unsigned *maj, unsigned *min, char *kname,
              size_t ksize);
