/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON text from outside (LUKS2 tokens, the image ticket) taken in as one object, capped in size and depth. */
#include "jsontext.h"
#include "base/util.h"

#include <errno.h>
#include <string.h>

int jsontext_object(const char *json, size_t max, int depth, struct json_object **out, char *why, size_t size)
{
        struct json_tokener *tok;
        struct json_object *o;
        size_t len = strnlen(json, max + 1);
        int r = 0;

        if (len > max)
                return util_why(why, size, -EINVAL, "larger than %zu bytes", max);
        tok = json_tokener_new_ex(depth);
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, json, (int)len);
        /*
         * Trailing bytes after the object mean the text was not one JSON object. A key given twice
         * cannot be seen: json-c keeps the last, as libcryptsetup (json-c too) does when it stores it.
         */
        if (!o || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len)
                r = util_why(why, size, -EINVAL, "not valid JSON (or nested too deeply)");
        else if (!json_object_is_type(o, json_type_object))
                r = util_why(why, size, -EINVAL, "not a JSON object");
        json_tokener_free(tok);
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *out = o;
        return 0;
}
