/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Little-endian fields of on-disk structures (swap header, hibernation image, e820 table). */
#pragma once
#include <stdint.h>

static inline uint64_t bytes_le64(const uint8_t *p)
{
        uint64_t v = 0;

        for (int i = 7; i >= 0; i--)
                v = (v << 8) | p[i];
        return v;
}

static inline uint32_t bytes_le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void bytes_put_le(uint8_t *p, uint64_t v, int bytes)
{
        for (int i = 0; i < bytes; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}
