/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw's one clock: deadlines are CLOCK_MONOTONIC milliseconds, one sleep to wait for them, one rate limit. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

int64_t clock_now_ms(void);
/* The same clock in nanoseconds, for timing short steps (the writer's line). */
uint64_t clock_now_ns(void);
/* Sleep ms milliseconds, resuming after signals; nothing if ms <= 0. */
void clock_sleep_ms(int64_t ms);

/*
 * How often a long step says how far it has got (thaw hibernate's reclaim, thaw setup's integrity
 * tags): a console silent for longer looks hung, to a person and to the test harness, which takes
 * 30 s without output for a hang.
 */
#define CLOCK_PROGRESS_MS 5000

/* A rate limit: due at most once every interval_ms, the first time interval_ms after the start. */
struct clock_every {
        int64_t interval_ms;
        int64_t next_ms; /* clock_now_ms() from which it is due again */
};

void clock_every_start(struct clock_every *e, int64_t interval_ms);
/* True when it is due at now_ms (then the next is due interval_ms after now_ms), else false. */
bool clock_every_due_at(struct clock_every *e, int64_t now_ms);
/* clock_every_due_at() now. */
bool clock_every_due(struct clock_every *e);
