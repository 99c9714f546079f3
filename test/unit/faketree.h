/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A throw-away fixture root for the resume-side unit tests: files, links, reads, removal. */
#pragma once
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char ft_root[PATH_MAX];

static inline void ft_abs(char *buf, size_t size, const char *rel)
{
        int n = snprintf(buf, size, "%s%s", ft_root, rel);

        assert_true(n > 0 && (size_t)n < size);
}

/* Create ROOT/rel's parent directories (rel starts with '/'). */
static inline void ft_parents(const char *rel)
{
        char path[PATH_MAX];

        ft_abs(path, sizeof(path), rel);
        for (char *p = path + strlen(ft_root) + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                mkdir(path, 0755);
                *p = '/';
        }
}

static inline void ft_mkdir(const char *rel)
{
        char path[PATH_MAX];

        ft_parents(rel);
        ft_abs(path, sizeof(path), rel);
        mkdir(path, 0755);
}

static inline void ft_put(const char *rel, const void *data, size_t len)
{
        char path[PATH_MAX];
        int fd;

        ft_parents(rel);
        ft_abs(path, sizeof(path), rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t)len);
        close(fd);
}

static inline void ft_puts(const char *rel, const char *text)
{
        ft_put(rel, text, strlen(text));
}

static inline void ft_symlink(const char *target, const char *rel)
{
        char path[PATH_MAX];

        ft_parents(rel);
        ft_abs(path, sizeof(path), rel);
        assert_int_equal(symlink(target, path), 0);
}

/* Contents of ROOT/rel as a string ("" if missing). */
static inline const char *ft_read(const char *rel)
{
        static char buf[8192];
        char path[PATH_MAX];
        ssize_t n;
        int fd;

        ft_abs(path, sizeof(path), rel);
        buf[0] = '\0';
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return buf;
        n = read(fd, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
        return buf;
}

static inline int ft_exists(const char *rel)
{
        char path[PATH_MAX];
        struct stat st;

        ft_abs(path, sizeof(path), rel);
        return lstat(path, &st) == 0;
}

static inline int ft_setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        (void)state;
        snprintf(ft_root, sizeof(ft_root), "%s/thaw-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        return mkdtemp(ft_root) ? 0 : -1;
}

static inline int ft_teardown(void **state)
{
        char cmd[PATH_MAX + 16];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ft_root);
        return system(cmd) == 0 ? 0 : -1;
}
