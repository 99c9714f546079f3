/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON of the thaw-* LUKS2 tokens: the token names a key source and never holds key material. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "luks.h"
#include "jsontext.h"
#include "luks_token.h"
#include "ticket.h"
#include "tpm2_token.h"
#include "base/util.h"

int luks_token_build(const struct keysrc *src, char *buf, size_t size)
{
        char type[64], spec[KEYSRC_ARG_MAX + 32];
        struct json_object *o;
        const char *s;
        int r;

        if (!src || !buf)
                return -EINVAL;
        r = keysrc_format(src, spec, sizeof(spec));
        if (r < 0)
                return r;
        if ((size_t)snprintf(type, sizeof(type), LUKS_TOKEN_PREFIX "%s", keysrc_type_name(src->type)) >=
            sizeof(type))
                return -ENAMETOOLONG;
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "type", json_object_new_string(type));
        json_object_object_add(o, "keyslots", json_object_new_array());
        json_object_object_add(o, "thaw-source", json_object_new_string(spec));
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                r = -ENOMEM;
        else if ((size_t)snprintf(buf, size, "%s", s) >= size)
                r = -ENAMETOOLONG;
        json_object_put(o);
        return r;
}

/* "keyslots" is an array of keyslot numbers as decimal strings ("0" … "31"), as LUKS2 writes them. */
static int keyslots_check(struct json_object *slots, char *why, size_t size)
{
        size_t n = json_object_array_length(slots);

        if (n > LUKS_TOKEN_KEYSLOTS_MAX)
                return util_why(why, size, -EINVAL, "\"keyslots\" lists %zu keyslots, more than LUKS2 has", n);
        for (size_t i = 0; i < n; i++) {
                struct json_object *v = json_object_array_get_idx(slots, i);
                const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                size_t len = s ? strlen(s) : 0;

                if (!s || len == 0 || len > 2 || strspn(s, "0123456789") != len ||
                    atoi(s) >= LUKS_TOKEN_KEYSLOTS_MAX)
                        return util_why(why, size, -EINVAL, "\"keyslots\" holds something other than a keyslot number");
        }
        return 0;
}

/*
 * The header is outside input: a thaw token must be exactly what luks_token_build() writes, three
 * fields of the right JSON types, no more. Security: the plugin's validate() is this function, so
 * whatever libcryptsetup or systemd-cryptsetup accepts as a thaw token, thaw itself accepts too.
 */
static int token_check(struct json_object *o, struct keysrc *out, char *why, size_t size)
{
        struct json_object *type, *spec, *slots;
        const char *name, *t, *sp;
        struct keysrc src;

        if (!json_object_object_get_ex(o, "type", &type))
                return util_why(why, size, -EINVAL, "\"type\" is missing");
        if (!json_object_is_type(type, json_type_string))
                return util_why(why, size, -EINVAL, "\"type\" is not a string");
        t = json_object_get_string(type);
        if (strncmp(t, LUKS_TOKEN_PREFIX, strlen(LUKS_TOKEN_PREFIX)) != 0)
                return util_why(why, size, -EINVAL, "type \"%.64s\" is not a thaw token", t);
        /* The image ticket is thaw's but names no key: never a key source, whatever it holds. */
        if (strcmp(t, TICKET_TOKEN_TYPE) == 0)
                return util_why(why, size, -EINVAL, "the image ticket, not a key source");
        if (!json_object_object_get_ex(o, "keyslots", &slots))
                return util_why(why, size, -EINVAL, "\"keyslots\" is missing");
        if (!json_object_is_type(slots, json_type_array))
                return util_why(why, size, -EINVAL, "\"keyslots\" is not an array");
        if (keyslots_check(slots, why, size) < 0)
                return -EINVAL;
        if (!json_object_object_get_ex(o, "thaw-source", &spec))
                return util_why(why, size, -EINVAL, "\"thaw-source\" is missing");
        if (!json_object_is_type(spec, json_type_string))
                return util_why(why, size, -EINVAL, "\"thaw-source\" is not a string");
        sp = json_object_get_string(spec);
        if (strlen(sp) >= KEYSRC_ARG_MAX)
                return util_why(why, size, -EINVAL, "\"thaw-source\" is longer than %d bytes", KEYSRC_ARG_MAX - 1);
        if (keysrc_parse(sp, &src) < 0)
                return util_why(why, size, -EINVAL, "\"thaw-source\" \"%.64s\" is not a key source", sp);
        name = keysrc_type_name(src.type);
        /* "thaw-keyfile" naming a fwcfg source is not ours: the type must say what the source is. */
        if (!name || strcmp(t + strlen(LUKS_TOKEN_PREFIX), name) != 0)
                return util_why(why, size, -EINVAL, "type \"%.64s\" does not match source \"%.64s\"", t, sp);
        json_object_object_foreach(o, key, val) {
                (void)val;
                /* A tpm2 token's own "tpm2-*" fields are judged, each one, by its own check below. */
                if (src.type == KEYSRC_TPM2 && strncmp(key, "tpm2-", 5) == 0)
                        continue;
                if (strcmp(key, "type") != 0 && strcmp(key, "keyslots") != 0 && strcmp(key, "thaw-source") != 0)
                        return util_why(why, size, -EINVAL, "unknown field \"%.64s\"", key);
        }
        if (src.type == KEYSRC_TPM2 && tpm2_token_check_fields(o, NULL, why, size) < 0)
                return -EINVAL;
        *out = src;
        return 0;
}

int luks_token_check(const char *json, struct keysrc *out, char *why, size_t size)
{
        struct json_object *o;
        int r;

        if (!json || !out)
                return -EINVAL;
        /* A thaw token nests two levels: deeper is not ours. */
        r = jsontext_object(json, LUKS_TOKEN_JSON_MAX, 8, &o, why, size);
        if (r < 0)
                return r;
        r = token_check(o, out, why, size);
        json_object_put(o);
        return r;
}

int luks_token_parse(const char *json, struct keysrc *out)
{
        return luks_token_check(json, out, NULL, 0);
}
