/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcryptsetup-token-thaw.so: libcryptsetup's external token API for the thaw-* tokens, over libthaw. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libcryptsetup.h>
#include <json-c/json.h>
#include "base/clock.h"
#include "keysrc.h"
#include "luks.h"
#include "luks_token.h"
#include "system/power.h"
#include "secret.h"

/*
 * On a running system a key source is there or it is not; the wait only covers a metadata service
 * answering slowly. cryptsetup may try several tokens, so each gets at most this long.
 */
#define PLUGIN_FETCH_MS 2000
#define WHY_MAX 160

/* The ABI (CRYPTSETUP_TOKEN_1.0); token_plugin.sym exports these and nothing else. */
int cryptsetup_token_open(struct crypt_device *cd, int token, char **buffer, size_t *buffer_len,
                          void *usrptr);
int cryptsetup_token_open_pin(struct crypt_device *cd, int token, const char *pin, size_t pin_size,
                              char **buffer, size_t *buffer_len, void *usrptr);
void cryptsetup_token_buffer_free(void *buffer, size_t buffer_len);
int cryptsetup_token_validate(struct crypt_device *cd, const char *json);
void cryptsetup_token_dump(struct crypt_device *cd, const char *json);
const char *cryptsetup_token_version(void);

/* The key source a token names, read strictly: the header is not authenticated. */
static int token_source(struct crypt_device *cd, int token, struct keysrc *src)
{
        const char *json = NULL;
        char why[WHY_MAX];
        int r;

        r = crypt_token_json_get(cd, token, &json);
        if (r < 0 || !json)
                return -ENOENT;
        r = luks_token_check(json, src, why, sizeof(why));
        if (r == -EINVAL)
                crypt_logf(cd, CRYPT_LOG_VERBOSE, "thaw token %d is malformed: %s.\n", token, why);
        return r;
}

/*
 * libcryptsetup's token loop goes on after -ENOENT (token unusable) and -EAGAIN (what it needs is
 * not present here); any other error stops it, so only those that are not the source's stay as
 * they are.
 */
static int open_errno(int r)
{
        switch (r) {
        case -ENOENT:
        case -ENODEV:
        case -ETIMEDOUT:
        case -ECONNREFUSED:
        case -ENOPKG:
                return -EAGAIN;
        case -ENOMEM:
                return r;
        default:
                return -ENOENT;
        }
}

/* Half of this machine's RAM, as `thaw resume` allows a typed passphrase's argon2; 0 if unknown (none). */
static uint64_t argon2_max_kib(void)
{
        struct power_meminfo m;

        return power_meminfo("", &m) < 0 ? 0 : m.mem_total_kib / 2;
}

/*
 * Security: the header cd holds is the one libcryptsetup tries our key (or the PIN) on, and through
 * a token it runs the KDF of every keyslot the token lists itself: no slot choice and no deadline
 * of ours. So before any key is read or handed over, for every source type:
 * - the header passes the policy (no cipher_null segment or keyslot: CVE-2025-59054 would open a
 *   forged cipher_null keyslot with any key; a capped digest). FOREIGN: a plugin opens roots as
 *   well as thaw's swap devices, and has no thaw.conf to tell them apart.
 * - every keyslot the token is bound to is one thaw itself would try (luks_slot_cheap_cd()): cheap
 *   PBKDF2, and for a passphrase typed by a person argon2 within half the RAM and the work cap, as
 *   `thaw resume` does. A forged token bound to a keyslot with 2^31 iterations or 4 GiB of argon2
 *   would otherwise hang or OOM-kill systemd-cryptsetup. The count of the token's "keyslots" entries
 *   must match the keyslots found bound, so no entry libcryptsetup reads differently slips past.
 * 0, or -ENOENT (logged): libcryptsetup goes on to its next token.
 */
