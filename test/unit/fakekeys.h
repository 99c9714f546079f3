/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A fixture root for the key sources: files written under it, and one source fetched with a deadline. */
#pragma once
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "keysrc.h"

static char root[256];

static inline void mkdirs(const char *rel)
{
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "%s/%s", root, rel);

        assert_true(n > 0 && (size_t)n < sizeof(path)); /* a path cut short would be another path */
        for (char *p = path + strlen(root) + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                mkdir(path, 0700);
                *p = '/';
        }
        mkdir(path, 0700);
}

/* Write len bytes to ROOT/rel, making parent directories. */
static inline void put(const char *rel, const void *buf, size_t len)
{
        char path[PATH_MAX], dir[PATH_MAX];
        int fd, n;

        snprintf(dir, sizeof(dir), "%s", rel);
        *strrchr(dir, '/') = '\0';
        mkdirs(dir);
        n = snprintf(path, sizeof(path), "%s/%s", root, rel);
        assert_true(n > 0 && (size_t)n < sizeof(path));
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, len), (ssize_t)len);
        close(fd);
}

static inline int fakekeys_setup(void **state)
{
        (void)state;
        snprintf(root, sizeof(root), "%s/thaw-keysrc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        return mkdtemp(root) ? 0 : -1;
}

static inline int fakekeys_teardown(void **state)
{
        char cmd[sizeof(root) + 16];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

static inline void fetch_one(const char *spec, int64_t wait_ms, int expect, struct secret **out)
{
        struct keysrc_ctx kc = { .root = root, .deadline_ms = clock_now_ms() + wait_ms };
        struct keysrc s;

        assert_int_equal(keysrc_parse(spec, &s), 0);
        assert_int_equal(keysrc_fetch(&s, &kc, out), expect);
}
