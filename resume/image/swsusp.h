/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pages of a swap area read and written whole; the first: an image header, a plain swap header, or neither. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "image/format.h"

enum swsusp_kind {
        SWSUSP_OTHER, /* neither: not swap, or a foreign format */
        SWSUSP_SWAP,  /* plain swap (SWAPSPACE2): no image */
        SWSUSP_IMAGE, /* S1SUSPEND over an original SWAPSPACE2: a hibernation image */
};

struct swsusp_header {
        enum swsusp_kind kind;
        uint64_t image; /* first swap_map_page, in pages (images only) */
        uint32_t flags; /* SF_* (images only) */
};

/* Classify one page; -ENODATA if len is short of a page. */
int swsusp_parse(const uint8_t *page, size_t len, struct swsusp_header *out);
/*
 * Read and classify the page at offset (in 4096-byte pages) of path. Reads around the page cache
 * where it can, so a header the kernel rewrote behind our back is seen as it is on disk.
 * -ENODATA if the device ends before the page.
 */
int swsusp_read(const char *path, uint64_t offset, struct swsusp_header *out);
const char *swsusp_kind_name(enum swsusp_kind k);

/*
 * Read page block of fd into buf (SWSUSP_PAGE bytes), retrying short reads. -ENODATA past the
 * end, -ERANGE for a block beyond off_t, -errno. buf must be page-aligned if fd is O_DIRECT.
 */
int swsusp_read_page(int fd, uint64_t block, uint8_t *buf);
/*
 * Read and classify page block of fd into *page, page-aligned (for O_DIRECT) and the caller's to
 * free, also on failure (NULL when it could not be allocated).
 */
int swsusp_load(int fd, uint64_t block, uint8_t **page, struct swsusp_header *out);
/* Write n pages from buf at page block of fd (no flush). -errno, -EIO if the device took nothing. */
int swsusp_write_pages(int fd, uint64_t block, const uint8_t *buf, size_t n);
/*
 * Put the plain swap signature back over an image's mark at page block of fd, as the kernel's
 * swsusp_check() does (the original signature into the signature), then fsync. 1 once unmarked,
 * 0 if the page holds no image, -errno. fd may be O_DIRECT.
 */
int swsusp_unmark_fd(int fd, uint64_t block);
/* The same on path; -ENOMSG if the page at offset holds no image. */
int swsusp_unmark(const char *path, uint64_t offset);
