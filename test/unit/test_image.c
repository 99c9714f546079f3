/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the image reader and the pre-handoff checks: synthetic images built here in a
 * temporary file (header page, swap-map pages, x86_64 header page), and fixture machine trees
 * (/proc/zoneinfo, /sys/firmware/memmap, ACPI FACS, the kernel release).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "image/image.h"
#include "image/swsusp.h"
#include "image/imgcheck.h"
#include "image/machine.h"

#define DEV_PAGES 1024
#define IMAGE_PAGES 600 /* data pages: 2 meta pages, 603 stream pages, 2 map pages */
#define STREAM (IMAGE_PAGES + 2 + 1)
#define MAPS 2
#define PHYS 196478

static uint8_t dev[DEV_PAGES][4096];

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

/* Header at block 0, map pages at 1..MAPS, the stream from MAPS+1 on; uncompressed. */
static void build(uint32_t flags)
{
        memset(dev, 0, sizeof(dev));
        memcpy(dev[0] + 4076, "SWAPSPACE2", 10);
        memcpy(dev[0] + 4086, "S1SUSPEND\0", 10);
        put64(dev[0] + 4064, 1);
        put32(dev[0] + 4072, flags);
        for (uint64_t i = 0; i < STREAM; i++)
                put64(dev[1 + i / 511] + 8 * (i % 511), MAPS + 1 + i);
        for (int m = 1; m < MAPS; m++)
                put64(dev[m] + 4088, (uint64_t)m + 1);
        put64(dev[MAPS + 1] + 24, SWSUSP_X86_64_MAGIC);
        put64(dev[MAPS + 1] + 32, 0xc3772fbf);
        put64(dev[MAPS + 1] + 400, PHYS);
        put64(dev[MAPS + 1] + 416, IMAGE_PAGES);
        put64(dev[MAPS + 1] + 424, STREAM);
        put64(dev[MAPS + 1] + 432, (uint64_t)STREAM * 4096);
}

static void save(void)
{
        ft_put("/dev/swap", dev, sizeof(dev));
}

static struct image_info read_it(void)
{
        struct image_info in;
        char path[PATH_MAX];

        save();
        ft_abs(path, sizeof(path), "/dev/swap");
        assert_int_equal(image_read(path, 0, &in), 0);
        return in;
}

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

/* ---- the machine side ---- */

static const char zoneinfo[] =
        "Node 0, zone      DMA\n  pages free     3840\n        present  3998\n        managed  3840\n"
        "  pagesets\n    cpu: 0\n              count: 0\n"
        "Node 0, zone    DMA32\n  pages free     150000\n        present  192480\n"
        "        managed  180000\n";

static void memmap(int i, const char *start, const char *end, const char *type)
{
        char rel[64];

        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%d/start", i);
        ft_puts(rel, start);
        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%d/end", i);
        ft_puts(rel, end);
        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%d/type", i);
        ft_puts(rel, type);
}

static void machine_fixture(const char *release)
{
        uint8_t facs[64] = { 'F', 'A', 'C', 'S' };

        ft_puts("/proc/sys/kernel/osrelease", release);
        ft_puts("/proc/zoneinfo", zoneinfo);
        ft_puts("/proc/crypto", "name         : lzo\ndriver       : lzo-generic\n");
        put32(facs + 8, 0xcafe0001);
        ft_put("/sys/firmware/acpi/tables/FACS", facs, sizeof(facs));
        /* Listed out of order on purpose: the index, not readdir, gives the table order. */
        memmap(3, "0x100000\n", "0x2fffffff\n", "System RAM\n");
        memmap(0, "0x0\n", "0x9fbff\n", "System RAM\n");
        memmap(1, "0x9fc00\n", "0x9ffff\n", "Reserved\n");
        memmap(4, "0xfffc0000\n", "0xffffffff\n", "Reserved\n");
        memmap(2, "0xf0000\n", "0xfffff\n", "Reserved\n");
}

