/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ext2/3/4 markers (fsmark_ext.c) on real images made here (mkfs, tune2fs, debugfs) and crafted jbd2 logs. */
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
        };

        if (run("command -v mkfs.ext4 && command -v debugfs && command -v dumpe2fs && command -v tune2fs") != 0) {
                printf("# e2fsprogs missing: skipped\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, ft_setup, ft_teardown);
}
