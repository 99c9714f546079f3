/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device specs (UUID=, PARTUUID=, LABEL=, PARTLABEL=, /dev/path) to device paths under a root. */
#include "dev/devspec.h"

#include <blkid.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static const struct {
        const char *prefix;
        const char *dir;
        const char *tag;
} tags[] = {
        { "UUID=", "/dev/disk/by-uuid/", "UUID" },
        { "PARTUUID=", "/dev/disk/by-partuuid/", "PARTUUID" },
        { "LABEL=", "/dev/disk/by-label/", "LABEL" },
        { "PARTLABEL=", "/dev/disk/by-partlabel/", "PARTLABEL" },
};

/* Split spec into its tag index (or -1 for a path) and value (quotes removed). */
static int split(const char *spec, char *value, size_t size)
{
        for (int i = 0; i < (int)(sizeof(tags) / sizeof(tags[0])); i++) {
                size_t plen = strlen(tags[i].prefix);
                const char *v = spec + plen;
                size_t n;

                if (strncmp(spec, tags[i].prefix, plen) != 0)
                        continue;
                n = strlen(v);
                if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                        v++;
                        n -= 2;
                }
                if (n == 0 || n >= size)
                        return -EINVAL;
                memcpy(value, v, n);
                value[n] = '\0';
                /* The value becomes a file name: it must not climb out of by-uuid/ & co. */
                if (strchr(value, '/') || strcmp(value, ".") == 0 || strcmp(value, "..") == 0)
                        return -EINVAL;
                return i;
        }
        if (strncmp(spec, "/dev/", 5) != 0 || strlen(spec) >= size || strstr(spec, "/../"))
                return -EINVAL;
        strcpy(value, spec);
        return -1;
}

int devspec_check(const char *spec)
{
        char value[PATH_MAX];
        int t = split(spec, value, sizeof(value));

        return t < -1 ? t : 0;
}

static int canonical(const char *path, char *out, size_t size)
{
        char real[PATH_MAX];

        if (!realpath(path, real))
                return errno == ENOTDIR ? -ENOENT : -errno;
        return util_copy(out, size, real);
}

/* Only on a real system: libblkid scans devices when udev has not made the link. */
static int blkid_lookup(int t, const char *value, char *out, size_t size)
{
        char *dev = blkid_evaluate_tag(tags[t].tag, value, NULL);
        int r;

        if (!dev)
                return -ENOENT;
        r = canonical(dev, out, size);
        free(dev);
        return r;
}

static int resolve(const char *root, const char *spec, bool scan, char *out, size_t size)
{
        char value[PATH_MAX], rel[PATH_MAX], path[PATH_MAX];
        int t = split(spec, value, sizeof(value)), r;

        if (t < -1)
                return t;
        if (t >= 0)
                r = util_path(rel, sizeof(rel), tags[t].dir, value);
        else
                r = util_copy(rel, sizeof(rel), value);
        if (r == 0)
                r = util_path(path, sizeof(path), root, rel);
        if (r < 0)
                return r;
        r = canonical(path, out, size);
        if (r == -ENOENT && scan && t >= 0 && (!root || !*root))
                r = blkid_lookup(t, value, out, size);
        return r;
}

int devspec_resolve(const char *root, const char *spec, char *out, size_t size)
{
        return resolve(root, spec, true, out, size);
}

int devspec_poll(const char *root, const char *spec, struct devspec_wait *w, int64_t now_ms, bool final,
                 char *out, size_t size)
{
        bool scan;

        if (!w->started) {
                /* udev usually makes the link within a moment: the first scan waits an interval. */
                w->started = true;
                w->last_scan_ms = now_ms;
        }
        /* A scan reads every block device; polling every 200 ms must not turn into constant I/O. */
        scan = final || now_ms - w->last_scan_ms >= DEVSPEC_SCAN_INTERVAL_MS;
        if (scan)
                w->last_scan_ms = now_ms;
        return resolve(root, spec, scan, out, size);
}
