/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The thaw-tpm2 LUKS2 token and the tpm2: source's options, both parsed strictly. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>
#include "base64.h"
#include "keysrc.h"
#include "luks_token.h"
#include "tpm2_token.h"

#define BLOB_B64_MAX ((TPM2_BLOB_MAX + 2) / 3 * 4)

/* A decimal number lo..hi of at most two digits, the whole of [p, end). */
static int small_number(const char *p, const char *end, unsigned lo, unsigned hi, unsigned *out)
{
        unsigned v = 0;

        if (end <= p || end - p > 2)
                return -EINVAL;
        for (; p < end; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned)(*p - '0');
        }
        if (v < lo || v > hi)
                return -EINVAL;
        *out = v;
        return 0;
}

/* "7+11" into a mask; each PCR once. */
static int pcr_list(const char *p, const char *end, uint32_t *out)
{
        uint32_t mask = 0;

        for (;;) {
                const char *plus = memchr(p, '+', (size_t)(end - p));
                const char *stop = plus ? plus : end;
                unsigned pcr;

                if (small_number(p, stop, 0, TPM2_PCR_COUNT - 1, &pcr) < 0 || (mask & (1u << pcr)))
                        return -EINVAL;
                /* Security: 16-23 can be reset by software (TPM2_PCR_Reset at locality 0): anyone
                 * could reset them and extend them to the sealed values. */
                if (pcr > TPM2_PCR_POLICY_MAX)
                        return -ERANGE;
                mask |= 1u << pcr;
                if (!plus)
                        break;
                p = plus + 1;
        }
        *out = mask;
        return 0;
}

static int opt_one(const char *p, const char *end, struct tpm2_opts *o, unsigned *seen)
{
        const char *eq = memchr(p, '=', (size_t)(end - p));
        char bank[8];
        size_t klen, vlen;

        if (!eq)
                return -EINVAL;
        klen = (size_t)(eq - p);
        vlen = (size_t)(end - eq - 1);
        if (klen == 4 && memcmp(p, "pcrs", 4) == 0 && !(*seen & 1)) {
                *seen |= 1;
                return pcr_list(eq + 1, end, &o->pcrs);
        }
        if (klen == 4 && memcmp(p, "bank", 4) == 0 && !(*seen & 2) && vlen < sizeof(bank)) {
                *seen |= 2;
                memcpy(bank, eq + 1, vlen);
                bank[vlen] = '\0';
                o->bank = tpm2_bank_from_name(bank);
                return o->bank ? 0 : -EINVAL;
        }
        if (klen == 4 && memcmp(p, "lock", 4) == 0 && !(*seen & 4)) {
                *seen |= 4;
                /* 8-15 only: 0-7 are the firmware's, and 16-23 can be reset by software. */
                return small_number(eq + 1, end, TPM2_LOCK_PCR_MIN, TPM2_LOCK_PCR_MAX, &o->lock);
        }
        return -EINVAL;
}

int tpm2_opts_parse(const char *arg, struct tpm2_opts *out)
{
        struct tpm2_opts o = { .pcrs = TPM2_DEFAULT_PCRS, .bank = TPM2_ALG_SHA256, .lock = TPM2_LOCK_PCR_DEFAULT };
        unsigned seen = 0;
        const char *p = arg;

        if (!arg || !out || strlen(arg) >= KEYSRC_ARG_MAX)
                return -EINVAL;
        while (*p) {
                const char *end = strchr(p, ',');

                if (!end)
                        end = p + strlen(p);
                int r = opt_one(p, end, &o, &seen);

                if (r < 0)
                        return r == -ERANGE ? r : -EINVAL;
                p = *end ? end + 1 : end;
                if (*end && !*p)
                        return -EINVAL; /* a trailing ',' */
        }
        /* The lock PCR is always in the policy, at its reset value; naming it in pcrs= too is an error. */
        if (o.pcrs & (1u << o.lock))
                return -EINVAL;
        *out = o;
        return 0;
}

void tpm2_pcrs_format(uint32_t mask, char *buf, size_t size)
{
        size_t used = 0;

        if (size == 0)
                return;
        buf[0] = '\0';
        for (unsigned pcr = 0; pcr < TPM2_PCR_COUNT; pcr++) {
                int n;

                if (!(mask & (1u << pcr)))
                        continue;
                n = snprintf(buf + used, size - used, "%s%u", used ? "+" : "", pcr);
                if (n < 0 || (size_t)n >= size - used)
                        return;
                used += (size_t)n;
        }
}

static int hex_encode(const uint8_t *in, size_t len, char *out, size_t size)
{
        if (size < len * 2 + 1)
                return -ENAMETOOLONG;
        for (size_t i = 0; i < len; i++)
                snprintf(out + 2 * i, 3, "%02x", in[i]);
        return 0;
}

