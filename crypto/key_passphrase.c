/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key provider "passphrase[:console]": a recovery passphrase typed at the console, the chain's last resort. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "base/clock.h"
#include "key_provider.h"
#include "prompt.h"
#include "base/util.h"

#define CONSOLE "/dev/console"
#define CONSOLE_ACTIVE "/sys/class/tty/console/active"
#define TTY "/dev/tty"
#define ENROLL_WAIT_MS 120000 /* a person choosing a passphrase at enrollment */

/* "": only where a person may sit at a screen; "console": on the console whatever it is. */
static int passphrase_check(const char *arg)
{
        return arg[0] == '\0' || strcmp(arg, "console") == 0 ? 0 : -EINVAL;
}

/*
 * 1 if the kernel's active consoles include a virtual terminal (tty0, tty1, …: a screen and a
 * keyboard), 0 if they are serial or hypervisor consoles only (ttyS0, hvc0: a headless VM, where
 * a prompt would wait for nobody), -errno if the list cannot be read.
 */
static int console_has_vt(const char *root)
{
        char text[256], *save = NULL;
        int r;

        r = util_read_text_at(root, CONSOLE_ACTIVE, text, sizeof(text));
        if (r < 0)
                return r;
        for (char *t = strtok_r(text, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
                if (strncmp(t, "tty", 3) == 0 && t[3] >= '0' && t[3] <= '9')
                        return 1;
        }
        return 0;
}

static int open_terminal(const char *root, const char *dev, int *fd)
{
        char path[4096];
        int r;

        r = util_path(path, sizeof(path), root, dev);
        if (r < 0)
                return r;
        *fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
        return *fd < 0 ? -errno : 0;
}

static int passphrase_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        char prompt[256];
        int64_t left = (ctx->deadline_ms - clock_now_ms() + 999) / 1000;
        int fd, r;

        /* Liveness: a headless VM never waits for a passphrase nobody can type, unless told to. */
        if (arg[0] == '\0') {
                r = console_has_vt(ctx->root);
                if (r <= 0) {
                        if (r == 0 && ctx->detail && ctx->detail_size)
                                snprintf(ctx->detail, ctx->detail_size, "no screen and keyboard: the console "
                                         "is serial only (passphrase:console prompts there)");
                        return r == 0 ? -ENOTTY : r;
                }
        }
        r = open_terminal(ctx->root, CONSOLE, &fd);
        if (r < 0)
                return r;
        snprintf(prompt, sizeof(prompt), "Passphrase for %s (thaw, %lld s): ",
                 ctx->device ? ctx->device : "the hibernation swap", (long long)(left > 0 ? left : 0));
        r = prompt_passphrase(fd, prompt, ctx->deadline_ms, out);
        close(fd);
        return r;
}

/* A new recovery passphrase, typed twice on the administrator's terminal. */
static int passphrase_enroll(const char *arg, const struct keysrc_ctx *ctx, struct secret **key,
                             struct json_object *token)
{
        int64_t deadline = clock_now_ms() + ENROLL_WAIT_MS;
        struct secret *a = NULL, *b = NULL;
        int fd, r;

        (void)arg;
        (void)token;
        r = open_terminal(ctx->root, TTY, &fd);
        if (r < 0) {
                if (ctx->detail && ctx->detail_size)
                        snprintf(ctx->detail, ctx->detail_size, "a new passphrase is typed on a terminal, "
                                 "and there is none");
                return r == -ENXIO ? -ENOTTY : r;
        }
        r = prompt_passphrase(fd, "New recovery passphrase: ", deadline, &a);
        if (r == 0)
                r = prompt_passphrase(fd, "Repeat the passphrase: ", deadline, &b);
        close(fd);
        if (r == 0 && !secret_equal(a, b)) {
                r = -EKEYREJECTED;
                if (ctx->detail && ctx->detail_size)
                        snprintf(ctx->detail, ctx->detail_size, "the two passphrases differ");
        }
        secret_free(b);
        if (r < 0) {
                secret_free(a);
                return r;
        }
        *key = a;
        return 0;
}

const struct key_provider key_passphrase_provider = {
        .name = "passphrase",
        .check = passphrase_check,
        .fetch = passphrase_fetch,
        .enroll = passphrase_enroll,
};
