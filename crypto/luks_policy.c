/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LUKS2 header policy over the header JSON libcryptsetup loaded, and the header's fingerprint. */
#include "luks_policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <openssl/evp.h>

#include "luks.h"
#include "base/util.h"

#define NOT_OURS ": not a header thaw wrote"
#define FP_DOMAIN "thaw LUKS2 header fingerprint v1"
#define SHOWN_MAX 64

/* Header text in a message: printable ASCII only, capped (the header is the attacker's). */
static const char *shown(const char *s, char *buf, size_t size)
{
        size_t i = 0;

        for (; s && *s && i + 1 < size && i < SHOWN_MAX; s++)
                buf[i++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
        buf[i] = '\0';
        return buf;
}

static struct json_object *member(struct json_object *o, const char *key)
{
        struct json_object *v = NULL;

        return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *str_of(struct json_object *o, const char *key)
{
        struct json_object *v = member(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* The integer at key, -1 if absent, not an integer or negative. */
static int64_t int_of(struct json_object *o, const char *key)
{
        struct json_object *v = member(o, key);
        int64_t n;

        if (!v || !json_object_is_type(v, json_type_int))
                return -1;
        n = json_object_get_int64(v);
        return n < 0 ? -1 : n;
}

static size_t count(struct json_object *o)
{
        return o && json_object_is_type(o, json_type_object) ? (size_t)json_object_object_length(o) : 0;
}

/* 1 if every key of o is in the NULL-terminated list known; else 0 and *bad names the first other. */
static int only_keys(struct json_object *o, const char *const *known, const char **bad)
{
        json_object_object_foreach(o, key, val) {
                size_t i;

                (void)val;
                for (i = 0; known[i] && strcmp(known[i], key) != 0; i++)
                        ;
                if (!known[i]) {
                        *bad = key;
                        return 0;
                }
        }
        return 1;
}

/* 1 if o is an array of exactly the one string s. */
static int is_list_of(struct json_object *o, const char *s)
{
        struct json_object *e;

        if (!o || !json_object_is_type(o, json_type_array) || json_object_array_length(o) != 1)
                return 0;
        e = json_object_array_get_idx(o, 0);
        return e && json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), s) == 0;
}

static int empty_or_absent(struct json_object *o)
{
        return !o || (json_object_is_type(o, json_type_array) && json_object_array_length(o) == 0);
}

static int hash_ok(const char *h)
{
        return h && (strcmp(h, "sha256") == 0 || strcmp(h, "sha512") == 0);
}

/*
 * Security: the segment decides what the kernel maps. Anything but aes-xts-plain64 over the
 * whole device with a 512-bit key (cipher_null maps in the clear; an iv_tweak or a fixed size
 * shifts or hides data) is not thaw's.
 */
static int check_segment(struct json_object *segs, enum luks_profile prof, bool *integrity, char *why, size_t size)
{
        static const char *const known[] = { "type", "offset", "size", "iv_tweak", "encryption",
                                             "sector_size", "integrity", "flags", NULL };
        struct json_object *s = member(segs, "0"), *in;
        const char *v, *bad = NULL;
        char b[SHOWN_MAX + 1];
        int64_t sector;

        if (count(segs) != 1 || !s || !json_object_is_type(s, json_type_object))
                return util_why(why, size, -LUKS_EPOLICY,
                        "the header has %zu segments, not exactly segment 0" NOT_OURS, count(segs));
        if (!only_keys(s, known, &bad))
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 has a field %s" NOT_OURS,
                        shown(bad, b, sizeof(b)));
        v = str_of(s, "type");
        if (!v || strcmp(v, "crypt") != 0)
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 type is %s" NOT_OURS,
                        v ? shown(v, b, sizeof(b)) : "missing");
        v = str_of(s, "encryption");
        if (!v || strcmp(v, "aes-xts-plain64") != 0)
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 encryption is %s" NOT_OURS,
                        v ? shown(v, b, sizeof(b)) : "missing");
        if (!empty_or_absent(member(s, "flags")))
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 has flags" NOT_OURS);
        v = str_of(s, "iv_tweak");
        if (!v || strcmp(v, "0") != 0)
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 iv_tweak is %s" NOT_OURS,
                        v ? shown(v, b, sizeof(b)) : "missing");
        v = str_of(s, "size");
        if (!v || strcmp(v, "dynamic") != 0)
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 size is %s, not dynamic" NOT_OURS,
                        v ? shown(v, b, sizeof(b)) : "missing");
        if (!str_of(s, "offset"))
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 has no offset" NOT_OURS);
        /* A root made by an installer has 512-byte sectors (cryptsetup's default on such disks). */
        sector = int_of(s, "sector_size");
        if (sector != 4096 && !(prof == LUKS_PROFILE_FOREIGN && sector == 512))
                return util_why(why, size, -LUKS_EPOLICY, "segment 0 sector_size is %" PRId64 NOT_OURS, sector);
        in = member(s, "integrity");
        *integrity = in != NULL;
        if (in) {
                static const char *const iknown[] = { "type", "journal_encryption", "journal_integrity", NULL };
                const char *t = str_of(in, "type"), *je = str_of(in, "journal_encryption"),
                           *ji = str_of(in, "journal_integrity");

                /* Security: the only integrity thaw sets up; anything else may authenticate nothing. */
                if (!only_keys(in, iknown, &bad) || !t || strcmp(t, "hmac(sha256)") != 0 || !je ||
                    strcmp(je, "none") != 0 || !ji || strcmp(ji, "none") != 0)
                        return util_why(why, size, -LUKS_EPOLICY,
                                "segment 0 integrity is %s, not hmac(sha256) without journal "
                                "encryption or integrity" NOT_OURS, t ? shown(t, b, sizeof(b)) : "malformed");
        }
        return 0;
}