static void test_machine(void **state)
{
        struct machine_info m;

        (void)state;
        machine_fixture("6.1.0-57-amd64\n");
        assert_int_equal(machine_read(ft_root, &m), 0);
        assert_string_equal(m.release, "6.1.0-57-amd64");
        assert_int_equal(m.kmajor, 6);
        assert_int_equal(m.kminor, 1);
        assert_true(m.have_mem);
        assert_int_equal(m.present_pages, 3998 + 192480);
        assert_true(m.have_facs);
        assert_int_equal(m.facs_sig, 0xcafe0001);
        assert_true(m.have_e820);
        assert_int_equal(m.e820_entries, 5);
        /* zlib.crc32() of the packed table, computed independently in Python */
        assert_int_equal(m.e820_crc, 0xc3772fbf);
        assert_int_equal(m.lz4, -1); /* not registered, and no module tree to ask */
}

static void test_machine_unknown(void **state)
{
        struct machine_info m;

        (void)state;
        memmap(0, "0x0\n", "0x9fbff\n", "Something new\n");
        assert_int_equal(machine_read(ft_root, &m), 0);
        assert_false(m.have_mem);
        assert_false(m.have_e820);
        assert_int_equal(m.kmajor, 0);
        assert_true(m.have_facs); /* no FACS at all: the kernel's signature is 0 */
        assert_int_equal(m.facs_sig, 0);
}

static struct imgcheck check(uint32_t flags, bool s4_hwsig)
{
        struct machine_info m;
        struct image_info in;
        struct imgcheck c;

        build(flags);
        put32(dev[0] + 4056, 0xcafe0001);
        in = read_it();
        machine_read(ft_root, &m);
        imgcheck_run(&in, &m, s4_hwsig, &c);
        return c;
}

static void test_check_good(void **state)
{
        struct imgcheck c;

        (void)state;
        machine_fixture("6.1.0-57-amd64\n");
        c = check(SWSUSP_SF_NOCOMPRESS, false);
        assert_int_equal(c.result, IMGCHECK_OK);
        c = check(SWSUSP_SF_CRC32 | SWSUSP_SF_PLATFORM, false);
        assert_int_equal(c.result, IMGCHECK_OK);
}

static void test_check_flags(void **state)
{
        struct imgcheck c;

        (void)state;
        machine_fixture("6.1.0-57-amd64\n");
        c = check(SWSUSP_SF_CRC32 | SWSUSP_SF_LZ4, false);
        assert_int_equal(c.result, IMGCHECK_LZ4);
        assert_string_equal(c.why, "the image is compressed with LZ4, which this kernel (6.1.0-57-amd64) "
                                   "cannot read (LZ4 images need Linux 6.9 or later): boot the kernel "
                                   "that wrote it");
        c = check(SWSUSP_SF_CRC32 | 0x40, false);
        assert_int_equal(c.result, IMGCHECK_FLAGS);
        assert_string_equal(imgcheck_name(c.result), "flags");

        /* 6.12 knows LZ4; whether it has the compressor decides. */
        machine_fixture("6.12.38+deb13-amd64\n");
        assert_int_equal(check(SWSUSP_SF_CRC32 | SWSUSP_SF_LZ4, false).result, IMGCHECK_OK); /* unknown */
        ft_puts("/lib/modules/6.12.38+deb13-amd64/modules.builtin", "kernel/crypto/lzo.ko\n");
        c = check(SWSUSP_SF_CRC32 | SWSUSP_SF_LZ4, false);
        assert_int_equal(c.result, IMGCHECK_LZ4);
        assert_non_null(strstr(c.why, "has no lz4 compressor"));
        ft_puts("/lib/modules/6.12.38+deb13-amd64/kernel/crypto/lz4.ko.xz", "");
        assert_int_equal(check(SWSUSP_SF_CRC32 | SWSUSP_SF_LZ4, false).result, IMGCHECK_OK);
        assert_int_equal(check(SWSUSP_SF_CRC32 | 0x20, false).result, IMGCHECK_FLAGS);
}

