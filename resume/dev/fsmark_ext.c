/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ext2/3/4 markers: the superblock's counters, and the last commit in the jbd2 log (read only). */
#include "dev/fsmark_ext.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The on-disk formats: fs/ext4/ext4.h, include/linux/jbd2.h (offsets in bytes). */
#define EXT_SB_OFF 1024u
#define EXT_MAGIC 0xEF53u
#define EXT_COMPAT_HAS_JOURNAL 0x4u
#define EXT_INCOMPAT_64BIT 0x80u
#define EXT_EXTENTS_FL 0x80000u
#define EXT_INLINE_DATA_FL 0x10000000u
#define EXT_EXT_MAGIC 0xF30Au
#define EXT_EXT_DEPTH_MAX 5 /* EXT4_MAX_EXTENT_DEPTH */

#define JBD_MAGIC 0xC03B3998u
#define JBD_DESCRIPTOR 1u
#define JBD_COMMIT 2u
#define JBD_SB_V1 3u
#define JBD_SB_V2 4u
#define JBD_REVOKE 5u
#define JBD_INCOMPAT_64BIT 0x2u
#define JBD_INCOMPAT_CSUM_V2 0x8u
#define JBD_INCOMPAT_CSUM_V3 0x10u
#define JBD_FLAG_SAME_UUID 0x2u
#define JBD_FLAG_LAST_TAG 0x8u
#define JBD_HEADER 12u /* h_magic, h_blocktype, h_sequence */
#define JBD_TAIL 4u    /* the descriptor block's checksum tail (csum v2/v3) */

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) { return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16; }
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }
static uint32_t be32(const unsigned char *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint16_t be16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* What the walk needs of the file system, checked once. */
struct ext {
        struct fsmark_dev *dev;
        uint32_t bs;
        uint64_t blocks;        /* s_blocks_count */
        unsigned char *blk;     /* bs bytes: the block being looked at */
        unsigned char *node;    /* bs bytes: an extent tree or indirect block */
        uint64_t node_nr;       /* which block node holds (0: none) */
        unsigned char root[60]; /* the journal inode's i_block */
        bool extents;
        char *why;
        size_t size;
};

__attribute__((format(printf, 2, 3))) static int bad(struct ext *e, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(e->why, e->size, fmt, ap);
        va_end(ap);
        return -EBADMSG;
}

static int read_block(struct ext *e, uint64_t nr, unsigned char *buf)
{
        if (nr == 0 || nr >= e->blocks)
                return bad(e, "journal block %llu outside the file system", (unsigned long long)nr);
        return fsmark_dev_read(e->dev, nr * e->bs, buf, e->bs);
}

static int read_node(struct ext *e, uint64_t nr)
{
        int r;

        if (nr != 0 && nr == e->node_nr)
                return 0;
        e->node_nr = 0;
        r = read_block(e, nr, e->node);
        if (r == 0)
                e->node_nr = nr;
        return r;
}

/* The physical block of the journal's logical block lblk, through its extent tree. */
static int map_extent(struct ext *e, uint32_t lblk, uint64_t *out)
{
        const unsigned char *n = e->root;
        size_t n_size = sizeof(e->root);
        int r, want = -1;

        for (int level = 0; level <= EXT_EXT_DEPTH_MAX; level++) {
                unsigned entries = le16(n + 2), max = le16(n + 4), depth = le16(n + 6);
                uint64_t child = 0;
                bool found = false;

                if (le16(n) != EXT_EXT_MAGIC || entries > max || max > (n_size - 12) / 12 ||
                    depth > EXT_EXT_DEPTH_MAX || (want >= 0 && depth != (unsigned)want))
                        return bad(e, "the journal's extent tree is corrupt");
                for (unsigned i = 0; i < entries; i++) {
                        const unsigned char *x = n + 12 + 12 * i;
                        uint32_t first = le32(x);

                        if (depth == 0) {
                                uint32_t len = le16(x + 4);

                                if (len > 32768) /* an unwritten extent: not log data */
                                        len -= 32768;
                                if (lblk >= first && lblk - first < len) {
                                        *out = ((uint64_t)le16(x + 6) << 32 | le32(x + 8)) + (lblk - first);
                                        return 0;
                                }
                        } else if (first <= lblk) {
                                child = (uint64_t)le16(x + 8) << 32 | le32(x + 4);
                                found = true;
                        }
                }
                if (!found)
                        return bad(e, "journal block %u is not mapped", lblk);
                r = read_node(e, child);
                if (r < 0)
                        return r;
                n = e->node;
                n_size = e->bs;
                want = (int)depth - 1;
        }
        return bad(e, "the journal's extent tree is too deep");
}

/* The same through the old direct/indirect block map (ext3 journals). */
static int map_indirect(struct ext *e, uint32_t lblk, uint64_t *out)
{
        uint64_t per = e->bs / 4, l = lblk, nr;
        unsigned levels, slot;
        int r;

        if (l < 12) {
                levels = 0;
                slot = (unsigned)l;
        } else if ((l -= 12) < per) {
                levels = 1;
                slot = 12;
        } else if ((l -= per) < per * per) {
                levels = 2;
                slot = 13;
        } else if ((l -= per * per) < per * per * per) {
                levels = 3;
                slot = 14;
        } else { /* past what a block map reaches (1 KiB blocks: 16 Mi blocks) */
                return bad(e, "journal block %u is not mapped", lblk);
        }
        nr = le32(e->root + 4 * slot);
        for (unsigned i = levels; i > 0; i--) {
                uint64_t span = 1;

                for (unsigned j = 1; j < i; j++)
                        span *= per;
                r = read_node(e, nr);
                if (r < 0)
                        return r;
                nr = le32(e->node + 4 * (l / span));
                l %= span;
        }
        if (nr == 0)
                return bad(e, "journal block %u is not mapped", lblk);
        *out = nr;
        return 0;
}

static int read_jblock(struct ext *e, uint32_t lblk)
{
        uint64_t nr = 0;
        int r = e->extents ? map_extent(e, lblk, &nr) : map_indirect(e, lblk, &nr);

        return r < 0 ? r : read_block(e, nr, e->blk);
}

/* The journal inode's block map, from the inode table through its group's descriptor. */
static int load_inode(struct ext *e, const unsigned char *sb, uint32_t ino)
{
        uint32_t first_data = le32(sb + 0x14), bpg = le32(sb + 0x20), ipg = le32(sb + 0x28);
        uint32_t incompat = le32(sb + 0x60), rev = le32(sb + 0x4C);
        unsigned isize = rev >= 1 ? le16(sb + 0x58) : 128;
        unsigned dsize = incompat & EXT_INCOMPAT_64BIT ? le16(sb + 0xFE) : 32;
        unsigned char d[64], in[128];
        uint64_t group, groups, table, off;
        int r;

        if (ipg == 0 || bpg == 0 || first_data >= e->blocks || isize < 128 || isize > e->bs ||
            (isize & (isize - 1)) || dsize < 32 || dsize > 1024 || (dsize & (dsize - 1)) ||
            ino == 0 || ino > le32(sb))
                return bad(e, "the ext superblock is inconsistent");
        group = (ino - 1) / ipg;
        groups = (e->blocks - first_data + bpg - 1) / bpg;
        if (group >= groups)
                return bad(e, "journal inode %u is outside the file system", ino);
        /* Group 0's descriptors follow the superblock's block, with or without meta_bg. */
        off = ((uint64_t)first_data + 1) * e->bs + group * dsize;
        if (off / e->bs + 1 >= e->blocks)
                return bad(e, "the group descriptors are outside the file system");
        r = fsmark_dev_read(e->dev, off, d, dsize >= 64 ? 64 : 32);
        if (r < 0)
                return r;
        table = le32(d + 8);
        if (dsize >= 64)
                table |= (uint64_t)le32(d + 0x28) << 32;
        if (table == 0 || table >= e->blocks)
                return bad(e, "the inode table of group %llu is outside the file system",
                           (unsigned long long)group);
        r = fsmark_dev_read(e->dev, table * e->bs + (uint64_t)((ino - 1) % ipg) * isize, in, sizeof(in));
        if (r < 0)
                return r;
        if ((le16(in) & 0xF000) != 0x8000 || le32(in + 0x20) & EXT_INLINE_DATA_FL)
                return bad(e, "journal inode %u is not a regular file", ino);
        e->extents = le32(in + 0x20) & EXT_EXTENTS_FL;
        memcpy(e->root, in + 0x28, sizeof(e->root));
        return 0;
}

/* Bytes of one block tag, as the kernel's journal_tag_bytes(). */
static unsigned tag_bytes(uint32_t incompat)
{
        unsigned n = 12;

        if (incompat & JBD_INCOMPAT_CSUM_V3)
                return 16;
        if (incompat & JBD_INCOMPAT_CSUM_V2)
                n += 2;
        return incompat & JBD_INCOMPAT_64BIT ? n : n - 4;
}

/* Data blocks a descriptor block lists, as the kernel's count_tags(). */
static uint32_t count_tags(const unsigned char *b, uint32_t bs, uint32_t incompat)
{
        size_t size = bs, tb = tag_bytes(incompat), p = JBD_HEADER;
        uint32_t n = 0;

        if (incompat & (JBD_INCOMPAT_CSUM_V2 | JBD_INCOMPAT_CSUM_V3))
                size -= JBD_TAIL;
        while (p + tb <= size) {
                uint16_t flags = be16(b + p + 6); /* t_flags' low half in both tag formats */

                n++;
                p += tb;
                if (!(flags & JBD_FLAG_SAME_UUID))
                        p += 16;
                if (flags & JBD_FLAG_LAST_TAG)
                        break;
        }
        return n;
}

/*
 * Walk the log from s_start as recovery's PASS_SCAN does: descriptor blocks skip the blocks they
 * tag, revoke blocks are one block, a commit block with the expected sequence ends a transaction;
 * the first block that is not a journal header with the expected sequence ends the log. Returns
 * the last committed sequence. The walk never covers more blocks than the log has: a crafted ring
 * of descriptors would otherwise go round forever.
 */
static int walk_log(struct ext *e, uint32_t first, uint32_t maxlen, uint32_t start, uint32_t seq,
                    uint32_t incompat, uint32_t *out)
{
        uint64_t span = maxlen - first, walked = 0, blk = start, reads = 0;
        int r;

        for (;;) {
                uint32_t type, step = 1;

                /*
                 * Security: the boot reads these. maxlen is the disk's word, and a crafted extent tree
                 * can map a huge journal onto a few blocks; an honest log has far fewer headers.
                 */
                if (++reads > FSMARK_JOURNAL_READS_MAX)
                        return bad(e, "the journal's log has more than %d headers", FSMARK_JOURNAL_READS_MAX);
                r = read_jblock(e, (uint32_t)blk);
                if (r < 0)
                        return r;
                if (be32(e->blk) != JBD_MAGIC || be32(e->blk + 8) != seq)
                        break;
                type = be32(e->blk + 4);
                if (type == JBD_DESCRIPTOR)
                        step += count_tags(e->blk, e->bs, incompat);
                else if (type == JBD_COMMIT)
                        seq++;
                else if (type != JBD_REVOKE)
                        break;
                walked += step;
                if (walked > span)
                        return bad(e, "the journal's log runs round the whole journal");
                blk += step;
                if (blk >= maxlen)
                        blk -= span;
                if (blk >= maxlen) /* a descriptor tagging more blocks than the journal has */
                        return bad(e, "a journal descriptor block lists more blocks than the journal has");
        }
        *out = seq - 1;
        return 0;
}

static int read_journal(struct ext *e, const unsigned char *sb, struct fsmark *m)
{
        uint32_t type, jbs, maxlen, first, seq, start, incompat;
        int r;

        r = load_inode(e, sb, le32(sb + 0xE0));
        if (r < 0)
                return r;
        r = read_jblock(e, 0);
        if (r < 0)
                return r;
        type = be32(e->blk + 4);
        if (be32(e->blk) != JBD_MAGIC || (type != JBD_SB_V1 && type != JBD_SB_V2))
                return bad(e, "the journal superblock is not one");
        jbs = be32(e->blk + 0x0C);
        maxlen = be32(e->blk + 0x10);
        first = be32(e->blk + 0x14);
        seq = be32(e->blk + 0x18);
        start = be32(e->blk + 0x1C);
        incompat = type == JBD_SB_V2 ? be32(e->blk + 0x28) : 0;
        if (jbs != e->bs || first == 0 || first >= maxlen || (start != 0 && (start < first || start >= maxlen)))
                return bad(e, "the journal superblock is inconsistent (block size %u, blocks %u, first %u, start %u)",
                           jbs, maxlen, first, start);
        m->has_journal = true;
        if (start == 0) { /* a clean log: s_sequence is the next transaction's */
                m->journal_seq = seq - 1;
                return 0;
        }
        return walk_log(e, first, maxlen, start, seq, incompat, &m->journal_seq);
}

int fsmark_ext_read(struct fsmark_dev *d, struct fsmark *out, char *why, size_t size)
{
        unsigned char sb[1024];
        struct ext e = { .dev = d, .why = why, .size = size };
        struct fsmark m = *out;
        uint32_t log_bs, compat, incompat;
        int r;

        r = fsmark_dev_read(d, EXT_SB_OFF, sb, sizeof(sb));
        if (r < 0)
                return r;
        log_bs = le32(sb + 0x18);
        if (le16(sb + 0x38) != EXT_MAGIC || log_bs > 6)
                return bad(&e, "no ext superblock at 1024");
        e.bs = 1024u << log_bs;
        compat = le32(sb + 0x5C);
        incompat = le32(sb + 0x60);
        e.blocks = le32(sb + 4);
        if (incompat & EXT_INCOMPAT_64BIT)
                e.blocks |= (uint64_t)le32(sb + 0x150) << 32;
        m.known = true;
        m.mnt_count = le16(sb + 0x34);
        /* 40-bit times (s_mtime_hi, s_wtime_hi): the high byte XORed into the low 32 bits. */
        m.mtime = le32(sb + 0x2C) ^ sb[0x275];
        m.wtime = le32(sb + 0x30) ^ sb[0x274];
        m.kbytes_written = le64(sb + 0x178);
        m.has_journal = false;
        m.journal_seq = 0;
        m.generation = 0;
        /* An external journal (s_journal_inum 0) is another device: its log is not read. */
        if ((compat & EXT_COMPAT_HAS_JOURNAL) && le32(sb + 0xE0) != 0) {
                e.blk = malloc(e.bs);
                e.node = malloc(e.bs);
                r = e.blk && e.node ? read_journal(&e, sb, &m) : -ENOMEM;
                free(e.blk);
                free(e.node);
                if (r < 0)
                        return r;
        }
        *out = m;
        return 0;
}
