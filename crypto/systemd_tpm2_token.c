/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "systemd-tpm2" LUKS2 token of systemd 252's systemd-cryptenroll, read strictly. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "base64.h"
#include "jsontext.h"
#include "systemd_tpm2_token.h"
#include "base/util.h"

#define PCRS_MAX 24 /* systemd's TPM2_PCRS_MAX */

static int keyslots(struct json_object *a, uint32_t *mask, char *why, size_t size)
{
        size_t n = json_object_array_length(a);

        *mask = 0;
        for (size_t i = 0; i < n && i < 32; i++) {
                struct json_object *v = json_object_array_get_idx(a, i);
                const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
                size_t len = strlen(s);

                if (len == 0 || len > 2 || strspn(s, "0123456789") != len || atoi(s) >= 32)
                        return util_why(why, size, -EINVAL, "\"keyslots\" holds something other than a keyslot number");
                *mask |= UINT32_C(1) << atoi(s);
        }
        if (n == 0 || n > 32)
                return util_why(why, size, -EINVAL, "\"keyslots\" names no keyslot");
        return 0;
}

static int pcrs(struct json_object *a, uint32_t *mask, char *why, size_t size)
{
        size_t n = json_object_array_length(a);

        *mask = 0;
        if (n > PCRS_MAX)
                return util_why(why, size, -EINVAL, "\"tpm2-pcrs\" lists more than %d PCRs", PCRS_MAX);
        for (size_t i = 0; i < n; i++) {
                struct json_object *v = json_object_array_get_idx(a, i);
                int64_t pcr;

                if (!json_object_is_type(v, json_type_int))
                        return util_why(why, size, -EINVAL, "\"tpm2-pcrs\" holds something other than a PCR number");
                pcr = json_object_get_int64(v);
                if (pcr < 0 || pcr >= PCRS_MAX)
                        return util_why(why, size, -EINVAL, "\"tpm2-pcrs\" names PCR %lld, not 0..23", (long long)pcr);
                *mask |= UINT32_C(1) << pcr;
        }
        /* Security: such a key unseals on any boot chain, which is what a TPM key is to prevent. */
        if (*mask == 0)
                return util_why(why, size, -EOPNOTSUPP, "it binds no PCR (enrolled with an empty --tpm2-pcrs=)");
        return 0;
}

static int hex_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static int policy_hash(const char *s, uint8_t out[SYSTEMD_TPM2_POLICY_SIZE], char *why, size_t size)
{
        if (strlen(s) != 2 * SYSTEMD_TPM2_POLICY_SIZE)
                return util_why(why, size, -EINVAL, "\"tpm2-policy-hash\" is not %d hex digits",
                                2 * SYSTEMD_TPM2_POLICY_SIZE);
        for (size_t i = 0; i < SYSTEMD_TPM2_POLICY_SIZE; i++) {
                int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return util_why(why, size, -EINVAL, "\"tpm2-policy-hash\" is not hex");
                out[i] = (uint8_t)(hi << 4 | lo);
        }
        return 0;
}

/* A string field: 1 and *s if present, 0 if absent, -EINVAL (why said) if not a string. */
static int string_field(struct json_object *o, const char *key, const char **s, char *why, size_t size)
{
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return util_why(why, size, -EINVAL, "\"%s\" is not a string", key);
        *s = json_object_get_string(v);
        return 1;
}

/* The fields systemd 252 writes; any other is a newer systemd's and may change what unseals. */
static int known_fields(struct json_object *o, char *why, size_t size)
{
        static const char *const known[] = {
                "type", "keyslots", "tpm2-blob", "tpm2-pcrs", "tpm2-pcr-bank", "tpm2-primary-alg",
                "tpm2-policy-hash", "tpm2-pin",
        };

        json_object_object_foreach(o, key, val) {
                size_t i = 0;

                (void)val;
                while (i < sizeof(known) / sizeof(known[0]) && strcmp(key, known[i]) != 0)
                        i++;
                if (i < sizeof(known) / sizeof(known[0]))
                        continue;
                if (strcmp(key, "tpm2_pubkey") == 0 || strcmp(key, "tpm2_pubkey_pcrs") == 0)
                        return util_why(why, size, -EOPNOTSUPP, "signed PCR policies (%s) are not supported", key);
                return util_why(why, size, -EOPNOTSUPP, "field \"%.64s\" is not systemd 252's", key);
        }
        return 0;
}

