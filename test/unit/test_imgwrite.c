/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of thaw's own image writer: a synthetic snapshot stream (info page, two meta pages, 700
 * mostly random data pages, so the compressed image needs more than one swap-map page) is written to
 * a swap area in a memfd, with an allocator that skips blocks as a used swap area does; then the
 * image reader and the full verification (decompression, CRC32) must accept it as a kernel image,
 * with the CRC32 computed here bit by bit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "image/image.h"
#include "image/imgverify.h"
#include "image/imgwrite.h"
#include "image/swsusp.h"
#include "putle.h"
#include "refcrc.h"

#define DEV_PAGES 2048
#define DATA_PAGES 700
#define META_PAGES 2
#define PAGES (1 + META_PAGES + DATA_PAGES)

static uint8_t stream_pages[PAGES][4096];

struct src {
        size_t next, end;
};

static int read_page(void *ctx, uint8_t *page)
{
        struct src *s = ctx;

        if (s->next >= s->end)
                return 0;
        memcpy(page, stream_pages[s->next++], 4096);
        return 1;
}

struct alloc {
        uint64_t next, limit;
};

/* Blocks from 1 on, every 97th left out (in use by other swap), -ENOSPC at limit. */
static int alloc_block(void *ctx, uint64_t *block)
{
        struct alloc *a = ctx;

        if (a->next % 97 == 0)
                a->next++;
        if (a->next >= a->limit)
                return -ENOSPC;
        *block = a->next++;
        return 0;
}

static void fill_stream(void)
{
        uint32_t x = 88172645u;

        memset(stream_pages, 0, sizeof(stream_pages));
        put64(stream_pages[0] + 24, SWSUSP_X86_64_MAGIC);
        put64(stream_pages[0] + 400, 196478);
        put64(stream_pages[0] + 416, DATA_PAGES);
        put64(stream_pages[0] + 424, PAGES);
        put64(stream_pages[0] + 432, (uint64_t)PAGES * 4096);
        for (size_t i = 0; i < DATA_PAGES; i++)
                put64(stream_pages[1 + i / 512] + 8 * (i % 512), 0x1000 + i);
        put64(stream_pages[META_PAGES] + 8 * (DATA_PAGES % 512), ~0ull);
        for (size_t i = 1 + META_PAGES; i < PAGES; i++)
                for (size_t j = 0; j < 4096; j++) {
                        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                        stream_pages[i][j] = j < 3584 ? (uint8_t)x : (uint8_t)(i + j / 256);
                }
}

/* An empty swap area (mkswap's signature) in a memfd. */
static int swap_fd(void)
{
        static uint8_t page[4096];
        int fd = memfd_create("swap", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t)DEV_PAGES * 4096), 0);
        memcpy(page + 4086, "SWAPSPACE2", 10);
        assert_int_equal(pwrite(fd, page, 4096, 0), 4096);
        return fd;
}

static void test_roundtrip(void **state)
{
        struct src s = { 0, PAGES };
        struct alloc a = { 1, DEV_PAGES };
        struct imgwrite_source src = { read_page, &s };
        struct imgwrite_alloc al = { alloc_block, &a };
        struct imgwrite_result res;
        struct image_info in;
        struct imgverify v;
        uint32_t crc = 0;
        uint8_t map[4096], info[4096];
        bool tried;
        int fd;

        (void)state;
        fill_stream();
        for (size_t i = 1; i < PAGES; i++)
                crc = ref_crc(crc, stream_pages[i], 4096);
        fd = swap_fd();
        assert_int_equal(imgwrite_stream(fd, &src, &al, &res), 0);
        assert_int_equal(res.pages, PAGES);
        assert_int_equal(res.crc, crc);
        assert_int_equal(res.first_map, 1);
        assert_int_equal(res.chunks, (DATA_PAGES + META_PAGES + 31) / 32);
        assert_true(res.blocks > 511 + 2); /* two map pages at least */

        /* Before the header: still plain swap, nothing for the kernel to resume. */
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_NOT_IMAGE);

        /* The first map page lists the info page first, verbatim and uncompressed. */
        assert_int_equal(pread(fd, map, 4096, 4096), 4096);
        assert_int_equal(pread(fd, info, 4096, (off_t)(map[0] | map[1] << 8) * 4096), 4096);
        assert_memory_equal(info, stream_pages[0], 4096);

        assert_int_equal(imgwrite_header(fd, 0, &res, false, 0, &tried), 0);
        assert_true(tried);
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_OK);
        assert_int_equal(in.flags, SWSUSP_SF_CRC32);
        assert_int_equal(in.crc32, crc);
        assert_int_equal(in.pages, PAGES);
        assert_int_equal(in.image_pages, DATA_PAGES);
        assert_true(in.map_pages >= 2);
        assert_int_equal(imgverify_fd(fd, &in, &v), 0);
        assert_int_equal(v.result, IMGVERIFY_OK);
        assert_int_equal(v.crc, crc);
        assert_int_equal(v.pages, PAGES - 1);

        /* Unmarked again: plain swap, the original signature back. */
        assert_int_equal(swsusp_unmark_fd(fd, 0), 1);
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_NOT_IMAGE);
        close(fd);
}

