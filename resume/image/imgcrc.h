/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image's CRC32 as the kernel computes it: what the writer records and the verifier checks. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Kernel crc32_le(crc, data) with no inversions (its image CRC), through zlib; 0 to start. */
uint32_t imgcrc_update(uint32_t crc, const void *data, size_t len);
