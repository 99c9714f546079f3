/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The swap-in plan: swapped pages in device order, cut into batches of ranges, within a memory floor. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "swapin/pagemap.h"
#include "system/power.h"

/* A run of pages that is contiguous both in one process's address space and in swap. */
struct swap_range {
        uint64_t addr;
        uint64_t pages;
        uint32_t proc;
};

/* Order: --first processes, then by swap area and offset (the device is read front to back). */
void swapplan_sort(struct swapped_page *v, size_t n);

/*
 * The ranges of the batch v[0..n) (sorted), grouped by process, each process's ranges in swap
 * order. out must hold n ranges. Returns the number of ranges.
 */
size_t swapplan_ranges(const struct swapped_page *v, size_t n, struct swap_range *out);

/*
 * How many KiB may still be brought in: available memory minus the floor, minus what is already
 * on its way in (inflight). 0 when at or below the floor.
 */
uint64_t swapplan_room_kib(uint64_t available_kib, uint64_t floor_kib, uint64_t inflight_kib);

/* The default floor: a tenth of RAM, at least 64 MiB (never more than half of RAM). */
uint64_t swapplan_floor_default_kib(uint64_t mem_total_kib);

/*
 * A size for --floor: a number with an optional K, M, G or T suffix (powers of 1024; no suffix:
 * bytes), or a percentage of mem_total_kib ("10%"). Result in KiB. -EINVAL / -ERANGE.
 */
int swapplan_parse_size(const char *s, uint64_t mem_total_kib, uint64_t *kib);

/* Swapped memory that is not also in RAM: SwapTotal - SwapFree - SwapCached. */
uint64_t swapplan_swapped_kib(const struct power_meminfo *m);