static int token_guard(struct crypt_device *cd, int token, const struct keysrc *src)
{
        static const struct luks_policy plugin_policy = { .profile = LUKS_PROFILE_FOREIGN };
        struct json_object *o = NULL, *slots = NULL;
        char why[LUKS_POLICY_WHY_MAX];
        const char *json = NULL;
        uint64_t kib = src->type == KEYSRC_PASSPHRASE ? argon2_max_kib() : 0;
        size_t listed = 0, bound = 0;
        int r, max = crypt_keyslot_max(CRYPT_LUKS2);

        r = luks_header_check_cd(cd, &plugin_policy, why, sizeof(why));
        if (r < 0) {
                crypt_logf(cd, CRYPT_LOG_ERROR, "thaw token %d: LUKS2 header refused before any key was tried: "
                           "%s.\n", token, *why ? why : strerror(-r));
                return -ENOENT;
        }
        /* token_source() read this token strictly already: "keyslots" is an array of short numbers. */
        if (crypt_token_json_get(cd, token, &json) < 0 || !json)
                return -ENOENT;
        o = json_tokener_parse(json);
        if (o && json_object_object_get_ex(o, "keyslots", &slots) && json_object_is_type(slots, json_type_array))
                listed = json_object_array_length(slots);
        json_object_put(o);
        for (int slot = 0; slot < max; slot++) {
                if (crypt_token_is_assigned(cd, token, slot) != 0)
                        continue;
                bound++;
                if (!luks_slot_cheap_cd(cd, slot, kib)) {
                        crypt_logf(cd, CRYPT_LOG_ERROR, "thaw token %d: keyslot %d is inactive or costs more than "
                                   "thaw would try (%s): token refused before its key was read.\n", token, slot,
                                   kib ? "cheap PBKDF2 or argon2 within half the RAM" : "cheap PBKDF2 only");
                        return -ENOENT;
                }
        }
        if (bound == 0 || bound != listed) {
                crypt_logf(cd, CRYPT_LOG_ERROR, "thaw token %d: bound to %zu keyslots, %zu of them found: token "
                           "refused before its key was read.\n", token, listed, bound);
                return -ENOENT;
        }
        return 0;
}

/*
 * Security: unlike `thaw resume`, which takes its sources from the kernel command line only, a token
 * plugin reads the source from the (unauthenticated) header: that is what cryptsetup asks of it. The
 * worst a forged token can do is make this read a file, a fw_cfg blob, a config drive or the
 * link-local metadata service and try what it finds as a passphrase; nothing is written or sent on.
 * The caller has passed token_guard().
 */
static int fetch_key(struct crypt_device *cd, int token, const struct keysrc *src, char **buffer,
                     size_t *buffer_len)
{
        /* The provider sees this token only (a tpm2 source takes its sealed blob from it). Per call:
         * libcryptsetup may open tokens of several devices at once (one context per thread). */
        struct luks_tokens *one;
        struct keysrc_ctx kc = { .root = "" };
        const char *json = NULL;
        struct secret *key = NULL;
        char name[KEYSRC_ARG_MAX + 32];
        char *copy;
        int r;

        if (crypt_token_json_get(cd, token, &json) < 0 || !json)
                return -ENOENT;
        one = calloc(1, sizeof(*one));
        if (!one)
                return -ENOMEM;
        one->n = 1;
        one->t[0].id = token;
        snprintf(one->t[0].type, sizeof(one->t[0].type), "%s%s", LUKS_TOKEN_PREFIX, keysrc_type_name(src->type));
        one->t[0].json = (char *)json; /* libcryptsetup's, valid while cd is; not ours to free */
        kc.tokens = one;
        kc.deadline_ms = clock_now_ms() + PLUGIN_FETCH_MS;
        r = keysrc_fetch(src, &kc, &key);
        free(one);
        if (r < 0) {
                if (keysrc_format(src, name, sizeof(name)) < 0)
                        name[0] = '\0';
                crypt_logf(cd, CRYPT_LOG_VERBOSE, "thaw token %d: cannot read the key from %s (%s).\n",
                           token, name, keysrc_strerror(r));
                return open_errno(r);
        }
        /*
         * Security: the key handed to libcryptsetup is a copy of ours; it gets the same care (a locked
         * mapping of its own, kept out of core dumps: secret_map()). libcryptsetup owns it from here
         * and hands it to cryptsetup_token_buffer_free(), which wipes and unmaps it.
         */
        copy = secret_map(key->len);
        if (!copy) {
                secret_free(key);
                return -ENOMEM;
        }
        memcpy(copy, key->data, key->len);
        *buffer = copy;
        *buffer_len = key->len;
        secret_free(key);
        return 0;
}

