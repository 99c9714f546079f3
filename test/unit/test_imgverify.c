/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the full image verification (imgverify.c): synthetic compressed images built
 * here with liblzo2 and liblz4 (the kernel's framing: u64 cmp_len, the compressed chunk, whole
 * pages) in a memfd.
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

#include "fakecompressed.h"
#include "image/image.h"
#include "image/imgverify.h"
#include "refcrc.h"

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

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_good),            cmocka_unit_test(test_flipped_byte),
                cmocka_unit_test(test_bad_cmp_len),     cmocka_unit_test(test_truncated_chunk),
                cmocka_unit_test(test_decompress),      cmocka_unit_test(test_too_long),
                cmocka_unit_test(test_uncompressed),    cmocka_unit_test(test_not_well_formed),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
