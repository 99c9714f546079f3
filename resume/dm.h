/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device-mapper mappings as sysfs shows them. */
#pragma once
#include <stddef.h>

#define DM_KNAME_MAX 32
#define DM_MAPPER_PATH_MAX 160 /* "/dev/mapper/" and a name shorter than ARGS_NAME_MAX */

/* "/dev/mapper/NAME" into buf; -EINVAL for a name that is not a usable dm name, -ENAMETOOLONG. */
int dm_mapper_path(const char *name, char *buf, size_t size);

/*
 * Find the mapping called name: scans ROOT/sys/block/<X>/dm/name and reads ROOT/sys/block/<X>/dev.
 * Fills *maj, *min and kname ("dm-0"; may be NULL). -ENOENT if no mapping has that name.
 */
int dm_devnum(const char *root, const char *name, unsigned *maj, unsigned *min, char *kname,
              size_t ksize);
