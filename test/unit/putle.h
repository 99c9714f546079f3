/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Little-endian fields written into pages built by a test. */
#pragma once
#include <stdint.h>

static inline void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}