/*
 * Security: config flags and requirements change how the container is mapped. Requirements
 * (online-reencrypt and the like) are refused always. Persistent activation flags: thaw sets
 * none; an encrypted root's admin may have set these with `cryptsetup refresh --persistent`. They
 * change neither the cipher, the key nor the layout: allow-discards lets the file system's free
 * blocks be seen as such on the disk, the admin's choice for their root, the others tune
 * dm-crypt's work queues. Any other flag is refused.
 */
static int check_config(struct json_object *cfg, enum luks_profile prof, char *why, size_t size)
{
        static const char *const allowed[] = { "allow-discards", "same-cpu-crypt", "submit-from-crypt-cpus",
                                               "no-read-workqueue", "no-write-workqueue", NULL };
        struct json_object *req = member(cfg, "requirements"), *flags = member(cfg, "flags");
        char b[SHOWN_MAX + 1];

        if (req && !(json_object_is_type(req, json_type_object) &&
                     empty_or_absent(member(req, "mandatory")) && count(req) <= 1))
                return util_why(why, size, -LUKS_EPOLICY, "config has requirements (reencryption?)" NOT_OURS);
        if (empty_or_absent(flags))
                return 0;
        if (!json_object_is_type(flags, json_type_array))
                return util_why(why, size, -LUKS_EPOLICY, "config flags are malformed" NOT_OURS);
        for (size_t i = 0; i < json_object_array_length(flags); i++) {
                struct json_object *f = json_object_array_get_idx(flags, i);
                const char *v = f && json_object_is_type(f, json_type_string) ? json_object_get_string(f) : "?";
                size_t k;

                for (k = 0; allowed[k] && strcmp(allowed[k], v) != 0; k++)
                        ;
                if (prof != LUKS_PROFILE_FOREIGN || !allowed[k])
                        return util_why(why, size, -LUKS_EPOLICY, "config flag %s changes the mapping" NOT_OURS,
                                shown(v, b, sizeof(b)));
        }
        return 0;
}

