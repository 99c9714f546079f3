/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of imgcrc.c: the one CRC32 of the image reader and writer, as the kernel chains it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "image/imgcrc.h"
#include "refcrc.h"

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

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_crc32),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
