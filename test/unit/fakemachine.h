/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A fixture machine tree for machine_read(): /proc/zoneinfo, /sys/firmware/memmap, ACPI FACS, the kernel release. */
#pragma once
#include "faketree.h"
#include "putle.h"

static const char zoneinfo[] =
        "Node 0, zone      DMA\n  pages free     3840\n        present  3998\n        managed  3840\n"
        "  pagesets\n    cpu: 0\n              count: 0\n"
        "Node 0, zone    DMA32\n  pages free     150000\n        present  192480\n"
        "        managed  180000\n";

static inline void memmap(int i, const char *start, const char *end, const char *type)
{
        char rel[64];

        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%d/start", i);
        ft_puts(rel, start);
        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%d/end", i);
        ft_puts(rel, end);
        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%d/type", i);
        ft_puts(rel, type);
}

static inline void machine_fixture(const char *release)
{
        uint8_t facs[64] = { 'F', 'A', 'C', 'S' };

        ft_puts("/proc/sys/kernel/osrelease", release);
        ft_puts("/proc/zoneinfo", zoneinfo);
        ft_puts("/proc/crypto", "name         : lzo\ndriver       : lzo-generic\n");
        put32(facs + 8, 0xcafe0001);
        ft_put("/sys/firmware/acpi/tables/FACS", facs, sizeof(facs));
        /* Listed out of order on purpose: the index, not readdir, gives the table order. */
        memmap(3, "0x100000\n", "0x2fffffff\n", "System RAM\n");
        memmap(0, "0x0\n", "0x9fbff\n", "System RAM\n");
        memmap(1, "0x9fc00\n", "0x9ffff\n", "Reserved\n");
        memmap(4, "0xfffc0000\n", "0xffffffff\n", "Reserved\n");
        memmap(2, "0xf0000\n", "0xfffff\n", "Reserved\n");
}
