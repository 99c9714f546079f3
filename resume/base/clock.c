/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw's one clock: deadlines are CLOCK_MONOTONIC milliseconds, one sleep to wait for them, one rate limit. */
#include "base/clock.h"

#include <errno.h>
#include <time.h>

int64_t clock_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t clock_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void clock_sleep_ms(int64_t ms)
{
        struct timespec ts;

        if (ms <= 0)
                return;
        ts.tv_sec = (time_t)(ms / 1000);
        ts.tv_nsec = (long)(ms % 1000) * 1000000L;
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

void clock_every_start(struct clock_every *e, int64_t interval_ms)
{
        e->interval_ms = interval_ms;
        e->next_ms = clock_now_ms() + interval_ms;
}

bool clock_every_due_at(struct clock_every *e, int64_t now_ms)
{
        if (now_ms < e->next_ms)
                return false;
        e->next_ms = now_ms + e->interval_ms;
        return true;
}

bool clock_every_due(struct clock_every *e)
{
        return clock_every_due_at(e, clock_now_ms());
}
