/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of fresh.c's check of a whole image against its ticket's MAC, on a synthetic compressed image. */
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

#include "boot/fresh.h"
#include "fakecompressed.h"
#include "image/image.h"
#include "image/imgverify.h"
#include "ticket.h"

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
                cmocka_unit_test(test_image_hmac),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
