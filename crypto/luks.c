/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LUKS2 container of the thaw swap device and its thaw-* tokens, through libcryptsetup only. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libcryptsetup.h>
#include "base/clock.h"
#include "luks.h"
#include "luks_policy.h"
#include "luks_token.h"
#include "ticket.h"

#define LUKS_VK_SIZE 64          /* aes-xts with two 256-bit keys */
#define LUKS_HMAC_KEY_SIZE 32    /* hmac(sha256): the integrity key follows the cipher key */
#define LUKS_INTEGRITY "hmac(sha256)"
#define LUKS_WIPE_BLOCK (1024 * 1024)
#define LUKS_SECTOR 4096

/* A library never prints: errors reach the caller as -errno and the program logs them once. */
static void log_silent(int level, const char *msg, void *usrptr)
{
        (void)level;
        (void)msg;
        (void)usrptr;
}

static const struct luks_policy default_policy = { .profile = LUKS_PROFILE_THAW };

static const struct luks_policy *policy_or_default(const struct luks_policy *p)
{
        return p ? p : &default_policy;
}

/*
 * Security: the header as libcryptsetup loaded it into cd, the very one that is then used to try
 * keys, checked against p (why may be NULL). What is checked is what is used.
 */
static int check_cd(struct crypt_device *cd, const struct luks_policy *p, char *fp, char *why, size_t size)
{
        const char *json = NULL;
        int r = crypt_dump_json(cd, &json, 0);

        if (r < 0)
                return r;
        return luks_policy_check_json(json, crypt_get_uuid(cd), p, fp, why, size);
}

/* Every key that is tried waits for this: the boot's rd.thaw.timeout= bounds the unlock too. */
static int past_deadline(const struct luks_policy *p)
{
        return p && p->deadline_ms > 0 && clock_now_ms() >= p->deadline_ms;
}

int luks_init_quiet(const char *dev, struct crypt_device **out)
{
        struct crypt_device *cd = NULL;
        int r;

        crypt_set_log_callback(NULL, log_silent, NULL);
        r = crypt_init(&cd, dev);
        if (r < 0)
                return r;
        crypt_set_log_callback(cd, log_silent, NULL);
        *out = cd;
        return 0;
}

/* With p, the loaded header must pass it before anything else happens (nothing tried yet). */
static int luks_open(const char *dev, int load, const struct luks_policy *p, struct crypt_device **out)
{
        struct crypt_device *cd = NULL;
        struct stat st;
        int r;

        if (!dev || !out)
                return -EINVAL;
        /* crypt_init() says -ENOTBLK for a missing path; callers need -ENOENT to wait for a device. */
        if (stat(dev, &st) < 0)
                return -errno;
        r = luks_init_quiet(dev, &cd);
        if (r < 0)
                return r;
        if (load) {
                r = crypt_load(cd, CRYPT_LUKS2, NULL);
                if (r == 0 && p)
                        r = check_cd(cd, p, NULL, NULL, 0);
                if (r < 0) {
                        crypt_free(cd);
                        return r;
                }
        }
        *out = cd;
        return 0;
}

int luks_probe(const char *dev)
{
        struct crypt_device *cd = NULL;
        int r;

        r = luks_open(dev, 0, NULL, &cd);
        if (r < 0)
                return r;
        r = crypt_load(cd, CRYPT_LUKS2, NULL);
        crypt_free(cd);
        if (r == -EINVAL) /* no header, a LUKS1 header, or a damaged one: not a LUKS2 container */
                return 0;
        return r < 0 ? r : 1;
}

/* The key is 256 random bits (or a sealed one): stretching buys nothing, argon2 would cost memory. */
static const struct crypt_pbkdf_type thaw_pbkdf = {
        .type = CRYPT_KDF_PBKDF2,
        .hash = "sha256",
        .iterations = LUKS_PBKDF2_ITER,
        .flags = CRYPT_PBKDF_NO_BENCHMARK,
};

/*
 * A passphrase a person chose is guessable: argon2id, at a fixed cost so every machine that may
 * resume the image can open it (64 MiB fits half the RAM of any VM that hibernates, and 4 passes
 * take about a quarter of a second on one core).
 */
