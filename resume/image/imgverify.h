/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Full verification of a hibernation image: decompress every chunk and check the kernel's CRC32. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"

enum imgverify_result {
        IMGVERIFY_OK,         /* the CRC32 matches (or, uncompressed, every page was read) */
        IMGVERIFY_LENGTH,     /* a chunk's compressed or uncompressed length breaks the kernel's rules */
        IMGVERIFY_TRUNCATED,  /* the stream ends inside a chunk, or before the image's pages */
        IMGVERIFY_DECOMPRESS, /* a chunk does not decompress */
        IMGVERIFY_CRC,        /* the CRC32 differs from the header's */
};

struct imgverify {
        enum imgverify_result result;
        uint32_t crc;        /* computed, as the kernel's crc32_le from 0 */
        uint64_t chunks;     /* compressed chunks read */
        uint64_t pages;      /* payload pages produced (meta + data) */
        char why[256];       /* for people */
};

/*
 * Verify the image img (from image_read_fd() on the same fd, structure IMAGE_OK) as the kernel's
 * loader would. Returns 0 with out filled, or a negative errno (-EINVAL if img is not well-formed,
 * a read error, -ENOMEM). Memory: one chunk; time: one pass over the image.
 */
int imgverify_fd(int fd, const struct image_info *img, struct imgverify *out);
int imgverify(const char *path, const struct image_info *img, struct imgverify *out);

/*
 * The same, giving hook the image stream as the kernel's snapshot device gave it to the writer: the
 * swsusp_info page, then every payload page, uncompressed, in order (the image's MAC is over it).
 * A hook's failure stops the verification with -EIO.
 */
typedef int (*imgverify_hook)(void *ctx, const void *data, size_t len);
int imgverify_fd_hook(int fd, const struct image_info *img, imgverify_hook hook, void *ctx, struct imgverify *out);
int imgverify_hooked(const char *path, const struct image_info *img, imgverify_hook hook, void *ctx,
                     struct imgverify *out);
