/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The key source chain: parsing, formatting, and dispatch to the provider table. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "key_provider.h"
#include "keysrc.h"
#include "luks_token.h"
#include "base/clock.h"

/* A new source type is one enum value in keysrc.h and one entry here. */
static const struct key_provider *const providers[KEYSRC__MAX] = {
        [KEYSRC_FWCFG] = &key_fwcfg_provider,
        [KEYSRC_KEYFILE] = &key_keyfile_provider,
        [KEYSRC_SMBIOS] = &key_smbios_provider,
        [KEYSRC_DRIVE] = &key_drive_provider,
        [KEYSRC_IMDS] = &key_imds_provider,
        [KEYSRC_TPM2] = &key_tpm2_provider,
        [KEYSRC_SYSTEMD_TPM2] = &key_systemd_tpm2_provider,
        [KEYSRC_PASSPHRASE] = &key_passphrase_provider,
};

const char *keysrc_strerror(int r)
{
        switch (r) {
        case -ENOENT:
                return "not found";
        case -ENODATA:
                return "empty";
        case -EMSGSIZE:
                return "too large";
        case -EBADMSG:
                return "malformed";
        default:
                return strerror(-r);
        }
}

const char *keysrc_type_name(enum keysrc_type t)
{
        if ((unsigned)t >= KEYSRC__MAX || !providers[t])
                return NULL;
        return providers[t]->name;
}

/*
 * The provider whose name one starts with, followed by ':', ',' or the end; -EINVAL if none. A bare
 * name may be followed by its options after a ',' ("tpm2,bank=sha1" is "tpm2:bank=sha1").
 */
static int provider_of(const char *one, enum keysrc_type *type, const char **arg)
{
        size_t tlen = strcspn(one, ":,");

        for (unsigned t = 0; t < KEYSRC__MAX; t++) {
                const struct key_provider *p = providers[t];

                if (!p || strlen(p->name) != tlen || strncmp(p->name, one, tlen) != 0)
                        continue;
                *type = (enum keysrc_type)t;
                *arg = one[tlen] ? one + tlen + 1 : one + tlen;
                return 0;
        }
        return -EINVAL;
}

int keysrc_parse(const char *one, struct keysrc *out)
{
        enum keysrc_type t;
        const char *arg;
        int r;

        if (!one || !out || provider_of(one, &t, &arg) < 0)
                return -EINVAL;
        /* "fwcfg:" (an empty argument) is malformed; a bare name is a source only if check("") says so. */
        if ((arg > one && (arg[-1] == ':' || arg[-1] == ',') && *arg == '\0') || strlen(arg) >= KEYSRC_ARG_MAX)
                return -EINVAL;
        r = providers[t]->check(arg);
        if (r < 0)
                return r == -ERANGE ? r : -EINVAL;
        out->type = t;
        snprintf(out->arg, sizeof(out->arg), "%s", arg);
        return 0;
}

/* A piece of a chain that starts a source ("type:…" or a bare name) rather than continuing one. */
static int starts_source(const char *piece)
{
        enum keysrc_type t;
        const char *arg;

        return provider_of(piece, &t, &arg) == 0;
}

