/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The text of the swap-in's progress bar: how much is done, how fast, how long is left. */
#include "swapin/progress.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int progress_format(char *buf, size_t size, uint64_t done_kib, uint64_t total_kib, double secs)
{
        char bar[PROGRESS_WIDTH + 1], left[24] = "";
        size_t fill = PROGRESS_WIDTH;
        double rate;
        int r;

        if (done_kib > total_kib)
                done_kib = total_kib;
        rate = secs > 0 ? (double)done_kib / 1024.0 / secs : 0;
        if (total_kib > 0)
                fill = (size_t)((double)done_kib * PROGRESS_WIDTH / (double)total_kib);
        memset(bar, '#', fill);
        memset(bar + fill, '.', PROGRESS_WIDTH - fill);
        bar[PROGRESS_WIDTH] = '\0';
        if (rate > 0 && done_kib < total_kib) {
                double s = (double)(total_kib - done_kib) / 1024.0 / rate;

                if (s > 99999 * 60.0)
                        s = 99999 * 60.0; /* a stall: keep the line its width */
                if (s < 120)
                        snprintf(left, sizeof(left), "   %.0f s left", s);
                else
                        snprintf(left, sizeof(left), "   %.0f min left", s / 60);
        }
        r = snprintf(buf, size, "[%s] %4.0f / %.0f MiB  %6.1f MiB/s%s", bar, (double)done_kib / 1024.0,
                     (double)total_kib / 1024.0, rate, left);
        if (r < 0 || (size_t)r >= size)
                return -ENOSPC;
        return r;
}
