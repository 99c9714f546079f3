/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the image reader (image.c) on synthetic images built here in a temporary file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "fakeimage.h"
#include "image/image.h"

static void test_good_image(void **state)
{
        struct image_info in;

        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        in = read_it();
        assert_int_equal(in.defect, IMAGE_OK);
        assert_int_equal(in.map_pages, MAPS);
        assert_int_equal(in.entries, STREAM);
        assert_int_equal(in.pages, STREAM);
        assert_int_equal(in.num_physpages, PHYS);
        assert_int_equal(in.e820_crc, 0xc3772fbf);
        assert_int_equal(in.device_pages, DEV_PAGES);
        assert_string_equal(image_compression(in.flags), "none");
}

static void test_not_image(void **state)
{
        (void)state;
        build(0);
        memcpy(dev[0] + 4086, "SWAPSPACE2", 10);
        assert_int_equal(read_it().defect, IMAGE_NOT_IMAGE);
}

static void test_chain_loop(void **state)
{
        struct image_info in;

        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[2] + 4088, 1); /* the second map page points back to the first */
        in = read_it();
        assert_int_equal(in.defect, IMAGE_CHAIN_LOOP);
        assert_string_equal(in.why, "the swap-map chain loops back to block 1 after 2 map pages");

        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[2] + 4088, 2); /* onto itself */
        assert_int_equal(read_it().defect, IMAGE_CHAIN_LOOP);
}

/* A chain of distinct map pages longer than the image can need ends without a revisit. */
static void test_chain_too_long(void **state)
{
        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        for (uint64_t b = 2; b < DEV_PAGES - 1; b++)
                put64(dev[b] + 4088, b + 1);
        put64(dev[DEV_PAGES - 1] + 4088, 2);
        memset(dev[2], 0, 4088); /* later map pages list nothing */
        assert_int_equal(read_it().defect, IMAGE_CHAIN_LONG);
}

static void test_block_outside(void **state)
{
        struct image_info in;

        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[2] + 8 * 5, DEV_PAGES); /* one past the end */
        in = read_it();
        assert_int_equal(in.defect, IMAGE_BAD_BLOCK);
        assert_string_equal(in.why, "data page 516 is at block 1024, outside the device (1024 blocks)");

        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[1] + 4088, UINT64_MAX);
        assert_int_equal(read_it().defect, IMAGE_BAD_BLOCK);

        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[0] + 4064, 5000);
        assert_int_equal(read_it().defect, IMAGE_BAD_BLOCK);

        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[1], 0); /* no header page */
        assert_int_equal(read_it().defect, IMAGE_BAD_BLOCK);
}

static void test_truncated(void **state)
{
        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[2] + 8 * 10, 0);
        assert_int_equal(read_it().defect, IMAGE_TRUNCATED);
}

static void test_bad_magic(void **state)
{
        struct image_info in;

        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[MAPS + 1] + 24, 0x12345679);
        in = read_it();
        assert_int_equal(in.defect, IMAGE_BAD_MAGIC);
        assert_string_equal(in.why, "the image header is not an x86_64 restore record (magic 0x12345679)");
}

static void test_bad_counts(void **state)
{
        static const size_t off[] = { 416, 424, 432 };

        (void)state;
        for (size_t i = 0; i < 3; i++) {
                build(SWSUSP_SF_NOCOMPRESS);
                dev[MAPS + 1][off[i]]++;
                assert_int_equal(read_it().defect, IMAGE_BAD_COUNTS);
        }
        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[MAPS + 1] + 416, UINT64_MAX / 8); /* the count must not overflow into sense */
        assert_int_equal(read_it().defect, IMAGE_BAD_COUNTS);
}

static void test_short_device(void **state)
{
        struct image_info in = { .pages = 42 };
        char path[PATH_MAX];

        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        ft_put("/dev/swap", dev, 4096); /* only the header page */
        ft_abs(path, sizeof(path), "/dev/swap");
        assert_int_equal(image_read(path, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_BAD_BLOCK);
        assert_int_equal(image_read(path, 1, &in), -ENODATA);
        assert_int_equal(in.defect, IMAGE_BAD_BLOCK); /* untouched on failure */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, ft_setup, ft_teardown)
        const struct CMUnitTest tests[] = {
                T(test_good_image),    T(test_not_image),     T(test_chain_loop),
                T(test_chain_too_long), T(test_block_outside), T(test_truncated),
                T(test_bad_magic),     T(test_bad_counts),    T(test_short_device),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
