/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Swap files for hibernation: created without holes, their blocks checked through FIEMAP. */
#include "system/swapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "image/swsusp.h"
#include "base/util.h"

#define BATCH 64                /* extents per FIEMAP call */
#define MAX_EXTENTS (1u << 20)  /* a file with more is refused long before: a cap on the loop */

int swapfile_create_fd(const char *path, uint64_t size)
{
        int fd, r = 0;

        if (size == 0 || size > (uint64_t)INT64_MAX)
                return -EINVAL;
        /* O_EXCL: never reuse (or follow a link to) a file someone else made. */
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        /* Swap must be allocated up front: the kernel refuses files with holes. */
        if (fallocate(fd, 0, 0, (off_t)size) < 0 || fsync(fd) < 0) {
                r = -errno;
                swapfile_remove(fd, path);
                close(fd);
                return r;
        }
        return fd;
}

int swapfile_create(const char *path, uint64_t size)
{
        int fd = swapfile_create_fd(path, size);

        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

int swapfile_remove(int fd, const char *path)
{
        struct stat ours, now;

        if (fstat(fd, &ours) < 0)
                return -errno;
        /* A name pointed elsewhere since we made the file: what it names now is not ours to remove.
         * (A swap between this check and unlink() needs write access to the directory, in which
         * the attacker could remove the file anyway.) */
        if (lstat(path, &now) < 0)
                return -errno;
        if (now.st_dev != ours.st_dev || now.st_ino != ours.st_ino)
                return -ESTALE;
        return unlink(path) < 0 ? -errno : 0;
}

/* Flags that make an extent unusable for swap: its blocks are not plain blocks of the device. */
#define BAD_FLAGS (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED | \
                   FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE | \
                   FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_SHARED)

struct walk {
        uint64_t next_logical, next_physical;
        unsigned extents;
};

/* Fold one extent into l; 1 when the walk should stop (the last extent, or a defect). */
static int fold(struct swapfile_layout *l, struct walk *w, const struct fiemap_extent *e)
{
        if (e->fe_flags & BAD_FLAGS) {
                snprintf(l->why, sizeof(l->why), "extent at byte %llu is not a plain allocated block "
                         "run (flags %#x: inline, shared, encoded or delayed)",
                         (unsigned long long)e->fe_logical, e->fe_flags);
                return 1;
        }
        /* The kernel maps swap in whole pages; so does thaw's reader of the image's block numbers. */
        if (e->fe_physical % SWSUSP_PAGE != 0 || e->fe_length % SWSUSP_PAGE != 0) {
                snprintf(l->why, sizeof(l->why), "extent at byte %llu is not page-aligned on the device "
                         "(a file system block size below 4096?)", (unsigned long long)e->fe_logical);
                return 1;
        }
        if (e->fe_logical != w->next_logical) {
                snprintf(l->why, sizeof(l->why), "the file has a hole at byte %llu",
                         (unsigned long long)w->next_logical);
                return 1;
        }
        if (w->extents++ == 0) {
                l->physical = e->fe_physical;
                l->runs = 1;
        } else if (e->fe_physical != w->next_physical) {
                l->runs++;
        }
        w->next_logical = e->fe_logical + e->fe_length;
        w->next_physical = e->fe_physical + e->fe_length;
        return (e->fe_flags & FIEMAP_EXTENT_LAST) != 0;
}

static int walk_extents(int fd, struct swapfile_layout *l)
{
        size_t sz = sizeof(struct fiemap) + BATCH * sizeof(struct fiemap_extent);
        struct fiemap *fm = calloc(1, sz);
        struct walk w = { 0 };
        int r = 0, done = 0;

        if (!fm)
                return -ENOMEM;
        while (!done && w.extents < MAX_EXTENTS) {
                memset(fm, 0, sz);
                fm->fm_start = w.next_logical;
                fm->fm_length = l->size - w.next_logical;
                fm->fm_flags = FIEMAP_FLAG_SYNC;
                fm->fm_extent_count = BATCH;
                if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
                        r = -errno;
                        break;
                }
                if (fm->fm_mapped_extents == 0)
                        break;
                for (unsigned i = 0; i < fm->fm_mapped_extents && !done; i++)
                        done = fold(l, &w, &fm->fm_extents[i]);
                if (w.next_logical >= l->size)
                        done = 1;
        }
        free(fm);
        if (r < 0 || *l->why)
                return r;
        if (w.extents == 0 || w.next_logical < l->size)
                snprintf(l->why, sizeof(l->why), "the file has a hole at byte %llu",
                         (unsigned long long)w.next_logical);
        return 0;
}

int swapfile_layout_fd(int fd, struct swapfile_layout *out)
{
        struct swapfile_layout l = { 0 };
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        l.size = (uint64_t)st.st_size;
        if (l.size < SWSUSP_PAGE) {
                snprintf(l.why, sizeof(l.why), "the file is smaller than one page");
                r = 0;
        } else {
                r = walk_extents(fd, &l);
        }
        if (r == 0)
                *out = l;
        return r;
}

int swapfile_layout(const char *path, struct swapfile_layout *out)
{
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        r = swapfile_layout_fd(fd, out);
        close(fd);
        return r;
}

/* 1 if the swap file name (under root) lies on maj:min and starts at page offset. */
static int is_ours(const char *root, const char *name, unsigned maj, unsigned min, uint64_t offset)
{
        char full[PATH_MAX];
        struct swapfile_layout l;
        struct stat st;

        if (util_path(full, sizeof(full), root, name) < 0 || stat(full, &st) < 0 ||
            major(st.st_dev) != maj || minor(st.st_dev) != min)
                return 0;
        return swapfile_layout(full, &l) == 0 && !*l.why && l.physical / SWSUSP_PAGE == offset;
}

int swapfile_find_active(const char *root, unsigned maj, unsigned min, uint64_t offset, char *path,
                         size_t psize, struct power_swap *out)
{
        char *buf = malloc(UTIL_READ_MAX);
        int r;

        if (!buf)
                return -ENOMEM;
        r = util_read_text_at(root, "/proc/swaps", buf, UTIL_READ_MAX);
        if (r < 0)
                goto out;
        r = -ENOENT;
        for (char *line = buf, *next; line && *line; line = next) {
                char name[PATH_MAX], type[32];
                unsigned long long size, used;
                int prio = -1;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (sscanf(line, "%4095s %31s %llu %llu %d", name, type, &size, &used, &prio) < 4 ||
                    strcmp(type, "file") != 0)
                        continue;
                util_unescape_octal(name);
                if (!is_ours(root, name, maj, min, offset))
                        continue;
                r = util_copy(path, psize, name);
                if (r == 0) {
                        out->size_kib = size;
                        out->used_kib = used;
                        out->priority = prio;
                }
                break;
        }
out:
        free(buf);
        return r;
}
