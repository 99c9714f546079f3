/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict base64 decoding and encoding: none of thaw's linked libraries exports one, and keys need no more. */
#include <errno.h>
#include <string.h>
#include <stdint.h>
#include "base64.h"

/* Value of one alphabet character, or -1. No table: a lookup indexed by key bytes would leak
 * them through the cache; these comparisons take the same path for every letter of a class. */
static int b64_value(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int base64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
        size_t pad = 0, need, o = 0;
        int r = 0;

        if (!in || !out || len == 0 || len % 4 != 0)
                return -EINVAL;
        if (in[len - 1] == '=')
                pad = in[len - 2] == '=' ? 2 : 1;
        need = len / 4 * 3 - pad;
        if (need > cap)
                return -EMSGSIZE;
        for (size_t i = 0; i < len && r == 0; i += 4) {
                int v[4];
                uint32_t q = 0;
                size_t n = i + 4 == len ? 4 - pad : 4; /* alphabet characters in this quantum */

                for (size_t j = 0; j < 4; j++) {
                        v[j] = j < n ? b64_value((unsigned char)in[i + j]) : 0;
                        if (v[j] < 0)
                                r = -EINVAL; /* includes '=' anywhere but the end */
                        q = q << 6 | (uint32_t)(v[j] & 63);
                }
                /* Non-zero pad bits: another encoder's text for different bytes; refuse it. */
                if ((pad == 1 && n == 3 && (q & 0xff)) || (pad == 2 && n == 2 && (q & 0xffff)))
                        r = -EINVAL;
                for (size_t j = 0; j < n - 1 && r == 0; j++)
                        out[o++] = (uint8_t)(q >> (16 - 8 * j));
                explicit_bzero(v, sizeof(v));
                explicit_bzero(&q, sizeof(q));
        }
        return r < 0 ? r : (int)o;
}

/* The alphabet character of a 6-bit value, without a table indexed by key bits (see b64_value). */
static char b64_char(unsigned v)
{
        if (v < 26)
                return (char)('A' + v);
        if (v < 52)
                return (char)('a' + v - 26);
        if (v < 62)
                return (char)('0' + v - 52);
        return v == 62 ? '+' : '/';
}

int base64_encode(const uint8_t *in, size_t len, char *out, size_t cap)
{
        size_t need, o = 0;

        if (!in || !out || len > (SIZE_MAX - 1) / 4 * 3 - 3)
                return -EINVAL;
        need = (len + 2) / 3 * 4;
        if (need + 1 > cap || need > INT32_MAX)
                return -EMSGSIZE;
        for (size_t i = 0; i < len; i += 3) {
                size_t n = len - i < 3 ? len - i : 3;
                uint32_t q = (uint32_t)in[i] << 16;

                if (n > 1)
                        q |= (uint32_t)in[i + 1] << 8;
                if (n > 2)
                        q |= in[i + 2];
                out[o++] = b64_char(q >> 18 & 63);
                out[o++] = b64_char(q >> 12 & 63);
                out[o++] = n > 1 ? b64_char(q >> 6 & 63) : '=';
                out[o++] = n > 2 ? b64_char(q & 63) : '=';
                explicit_bzero(&q, sizeof(q));
        }
        out[o] = '\0';
        return (int)o;
}
