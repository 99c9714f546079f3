/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's CRC32, computed here bit by bit: what the image code's CRC32 is checked against. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Kernel crc32_le, bit by bit: the oracle for imgcrc_update(). */
static inline uint32_t ref_crc(uint32_t c, const uint8_t *p, size_t n)
{
        while (n--) {
                c ^= *p++;
                for (int k = 0; k < 8; k++)
                        c = (c >> 1) ^ (c & 1 ? 0xEDB88320u : 0);
        }
        return c;
}
