/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the running machine's kernel will compare a hibernation image against, read from ROOT. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define MACHINE_E820_MAX 1024 /* firmware memory map entries we read, at most */

struct machine_info {
        char release[65];       /* ROOT/proc/sys/kernel/osrelease, "" if unreadable */
        unsigned kmajor, kminor; /* 0.0 if unknown */
        int lz4;                /* 1: the kernel has or can load lz4, 0: it cannot, -1: unknown */
        bool have_facs;         /* facs_sig is known (0 without ACPI FACS) */
        uint32_t facs_sig;
        bool have_mem;          /* present_pages is known */
        uint64_t present_pages; /* sum of "present" over ROOT/proc/zoneinfo */
        bool have_e820;         /* e820_crc is known */
        uint32_t e820_crc;      /* rebuilt from ROOT/sys/firmware/memmap as the kernel computes it */
        unsigned e820_entries;
};

/* Fill out with what can be read; what cannot stays unknown. Always returns 0. */
int machine_read(const char *root, struct machine_info *out);
/* Only have_facs and facs_sig (ROOT/sys/firmware/acpi/tables/FACS), the rest of m untouched. */
void machine_read_facs(const char *root, struct machine_info *m);
/* Type number of a /sys/firmware/memmap type string; 0 if unknown. */
uint32_t machine_e820_type(const char *name);
