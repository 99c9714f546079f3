/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image's CRC32 as the kernel computes it: what the writer records and the verifier checks. */
#include "image/imgcrc.h"

#include <zlib.h>

/*
 * crc32_le without inversions, as kernel/power/swap.c's crc32_threadfn() chains it. zlib's crc32()
 * inverts on the way in and out: zlib(c, d) = ~raw(~c, d), so raw(c, d) = ~zlib(~c, d).
 */
uint32_t imgcrc_update(uint32_t crc, const void *data, size_t len)
{
        return ~(uint32_t)crc32_z(~crc & 0xFFFFFFFFu, data, len);
}
