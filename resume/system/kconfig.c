/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel configuration: the options thaw wants (kernel/thaw.config) and the running kernel's. */
#include "system/kconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/util.h"

/*
 * kernel/thaw.config is the one source of truth: the build embeds the file itself (the Makefile
 * makes this object depend on it), so the doctor checks exactly what the fragment says.
 */
__asm__(".pushsection .rodata\n"
        ".globl kconfig_fragment_text\n"
        ".hidden kconfig_fragment_text\n"
        "kconfig_fragment_text:\n"
        ".incbin \"kernel/thaw.config\"\n"
        ".byte 0\n"
        ".popsection\n");
extern const char kconfig_fragment_text[] __attribute__((visibility("hidden")));

const char *kconfig_thaw_fragment(void)
{
        return kconfig_fragment_text;
}

/* Copy the line at p (without its newline) into buf, truncated; returns the next line or NULL. */
static const char *next_line(const char *p, char *buf, size_t size)
{
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);

        if (n >= size)
                n = size - 1;
        memcpy(buf, p, n);
        buf[n] = '\0';
        return nl ? nl + 1 : NULL;
}

static int parse_option(const char *line, struct kconfig_want *w)
{
        const char *eq = strchr(line, '=');
        size_t n = eq ? (size_t)(eq - line) : 0;

        if (!eq || n <= strlen("CONFIG_") || n >= sizeof(w->name) ||
            (strcmp(eq + 1, "y") && strcmp(eq + 1, "m")))
                return -EINVAL;
        for (size_t i = strlen("CONFIG_"); i < n; i++)
                if (!((line[i] >= 'A' && line[i] <= 'Z') || (line[i] >= '0' && line[i] <= '9') ||
                      line[i] == '_'))
                        return -EINVAL;
        memcpy(w->name, line, n);
        w->name[n] = '\0';
        w->value = eq[1];
        return 0;
}

/* A comment line above an option: the first plain one is the why, "@…" ones are annotations. */
static int parse_comment(const char *text, struct kconfig_want *w)
{
        if (strcmp(text, "@optional") == 0) {
                w->optional = true;
                return 0;
        }
        if (strncmp(text, "@since ", 7) == 0)
                return sscanf(text + 7, "%u.%u", &w->since_major, &w->since_minor) == 2 ? 0 : -EINVAL;
        if (text[0] == '@')
                return -EINVAL;
        /* A why longer than KCONFIG_WHY_MAX is an error in the fragment, found by its unit test. */
        if (!w->why[0] && util_copy(w->why, sizeof(w->why), text) < 0)
                return -EINVAL;
        return 0;
}

int kconfig_parse_fragment(const char *text, struct kconfig_want *out, size_t max)
{
        struct kconfig_want cur;
        char line[256];
        size_t count = 0;

        memset(&cur, 0, sizeof(cur));
        for (const char *p = text; p && *p;) {
                p = next_line(p, line, sizeof(line));
                util_rstrip(line);
                if (line[0] == '\0') {
                        memset(&cur, 0, sizeof(cur)); /* a blank line ends a comment block */
                } else if (line[0] == '#') {
                        const char *c = line + 1 + (line[1] == ' ');

                        if (parse_comment(c, &cur) < 0)
                                return -EINVAL;
                } else if (strncmp(line, "CONFIG_", 7) == 0) {
                        if (parse_option(line, &cur) < 0)
                                return -EINVAL;
                        if (count == max)
                                return -E2BIG;
                        out[count++] = cur;
                        memset(&cur, 0, sizeof(cur));
                } else {
                        return -EINVAL;
                }
        }
        return (int)count;
}

/* ROOT/proc/config.gz, decompressed; at most KCONFIG_TEXT_MAX bytes. */
static int load_gz(const char *path, char **text)
{
        char *buf = NULL;
        size_t len = 0;
        gzFile gz;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        gz = gzdopen(fd, "rb");
        if (!gz) {
                close(fd);
                return -ENOMEM;
        }
        buf = malloc(KCONFIG_TEXT_MAX + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out;
        }
        for (;;) {
                int got = gzread(gz, buf + len, (unsigned)(KCONFIG_TEXT_MAX + 1 - len));

                if (got < 0) {
                        r = -EIO;
                        goto out;
                }
                if (got == 0)
                        break;
                len += (size_t)got;
                if (len > KCONFIG_TEXT_MAX) {
                        r = -EFBIG;
                        goto out;
                }
        }
        buf[len] = '\0';
        *text = buf;
        buf = NULL;
out:
        free(buf);
        gzclose(gz); /* closes fd */
        return r;
}

static int load_plain(const char *path, char **text)
{
        char *buf = malloc(KCONFIG_TEXT_MAX + 1);
        int r;

        if (!buf)
                return -ENOMEM;
        r = util_read_text(path, buf, KCONFIG_TEXT_MAX + 1);
        if (r < 0) {
                free(buf);
                return r;
        }
        *text = buf;
        return 0;
}

int kconfig_load(const char *root, const char *release, char **text, char *src, size_t srcsize)
{
        char path[4096], rel[256];
        int r, n;

        r = util_path(path, sizeof(path), root, "/proc/config.gz");
        if (r < 0)
                return r;
        if (util_exists(path)) {
                r = util_copy(src, srcsize, "/proc/config.gz");
                return r < 0 ? r : load_gz(path, text);
        }
        n = snprintf(rel, sizeof(rel), "/boot/config-%s", release);
        if (n < 0 || (size_t)n >= sizeof(rel) || strchr(release, '/'))
                return -EINVAL;
        r = util_path(path, sizeof(path), root, rel);
        if (r < 0)
                return r;
        r = util_copy(src, srcsize, rel);
        return r < 0 ? r : load_plain(path, text);
}

char kconfig_value(const char *config, const char *name)
{
        size_t n = strlen(name);

        for (const char *p = config; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                if (strncmp(p, name, n) != 0 || p[n] != '=')
                        continue;
                if ((p[n + 1] == 'y' || p[n + 1] == 'm') && (p[n + 2] == '\n' || p[n + 2] == '\0'))
                        return p[n + 1];
                return 'v';
        }
        return 'n'; /* absent, or "# CONFIG_X is not set" */
}

int kconfig_parse_release(const char *release, unsigned *major, unsigned *minor)
{
        unsigned a, b;
        char c;

        /* "%u.%u%c" also accepts "6.1" alone; the optional char stops at the rest ("-57-amd64"). */
        if (sscanf(release, "%u.%u%c", &a, &b, &c) < 2 || release[0] < '0' || release[0] > '9')
                return -EINVAL;
        *major = a;
        *minor = b;
        return 0;
}

int kconfig_applies(const struct kconfig_want *want, unsigned major, unsigned minor)
{
        if (major != want->since_major)
                return major > want->since_major;
        return minor >= want->since_minor;
}