static int hex_decode(const char *in, uint8_t *out, size_t len)
{
        if (strlen(in) != len * 2)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                unsigned v = 0;

                for (size_t j = 0; j < 2; j++) {
                        char c = in[2 * i + j];

                        if (c >= '0' && c <= '9')
                                v = v * 16 + (unsigned)(c - '0');
                        else if (c >= 'a' && c <= 'f')
                                v = v * 16 + (unsigned)(c - 'a' + 10);
                        else
                                return -EINVAL; /* lower case only: what we write */
                }
                out[i] = (uint8_t)v;
        }
        return 0;
}

int tpm2_token_fields(const struct tpm2_token *t, struct json_object *o)
{
        char b64[BLOB_B64_MAX + 1], hex[TPM2_POLICY_SIZE * 2 + 1];
        struct json_object *pcrs;

        if (!t || !o || t->blob_len == 0 || t->blob_len > TPM2_BLOB_MAX || !tpm2_bank_name(t->bank))
                return -EINVAL;
        EVP_EncodeBlock((unsigned char *)b64, t->blob, (int)t->blob_len);
        if (hex_encode(t->policy, sizeof(t->policy), hex, sizeof(hex)) < 0)
                return -EINVAL;
        pcrs = json_object_new_array();
        if (!pcrs)
                return -ENOMEM;
        for (unsigned pcr = 0; pcr < TPM2_PCR_COUNT; pcr++) {
                if (t->pcrs & (1u << pcr))
                        json_object_array_add(pcrs, json_object_new_int((int)pcr));
        }
        json_object_object_add(o, "tpm2-blob", json_object_new_string(b64));
        json_object_object_add(o, "tpm2-pcrs", pcrs);
        json_object_object_add(o, "tpm2-bank", json_object_new_string(tpm2_bank_name(t->bank)));
        json_object_object_add(o, "tpm2-policy-hash", json_object_new_string(hex));
        json_object_object_add(o, "tpm2-lock-pcr", json_object_new_int((int)t->lock));
        if (t->primary.len > 0) {
                char name[TPM2_NAME_MAX * 2 + 1];

                if (hex_encode(t->primary.name, t->primary.len, name, sizeof(name)) < 0)
                        return -EINVAL;
                json_object_object_add(o, "tpm2-primary-name", json_object_new_string(name));
        }
        return 0;
}

static const char *const known_fields[] = {
        "tpm2-blob", "tpm2-pcrs", "tpm2-bank", "tpm2-policy-hash", "tpm2-lock-pcr", "tpm2-primary-name",
};

static int set_why(char *why, size_t size, const char *text)
{
        if (why && size)
                snprintf(why, size, "%s", text);
        return -EINVAL;
}

/* The string field key, at most max bytes; NULL with a reason in why if not. */
static const char *string_of(struct json_object *o, const char *key, size_t max, char *why, size_t size)
{
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v)) {
                if (why && size)
                        snprintf(why, size, "%s missing", key);
                return NULL;
        }
        if (!json_object_is_type(v, json_type_string) || (size_t)json_object_get_string_len(v) > max) {
                if (why && size)
                        snprintf(why, size, "%s is not a string or is longer than %zu characters", key, max);
                return NULL;
        }
        return json_object_get_string(v);
}

static int pcrs_of(struct json_object *o, uint32_t *out)
{
        struct json_object *a;
        uint32_t mask = 0;
        size_t n;

        if (!json_object_object_get_ex(o, "tpm2-pcrs", &a) || !json_object_is_type(a, json_type_array))
                return -EINVAL;
        n = json_object_array_length(a);
        if (n == 0 || n > TPM2_PCR_COUNT)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                struct json_object *v = json_object_array_get_idx(a, i);
                int64_t pcr;

                if (!json_object_is_type(v, json_type_int))
                        return -EINVAL;
                pcr = json_object_get_int64(v);
                if (pcr < 0 || pcr >= TPM2_PCR_COUNT || (mask & (1u << pcr)))
                        return -EINVAL;
                if (pcr > TPM2_PCR_POLICY_MAX)
                        return -ERANGE; /* as pcrs= in the source: a policy on them protects nothing */
                mask |= 1u << pcr;
        }
        *out = mask;
        return 0;
}

/*
 * tpm2-primary-name, optional: tokens enrolled before it was kept have none, and are used as they
 * were (the primary key unchecked) rather than refused, which would strand their images; `thaw
 * enroll` again pins it. When present: nameAlg (2 bytes, big-endian) then a digest of its size.
 */
