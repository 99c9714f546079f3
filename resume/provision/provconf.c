/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /etc/thaw/provision.conf: what the image builder asks thaw provision to set up, read strictly. */
#include "provision/provconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "dev/devspec.h"

/* Up to three decimals: "1.5" -> 1500. */
static int parse_milli(const char *s, size_t n, uint64_t *out)
{
        uint64_t whole = 0, frac = 0, scale = 100;
        size_t i = 0;

        if (n == 0 || s[0] == '.')
                return -EINVAL;
        for (; i < n && s[i] != '.'; i++) {
                if (s[i] < '0' || s[i] > '9' || whole > 1000)
                        return -EINVAL;
                whole = whole * 10 + (uint64_t)(s[i] - '0');
        }
        if (i < n) {
                if (++i == n || n - i > 3)
                        return -EINVAL;
                for (; i < n; i++, scale /= 10) {
                        if (s[i] < '0' || s[i] > '9')
                                return -EINVAL;
                        frac += (uint64_t)(s[i] - '0') * scale;
                }
        }
        if (whole > 1000)
                return -ERANGE;
        *out = whole * 1000 + frac;
        return 0;
}

int provconf_parse_bytes(const char *s, uint64_t *out)
{
        /* At most 2^62 bytes: every sum the size rule makes then fits. */
        return util_parse_bytes(s, UINT64_C(1) << 62, out);
}

int provconf_parse_size(const char *s, struct provsize *out)
{
        struct provsize z = { .min = out->min };
        size_t n = strlen(s);
        int r;

        if (strncmp(s, "ram", 3) == 0) {
                z.milli = 1000;
                s += 3;
                if (*s == '\0')
                        goto done;
                if (*s++ != '+' || *s == '\0')
                        return -EINVAL;
                n = strlen(s);
                if (s[n - 1] == '%') {
                        char pct[8];

                        if (n - 1 == 0 || n - 1 >= sizeof(pct) || strspn(s, "0123456789") != n - 1)
                                return -EINVAL;
                        memcpy(pct, s, n - 1);
                        pct[n - 1] = '\0';
                        r = util_parse_u64(pct, 1000, &z.pct);
                        if (r < 0)
                                return r;
                        goto done;
                }
                r = provconf_parse_bytes(s, &z.add);
                if (r < 0)
                        return r;
                goto done;
        }
        if (n < 2 || s[n - 1] != 'x')
                return -EINVAL;
        r = parse_milli(s, n - 1, &z.milli);
        if (r < 0)
                return r;
        if (z.milli == 0)
                return -EINVAL;
done:
        *out = z;
        return 0;
}

/* Each name, once; what it takes is checked in set(). */
enum { K_DEVICE, K_SWAPFILE, K_KEY, K_UNLOCK, K_NAME, K_SIZE, K_MIN, K_COUNT };
static const char *const names[K_COUNT] = { "device", "swapfile", "key", "unlock", "name", "size", "min" };

static int copy_checked(char *dst, size_t size, const char *v, const char *what, char *why, size_t wsize)
{
        if (util_copy(dst, size, v) < 0)
                return util_why(why, wsize, -EINVAL, "%s is longer than %zu bytes", what, size - 1);
        return 0;
}

static int set(struct provconf *c, int k, const char *v, char *why, size_t wsize)
{
        struct keychain chain;

        switch (k) {
        case K_DEVICE:
                if (devspec_check(v) < 0)
                        return util_why(why, wsize, -EINVAL, "device=%s is not a device (UUID=, PARTUUID=, "
                                        "LABEL=, PARTLABEL=, /dev/...)", v);
                return copy_checked(c->device, sizeof(c->device), v, "device=", why, wsize);
        case K_SWAPFILE:
                /* An absolute, plain path: where the swap file is made, and nothing it could escape by. */
                if (v[0] != '/' || v[1] == '\0' || strstr(v, "/../") || strstr(v, "/./") || strstr(v, "//") ||
                    (strlen(v) >= 3 && strcmp(v + strlen(v) - 3, "/..") == 0) ||
                    (strlen(v) >= 2 && strcmp(v + strlen(v) - 2, "/.") == 0) || v[strlen(v) - 1] == '/')
                        return util_why(why, wsize, -EINVAL, "swapfile=%s is not a plain absolute path to a "
                                        "file", v);
                return copy_checked(c->swapfile, sizeof(c->swapfile), v, "swapfile=", why, wsize);
        case K_KEY:
        case K_UNLOCK:
                if (keychain_parse(v, &chain) < 0)
                        return util_why(why, wsize, -EINVAL, "%s=%s is not a key source chain (thaw setup "
                                        "--help lists the sources)", names[k], v);
                /* thaw provision runs at boot with no one at the console: a prompt would hold the boot. */
                for (size_t i = 0; i < chain.n; i++)
                        if (chain.src[i].type == KEYSRC_PASSPHRASE)
                                return util_why(why, wsize, -EINVAL, "%s=%s: a passphrase cannot be typed at "
                                                "boot, with no one at the console; enroll it later with "
                                                "thaw enroll", names[k], v);
                return k == K_KEY ? copy_checked(c->key, sizeof(c->key), v, "key=", why, wsize) :
                                    copy_checked(c->unlock, sizeof(c->unlock), v, "unlock=", why, wsize);
        case K_NAME:
                if (!args_name_valid(v))
                        return util_why(why, wsize, -EINVAL, "name=%s is not a usable device-mapper name", v);
                return copy_checked(c->name, sizeof(c->name), v, "name=", why, wsize);
        case K_SIZE:
                if (provconf_parse_size(v, &c->size) < 0)
                        return util_why(why, wsize, -EINVAL, "size=%s is not a size rule: ram, ram+10%%, "
                                        "ram+512M or 1.5x", v);
                return 0;
        default:
                if (provconf_parse_bytes(v, &c->size.min) < 0)
                        return util_why(why, wsize, -EINVAL, "min=%s is not a size (bytes, or with K, M, G, T)",
                                        v);
                return 0;
        }
}

