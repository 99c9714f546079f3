/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The key-chain walk of `thaw resume`: each source of rd.thaw.key= in turn until one unlocks the device. */
#include "boot/unlock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "base/clock.h"
#include "imds_url.h"
#include "luks.h"
#include "system/power.h"

/* The key chain of rd.thaw.key= (or key= in thaw.conf), parsed once: 0, or keychain_parse()'s error. */
static int keys_chain(const struct resume_ctx *c, struct unlock_keys *k)
{
        if (!k->parsed) {
                k->parsed = true;
                k->chain_r = keychain_parse(c->args->key, &k->chain);
        }
        return k->chain_r;
}

const struct keychain *unlock_keys_chain(const struct resume_ctx *c, struct unlock_keys *k)
{
        return keys_chain(c, k) == 0 ? &k->chain : NULL;
}

/* Unreadable tokens are no tokens. */
const struct luks_tokens *unlock_keys_tokens(const struct resume_ctx *c, struct unlock_keys *k, const char *dev)
{
        if (!k->tokens_read && c->ops->tokens) {
                k->tokens_read = true;
                if (c->ops->tokens(dev, &k->tokens) != 0)
                        k->tokens = NULL;
        }
        return k->tokens;
}

void unlock_keys_free(const struct resume_ctx *c, struct unlock_keys *k)
{
        if (k->tokens && c->ops->tokens_free)
                c->ops->tokens_free(k->tokens);
        k->tokens = NULL;
}

/* A key source's failure in words; -EPERM is an activation's: the key did not open a keyslot. */
static const char *reason(int r)
{
        return r == -EPERM ? "wrong key" : keysrc_strerror(r);
}

static void add_reason(char *buf, size_t size, const struct keysrc *s, const char *why)
{
        char name[KEYSRC_ARG_MAX + 16];
        size_t used = strlen(buf);

        if (keysrc_format(s, name, sizeof(name)) < 0)
                snprintf(name, sizeof(name), "%s:…", keysrc_type_name(s->type));
        snprintf(buf + used, size - used, "%s%s: %s", used ? "; " : "", name, why);
}

/*
 * A typed passphrase may open argon2 keyslots too, those whose memory fits in half of the RAM this
 * boot sees: a larger one would get the initramfs killed for memory instead of going on. Every
 * other key opens cheap PBKDF2 keyslots only. Refused keyslots are named in detail.
 */
static int activate(const struct resume_ctx *c, const struct keysrc *src, const char *dev,
                    const struct secret *key, const struct luks_policy *p, char *detail, size_t size)
{
        struct power_meminfo m;
        struct luks_policy own = *p;

        if (src->type != KEYSRC_PASSPHRASE || !c->ops->activate_passphrase)
                return c->ops->activate(dev, c->args->name, key, p);
        /* The person who typed it had rd.thaw.timeout= of their own (see fetch()): so has its keyslot try. */
        own.deadline_ms = clock_now_ms() + (int64_t)c->args->timeout_s * 1000;
        if (p->deadline_ms > own.deadline_ms)
                own.deadline_ms = p->deadline_ms;
        if (power_meminfo(c->root, &m) < 0)
                m.mem_total_kib = 0; /* unknown: no argon2 keyslot is tried, PBKDF2 ones still are */
        return c->ops->activate_passphrase(dev, c->args->name, key, m.mem_total_kib / 2, &own, detail, size);
}

/*
 * The policy the boot checks the header with: a swap file (resume_offset=) lives in a container
 * thaw did not format, the root's; the pin from rd.thaw.header= / header=; the unlock's deadline.
 */
struct luks_policy unlock_policy(const struct resume_ctx *c, int64_t deadline)
{
        struct luks_policy p = {
                .profile = c->args->offset ? LUKS_PROFILE_FOREIGN : LUKS_PROFILE_THAW,
                .pin = c->args->header,
                .deadline_ms = deadline,
        };

        return p;
}

/* One line as soon as a source fails and another is left, so each failure is told apart. */
static void next_source(const struct resume_ctx *c, const struct keychain *chain, size_t i,
                        const char *what)
{
        char name[KEYSRC_ARG_MAX + 16], next[KEYSRC_ARG_MAX + 16];

        if (i + 1 >= chain->n)
                return; /* the last one: the summary line says it */
        if (keysrc_format(&chain->src[i], name, sizeof(name)) < 0)
                name[0] = '\0';
        if (keysrc_format(&chain->src[i + 1], next, sizeof(next)) < 0)
                next[0] = '\0';
        resume_say(c, LOG_WARNING, "cannot get the key from %s (%s): trying %s", name, what, next);
}

/*
 * Liveness of the recovery path: a person at the console gets rd.thaw.timeout= of their own. The
 * unattended sources before the passphrase share one deadline and may have spent it all waiting
 * (for a TPM that is not on this host), which would leave the prompt no time to be answered in.
 */
static int fetch(const struct resume_ctx *c, const struct keysrc *src, const struct keysrc_ctx *kc,
                 struct secret **key)
{
        struct keysrc_ctx own = *kc;
        int64_t fresh = clock_now_ms() + (int64_t)c->args->timeout_s * 1000;

        if (src->type == KEYSRC_PASSPHRASE && fresh > own.deadline_ms)
                own.deadline_ms = fresh;
        return c->ops->fetch(src, &own, key);
}

