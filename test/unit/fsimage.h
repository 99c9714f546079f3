/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A file-system image made here (mkfs and friends, in a fixture root) and fsmark_read() on it. */
#pragma once
#include "faketree.h"
#include "dev/fsmark.h"

static char img[PATH_MAX];

__attribute__((format(printf, 1, 2))) static inline int run(const char *fmt, ...)
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

static inline void mkfs(const char *how)
{
        ft_abs(img, sizeof(img), "/fs.img");
        unlink(img);
        assert_int_equal(run("truncate -s 64M '%s' && %s '%s'", img, how, img), 0);
}

static inline struct fsmark read_ok(void)
{
        struct fsmark m;
        char why[FSMARK_WHY_MAX] = "";
        int r = fsmark_read(img, &m, why, sizeof(why));

        if (r != 0)
                fail_msg("fsmark_read %s: %d (%s)", img, r, why);
        return m;
}
