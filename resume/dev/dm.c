/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device-mapper mappings as sysfs shows them, and their live tables as the kernel reports them. */
#include "dev/dm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>

#include "args.h"
#include "base/util.h"

int dm_mapper_path(const char *name, char *buf, size_t size)
{
        int n;

        /* The name becomes a path: no '/' or "..", so it cannot point outside /dev/mapper. */
        if (!name || !args_name_valid(name))
                return -EINVAL;
        n = snprintf(buf, size, "/dev/mapper/%s", name);
        if (n < 0)
                return -EINVAL;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static int read_attr(const char *root, const char *dev, const char *attr, char *buf, size_t size)
{
        char rel[PATH_MAX];
        int n = snprintf(rel, sizeof(rel), "/sys/block/%s/%s", dev, attr);

        if (n < 0 || (size_t)n >= sizeof(rel))
                return -ENAMETOOLONG;
        n = util_read_text_at(root, rel, buf, size);
        if (n >= 0)
                util_rstrip(buf);
        return n;
}

static int parse_devnum(const char *s, unsigned *maj, unsigned *min)
{
        unsigned a, b;
        char end;

        if (sscanf(s, "%u:%u%c", &a, &b, &end) != 2)
                return -EINVAL;
        *maj = a;
        *min = b;
        return 0;
}

int dm_devnum(const char *root, const char *name, unsigned *maj, unsigned *min, char *kname,
              size_t ksize)
{
        char path[PATH_MAX], buf[ARGS_NAME_MAX + 2];
        struct dirent *de;
        DIR *d;
        int r = util_path(path, sizeof(path), root, "/sys/block");

        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return -errno;
        r = -ENOENT;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || strlen(de->d_name) >= DM_KNAME_MAX)
                        continue;
                if (read_attr(root, de->d_name, "dm/name", buf, sizeof(buf)) < 0 ||
                    strcmp(buf, name) != 0)
                        continue;
                r = read_attr(root, de->d_name, "dev", buf, sizeof(buf));
                if (r >= 0)
                        r = parse_devnum(buf, maj, min);
                if (r == 0 && kname)
                        r = util_copy(kname, ksize, de->d_name);
                break;
        }
        closedir(d);
        return r;
}

#define TABLE_FIRST 16384 /* the first buffer tried; grown up to DM_TABLE_MAX */

/* The kernel's huge_encode_dev()/huge_decode_dev(), which struct dm_ioctl's dev uses. */
static uint64_t dev_encode(unsigned maj, unsigned min)
{
        return (min & 0xffu) | ((uint64_t)maj << 8) | ((uint64_t)(min & ~0xffu) << 12);
}

static void dev_decode(uint64_t dev, unsigned *maj, unsigned *min)
{
        *maj = (unsigned)((dev & 0xfff00u) >> 8);
        *min = (unsigned)((dev & 0xffu) | ((dev >> 12) & 0xfff00u));
}

static void wipe_free(char *buf, size_t size)
{
        if (buf)
                explicit_bzero(buf, size);
        free(buf);
}

/* The targets of a DM_TABLE_STATUS answer, checked against the buffer's bounds. */
static int unmarshal(char *buf, size_t size, struct dm_table *t)
{
        struct dm_ioctl *io = (struct dm_ioctl *)buf;
        size_t start = io->data_start, end = io->data_size < size ? io->data_size : size, pos = 0;

        if (start < sizeof(*io) || start > end)
                return -EBADMSG;
        if (io->target_count > DM_TARGETS_MAX)
                return -E2BIG;
        end -= start;
        for (size_t i = 0; i < io->target_count; i++) {
                struct dm_target_spec spec;
                char *params;
                size_t len;

                if (pos > end || end - pos < sizeof(spec))
                        return -EBADMSG;
                memcpy(&spec, buf + start + pos, sizeof(spec));
                params = buf + start + pos + sizeof(spec);
                len = strnlen(params, end - pos - sizeof(spec));
                if (len == end - pos - sizeof(spec))
                        return -EBADMSG; /* not terminated inside the buffer */
                t->t[i].start = spec.sector_start;
                t->t[i].length = spec.length;
                memcpy(t->t[i].type, spec.target_type, sizeof(t->t[i].type) - 1);
                t->t[i].type[sizeof(t->t[i].type) - 1] = '\0';
                t->t[i].params = params;
                if (i + 1 < io->target_count && spec.next <= pos)
                        return -EBADMSG; /* each next lies further on */
                pos = spec.next;
        }
        t->n = io->target_count;
        dev_decode(io->dev, &t->maj, &t->min);
        return 0;
}

static int table_status(int fd, const char *name, unsigned maj, unsigned min, size_t size,
                        struct dm_table *out)
{
        char *buf = calloc(1, size);
        struct dm_ioctl *io = (struct dm_ioctl *)buf;
        struct dm_table t = { .buf = buf, .size = size };
        int r;

