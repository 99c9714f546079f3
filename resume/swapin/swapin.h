/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The prefetch swap-in: find swapped pages in every process, read them back in swap order. */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "swapin/pagemap.h"

#define SWAPIN_FIRST_MAX 32
#define SWAPIN_THREADS_MAX 16
#define SWAPIN_BATCH_MAX 65536 /* pages (256 MiB) */

enum swapin_stop {
        SWAPIN_DONE,     /* every page found was brought back */
        SWAPIN_FLOOR,    /* stopped: available memory reached the floor */
        SWAPIN_SIGNAL,   /* stopped: *stop_flag was set (within one group of 1024 pages) */
        SWAPIN_ERROR,    /* stopped: the kernel refused (error says why) */
};

struct swapin_proc {
        pid_t pid;
        int pidfd;       /* -1 once the process is gone */
        char comm[16];
        uint64_t pages;  /* swapped pages found */
};

struct swapin_job {
        /* Input. */
        const char *root;
        const char *first[SWAPIN_FIRST_MAX]; /* PIDs or command names to bring back first */
        size_t n_first;
        uint64_t floor_kib;
        unsigned threads;
        unsigned batch_pages;
        volatile sig_atomic_t *stop_flag;    /* set by the caller (a signal) to stop soon */
        /* Found by swapin_scan(). */
        struct swapin_proc *procs;
        size_t n_procs;
        struct swapped_list pages;
        uint64_t first_pages;                /* of which belong to --first processes */
        bool offsets_known;                  /* pagemap gave swap offsets (CAP_SYS_ADMIN) */
        /* Progress, updated by swapin_run() (read it under no lock: approximate). */
        volatile uint64_t done_pages;
        volatile uint64_t skipped_pages;     /* gone or unmapped since the scan */
        enum swapin_stop stop;
        int error;                           /* -errno with SWAPIN_ERROR */
        const char *error_call;              /* "process_madvise" or "process_vm_readv" */
        /* Where the time of swapin_run() went, ns; busy times summed over the threads. */
        struct swapin_times {
                uint64_t wall;   /* the whole run */
                unsigned threads; /* the threads that started (job->threads asked for) */
                uint64_t advise; /* in process_madvise: queueing the reads */
                uint64_t map;    /* in process_vm_readv: waiting for the reads, mapping */
                uint64_t take;   /* taking a batch: the lock, MemAvailable, waiting at the floor */
                /* From /proc/thread-self/schedstat of each thread that has one (sched_threads). */
                uint64_t on_cpu; /* running */
                uint64_t runq;   /* runnable, waiting for a CPU: what nice 19 costs when others run */
                unsigned sched_threads;
        } times;
};

/*
 * Find every process under ROOT/proc (but this one) with swapped pages, open a pidfd for each
 * (opened before its pagemap is read, so a recycled PID cannot be taken for it) and list the
 * pages in swap order, --first processes first. Returns the number of pages, -EINTR if
 * *stop_flag was set meanwhile, -errno.
 */
int swapin_scan(struct swapin_job *job);

/*
 * Bring the listed pages back: job->threads threads take batches of job->batch_pages in order,
 * advise them (process_madvise MADV_WILLNEED: the kernel reads them into the swap cache, merged
 * into large requests) and map them (process_vm_readv of one byte per page). Before each batch,
 * MemAvailable from ROOT/proc/meminfo, minus what other threads have on the way, must stay above
 * the floor; otherwise it stops with SWAPIN_FLOOR. Returns 0 (see job->stop) or -errno.
 */
int swapin_run(struct swapin_job *job);

/*
 * 0 if the process of pidfd has exited, 1 if not (a signal 0 through the pidfd: no signal is
 * sent). The check that a PID read since the scan still names the process scanned.
 */
int swapin_pidfd_alive(int pidfd);

void swapin_free(struct swapin_job *job);
