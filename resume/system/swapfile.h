/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Swap files for hibernation: created without holes, their blocks checked through FIEMAP. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "system/power.h"

struct swapfile_layout {
        uint64_t size;          /* bytes */
        uint64_t physical;      /* byte offset of the file's first block on the file system's device */
        unsigned runs;          /* physically contiguous pieces (1: in one run of blocks) */
        char why[128];          /* when the layout cannot hold an image: why not */
};

/* Create path (it must not exist), mode 0600, with size bytes allocated (fallocate), and sync it. */
int swapfile_create(const char *path, uint64_t size);
/*
 * The same, returning the file descriptor it was created with (read-write, O_CLOEXEC): the caller
 * makes swap in it, checks its layout and removes it on failure through this descriptor, never
 * the name again, which someone with write access to the directory could point elsewhere.
 */
int swapfile_create_fd(const char *path, uint64_t size);
/* Unlink path if it still names the file open as fd (a name replaced since is left alone). */
int swapfile_remove(int fd, const char *path);

/*
 * The layout of path through FIEMAP (after syncing it). Returns 0 and fills out; out->why is ""
 * if every byte of the file lies in allocated, page-aligned extents of plain device blocks (no
 * hole, nothing inline, shared, encoded or delayed), else says what is wrong. The extents need not
 * be contiguous: the kernel maps each one, and the image lists device blocks, not file offsets.
 * (ext4 cannot keep a file larger than ~128 MiB in one run: its block groups start with backup
 * superblocks.) runs counts the contiguous pieces, for the record.
 */
int swapfile_layout(const char *path, struct swapfile_layout *out);
/* The same for the file open as fd. */
int swapfile_layout_fd(int fd, struct swapfile_layout *out);

/*
 * The active swap file (ROOT/proc/swaps, type "file") on the device maj:min whose first block is
 * page offset of that device: its path (as /proc/swaps names it) and usage. -ENOENT if none.
 */
int swapfile_find_active(const char *root, unsigned maj, unsigned min, uint64_t offset, char *path,
                         size_t psize, struct power_swap *out);
