/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text from outside thaw (LUKS2 header fields, token JSON, state files) made safe to print. */
#pragma once
#include <stddef.h>

/*
 * Copy src into dst (size bytes, always NUL-terminated when size > 0) with every byte a terminal
 * could act on written as \xNN: control characters (< 0x20, 0x7f), C1 controls (U+0080-U+009F in
 * UTF-8) and bytes that are not part of valid UTF-8. A sequence is never cut: what does not fit is
 * left out whole. Returns the length written.
 */
size_t escape_text(char *dst, size_t size, const char *src);
