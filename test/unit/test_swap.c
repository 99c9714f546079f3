/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of our swap header (swap.c): what blkid and the kernel's swapon read of it, and refusals. */
#include <blkid.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "image/swsusp.h"
#include "pagefile.h"
#include "system/swap.h"

static void probe(const char *path, const char *key, char *val, size_t size)
{
        blkid_probe pr = blkid_new_probe_from_filename(path);
        const char *v = NULL;

        assert_non_null(pr);
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL |
                                                      BLKID_SUBLKS_VERSION);
        assert_int_equal(blkid_do_safeprobe(pr), 0);
        if (blkid_probe_lookup_value(pr, key, &v, NULL) != 0)
                v = "";
        snprintf(val, size, "%s", v);
        blkid_free_probe(pr);
}

static void test_swap_header_probes_as_swap(void **state)
{
        char path[PATH_MAX], uuid[37], val[64];
        struct swsusp_header h;
        uint8_t p[SWSUSP_PAGE];
        int fd;

        (void)state;
        put_file("/swap", 256, 0, NULL);
        ft_abs(path, sizeof(path), "/swap");
        assert_int_equal(swap_write_header(path, "thawswap", uuid, sizeof(uuid)), 0);
        probe(path, "TYPE", val, sizeof(val));
        assert_string_equal(val, "swap");
        probe(path, "UUID", val, sizeof(val));
        assert_string_equal(val, uuid);
        assert_int_equal(uuid[14], '4'); /* a random (version 4) UUID */
        probe(path, "LABEL", val, sizeof(val));
        assert_string_equal(val, "thawswap");
        probe(path, "VERSION", val, sizeof(val));
        assert_string_equal(val, "1");
        assert_int_equal(swsusp_read(path, 0, &h), 0);
        assert_int_equal(h.kind, SWSUSP_SWAP);

        /* The fields the kernel's swapon reads: version 1, last_page = pages - 1, no bad pages. */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(read(fd, p, sizeof(p)), SWSUSP_PAGE);
        close(fd);
        assert_int_equal(p[1024] | p[1025] << 8, 1);
        assert_int_equal(p[1028] | p[1029] << 8 | p[1030] << 16 | p[1031] << 24, 255);
        assert_int_equal(p[1032] | p[1033] | p[1034] | p[1035], 0);

        /* Two headers, two UUIDs; no label is fine too. */
        char uuid2[37];
        assert_int_equal(swap_write_header(path, NULL, uuid2, sizeof(uuid2)), 0);
        assert_string_not_equal(uuid, uuid2);
        probe(path, "TYPE", val, sizeof(val));
        assert_string_equal(val, "swap");
}

static void test_swap_header_refusals(void **state)
{
        char path[PATH_MAX], uuid[37];

        (void)state;
        put_file("/tiny", 9, 0, NULL);
        ft_abs(path, sizeof(path), "/tiny");
        assert_int_equal(swap_write_header(path, NULL, uuid, sizeof(uuid)), -ENOSPC);
        put_file("/ok", 10, 0, NULL);
        ft_abs(path, sizeof(path), "/ok");
        assert_int_equal(swap_write_header(path, "seventeen-chars-x", NULL, 0), -ENAMETOOLONG);
        assert_int_equal(swap_write_header(path, NULL, uuid, 36), -ENOBUFS);
        assert_int_equal(swap_write_header(path, "sixteen-chars-xx", NULL, 0), 0);
        ft_abs(path, sizeof(path), "/nonexistent");
        assert_int_equal(swap_write_header(path, NULL, NULL, 0), -ENOENT);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_swap_header_probes_as_swap),
                cmocka_unit_test(test_swap_header_refusals),
        };

        return cmocka_run_group_tests(tests, ft_setup, ft_teardown);
}
