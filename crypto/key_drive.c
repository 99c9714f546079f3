/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key provider "drive:LABEL:PATH": a key file on a config drive (ISO 9660 or vfat) found by label. */
#include <blkid.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/clock.h"
#include "dev/devspec.h"
#include "key_provider.h"
#include "keysrc.h"

#define DRIVE_LABEL_MAX 32  /* ISO 9660 volume ids are 32 bytes, vfat labels 11 */
#define DRIVE_POLL_MS 200
#define DRIVE_MNT_DIR "/run/thaw"
/* Read-only, and nothing on the drive may act as a device, a setuid program or a program at all. */
#define DRIVE_MS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

static int label_char_ok(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
}

int drive_split(const char *arg, char *label, size_t lsize, char *path, size_t psize)
{
        const char *colon = strchr(arg, ':');
        size_t llen;

        if (!colon)
                return -EINVAL;
        llen = (size_t)(colon - arg);
        if (llen == 0 || llen > DRIVE_LABEL_MAX || llen >= lsize || strlen(colon + 1) >= psize)
                return -EINVAL;
        for (size_t i = 0; i < llen; i++) {
                if (!label_char_ok(arg[i]))
                        return -EINVAL;
        }
        /* The path: absolute, printable, no ',' (the chain separator), no "." or ".." component. */
        if (colon[1] != '/' || colon[2] == '\0')
                return -EINVAL;
        for (const char *p = colon + 1; *p; p++) {
                if (*p <= ' ' || *p > '~' || *p == ',' || *p == ':')
                        return -EINVAL;
                if (p[0] == '/' && (p[1] == '/' || p[1] == '\0'))
                        return -EINVAL;
                if (p[0] == '/' && p[1] == '.' &&
                    (p[2] == '/' || p[2] == '\0' || (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
                        return -EINVAL;
        }
        memcpy(label, arg, llen);
        label[llen] = '\0';
        strcpy(path, colon + 1);
        return 0;
}

static int drive_check(const char *arg)
{
        char label[DRIVE_LABEL_MAX + 1], path[KEYSRC_ARG_MAX];

        return drive_split(arg, label, sizeof(label), path, sizeof(path));
}

int drive_key_path(const char *mnt, const char *path, char *out, size_t size)
{
        char joined[PATH_MAX], real[PATH_MAX];
        size_t mlen = strlen(mnt);
        int n;

        n = snprintf(joined, sizeof(joined), "%s%s", mnt, path);
        if (n < 0 || (size_t)n >= sizeof(joined))
                return -ENAMETOOLONG;
        if (!realpath(joined, real))
                return errno == ENOTDIR ? -ENOENT : -errno;
        /* Security: a symlink on the drive (Rock Ridge) must not lead to a file of the initramfs. */
        if (strncmp(real, mnt, mlen) != 0 || real[mlen] != '/')
                return -EACCES;
        if (strlen(real) >= size)
                return -ENAMETOOLONG;
        strcpy(out, real);
        return 0;
}

/* Wait until deadline for the device labelled label (udev's link, or libblkid on a real system). */
static int find_device(const char *root, const char *label, int64_t deadline_ms, char *dev, size_t size)
{
        struct devspec_wait w = { 0 };
        char spec[DRIVE_LABEL_MAX + 8];

        snprintf(spec, sizeof(spec), "LABEL=%s", label);
        for (;;) {
                int64_t now = clock_now_ms(), left = deadline_ms - now;
                int r = devspec_poll(root, spec, &w, now, left <= 0, dev, size);

                if (r != -ENOENT)
                        return r;
                if (left <= 0)
                        return -ENODEV;
                clock_sleep_ms(left < DRIVE_POLL_MS ? left : DRIVE_POLL_MS);
        }
}

/* The file system type on dev, as libblkid sees it: only ISO 9660 and vfat are config drives. */
static int drive_type(const char *dev, char *type, size_t size)
{
        blkid_probe pr;
        const char *v = NULL;
        int r = -EMEDIUMTYPE;

        errno = 0;
        pr = blkid_new_probe_from_filename(dev);
        if (!pr)
                return errno ? -errno : -EIO;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
        if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0 &&
            (strcmp(v, "iso9660") == 0 || strcmp(v, "vfat") == 0) && strlen(v) < size) {
                strcpy(type, v);
                r = 0;
        }
        blkid_free_probe(pr);
        return r;
}

static int drive_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        const char *root = ctx->root;
        int64_t deadline_ms = ctx->deadline_ms;
        char label[DRIVE_LABEL_MAX + 1], path[KEYSRC_ARG_MAX], dev[PATH_MAX], mnt[PATH_MAX], key[PATH_MAX];
        char type[16];
        int n, r;

        r = drive_split(arg, label, sizeof(label), path, sizeof(path));
        if (r < 0)
                return r;
        r = find_device(root, label, deadline_ms, dev, sizeof(dev));
        if (r == 0)
                r = drive_type(dev, type, sizeof(type));
        if (r < 0)
                return r;
        n = snprintf(mnt, sizeof(mnt), "%s" DRIVE_MNT_DIR, root);
        if (n < 0 || (size_t)n >= sizeof(mnt) - sizeof("/drive-XXXXXX"))
                return -ENAMETOOLONG;
        if (mkdir(mnt, 0700) < 0 && errno != EEXIST)
                return -errno;
        /* A private directory of our own: nothing else is mounted there or can be swapped in. */
        strcat(mnt, "/drive-XXXXXX");
        if (!mkdtemp(mnt))
                return -errno;
        r = mount(dev, mnt, type, DRIVE_MS, NULL) < 0 ? -errno : 0;
        if (r == 0) {
                r = drive_key_path(mnt, path, key, sizeof(key));
                if (r == 0)
                        r = keysrc_read_path(key, out);
                /* Lazy only if busy: the key is read, the drive must not stay mounted. */
                if (umount2(mnt, 0) < 0)
                        (void)umount2(mnt, MNT_DETACH);
        }
        (void)rmdir(mnt);
        return r;
}

const struct key_provider key_drive_provider = {
        .name = "drive",
        .check = drive_check,
        .fetch = drive_fetch,
};
