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

int handoff_read(const char *root, unsigned *maj, unsigned *min, uint64_t *offset)
{
        char buf[64];
        unsigned a, b;
        uint64_t off = 0;
        int n = 0, r;

        r = util_read_text_at(root, "/sys/power/resume", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (sscanf(buf, "%u:%u%n", &a, &b, &n) != 2 || (buf[n] != '\0' && buf[n] != '\n'))
                return -EINVAL;
        r = util_read_text_at(root, "/sys/power/resume_offset", buf, sizeof(buf));
        if (r >= 0) {
                util_rstrip(buf);
                if (util_parse_u64(buf, UINT64_MAX, &off) < 0)
                        return -EINVAL;
        } else if (r != -ENOENT)
                return r;
        *maj = a;
        *min = b;
        *offset = off;
        return 0;
}