        if (!buf)
                return -ENOMEM;
        io->version[0] = DM_VERSION_MAJOR;
        io->data_size = (uint32_t)size;
        io->data_start = sizeof(*io);
        /* Security: the table may hold the key in hex; the kernel wipes its copy of the buffer too. */
        io->flags = DM_STATUS_TABLE_FLAG | DM_SECURE_DATA_FLAG;
        if (name)
                memcpy(io->name, name, strlen(name) + 1);
        else
                io->dev = dev_encode(maj, min);
        if (ioctl(fd, DM_TABLE_STATUS, io) < 0)
                r = -errno;
        else if (io->flags & DM_BUFFER_FULL_FLAG)
                r = -ENOBUFS;
        else
                r = unmarshal(buf, size, &t);
        if (r < 0) {
                wipe_free(buf, size);
                return r;
        }
        *out = t;
        return 0;
}

int dm_table_read(const char *root, const char *name, unsigned maj, unsigned min, struct dm_table *out)
{
        char path[PATH_MAX];
        int fd, r;

        if (!out || (name && strlen(name) >= DM_NAME_LEN))
                return -EINVAL;
        r = util_path(path, sizeof(path), root, "/dev/mapper/control");
        if (r < 0)
                return r;
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (size_t size = TABLE_FIRST;; size *= 4) {
                if (size > DM_TABLE_MAX)
                        size = DM_TABLE_MAX;
                r = table_status(fd, name, maj, min, size, out);
                if (r != -ENOBUFS)
                        break;
                if (size == DM_TABLE_MAX) {
                        r = -E2BIG;
                        break;
                }
        }
        close(fd);
        return r;
}

void dm_table_free(struct dm_table *t)
{
        if (!t)
                return;
        wipe_free(t->buf, t->size);
        memset(t, 0, sizeof(*t));
}

/* The next space-separated field of *p: its start and length; 0 at the end. */
static size_t field(const char **p, const char **start)
{
        const char *s = *p;
        size_t n;

        while (*s == ' ')
                s++;
        n = strcspn(s, " ");
        *start = s;
        *p = s + n;
        return n;
}

/* A decimal number of n characters, nothing else, that fits in max. */
static int number(const char *s, size_t n, uint64_t max, uint64_t *out)
{
        uint64_t v = 0;

        if (n == 0 || n > 20)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                unsigned d = (unsigned char)s[i] - '0';

                if (d > 9 || v > (UINT64_MAX - d) / 10)
                        return -EBADMSG;
                v = v * 10 + d;
        }
        if (v > max)
                return -E2BIG;
        *out = v;
        return 0;
}

static int number_field(const char **p, uint64_t max, uint64_t *out)
{
        const char *s;
        size_t n = field(p, &s);

        return number(s, n, max, out);
}

/* "<major>:<minor>", as the kernel prints a device. */
static int devnum_field(const char **p, unsigned *maj, unsigned *min)
{
        const char *s, *colon;
        size_t n = field(p, &s);
        uint64_t a, b;

        colon = memchr(s, ':', n);
        if (!colon || number(s, (size_t)(colon - s), 0xfff, &a) < 0 ||
            number(colon + 1, n - (size_t)(colon + 1 - s), 0xfffff, &b) < 0)
                return -EBADMSG;
        *maj = (unsigned)a;
        *min = (unsigned)b;
        return 0;
}

static int copy_field(char *dst, size_t size, const char *s, size_t n)
{
        if (n == 0)
                return -EBADMSG;
        if (n >= size)
                return -E2BIG;
        memcpy(dst, s, n);
        dst[n] = '\0';
        return 0;
}

/*
 * The key field: "-" (none), ":<size>:<type>:<desc>" (in the kernel keyring), or the key in hex.
 * Only the size is taken; the characters are neither copied nor kept.
 */
static int key_field(const char *s, size_t n, struct dm_crypt *c)
{
        uint64_t v;

        if (n == 1 && s[0] == '-') {
                c->key_size = 0;
                return 0;
        }
        if (s[0] == ':') {
                const char *colon = memchr(s + 1, ':', n - 1);

                /* The rest is "<type>:<desc>", both non-empty. */
                if (!colon || number(s + 1, (size_t)(colon - s - 1), DM_KEY_MAX, &v) < 0 || v == 0)
                        return -EBADMSG;
                n -= (size_t)(colon + 1 - s);
                s = colon + 1;
                if (n < 3 || s[0] == ':' || !memchr(s, ':', n) || s[n - 1] == ':')
                        return -EBADMSG;
                c->key_size = (size_t)v;
                c->key_in_keyring = true;
                return 0;
        }
        if (n % 2 || n / 2 > DM_KEY_MAX)
                return n % 2 ? -EBADMSG : -E2BIG;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
                      (s[i] >= 'A' && s[i] <= 'F')))
                        return -EBADMSG;
        c->key_size = n / 2;
        return 0;
}

