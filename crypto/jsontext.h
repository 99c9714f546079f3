/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON text from outside (LUKS2 tokens, the image ticket) taken in as one object, capped in size and depth. */
#pragma once
#include <stddef.h>
#include <json-c/json.h>

/*
 * Parses json (at most max bytes, objects and arrays nested at most depth deep) as exactly one
 * JSON object with nothing after it. 0 and *out the object (the caller puts it), or -EINVAL with a
 * reason in why (size bytes, may be NULL), or -ENOMEM; *out is not set on failure.
 */
int jsontext_object(const char *json, size_t max, int depth, struct json_object **out, char *why, size_t size);