/* What both opens start with: somewhere to put the key, and the token's source (-ENOENT: not ours). */
static int open_source(struct crypt_device *cd, int token, char **buffer, size_t *buffer_len, struct keysrc *src)
{
        int r;

        if (!buffer || !buffer_len)
                return -EINVAL;
        r = token_source(cd, token, src);
        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        return 0;
}

int cryptsetup_token_open(struct crypt_device *cd, int token, char **buffer, size_t *buffer_len,
                          void *usrptr)
{
        struct keysrc src;
        int r;

        (void)usrptr;
        r = open_source(cd, token, buffer, buffer_len, &src);
        if (r < 0)
                return r;
        /* A passphrase is libcryptsetup's to ask for (as a PIN): never a prompt of ours on its console.
         * Nothing is read or handed over here; open_pin() checks before it hands the PIN over. */
        if (src.type == KEYSRC_PASSPHRASE)
                return -ENOANO;
        r = token_guard(cd, token, &src);
        return r < 0 ? r : fetch_key(cd, token, &src, buffer, buffer_len);
}

/* The PIN libcryptsetup asked for is a thaw-passphrase token's passphrase; other tokens need none. */
int cryptsetup_token_open_pin(struct crypt_device *cd, int token, const char *pin, size_t pin_size,
                              char **buffer, size_t *buffer_len, void *usrptr)
{
        struct keysrc src;
        char *copy;
        int r;

        (void)usrptr;
        r = open_source(cd, token, buffer, buffer_len, &src);
        if (r < 0)
                return r;
        /* Security: the same checks as every other token before the PIN goes anywhere (token_guard()). */
        r = token_guard(cd, token, &src);
        if (r < 0)
                return r;
        if (src.type != KEYSRC_PASSPHRASE)
                return fetch_key(cd, token, &src, buffer, buffer_len);
        if (!pin || pin_size == 0 || pin_size > SECRET_MAX)
                return -ENOANO;
        copy = secret_map(pin_size); /* every buffer we hand out: cryptsetup_token_buffer_free() unmaps it */
        if (!copy)
                return -ENOMEM;
        memcpy(copy, pin, pin_size);
        *buffer = copy;
        *buffer_len = pin_size;
        return 0;
}

void cryptsetup_token_buffer_free(void *buffer, size_t buffer_len)
{
        secret_unmap(buffer, buffer_len);
}

/* Called before every open and by `cryptsetup token import`: anything but a well-formed token is refused. */
int cryptsetup_token_validate(struct crypt_device *cd, const char *json)
{
        struct keysrc src;
        char why[WHY_MAX];
        int r;

        r = luks_token_check(json, &src, why, sizeof(why));
        if (r == -EINVAL)
                crypt_logf(cd, CRYPT_LOG_ERROR, "thaw token refused: %s.\n", why);
        return r < 0 ? -EINVAL : 0;
}

/* What `cryptsetup luksDump` prints under the token's type: the source, never key material. */
void cryptsetup_token_dump(struct crypt_device *cd, const char *json)
{
        struct keysrc src;
        char why[WHY_MAX], name[KEYSRC_ARG_MAX + 32];

        if (luks_token_check(json, &src, why, sizeof(why)) < 0) {
                crypt_logf(cd, CRYPT_LOG_NORMAL, "\tthaw-source: (malformed: %s)\n", why);
                return;
        }
        if (keysrc_format(&src, name, sizeof(name)) < 0)
                return;
        crypt_logf(cd, CRYPT_LOG_NORMAL, "\tthaw-source: %s\n", name);
}

const char *cryptsetup_token_version(void)
{
        return THAW_VERSION;
}
