/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hand a swap device with a hibernation image to the kernel through /sys/power. */
#include "system/handoff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "base/util.h"

int handoff_write(const char *root, unsigned maj, unsigned min, uint64_t offset)
{
        char buf[48];
        int n, r;

        /* resume_offset first: writing resume starts the resume at once, with the offset it has. */
        n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", offset);
        if (n < 0 || (size_t)n >= sizeof(buf))
                return -EINVAL;
        r = util_write_text_at(root, "/sys/power/resume_offset", buf);
        /* Kernels before 4.17 lack resume_offset; offset 0 is their only value anyway. */
        if (r < 0 && !(r == -ENOENT && offset == 0))
                return r;
        n = snprintf(buf, sizeof(buf), "%u:%u\n", maj, min);
        if (n < 0 || (size_t)n >= sizeof(buf))
                return -EINVAL;
        return util_write_text_at(root, "/sys/power/resume", buf);
}
