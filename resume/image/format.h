/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's hibernation image format on a swap area (kernel/power/swap.c, x86_64): every constant of it. */
#pragma once

/* The swap area, the image's blocks and the stream it stores are all counted in 4 KiB pages. */
#define SWSUSP_PAGE 4096

/*
 * The header page (struct swsusp_header, at resume_offset): its fields sit at the end of the page,
 * where mkswap's signature is. An image is S1SUSPEND over the original SWAPSPACE2.
 */
#define SWSUSP_SIG_OFF 4086      /* "S1SUSPEND\0" or "SWAPSPACE2", 10 bytes */
#define SWSUSP_ORIG_SIG_OFF 4076 /* with an image: the signature it replaced */
#define SWSUSP_FLAGS_OFF 4072    /* SWSUSP_SF_* below, 32 bits */
#define SWSUSP_IMAGE_OFF 4064    /* block of the first swap-map page, 64 bits */
#define SWSUSP_CRC32_OFF 4060    /* the image's CRC32, with SWSUSP_SF_CRC32 */
#define SWSUSP_HW_SIG_OFF 4056   /* ACPI hardware signature, with SWSUSP_SF_HW_SIG */
#define SWSUSP_SIG_LEN 10
#define SWSUSP_SIG_IMAGE "S1SUSPEND" /* with its NUL: SWSUSP_SIG_LEN bytes */
#define SWSUSP_SIG_SWAP "SWAPSPACE2" /* without a NUL */

/* SF_* flags of the header page (kernel/power/power.h). */
#define SWSUSP_SF_PLATFORM 0x01
#define SWSUSP_SF_NOCOMPRESS 0x02
#define SWSUSP_SF_CRC32 0x04
#define SWSUSP_SF_HW_SIG 0x08
#define SWSUSP_SF_LZ4 0x10      /* Linux 6.9+ */

/* A swap-map page (struct swap_map_page): 511 block numbers of stream pages, then next_swap. */
#define SWSUSP_MAP_ENTRIES 511
#define SWSUSP_MAP_NEXT_OFF (8 * SWSUSP_MAP_ENTRIES) /* block of the next map page, 0 at the end */

/*
 * The stream's first page (struct swsusp_info), stored uncompressed: x86_64's restore record in
 * place of the utsname, then the counts.
 */
#define SWSUSP_INFO_MAGIC_OFF 24          /* restore_data_record.magic */
#define SWSUSP_INFO_E820_CRC_OFF 32       /* restore_data_record.e820_checksum */
#define SWSUSP_INFO_NUM_PHYSPAGES_OFF 400
#define SWSUSP_INFO_IMAGE_PAGES_OFF 416   /* data pages */
#define SWSUSP_INFO_PAGES_OFF 424         /* stream pages, this one included */
#define SWSUSP_INFO_SIZE_OFF 432          /* bytes: pages * SWSUSP_PAGE */
#define SWSUSP_X86_64_MAGIC 0x23456789ABCDEF02ULL /* RESTORE_MAGIC of the x86_64 restore record */

/*
 * The rest of the stream, unless SWSUSP_SF_NOCOMPRESS: chunks of up to 32 pages, each stored as
 * its compressed length (8 bytes) and the compressed bytes, over as many pages as that takes.
 */
#define SWSUSP_CHUNK_PAGES 32                                /* LZO_UNC_PAGES */
#define SWSUSP_UNC_MAX (SWSUSP_CHUNK_PAGES * SWSUSP_PAGE)    /* UNC_SIZE: 131072 */
#define SWSUSP_CMP_HEADER 8                                  /* the length field, a size_t */
#define SWSUSP_CMP_MAX 139333                                /* bytes_worst_compress(UNC_SIZE) */
/* Pages a chunk can take on disk, worst case: 35. */
#define SWSUSP_CHUNK_DISK_PAGES ((SWSUSP_CMP_HEADER + SWSUSP_CMP_MAX + SWSUSP_PAGE - 1) / SWSUSP_PAGE)
