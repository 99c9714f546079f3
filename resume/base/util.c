/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small file helpers: root-prefixed paths, capped reads, sysfs-style writes. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int util_path(char *buf, size_t size, const char *root, const char *path)
{
        int n = snprintf(buf, size, "%s%s", root ? root : "", path);

        if (n < 0)
                return -EINVAL;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

int util_copy(char *dst, size_t size, const char *src)
{
        size_t n = strlen(src);

        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(dst, src, n + 1);
        return 0;
}

int util_read_text(const char *path, char *buf, size_t size)
{
        size_t len = 0;
        int fd, r = 0;

        if (size == 0 || size > UTIL_READ_MAX)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t got;

                if (len == size - 1) {
                        char probe;

                        /* Full: only an immediate EOF means the file fitted. */
                        got = read(fd, &probe, 1);
                        if (got > 0)
                                r = -EFBIG;
                        else if (got < 0 && errno == EINTR)
                                continue;
                        else if (got < 0)
                                r = -errno;
                        break;
                }
                got = read(fd, buf + len, size - 1 - len);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        r = -errno;
                        break;
                }
                if (got == 0)
                        break;
                len += (size_t)got;
        }
        close(fd);
        if (r < 0)
                return r;
        buf[len] = '\0';
        return (int)len;
}

int util_read_text_at(const char *root, const char *rel, char *buf, size_t size)
{
        char path[PATH_MAX];
        int r = util_path(path, sizeof(path), root, rel);

        return r < 0 ? r : util_read_text(path, buf, size);
}

int util_write_text(const char *path, const char *text)
{
        size_t len = strlen(text);
        ssize_t w;
        int fd, r = 0;

        /* O_TRUNC keeps regular fixture files exact; sysfs ignores it. */
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        /* sysfs takes an attribute in one write(); a short write is a failure. */
        w = write(fd, text, len);
        if (w < 0)
                r = -errno;
        else if ((size_t)w != len)
                r = -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int util_write_text_at(const char *root, const char *rel, const char *text)
{
        char path[PATH_MAX];
        int r = util_path(path, sizeof(path), root, rel);

        return r < 0 ? r : util_write_text(path, text);
}

static int mkdir_parents(const char *path)
{
        char dir[PATH_MAX];
        int r = util_copy(dir, sizeof(dir), path);

        if (r < 0)
                return r;
        for (char *p = dir + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        return 0;
}

int util_write_file(const char *path, const char *text, unsigned mode)
{
        char tmp[PATH_MAX];
        size_t len = strlen(text), done = 0;
        int fd, r;

        r = mkdir_parents(path);
        if (r < 0)
                return r;
        r = snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path);
        if (r < 0 || (size_t)r >= sizeof(tmp))
                return -ENAMETOOLONG;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = 0;
        while (done < len) {
                ssize_t w = write(fd, text + done, len - done);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        r = -errno;
                        break;
                }
                done += (size_t)w;
        }
        if (r == 0 && fchmod(fd, (mode_t)mode) < 0)
                r = -errno;
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        return r;
}

int util_sync_dir_of(const char *path)
{
        char dir[PATH_MAX], *slash;
        int fd, r = 0;

        if (util_copy(dir, sizeof(dir), path) < 0)
                return -ENAMETOOLONG;
        slash = strrchr(dir, '/');
        if (!slash)
                return -EINVAL;
        slash[slash == dir] = '\0';
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0)
                r = -errno;
        if (fd >= 0)
                close(fd);
        return r;
}

int util_exists(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0;
}

void util_rstrip(char *s)
{
        size_t n = strlen(s);

        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                s[--n] = '\0';
}

void util_unescape_octal(char *s)
{
        char *w = s;

        for (char *r = s; *r; r++) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
                    r[3] >= '0' && r[3] <= '7') {
                        *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
                        r += 3;
                } else {
                        *w++ = *r;
                }
        }
        *w = '\0';
}

int util_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        if (v > max)
                return -ERANGE;
        *out = v;
        return 0;
}

int util_parse_bytes(const char *s, uint64_t max, uint64_t *out)
{
        char digits[24];
        size_t n = strspn(s, "0123456789");
        unsigned shift = 0;
        uint64_t v;
        int r;

        if (n == 0 || n >= sizeof(digits) || (s[n] && s[n + 1]))
                return -EINVAL;
        switch (s[n]) {
        case '\0': break;
        case 'K': case 'k': shift = 10; break;
        case 'M': case 'm': shift = 20; break;
        case 'G': case 'g': shift = 30; break;
        case 'T': case 't': shift = 40; break;
        default: return -EINVAL;
        }
        memcpy(digits, s, n);
        digits[n] = '\0';
        r = util_parse_u64(digits, max >> shift, &v);
        if (r < 0)
                return r;
        *out = v << shift;
        return 0;
}

int util_why(char *why, size_t size, int r, const char *fmt, ...)
{
        va_list ap;

        if (why && size) {
                va_start(ap, fmt);
                vsnprintf(why, size, fmt, ap);
                va_end(ap);
        }
        return r;
}