static const struct crypt_pbkdf_type passphrase_pbkdf = {
        .type = CRYPT_KDF_ARGON2ID,
        .iterations = LUKS_PASSPHRASE_PASSES,
        .max_memory_kb = LUKS_PASSPHRASE_KIB,
        .parallel_threads = 1,
        .flags = CRYPT_PBKDF_NO_BENCHMARK,
};

static int add_source(struct crypt_device *cd, const struct secret *vk, const struct keysrc_enrollment *e)
{
        int slot, token, r;

        if (!e->key || e->key->len == 0 || !e->token || strlen(e->token) >= LUKS_TOKEN_JSON_MAX)
                return -EINVAL;
        r = crypt_set_pbkdf_type(cd, e->typed ? &passphrase_pbkdf : &thaw_pbkdf);
        if (r < 0)
                return r;
        slot = crypt_keyslot_add_by_volume_key(cd, CRYPT_ANY_SLOT, (const char *)vk->data, vk->len,
                                               (const char *)e->key->data, e->key->len);
        if (slot < 0)
                return slot;
        /* A keyslot without its token is a key nobody can list or remove: undo it on failure. */
        token = crypt_token_json_set(cd, CRYPT_ANY_TOKEN, e->token);
        if (token < 0) {
                (void)crypt_keyslot_destroy(cd, slot);
                return token;
        }
        r = crypt_token_assign_keyslot(cd, token, slot);
        if (r < 0) {
                (void)crypt_token_json_set(cd, token, NULL);
                (void)crypt_keyslot_destroy(cd, slot);
                return r;
        }
        return token;
}

/*
 * The ticket key of this volume into root's keyring (ticket.h), derived from its volume key:
 * thaw resume checks the image's ticket with it, and thaw hibernate, in the system that boots or
 * resumes, authenticates the next one with it. Best effort: without it thaw hibernate refuses and
 * says why, and an image's ticket cannot be checked (the image is not resumed).
 */
static void keep_ticket_key(struct crypt_device *cd, const struct secret *vk)
{
        const char *uuid = crypt_get_uuid(cd);
        struct secret *tk = NULL;

        if (uuid && ticket_key_derive(vk->data, vk->len, uuid, &tk) == 0)
                (void)ticket_key_store(uuid, tk);
        secret_free(tk);
}

static int wipe_progress(uint64_t size, uint64_t offset, void *usrptr)
{
        const struct luks_progress *p = usrptr;

        p->fn(offset, size, p->userdata);
        return 0;
}

/*
 * dm-integrity starts with tags that match nothing: every read of a sector never written is an I/O
 * error (udev's blkid probing the end of the device, say). Writing zeroes once through a private,
 * journal-less mapping gives every sector a valid tag, as cryptsetup luksFormat does.
 */