static void test_check_hw_sig(void **state)
{
        struct imgcheck c;
        uint8_t facs[64] = { 0 };

        (void)state;
        machine_fixture("6.1.0-57-amd64\n");
        assert_int_equal(check(SWSUSP_SF_HW_SIG | SWSUSP_SF_CRC32, true).result, IMGCHECK_OK);
        c = check(SWSUSP_SF_HW_SIG | SWSUSP_SF_CRC32, false);
        assert_int_equal(c.result, IMGCHECK_HW_SIG);
        assert_non_null(strstr(c.why, "cafe0001, which this kernel only accepts with acpi_sleep=s4_hwsig"));
        put32(facs + 8, 0xcafe0002);
        ft_put("/sys/firmware/acpi/tables/FACS", facs, sizeof(facs));
        c = check(SWSUSP_SF_HW_SIG | SWSUSP_SF_CRC32, true);
        assert_int_equal(c.result, IMGCHECK_HW_SIG);
        assert_string_equal(c.why, "the ACPI hardware signature changed (cafe0001 in the image, cafe0002 "
                                   "now): the image was made on other hardware");
        /* Without the flag the signature is not compared. */
        assert_int_equal(check(SWSUSP_SF_CRC32, true).result, IMGCHECK_OK);
}

static void test_check_memory(void **state)
{
        struct imgcheck c;

        (void)state;
        machine_fixture("6.1.0-57-amd64\n");
        ft_puts("/proc/zoneinfo", "Node 0, zone DMA\n        present  3998\nNode 0, zone DMA32\n"
                                  "        present  258016\n");
        c = check(SWSUSP_SF_NOCOMPRESS, false);
        assert_int_equal(c.result, IMGCHECK_MEMORY);
        assert_string_equal(c.why, "image was made with 768 MiB of memory, this machine has 1024 MiB");
        assert_string_equal(imgcheck_name(c.result), "memory");
        /* Off by one page: the same MiB, so pages are named. */
        ft_puts("/proc/zoneinfo", "        present  196479\n");
        c = check(SWSUSP_SF_NOCOMPRESS, false);
        assert_int_equal(c.result, IMGCHECK_MEMORY);
        assert_string_equal(c.why, "image was made with 196478 pages of memory, this machine has 196479");
}

static void test_check_e820(void **state)
{
        struct imgcheck c;

        (void)state;
        machine_fixture("6.1.0-57-amd64\n");
        memmap(3, "0x100000\n", "0x3fffffff\n", "System RAM\n");
        c = check(SWSUSP_SF_NOCOMPRESS, false);
        assert_int_equal(c.result, IMGCHECK_E820);
        assert_non_null(strstr(c.why, "e820 checksum c3772fbf in the image, "));
        memmap(3, "0x100000\n", "0x2fffffff\n", "ACPI Tables\n");
        assert_int_equal(check(SWSUSP_SF_NOCOMPRESS, false).result, IMGCHECK_E820);
}

static void test_check_malformed(void **state)
{
        struct machine_info m;
        struct image_info in;
        struct imgcheck c;

        (void)state;
        machine_fixture("6.1.0-57-amd64\n");
        build(SWSUSP_SF_NOCOMPRESS);
        put64(dev[2] + 4088, 1);
        in = read_it();
        machine_read(ft_root, &m);
        imgcheck_run(&in, &m, false, &c);
        assert_int_equal(c.result, IMGCHECK_MALFORMED);
        assert_string_equal(c.why, "the image is damaged: the swap-map chain loops back to block 1 after 2 "
                                   "map pages");
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
#define T(f) cmocka_unit_test_setup_teardown(f, ft_setup, ft_teardown)
        const struct CMUnitTest tests[] = {
                T(test_good_image),    T(test_not_image),     T(test_chain_loop),
                T(test_chain_too_long), T(test_block_outside), T(test_truncated),
                T(test_bad_magic),     T(test_bad_counts),    T(test_short_device),
                T(test_machine),       T(test_machine_unknown), T(test_check_good),
                T(test_check_flags),   T(test_check_hw_sig),  T(test_check_memory),
                T(test_check_e820),    T(test_check_malformed), T(test_unmark),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