/* Security: the digest runs for every keyslot tried; its cost bounds each try. */
static int check_digest(struct json_object *digs, enum luks_profile prof, char *why, size_t size)
{
        struct json_object *d = member(digs, "0");
        int64_t max = prof == LUKS_PROFILE_FOREIGN ? LUKS_DIGEST_ITER_MAX_FOREIGN : LUKS_DIGEST_ITER_MAX_THAW;
        int64_t iter;
        const char *v;
        char b[SHOWN_MAX + 1];

        if (count(digs) != 1 || !d || !json_object_is_type(d, json_type_object))
                return util_why(why, size, -LUKS_EPOLICY, "the header has %zu digests, not exactly digest 0" NOT_OURS,
                        count(digs));
        v = str_of(d, "type");
        if (!v || strcmp(v, "pbkdf2") != 0)
                return util_why(why, size, -LUKS_EPOLICY, "digest 0 type is %s" NOT_OURS,
                        v ? shown(v, b, sizeof(b)) : "missing");
        v = str_of(d, "hash");
        if (!hash_ok(v))
                return util_why(why, size, -LUKS_EPOLICY, "digest 0 hash is %s" NOT_OURS,
                        v ? shown(v, b, sizeof(b)) : "missing");
        iter = int_of(d, "iterations");
        if (iter < 1 || iter > max)
                return util_why(why, size, -LUKS_EPOLICY,
                        "digest 0 asks for %s PBKDF2 iterations (at most %" PRId64 ")" NOT_OURS,
                        member(d, "iterations") ? shown(json_object_get_string(member(d, "iterations")), b,
                                                        sizeof(b)) : "no", max);
        if (!is_list_of(member(d, "segments"), "0"))
                return util_why(why, size, -LUKS_EPOLICY, "digest 0 is not bound to segment 0 alone" NOT_OURS);
        if (!str_of(d, "salt") || !str_of(d, "digest"))
                return util_why(why, size, -LUKS_EPOLICY, "digest 0 has no salt or digest" NOT_OURS);
        return 0;
}

/*
 * 1 if the keyslot's KDF is within the caps luks.c tries keyslots under (LUKS_PBKDF2_ITER_MAX,
 * LUKS_ARGON2_KIB_MAX and LUKS_ARGON2_WORK_MAX), 0 if it is a known KDF over them, negative if
 * malformed (why set).
 */
static int kdf_cheap(struct json_object *kdf, int slot, char *why, size_t size)
{
        const char *t = str_of(kdf, "type");
        char b[SHOWN_MAX + 1];

        if (!str_of(kdf, "salt"))
                return util_why(why, size, -LUKS_EPOLICY, "keyslot %d kdf has no salt" NOT_OURS, slot);
        if (t && strcmp(t, "pbkdf2") == 0) {
                int64_t iter = int_of(kdf, "iterations");

                if (!hash_ok(str_of(kdf, "hash")) || iter < 1)
                        return util_why(why, size, -LUKS_EPOLICY, "keyslot %d kdf pbkdf2 is malformed" NOT_OURS, slot);
                return iter <= LUKS_PBKDF2_ITER_MAX;
        }
        if (t && (strcmp(t, "argon2i") == 0 || strcmp(t, "argon2id") == 0)) {
                int64_t passes = int_of(kdf, "time"), kib = int_of(kdf, "memory"), cpus = int_of(kdf, "cpus");

                if (passes < 1 || kib < 1 || cpus < 1 || cpus > LUKS_ARGON2_CPUS_MAX)
                        return util_why(why, size, -LUKS_EPOLICY, "keyslot %d kdf %s is malformed" NOT_OURS, slot, t);
                return kib <= LUKS_ARGON2_KIB_MAX && (uint64_t)kib * (uint64_t)passes <= LUKS_ARGON2_WORK_MAX;
        }
        return util_why(why, size, -LUKS_EPOLICY, "keyslot %d kdf is %s" NOT_OURS, slot,
                t ? shown(t, b, sizeof(b)) : "missing");
}

/*
 * Security: a keyslot's area cipher is what libcryptsetup decrypts the key material with:
 * cipher_null makes any passphrase "open" it before 2.8.1 (CVE-2025-59054). Its KDF is what each
 * try costs.
 */