static int wipe_tags(struct crypt_device *cd, const struct secret *vk, const struct luks_progress *progress)
{
        char name[64], path[256];
        int r, r2;

        if (snprintf(name, sizeof(name), "thaw-wipe-%ld", (long)getpid()) >= (int)sizeof(name) ||
            snprintf(path, sizeof(path), "%s/%s", crypt_get_dir(), name) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        r = crypt_activate_by_volume_key(cd, name, (const char *)vk->data, vk->len,
                                         CRYPT_ACTIVATE_PRIVATE | CRYPT_ACTIVATE_NO_JOURNAL);
        if (r < 0)
                return r;
        r = crypt_wipe(cd, path, CRYPT_WIPE_ZERO, 0, 0, LUKS_WIPE_BLOCK, 0,
                       progress && progress->fn ? wipe_progress : NULL, (void *)progress);
        r2 = crypt_deactivate(cd, name);
        return r < 0 ? r : r2 < 0 ? r2 : 0;
}

int luks_format(const char *dev, const char *label, size_t n, const struct keysrc_enrollment *e,
                bool integrity, const struct luks_progress *progress)
{
        struct crypt_pbkdf_type pbkdf = thaw_pbkdf;
        /*
         * Security: with integrity, every 4096-byte sector carries an HMAC-SHA256 tag over its
         * ciphertext and sector number, so a changed, moved or fabricated sector is an I/O error,
         * not plaintext the kernel would restore. aes-xts + hmac(sha256) rather than aes-gcm-random:
         * a random 96-bit GCM nonce per write is unsafe for a device written as much as swap.
         */
        struct crypt_params_luks2 params = { .pbkdf = &pbkdf, .sector_size = LUKS_SECTOR, .label = label,
                                             .integrity = integrity ? LUKS_INTEGRITY : NULL };
        struct crypt_device *cd = NULL;
        struct secret *vk = NULL;
        int r;

        if (!e || n == 0 || n > KEYCHAIN_MAX)
                return -EINVAL;
        r = luks_open(dev, 0, NULL, &cd);
        if (r < 0)
                return r;
        r = secret_random(LUKS_VK_SIZE + (integrity ? LUKS_HMAC_KEY_SIZE : 0), &vk);
        if (r < 0)
                goto out;
        r = crypt_set_pbkdf_type(cd, &pbkdf);
        if (r < 0)
                goto out;
        r = crypt_format(cd, CRYPT_LUKS2, "aes", "xts-plain64", NULL, (const char *)vk->data, vk->len,
                         &params);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = add_source(cd, vk, &e[i]);
        if (r >= 0 && integrity)
                r = wipe_tags(cd, vk, progress);
        if (r >= 0)
                keep_ticket_key(cd, vk);
out:
        secret_free(vk);
        crypt_free(cd); /* also wipes libcryptsetup's own copy of the volume key */
        return r < 0 ? r : 0;
}

/*
 * Security: not CRYPT_ANY_SLOT. Anyone who can write the disk can add keyslots to this unsigned
 * header; libcryptsetup would run each one's KDF, so an argon2 slot asking for gigabytes or a
 * PBKDF2 slot with 10^9 iterations would hang or kill the boot. Only cheap PBKDF2 slots are tried,
 * and for a passphrase typed by a person (argon2_max_kib > 0) also argon2 slots whose memory and
 * work fit; one that does not is named in why instead of being tried.
 */
static int slot_allowed(struct crypt_device *cd, int slot, uint64_t argon2_max_kib, char *why, size_t size)
{
        struct crypt_pbkdf_type pbkdf;
        crypt_keyslot_info st = crypt_keyslot_status(cd, slot);
        size_t used = why ? strlen(why) : 0;
        uint64_t mem, work;

        if (st != CRYPT_SLOT_ACTIVE && st != CRYPT_SLOT_ACTIVE_LAST)
                return 0; /* inactive, or unbound: it cannot open the data segment anyway */
        memset(&pbkdf, 0, sizeof(pbkdf));
        if (crypt_keyslot_get_pbkdf(cd, slot, &pbkdf) < 0 || !pbkdf.type)
                return 0;
        if (strcmp(pbkdf.type, CRYPT_KDF_PBKDF2) == 0)
                return pbkdf.iterations <= LUKS_PBKDF2_ITER_MAX;
        if (argon2_max_kib == 0 || (strcmp(pbkdf.type, CRYPT_KDF_ARGON2I) != 0 &&
                                    strcmp(pbkdf.type, CRYPT_KDF_ARGON2ID) != 0))
                return 0;
        mem = pbkdf.max_memory_kb;
        work = mem * pbkdf.iterations;
        if (mem <= argon2_max_kib && work <= LUKS_ARGON2_WORK_MAX)
                return 1;
        if (why && used < size) {
                if (mem > argon2_max_kib)
                        snprintf(why + used, size - used, "%skeyslot %d (%s) needs %" PRIu64
                                 " KiB of memory, more than half of the RAM (%" PRIu64 " KiB): not tried",
                                 used ? "; " : "", slot, pbkdf.type, mem, argon2_max_kib);
                else
                        snprintf(why + used, size - used, "%skeyslot %d (%s) asks for %u passes over %"
                                 PRIu64 " KiB, more than thaw allows: not tried", used ? "; " : "", slot,
                                 pbkdf.type, pbkdf.iterations, mem);
        }
        return 0;
}

int luks_slot_cheap_cd(struct crypt_device *cd, int slot, uint64_t argon2_max_kib)
{
        if (!cd || slot < 0 || slot >= crypt_keyslot_max(CRYPT_LUKS2))
                return 0;
        return slot_allowed(cd, slot, argon2_max_kib, NULL, 0);
}

/*
 * Open keyslot slot with key and activate name with the volume key it gives: one KDF run, as
 * crypt_activate_by_passphrase() would do, and the volume key at hand for the ticket key.
 */
static int activate_slot(struct crypt_device *cd, const char *name, int slot, const struct secret *key)
{
        struct secret *vk = NULL;
        size_t len;
        int r = secret_new(LUKS_VK_SIZE * 2, &vk);

        if (r < 0)
                return r;
        len = vk->cap;
        r = crypt_volume_key_get(cd, slot, (char *)vk->data, &len, (const char *)key->data, key->len);
        if (r >= 0) {
                vk->len = len;
                r = crypt_activate_by_volume_key(cd, name, (const char *)vk->data, vk->len, 0);
                if (r >= 0)
                        keep_ticket_key(cd, vk);
        }
        secret_free(vk);
        return r;
}

static int activate(const char *dev, const char *name, const struct secret *key, uint64_t argon2_max_kib,
                    const struct luks_policy *p, char *why, size_t size)
{
        struct crypt_device *cd = NULL;
        int r, slots, tried = 0;

        if (!key || key->len == 0)
                return -EINVAL;
        p = policy_or_default(p);
        r = luks_open(dev, 1, p, &cd);
        if (r < 0)
                return r;
        slots = crypt_keyslot_max(CRYPT_LUKS2);
        r = -EPERM; /* no allowed keyslot takes this key (or there is none) */
        for (int slot = 0; slot < slots && r == -EPERM; slot++) {
                if (!slot_allowed(cd, slot, argon2_max_kib, why, size))
                        continue;
                /*
                 * The first allowed keyslot is always tried, however late: a key that took the whole
                 * deadline to fetch (a slow TPM), or rd.thaw.timeout=0, still gets its one try, and
                 * that try is bounded by the caps the policy put on the digest and this keyslot.
                 * The deadline only stops the search for further keyslots.
                 */
                if (tried++ && past_deadline(p)) {
                        r = -ETIME;
                        break;
                }
                /* With name NULL this only checks the key: no device-mapper needed. */
                r = name ? activate_slot(cd, name, slot, key) :
                           crypt_activate_by_passphrase(cd, NULL, slot, (const char *)key->data, key->len, 0);
        }
        /* Cheap, and the same cd: the header the mapping was made from still passes. */
        if (r >= 0 && check_cd(cd, p, NULL, NULL, 0) < 0) {
                if (name)
                        (void)crypt_deactivate(cd, name);
                r = -LUKS_EPOLICY;
        }
        crypt_free(cd);
        return r < 0 ? r : 0; /* other errors than -EPERM are not the key's: they stop the search */
}

int luks_activate(const char *dev, const char *name, const struct secret *key, const struct luks_policy *p)
{
        return activate(dev, name, key, 0, p, NULL, 0);
}

int luks_activate_passphrase(const char *dev, const char *name, const struct secret *key,
                             uint64_t argon2_max_kib, const struct luks_policy *p, char *why, size_t size)
{
        if (why && size)
                why[0] = '\0';
        return activate(dev, name, key, argon2_max_kib ? argon2_max_kib : 1, p, why, size);
}

/* The cheap keyslot that key opens, -EPERM if none (as luks_activate(), without activating). */
static int cheap_slot_of(struct crypt_device *cd, const struct secret *key)
{
        int slots = crypt_keyslot_max(CRYPT_LUKS2);

        for (int slot = 0; slot < slots; slot++) {
                int r;

                if (!luks_slot_cheap_cd(cd, slot, 0))
                        continue;
                r = crypt_activate_by_passphrase(cd, NULL, slot, (const char *)key->data, key->len, 0);
                if (r != -EPERM)
                        return r < 0 ? r : slot;
        }
        return -EPERM;
}

/* 1 if a thaw token already names src. */
static int has_token(struct crypt_device *cd, const struct keysrc *src)
{
        for (int t = 0; t < LUKS_TOKENS_MAX; t++) {
                const char *json = NULL;
                struct keysrc have;

                if (crypt_token_json_get(cd, t, &json) < 0 || !json || luks_token_parse(json, &have) < 0)
                        continue;
                if (have.type == src->type && strcmp(have.arg, src->arg) == 0)
                        return 1;
        }
        return 0;
}

static int enroll_one(struct crypt_device *cd, const struct secret *existing, const struct keysrc *src,
                      const struct keysrc_enrollment *e)
{
        int slot, token, r;

        if (!e->key || e->key->len == 0 || !e->token || strlen(e->token) >= LUKS_TOKEN_JSON_MAX)
                return -EINVAL;
        slot = cheap_slot_of(cd, e->key);
        /* Enrolled before (setup run again): the slot and its token are there. */
        if (slot >= 0 && has_token(cd, src))
                return 0;
        if (slot == -EPERM) {
                if (!existing)
                        return -ENOKEY;
                /* existing is checked against every slot, the admin's own (argon2) ones included. */
                slot = crypt_keyslot_add_by_passphrase(cd, CRYPT_ANY_SLOT, (const char *)existing->data,
                                                       existing->len, (const char *)e->key->data,
                                                       e->key->len);
        }
        if (slot < 0)
                return slot;
        token = crypt_token_json_set(cd, CRYPT_ANY_TOKEN, e->token);
        if (token < 0)
                return token;
        r = crypt_token_assign_keyslot(cd, token, slot);
        return r < 0 ? r : 0;
}

int luks_enroll_sources(const char *dev, const struct secret *existing, const struct keychain *srcs,
                        const struct keysrc_enrollment *e, const struct luks_policy *p)
{
        /* The same cheap PBKDF2 as luks_format(): the boot only tries such slots. */
        struct crypt_pbkdf_type pbkdf = thaw_pbkdf;
        struct crypt_device *cd = NULL;
        int r;

        if (!srcs || !e || srcs->n == 0 || srcs->n > KEYCHAIN_MAX)
                return -EINVAL;
        r = luks_open(dev, 1, policy_or_default(p), &cd);
        if (r < 0)
                return r;
        r = crypt_set_pbkdf_type(cd, &pbkdf);
        for (size_t i = 0; r >= 0 && i < srcs->n; i++)
                r = enroll_one(cd, existing, &srcs->src[i], &e[i]);
        crypt_free(cd);
        return r < 0 ? r : 0;
}

int luks_check_key(const char *dev, const struct secret *key, const struct luks_policy *p)
{
        return luks_activate(dev, NULL, key, p);
}

/* The volume key, recovered through the first cheap keyslot that takes key; -EPERM if none does. */
static int volume_key(struct crypt_device *cd, const struct secret *key, struct secret **out)
{
        struct secret *vk = NULL;
        int r, slots = crypt_keyslot_max(CRYPT_LUKS2);

        r = secret_new(LUKS_VK_SIZE * 2, &vk);
        if (r < 0)
                return r;
        r = -EPERM;
        for (int slot = 0; slot < slots && r == -EPERM; slot++) {
                size_t len = vk->cap;

                if (!luks_slot_cheap_cd(cd, slot, 0))
                        continue;
                r = crypt_volume_key_get(cd, slot, (char *)vk->data, &len, (const char *)key->data, key->len);
                if (r >= 0)
                        vk->len = len;
        }
        if (r < 0) {
                secret_free(vk);
                return r;
        }
        *out = vk;
        return 0;
}

int luks_ticket_key(const char *dev, const struct secret *key, const struct luks_policy *p, struct secret **out)
{
        struct crypt_device *cd = NULL;
        struct secret *vk = NULL;
        const char *uuid;
        int r;

        if (!key || key->len == 0 || !out)
                return -EINVAL;
        r = luks_open(dev, 1, policy_or_default(p), &cd);
        if (r < 0)
                return r;
        r = volume_key(cd, key, &vk);
        uuid = crypt_get_uuid(cd);
        if (r == 0 && !uuid)
                r = -EINVAL;
        if (r == 0)
                r = ticket_key_derive(vk->data, vk->len, uuid, out);
        if (r == 0)
                (void)ticket_key_store(uuid, *out);
        secret_free(vk);
        crypt_free(cd);
        return r;
}

int luks_enroll(const char *dev, const struct secret *unlock, const struct keysrc_enrollment *e, int *token_id,
                const struct luks_policy *p)
{
        struct crypt_pbkdf_type pbkdf = thaw_pbkdf;
        struct crypt_device *cd = NULL;
        struct secret *vk = NULL;
        int r;

        if (!unlock || unlock->len == 0 || !e || !token_id)
                return -EINVAL;
        r = luks_open(dev, 1, policy_or_default(p), &cd);
        if (r < 0)
                return r;
        r = volume_key(cd, unlock, &vk);
        if (r == 0)
                r = crypt_set_pbkdf_type(cd, &pbkdf);
        if (r == 0)
                r = add_source(cd, vk, e);
        if (r >= 0)
                *token_id = r;
        secret_free(vk);
        crypt_free(cd);
        return r < 0 ? r : 0;
}

/* 1 if a token other than id is bound to slot. */
static int slot_shared(struct crypt_device *cd, int id, int slot)
{
        for (int other = 0; other < LUKS_TOKENS_MAX; other++) {
                if (other != id && crypt_token_status(cd, other, NULL) != CRYPT_TOKEN_INACTIVE &&
                    crypt_token_is_assigned(cd, other, slot) == 0)
                        return 1;
        }
        return 0;
}

int luks_token_remove(const char *dev, int id, uint32_t *kept, const struct luks_policy *p)
{
        struct crypt_device *cd = NULL;
        const char *type = NULL;
        uint32_t doomed = 0, shared = 0;
        int r, slots, active = 0, n_doomed = 0;

        if (id < 0 || id >= LUKS_TOKENS_MAX)
                return -EINVAL;
        r = luks_open(dev, 1, policy_or_default(p), &cd);
        if (r < 0)
                return r;
        if (crypt_token_status(cd, id, &type) == CRYPT_TOKEN_INACTIVE) {
                r = -ENOENT;
                goto out;
        }
        slots = crypt_keyslot_max(CRYPT_LUKS2);
        for (int slot = 0; slot < slots && slot < 32; slot++) {
                crypt_keyslot_info st = crypt_keyslot_status(cd, slot);

                if (st != CRYPT_SLOT_ACTIVE && st != CRYPT_SLOT_ACTIVE_LAST)
                        continue;
                active++;
                if (crypt_token_is_assigned(cd, id, slot) != 0)
                        continue;
                /* A keyslot another token still refers to stays: that token would open nothing. */
                if (slot_shared(cd, id, slot)) {
                        shared |= 1u << slot;
                } else {
                        doomed |= 1u << slot;
                        n_doomed++;
                }
        }
        /* Refused before anything changes: a device with no keyslot left has lost its data. */
        if (n_doomed >= active) {
                r = -EBUSY;
                goto out;
        }
        for (int slot = 0; slot < 32 && r >= 0; slot++) {
                if (doomed & (1u << slot))
                        r = crypt_keyslot_destroy(cd, slot);
        }
        if (r >= 0)
                r = crypt_token_json_set(cd, id, NULL);
        if (r >= 0 && kept)
                *kept = shared;
out:
        crypt_free(cd);
        return r < 0 ? r : 0;
}

void luks_tokens_free(struct luks_tokens *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < t->n; i++)
                free(t->t[i].json);
        free(t);
}

