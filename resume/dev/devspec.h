/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device specs (UUID=, PARTUUID=, LABEL=, /dev/path) to device paths under a root. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0 if spec is well-formed, -EINVAL if not. */
int devspec_check(const char *spec);

/*
 * Resolve spec once, without waiting: UUID=x -> ROOT/dev/disk/by-uuid/x (likewise by-partuuid,
 * by-label, by-partlabel), /dev/path -> ROOT/dev/path. On a real system (root "") a tag udev has not linked
 * (yet) is also looked up through libblkid. out receives the canonical path of the device.
 * Returns 0, -ENOENT if the device is not there (yet), -EINVAL for a malformed spec.
 */
int devspec_resolve(const char *root, const char *spec, char *out, size_t size);

#define DEVSPEC_SCAN_INTERVAL_MS 1000

/* State of one bounded wait for a device; zero-initialise it before the first devspec_poll(). */
struct devspec_wait {
        bool started;
        int64_t last_scan_ms;
};

/*
 * One attempt of a bounded wait, like devspec_resolve(), except that the libblkid fallback (which
 * reads every block device) runs at most once per DEVSPEC_SCAN_INTERVAL_MS after the wait started,
 * and on the final attempt (final: the deadline has passed). now_ms is the caller's clock.
 */
int devspec_poll(const char *root, const char *spec, struct devspec_wait *w, int64_t now_ms, bool final,
                 char *out, size_t size);