static int token_check(struct json_object *o, struct systemd_tpm2_token *t, char *why, size_t size)
{
        struct json_object *v;
        const char *s = NULL;
        int r;

        r = string_field(o, "type", &s, why, size);
        if (r <= 0 || strcmp(s, SYSTEMD_TPM2_TYPE) != 0)
                return r < 0 ? r : util_why(why, size, -EINVAL, "not a systemd-tpm2 token");
        r = known_fields(o, why, size);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(o, "keyslots", &v) || !json_object_is_type(v, json_type_array))
                return util_why(why, size, -EINVAL, "\"keyslots\" is missing or not an array");
        r = keyslots(v, &t->keyslots, why, size);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(o, "tpm2-pcrs", &v) || !json_object_is_type(v, json_type_array))
                return util_why(why, size, -EINVAL, "\"tpm2-pcrs\" is missing or not an array");
        r = pcrs(v, &t->pcrs, why, size);
        if (r < 0)
                return r;
        snprintf(t->bank, sizeof(t->bank), "sha256"); /* systemd < 250 wrote no bank: SHA-256 */
        r = string_field(o, "tpm2-pcr-bank", &s, why, size);
        if (r > 0 && strcmp(s, "sha1") != 0 && strcmp(s, "sha256") != 0 && strcmp(s, "sha384") != 0 &&
            strcmp(s, "sha512") != 0)
                return util_why(why, size, -EINVAL, "\"tpm2-pcr-bank\" \"%.16s\" is not a PCR bank", s);
        if (r > 0)
                snprintf(t->bank, sizeof(t->bank), "%s", s);
        else if (r < 0)
                return r;
        t->primary = SYSTEMD_TPM2_PRIMARY_ECC;
        r = string_field(o, "tpm2-primary-alg", &s, why, size);
        if (r > 0 && strcmp(s, "ecc") != 0 && strcmp(s, "rsa") != 0)
                return util_why(why, size, -EINVAL, "\"tpm2-primary-alg\" \"%.16s\" is neither ecc nor rsa", s);
        if (r > 0 && strcmp(s, "rsa") == 0)
                t->primary = SYSTEMD_TPM2_PRIMARY_RSA;
        else if (r < 0)
                return r;
        r = string_field(o, "tpm2-blob", &s, why, size);
        if (r == 0)
                return util_why(why, size, -EINVAL, "\"tpm2-blob\" is missing");
        if (r < 0)
                return r;
        r = base64_decode(s, strlen(s), t->blob, sizeof(t->blob));
        if (r == -EMSGSIZE)
                return util_why(why, size, -EINVAL, "\"tpm2-blob\" is larger than %d bytes", SYSTEMD_TPM2_BLOB_MAX);
        if (r <= 0)
                return util_why(why, size, -EINVAL, "\"tpm2-blob\" is not base64");
        t->blob_len = (size_t)r;
        r = string_field(o, "tpm2-policy-hash", &s, why, size);
        if (r == 0)
                return util_why(why, size, -EINVAL, "\"tpm2-policy-hash\" is missing");
        if (r < 0 || (r = policy_hash(s, t->policy, why, size)) < 0)
                return r;
        t->pin = false;
        if (json_object_object_get_ex(o, "tpm2-pin", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return util_why(why, size, -EINVAL, "\"tpm2-pin\" is not a boolean");
                t->pin = json_object_get_boolean(v);
        }
        if (t->pin)
                return util_why(why, size, -EOPNOTSUPP, "it needs a PIN (enrolled with --tpm2-with-pin=yes)");
        return 0;
}

int systemd_tpm2_token_parse(const char *json, struct systemd_tpm2_token *out, char *why, size_t size)
{
        struct systemd_tpm2_token *t;
        struct json_object *o;
        int r;

        if (!json || !out)
                return -EINVAL;
        /* An object of arrays: deeper is not systemd's. */
        r = jsontext_object(json, SYSTEMD_TPM2_JSON_MAX, 4, &o, why, size);
        if (r < 0)
                return r;
        t = calloc(1, sizeof(*t));
        r = t ? token_check(o, t, why, size) : -ENOMEM;
        if (r == 0)
                *out = *t;
        json_object_put(o);
        free(t);
        return r;
}
