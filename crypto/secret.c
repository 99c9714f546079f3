/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key material in locked, non-dumpable memory that is wiped before it is unmapped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <unistd.h>
#include "secret.h"

static size_t page_round(size_t n)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);

        return (n + page - 1) / page * page;
}

static size_t secret_map_size(const struct secret *s)
{
        /* The struct header and the key share one mapping so both are locked and wiped together. */
        return page_round(sizeof(*s) + s->cap);
}

/* size bytes (a multiple of the page) of anonymous memory for a key: 0, or -errno. */
static int map_locked(size_t size, void **out)
{
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED)
                return -ENOMEM;
        /* Locked: the key must never reach swap, which is the very device it protects. */
        if (mlock(p, size) < 0) {
                int r = -errno;

                munmap(p, size);
                return r;
        }
        /* Not in core dumps, and not inherited by a forked child. */
        (void)madvise(p, size, MADV_DONTDUMP);
        (void)madvise(p, size, MADV_WIPEONFORK);
        *out = p;
        return 0;
}

static void unmap_wiped(void *p, size_t size)
{
        explicit_bzero(p, size);
        munlock(p, size);
        munmap(p, size);
}

/* A locked mapping of cap bytes, cap up to max: keys stay small, scratch input may be larger. */
static int secret_new_max(size_t cap, size_t max, struct secret **out)
{
        struct secret *s;
        size_t size;
        int r;

        if (!out || cap == 0 || cap > max)
                return -EINVAL;
        size = page_round(sizeof(*s) + cap);
        r = map_locked(size, (void **)&s);
        if (r < 0)
                return r;
        s->len = 0;
        s->cap = cap;
        s->data = (uint8_t *)(s + 1);
        *out = s;
        return 0;
}

int secret_new(size_t cap, struct secret **out)
{
        return secret_new_max(cap, SECRET_MAX, out);
}

int secret_new_scratch(size_t cap, struct secret **out)
{
        return secret_new_max(cap, SECRET_SCRATCH_MAX, out);
}

static int fill_random(uint8_t *buf, size_t len)
{
        size_t done = 0;

        while (done < len) {
                ssize_t n = getrandom(buf + done, len - done, 0);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                done += (size_t)n;
        }
        return 0;
}

int secret_random(size_t len, struct secret **out)
{
        struct secret *s = NULL;
        int r;

        if (!out)
                return -EINVAL;
        r = secret_new(len, &s);
        if (r < 0)
                return r;
        r = fill_random(s->data, len);
        if (r < 0) {
                secret_free(s);
                return r;
        }
        s->len = len;
        *out = s;
        return 0;
}

void secret_free(struct secret *s)
{
        size_t size;

        if (!s)
                return;
        size = secret_map_size(s);
        unmap_wiped(s, size);
}

void *secret_map(size_t len)
{
        void *p = NULL;

        return len && map_locked(page_round(len), &p) == 0 ? p : NULL;
}

void secret_unmap(void *p, size_t len)
{
        if (p)
                unmap_wiped(p, page_round(len));
}

void secret_freep(struct secret **s)
{
        if (!s)
                return;
        secret_free(*s);
        *s = NULL;
}

int secret_equal(const struct secret *a, const struct secret *b)
{
        volatile uint8_t diff = 0;

        if (!a || !b || a->len != b->len)
                return 0;
        /* Every byte is visited whatever the contents, so timing says nothing about where they differ. */
        for (size_t i = 0; i < a->len; i++)
                diff |= a->data[i] ^ b->data[i];
        return diff == 0;
}

/* Reads the rest of fd into s; -EMSGSIZE if more than s->cap bytes are there. */
static int read_all(int fd, struct secret *s)
{
        uint8_t probe = 0;
        ssize_t n;

        while (s->len < s->cap) {
                n = read(fd, s->data + s->len, s->cap - s->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                s->len += (size_t)n;
        }
        /* Full: one more byte means the source is too large. The probe byte is wiped at once. */
        do
                n = read(fd, &probe, 1);
        while (n < 0 && errno == EINTR);
        explicit_bzero(&probe, sizeof(probe));
        if (n < 0)
                return -errno;
        return n > 0 ? -EMSGSIZE : 0;
}

int secret_read_fd(int fd, struct secret **out)
{
        return secret_read_fd_cap(fd, SECRET_MAX, out);
}

int secret_read_fd_cap(int fd, size_t cap, struct secret **out)
{
        struct secret *s = NULL;
        int r;

        if (fd < 0 || !out)
                return -EINVAL;
        r = secret_new_max(cap, SECRET_SCRATCH_MAX, &s);
        if (r < 0)
                return r;
        r = read_all(fd, s);
        if (r == 0 && s->len == 0)
                r = -ENODATA;
        if (r < 0) {
                secret_free(s);
                return r;
        }
        *out = s;
        return 0;
}

int secret_protect_process(void)
{
        static const struct rlimit none = { 0, 0 };

        /* Not dumpable: no core file, and /proc/PID/mem, ptrace and the like need CAP_SYS_PTRACE. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return -errno;
        /* With fs.suid_dumpable=2 a non-dumpable process is still dumped (root-only): no cores at all. */
        if (setrlimit(RLIMIT_CORE, &none) < 0)
                return -errno;
        return 0;
}
