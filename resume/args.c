/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw's settings from the kernel command line and /etc/thaw/thaw.conf (the command line wins). */
#include "args.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "imds_url.h"
#include "luks_policy.h"
#include "swapin/swapplan.h"
#include "base/util.h"

void args_init(struct thaw_args *a)
{
        memset(a, 0, sizeof(*a));
        snprintf(a->name, sizeof(a->name), "%s", ARGS_NAME_DEFAULT);
        a->timeout_s = ARGS_TIMEOUT_DEFAULT;
        snprintf(a->swapin, sizeof(a->swapin), "prefetch");
        snprintf(a->writer, sizeof(a->writer), "auto");
        a->image_size_kib = UINT64_MAX;
}

static int is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int args_next_token(const char **p, char *buf, size_t size)
{
        const char *s = *p;
        size_t n = 0;
        int quoted = 0, r = 1;

        while (is_space(*s))
                s++;
        if (!*s)
                return 0;
        for (; *s && (quoted || !is_space(*s)); s++) {
                if (*s == '"') {
                        quoted = !quoted;
                        continue;
                }
                if (n + 1 < size)
                        buf[n++] = *s;
                else
                        r = -E2BIG;
        }
        if (size > 0)
                buf[n] = '\0';
        *p = s;
        /* Everything after "--" belongs to init, as in the kernel. */
        if (r == 1 && strcmp(buf, "--") == 0)
                return 0;
        return r;
}

