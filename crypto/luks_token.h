/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON of the thaw-* LUKS2 tokens: built from a key source, and validated strictly when read back. */
#pragma once
#include <stddef.h>
#include "keysrc.h"

#define LUKS_TOKEN_JSON_MAX 4096 /* a thaw token is ~100 bytes; anything far larger is not ours */
#define LUKS_TOKEN_KEYSLOTS_MAX 32 /* LUKS2 keyslots are 0..31 */

/* {"type":"thaw-<type>","keyslots":[],"thaw-source":"<type>:<arg>"}; -ENAMETOOLONG if size is short. */
int luks_token_build(const struct keysrc *src, char *buf, size_t size);
/* 0 and *out for a well-formed thaw token; -EINVAL for anything else (not ours, or malformed). */
int luks_token_parse(const char *json, struct keysrc *out);
/*
 * The same, strict: exactly "type", "keyslots" (keyslot numbers) and "thaw-source" of the right JSON
 * types and sizes. On -EINVAL, why (may be NULL) says in one line what is wrong ("\"thaw-source\"
 * is not a string"); -ENOMEM only from json-c.
 */
int luks_token_check(const char *json, struct keysrc *out, char *why, size_t size);
