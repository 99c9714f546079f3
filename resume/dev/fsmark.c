/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File-system markers: read from the device, compared, and the read-write mounts they are read for. */
#include "dev/fsmark.h"

#include <blkid.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dev/fsmark_ext.h"
#include "base/util.h"

#define ALIGN 4096u /* a multiple of every logical block size O_DIRECT asks for */
#define BOUNCE (FSMARK_BLOCK_MAX + 2 * ALIGN)
#define BTRFS_SB_OFF 65536u
#define BTRFS_MAGIC "_BHRfS_M"

int fsmark_dev_read(struct fsmark_dev *d, uint64_t off, void *buf, size_t len)
{
        uint64_t start = off & ~(uint64_t)(ALIGN - 1);
        size_t head = (size_t)(off - start), want = (head + len + ALIGN - 1) & ~(size_t)(ALIGN - 1);
        size_t got = 0;

        if (len > FSMARK_BLOCK_MAX || off > INT64_MAX - BOUNCE)
                return -EINVAL;
        while (got < want) {
                ssize_t n = pread(d->fd, d->bounce + got, want - got, (off_t)(start + got));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EINVAL && d->direct) {
                        /* A file system under an image file that takes O_DIRECT at open() only. */
                        if (fcntl(d->fd, F_SETFL, fcntl(d->fd, F_GETFL) & ~O_DIRECT) < 0)
                                return -errno;
                        d->direct = false;
                        continue;
                }
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        if (got < head + len)
                return -EBADMSG;
        memcpy(buf, d->bounce + head, len);
        return 0;
}

static int dev_open(const char *path, struct fsmark_dev *d)
{
        void *p = NULL;

        /* O_DIRECT: what the disk holds now, not what the page cache kept (tmpfs refuses it). */
        d->direct = true;
        d->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_DIRECT);
        if (d->fd < 0 && errno == EINVAL) {
                d->direct = false;
                d->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        }
        if (d->fd < 0)
                return -errno;
        if (posix_memalign(&p, ALIGN, BOUNCE) != 0) {
                close(d->fd);
                return -ENOMEM;
        }
        d->bounce = p;
        return 0;
}

static void dev_close(struct fsmark_dev *d)
{
        free(d->bounce);
        close(d->fd);
}

/* Type and UUID as blkid names them; -ENODATA if it finds no file system. */
static int probe_type(const char *path, const char *only, struct fsmark *m, char *why, size_t size)
{
        char *ext[] = { (char *)"ext2", (char *)"ext3", (char *)"ext4", NULL };
        char *one[] = { (char *)only, NULL };
        const char *type = NULL, *uuid = NULL;
        blkid_probe pr;
        int r;

        pr = blkid_new_probe_from_filename(path);
        if (!pr)
                return errno ? -errno : -EIO;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID);
        /* At boot, only the recorded type's prober (and its ext kin): all of them cost tens of ms. */
        if (only && *only)
                blkid_probe_filter_superblocks_type(pr, BLKID_FLTR_ONLYIN,
                                                    strncmp(only, "ext", 3) == 0 ? ext : one);
        r = blkid_do_safeprobe(pr);
        if (r == -2) {
                snprintf(why, size, "more than one file system signature");
                r = -EBADMSG;
        } else if (r == 1 || (r == 0 && (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) < 0 || !type))) {
                snprintf(why, size, "no file system found");
                r = -ENODATA;
        } else if (r < 0) {
                r = -EIO;
        } else {
                blkid_probe_lookup_value(pr, "UUID", &uuid, NULL);
                if (util_copy(m->type, sizeof(m->type), type) < 0 ||
                    util_copy(m->uuid, sizeof(m->uuid), uuid ? uuid : "") < 0) {
                        snprintf(why, size, "file system type or UUID too long");
                        r = -EBADMSG;
                }
                for (char *p = m->uuid; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
        }
        blkid_free_probe(pr);
        return r;
}

static int btrfs_read(struct fsmark_dev *d, struct fsmark *m, char *why, size_t size)
{
        unsigned char sb[4096];
        uint64_t gen = 0, bytenr = 0;
        int r = fsmark_dev_read(d, BTRFS_SB_OFF, sb, sizeof(sb));

        if (r < 0)
                return r;
        for (int i = 7; i >= 0; i--) {
                bytenr = bytenr << 8 | sb[0x30 + i];
                gen = gen << 8 | sb[0x48 + i];
        }
        if (memcmp(sb + 0x40, BTRFS_MAGIC, 8) != 0 || bytenr != BTRFS_SB_OFF) {
                snprintf(why, size, "no btrfs superblock at 64 KiB");
                return -EBADMSG;
        }
        m->known = true;
        m->generation = gen;
        return 0;
}

int fsmark_read(const char *dev, struct fsmark *out, char *why, size_t size)
{
        return fsmark_read_as(dev, NULL, out, why, size);
}

