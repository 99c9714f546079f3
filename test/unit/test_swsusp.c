/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of swsusp.c: the hibernation header check against pages built here, reads at an offset, unmarking. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeimage.h"
#include "faketree.h"
#include "image/image.h"
#include "image/swsusp.h"
#include "pagefile.h"

/* A page as mkswap leaves it (v1 header, "SWAPSPACE2" at 4086). */
static void swap_page(uint8_t *p)
{
        memset(p, 0, SWSUSP_PAGE);
        p[1024] = 1;    /* version */
        p[1028] = 0xff; /* last_page */
        memcpy(p + 4086, "SWAPSPACE2", 10);
}

/* The same page after the kernel wrote an image: mark_swapfiles(). */
static void image_page(uint8_t *p, uint64_t image, uint32_t flags)
{
        swap_page(p);
        for (int i = 0; i < 8; i++)
                p[4064 + i] = (uint8_t)(image >> (8 * i));
        for (int i = 0; i < 4; i++)
                p[4072 + i] = (uint8_t)(flags >> (8 * i));
        memcpy(p + 4076, "SWAPSPACE2", 10);
        memcpy(p + 4086, "S1SUSPEND\0", 10);
}

static void test_parse_kinds(void **state)
{
        uint8_t p[SWSUSP_PAGE];
        struct swsusp_header h;

        (void)state;
        image_page(p, 0x123456789aULL, 0x10002);
        assert_int_equal(swsusp_parse(p, sizeof(p), &h), 0);
        assert_int_equal(h.kind, SWSUSP_IMAGE);
        assert_int_equal(h.image, 0x123456789aULL);
        assert_int_equal(h.flags, 0x10002);

        swap_page(p);
        assert_int_equal(swsusp_parse(p, sizeof(p), &h), 0);
        assert_int_equal(h.kind, SWSUSP_SWAP);

        /* After a failed resume the kernel has put SWAPSPACE2 back: plain swap again. */
        image_page(p, 5, 0);
        memcpy(p + 4086, "SWAPSPACE2", 10);
        assert_int_equal(swsusp_parse(p, sizeof(p), &h), 0);
        assert_int_equal(h.kind, SWSUSP_SWAP);

        memset(p, 0, sizeof(p)); /* blank, or a foreign format */
        assert_int_equal(swsusp_parse(p, sizeof(p), &h), 0);
        assert_int_equal(h.kind, SWSUSP_OTHER);

        image_page(p, 5, 0); /* S1SUSPEND without a swap signature to restore: not ours */
        memcpy(p + 4076, "EXT4EXT4EX", 10);
        assert_int_equal(swsusp_parse(p, sizeof(p), &h), 0);
        assert_int_equal(h.kind, SWSUSP_OTHER);

        image_page(p, 5, 0); /* "S1SUSPEND" needs its NUL: 10 bytes compared, as the kernel does */
        p[4095] = 'X';
        assert_int_equal(swsusp_parse(p, sizeof(p), &h), 0);
        assert_int_equal(h.kind, SWSUSP_OTHER);
}

static void test_parse_short(void **state)
{
        uint8_t p[SWSUSP_PAGE];
        struct swsusp_header h = { .kind = SWSUSP_IMAGE, .image = 7 };

        (void)state;
        image_page(p, 1, 0);
        assert_int_equal(swsusp_parse(p, SWSUSP_PAGE - 1, &h), -ENODATA);
        assert_int_equal(h.image, 7); /* untouched */
}

static void test_read_at_offset(void **state)
{
        uint8_t p[SWSUSP_PAGE];
        struct swsusp_header h;
        char path[PATH_MAX];

        (void)state;
        image_page(p, 42, 0);
        put_file("/img", 16, 3, p); /* a swap file whose header sits at page 3 */
        ft_abs(path, sizeof(path), "/img");
        assert_int_equal(swsusp_read(path, 3, &h), 0);
        assert_int_equal(h.kind, SWSUSP_IMAGE);
        assert_int_equal(h.image, 42);
        assert_int_equal(swsusp_read(path, 0, &h), 0);
        assert_int_equal(h.kind, SWSUSP_OTHER);
        assert_int_equal(swsusp_read(path, 16, &h), -ENODATA); /* past the end */
        assert_int_equal(swsusp_read(path, UINT64_MAX / 2, &h), -ERANGE);
}

static void test_read_truncated_and_missing(void **state)
{
        struct swsusp_header h;
        char path[PATH_MAX];

        (void)state;
        ft_puts("/short", "SWAPSPACE2");
        ft_abs(path, sizeof(path), "/short");
        assert_int_equal(swsusp_read(path, 0, &h), -ENODATA);
        ft_abs(path, sizeof(path), "/missing");
        assert_int_equal(swsusp_read(path, 0, &h), -ENOENT);
}

static void test_unmark(void **state)
{
        char path[PATH_MAX];

        (void)state;
        build(SWSUSP_SF_NOCOMPRESS);
        save();
        ft_abs(path, sizeof(path), "/dev/swap");
        assert_int_equal(swsusp_unmark(path, 0), 0);
        assert_memory_equal(ft_read("/dev/swap") + 0, "", 1);
        {
                struct image_info in;

                assert_int_equal(image_read(path, 0, &in), 0);
                assert_int_equal(in.defect, IMAGE_NOT_IMAGE);
        }
        assert_int_equal(swsusp_unmark(path, 0), -ENOMSG); /* once only */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_kinds),
                cmocka_unit_test(test_parse_short),
                cmocka_unit_test(test_read_at_offset),
                cmocka_unit_test(test_read_truncated_and_missing),
                cmocka_unit_test(test_unmark),
        };

        return cmocka_run_group_tests(tests, ft_setup, ft_teardown);
}
