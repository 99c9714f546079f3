/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the pre-handoff checks (imgcheck.c): synthetic images built here against fixture
 * machine trees (/proc/zoneinfo, /sys/firmware/memmap, ACPI FACS, the kernel release).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "fakeimage.h"
#include "fakemachine.h"
#include "image/image.h"
#include "image/imgcheck.h"
#include "image/machine.h"

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

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, ft_setup, ft_teardown)
        const struct CMUnitTest tests[] = {
                T(test_check_good),    T(test_check_flags),   T(test_check_hw_sig),
                T(test_check_memory),  T(test_check_e820),    T(test_check_malformed),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
