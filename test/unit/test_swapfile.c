/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the swap file checks (FIEMAP) on files in a temporary directory beside the test binary. */
#include <errno.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "system/swap.h"
#include "system/swapfile.h"
#include "image/swsusp.h"

/* FIEMAP needs a real file system (ext4, xfs, btrfs); tmpfs has none: main() puts the files beside
 * the test binary (the build's file system) rather than in /tmp, and a test skips with the reason
 * only where that has no FIEMAP either. */
static int fiemap_works(const char *path)
{
        struct swapfile_layout l;

        if (swapfile_layout(path, &l) != -EOPNOTSUPP)
                return 1;
        print_message("skip: no FIEMAP for %s (tmpfs?): nothing to test there\n", path);
        return 0;
}

static void test_allocated_file(void **state)
{
        struct swapfile_layout l;
        char path[PATH_MAX];

        (void)state;
        ft_abs(path, sizeof(path), "/swapfile");
        assert_int_equal(swapfile_create(path, 1 << 20), 0);
        if (!fiemap_works(path))
                skip();
        assert_int_equal(swapfile_layout(path, &l), 0);
        assert_string_equal(l.why, "");
        assert_int_equal(l.size, 1 << 20);
        assert_true(l.runs >= 1);
        assert_int_equal(l.physical % 4096, 0);
        assert_true(l.physical > 0);
        /* It is never made twice, nor through a link. */
        assert_int_equal(swapfile_create(path, 1 << 20), -EEXIST);
}

static void test_holes_refused(void **state)
{
        struct swapfile_layout l;
        char path[PATH_MAX];
        int fd;

        (void)state;
        ft_abs(path, sizeof(path), "/sparse");
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 1 << 20), 0);
        close(fd);
        if (!fiemap_works(path))
                skip();
        assert_int_equal(swapfile_layout(path, &l), 0);
        assert_string_equal(l.why, "the file has a hole at byte 0");

        /* Allocated at the start, a hole after 64 KiB. */
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(fallocate(fd, 0, 0, 65536), 0);
        close(fd);
        assert_int_equal(swapfile_layout(path, &l), 0);
        assert_string_equal(l.why, "the file has a hole at byte 65536");
}

/* The first 4096 bytes of path, NUL-terminated (enough for the swap signature). */
static void read_page(const char *path, char *page)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(pread(fd, page, 4096, 0), 4096);
        close(fd);
}

/*
 * thaw setup --swapfile: the file is made swap, checked and removed through the descriptor it was
 * created with. Someone who renames it and puts a link to another file in its place between two
 * steps gets neither the swap header written into that file nor it removed.
 */
static void test_swapped_name(void **state)
{
        char path[PATH_MAX], moved[PATH_MAX], victim[PATH_MAX], page[4096], uuid[37];
        struct swapfile_layout l;
        int fd, vfd;

        (void)state;
        ft_abs(path, sizeof(path), "/swapfile");
        ft_abs(moved, sizeof(moved), "/moved");
        ft_abs(victim, sizeof(victim), "/victim");
        vfd = open(victim, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(vfd >= 0);
        assert_int_equal(fallocate(vfd, 0, 0, 1 << 20), 0);
        close(vfd);

        fd = swapfile_create_fd(path, 1 << 20);
        assert_true(fd >= 0);
        assert_int_equal(rename(path, moved), 0);
        assert_int_equal(symlink(victim, path), 0);

        assert_int_equal(swap_write_header_fd(fd, NULL, uuid, sizeof(uuid)), 0);
        read_page(moved, page);
        assert_memory_equal(page + SWSUSP_SIG_OFF, "SWAPSPACE2", 10);
        read_page(victim, page);
        assert_memory_not_equal(page + SWSUSP_SIG_OFF, "SWAPSPACE2", 10);
        if (fiemap_works(moved)) {
                assert_int_equal(swapfile_layout_fd(fd, &l), 0);
                assert_int_equal(l.size, 1 << 20);
        }
        /* The name now points elsewhere: neither the link nor its target is removed. */
        assert_int_equal(swapfile_remove(fd, path), -ESTALE);
        assert_int_equal(access(victim, F_OK), 0);
        assert_int_equal(unlink(path), 0);
        /* Put back, the file is removed as ours. */
        assert_int_equal(rename(moved, path), 0);
        assert_int_equal(swapfile_remove(fd, path), 0);
        assert_int_equal(access(path, F_OK), -1);
        close(fd);
}

int main(int argc, char **argv)
{
        char dir[PATH_MAX];
        const char *slash = strrchr(argv[0], '/');
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_allocated_file, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_holes_refused, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_swapped_name, ft_setup, ft_teardown),
        };

        (void)argc;
        /* TMPDIR is often a tmpfs (Debian 13 mounts /tmp so): the binary's own folder instead. */
        if (!getenv("TMPDIR")) {
                if (slash)
                        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - argv[0]), argv[0]);
                else
                        snprintf(dir, sizeof(dir), ".");
                setenv("TMPDIR", dir, 1);
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
