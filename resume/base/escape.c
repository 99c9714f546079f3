/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text from outside thaw made safe to print: control bytes and invalid UTF-8 as \xNN. */
#include "base/escape.h"

#include <stdint.h>
#include <string.h>

/*
 * Length of the valid UTF-8 sequence at s (1-4), 0 if s does not start one. Overlong forms,
 * surrogates and code points above U+10FFFF are invalid (a terminal may decode them anyway).
 * *cp gets the code point.
 */
static size_t utf8_len(const unsigned char *s, uint32_t *cp)
{
        size_t n;
        uint32_t c, min;

        if (s[0] < 0x80) {
                *cp = s[0];
                return 1;
        }
        if ((s[0] & 0xe0) == 0xc0) {
                n = 2, c = s[0] & 0x1f, min = 0x80;
        } else if ((s[0] & 0xf0) == 0xe0) {
                n = 3, c = s[0] & 0x0f, min = 0x800;
        } else if ((s[0] & 0xf8) == 0xf0) {
                n = 4, c = s[0] & 0x07, min = 0x10000;
        } else {
                return 0;
        }
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
                        return 0;
                c = (c << 6) | (s[i] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        *cp = c;
        return n;
}

size_t escape_text(char *dst, size_t size, const char *src)
{
        static const char hex[] = "0123456789abcdef";
        const unsigned char *s = (const unsigned char *)src;
        size_t used = 0;

        if (size == 0)
                return 0;
        while (*s) {
                uint32_t cp = 0;
                size_t n = utf8_len(s, &cp);

                /* Security: ESC, CSI (0x9b) and the rest would let header text drive the terminal
                 * (move the cursor, rewrite a line already printed, set the window title). */
                if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
                        size_t k = n ? n : 1;

                        if (used + 4 * k >= size)
                                break;
                        for (size_t i = 0; i < k; i++) {
                                dst[used++] = '\\';
                                dst[used++] = 'x';
                                dst[used++] = hex[s[i] >> 4];
                                dst[used++] = hex[s[i] & 0xf];
                        }
                        s += k;
                } else {
                        if (used + n >= size)
                                break;
                        memcpy(dst + used, s, n);
                        used += n;
                        s += n;
                }
        }
        dst[used] = '\0';
        return used;
}
