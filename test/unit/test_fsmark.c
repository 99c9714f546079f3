/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File-system markers (fsmark.c): btrfs crafted, other types, comparison, mounts, copies beside a disk. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>
#include "dev/fsmark.h"
#include "fsimage.h"

static uint32_t crc32c(const unsigned char *p, size_t n)
{
        uint32_t c = 0xFFFFFFFFu;

        while (n--) {
                c ^= *p++;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        }
        return ~c;
}

static void test_btrfs_crafted(void **state)
{
        static unsigned char sb[4096];
        struct fsmark a, b;
        char why[FSMARK_WHY_MAX] = "";
        uint32_t crc;
        int fd;

        (void)state;
        ft_abs(img, sizeof(img), "/btrfs.img");
        memset(sb, 0, sizeof(sb));
        for (int i = 0; i < 16; i++)
                sb[0x20 + i] = (unsigned char)(0xA0 + i); /* fsid */
        sb[0x32] = 0x01;                                  /* bytenr 65536 */
        memcpy(sb + 0x40, "_BHRfS_M", 8);
        sb[0x48] = 0x39;                                  /* generation 0x1239 */
        sb[0x49] = 0x12;
        sb[0x90] = 0x00, sb[0x91] = 0x10;                 /* sectorsize 4096 */
        sb[0x94] = 0x00, sb[0x95] = 0x40;                 /* nodesize 16384 */
        sb[0x9c] = 0x00, sb[0x9d] = 0x10;                 /* stripesize 4096 */
        crc = crc32c(sb + 0x20, sizeof(sb) - 0x20);
        memcpy(sb, &crc, 4);                              /* little-endian hosts */
        fd = open(img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 1 << 20), 0);
        assert_int_equal(pwrite(fd, sb, sizeof(sb), 65536), (ssize_t)sizeof(sb));
        close(fd);
        a = read_ok();
        assert_string_equal(a.type, "btrfs");
        assert_string_equal(a.uuid, "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
        assert_true(a.known);
        assert_int_equal(a.generation, 0x1239);
        b = a;
        b.generation++;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 1);
        assert_string_equal(why, "generation 4666, recorded 4665");
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 0);
}

static void test_unknown_and_none(void **state)
{
        struct fsmark m, x;
        char why[FSMARK_WHY_MAX] = "";
        int fd;

        (void)state;
        mkfs("mkswap");
        m = read_ok();
        assert_string_equal(m.type, "swap");
        assert_false(m.known);
        x = m;
        x.mnt_count = 5; /* not read: not compared */
        assert_int_equal(fsmark_compare(&m, &x, FSMARK_ALL, why, sizeof(why)), 0);
        ft_abs(img, sizeof(img), "/zero.img");
        fd = open(img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 1 << 20), 0);
        close(fd);
        assert_int_equal(fsmark_read(img, &m, why, sizeof(why)), -ENODATA);
        ft_abs(img, sizeof(img), "/missing.img");
        assert_true(fsmark_read(img, &m, why, sizeof(why)) < 0);
}

static void test_compare_names(void **state)
{
        struct fsmark a = { .type = "ext4", .uuid = "u1", .known = true, .mnt_count = 6, .mtime = 100,
                            .wtime = 200, .kbytes_written = 300, .has_journal = true, .journal_seq = 1230 };
        struct fsmark b;
        char why[FSMARK_WHY_MAX];

        (void)state;
        b = a, b.mnt_count = 7;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 1);
        assert_string_equal(why, "mount count 7, recorded 6");
        b = a, b.mtime = 101;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 1);
        assert_string_equal(why, "last mount time 101, recorded 100");
        b = a, b.wtime = 201;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 1);
        assert_string_equal(why, "last write time 201, recorded 200");
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 0);
        b = a, b.kbytes_written = 301;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 1);
        assert_string_equal(why, "kbytes written 301, recorded 300");
        b = a, b.journal_seq = 1234;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 1);
        assert_string_equal(why, "journal commit sequence 1234, recorded 1230");
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 0);
        b = a, b.has_journal = false;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 1);
        b = a;
        snprintf(b.uuid, sizeof(b.uuid), "u2");
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 1);
        assert_string_equal(why, "UUID u2, recorded u1");
        b = a;
        snprintf(b.type, sizeof(b.type), "xfs");
        b.known = false;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 1);
        assert_string_equal(why, "file system type xfs, recorded ext4");
        /* Without a journal, its sequence is not a marker. */
        a.has_journal = false;
        b = a, b.journal_seq = 99;
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 0);
}