static bool is(const char *s, size_t n, const char *word)
{
        return n == strlen(word) && memcmp(s, word, n) == 0;
}

static bool prefixed(const char *s, size_t n, const char *prefix)
{
        size_t k = strlen(prefix);

        return n > k && memcmp(s, prefix, k) == 0;
}

static int crypt_option(const char *s, size_t n, struct dm_crypt *c)
{
        uint64_t v;

        if (is(s, n, "allow_discards"))
                c->allow_discards = true;
        else if (is(s, n, "iv_large_sectors"))
                c->iv_large_sectors = true;
        else if (is(s, n, "same_cpu_crypt") || is(s, n, "submit_from_crypt_cpus") ||
                 is(s, n, "no_read_workqueue") || is(s, n, "no_write_workqueue"))
                ; /* how the work is scheduled: nothing about what is on the disk */
        else if (prefixed(s, n, "sector_size:")) {
                if (number(s + 12, n - 12, 65536, &v) < 0 || v < 512 || (v & (v - 1)))
                        return -EBADMSG;
                c->sector_size = (uint32_t)v;
        } else if (prefixed(s, n, "integrity:")) {
                const char *t = s + 10, *colon = memchr(t, ':', n - 10);

                if (!colon || number(t, (size_t)(colon - t), 1024, &v) < 0 || v == 0)
                        return -EBADMSG;
                c->tag_size = (uint32_t)v;
                return copy_field(c->integrity, sizeof(c->integrity), colon + 1, n - (size_t)(colon + 1 - s));
        } else
                return -EBADMSG; /* unknown: it may change what is on the disk */
        return 0;
}

static int crypt_parse(const char *p, struct dm_crypt *c)
{
        const char *s;
        uint64_t v, nopts;
        size_t n;
        int r;

        n = field(&p, &s);
        r = copy_field(c->cipher, sizeof(c->cipher), s, n);
        if (r < 0)
                return r;
        n = field(&p, &s);
        if (n == 0)
                return -EBADMSG;
        r = key_field(s, n, c);
        if (r == 0)
                r = number_field(&p, UINT64_MAX, &c->iv_offset);
        if (r == 0)
                r = devnum_field(&p, &c->maj, &c->min);
        if (r == 0)
                r = number_field(&p, UINT64_MAX, &c->offset);
        if (r < 0)
                return r;
        c->sector_size = 512;
        if (field(&p, &s) == 0)
                return 0;
        p = s;
        r = number_field(&p, DM_OPTS_MAX, &nopts);
        for (v = 0; r == 0 && v < nopts; v++) {
                n = field(&p, &s);
                r = n ? crypt_option(s, n, c) : -EBADMSG;
        }
        if (r == 0 && field(&p, &s) != 0)
                r = -EBADMSG; /* more than #opt said */
        return r;
}

int dm_crypt_parse(char *params, struct dm_crypt *out)
{
        struct dm_crypt c = { 0 };
        size_t len;
        int r;

        if (!params || !out)
                return -EINVAL;
        len = strnlen(params, DM_TABLE_MAX);
        r = len == DM_TABLE_MAX ? -E2BIG : crypt_parse(params, &c);
        /* Security: params may hold the volume key in hex; nothing of it outlives this call. */
        explicit_bzero(params, len);
        if (r == 0)
                *out = c;
        explicit_bzero(&c, sizeof(c));
        return r;
}

int dm_integrity_parse(const char *p, struct dm_integrity *out)
{
        struct dm_integrity g = { .block_size = 512 };
        const char *s;
        uint64_t v, nopts;
        size_t n;
        int r;

        if (!p || !out)
                return -EINVAL;
        if (strnlen(p, DM_TABLE_MAX) == DM_TABLE_MAX)
                return -E2BIG;
        r = devnum_field(&p, &g.maj, &g.min);
        if (r == 0)
                r = number_field(&p, UINT64_MAX, &g.offset);
        if (r == 0 && (r = number_field(&p, 1024, &v)) == 0)
                g.tag_size = (uint32_t)v;
        if (r < 0)
                return r;
        n = field(&p, &s);
        if (n != 1)
                return -EBADMSG;
        g.mode = s[0];
        r = number_field(&p, DM_OPTS_MAX, &nopts);
        for (v = 0; r == 0 && v < nopts; v++) {
                n = field(&p, &s);
                if (n == 0)
                        r = -EBADMSG;
                else if (prefixed(s, n, "block_size:")) {
                        uint64_t b = 0;

                        r = number(s + 11, n - 11, 65536, &b);
                        g.block_size = (uint32_t)b;
                } else if (prefixed(s, n, "meta_device:"))
                        g.meta_device = true;
                else if (prefixed(s, n, "internal_hash:"))
                        g.internal_hash = true;
        }
        if (r == 0 && field(&p, &s) != 0)
                r = -EBADMSG;
        if (r == 0)
                *out = g;
        return r;
}