int luks_tokens_read(const char *dev, struct luks_tokens **out)
{
        struct crypt_device *cd = NULL;
        struct luks_tokens *t;
        int r, slots;

        if (!out)
                return -EINVAL;
        r = luks_open(dev, 1, NULL, &cd);
        if (r < 0)
                return r;
        t = calloc(1, sizeof(*t));
        if (!t) {
                crypt_free(cd);
                return -ENOMEM;
        }
        slots = crypt_keyslot_max(CRYPT_LUKS2);
        for (int id = 0; id < LUKS_TOKENS_MAX && r >= 0; id++) {
                struct luks_token_info *i = &t->t[t->n];
                const char *type = NULL, *json = NULL;

                if (crypt_token_status(cd, id, &type) == CRYPT_TOKEN_INACTIVE || !type)
                        continue;
                if (crypt_token_json_get(cd, id, &json) < 0 || !json ||
                    strnlen(json, LUKS_TOKEN_READ_MAX + 1) > LUKS_TOKEN_READ_MAX)
                        continue;
                i->id = id;
                snprintf(i->type, sizeof(i->type), "%s", type);
                for (int slot = 0; slot < slots && slot < 32; slot++) {
                        if (crypt_token_is_assigned(cd, id, slot) == 0)
                                i->keyslots |= 1u << slot;
                }
                i->json = strdup(json);
                if (!i->json)
                        r = -ENOMEM;
                else
                        t->n++;
        }
        crypt_free(cd);
        if (r < 0) {
                luks_tokens_free(t);
                return r;
        }
        *out = t;
        return 0;
}

