/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File-system markers on real ext2/3/4 images made here (mkfs, tune2fs, debugfs), crafted logs and btrfs. */
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
#include "faketree.h"
#include "dev/fsmark.h"

static char img[PATH_MAX];

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
        char cmd[2 * PATH_MAX];
        va_list ap;
        int n;

        va_start(ap, fmt);
        cmd[0] = '{';
        cmd[1] = ' ';
        n = vsnprintf(cmd + 2, sizeof(cmd) - 32, fmt, ap);
        va_end(ap);
        assert_true(n > 0 && (size_t)n < sizeof(cmd) - 32);
        strcat(cmd, "; } >/dev/null 2>&1");
        return system(cmd);
}

/* The first line of a command's output that starts with key, the rest of it (trimmed). */
__attribute__((format(printf, 2, 3))) static const char *output(const char *key, const char *fmt, ...)
{
        static char value[256];
        char cmd[2 * PATH_MAX], line[512];
        va_list ap;
        FILE *f;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        value[0] = '\0';
        f = popen(cmd, "r");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (!value[0] && strncmp(line, key, strlen(key)) == 0) {
                        const char *p = line + strlen(key);

                        while (*p == ' ')
                                p++;
                        snprintf(value, sizeof(value), "%s", p);
                        value[strcspn(value, "\n")] = '\0';
                }
        pclose(f);
        return value;
}

static const char *dumpe2fs(const char *key)
{
        return output(key, "dumpe2fs -h '%s' 2>/dev/null", img);
}

/* The last commit block debugfs's logdump finds, as recovery's scan would. */
static uint32_t logdump_last_commit(void)
{
        char cmd[PATH_MAX + 64], line[512];
        uint32_t last = 0;
        unsigned seq;
        FILE *f;

        snprintf(cmd, sizeof(cmd), "debugfs -R logdump '%s' 2>/dev/null", img);
        f = popen(cmd, "r");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "Found expected sequence %u, type 2", &seq) == 1)
                        last = seq;
        pclose(f);
        return last;
}

static void mkfs(const char *how)
{
        ft_abs(img, sizeof(img), "/fs.img");
        unlink(img);
        assert_int_equal(run("truncate -s 64M '%s' && %s '%s'", img, how, img), 0);
}

static void debugfs_w(const char *req)
{
        assert_int_equal(run("debugfs -w -R '%s' '%s'", req, img), 0);
}

/* Transactions written into the log with debugfs (no mount), left there for recovery. */
static void journal_write(const char *open_args, int transactions)
{
        char cmds[PATH_MAX];
        FILE *f;

        ft_abs(cmds, sizeof(cmds), "/cmds");
        f = fopen(cmds, "w");
        assert_non_null(f);
        for (int i = 0; i < transactions; i++)
                fprintf(f, "jo %s\njw -b %d,%d /dev/zero\njc\n", open_args, 300 + i, 400 + i);
        fclose(f);
        assert_int_equal(run("debugfs -w -f '%s' '%s'", cmds, img), 0);
}

static struct fsmark read_ok(void)
{
        struct fsmark m;
        char why[FSMARK_WHY_MAX] = "";
        int r = fsmark_read(img, &m, why, sizeof(why));

        if (r != 0)
                fail_msg("fsmark_read %s: %d (%s)", img, r, why);
        return m;
}

static void test_ext4_fresh(void **state)
{
        struct fsmark m;
        char uuid[64];

        (void)state;
        mkfs("mkfs.ext4 -q -F");
        m = read_ok();
        assert_string_equal(m.type, "ext4");
        snprintf(uuid, sizeof(uuid), "%s", dumpe2fs("Filesystem UUID:"));
        assert_string_equal(m.uuid, uuid);
        assert_true(m.known);
        assert_int_equal(m.mnt_count, strtoul(dumpe2fs("Mount count:"), NULL, 10));
        assert_int_equal(m.mtime, 0);
        assert_int_equal(m.kbytes_written, strtoull(dumpe2fs("Lifetime writes:"), NULL, 10));
        assert_true(m.has_journal);
        /* An empty log: the last committed transaction is the one before s_sequence. */
        assert_string_equal(dumpe2fs("Journal start:"), "0");
        assert_int_equal(m.journal_seq, strtoul(dumpe2fs("Journal sequence:"), NULL, 16) - 1);
}