/* One line: "" and comments pass; name=value sets once. */
static int parse_line(char *line, unsigned no, struct provconf *c, bool *seen, char *why, size_t wsize)
{
        char *eq, *v, lwhy[PROVCONF_WHY_MAX];
        int k, r;

        while (*line == ' ' || *line == '\t')
                line++;
        util_rstrip(line);
        if (*line == '\0' || *line == '#')
                return 0;
        eq = strchr(line, '=');
        if (!eq)
                return util_why(why, wsize, -EINVAL, "line %u: \"%.64s\" is not NAME=VALUE", no, line);
        *eq = '\0';
        v = eq + 1;
        for (k = 0; k < K_COUNT && strcmp(line, names[k]) != 0; k++)
                ;
        if (k == K_COUNT)
                return util_why(why, wsize, -EINVAL, "line %u: unknown setting \"%.64s\" (device, swapfile, "
                                "key, unlock, name, size, min)", no, line);
        if (seen[k])
                return util_why(why, wsize, -EINVAL, "line %u: %s= given twice", no, names[k]);
        seen[k] = true;
        if (*v == '\0')
                return util_why(why, wsize, -EINVAL, "line %u: %s= is empty", no, names[k]);
        r = set(c, k, v, lwhy, sizeof(lwhy));
        return r < 0 ? util_why(why, wsize, r, "line %u: %s", no, lwhy) : 0;
}

int provconf_parse(const char *text, struct provconf *out, char *why, size_t wsize)
{
        struct provconf c = { .size = { .milli = 1000 } };
        bool seen[K_COUNT] = { false };
        char line[PROVCONF_LINE_MAX];
        unsigned no = 0;
        int r;

        if (strlen(text) > PROVCONF_MAX)
                return util_why(why, wsize, -EFBIG, "longer than %u bytes", PROVCONF_MAX);
        for (const char *p = text; *p;) {
                size_t n = strcspn(p, "\n");

                no++;
                if (n >= sizeof(line))
                        return util_why(why, wsize, -EINVAL, "line %u is longer than %zu bytes", no,
                                        sizeof(line) - 1);
                memcpy(line, p, n);
                line[n] = '\0';
                r = parse_line(line, no, &c, seen, why, wsize);
                if (r < 0)
                        return r;
                p += n + (p[n] == '\n');
        }
        if (!!*c.device == !!*c.swapfile)
                return util_why(why, wsize, -EINVAL, "give either device= (a partition) or swapfile= (a file "
                                "on the encrypted root), one of them");
        if (!*c.key)
                return util_why(why, wsize, -EINVAL, "no key=: the key chain to enroll is needed");
        if (*c.unlock && !*c.swapfile)
                return util_why(why, wsize, -EINVAL, "unlock= is for swapfile= only (the root's container)");
        if (*c.name && !*c.device)
                return util_why(why, wsize, -EINVAL, "name= is for device= only (a swap file's mapping is the "
                                "root's)");
        if (!*c.name)
                snprintf(c.name, sizeof(c.name), "%s", ARGS_NAME_DEFAULT);
        *out = c;
        return 0;
}

int provconf_load(const char *root, struct provconf *out, char *why, size_t wsize)
{
        char *text = malloc(PROVCONF_MAX + 2);
        int r;

        if (!text)
                return -ENOMEM;
        r = util_read_text_at(root, PROVCONF_PATH, text, PROVCONF_MAX + 2);
        if (r == -EFBIG)
                r = util_why(why, wsize, -EFBIG, "longer than %u bytes", PROVCONF_MAX);
        else if (r < 0)
                util_why(why, wsize, r, "cannot read it (%s)", strerror(-r));
        else
                r = provconf_parse(text, out, why, wsize);
        free(text);
        return r;
}
