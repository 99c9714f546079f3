/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsmark's readers: aligned reads that work with O_DIRECT, and the ext2/3/4 + jbd2 markers. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/fsmark.h"

#define FSMARK_BLOCK_MAX 65536u /* ext4's largest block, and a btrfs superblock fits */

/* An open device or image: fd opened with O_DIRECT when it took it, one aligned bounce buffer. */
struct fsmark_dev {
        int fd;
        bool direct;
        unsigned char *bounce; /* FSMARK_BOUNCE bytes, 4096-aligned */
};

/*
 * Read len (<= FSMARK_BLOCK_MAX) bytes at off into buf, through aligned reads. -EBADMSG if the
 * device ends before off + len (a file system that points past its device), other -errno.
 */
int fsmark_dev_read(struct fsmark_dev *d, uint64_t off, void *buf, size_t len);

/* The markers of the ext2/3/4 file system on d into out (type and uuid are the caller's). */
int fsmark_ext_read(struct fsmark_dev *d, struct fsmark *out, char *why, size_t size);