/* Superblock fields debugfs cannot keep (its close stamps s_wtime): written raw, without metadata_csum. */
static void sb_put(unsigned off, const void *v, size_t len)
{
        int fd = open(img, O_WRONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, v, len, 1024 + off), (ssize_t)len);
        close(fd);
}

static void set_wtime(uint32_t t)
{
        sb_put(0x30, &t, 4); /* little-endian hosts */
}

static void test_ext4_set_values(void **state)
{
        unsigned char one = 1;
        struct fsmark m;

        (void)state;
        mkfs("mkfs.ext4 -q -F -b 4096 -O ^metadata_csum");
        assert_int_equal(run("tune2fs -C 7 '%s'", img), 0);
        debugfs_w("ssv mtime @1767225600");
        debugfs_w("ssv kbytes_written 424242");
        set_wtime(1767229200);
        assert_non_null(strstr(dumpe2fs("Last write time:"), "2026"));
        m = read_ok();
        assert_int_equal(m.mnt_count, 7);
        assert_int_equal(m.mtime, 1767225600u);
        assert_int_equal(m.wtime, 1767229200u);
        assert_int_equal(m.kbytes_written, 424242);
        /* s_mtime_hi (ext4.h: 0x275; neither dumpe2fs 1.47 nor debugfs shows or sets it), folded in. */
        sb_put(0x275, &one, 1);
        m = read_ok();
        assert_int_equal(m.mtime, 1767225600u ^ 1u);
}

static void change_count(void) { assert_int_equal(run("tune2fs -C 3 '%s'", img), 0); }
static void change_mtime(void) { debugfs_w("ssv mtime @1767225600"); }
static void change_wtime(void) { set_wtime(1767229200); }
static void change_kbytes(void)
{
        uint64_t k = 99999;

        sb_put(0x178, &k, 8);
}

/* Each on-disk change is seen, and named, at the level that trusts it. */
static void changed(void (*change)(void), int at_mount, const char *name)
{
        struct fsmark a = read_ok(), b;
        char why[FSMARK_WHY_MAX] = "";

        change();
        b = read_ok();
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 1);
        if (!strstr(why, name))
                fail_msg("\"%s\" does not name %s", why, name);
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), at_mount);
        assert_int_equal(fsmark_compare(&b, &b, FSMARK_ALL, why, sizeof(why)), 0);
}

static void test_ext4_changes(void **state)
{
        (void)state;
        mkfs("mkfs.ext4 -q -F -O ^metadata_csum");
        changed(change_count, 1, "mount count 3, recorded 0");
        changed(change_mtime, 1, "last mount time 1767225600, recorded 0");
        changed(change_wtime, 0, "last write time 1767229200, recorded");
        changed(change_kbytes, 0, "kbytes written 99999, recorded");
}

static void test_journal_transactions(void **state)
{
        struct fsmark a, b, c;
        char why[FSMARK_WHY_MAX] = "";

        (void)state;
        mkfs("mkfs.ext4 -q -F");
        a = read_ok();
        journal_write("", 3);
        assert_string_not_equal(dumpe2fs("Journal start:"), "0");
        b = read_ok();
        assert_int_equal(logdump_last_commit(), 3);
        assert_int_equal(b.journal_seq, 3);
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_ALL, why, sizeof(why)), 1);
        /* debugfs's close also stamps the write time; the log alone differs too. */
        c = a;
        c.journal_seq = b.journal_seq;
        assert_int_equal(fsmark_compare(&a, &c, FSMARK_ALL, why, sizeof(why)), 1);
        assert_string_equal(why, "journal commit sequence 3, recorded 0");
        assert_int_equal(fsmark_compare(&a, &b, FSMARK_MOUNT, why, sizeof(why)), 0);
}