/* The markers of m's type (probed into m) on dev, into out. */
static int read_markers(const char *dev, struct fsmark *m, struct fsmark *out, char *why, size_t size)
{
        struct fsmark_dev d;
        int r;

        if (strcmp(m->type, "ext2") != 0 && strcmp(m->type, "ext3") != 0 && strcmp(m->type, "ext4") != 0 &&
            strcmp(m->type, "btrfs") != 0) {
                *out = *m;
                return 0;
        }
        r = dev_open(dev, &d);
        if (r < 0)
                return r;
        r = m->type[0] == 'e' ? fsmark_ext_read(&d, m, why, size) : btrfs_read(&d, m, why, size);
        dev_close(&d);
        if (r == 0)
                *out = *m;
        return r;
}

int fsmark_read_as(const char *dev, const char *type, struct fsmark *out, char *why, size_t size)
{
        struct fsmark m = { .known = false };
        int r;

        r = probe_type(dev, type, &m, why, size);
        return r < 0 ? r : read_markers(dev, &m, out, why, size);
}

/* The same device node, or the same image file. */
static bool same_node(const struct stat *a, const struct stat *b)
{
        if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode))
                return a->st_rdev == b->st_rdev;
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A sysfs attribute of ROOT/sys/class/block/NAME as a number; -1 if it cannot be read. */
static long long block_attr(const char *root, const char *name, const char *attr)
{
        char rel[PATH_MAX], text[64];
        uint64_t v;

        if (snprintf(rel, sizeof(rel), "/sys/class/block/%s/%s", name, attr) >= (int)sizeof(rel) ||
            util_read_text_at(root, rel, text, sizeof(text)) < 0)
                return -1;
        util_rstrip(text);
        return util_parse_u64(text, INT64_MAX, &v) < 0 ? -1 : (long long)v;
}

int fsmark_others(const char *root, const char *dev, const struct fsmark *m, enum fsmark_level level, char *why,
                  size_t size)
{
        char dir[PATH_MAX], rel[PATH_MAX], path[PATH_MAX], what[FSMARK_WHY_MAX];
        struct stat self, st;
        struct dirent *e;
        int r = 0;
        DIR *d;

        if (stat(dev, &self) < 0)
                return -errno;
        if (util_path(dir, sizeof(dir), root, "/sys/class/block") < 0)
                return -ENAMETOOLONG;
        d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while (r == 0 && (e = readdir(d))) {
                struct fsmark probed = { .known = false }, other;

                /*
                 * Removable media (a CD drive, a card reader) can block a read for seconds and are not
                 * where a system runs from; a device of size 0 holds nothing.
                 */
                if (e->d_name[0] == '.' || block_attr(root, e->d_name, "removable") == 1 ||
                    block_attr(root, e->d_name, "size") <= 0)
                        continue;
                if (snprintf(rel, sizeof(rel), "/dev/%s", e->d_name) >= (int)sizeof(rel) ||
                    util_path(path, sizeof(path), root, rel) < 0 || stat(path, &st) < 0 || same_node(&self, &st))
                        continue;
                /* Only the recorded type's prober: anything else there is not this file system. */
                what[0] = '\0';
                if (probe_type(path, m->type, &probed, what, sizeof(what)) < 0 || strcmp(probed.uuid, m->uuid) != 0)
                        continue;
                what[0] = '\0';
                if (read_markers(path, &probed, &other, what, sizeof(what)) < 0) {
                        snprintf(why, size, "%s carries it too, and its markers cannot be read (%s)", rel,
                                 what[0] ? what : "read error");
                        r = -ENOTUNIQ;
                } else if (fsmark_compare(m, &other, level, what, sizeof(what)) != 0) {
                        snprintf(why, size, "%s carries it too, with other markers (%s)", rel, what);
                        r = -ENOTUNIQ;
                }
        }
        closedir(d);
        return r;
}

int fsmark_compare(const struct fsmark *a, const struct fsmark *b, enum fsmark_level level, char *why,
                   size_t size)
{
        if (strcmp(a->type, b->type) != 0)
                return util_why(why, size, 1, "file system type %s, recorded %s", b->type, a->type);
        if (strcmp(a->uuid, b->uuid) != 0)
                return util_why(why, size, 1, "UUID %s, recorded %s", b->uuid, a->uuid);
        if (!a->known)
                return 0; /* nothing was recorded to compare: the caller says so */
        if (!b->known)
                return util_why(why, size, 1, "markers not read now, recorded ones were");
        if (strcmp(a->type, "btrfs") == 0) {
                if (level == FSMARK_ALL && a->generation != b->generation)
                        return util_why(why, size, 1, "generation %" PRIu64 ", recorded %" PRIu64, b->generation,
                                        a->generation);
                return 0;
        }
        if (a->mnt_count != b->mnt_count)
                return util_why(why, size, 1, "mount count %" PRIu32 ", recorded %" PRIu32, b->mnt_count, a->mnt_count);
        if (a->mtime != b->mtime)
                return util_why(why, size, 1, "last mount time %" PRIu32 ", recorded %" PRIu32, b->mtime, a->mtime);
        if (level != FSMARK_ALL)
                return 0;
        if (a->wtime != b->wtime)
                return util_why(why, size, 1, "last write time %" PRIu32 ", recorded %" PRIu32, b->wtime, a->wtime);
        if (a->kbytes_written != b->kbytes_written)
                return util_why(why, size, 1, "kbytes written %" PRIu64 ", recorded %" PRIu64, b->kbytes_written,
                                a->kbytes_written);
        if (a->has_journal != b->has_journal)
                return util_why(why, size, 1, "journal %s, recorded %s", b->has_journal ? "read" : "none",
                                a->has_journal ? "read" : "none");
        if (a->has_journal && a->journal_seq != b->journal_seq)
                return util_why(why, size, 1, "journal commit sequence %" PRIu32 ", recorded %" PRIu32, b->journal_seq,
                                a->journal_seq);
        return 0;
}

