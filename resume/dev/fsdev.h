/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LUKS2 mapping a file system sits on, as sysfs shows it (swap files on an encrypted root). */
#pragma once
#include <stddef.h>

#include "args.h"

#define FSDEV_UUID_PREFIX "CRYPT-LUKS2-" /* dm/uuid of a mapping libcryptsetup made for LUKS2 */

struct fsdev {
        char name[ARGS_NAME_MAX];  /* the mapping's name: "luks-…", "root_crypt" */
        char backing[64];          /* "/dev/vdb": the LUKS2 container under it */
};

/*
 * The device-mapper device maj:min must be a LUKS2 mapping (ROOT/sys/dev/block/MAJ:MIN/dm/uuid
 * starts with FSDEV_UUID_PREFIX) over exactly one device (slaves/). -ENODEV: not a device-mapper
 * device; -EMEDIUMTYPE: a mapping, but not LUKS2 crypt (LVM, plain dm-crypt…); -EXDEV: not over
 * exactly one device.
 */
int fsdev_crypt(const char *root, unsigned maj, unsigned min, struct fsdev *out);
