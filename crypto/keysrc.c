/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The key source chain: parsing, formatting, and dispatch to the provider table. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "key_provider.h"
#include "keysrc.h"

/* A new source type is one enum value in keysrc.h and one entry here. */
static const struct key_provider *const providers[KEYSRC__MAX] = {
        [KEYSRC_FWCFG] = &key_fwcfg_provider,
        [KEYSRC_KEYFILE] = &key_keyfile_provider,
        [KEYSRC_SMBIOS] = &key_smbios_provider,
        [KEYSRC_DRIVE] = &key_drive_provider,
        [KEYSRC_IMDS] = &key_imds_provider,
};

const char *keysrc_type_name(enum keysrc_type t)
{
        if ((unsigned)t >= KEYSRC__MAX || !providers[t])
                return NULL;
        return providers[t]->name;
}

int keysrc_parse(const char *one, struct keysrc *out)
{
        const char *colon;
        size_t tlen;

        if (!one || !out || !(colon = strchr(one, ':')))
                return -EINVAL;
        tlen = (size_t)(colon - one);
        if (strlen(colon + 1) >= KEYSRC_ARG_MAX)
                return -EINVAL;
        for (unsigned t = 0; t < KEYSRC__MAX; t++) {
                const struct key_provider *p = providers[t];

                if (!p || strlen(p->name) != tlen || strncmp(p->name, one, tlen) != 0)
                        continue;
                if (p->check(colon + 1) < 0)
                        return -EINVAL;
                out->type = (enum keysrc_type)t;
                snprintf(out->arg, sizeof(out->arg), "%s", colon + 1);
                return 0;
        }
        return -EINVAL;
}

int keychain_parse(const char *spec, struct keychain *out)
{
        struct keychain c = { 0 };
        char buf[KEYCHAIN_SPEC_MAX];
        char *save = NULL;
        size_t len;

        if (!spec || !out)
                return -EINVAL;
        len = strlen(spec);
        if (len >= sizeof(buf))
                return -E2BIG;
        /* strtok_r would silently merge ",," and drop a trailing ","; an empty source is an error. */
        if (len == 0 || spec[0] == ',' || spec[len - 1] == ',' || strstr(spec, ",,"))
                return -EINVAL;
        memcpy(buf, spec, len + 1);
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                int r;

                if (c.n == KEYCHAIN_MAX)
                        return -E2BIG;
                r = keysrc_parse(tok, &c.src[c.n]);
                if (r < 0)
                        return r;
                c.n++;
        }
        *out = c;
        return 0;
}

int keysrc_format(const struct keysrc *s, char *buf, size_t size)
{
        char tmp[KEYSRC_ARG_MAX + 32];
        const char *name;
        int n;

        if (!s || !buf || !(name = keysrc_type_name(s->type)))
                return -EINVAL;
        n = snprintf(tmp, sizeof(tmp), "%s:%.*s", name, KEYSRC_ARG_MAX - 1, s->arg);
        if (n < 0 || (size_t)n >= sizeof(tmp))
                return -EINVAL;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        memcpy(buf, tmp, (size_t)n + 1);
        return 0;
}

int keychain_format(const struct keychain *c, char *buf, size_t size)
{
        char tmp[KEYCHAIN_MAX * (KEYSRC_ARG_MAX + 32)];
        size_t used = 0;

        if (!c || !buf || c->n == 0 || c->n > KEYCHAIN_MAX)
                return -EINVAL;
        for (size_t i = 0; i < c->n; i++) {
                int r;

                if (i > 0)
                        tmp[used++] = ',';
                r = keysrc_format(&c->src[i], tmp + used, sizeof(tmp) - used);
                if (r < 0)
                        return r;
                used += strlen(tmp + used);
        }
        if (used >= size)
                return -ENAMETOOLONG;
        memcpy(buf, tmp, used + 1);
        return 0;
}

int keysrc_fetch(const struct keysrc *s, const char *root, int64_t deadline_ms, struct secret **out)
{
        if (!s || !root || !out || (unsigned)s->type >= KEYSRC__MAX || !providers[s->type])
                return -EINVAL;
        if (providers[s->type]->check(s->arg) < 0)
                return -EINVAL;
        return providers[s->type]->fetch(s->arg, root, deadline_ms, out);
}

int keysrc_read_path(const char *path, struct secret **out)
{
        struct stat st;
        int fd, r;

        /* O_NONBLOCK: a FIFO planted at the path must not hang the boot; it is refused below. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EINVAL;
        else
                r = secret_read_fd(fd, out);
        close(fd);
        return r;
}