static bool has_option(const char *opts, const char *opt)
{
        size_t n = strlen(opt);

        for (const char *p = opts; p; p = strchr(p, ',')) {
                if (*p == ',')
                        p++;
                if (strncmp(p, opt, n) == 0 && (p[n] == ',' || p[n] == '\0'))
                        return true;
        }
        return false;
}

/* Add one mount line's device to l if it is a read-write block device not there yet. */
static int add_mount(const char *root, char *line, struct fsmark_list *l)
{
        char *save = NULL, *dev, *dir, *opts, path[PATH_MAX];
        struct fsmark_mount *m;
        struct stat st;

        dev = strtok_r(line, " \t", &save);
        dir = strtok_r(NULL, " \t", &save);
        if (!dir || !strtok_r(NULL, " \t", &save)) /* the type */
                return 0;
        opts = strtok_r(NULL, " \t", &save);
        /* Pseudo and network file systems have no /dev source; "ro" mounts cannot write it. */
        if (!opts || dev[0] != '/' || has_option(opts, "ro"))
                return 0;
        util_unescape_octal(dev);
        util_unescape_octal(dir);
        if (util_path(path, sizeof(path), root, dev) < 0 || stat(path, &st) < 0 || !S_ISBLK(st.st_mode))
                return 0;
        for (size_t i = 0; i < l->n; i++)
                if (l->m[i].maj == major(st.st_rdev) && l->m[i].min == minor(st.st_rdev))
                        return 0;
        if (l->n == FSMARK_LIST_MAX)
                return -E2BIG;
        m = &l->m[l->n];
        if (util_copy(m->dev, sizeof(m->dev), dev) < 0 || util_copy(m->dir, sizeof(m->dir), dir) < 0)
                return -ENAMETOOLONG;
        m->maj = major(st.st_rdev);
        m->min = minor(st.st_rdev);
        l->n++;
        return 0;
}

int fsmark_mounts(const char *root, struct fsmark_list *out)
{
        struct fsmark_list *l = calloc(1, sizeof(*l));
        char *buf = malloc(UTIL_READ_MAX);
        int r = -ENOMEM;

        if (!l || !buf)
                goto out;
        r = util_read_text_at(root, "/proc/self/mounts", buf, UTIL_READ_MAX);
        if (r < 0)
                goto out;
        r = 0;
        for (char *line = buf, *next; line && r == 0; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                r = add_mount(root, line, l);
        }
        if (r == 0)
                *out = *l;
out:
        free(l);
        free(buf);
        return r;
}

/* fsmark keeps UUIDs in lower case; blkid spells some (vfat's, ntfs's) in upper case. */
static blkid_dev find_nocase(blkid_cache cache, const char *uuid)
{
        blkid_dev_iterate it = blkid_dev_iterate_begin(cache);
        blkid_dev d, found = NULL;

        while (!found && it && blkid_dev_next(it, &d) == 0) {
                blkid_tag_iterate ti = blkid_tag_iterate_begin(d);
                const char *type, *value;

                while (!found && ti && blkid_tag_next(ti, &type, &value) == 0)
                        if (strcmp(type, "UUID") == 0 && strcasecmp(value, uuid) == 0)
                                found = d;
                blkid_tag_iterate_end(ti);
        }
        blkid_dev_iterate_end(it);
        return found;
}

int fsmark_find(const char *uuid, char *dev, size_t size)
{
        char link[128], real[PATH_MAX];
        blkid_cache cache = NULL;
        blkid_dev d;
        int r;

        /*
         * udev's link first: probing every device costs a boot tens of milliseconds. The link is
         * only a hint: the markers read from it carry the UUID, which the comparison checks.
         */
        if (snprintf(link, sizeof(link), "/dev/disk/by-uuid/%s", uuid) < (int)sizeof(link) &&
            !strchr(uuid, '/') && realpath(link, real) && util_copy(dev, size, real) == 0)
                return 0;

        /* No cache file: every device the kernel lists is probed now, none remembered from before. */
        if (blkid_get_cache(&cache, "/dev/null") < 0)
                return -ENOMEM;
        r = blkid_probe_all(cache);
        if (r < 0) {
                r = -EIO;
                goto out;
        }
        d = blkid_find_dev_with_tag(cache, "UUID", uuid);
        if (!d)
                d = find_nocase(cache, uuid);
        r = d ? util_copy(dev, size, blkid_dev_devname(d)) : -ENOENT;
out:
        blkid_put_cache(cache);
        return r;
}