static int check_keyslot(struct json_object *k, int slot, enum luks_profile prof, bool integrity,
                         char *why, size_t size)
{
        static const char *const known[] = { "type", "key_size", "af", "area", "kdf", "priority", NULL };
        struct json_object *af = member(k, "af"), *area = member(k, "area");
        int64_t want = integrity ? 96 : 64;
        const char *v, *bad = NULL;
        char b[SHOWN_MAX + 1];
        int r;

        if (!json_object_is_type(k, json_type_object) || !only_keys(k, known, &bad))
                return util_why(why, size, -LUKS_EPOLICY, "keyslot %d has a field %s" NOT_OURS, slot,
                        bad ? shown(bad, b, sizeof(b)) : "?");
        v = str_of(k, "type");
        if (!v || strcmp(v, "luks2") != 0)
                return util_why(why, size, -LUKS_EPOLICY, "keyslot %d type is %s" NOT_OURS, slot,
                        v ? shown(v, b, sizeof(b)) : "missing");
        v = str_of(area, "encryption");
        if (!v || strcmp(v, "aes-xts-plain64") != 0)
                return util_why(why, size, -LUKS_EPOLICY, "keyslot %d area encryption is %s" NOT_OURS, slot,
                                v ? shown(v, b, sizeof(b)) : "missing");
        v = str_of(area, "type");
        if (!v || strcmp(v, "raw") != 0 || int_of(area, "key_size") != 64 || !str_of(area, "offset") ||
            !str_of(area, "size"))
                return util_why(why, size, -LUKS_EPOLICY, "keyslot %d area is not raw with a 512-bit key" NOT_OURS,
                        slot);
        if (int_of(k, "key_size") != want)
                return util_why(why, size, -LUKS_EPOLICY,
                        "keyslot %d holds a %" PRId64 "-byte volume key (%" PRId64 " for this "
                        "segment)" NOT_OURS, slot, int_of(k, "key_size"), want);
        v = str_of(af, "type");
        if (!v || strcmp(v, "luks1") != 0 || int_of(af, "stripes") != 4000 || !hash_ok(str_of(af, "hash")))
                return util_why(why, size, -LUKS_EPOLICY, "keyslot %d af is not luks1 with 4000 stripes" NOT_OURS,
                        slot);
        r = kdf_cheap(member(k, "kdf"), slot, why, size);
        if (r < 0)
                return r;
        /* FOREIGN: an admin's costly keyslot stays; luks.c never tries it (slot_allowed()). */
        if (r == 0 && prof != LUKS_PROFILE_FOREIGN)
                return util_why(why, size, -LUKS_EPOLICY, "keyslot %d kdf %s costs more than thaw allows" NOT_OURS,
                        slot,
                        shown(str_of(member(k, "kdf"), "type"), b, sizeof(b)));
        return 0;
}

static int check(struct json_object *h, enum luks_profile prof, char *why, size_t size)
{
        struct json_object *slots = member(h, "keyslots");
        bool integrity = false;
        int r;

        if (!slots || !json_object_is_type(slots, json_type_object) || !member(h, "segments") ||
            !member(h, "digests") || !member(h, "config"))
                return util_why(why, size, -LUKS_EPOLICY,
                        "the header lacks keyslots, segments, digests or config" NOT_OURS);
        r = check_segment(member(h, "segments"), prof, &integrity, why, size);
        if (r == 0)
                r = check_config(member(h, "config"), prof, why, size);
        if (r == 0)
                r = check_digest(member(h, "digests"), prof, why, size);
        json_object_object_foreach(slots, key, val) {
                char *end;
                long slot = strtol(key, &end, 10);

                if (r < 0)
                        break;
                if (*end || end == key || slot < 0 || slot >= 32) {
                        char b[SHOWN_MAX + 1];

                        return util_why(why, size, -LUKS_EPOLICY, "a keyslot is numbered %s" NOT_OURS,
                                shown(key, b, sizeof(b)));
                }
                r = check_keyslot(val, (int)slot, prof, integrity, why, size);
        }
        return r;
}

/* Length-prefixed, so no two different texts hash alike. */
static void put(EVP_MD_CTX *md, char tag, const char *s, size_t n)
{
        char len[32];
        int k = snprintf(len, sizeof(len), "%c%zu:", tag, n);

        EVP_DigestUpdate(md, len, (size_t)k);
        EVP_DigestUpdate(md, s, n);
}

static int keycmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * A canonical form of o into md: object keys sorted (libcryptsetup or another tool may write them
 * in another order), scalars as their JSON text, length-prefixed. At depth 0 "tokens" is left out.
 */
