/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the full image verification: synthetic compressed images built here with liblzo2
 * and liblz4 (the kernel's framing: u64 cmp_len, the compressed chunk, whole pages) in a memfd.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include <lz4.h>
#include <lzo/lzo1x.h>

#include "image/image.h"
#include "boot/fresh.h"
#include "image/imgcrc.h"
#include "image/imgverify.h"
#include "ticket.h"

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

static void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* Kernel crc32_le, bit by bit: the oracle for imgcrc_update(). */
static uint32_t ref_crc(uint32_t c, const uint8_t *p, size_t n)
{
        while (n--) {
                c ^= *p++;
                for (int k = 0; k < 8; k++)
                        c = (c >> 1) ^ (c & 1 ? 0xEDB88320u : 0);
        }
        return c;
}

/* Half of each page pseudo-random: chunks then take several pages on disk. */
static void fill_payload(void)
{
        uint32_t x = 2463534242u;

        for (size_t i = 0; i < PAYLOAD; i++)
                for (size_t j = 0; j < 4096; j++) {
                        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                        payload[i][j] = j < 2048 ? (uint8_t)x : (uint8_t)(i + j / 256);
                }
}

static size_t compress_chunk(bool lz4, const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
        static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
        lzo_uint n = cap;

        if (lz4)
                return (size_t)LZ4_compress_default((const char *)in, (char *)out, (int)len, (int)cap);
        assert_int_equal(lzo1x_1_compress(in, len, out, &n, wrk), LZO_E_OK);
        return n;
}

/* Header at 0, one map page at 1, the info page at 2, compressed chunks from 3 on. */
static void build(uint32_t flags)
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

static int dev_fd(void)
{
        int fd = memfd_create("image", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, dev, sizeof(dev)), (ssize_t)sizeof(dev));
        return fd;
}

/* Read and verify; returns imgverify_fd()'s value, *v its verdict. */
static int verify(struct imgverify *v)
{
        struct image_info in;
        int fd = dev_fd(), r;

        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_OK);
        r = imgverify_fd(fd, &in, v);
        close(fd);
        return r;
}

static void test_crc32(void **state)
{
        uint32_t c;

        (void)state;
        /* crc32_le(0, "123456789") without inversions, as the kernel chains it (Python, bitwise) */
        assert_int_equal(imgcrc_update(0, "123456789", 9), 0x2dfd2d88);
        c = imgcrc_update(imgcrc_update(0, "1234", 4), "56789", 5);
        assert_int_equal(c, 0x2dfd2d88);
        assert_int_equal(ref_crc(0, (const uint8_t *)"123456789", 9), 0x2dfd2d88);
        /* The same value, said as facts 1.6 does: ~zlib_crc32(0xFFFFFFFF, …). */
        assert_int_equal(~imgcrc_update(0, "123456789", 9), 0xd202d277);
}

static void test_good(void **state)
{
        struct imgverify v;

        (void)state;
        for (int lz4 = 0; lz4 < 2; lz4++) {
                build(SWSUSP_SF_CRC32 | (lz4 ? SWSUSP_SF_LZ4 : 0));
                assert_true(chunk_block[1] - chunk_block[0] > 1); /* multi-page chunks */
                assert_int_equal(verify(&v), 0);
                assert_int_equal(v.result, IMGVERIFY_OK);
                assert_int_equal(v.chunks, 4);
                assert_int_equal(v.pages, PAYLOAD);
                assert_int_equal(v.crc, ref_crc(0, payload[0], sizeof(payload)));
                assert_non_null(strstr(v.why, "matches (4 chunks, 101 pages)"));
        }
}

static void test_flipped_byte(void **state)
{
        struct imgverify v;
        char want[128];

        (void)state;
        /* LZO: a byte in a literal run of chunk 1 decompresses, to other data. */
        build(SWSUSP_SF_CRC32);
        dev[chunk_block[1]][8 + 100] ^= 0x01;
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_CRC);
        snprintf(want, sizeof(want), "CRC32 mismatch (image %08x, computed %08x)",
                 ref_crc(0, payload[0], sizeof(payload)), v.crc);
        assert_string_equal(v.why, want);
        assert_int_not_equal(v.crc, ref_crc(0, payload[0], sizeof(payload)));
        /* LZ4, in a literal run of chunk 2. */
        build(SWSUSP_SF_CRC32 | SWSUSP_SF_LZ4);
        dev[chunk_block[2]][8 + 50] ^= 0x80;
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_CRC);
}

static void test_bad_cmp_len(void **state)
{
        struct imgverify v;

        (void)state;
        build(SWSUSP_SF_CRC32);
        put64(dev[chunk_block[1]], 0);
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_LENGTH);
        assert_string_equal(v.why, "chunk 1 has an invalid compressed length (0 bytes)");
        build(SWSUSP_SF_CRC32);
        put64(dev[chunk_block[0]], SWSUSP_CMP_MAX + 1);
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_LENGTH);
        build(SWSUSP_SF_CRC32 | SWSUSP_SF_LZ4);
        put64(dev[chunk_block[0]], UINT64_MAX);
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_LENGTH);
}