int luks_deactivate(const char *name)
{
        struct crypt_device *cd = NULL;
        int r;

        if (!name)
                return -EINVAL;
        crypt_set_log_callback(NULL, log_silent, NULL);
        r = crypt_init_by_name(&cd, name);
        if (r < 0)
                return r;
        r = crypt_deactivate(cd, name);
        /*
         * -EBUSY right after activation is usually udev's blkid probing the fresh device. The
         * mapping must go (an image on it must not be swapon'ed), so the kernel removes it at its
         * last close instead.
         */
        if (r == -EBUSY)
                r = crypt_deactivate_by_name(cd, name, CRYPT_DEACTIVATE_DEFERRED);
        crypt_free(cd);
        return r < 0 ? r : 0;
}

int luks_is_active(const char *name)
{
        crypt_status_info st;

        if (!name)
                return 0;
        crypt_set_log_callback(NULL, log_silent, NULL);
        st = crypt_status(NULL, name);
        return st == CRYPT_ACTIVE || st == CRYPT_BUSY;
}

int luks_active_integrity(const char *name)
{
        struct crypt_params_integrity ip = { 0 };
        struct crypt_device *cd = NULL;
        int r;

        crypt_set_log_callback(NULL, log_silent, NULL);
        r = crypt_init_by_name(&cd, name);
        if (r == 0)
                r = crypt_get_integrity_info(cd, &ip);
        /* ip.integrity points into cd's header: read it before crypt_free(). */
        if (r == 0)
                r = ip.tag_size > 0 || (ip.integrity && *ip.integrity);
        crypt_free(cd);
        return r;
}

