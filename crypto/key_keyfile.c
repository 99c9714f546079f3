/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key provider "keyfile:PATH": a key in a file, for administrators and tests. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "key_provider.h"

/* Absolute, printable, no ',' (the chain separator) and no ".." component (it stays under root). */
static int keyfile_check(const char *arg)
{
        if (arg[0] != '/')
                return -EINVAL;
        for (const char *p = arg; *p; p++) {
                if (*p <= ' ' || *p > '~' || *p == ',')
                        return -EINVAL;
                if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
                        return -EINVAL;
        }
        return 0;
}

/* A key file is there or not: nothing loads it later, so absence is reported at once. */
static int keyfile_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        char path[4096];
        int n;

        n = snprintf(path, sizeof(path), "%s%s", ctx->root, arg);
        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        return keysrc_read_path(path, out);
}

const struct key_provider key_keyfile_provider = {
        .name = "keyfile",
        .check = keyfile_check,
        .fetch = keyfile_fetch,
};
