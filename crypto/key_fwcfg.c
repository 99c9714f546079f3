/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key provider "fwcfg:NAME": a QEMU/cloud fw_cfg blob exposed by the qemu_fw_cfg driver in sysfs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "key_provider.h"
#include "keysrc.h"

#define FWCFG_DIR "/sys/firmware/qemu_fw_cfg/by_name/"
#define FWCFG_NAME_MAX 55 /* fw_cfg file names are 56 bytes with the NUL: longer cannot exist */
#define FWCFG_POLL_MS 100 /* the driver may still be loading when we start */
#define FWCFG_GRACE_MS 1000 /* the driver fills by_name/ entry by entry while it probes */

static int name_char_ok(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
}

/* Slash-separated components of [A-Za-z0-9._-]; none empty, "." or "..", so the path stays in by_name/. */
static int fwcfg_check(const char *arg)
{
        size_t len = strlen(arg);
        const char *comp = arg;

        if (len == 0 || len > FWCFG_NAME_MAX)
                return -EINVAL;
        for (const char *p = arg;; p++) {
                if (*p == '/' || *p == '\0') {
                        size_t clen = (size_t)(p - comp);

                        if (clen == 0 || (clen == 1 && comp[0] == '.') ||
                            (clen == 2 && comp[0] == '.' && comp[1] == '.'))
                                return -EINVAL;
                        if (*p == '\0')
                                return 0;
                        comp = p + 1;
                } else if (!name_char_ok(*p)) {
                        return -EINVAL;
                }
        }
}

static int read_path(void *path, struct secret **out)
{
        return keysrc_read_path(path, out);
}

static int fwcfg_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        char path[4096], dir[4096];
        int n;

        n = snprintf(path, sizeof(path), "%s" FWCFG_DIR "%s/raw", ctx->root, arg);
        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        n = snprintf(dir, sizeof(dir), "%s" FWCFG_DIR, ctx->root);
        if (n < 0 || (size_t)n >= sizeof(dir))
                return -ENAMETOOLONG;
        return keysrc_wait_driver(dir, ctx->deadline_ms, FWCFG_GRACE_MS, FWCFG_POLL_MS, read_path, path, out);
}

const struct key_provider key_fwcfg_provider = {
        .name = "fwcfg",
        .check = fwcfg_check,
        .fetch = fwcfg_fetch,
};