static bool mknod_blk(const char *rel, unsigned maj, unsigned min)
{
        char path[PATH_MAX];

        ft_parents(rel);
        ft_abs(path, sizeof(path), rel);
        return mknod(path, S_IFBLK | 0600, makedev(maj, min)) == 0;
}

static void test_mounts(void **state)
{
        struct fsmark_list l = { .n = 99 };
        char text[4096], line[128];

        (void)state;
        if (!mknod_blk("/dev/vda1", 254, 1) || !mknod_blk("/dev/my disk", 254, 16) ||
            !mknod_blk("/dev/vdc", 254, 32) || !mknod_blk("/dev/mapper/root", 253, 0))
                skip(); /* not root: no device nodes */
        ft_puts("/dev/notblk", "");
        ft_puts("/proc/self/mounts",
                "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
                "/dev/mapper/root / ext4 rw,relatime 0 0\n"
                "/dev/vdc /ro ext4 ro,relatime 0 0\n"
                "/dev/vda1 /boot ext4 rw,relatime,errors=remount-ro 0 0\n"
                "\n"
                "/dev/mapper/root /home ext4 rw,relatime 0 0\n"
                "/dev/my\\040disk /mnt/a\\040b btrfs rw,subvol=/x 0 0\n"
                "/dev/notblk /x ext4 rw 0 0\n"
                "/dev/gone /y ext4 rw 0 0\n"
                "server:/export /nfs nfs4 rw 0 0\n"
                "tmpfs /tmp tmpfs rw 0 0\n");
        assert_int_equal(fsmark_mounts(ft_root, &l), 0);
        assert_int_equal(l.n, 3);
        assert_string_equal(l.m[0].dev, "/dev/mapper/root");
        assert_string_equal(l.m[0].dir, "/");
        assert_int_equal(l.m[0].maj, 253);
        assert_int_equal(l.m[0].min, 0);
        assert_string_equal(l.m[1].dev, "/dev/vda1");
        assert_string_equal(l.m[1].dir, "/boot");
        assert_string_equal(l.m[2].dev, "/dev/my disk");
        assert_string_equal(l.m[2].dir, "/mnt/a b");
        assert_int_equal(l.m[2].min, 16);

        /* More devices than a ticket records. */
        text[0] = '\0';
        for (unsigned i = 0; i <= FSMARK_LIST_MAX; i++) {
                char rel[32];

                snprintf(rel, sizeof(rel), "/dev/sd%u", i);
                assert_true(mknod_blk(rel, 8, i * 16));
                snprintf(line, sizeof(line), "%s /m%u ext4 rw 0 0\n", rel, i);
                strcat(text, line);
        }
        ft_puts("/proc/self/mounts", text);
        l.n = 99;
        assert_int_equal(fsmark_mounts(ft_root, &l), -E2BIG);
        assert_int_equal(l.n, 99); /* untouched */
        ft_puts("/proc/self/mounts", "");
        assert_int_equal(fsmark_mounts(ft_root, &l), 0);
        assert_int_equal(l.n, 0);
}

static void test_find_none(void **state)
{
        char dev[256] = "untouched";

        (void)state;
        assert_int_equal(fsmark_find("0badc0de-0000-4000-8000-000000000000", dev, sizeof(dev)), -ENOENT);
        assert_string_equal(dev, "untouched");
}