static void test_truncated_chunk(void **state)
{
        struct imgverify v;

        (void)state;
        build(SWSUSP_SF_CRC32);
        /* The map ends in the middle of the last chunk: the chain then lists too few pages. */
        put64(dev[1] + 8 * (stream_len - 1), 0);
        {
                struct image_info in;
                int fd = dev_fd();

                assert_int_equal(image_read_fd(fd, 0, &in), 0);
                assert_int_equal(in.defect, IMAGE_OK); /* still more pages than chunks */
                assert_int_equal(imgverify_fd(fd, &in, &v), 0);
                assert_int_equal(v.result, IMGVERIFY_TRUNCATED);
                assert_non_null(strstr(v.why, "the image ends inside chunk 3"));
                close(fd);
        }
        /* A chunk claims more pages than the stream still has. */
        build(SWSUSP_SF_CRC32);
        put64(dev[chunk_block[3]], SWSUSP_CMP_MAX);
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_TRUNCATED);
        assert_non_null(strstr(v.why, "the image ends inside chunk 3"));
}

static void test_decompress(void **state)
{
        struct imgverify v;

        (void)state;
        build(SWSUSP_SF_CRC32 | SWSUSP_SF_LZ4);
        memset(dev[chunk_block[0]] + 8, 0xff, 64); /* a match offset before the start */
        assert_int_equal(verify(&v), 0);
        assert_true(v.result == IMGVERIFY_DECOMPRESS || v.result == IMGVERIFY_LENGTH);
}

/* The chunks decompress to more pages than the image has. */
static void test_too_long(void **state)
{
        struct imgverify v;

        (void)state;
        build(SWSUSP_SF_CRC32);
        put64(dev[FIRST] + 416, 60);
        put64(dev[FIRST] + 424, 62);
        put64(dev[FIRST] + 432, 62 * 4096);
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_LENGTH);
        assert_string_equal(v.why, "chunk 1 goes past the image's end (32 pages, 29 left)");
}

static void test_uncompressed(void **state)
{
        struct imgverify v;

        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        for (uint64_t i = 0; i < PAGES; i++)
                put64(dev[1] + 8 * i, FIRST + i);
        assert_int_equal(verify(&v), 0);
        assert_int_equal(v.result, IMGVERIFY_OK);
        assert_string_equal(v.why, "all 101 pages read; uncompressed images carry no checksum");
}

static void test_not_well_formed(void **state)
{
        struct image_info in = { .defect = IMAGE_CHAIN_LOOP, .pages = PAGES };
        struct imgverify v = { .chunks = 42 };

        (void)state;
        assert_int_equal(imgverify_fd(-1, &in, &v), -EINVAL);
        assert_int_equal(v.chunks, 42);
}

/*
 * The image's MAC (its ticket, thaw's writer): over the stream as the snapshot device gave it,
 * the info page then the payload, uncompressed. Matching, differing, and a replayed chunk.
 */
static void test_image_hmac(void **state)
{
        static const uint8_t k[TICKET_KEY_SIZE] = { 1, 2, 3 };
        struct secret key = { .len = sizeof(k), .cap = sizeof(k), .data = (uint8_t *)k };
        struct ticket_mac *m = NULL;
        struct image_info in;
        struct imgverify v;
        struct ticket t = { .has_image_mac = true };
        char path[64];
        int fd;

        (void)state;
        build(SWSUSP_SF_CRC32);
        assert_int_equal(ticket_mac_begin(&key, &m), 0);
        assert_int_equal(ticket_mac_update(m, dev[FIRST], 4096), 0);
        assert_int_equal(ticket_mac_update(m, payload, sizeof(payload)), 0);
        assert_int_equal(ticket_mac_end(m, t.image_mac), 0);
        fd = dev_fd();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(fresh_verify_image(path, &in, &t, &key, &v), 0);
        assert_int_equal(v.result, IMGVERIFY_OK);
        assert_non_null(strstr(v.why, "; the MAC of the whole image matches its ticket"));
        /* Without the ticket's MAC (or key) only the CRC32 is checked, and said so. */
        assert_int_equal(fresh_verify_image(path, &in, &t, NULL, &v), 0);
        assert_null(strstr(v.why, "MAC"));
        t.image_mac[7] ^= 1;
        assert_int_equal(fresh_verify_image(path, &in, &t, &key, &v), 0);
        assert_int_equal(v.result, IMGVERIFY_CRC);
        assert_string_equal(v.why, "it does not match the MAC its ticket holds (a sector changed, moved or "
                                   "replayed)");
        close(fd);
        /* Security: the info page is covered too (its CRC32 is not): one byte of it changed. */
        t.image_mac[7] ^= 1;
        dev[FIRST][1000] ^= 1;
        fd = dev_fd();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(fresh_verify_image(path, &in, &t, &key, &v), 0);
        assert_int_equal(v.result, IMGVERIFY_CRC);
        close(fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_crc32),           cmocka_unit_test(test_good),
                cmocka_unit_test(test_flipped_byte),    cmocka_unit_test(test_bad_cmp_len),
                cmocka_unit_test(test_truncated_chunk), cmocka_unit_test(test_decompress),
                cmocka_unit_test(test_too_long),        cmocka_unit_test(test_uncompressed),
                cmocka_unit_test(test_not_well_formed), cmocka_unit_test(test_image_hmac),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