int luks_locking_off(void)
{
        return crypt_metadata_locking(NULL, 0);
}

int luks_active_device(const char *name, char *dev, size_t size)
{
        struct crypt_device *cd = NULL;
        const char *d;
        int r;

        if (!name || !dev)
                return -EINVAL;
        crypt_set_log_callback(NULL, log_silent, NULL);
        r = crypt_init_by_name(&cd, name);
        if (r < 0)
                return r;
        d = crypt_get_device_name(cd);
        if (!d)
                r = -ENODATA;
        else if (strlen(d) >= size)
                r = -ENAMETOOLONG;
        else
                memcpy(dev, d, strlen(d) + 1);
        crypt_free(cd);
        return r;
}

int luks_uuid(const char *dev, char *buf, size_t size)
{
        struct crypt_device *cd = NULL;
        const char *uuid;
        int r;

        if (!buf)
                return -EINVAL;
        r = luks_open(dev, 1, NULL, &cd);
        if (r < 0)
                return r;
        uuid = crypt_get_uuid(cd);
        if (!uuid)
                r = -ENODATA;
        else if (strlen(uuid) >= size)
                r = -ENAMETOOLONG;
        else
                memcpy(buf, uuid, strlen(uuid) + 1);
        crypt_free(cd);
        return r;
}

