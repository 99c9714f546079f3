/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fixture root with thaw's swap mapped (dm-3, thaw-swap) and active, /sys/power offering
 * hibernation, and /proc/meminfo of a 2 GB machine: for the handoff, power, dm and hibernate checks.
 */
#pragma once
#include "faketree.h"

static inline void fake_dm(const char *kname, const char *name, const char *dev)
{
        char rel[128];

        snprintf(rel, sizeof(rel), "/sys/block/%s/dm/name", kname);
        ft_puts(rel, name);
        snprintf(rel, sizeof(rel), "/sys/block/%s/dev", kname);
        ft_puts(rel, dev);
}

static inline int fakesys_setup(void **state)
{
        if (ft_setup(state) < 0)
                return -1;
        ft_puts("/sys/block/vda/dev", "254:0\n");
        fake_dm("dm-0", "other\n", "253:0\n");
        fake_dm("dm-3", "thaw-swap\n", "253:3\n");
        ft_puts("/sys/power/resume", "0:0\n");
        ft_puts("/sys/power/resume_offset", "0\n");
        ft_puts("/sys/power/disk", "[platform] shutdown reboot suspend test_resume\n");
        ft_puts("/sys/power/state", "freeze mem disk\n");
        ft_puts("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                               "/dev/dm-3                               partition\t1048572\t\t1024\t\t-2\n");
        /* unfreeable 250000+20000+30000+15000+5000 = 320000 KiB; in use 300000; image_size 800000 */
        ft_puts("/proc/meminfo", "MemTotal:        2000000 kB\nMemFree:  100 kB\nMemAvailable:  1700000 kB\n"
                                 "AnonPages:      250000 kB\nShmem:    20000 kB\nKernelStack:  5000 kB\n"
                                 "PageTables:     15000 kB\nSecPageTables:  99999 kB\nSReclaimable: 77777 kB\n"
                                 "SUnreclaim:     30000 kB\nShmemHugePages: 0 kB\n");
        ft_puts("/sys/power/image_size", "819200000\n");
        return 0;
}
