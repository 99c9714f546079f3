/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON of the thaw-* LUKS2 tokens: the token names a key source and never holds key material. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "luks.h"
#include "luks_token.h"

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

static const char *string_field(struct json_object *o, const char *key)
{
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

/* The header is outside input: a thaw token must be exactly what luks_token_build() writes. */
static int token_check(struct json_object *o, struct keysrc *out)
{
        const char *type = string_field(o, "type"), *spec = string_field(o, "thaw-source");
        const char *name;
        struct json_object *slots;
        struct keysrc src;

        if (!type || strncmp(type, LUKS_TOKEN_PREFIX, strlen(LUKS_TOKEN_PREFIX)) != 0 || !spec)
                return -EINVAL;
        if (!json_object_object_get_ex(o, "keyslots", &slots) || !json_object_is_type(slots, json_type_array))
                return -EINVAL;
        if (keysrc_parse(spec, &src) < 0)
                return -EINVAL;
        name = keysrc_type_name(src.type);
        /* "thaw-keyfile" naming a fwcfg source is not ours: the type must say what the source is. */
        if (!name || strcmp(type + strlen(LUKS_TOKEN_PREFIX), name) != 0)
                return -EINVAL;
        *out = src;
        return 0;
}

int luks_token_parse(const char *json, struct keysrc *out)
{
        struct json_tokener *tok;
        struct json_object *o;
        size_t len;
        int r = -EINVAL;

        if (!json || !out)
                return -EINVAL;
        len = strnlen(json, LUKS_TOKEN_JSON_MAX + 1);
        if (len > LUKS_TOKEN_JSON_MAX)
                return -EINVAL;
        tok = json_tokener_new_ex(8); /* a thaw token nests two levels: deeper is not ours */
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, json, (int)len);
        /* Trailing bytes after the object mean the text was not one JSON object. */
        if (o && json_tokener_get_error(tok) == json_tokener_success &&
            json_tokener_get_parse_end(tok) == len && json_object_is_type(o, json_type_object))
                r = token_check(o, out);
        json_object_put(o);
        json_tokener_free(tok);
        return r;
}