static int primary_of(struct json_object *o, struct tpm2_name *out, char *why, size_t size)
{
        struct json_object *v;
        const char *hex;
        size_t len;

        out->len = 0;
        if (!json_object_object_get_ex(o, "tpm2-primary-name", &v))
                return 0;
        if (!(hex = string_of(o, "tpm2-primary-name", TPM2_NAME_MAX * 2, why, size)))
                return -EINVAL;
        len = strlen(hex) / 2;
        if (len < 2 || hex_decode(hex, out->name, len) < 0 ||
            tpm2_bank_size((uint16_t)(out->name[0] << 8 | out->name[1])) != len - 2)
                return set_why(why, size, "tpm2-primary-name is not a name (hash algorithm and digest, in "
                               "lower-case hex)");
        out->len = len;
        return 0;
}

static int fields_check(struct json_object *o, struct tpm2_token *t, char *why, size_t size)
{
        struct json_object *v;
        const char *blob, *bank, *hex;
        uint8_t recorded[TPM2_POLICY_SIZE];
        int64_t lock;
        int n;

        json_object_object_foreach(o, key, val) {
                bool known = false;

                (void)val;
                for (size_t i = 0; i < sizeof(known_fields) / sizeof(known_fields[0]); i++)
                        known = known || strcmp(key, known_fields[i]) == 0;
                if (!known && strncmp(key, "tpm2-", 5) == 0)
                        return set_why(why, size, "unknown field");
        }
        if (!(blob = string_of(o, "tpm2-blob", BLOB_B64_MAX, why, size)) ||
            !(bank = string_of(o, "tpm2-bank", 8, why, size)) ||
            !(hex = string_of(o, "tpm2-policy-hash", TPM2_POLICY_SIZE * 2, why, size)))
                return -EINVAL;
        n = base64_decode(blob, strlen(blob), t->blob, sizeof(t->blob));
        if (n <= 0)
                return set_why(why, size, "tpm2-blob is not base64");
        t->blob_len = (size_t)n;
        t->bank = tpm2_bank_from_name(bank);
        if (!t->bank)
                return set_why(why, size, "unknown tpm2-bank");
        if (hex_decode(hex, t->policy, sizeof(t->policy)) < 0)
                return set_why(why, size, "tpm2-policy-hash is not 64 lower-case hex digits");
        n = pcrs_of(o, &t->pcrs);
        if (n == -ERANGE)
                return set_why(why, size, "tpm2-pcrs names a PCR of 16-23, which software can reset: "
                               TPM2_RESETTABLE_WHY);
        if (n < 0)
                return set_why(why, size, "tpm2-pcrs is not a list of distinct PCRs 0-23");
        if (!json_object_object_get_ex(o, "tpm2-lock-pcr", &v) || !json_object_is_type(v, json_type_int))
                return set_why(why, size, "tpm2-lock-pcr missing or not a number");
        lock = json_object_get_int64(v);
        if (lock < TPM2_LOCK_PCR_MIN || lock > TPM2_LOCK_PCR_MAX || !(t->pcrs & (1u << lock)))
                return set_why(why, size, "tpm2-lock-pcr is not 8-15 or not among tpm2-pcrs");
        t->lock = (unsigned)lock;
        if (tpm2_blob_policy(t->blob, t->blob_len, recorded) < 0)
                return set_why(why, size, "tpm2-blob is not a sealed object");
        if (memcmp(recorded, t->policy, sizeof(recorded)) != 0)
                return set_why(why, size, "tpm2-policy-hash is not the blob's policy");
        return primary_of(o, &t->primary, why, size);
}

int tpm2_token_check_fields(struct json_object *o, struct tpm2_token *t, char *why, size_t size)
{
        struct tpm2_token *tmp;
        int r;

        if (!o)
                return -EINVAL;
        tmp = calloc(1, sizeof(*tmp));
        if (!tmp)
                return -ENOMEM;
        r = fields_check(o, tmp, why, size);
        if (r == 0 && t) {
                tmp->opts = t->opts;
                *t = *tmp;
        }
        free(tmp);
        return r;
}

int tpm2_token_parse(const char *json, struct tpm2_token *out, char *why, size_t size)
{
        struct tpm2_token *t;
        struct json_object *o;
        struct keysrc src;
        int r;

        if (!json || !out)
                return -EINVAL;
        r = luks_token_check(json, &src, why, size);
        if (r < 0)
                return r;
        if (src.type != KEYSRC_TPM2)
                return set_why(why, size, "not a thaw-tpm2 token");
        t = calloc(1, sizeof(*t));
        o = json_tokener_parse(json); /* checked above: one object, within the size cap */
        if (!t || !o) {
                free(t);
                json_object_put(o);
                return -ENOMEM;
        }
        r = tpm2_opts_parse(src.arg, &t->opts);
        if (r < 0)
                set_why(why, size, "bad thaw-source");
        else
                r = tpm2_token_check_fields(o, t, why, size);
        if (r == 0)
                *out = *t;
        json_object_put(o);
        free(t);
        return r;
}
