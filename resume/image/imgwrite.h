/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writing a hibernation image in the kernel's own swap format (the format image.h reads), from
 * the page stream the kernel's snapshot device gives: LZO chunks of 32 pages with the kernel's
 * CRC32, swap-map pages, and last the header page. The kernel's boot-time resume reads it as if
 * the kernel had written it. Unlike Linux 6.1's writer, this one flushes the device before the
 * header is written and again after it, so a disk cache or dm-integrity's journal cannot lose the
 * end of the image at power-off.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the pages come from: read_page fills one page, returns 1, 0 at the end, or -errno. */
struct imgwrite_source {
        int (*read_page)(void *ctx, uint8_t *page);
        void *ctx;
};

/* Where they go: alloc gives the next free swap block (in pages) of the device, or -errno (-ENOSPC). */
struct imgwrite_alloc {
        int (*alloc)(void *ctx, uint64_t *block);
        void *ctx;
};

struct imgwrite_result {
        uint64_t pages;      /* stream pages (header page, meta and data), as swsusp_info says */
        uint64_t blocks;     /* swap blocks written: header page, compressed pages, map pages */
        uint64_t chunks;     /* compressed chunks */
        uint64_t first_map;  /* block of the first swap-map page: the header's image field */
        uint32_t crc;        /* the kernel's CRC32 over the uncompressed chunks */
        uint64_t wait_ns;    /* time spent waiting for the disk (for the writer's line) */
        char why[256];       /* for people, when it fails */
};

/*
 * Write the whole stream to fd (the swap's block device, or a file in tests): the first stream
 * page (swsusp_info) as it is, the rest LZO-compressed as Linux writes it, the map pages, then
 * fdatasync. Consecutive blocks are written together, up to 4 MiB of them in flight (Linux AIO,
 * so the disk writes while the next pages are compressed). The header page is not touched: the image is
 * not there for the kernel until imgwrite_header(). Returns 0, or -errno with out->why said.
 */
int imgwrite_stream(int fd, const struct imgwrite_source *src, const struct imgwrite_alloc *alloc,
                    struct imgwrite_result *out);

/*
 * Mark the swap header page at block resume_block as holding the image: it must be plain swap
 * (SWAPSPACE2); the signature becomes S1SUSPEND with the original kept, the image field first_map,
 * flags SF_CRC32_MODE (with SF_HW_SIG and hw_sig if hw_sig is set), the CRC32; then fdatasync.
 * -EINVAL if the page is not plain swap. *tried says whether the page was written at all: after a
 * failed write or flush the disk may hold it or not (swsusp_unmark_fd() settles that).
 */
int imgwrite_header(int fd, uint64_t resume_block, const struct imgwrite_result *img, bool hw_sig,
                    uint32_t hw_sig_value, bool *tried);