static void test_hw_sig(void **state)
{
        struct src s = { 0, PAGES };
        struct alloc a = { 1, DEV_PAGES };
        struct imgwrite_source src = { read_page, &s };
        struct imgwrite_alloc al = { alloc_block, &a };
        struct imgwrite_result res;
        struct image_info in;
        bool tried;
        int fd = swap_fd();

        (void)state;
        fill_stream();
        assert_int_equal(imgwrite_stream(fd, &src, &al, &res), 0);
        assert_int_equal(imgwrite_header(fd, 0, &res, true, 0x5eed1234u, &tried), 0);
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.flags, SWSUSP_SF_CRC32 | SWSUSP_SF_HW_SIG);
        assert_int_equal(in.hw_sig, 0x5eed1234u);
        close(fd);
}

/* A full swap area: an error that says so, and the header page untouched. */
static void test_full(void **state)
{
        struct src s = { 0, PAGES };
        struct alloc a = { 1, 300 };
        struct imgwrite_source src = { read_page, &s };
        struct imgwrite_alloc al = { alloc_block, &a };
        struct imgwrite_result res;
        struct image_info in;
        int fd = swap_fd();

        (void)state;
        fill_stream();
        assert_int_equal(imgwrite_stream(fd, &src, &al, &res), -ENOSPC);
        assert_non_null(strstr(res.why, "full"));
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_NOT_IMAGE);
        close(fd);
}

/* A stream shorter than its header page says is an error, not an image. */
static void test_short_stream(void **state)
{
        struct src s = { 0, PAGES - 5 };
        struct alloc a = { 1, DEV_PAGES };
        struct imgwrite_source src = { read_page, &s };
        struct imgwrite_alloc al = { alloc_block, &a };
        struct imgwrite_result res;
        int fd = swap_fd();

        (void)state;
        fill_stream();
        assert_int_equal(imgwrite_stream(fd, &src, &al, &res), -EIO);
        assert_non_null(strstr(res.why, "ended after"));
        close(fd);
}

/* The header is only written over plain swap, as the kernel's mark_swapfiles() does. */
static void test_header_needs_swap(void **state)
{
        static uint8_t junk[4096];
        struct imgwrite_result res = { .first_map = 1 };
        int fd = swap_fd();
        uint8_t back[4096];
        bool tried;

        (void)state;
        memset(junk, 0xA5, sizeof(junk));
        assert_int_equal(pwrite(fd, junk, 4096, 0), 4096);
        assert_int_equal(imgwrite_header(fd, 0, &res, false, 0, &tried), -EINVAL);
        assert_false(tried);
        assert_int_equal(pread(fd, back, 4096, 0), 4096);
        assert_memory_equal(back, junk, 4096);
        close(fd);
}