int args_name_valid(const char *name)
{
        size_t n = strlen(name);

        if (n == 0 || n >= ARGS_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return 0;
        /* The name becomes a path under /dev/mapper and a sysfs lookup key. */
        for (const char *c = name; *c; c++)
                if (*c == '/' || is_space(*c) || (unsigned char)*c < 0x20 || *c == 0x7f)
                        return 0;
        return 1;
}

/* Set one setting by its short name (as in thaw.conf). -EINVAL / -ERANGE on a bad value. */
static int set_value(struct thaw_args *a, const char *key, const char *value)
{
        uint64_t v;
        int r;

        if (strcmp(key, "device") == 0)
                return *value ? util_copy(a->device, sizeof(a->device), value) : -EINVAL;
        if (strcmp(key, "key") == 0)
                return *value ? util_copy(a->key, sizeof(a->key), value) : -EINVAL;
        if (strcmp(key, "name") == 0)
                return args_name_valid(value) ? util_copy(a->name, sizeof(a->name), value) : -EINVAL;
        if (strcmp(key, "timeout") == 0) {
                r = util_parse_u64(value, ARGS_TIMEOUT_MAX, &v);
                if (r == 0)
                        a->timeout_s = (unsigned)v;
                return r;
        }
        if (strcmp(key, "mismatch") == 0) {
                /* keep (the old default) powers off too: keeping an image and booting past it is unsafe. */
                if (strcmp(value, "poweroff") != 0 && strcmp(value, "keep") != 0 && strcmp(value, "discard") != 0)
                        return -EINVAL;
                a->mismatch_discard = value[0] == 'd';
                return 0;
        }
        if (strcmp(key, "verify") == 0) {
                if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
                        return -EINVAL;
                a->verify = value[0] == '1';
                return 0;
        }
        if (strcmp(key, "swapin") == 0) {
                if (strcmp(value, "prefetch") && strcmp(value, "swapoff") && strcmp(value, "off"))
                        return -EINVAL;
                return util_copy(a->swapin, sizeof(a->swapin), value);
        }
        if (strcmp(key, "writer") == 0) {
                if (strcmp(value, "auto") && strcmp(value, "kernel") && strcmp(value, "thaw"))
                        return -EINVAL;
                return util_copy(a->writer, sizeof(a->writer), value);
        }
        if (strcmp(key, "image_size") == 0) {
                if (*value && value[strlen(value) - 1] == '%')
                        return -EINVAL; /* a size, not a share of RAM */
                return swapplan_parse_size(value, 0, &a->image_size_kib);
        }
        if (strcmp(key, "allow-url") == 0)
                return imds_allow_check(value) == 0 ? util_copy(a->allow_url, sizeof(a->allow_url), value)
                                                    : -EINVAL;
        /* Strict: a pin that is not exactly sha256:<64 lowercase hex> pins nothing and is reported. */
        if (strcmp(key, "header") == 0)
                return luks_fp_valid(value) ? util_copy(a->header, sizeof(a->header), value) : -EINVAL;
        if (strcmp(key, "offset") == 0) {
                r = util_parse_u64(value, ARGS_OFFSET_MAX, &v);
                if (r == 0)
                        a->offset = v;
                return r;
        }
        return -ENOENT;
}

static void note_bad(char *bad, size_t badsize, int *count, const char *what)
{
        if (*count == 0 && bad && badsize > 0)
                snprintf(bad, badsize, "%s", what);
        (*count)++;
}

static const struct {
        const char *param;
        const char *key;
} cmdline_keys[] = {
        { "rd.thaw.device", "device" },
        { "rd.thaw.key", "key" },
        { "rd.thaw.name", "name" },
        { "rd.thaw.timeout", "timeout" },
        { "rd.thaw.mismatch", "mismatch" },
        { "rd.thaw.verify", "verify" },
        { "rd.thaw.header", "header" },
        { "resume_offset", "offset" },
};

static int is_ours(const char *tok)
{
        return strncmp(tok, "rd.thaw", 7) == 0 || strncmp(tok, "resume_offset", 13) == 0;
}

/* 0 if handled or unrelated, <0 if a thaw parameter had a bad value. */
static int apply_param(struct thaw_args *a, char *tok)
{
        char *eq = strchr(tok, '=');
        const char *value = eq ? eq + 1 : NULL;

        if (eq)
                *eq = '\0';
        /* Each of these makes the kernel ignore an image: thaw then unlocks nothing. */
        if (strcmp(tok, "noresume") == 0 || strcmp(tok, "nohibernate") == 0) {
                a->noresume = true;
                a->noresume_by = tok[2] == 'r' ? "noresume" : "nohibernate";
                return 0;
        }
        if (strcmp(tok, "hibernate") == 0 && value) {
                /* Prefixes, as the kernel's hibernate_setup(): noresume…, then no… but nocompress. */
                if (strncmp(value, "noresume", 8) == 0) {
                        a->noresume = true;
                        a->noresume_by = "hibernate=noresume";
                } else if (strncmp(value, "no", 2) == 0 && strncmp(value, "nocompress", 10) != 0) {
                        a->noresume = true;
                        a->noresume_by = "hibernate=no";
                }
                return 0;
        }
        if (strcmp(tok, "acpi_sleep") == 0 && value) {
                /* Comma-separated, as the kernel's acpi_sleep_setup(); the last s4_* wins. */
                for (const char *p = value; *p; p += strcspn(p, ","), p += *p == ',') {
                        size_t n = strcspn(p, ",");

                        if (n == 8 && strncmp(p, "s4_hwsig", 8) == 0)
                                a->s4_hwsig = true;
                        else if (n == 10 && strncmp(p, "s4_nohwsig", 10) == 0)
                                a->s4_hwsig = false;
                }
                return 0;
        }
        if (strcmp(tok, "rd.thaw") == 0) {
                if (!value || strcmp(value, "1") == 0)
                        a->disabled = false;
                else if (strcmp(value, "0") == 0)
                        a->disabled = true;
                else
                        return -EINVAL;
                return 0;
        }
        /*
         * Security: there is no rd.thaw.allow-url=. Widening where a key may come from over the
         * network takes root on the installed system (thaw.conf, inside the initramfs), not an edit
         * of the boot loader's command line; the command line can name link-local URLs only.
         */
        for (size_t i = 0; i < sizeof(cmdline_keys) / sizeof(cmdline_keys[0]); i++)
                if (strcmp(tok, cmdline_keys[i].param) == 0)
                        return value ? set_value(a, cmdline_keys[i].key, value) : -EINVAL;
        /* Unknown rd.thaw.* parameters are mistakes worth reporting. */
        return strncmp(tok, "rd.thaw.", 8) == 0 ? -ENOENT : 0;
}

int args_parse_cmdline(const char *cmdline, struct thaw_args *a, char *bad, size_t badsize)
{
        char tok[ARGS_TOKEN_MAX];
        int count = 0, r;

        if (bad && badsize > 0)
                bad[0] = '\0';
        while ((r = args_next_token(&cmdline, tok, sizeof(tok))) != 0) {
                char shown[ARGS_TOKEN_MAX];

                if (r < 0) {
                        if (is_ours(tok))
                                note_bad(bad, badsize, &count, tok);
                        continue;
                }
                memcpy(shown, tok, strlen(tok) + 1);
                if (apply_param(a, tok) < 0)
                        note_bad(bad, badsize, &count, shown);
        }
        return count;
}

static char *trim(char *s)
{
        while (is_space(*s))
                s++;
        util_rstrip(s);
        return s;
}

static int apply_conf_line(struct thaw_args *a, char *line)
{
        char *eq = strchr(line, '='), *key, *value;
        size_t n;

        if (!eq)
                return -EINVAL;
        *eq = '\0';
        key = trim(line);
        value = trim(eq + 1);
        n = strlen(value);
        if (n >= 2 && value[0] == '"' && value[n - 1] == '"') {
                value[n - 1] = '\0';
                value++;
        }
        return set_value(a, key, value);
}

int args_parse_conf(const char *text, struct thaw_args *a, char *bad, size_t badsize)
{
        int count = 0;

        if (bad && badsize > 0)
                bad[0] = '\0';
        while (*text) {
                const char *end = strchr(text, '\n');
                size_t len = end ? (size_t)(end - text) : strlen(text);
                char line[ARGS_TOKEN_MAX], shown[ARGS_TOKEN_MAX], *s;

                if (len >= sizeof(line)) {
                        snprintf(shown, sizeof(shown), "%.40s...", text);
                        note_bad(bad, badsize, &count, shown);
                } else {
                        memcpy(line, text, len);
                        line[len] = '\0';
                        s = trim(line);
                        memcpy(shown, s, strlen(s) + 1);
                        if (*s && *s != '#' && apply_conf_line(a, s) < 0)
                                note_bad(bad, badsize, &count, shown);
                }
                text += len;
                if (*text == '\n')
                        text++;
        }
        return count;
}

/* Append " param=value" (quoted if value has a space) to buf at *used. */
static int append(char *buf, size_t size, size_t *used, const char *param, const char *value)
{
        const char *q = strpbrk(value, " \t") ? "\"" : "";
        int n = snprintf(buf + *used, size - *used, "%s%s=%s%s%s", *used ? " " : "", param, q, value, q);

        if (n < 0 || (size_t)n >= size - *used)
                return -ENAMETOOLONG;
        *used += (size_t)n;
        return 0;
}

int args_format_cmdline(const struct thaw_args *a, char *buf, size_t size)
{
        char num[24];
        size_t used = 0;
        int r = 0;

        if (size == 0)
                return -ENAMETOOLONG;
        buf[0] = '\0';
        if (a->disabled)
                r = append(buf, size, &used, "rd.thaw", "0");
        if (r == 0 && *a->device)
                r = append(buf, size, &used, "rd.thaw.device", a->device);
        if (r == 0 && *a->key)
                r = append(buf, size, &used, "rd.thaw.key", a->key);
        if (r == 0 && strcmp(a->name, ARGS_NAME_DEFAULT) != 0)
                r = append(buf, size, &used, "rd.thaw.name", a->name);
        if (r == 0 && a->timeout_s != ARGS_TIMEOUT_DEFAULT) {
                snprintf(num, sizeof(num), "%u", a->timeout_s);
                r = append(buf, size, &used, "rd.thaw.timeout", num);
        }
        if (r == 0 && a->mismatch_discard)
                r = append(buf, size, &used, "rd.thaw.mismatch", "discard");
        if (r == 0 && a->verify)
                r = append(buf, size, &used, "rd.thaw.verify", "1");
        if (r == 0 && *a->header)
                r = append(buf, size, &used, "rd.thaw.header", a->header);
        if (r == 0 && a->offset) {
                snprintf(num, sizeof(num), "%llu", (unsigned long long)a->offset);
                r = append(buf, size, &used, "resume_offset", num);
        }
        if (r < 0)
                buf[0] = '\0';
        return r;
}

/* The text of setting KEY in a, in num (24 bytes) for numbers; NULL for a key thaw.conf lacks. */
static const char *setting_text(const struct thaw_args *a, const char *key, char num[24])
{
        if (strcmp(key, "device") == 0)
                return a->device;
        if (strcmp(key, "key") == 0)
                return a->key;
        if (strcmp(key, "name") == 0)
                return a->name;
        if (strcmp(key, "header") == 0)
                return a->header;
        if (strcmp(key, "allow-url") == 0)
                return a->allow_url;
        if (strcmp(key, "swapin") == 0)
                return a->swapin;
        if (strcmp(key, "writer") == 0)
                return a->writer;
        if (strcmp(key, "mismatch") == 0)
                return a->mismatch_discard ? "discard" : "poweroff";
        if (strcmp(key, "verify") == 0)
                return a->verify ? "1" : "0";
        if (strcmp(key, "image_size") == 0 && a->image_size_kib == UINT64_MAX)
                return "";
        if (strcmp(key, "image_size") == 0)
                snprintf(num, 24, "%lluK", (unsigned long long)a->image_size_kib);
        else if (strcmp(key, "timeout") == 0)
                snprintf(num, 24, "%u", a->timeout_s);
        else if (strcmp(key, "offset") == 0)
                snprintf(num, 24, "%llu", (unsigned long long)a->offset);
        else
                return NULL;
        return num;
}

int args_get(const struct thaw_args *a, const char *key, char *buf, size_t size)
{
        char num[24];
        const char *text = setting_text(a, key, num);
        size_t n;

        if (!text)
                return -ENOENT;
        n = strlen(text);
        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(buf, text, n + 1);
        return n > 0;
}

#define CMDLINE_D "/etc/cmdline.d"
#define CMDLINE_D_MAX 64      /* files read from it */

static int conf_file(const struct dirent *de)
{
        size_t n = strlen(de->d_name);

        return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0;
}

/*
 * The arguments a host-only initramfs stores (dracut's /etc/cmdline.d/ *.conf, in name order), as
 * dracut's own getcmdline reads them: after thaw.conf, before /proc/cmdline.
 */
static void load_cmdline_d(const char *root, struct thaw_args *out, log_say_fn fn, void *userdata)
{
        char dir[PATH_MAX], rel[PATH_MAX], text[ARGS_CMDLINE_MAX], bad[ARGS_TOKEN_MAX];
        struct dirent **names = NULL;
        int n, r;

        if (util_path(dir, sizeof(dir), root, CMDLINE_D) < 0)
                return;
        n = scandir(dir, &names, conf_file, alphasort);
        for (int i = 0; i < n; i++) {
                if (i < CMDLINE_D_MAX &&
                    snprintf(rel, sizeof(rel), "%s/%s", CMDLINE_D, names[i]->d_name) < (int)sizeof(rel)) {
                        r = util_read_text_at(root, rel, text, sizeof(text));
                        if (r < 0)
                                log_sayf(fn, userdata, LOG_WARNING, "cannot read %s (%s): skipped", rel,
                                    strerror(-r));
                        else if ((r = args_parse_cmdline(text, out, bad, sizeof(bad))) > 0)
                                log_sayf(fn, userdata, LOG_WARNING, "ignoring %d bad argument(s) in %s, the "
                                    "first: \"%s\"", r, rel, bad);
                }
                free(names[i]);
        }
        free(names);
}

/* thaw.conf into out: 0, or -errno if it cannot be read (said here only with ARGS_LOAD_CONF_ONLY). */
static int load_conf(const char *root, unsigned flags, struct thaw_args *out, log_say_fn fn, void *userdata)
{
        char text[ARGS_CONF_MAX], bad[ARGS_TOKEN_MAX];
        /* thaw config names the root it was given (dracut's sysroot); the boot and the commands do not. */
        const char *shown = flags & ARGS_LOAD_CONF_ONLY ? root : "";
        int r = util_read_text_at(root, ARGS_CONF_PATH, text, sizeof(text));

        if (r < 0) {
                if (flags & ARGS_LOAD_CONF_ONLY)
                        log_sayf(fn, userdata, LOG_ERR, "cannot read %s%s (%s)", root, ARGS_CONF_PATH, strerror(-r));
                return r;
        }
        r = args_parse_conf(text, out, bad, sizeof(bad));
        if (r > 0)
                log_sayf(fn, userdata, LOG_WARNING, "ignoring %d bad line(s) in %s%s, the first: \"%s\"", r, shown,
                    ARGS_CONF_PATH, bad);
        return 0;
}

int args_load(const char *root, const char *cmdline, unsigned flags, struct thaw_args *out, log_say_fn fn,
              void *userdata)
{
        char text[ARGS_CMDLINE_MAX], bad[ARGS_TOKEN_MAX];
        int r;

        args_init(out);
        r = load_conf(root, flags, out, fn, userdata);
        if (flags & ARGS_LOAD_CONF_ONLY)
                return r;
        if (r < 0 && r != -ENOENT)
                log_sayf(fn, userdata, LOG_WARNING, "cannot read %s (%s): using the kernel command line only",
                    ARGS_CONF_PATH, strerror(-r));
        if (!cmdline) {
                load_cmdline_d(root, out, fn, userdata);
                r = util_read_text_at(root, "/proc/cmdline", text, ARGS_CMDLINE_MAX);
                if (r < 0) {
                        log_sayf(fn, userdata, LOG_WARNING, "cannot read /proc/cmdline (%s): using %s only",
                            strerror(-r), ARGS_CONF_PATH);
                        return 0;
                }
                cmdline = text;
        }
        r = args_parse_cmdline(cmdline, out, bad, sizeof(bad));
        if (r > 0)
                log_sayf(fn, userdata, LOG_WARNING, "ignoring %d bad kernel argument(s), the first: \"%s\"", r,
                    bad);
        return 0;
}