/* Checksummed (v3) logs have 16-byte tags and a descriptor tail; 4 KiB blocks, 64-bit. */
static void test_journal_csum(void **state)
{
        (void)state;
        mkfs("mkfs.ext4 -q -F -b 4096 -O 64bit,metadata_csum");
        journal_write("-c", 5);
        assert_string_equal(dumpe2fs("Journal checksum type:"), "crc32c");
        assert_int_equal(logdump_last_commit(), 5);
        assert_int_equal(read_ok().journal_seq, 5);
}

/* ext3: the journal inode has a block map, not extents. */
static void test_ext3_indirect(void **state)
{
        struct fsmark m;

        (void)state;
        mkfs("mke2fs -q -F -t ext3");
        journal_write("", 2);
        m = read_ok();
        assert_string_equal(m.type, "ext3");
        assert_true(m.has_journal);
        assert_int_equal(m.journal_seq, logdump_last_commit());
        assert_int_equal(m.journal_seq, 2);
}

static void test_no_journal(void **state)
{
        struct fsmark m;

        (void)state;
        mkfs("mkfs.ext4 -q -F -O ^has_journal");
        m = read_ok();
        assert_string_equal(m.type, "ext4");
        assert_true(m.known);
        assert_false(m.has_journal);
        mkfs("mke2fs -q -F -t ext2");
        m = read_ok();
        assert_string_equal(m.type, "ext2");
        assert_false(m.has_journal);
        /* An external journal (no journal inode) is another device: not read, not claimed. */
        mkfs("mkfs.ext4 -q -F");
        debugfs_w("ssv journal_inum 0");
        m = read_ok();
        assert_true(m.known);
        assert_false(m.has_journal);
}

/* Crafting a log: the journal's superblock fields and blocks, written through the block map. */
static uint32_t be32(const unsigned char *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
        p[0] = (unsigned char)(v >> 24);
        p[1] = (unsigned char)(v >> 16);
        p[2] = (unsigned char)(v >> 8);
        p[3] = (unsigned char)v;
}

static off_t jblock_off(uint32_t lblk)
{
        char req[64];

        snprintf(req, sizeof(req), "bmap <8> %u", lblk);
        return (off_t)strtoull(output("", "debugfs -R '%s' '%s' 2>/dev/null", req, img), NULL, 10) * 1024;
}

static void jwrite(uint32_t lblk, const unsigned char *b)
{
        int fd = open(img, O_WRONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, b, 1024, jblock_off(lblk)), 1024);
        close(fd);
}