int luks_token_sources(const char *dev, struct keychain *out)
{
        struct crypt_device *cd = NULL;
        struct keychain c = { 0 };
        int r;

        if (!out)
                return -EINVAL;
        r = luks_open(dev, 1, NULL, &cd);
        if (r < 0)
                return r;
        for (int t = 0; t < LUKS_TOKENS_MAX && c.n < KEYCHAIN_MAX; t++) {
                const char *json = NULL;

                /* Tokens that are absent, foreign or malformed are skipped: they name no thaw source. */
                if (crypt_token_json_get(cd, t, &json) < 0 || !json)
                        continue;
                if (luks_token_parse(json, &c.src[c.n]) == 0)
                        c.n++;
        }
        crypt_free(cd);
        *out = c;
        return 0;
}

int luks_header_check_cd(struct crypt_device *cd, const struct luks_policy *p, char *why, size_t size)
{
        if (why && size)
                why[0] = '\0';
        return cd ? check_cd(cd, policy_or_default(p), NULL, why, size) : -EINVAL;
}

int luks_header_check(const char *dev, const struct luks_policy *p, char *fp, char *why, size_t size)
{
        struct crypt_device *cd = NULL;
        int r;

        if (why && size)
                why[0] = '\0';
        r = luks_open(dev, 1, NULL, &cd);
        if (r < 0)
                return r;
        r = check_cd(cd, policy_or_default(p), fp, why, size);
        crypt_free(cd);
        return r;
}
