/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Is a device safe to format? Mounts, active swap, exclusive use, and on-disk signatures. */
#include "dev/devcheck.h"

#include <blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#define TABLE_MAX (1u << 20)

/* Same file (after symlinks), or the same block device through another node. */
static int same_device(const char *a, const char *b)
{
        char ra[PATH_MAX], rb[PATH_MAX];
        struct stat sa, sb;

        if (realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0)
                return 1;
        if (strcmp(a, b) == 0)
                return 1;
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode) &&
               sa.st_rdev == sb.st_rdev;
}

/* 1 if field (0-based, whitespace-separated) of any line of ROOT/rel names dev. */
static int table_lists(const char *root, const char *rel, int field, const char *dev)
{
        char *buf = malloc(TABLE_MAX);
        int r, found = 0;

        if (!buf)
                return -ENOMEM;
        r = util_read_text_at(root, rel, buf, TABLE_MAX);
        if (r < 0)
                goto out;
        for (char *line = buf, *next; line && *line && !found; line = next) {
                char *save = NULL, *tok;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                tok = strtok_r(line, " \t", &save);
                for (int i = 0; tok && i < field; i++)
                        tok = strtok_r(NULL, " \t", &save);
                if (!tok || tok[0] != '/')
                        continue;
                util_unescape_octal(tok);
                found = same_device(tok, dev);
        }
        r = found;
out:
        free(buf);
        return r;
}

int devcheck_in_use(const char *root, const char *dev, char *why, size_t size)
{
        struct stat st;
        int r, fd;

        r = table_lists(root, "/proc/self/mounts", 0, dev);
        if (r != 0) {
                if (r > 0)
                        snprintf(why, size, "it is mounted (see /proc/self/mounts)");
                return r;
        }
        r = table_lists(root, "/proc/swaps", 0, dev);
        if (r == -ENOENT)
                r = 0; /* a kernel without swap support has no /proc/swaps, and no active swap */
        if (r != 0) {
                if (r > 0)
                        snprintf(why, size, "it is active swap (see /proc/swaps; swapoff it first)");
                return r;
        }
        if (stat(dev, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode))
                return 0;
        /* The kernel refuses O_EXCL on a block device that is mounted, swap, or held by a mapping. */
        fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno == EBUSY) {
                snprintf(why, size, "it is in use (a partition mounted, a device-mapper holder, or swap)");
                return 1;
        }
        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

int devcheck_signature(const char *dev, char *type, size_t size)
{
        const char *val = NULL;
        blkid_probe pr;
        int r;

        pr = blkid_new_probe_from_filename(dev);
        if (!pr)
                return errno ? -errno : -EIO;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
        blkid_probe_enable_partitions(pr, 1);
        r = blkid_do_safeprobe(pr);
        if (r == 0) {
                if (blkid_probe_lookup_value(pr, "TYPE", &val, NULL) != 0 &&
                    blkid_probe_lookup_value(pr, "PTTYPE", &val, NULL) != 0)
                        val = "unknown";
                r = 1;
        } else if (r == -2) {
                val = "several conflicting signatures";
                r = 1;
        } else if (r == 1) {
                r = 0;
        } else {
                r = -EIO;
        }
        if (r == 1)
                snprintf(type, size, "%s", val);
        blkid_free_probe(pr);
        return r;
}