static int canon(struct json_object *o, EVP_MD_CTX *md, int depth)
{
        enum json_type t = o ? json_object_get_type(o) : json_type_null;
        int r = 0;

        if (depth > 16)
                return -EINVAL; /* LUKS2 JSON is 4 levels deep */
        if (t == json_type_object) {
                size_t n = (size_t)json_object_object_length(o), i = 0;
                const char **keys = calloc(n ? n : 1, sizeof(*keys));

                if (!keys)
                        return -ENOMEM;
                json_object_object_foreach(o, key, val) {
                        (void)val;
                        /* Tokens change without the key (a source enrolled, another tool's metadata). */
                        if (depth > 0 || strcmp(key, "tokens") != 0)
                                keys[i++] = key;
                }
                qsort(keys, i, sizeof(*keys), keycmp);
                EVP_DigestUpdate(md, "{", 1);
                for (size_t k = 0; k < i && r == 0; k++) {
                        put(md, 'k', keys[k], strlen(keys[k]));
                        r = canon(json_object_object_get(o, keys[k]), md, depth + 1);
                }
                EVP_DigestUpdate(md, "}", 1);
                free(keys);
                return r;
        }
        if (t == json_type_array) {
                EVP_DigestUpdate(md, "[", 1);
                for (size_t k = 0; k < json_object_array_length(o) && r == 0; k++)
                        r = canon(json_object_array_get_idx(o, k), md, depth + 1);
                EVP_DigestUpdate(md, "]", 1);
                return r;
        }
        if (t == json_type_null) {
                put(md, 'n', "", 0);
                return 0;
        }
        put(md, t == json_type_string ? 's' : 'v', json_object_get_string(o),
            t == json_type_string ? (size_t)json_object_get_string_len(o) : strlen(json_object_get_string(o)));
        return 0;
}

/* SHA-256 over a domain string, the UUID and the canonical header without tokens. */
static int fingerprint(struct json_object *h, const char *uuid, char *fp)
{
        unsigned char sum[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        int r;

        if (!md)
                return -ENOMEM;
        r = EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 ? 0 : -EIO;
        if (r == 0) {
                put(md, 'd', FP_DOMAIN, strlen(FP_DOMAIN));
                put(md, 'u', uuid ? uuid : "", uuid ? strlen(uuid) : 0);
                r = canon(h, md, 0);
        }
        if (r == 0 && (EVP_DigestFinal_ex(md, sum, &len) != 1 || len != 32))
                r = -EIO;
        EVP_MD_CTX_free(md);
        if (r < 0)
                return r;
        memcpy(fp, LUKS_FP_PREFIX, strlen(LUKS_FP_PREFIX));
        for (unsigned int i = 0; i < len; i++)
                snprintf(fp + strlen(LUKS_FP_PREFIX) + 2 * i, 3, "%02x", sum[i]);
        return 0;
}

int luks_fp_valid(const char *s)
{
        if (!s || strncmp(s, LUKS_FP_PREFIX, strlen(LUKS_FP_PREFIX)) != 0 || strlen(s) != LUKS_FP_LEN)
                return 0;
        for (s += strlen(LUKS_FP_PREFIX); *s; s++) {
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
                        return 0;
        }
        return 1;
}

int luks_policy_check_json(const char *json, const char *uuid, const struct luks_policy *p, char *fp,
                           char *why, size_t size)
{
        static const struct luks_policy thaw = { .profile = LUKS_PROFILE_THAW };
        struct json_tokener *tok;
        struct json_object *h = NULL;
        char mine[LUKS_FP_SIZE];
        size_t n;
        int r;

        if (why && size)
                why[0] = '\0';
        if (!p)
                p = &thaw;
        if (!json)
                return -EINVAL;
        n = strnlen(json, LUKS_POLICY_JSON_MAX + 1);
        if (n > LUKS_POLICY_JSON_MAX) {
                (void)util_why(why, size, -LUKS_EPOLICY, "the header's JSON is larger than %u bytes" NOT_OURS,
                        LUKS_POLICY_JSON_MAX);
                return -EINVAL;
        }
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        h = json_tokener_parse_ex(tok, json, (int)n);
        if (!h || json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(h, json_type_object)) {
                json_tokener_free(tok);
                json_object_put(h);
                (void)util_why(why, size, -LUKS_EPOLICY, "the header's JSON does not parse" NOT_OURS);
                return -EINVAL;
        }
        json_tokener_free(tok);
        r = fingerprint(h, uuid, mine);
        if (r == 0 && fp)
                memcpy(fp, mine, LUKS_FP_SIZE);
        if (r == 0)
                r = check(h, p->profile, why, size);
        /* Security: the pin is compared after the policy, so a refusal names the field if it can. */
        if (r == 0 && p->pin && *p->pin && strcmp(p->pin, mine) != 0)
                r = util_why(why, size, -LUKS_EPOLICY,
                        "header fingerprint %.23s differs from the pinned %.23s (rd.thaw.header=): "
                        "not the header thaw set up", mine, p->pin);
        json_object_put(h);
        return r;
}
