/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key provider "smbios:NAME": a systemd-style credential in an SMBIOS type 11 (OEM strings) entry. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base64.h"
#include "key_provider.h"
#include "keysrc.h"

#define DMI_DIR "/sys/firmware/dmi/entries"
#define SMBIOS_NAME_MAX 128
#define SMBIOS_POLL_MS 100  /* dmi-sysfs may still be loading when we start */
#define SMBIOS_GRACE_MS 1000 /* it adds the entries one by one while it probes */
#define SMBIOS_ENTRIES_MAX 64 /* type 11 entries looked at: firmware has one or a few */
#define CRED_TEXT "io.systemd.credential:"
#define CRED_BINARY "io.systemd.credential.binary:"

/* A credential name as systemd allows it, minus what the chain and the match need: no ',' (the
 * chain separator), '=' (ends the name in the string) or '/'. */
static int smbios_check(const char *arg)
{
        size_t len = strlen(arg);

        if (len == 0 || len > SMBIOS_NAME_MAX || strcmp(arg, ".") == 0 || strcmp(arg, "..") == 0)
                return -EINVAL;
        for (const char *p = arg; *p; p++) {
                if (*p <= ' ' || *p > '~' || *p == ',' || *p == '=' || *p == '/')
                        return -EINVAL;
        }
        return 0;
}

/* The key in value (vlen bytes, raw or base64) as a new secret. */
static int value_to_secret(const char *value, size_t vlen, bool binary, struct secret **out)
{
        struct secret *s = NULL;
        int r;

        if (vlen == 0)
                return -ENODATA;
        if (!binary && vlen > SECRET_MAX)
                return -EMSGSIZE;
        r = secret_new(SECRET_MAX, &s);
        if (r < 0)
                return r;
        if (binary) {
                r = base64_decode(value, vlen, s->data, s->cap);
                /* Malformed base64 is a broken credential, not a missing one: say so. */
                if (r == -EINVAL)
                        r = -EBADMSG;
                if (r == 0)
                        r = -ENODATA;
        } else {
                memcpy(s->data, value, vlen);
                r = (int)vlen;
        }
        if (r < 0) {
                secret_free(s);
                return r;
        }
        s->len = (size_t)r;
        *out = s;
        return 0;
}

/* Match one string of the set against both credential forms of name. */
static int match_string(const char *str, size_t slen, const char *name, struct secret **out)
{
        static const char *const prefix[2] = { CRED_TEXT, CRED_BINARY };
        size_t nlen = strlen(name);

        for (int b = 0; b < 2; b++) {
                size_t plen = strlen(prefix[b]);

                if (slen < plen + nlen + 1 || memcmp(str, prefix[b], plen) != 0 ||
                    memcmp(str + plen, name, nlen) != 0 || str[plen + nlen] != '=')
                        continue;
                return value_to_secret(str + plen + nlen + 1, slen - plen - nlen - 1, b == 1, out);
        }
        return -ENOENT;
}

/*
 * Find the credential name in one raw type 11 structure: type, length, handle (u16), count, then
 * the string set after the formatted area, each NUL-terminated, ending with an empty string.
 * -ENOENT if absent, -EPROTO if the structure is not a well-formed type 11; for a credential that
 * is there: -EBADMSG bad base64, -ENODATA empty, -EMSGSIZE larger than SECRET_MAX.
 */
int smbios_find_credential(const uint8_t *raw, size_t len, const char *name, struct secret **out)
{
        size_t off;

        if (len < 5 || raw[0] != 11 || raw[1] < 5 || raw[1] > len)
                return -EPROTO;
        off = raw[1];
        /* No strings at all: the formatted area is followed by a double NUL. */
        while (off < len && raw[off] != '\0') {
                const char *str = (const char *)raw + off;
                const uint8_t *nul = memchr(raw + off, '\0', len - off);
                int r;

                if (!nul)
                        return -EPROTO; /* a string running off the end */
                r = match_string(str, (size_t)(nul - (raw + off)), name, out);
                if (r != -ENOENT)
                        return r;
                off = (size_t)(nul - raw) + 1;
        }
        return -ENOENT;
}

static int type11_filter(const struct dirent *d)
{
        return strncmp(d->d_name, "11-", 3) == 0;
}

/* The credential in the entry at path; -ENOENT if it is not there (or the entry is unreadable). */
static int scan_entry(const char *path, const char *name, struct secret **out)
{
        struct secret *raw = NULL;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -ENOENT;
        /* The entry holds the key among other strings: read into locked scratch, wiped on free. */
        r = secret_read_fd_cap(fd, SECRET_SCRATCH_MAX, &raw);
        close(fd);
        if (r < 0)
                return -ENOENT;
        r = smbios_find_credential(raw->data, raw->len, name, out);
        secret_free(raw);
        /* A malformed structure hides no credential of ours; the firmware's other entries may. */
        return r == -EPROTO ? -ENOENT : r;
}

/* Look through the type 11 entries under dir once, in order; the first with the credential wins. */
static int scan_entries(const char *dir, const char *name, struct secret **out)
{
        struct dirent **list = NULL;
        int n, r = -ENOENT;

        n = scandir(dir, &list, type11_filter, versionsort);
        if (n < 0)
                return -errno;
        for (int i = 0; i < n; i++) {
                char path[4096];
                int k = snprintf(path, sizeof(path), "%s/%s/raw", dir, list[i]->d_name);

                if (r == -ENOENT && i < SMBIOS_ENTRIES_MAX && k > 0 && (size_t)k < sizeof(path))
                        r = scan_entry(path, name, out);
                free(list[i]);
        }
        free(list);
        return r;
}

struct scan {
        const char *dir, *name;
};

static int scan(void *arg, struct secret **out)
{
        const struct scan *s = arg;

        return scan_entries(s->dir, s->name, out);
}

static int smbios_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        char dir[4096];
        struct scan s = { .dir = dir, .name = arg };
        int n;

        n = snprintf(dir, sizeof(dir), "%s" DMI_DIR, ctx->root);
        if (n < 0 || (size_t)n >= sizeof(dir))
                return -ENAMETOOLONG;
        /* As fwcfg: wait for a late dmi-sysfs, not for a credential that is absent. */
        return keysrc_wait_driver(dir, ctx->deadline_ms, SMBIOS_GRACE_MS, SMBIOS_POLL_MS, scan, &s, out);
}

const struct key_provider key_smbios_provider = {
        .name = "smbios",
        .check = smbios_check,
        .fetch = smbios_fetch,
};