/* ROOT/sys/class/block/NAME with its size and removable flag, and ROOT/dev/NAME a copy of img. */
static void block_copy(const char *name, const char *size, const char *removable)
{
        char rel[128], dst[PATH_MAX];

        snprintf(rel, sizeof(rel), "/sys/class/block/%s/size", name);
        ft_puts(rel, size);
        snprintf(rel, sizeof(rel), "/sys/class/block/%s/removable", name);
        ft_puts(rel, removable);
        snprintf(rel, sizeof(rel), "/dev/%s", name);
        ft_abs(dst, sizeof(dst), rel);
        ft_parents(rel);
        assert_int_equal(run("rm -f '%s' && cp '%s' '%s'", dst, img, dst), 0);
}

static int others(const char *dev_rel, const struct fsmark *m, enum fsmark_level level, char *why, size_t size)
{
        char dev[PATH_MAX];

        ft_abs(dev, sizeof(dev), dev_rel);
        why[0] = '\0';
        return fsmark_others(ft_root, dev, m, level, why, size);
}

/* Security: a copy of the disk beside it (a snapshot attached to the VM) must show the same markers. */
static void test_others(void **state)
{
        char why[FSMARK_WHY_MAX], expect[FSMARK_WHY_MAX], path[PATH_MAX];
        struct fsmark rec;

        (void)state;
        mkfs("mkfs.ext4 -q -F -b 4096");
        rec = read_ok();
        block_copy("vda", "131072\n", "0\n");
        /* No other device: nothing to say. */
        assert_int_equal(others("/dev/vda", &rec, FSMARK_ALL, why, sizeof(why)), 0);
        /* An identical copy (a snapshot taken while the image was on the swap): the same markers. */
        block_copy("vdc", "131072\n", "0\n");
        assert_int_equal(others("/dev/vda", &rec, FSMARK_ALL, why, sizeof(why)), 0);
        /* Another file system (another UUID) is no copy. */
        mkfs("mkfs.ext4 -q -F -b 4096");
        block_copy("vdd", "131072\n", "0\n");
        assert_int_equal(others("/dev/vda", &rec, FSMARK_ALL, why, sizeof(why)), 0);
        /* The copy was mounted since: refused, naming it and the marker, from either side. */
        ft_abs(path, sizeof(path), "/dev/vdc");
        assert_int_equal(run("tune2fs -C %u '%s'", rec.mnt_count + 3, path), 0);
        assert_int_equal(others("/dev/vda", &rec, FSMARK_ALL, why, sizeof(why)), -ENOTUNIQ);
        snprintf(expect, sizeof(expect), "/dev/vdc carries it too, with other markers (mount count %u, recorded %u)",
                 rec.mnt_count + 3, rec.mnt_count);
        assert_string_equal(why, expect);
        /* From the copy's side, the original matches what was recorded: nothing to say. */
        assert_int_equal(others("/dev/vdc", &rec, FSMARK_ALL, why, sizeof(why)), 0);
        /* Even where only the mount count is trusted (the kernel wrote the image). */
        assert_int_equal(others("/dev/vda", &rec, FSMARK_MOUNT, why, sizeof(why)), -ENOTUNIQ);
        /* A removable medium or an empty device is not read. */
        ft_puts("/sys/class/block/vdc/removable", "1\n");
        assert_int_equal(others("/dev/vda", &rec, FSMARK_ALL, why, sizeof(why)), 0);
        ft_puts("/sys/class/block/vdc/removable", "0\n");
        ft_puts("/sys/class/block/vdc/size", "0\n");
        assert_int_equal(others("/dev/vda", &rec, FSMARK_ALL, why, sizeof(why)), 0);
        ft_puts("/sys/class/block/vdc/size", "131072\n");
        assert_int_equal(others("/dev/vda", &rec, FSMARK_ALL, why, sizeof(why)), -ENOTUNIQ);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_btrfs_crafted),
                cmocka_unit_test(test_unknown_and_none),
                cmocka_unit_test(test_compare_names),
                cmocka_unit_test(test_mounts),
                cmocka_unit_test(test_find_none),
                cmocka_unit_test(test_others),
        };

        if (run("command -v mkfs.ext4 && command -v debugfs && command -v dumpe2fs && command -v tune2fs") != 0) {
                printf("# e2fsprogs missing: skipped\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, ft_setup, ft_teardown);
}
