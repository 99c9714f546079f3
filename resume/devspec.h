/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device specs (UUID=, PARTUUID=, LABEL=, /dev/path) to device paths under a root. */
#pragma once
#include <stddef.h>

/* 0 if spec is well-formed, -EINVAL if not. */
int devspec_check(const char *spec);

/*
 * Resolve spec once, without waiting: UUID=x -> ROOT/dev/disk/by-uuid/x (likewise by-partuuid,
 * by-label), /dev/path -> ROOT/dev/path. On a real system (root "") a tag udev has not linked
 * (yet) is also looked up through libblkid. out receives the canonical path of the device.
 * Returns 0, -ENOENT if the device is not there (yet), -EINVAL for a malformed spec.
 */
int devspec_resolve(const char *root, const char *spec, char *out, size_t size);
