/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A synthetic compressed hibernation image, built here with liblzo2 or liblz4 in the kernel's framing
 * (u64 cmp_len, the compressed chunk, whole pages) and its CRC32, read through a memfd.
 */
#pragma once
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <lz4.h>
#include <lzo/lzo1x.h>

#include "image/image.h"
#include "putle.h"
#include "refcrc.h"

#define DEV_PAGES 512
#define DATA_PAGES 100                 /* 1 meta page: 101 payload pages, chunks of 32,32,32,5 */
#define PAYLOAD (DATA_PAGES + 1)
#define PAGES (PAYLOAD + 1)
#define MAPS 1
#define FIRST (MAPS + 1)               /* block of the info page, stream entries follow in order */

static uint8_t dev[DEV_PAGES][4096];
static uint8_t payload[PAYLOAD][4096];
static uint64_t chunk_block[8];        /* first block of each chunk */
static uint64_t stream_len;

/* Half of each page pseudo-random: chunks then take several pages on disk. */
static inline void fill_payload(void)
{
        uint32_t x = 2463534242u;

        for (size_t i = 0; i < PAYLOAD; i++)
                for (size_t j = 0; j < 4096; j++) {
                        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                        payload[i][j] = j < 2048 ? (uint8_t)x : (uint8_t)(i + j / 256);
                }
}

static inline size_t compress_chunk(bool lz4, const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
        static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
        lzo_uint n = cap;

        if (lz4)
                return (size_t)LZ4_compress_default((const char *)in, (char *)out, (int)len, (int)cap);
        assert_int_equal(lzo1x_1_compress(in, len, out, &n, wrk), LZO_E_OK);
        return n;
}

/* Header at 0, one map page at 1, the info page at 2, compressed chunks from 3 on. */
static inline void build(uint32_t flags)
{
        static uint8_t cmp[SWSUSP_CMP_MAX + 4096];
        bool lz4 = flags & SWSUSP_SF_LZ4;
        uint64_t block = FIRST + 1;
        uint32_t crc = 0;
        size_t c = 0;

        memset(dev, 0, sizeof(dev));
        fill_payload();
        memcpy(dev[0] + 4076, "SWAPSPACE2", 10);
        memcpy(dev[0] + 4086, "S1SUSPEND\0", 10);
        put64(dev[0] + 4064, 1);
        put32(dev[0] + 4072, flags);
        put64(dev[FIRST] + 24, SWSUSP_X86_64_MAGIC);
        put64(dev[FIRST] + 400, 196478);
        put64(dev[FIRST] + 416, DATA_PAGES);
        put64(dev[FIRST] + 424, PAGES);
        put64(dev[FIRST] + 432, (uint64_t)PAGES * 4096);
        for (size_t p = 0; p < PAYLOAD; p += 32, c++) {
                size_t n = PAYLOAD - p < 32 ? PAYLOAD - p : 32;
                size_t len = compress_chunk(lz4, payload[p], n * 4096, cmp + 8, SWSUSP_CMP_MAX);

                crc = ref_crc(crc, payload[p], n * 4096);
                put64(cmp, len);
                chunk_block[c] = block;
                for (size_t off = 0; off < 8 + len; off += 4096)
                        memcpy(dev[block++], cmp + off, 4096);
        }
        stream_len = block - FIRST;
        for (uint64_t i = 0; i < stream_len; i++)
                put64(dev[1] + 8 * i, FIRST + i);
        put32(dev[0] + 4060, crc);
}

static inline int dev_fd(void)
{
        int fd = memfd_create("image", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, dev, sizeof(dev)), (ssize_t)sizeof(dev));
        return fd;
}
