/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Huge pages back after the swap-in: MADV_COLLAPSE over the 2 MiB ranges it made whole again. */
#pragma once
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "swapin/swapin.h"

#define COLLAPSE_HPAGE (2u << 20)  /* a PMD-sized transparent huge page on x86_64 */
#define COLLAPSE_MADV 25           /* MADV_COLLAPSE (Linux 6.1), not in every libc's headers */

/* What /sys/kernel/mm/transparent_hugepage/enabled says. */
enum collapse_thp {
        COLLAPSE_THP_ALWAYS,
        COLLAPSE_THP_MADVISE,
        COLLAPSE_THP_NEVER,
};

/* Mode from ROOT/sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never"); -ENOENT without THP, -EINVAL. */
int collapse_thp_mode(const char *root, enum collapse_thp *mode);

enum collapse_stop {
        COLLAPSE_DONE,        /* every candidate was tried */
        COLLAPSE_UNSUPPORTED, /* process_madvise refused MADV_COLLAPSE: a kernel before 6.1 */
        COLLAPSE_FLOOR,       /* stopped: available memory less than a huge page above the floor */
        COLLAPSE_NOMEM,       /* stopped: the kernel found no free huge page many times in a row */
        COLLAPSE_SIGNAL,      /* stopped: *stop_flag was set */
        COLLAPSE_ERROR,       /* stopped: the kernel refused (error says why) */
};

/* process_madvise(2); the tests put a fake in its place. */
typedef ssize_t (*collapse_madvise_fn)(int pidfd, const struct iovec *iov, size_t n, int advice);
/* collapse_write_fault(); the tests put a fake in its place. */
typedef int (*collapse_fault_fn)(pid_t pid, uint64_t addr, const void *guard);
/* swapin_pidfd_alive(); the tests put a fake in its place. */
typedef int (*collapse_alive_fn)(int pidfd);

/*
 * Make the page at addr of process pid writable in its page table, writing nothing into it: a
 * page read back from swap is mapped read-only, and Linux 6.1 collapses no range of read-only
 * pages (SCAN_PAGE_RO: EINVAL), nor does khugepaged. process_vm_writev(2) of one byte from guard
 * (a PROT_NONE page of ours): the kernel takes the target page for writing (the write fault
 * that a write by the process itself would cause) before it copies, and the copy from guard then
 * fails (EFAULT) before a byte is written. 0 when it failed so (the fault was taken, or at worst
 * nothing happened), -ESRCH if the process is gone, -errno; -EIO should a byte ever be written.
 */
int collapse_write_fault(pid_t pid, uint64_t addr, const void *guard);

struct collapse_job {
        /* Input. */
        const char *root;
        uint64_t floor_kib;
        volatile sig_atomic_t *stop_flag;
        collapse_madvise_fn madvise;  /* NULL: process_madvise(2) */
        collapse_fault_fn fault;      /* NULL: collapse_write_fault() */
        collapse_alive_fn alive;      /* NULL: swapin_pidfd_alive() */
        /* Result, in 2 MiB ranges. */
        uint64_t candidates;          /* in THP-eligible anonymous mappings, with a page swapped in */
        uint64_t collapsed;           /* huge pages again */
        uint64_t not_resident;        /* left alone: not every page of it in memory (never a new page) */
        uint64_t failed;              /* the kernel could not (EAGAIN, ENOMEM, EBUSY, EINVAL) */
        enum collapse_stop stop;
        int error;                    /* -errno with COLLAPSE_ERROR */
};

/*
 * Collapse into huge pages the 2 MiB-aligned ranges that hold a page of job->pages (the swap-in's
 * list), lie wholly in an anonymous private mapping that ROOT/proc/PID/smaps calls THPeligible,
 * writable ("wr" in VmFlags) and registered with no userfaultfd ("uw", "um", "ui"), and have
 * every one of their 512 pages in memory and mapped by that process only (ROOT/proc/PID/pagemap):
 * such a range gains no page, it needs a free huge page for the copy, so before each one
 * MemAvailable (from ROOT/proc/meminfo) must be a huge page above the floor. Each range's
 * first page is made writable first (collapse_write_fault()). smaps,
 * pagemap and the write fault go by PID: each is used only while the swap-in's pidfd says the
 * process is still there (cj->alive), so a PID reused since the scan is left alone. --first
 * processes first. Returns 0 (see cj->stop) or -errno (-ENOMEM: no memory for the list).
 */
int collapse_run(struct collapse_job *cj, const struct swapin_job *job);
