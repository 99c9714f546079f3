/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads a hibernation image's structure: header page, swap-map chain, swsusp_info page. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image/format.h"

#define IMAGE_PAGES_MAX (UINT64_C(1) << 32)   /* 16 TiB of 4 KiB pages: more is not an image */

/* What is wrong with the image itself, first found first; IMAGE_OK if nothing. */
enum image_defect {
        IMAGE_OK,
        IMAGE_NOT_IMAGE,    /* no S1SUSPEND over SWAPSPACE2 */
        IMAGE_BAD_BLOCK,    /* header, map or data block 0 or past the device's end */
        IMAGE_CHAIN_LOOP,   /* a map page is reached twice */
        IMAGE_CHAIN_LONG,   /* more map pages than the image can need */
        IMAGE_TRUNCATED,    /* fewer data pages than the image needs */
        IMAGE_BAD_MAGIC,    /* not an x86_64 restore record */
        IMAGE_BAD_COUNTS,   /* pages, image_pages and size disagree */
};

struct image_info {
        /* header page */
        uint32_t flags, crc32, hw_sig;
        uint64_t image;         /* first map page */
        /* the chain */
        uint64_t map_pages;     /* map pages followed */
        uint64_t entries;       /* data pages they list (stream pages on disk, info page included) */
        uint64_t device_pages;  /* size of the device or file, in pages */
        /* swsusp_info page */
        uint64_t magic;
        uint32_t e820_crc;
        uint64_t num_physpages, image_pages, pages, size;
        /* the verdict on the structure, and a sentence for people */
        enum image_defect defect;
        char why[256];
};

/*
 * Read the image whose header is at page offset of fd. Returns 0 with out->defect saying what, if
 * anything, is wrong with it (IMAGE_NOT_IMAGE when there is none), or a negative errno when the
 * device cannot be read (out untouched then). Reads at most a bounded number of pages.
 */
int image_read_fd(int fd, uint64_t offset, struct image_info *out);
int image_read(const char *path, uint64_t offset, struct image_info *out);

/* "lzo", "lz4" or "none". */
const char *image_compression(uint32_t flags);
