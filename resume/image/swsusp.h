/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The first page of a swap area: a hibernation image header, a plain swap header, or neither. */
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
