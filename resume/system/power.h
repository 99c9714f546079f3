/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What /sys/power and /proc say about hibernation: availability, swap space, memory. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* 1 if the kernel offers hibernation, 0 if not (why says why), -errno if it cannot tell. */
int power_hibernation_available(const char *root, char *why, size_t size);
/* 1 if /sys/power/disk offers mode ("shutdown", "platform", "reboot"), 0 if not. */
int power_mode_offered(const char *root, const char *mode);

struct power_meminfo {
        uint64_t mem_total_kib;
        uint64_t mem_available_kib; /* MemAvailable (0 if absent) */
        uint64_t anon_kib;          /* AnonPages */
        uint64_t shmem_kib;         /* Shmem */
        uint64_t sunreclaim_kib;    /* SUnreclaim (0 if absent) */
        uint64_t pagetables_kib;    /* PageTables (0 if absent) */
        uint64_t kernelstack_kib;   /* KernelStack (0 if absent) */
        uint64_t image_size_kib;    /* /sys/power/image_size; UINT64_MAX if unreadable */
        uint64_t swap_total_kib;    /* SwapTotal, SwapFree, SwapCached (0 if absent) */
        uint64_t swap_free_kib;
        uint64_t swap_cached_kib;
};
/* ROOT/proc/meminfo (MemTotal, AnonPages and Shmem required) and ROOT/sys/power/image_size. */
int power_meminfo(const char *root, struct power_meminfo *out);
/*
 * How much swap the image needs: at least what cannot be freed (anonymous memory, shmem,
 * unreclaimable slab, page tables, kernel stacks), and the kernel shrinks the rest towards
 * image_size but never below what is in use: max(unfreeable, min(image_size, MemTotal - MemAvailable)).
 */
uint64_t power_image_estimate_kib(const struct power_meminfo *m);

struct power_swap {
        uint64_t size_kib;
        uint64_t used_kib;
        int priority;    /* negative: the kernel chose it (swapon without a priority) */
};

struct power_rival {
        char name[256];    /* as /proc/swaps names it (truncated) */
        int priority;
        uint64_t free_kib;
        unsigned count;    /* how many such swaps are active */
};
/*
 * Is another swap active that Linux uses before thaw's, or as much? In ROOT/proc/swaps, the
 * swap of the highest priority, not below priority (thaw's), whose name is none of mine (a
 * NULL-terminated list: thaw's swap as /proc/swaps may name it). zram is left out. 1 and *out
 * filled, 0 if there is none.
 */
int power_swap_rival(const char *root, const char *const *mine, int priority, struct power_rival *out);

/* swapon(2) flags that give a swap area back the priority /proc/swaps showed for it. */
int power_swapon_flags(int priority);
/*
 * Find the active swap on /dev/<kname> or on path (e.g. /dev/mapper/thaw-swap) in ROOT/proc/swaps.
 * -ENOENT if it is not active swap.
 */
int power_swap_find(const char *root, const char *kname, const char *path, struct power_swap *out);

/*
 * Proactive reclaim before hibernating: write kib to ROOT/sys/fs/cgroup/memory.reclaim (cgroup v2,
 * Linux 5.19+), so the kernel swaps out and drops caches now, in large sequential writes. -EAGAIN
 * if it reclaimed less than asked (not an error for the caller), -ENOENT without cgroup v2.
 */
int power_reclaim(const char *root, uint64_t kib);

/*
 * Power the machine off at once (sync first; nothing of the boot is mounted yet): for
 * rd.thaw.mismatch=poweroff. Returns -errno only if it could not (no CAP_SYS_BOOT); with a
 * root prefix (tests) it does nothing and returns -ENOTSUP.
 */
int power_off_now(const char *root);