static void jread(uint32_t lblk, unsigned char *b)
{
        int fd = open(img, O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(pread(fd, b, 1024, jblock_off(lblk)), 1024);
        close(fd);
}

static void header(unsigned char *b, uint32_t type, uint32_t seq)
{
        memset(b, 0, 1024);
        put_be32(b, 0xC03B3998u);
        put_be32(b + 4, type);
        put_be32(b + 8, seq);
}

/* A descriptor with n 8-byte tags (no 64bit, no csum), the first carrying the 16-byte UUID. */
static void descriptor(unsigned char *b, uint32_t seq, unsigned n)
{
        size_t p = 12;

        header(b, 1, seq);
        for (unsigned i = 0; i < n; i++) {
                uint16_t flags = (i ? 0x2 : 0) | (i + 1 == n ? 0x8 : 0);

                put_be32(b + p, 500 + i);
                b[p + 6] = (unsigned char)(flags >> 8);
                b[p + 7] = (unsigned char)flags;
                p += 8 + (i ? 0 : 16);
        }
}

/* Point the (1 KiB-block, 4096-block) journal's log at start with sequence seq. */
static uint32_t set_log(uint32_t start, uint32_t seq)
{
        unsigned char sb[1024];

        jread(0, sb);
        put_be32(sb + 0x18, seq);
        put_be32(sb + 0x1C, start);
        jwrite(0, sb);
        return be32(sb + 0x10);
}

static void test_crafted_wrap(void **state)
{
        unsigned char b[1024];
        uint32_t maxlen;

        (void)state;
        mkfs("mkfs.ext4 -q -F -b 1024 -J size=4");
        maxlen = set_log(0, 1);
        assert_int_equal(maxlen, 4096);
        /* Transaction 41 at the end of the log, its data wrapping to the start, 42 after it. */
        maxlen = set_log(maxlen - 3, 41);
        descriptor(b, 41, 3);
        jwrite(maxlen - 3, b);           /* data: maxlen-2, maxlen-1, 1 */
        header(b, 2, 41);
        jwrite(2, b);
        header(b, 5, 42);                /* a revoke block is one block */
        jwrite(3, b);
        header(b, 2, 42);
        jwrite(4, b);
        header(b, 2, 44);                /* not the expected sequence: the end */
        jwrite(5, b);
        assert_int_equal(logdump_last_commit(), 42);
        assert_int_equal(read_ok().journal_seq, 42);
        /* An uncommitted transaction at the end does not count. */
        descriptor(b, 43, 1);
        jwrite(5, b);
        assert_int_equal(read_ok().journal_seq, 42);
}

static void test_crafted_corrupt(void **state)
{
        unsigned char b[1024], sb[1024];
        struct fsmark m;
        char why[FSMARK_WHY_MAX] = "";

        (void)state;
        mkfs("mkfs.ext4 -q -F -b 1024 -J size=4");
        /* A descriptor whose tags cover the whole ring leads back to itself: bounded, refused. */
        set_log(1, 7);
        for (uint32_t at = 1; at < 4096; at += 45) { /* 91 descriptors of 44 tags: 4095 blocks */
                descriptor(b, 7, 44);
                jwrite(at, b);
        }
        assert_int_equal(fsmark_read(img, &m, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "journal"));
        /* Garbage everywhere in the log: the scan stops at once. */
        memset(b, 0xA5, sizeof(b));
        for (uint32_t i = 1; i < 64; i++)
                jwrite(i, b);
        assert_int_equal(read_ok().journal_seq, 6);
        /* A journal superblock that points outside its journal. */
        jread(0, sb);
        put_be32(sb + 0x1C, 5000);
        jwrite(0, sb);
        assert_int_equal(fsmark_read(img, &m, why, sizeof(why)), -EBADMSG);
        put_be32(sb + 0x1C, 1);
        put_be32(sb + 0x0C, 4096); /* a block size not the file system's */
        jwrite(0, sb);
        assert_int_equal(fsmark_read(img, &m, why, sizeof(why)), -EBADMSG);
        /* The journal inode's extent tree overwritten. */
        mkfs("mkfs.ext4 -q -F -b 1024 -J size=4");
        debugfs_w("sif <8> block[0] 0x12345678");
        assert_int_equal(fsmark_read(img, &m, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "extent"));
        mkfs("mkfs.ext4 -q -F -b 1024 -J size=4");
        debugfs_w("sif <8> block[5] 0xFFFFFFF"); /* the extent's start, past the end */
        assert_int_equal(fsmark_read(img, &m, why, sizeof(why)), -EBADMSG);
        /* A truncated image. */
        mkfs("mkfs.ext4 -q -F -b 1024");
        assert_int_equal(truncate(img, 4096), 0);
        assert_int_equal(fsmark_read(img, &m, why, sizeof(why)), -EBADMSG);
}

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
                cmocka_unit_test(test_ext4_fresh),
                cmocka_unit_test(test_ext4_set_values),
                cmocka_unit_test(test_ext4_changes),
                cmocka_unit_test(test_journal_transactions),
                cmocka_unit_test(test_journal_csum),
                cmocka_unit_test(test_ext3_indirect),
                cmocka_unit_test(test_no_journal),
                cmocka_unit_test(test_crafted_wrap),
                cmocka_unit_test(test_crafted_corrupt),
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