/* A swap file: the header at a page other than 0, blocks after it; a second mark is refused. */
static void test_offset(void **state)
{
        struct src s = { 0, PAGES };
        struct alloc a = { 301, DEV_PAGES };
        struct imgwrite_source src = { read_page, &s };
        struct imgwrite_alloc al = { alloc_block, &a };
        struct imgwrite_result res;
        struct image_info in;
        struct imgverify v;
        static uint8_t page[4096];
        bool tried;
        int fd = swap_fd();

        (void)state;
        fill_stream();
        memcpy(page + 4086, "SWAPSPACE2", 10);
        assert_int_equal(pwrite(fd, page, 4096, 300 * 4096), 4096);
        assert_int_equal(imgwrite_stream(fd, &src, &al, &res), 0);
        assert_int_equal(res.first_map, 301);
        assert_int_equal(imgwrite_header(fd, 300, &res, false, 0, &tried), 0);
        assert_int_equal(image_read_fd(fd, 300, &in), 0);
        assert_int_equal(in.defect, IMAGE_OK);
        assert_int_equal(imgverify_fd(fd, &in, &v), 0);
        assert_int_equal(v.result, IMGVERIFY_OK);
        /* Page 0 was not touched. */
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_NOT_IMAGE);
        /* Marked already: not plain swap, nothing written. */
        assert_int_equal(imgwrite_header(fd, 300, &res, false, 0, &tried), -EINVAL);
        assert_false(tried);
        /* Unmarking plain swap changes nothing. */
        assert_int_equal(swsusp_unmark_fd(fd, 0), 0);
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_NOT_IMAGE);
        close(fd);
}

static int failing_read(void *ctx, uint8_t *page)
{
        struct src *s = ctx;

        if (s->next == 100)
                return -EIO;
        return read_page(ctx, page);
}

static int zero_alloc(void *ctx, uint64_t *block)
{
        (void)ctx;
        *block = 0;
        return 0;
}

/* A read error in the middle, or the header's block handed out: errors, the header untouched. */
static void test_errors(void **state)
{
        struct src s = { 0, PAGES };
        struct alloc a = { 1, DEV_PAGES };
        struct imgwrite_source bad_src = { failing_read, &s };
        struct imgwrite_source src = { read_page, &s };
        struct imgwrite_alloc al = { alloc_block, &a };
        struct imgwrite_alloc zero = { zero_alloc, NULL };
        struct imgwrite_result res;
        struct image_info in;
        int fd = swap_fd();

        (void)state;
        fill_stream();
        assert_int_equal(imgwrite_stream(fd, &bad_src, &al, &res), -EIO);
        assert_non_null(strstr(res.why, "cannot read page 100"));
        s.next = 0;
        assert_int_equal(imgwrite_stream(fd, &src, &zero, &res), -EINVAL);
        assert_non_null(strstr(res.why, "block 0"));
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_NOT_IMAGE);
        close(fd);
}

/*
 * The disk refuses a write: at submission (a descriptor open for reading only), or when the write
 * completes (a device that ends early: a sealed memfd cannot grow). An error naming the blocks, the
 * header untouched, whichever run of the ones in flight fails.
 */
static void test_write_errors(void **state)
{
        struct src s = { 0, PAGES };
        struct alloc a = { 1, DEV_PAGES };
        struct imgwrite_source src = { read_page, &s };
        struct imgwrite_alloc al = { alloc_block, &a };
        struct imgwrite_result res;
        struct image_info in;
        char path[64];
        int fd = swap_fd(), ro;

        (void)state;
        fill_stream();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        ro = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(ro >= 0);
        assert_int_equal(imgwrite_stream(ro, &src, &al, &res), -EBADF);
        if (!strstr(res.why, "cannot write blocks 2-96: Bad file descriptor"))
                fail_msg("%s", res.why);
        close(ro);

        close(fd);
        fd = memfd_create("short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 40 * 4096), 0);
        assert_int_equal(pwrite(fd, "SWAPSPACE2", 10, 4086), 10);
        assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), 0);
        s.next = 0;
        a.next = 1;
        assert_int_equal(imgwrite_stream(fd, &src, &al, &res), -EIO);
        assert_non_null(strstr(res.why, "cannot write blocks "));
        assert_non_null(strstr(res.why, ": Input/output error")); /* short: past the end */
        assert_int_equal(image_read_fd(fd, 0, &in), 0);
        assert_int_equal(in.defect, IMAGE_NOT_IMAGE);
        close(fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_roundtrip),   cmocka_unit_test(test_hw_sig),
                cmocka_unit_test(test_write_errors),
                cmocka_unit_test(test_full),        cmocka_unit_test(test_short_stream),
                cmocka_unit_test(test_header_needs_swap), cmocka_unit_test(test_offset),
                cmocka_unit_test(test_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