int keychain_parse(const char *spec, struct keychain *out)
{
        struct keychain c = { 0 };
        char buf[KEYCHAIN_SPEC_MAX];
        size_t len, start = 0;

        if (!spec || !out)
                return -EINVAL;
        len = strlen(spec);
        if (len >= sizeof(buf))
                return -E2BIG;
        /* An empty piece (",,", a leading or trailing ",") is an error, never silently dropped. */
        if (len == 0 || spec[0] == ',' || spec[len - 1] == ',' || strstr(spec, ",,"))
                return -EINVAL;
        memcpy(buf, spec, len + 1);
        /* Cut at the end and at each comma followed by the start of a source; other commas are
         * inside a source's arguments ("tpm2:pcrs=7,bank=sha256"), and its check judges them. */
        for (size_t i = 0; i <= len; i++) {
                int r;

                if (buf[i] != '\0' && (buf[i] != ',' || !starts_source(buf + i + 1)))
                        continue;
                if (c.n == KEYCHAIN_MAX)
                        return -E2BIG;
                buf[i] = '\0';
                r = keysrc_parse(buf + start, &c.src[c.n]);
                if (r < 0)
                        return r;
                c.n++;
                start = i + 1;
        }
        /* A passphrase waits for a person: every unattended source is tried before it. */
        for (size_t i = 0; i + 1 < c.n; i++) {
                if (c.src[i].type == KEYSRC_PASSPHRASE)
                        return -EINVAL;
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
        n = snprintf(tmp, sizeof(tmp), "%s%s%.*s", name, s->arg[0] ? ":" : "", KEYSRC_ARG_MAX - 1, s->arg);
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

int keysrc_fetch(const struct keysrc *s, const struct keysrc_ctx *ctx, struct secret **out)
{
        if (!s || !ctx || !ctx->root || !out || (unsigned)s->type >= KEYSRC__MAX || !providers[s->type])
                return -EINVAL;
        if (providers[s->type]->check(s->arg) < 0)
                return -EINVAL;
        return providers[s->type]->fetch(s->arg, ctx, out);
}

/* The token luks_token_build() makes, with the provider's own fields, and the key of the keyslot. */
static int enroll_one(const struct key_provider *p, const struct keysrc *s, const struct keysrc_ctx *ctx,
                      struct secret **key, char **token)
{
        char base[LUKS_TOKEN_JSON_MAX];
        struct json_object *o;
        const char *text;
        int r;

        r = luks_token_build(s, base, sizeof(base));
        if (r < 0)
                return r;
        o = json_tokener_parse(base);
        if (!o)
                return -ENOMEM;
        r = p->enroll ? p->enroll(s->arg, ctx, key, o) : p->fetch(s->arg, ctx, key);
        if (r == 0) {
                text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                if (!text)
                        r = -ENOMEM;
                else if (strlen(text) >= LUKS_TOKEN_JSON_MAX)
                        r = -E2BIG;
                else if (!(*token = strdup(text)))
                        r = -ENOMEM;
                if (r < 0) {
                        secret_free(*key);
                        *key = NULL;
                }
        }
        json_object_put(o);
        return r;
}

int keysrc_enroll(const struct keysrc *s, const struct keysrc_ctx *ctx, struct keysrc_enrollment *out)
{
        struct secret *key = NULL;
        char *token = NULL;
        int r;

        if (!s || !ctx || !ctx->root || !out || (unsigned)s->type >= KEYSRC__MAX || !providers[s->type])
                return -EINVAL;
        if (providers[s->type]->check(s->arg) < 0)
                return -EINVAL;
        r = enroll_one(providers[s->type], s, ctx, &key, &token);
        if (r < 0)
                return r;
        out->key = key;
        out->token = token;
        out->typed = s->type == KEYSRC_PASSPHRASE;
        return 0;
}

void keysrc_enrollment_free(struct keysrc_enrollment *e)
{
        if (!e)
                return;
        secret_free(e->key);
        free(e->token);
        e->key = NULL;
        e->token = NULL;
}

int keysrc_wait_driver(const char *dir, int64_t deadline_ms, int64_t grace_ms, int64_t poll_ms,
                       int (*find)(void *arg, struct secret **out), void *arg, struct secret **out)
{
        bool dir_seen = false;

        for (;;) {
                int64_t left;
                int r = find(arg, out);

                if (r != -ENOENT)
                        return r;
                /* Wait for a late driver, not for a key that is absent. */
                if (!dir_seen && access(dir, F_OK) == 0) {
                        dir_seen = true;
                        if (deadline_ms > clock_now_ms() + grace_ms)
                                deadline_ms = clock_now_ms() + grace_ms;
                }
                left = deadline_ms - clock_now_ms();
                if (left <= 0)
                        return -ENOENT;
                clock_sleep_ms(left < poll_ms ? left : poll_ms);
        }
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
