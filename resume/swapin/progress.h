/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The text of the swap-in's progress bar: how much is done, how fast, how long is left. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define PROGRESS_WIDTH 30  /* characters of the bar itself */
#define PROGRESS_LINE_MAX 96

/*
 * "[#########.....................]  120 / 400 MiB   10.0 MiB/s   28 s left": done_kib of
 * total_kib after secs seconds (whole MiB as "%.0f" rounds them, like the summary). The rate is the average since the start; the time left is what
 * remains at that rate ("min" past two minutes), left out while nothing is done yet and once all
 * is. Returns the length, or -ENOSPC if it does not fit in size.
 */
int progress_format(char *buf, size_t size, uint64_t done_kib, uint64_t total_kib, double secs);