/* Try each source in order; 0 once one unlocks dev, else why lists what each did. */
static int try_chain(const struct resume_ctx *c, const struct keychain *chain, const char *dev,
                     const struct keysrc_ctx *kc, const struct luks_policy *p, char *why, size_t size)
{
        int r;

        for (size_t i = 0; i < chain->n; i++) {
                struct secret *key = NULL;
                char name[KEYSRC_ARG_MAX + 16];

                int64_t t0 = clock_now_ms(), t1;

                kc->detail[0] = '\0';
                r = fetch(c, &chain->src[i], kc, &key);
                t1 = clock_now_ms();
                if (r < 0) {
                        const char *what = kc->detail[0] ? kc->detail : reason(r);

                        add_reason(why, size, &chain->src[i], what);
                        next_source(c, chain, i, what);
                        continue;
                }
                kc->detail[0] = '\0';
                r = activate(c, &chain->src[i], dev, key, p, kc->detail, kc->detail_size);
                secret_free(key); /* the key is not needed past activation, whatever happened */
                if (r == 0) {
                        if (keysrc_format(&chain->src[i], name, sizeof(name)) < 0)
                                name[0] = '\0';
                        resume_say(c, LOG_INFO, "unlocked %s as /dev/mapper/%s with %s (key %" PRId64 " ms, keyslot "
                            "and mapping %" PRId64 " ms)", dev, c->args->name, name, t1 - t0, clock_now_ms() - t1);
                        return 0;
                }
                if (r == -EPERM && kc->detail[0]) {
                        /* A passphrase's argon2 keyslots refused for their cost: say which. */
                        char what[700];

                        snprintf(what, sizeof(what), "%s (%s)", reason(r), kc->detail);
                        add_reason(why, size, &chain->src[i], what);
                        next_source(c, chain, i, what);
                        continue;
                }
                if (r == -ETIME) {
                        /*
                         * The deadline stopped the keyslot search after its one sure try (luks.h):
                         * not this key's fault, but not the device's either. The next source (a
                         * passphrase has a timeout of its own) still gets its try.
                         */
                        char what[700];

                        snprintf(what, sizeof(what), "not the key of the first keyslot tried, and "
                                 "rd.thaw.timeout= (%u s) passed before the next one was tried%s%s%s",
                                 c->args->timeout_s, kc->detail[0] ? " (" : "", kc->detail,
                                 kc->detail[0] ? ")" : "");
                        add_reason(why, size, &chain->src[i], what);
                        next_source(c, chain, i, what);
                        continue;
                }
                if (r == -EPERM)
                        next_source(c, chain, i, reason(r));
                if (r == -LUKS_EPOLICY)
                        return r; /* the header changed since check_header(): header_changed() says how */
                if (r != -EPERM) {
                        /* Not the key's fault: another key would fail the same way. */
                        add_reason(why, size, &chain->src[i], "activation failed: ");
                        snprintf(why + strlen(why), size - strlen(why), "%s", strerror(-r));
                        return r;
                }
                add_reason(why, size, &chain->src[i], reason(r));
        }
        return -ENOKEY;
}

/*
 * Security: the header passed check_header(), but the one luks_activate*() loaded (or checked again
 * on its mapping) did not: it changed in between. Whatever key opened it, the mapping is closed
 * (luks.c) and nothing of it is used. The reason, into why, comes from checking the device again.
 */
static void header_changed(const struct resume_ctx *c, const char *dev, const struct luks_policy *p, char *why,
                           size_t size)
{
        char own[LUKS_POLICY_WHY_MAX];
        int r = -LUKS_EPOLICY;

        own[0] = '\0';
        if (c->ops->check_header)
                r = c->ops->check_header(dev, p, NULL, own, sizeof(own));
        if (own[0])
                snprintf(why, size, "%s", own);
        else
                snprintf(why, size, "it changed after it was checked and failed the check made when "
                         "the key was tried%s%s", r < 0 && r != -LUKS_EPOLICY ? ": " : "",
                         r < 0 && r != -LUKS_EPOLICY ? strerror(-r) : "");
}

int unlock_device(const struct resume_ctx *c, struct unlock_keys *k, const char *dev, int64_t deadline, char *why,
                  size_t size)
{
        char detail[512];
        struct keysrc_ctx kc = { .root = c->root, .deadline_ms = deadline, .device = dev,
                                 .detail = detail, .detail_size = sizeof(detail) };
        struct luks_policy p = unlock_policy(c, deadline);
        int r;

        why[0] = '\0';
        r = keys_chain(c, k);
        if (r < 0) {
                snprintf(why, size, "rd.thaw.key=%.256s is not a valid key source chain", c->args->key);
                return r;
        }
        (void)imds_allow_urls(c->args->allow_url); /* checked when thaw.conf was read */
        /*
         * Security: the tokens only hand a provider what its source, named by the chain, looks for
         * (a sealed blob for tpm2); they never add a source.
         */
        kc.tokens = unlock_keys_tokens(c, k, dev);
        r = try_chain(c, &k->chain, dev, &kc, &p, why, size);
        if (r == -LUKS_EPOLICY)
                header_changed(c, dev, &p, why, size);
        return r;
}
