/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of machine.c: what this machine's kernel will compare an image with, from fixture trees. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "fakemachine.h"
#include "image/machine.h"

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

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, ft_setup, ft_teardown)
        const struct CMUnitTest tests[] = {
                T(test_machine), T(test_machine_unknown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
