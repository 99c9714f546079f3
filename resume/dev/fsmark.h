/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * File-system markers: values on a file system's own disk that change with every later mount or
 * write, read from the block device (never through a mount). thaw hibernate records them in the
 * image's ticket; thaw resume reads them again at boot: any difference means that something
 * mounted or wrote the file system after the image was made, and resuming it would corrupt it.
 *
 * ext4 (and ext2/ext3): the superblock's mount count, last mount time, last write time, kbytes
 * written, and the jbd2 journal's commit sequence: the sequence of the last transaction committed
 * to the log, found by walking the log from s_start as the kernel's recovery scan does (its
 * end_transaction - 1); for an empty log (s_start 0) s_sequence - 1, since s_sequence is then the
 * next transaction's. Checksums of log blocks are not verified; the fast-commit area is not read.
 * btrfs: the superblock's generation. Other types (xfs, ...): not known, said so.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FSMARK_TYPE_MAX 16
#define FSMARK_UUID_MAX 37   /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and NUL */
#define FSMARK_LIST_MAX 16   /* read-write block-device mounts recorded */
#define FSMARK_WHY_MAX 256
#define FSMARK_JOURNAL_READS_MAX 65536 /* journal headers read in one walk: -EBADMSG past it */

/* Which markers a comparison trusts. */
enum fsmark_level {
        FSMARK_ALL,    /* read while the system was frozen after the last sync (thaw's writer) */
        FSMARK_MOUNT,  /* read while the system still ran (the kernel writes): mount count and mount time only;
                        * btrfs has neither, so only its type and UUID are compared */
};

struct fsmark {
        char type[FSMARK_TYPE_MAX];   /* "ext4", "ext3", "ext2", "btrfs", "xfs", ... as blkid says */
        char uuid[FSMARK_UUID_MAX];   /* the file system's UUID, lower-case, "" if none */
        bool known;                   /* the markers below were read (a type thaw knows) */
        /* ext2/3/4 */
        uint32_t mnt_count;           /* s_mnt_count */
        uint32_t mtime;               /* s_mtime ^ s_mtime_hi (the 40-bit time's high byte folded in) */
        uint32_t wtime;               /* s_wtime ^ s_wtime_hi */
        uint64_t kbytes_written;      /* s_kbytes_written */
        bool has_journal;             /* an internal journal was read (false for an external one) */
        uint32_t journal_seq;         /* last committed transaction in the log, see above */
        /* btrfs */
        uint64_t generation;
};

/*
 * Read the markers of the file system on dev (a block device or an image file) with O_DIRECT
 * where the device takes it, so that no page cache stands between. 0 with out filled (known false
 * for a type thaw does not read: out->type still says what it is); -ENODATA if no file system is
 * recognised; -EBADMSG if its superblock or journal is inconsistent (why says what); other -errno.
 */
int fsmark_read(const char *dev, struct fsmark *out, char *why, size_t size);

/*
 * The same, probing only for type (the ext family for any ext type): for the boot, which knows the
 * recorded type and must not spend tens of milliseconds probing for every other. Another type
 * there gives -ENODATA.
 */
int fsmark_read_as(const char *dev, const char *type, struct fsmark *out, char *why, size_t size);

/*
 * 0 if b (read now) equals a (recorded) at level; 1 if not, with the first difference in why, for
 * people: "mount count 7, recorded 6", "journal commit sequence 1234, recorded 1230". A different
 * type or UUID is a difference; a recorded a that is not known compares equal (the caller warns).
 * FSMARK_ALL: ext's five markers (the journal's when a has one), btrfs's generation.
 */
int fsmark_compare(const struct fsmark *a, const struct fsmark *b, enum fsmark_level level, char *why,
                   size_t size);

/* One read-write mount of a block device. */
struct fsmark_mount {
        char dev[256];       /* the device node, as /proc/self/mounts names it (under root) */
        char dir[256];       /* its first mount point */
        unsigned maj, min;
};

struct fsmark_list {
        size_t n;
        struct fsmark_mount m[FSMARK_LIST_MAX];
};

/*
 * The read-write mounts of block devices in ROOT/proc/self/mounts, one per device (bind mounts
 * and subvolumes of the same device count once), in mount order. Pseudo and network file
 * systems, and read-only mounts, are left out. More than FSMARK_LIST_MAX: -E2BIG.
 */
int fsmark_mounts(const char *root, struct fsmark_list *out);

/*
 * Find the block device that holds the file system with this UUID (blkid, from the devices the
 * kernel lists, probed now: no cache file), into dev. -ENOENT if none does now.
 */
int fsmark_find(const char *uuid, char *dev, size_t size);

/*
 * Every other block device under ROOT/sys/class/block (not removable, not empty) that holds m's
 * type with m's UUID must show m's markers at level too: a copy of the disk attached beside it (a
 * cloud snapshot, a clone) must not pass for the file system at dev. 0 if none differs; -ENOTUNIQ
 * with why ("/dev/vdc carries it too, with other markers (mount count 6, recorded 7)") if one does
 * or cannot be read; other -errno if dev cannot be stat'ed or the directory not read.
 */
int fsmark_others(const char *root, const char *dev, const struct fsmark *m, enum fsmark_level level, char *why,
                  size_t size);
