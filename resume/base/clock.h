/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw's one clock: deadlines are CLOCK_MONOTONIC milliseconds, and one sleep to wait for them. */
#pragma once
#include <stdint.h>

int64_t clock_now_ms(void);
/* The same clock in nanoseconds, for timing short steps (the writer's line). */
uint64_t clock_now_ns(void);
/* Sleep ms milliseconds, resuming after signals; nothing if ms <= 0. */
void clock_sleep_ms(int64_t ms);
