/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict base64 decoding: none of thaw's linked libraries exports one, and keys need no more. */
#include <errno.h>
#include <string.h>
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
