/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The prefetch swap-in: find swapped pages in every process, read them back in swap order. */
#include "swapin/swapin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "system/power.h"
#include "swapin/swapplan.h"
#include "base/util.h"

#define PROCS_MAX 1000000
#define IOV_BATCH 1024 /* UIO_MAXIOV */
#define FLOOR_WAIT_NS 50000000L

static uint64_t now_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int pidfd_open_(pid_t pid)
{
        return (int)syscall(SYS_pidfd_open, pid, 0);
}

int swapin_pidfd_alive(int pidfd)
{
        return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno != ESRCH;
}

static ssize_t process_madvise_(int pidfd, const struct iovec *iov, size_t n, int advice)
{
        return syscall(SYS_process_madvise, pidfd, iov, n, advice, 0);
}

static int numeric(const char *s, pid_t *pid)
{
        uint64_t v;

        if (util_parse_u64(s, INT_MAX, &v) < 0 || v == 0)
                return 0;
        *pid = (pid_t)v;
        return 1;
}

static int is_first(const struct swapin_job *job, const struct swapin_proc *p)
{
        for (size_t i = 0; i < job->n_first; i++) {
                pid_t pid;

                if (numeric(job->first[i], &pid) ? pid == p->pid : strcmp(job->first[i], p->comm) == 0)
                        return 1;
        }
        return 0;
}

static void read_comm(const char *root, pid_t pid, char *comm, size_t size)
{
        char rel[64], buf[64];

        comm[0] = '\0';
        snprintf(rel, sizeof(rel), "/proc/%d/comm", (int)pid);
        if (util_read_text_at(root, rel, buf, sizeof(buf)) < 0)
                return;
        util_rstrip(buf);
        snprintf(comm, size, "%.15s", buf);
}

/* Scan one process into the job; 0 also when it has nothing swapped or is gone. */
static int scan_one(struct swapin_job *job, pid_t pid)
{
        struct swapin_proc *p;
        int fd, r;

        if (job->n_procs >= PROCS_MAX)
                return -E2BIG;
        fd = pidfd_open_(pid);
        if (fd < 0)
                return errno == ESRCH ? 0 : -errno;
        p = &job->procs[job->n_procs];
        *p = (struct swapin_proc){ .pid = pid, .pidfd = fd };
        read_comm(job->root, pid, p->comm, sizeof(p->comm));
        r = pagemap_scan(job->root, pid, (uint32_t)job->n_procs, is_first(job, p) ? 0 : 1, &job->pages);
        if (r <= 0) {
                close(fd);
                /* Gone, a kernel thread, or nothing to read: not an error for the whole run. */
                return r == -E2BIG || r == -ENOMEM ? r : 0;
        }
        p->pages = (uint64_t)r;
        job->n_procs++;
        return 0;
}

int swapin_scan(struct swapin_job *job)
{
        char path[PATH_MAX];
        size_t cap = 256;
        struct dirent *d;
        pid_t self = getpid(), pid;
        DIR *dir;
        int r = util_path(path, sizeof(path), job->root, "/proc");

        if (r < 0)
                return r;
        dir = opendir(path);
        if (!dir)
                return -errno;
        job->procs = calloc(cap, sizeof(*job->procs));
        if (!job->procs) {
                closedir(dir);
                return -ENOMEM;
        }
        while (r == 0 && (d = readdir(dir))) {
                if (job->stop_flag && *job->stop_flag) {
                        r = -EINTR;
                        break;
                }
                if (!numeric(d->d_name, &pid) || pid == self)
                        continue;
                if (job->n_procs == cap) {
                        struct swapin_proc *v = realloc(job->procs, 2 * cap * sizeof(*v));

                        if (!v) {
                                r = -ENOMEM;
                                break;
                        }
                        job->procs = v;
                        cap *= 2;
                }
                r = scan_one(job, pid);
        }
        closedir(dir);
        if (r < 0)
                return r;
        job->first_pages = 0;
        job->offsets_known = false;
        for (size_t i = 0; i < job->pages.n; i++) {
                job->first_pages += job->pages.v[i].cls == 0;
                job->offsets_known |= job->pages.v[i].offset != 0;
        }
        swapplan_sort(job->pages.v, job->pages.n);
        return (int)(job->pages.n > INT_MAX ? INT_MAX : job->pages.n);
}

void swapin_free(struct swapin_job *job)
{
        for (size_t i = 0; i < job->n_procs; i++)
                if (job->procs[i].pidfd >= 0)
                        close(job->procs[i].pidfd);
        free(job->procs);
        job->procs = NULL;
        job->n_procs = 0;
        swapped_list_free(&job->pages);
}

/* Shared between the threads of one run. */
struct run {
        struct swapin_job *job;
        pthread_mutex_t lock;
        pthread_cond_t changed;
        size_t next;           /* first page not yet taken */
        uint64_t inflight_kib; /* taken, not yet mapped */
};

/* Stop the run for everyone (the first reason wins). Called with the lock held. */
static void stop_locked(struct run *run, enum swapin_stop why, int error, const char *call)
{
        if (run->job->stop == SWAPIN_DONE) {
                run->job->stop = why;
                run->job->error = error;
                run->job->error_call = call;
        }
        pthread_cond_broadcast(&run->changed);
}

/*
 * Take the next batch if memory allows: [*start, *start + *n). 0 when there is nothing (more) to
 * do. Security of the machine: this is where the floor is kept.
 */
static int take_batch(struct run *run, size_t *start, size_t *n)
{
        struct swapin_job *job = run->job;
        int got = 0;

        pthread_mutex_lock(&run->lock);
        for (;;) {
                struct power_meminfo m;
                size_t want = job->pages.n - run->next;
                uint64_t room;

                if (job->stop_flag && *job->stop_flag)
                        stop_locked(run, SWAPIN_SIGNAL, 0, NULL);
                if (job->stop != SWAPIN_DONE || want == 0)
                        break;
                if (want > job->batch_pages)
                        want = job->batch_pages;
                if (power_meminfo(job->root, &m) < 0 || m.mem_available_kib == 0) {
                        stop_locked(run, SWAPIN_ERROR, -ENODATA, "MemAvailable");
                        break;
                }
                room = swapplan_room_kib(m.mem_available_kib, job->floor_kib, run->inflight_kib);
                if (room < want * (PAGEMAP_PAGE / 1024) && run->inflight_kib > 0) {
                        /* What others bring in is not yet counted in MemAvailable: wait for it. */
                        struct timespec t;

                        clock_gettime(CLOCK_REALTIME, &t);
                        t.tv_nsec += FLOOR_WAIT_NS;
                        if (t.tv_nsec >= 1000000000L) {
                                t.tv_sec++;
                                t.tv_nsec -= 1000000000L;
                        }
                        pthread_cond_timedwait(&run->changed, &run->lock, &t);
                        continue;
                }
                if (room < want * (PAGEMAP_PAGE / 1024))
                        want = (size_t)(room / (PAGEMAP_PAGE / 1024));
                if (want == 0) {
                        stop_locked(run, SWAPIN_FLOOR, 0, NULL);
                        break;
                }
                *start = run->next;
                *n = want;
                run->next += want;
                run->inflight_kib += want * (PAGEMAP_PAGE / 1024);
                got = 1;
                break;
        }
        pthread_mutex_unlock(&run->lock);
        return got;
}

/* Per-thread buffers, and where this thread's time went (per call of IOV_BATCH pages, not per page). */
struct worker {
        struct run *run;
        struct swap_range *ranges;
        struct swapin_times times;
        struct iovec iov[IOV_BATCH];
        char sink[IOV_BATCH];
};

/* A process that is gone (or whose memory is gone) only loses its own pages. */
static int gone(int err)
{
        return err == ESRCH || err == ENOMEM || err == EFAULT;
}

/* MADV_WILLNEED over iov[0..n) of one process: the kernel queues the reads and returns. */
static int advise(struct worker *w, struct swapin_proc *p, size_t n)
{
        size_t i = 0;

        while (i < n && p->pidfd >= 0) {
                ssize_t r = process_madvise_(p->pidfd, w->iov + i, n - i, MADV_WILLNEED);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0 && errno == ESRCH)
                        return 0; /* exited: process_vm_readv will say so too */
                if (r < 0 && !gone(errno))
                        return -errno;
                /* Partial (or an unmapped range): skip past the range that failed. */
                for (size_t done = r > 0 ? (size_t)r : 0; i < n && done >= w->iov[i].iov_len; i++)
                        done -= w->iov[i].iov_len;
                i++;
        }
        return 0;
}

/*
 * Read one byte of every page in iov[0..n): each read faults its page in and maps it.
 * process_vm_readv goes by PID, which may have been recycled since the scan: if the pidfd says the
 * process is gone after a read, that read may have hit another process (only faulting in its pages:
 * the byte read goes to a sink), so none of it counts as done.
 */
static int touch(struct worker *w, struct swapin_proc *p, size_t n, uint64_t *skipped)
{
        struct iovec local = { .iov_base = w->sink, .iov_len = n };
        size_t i = 0;

        while (i < n) {
                ssize_t r;
                int err;

                local.iov_len = n - i;
                r = process_vm_readv(p->pid, &local, 1, w->iov + i, n - i, 0);
                err = errno;
                if (r < 0 && err == EINTR)
                        continue;
                if (!swapin_pidfd_alive(p->pidfd)) {
                        *skipped += n - i;
                        return 0;
                }
                if (r < 0 && !gone(err))
                        return -err;
                if (r < 0 && err == ESRCH) {
                        *skipped += n - i;
                        return 0;
                }
                /* Short: the page after the last one read is no longer mapped; skip it. */
                i += r > 0 ? (size_t)r : 0;
                if (i < n) {
                        (*skipped)++;
                        i++;
                }
        }
        return 0;
}

static int stopping(const struct worker *w)
{
        return w->run->job->stop_flag && *w->run->job->stop_flag;
}

/*
 * Touch iov[0..n) unless a stop was asked for (-EINTR: a signal does not wait for the rest of
 * the batch); *handled counts the pages touched or skipped.
 */
static int touch_some(struct worker *w, struct swapin_proc *p, size_t n, uint64_t *skipped, uint64_t *handled)
{
        uint64_t t;
        int r;

        if (stopping(w))
                return -EINTR;
        t = now_ns();
        r = touch(w, p, n, skipped);
        w->times.map += now_ns() - t;
        *handled += n; /* tried: on an error, touch() may have counted some of them as skipped */
        return r;
}

/* Advise, then touch, the ranges of one process: ranges[0..k). */
static int do_proc(struct worker *w, const struct swap_range *ranges, size_t k, uint64_t *skipped,
                   uint64_t *handled, const char **call)
{
        struct swapin_proc *p = &w->run->job->procs[ranges[0].proc];
        size_t n = 0, j = 0;
        uint64_t t;
        int r;

        /* Advise in groups of whole ranges. */
        while (j < k) {
                for (n = 0; j < k && n < IOV_BATCH; j++, n++)
                        w->iov[n] = (struct iovec){ .iov_base = (void *)(uintptr_t)ranges[j].addr,
                                                    .iov_len = ranges[j].pages * PAGEMAP_PAGE };
                t = now_ns();
                r = advise(w, p, n);
                w->times.advise += now_ns() - t;
                if (r < 0) {
                        *call = "process_madvise";
                        return r;
                }
        }
        /* Touch one byte per page, in the same order. */
        *call = "process_vm_readv";
        n = 0;
        for (j = 0; j < k; j++) {
                for (uint64_t pg = 0; pg < ranges[j].pages; pg++) {
                        w->iov[n++] = (struct iovec){
                                .iov_base = (void *)(uintptr_t)(ranges[j].addr + pg * PAGEMAP_PAGE),
                                .iov_len = 1 };
                        if (n == IOV_BATCH) {
                                r = touch_some(w, p, n, skipped, handled);
                                if (r < 0)
                                        return r;
                                n = 0;
                        }
                }
        }
        return n ? touch_some(w, p, n, skipped, handled) : 0;
}

static int do_batch(struct worker *w, size_t start, size_t n, uint64_t *skipped, uint64_t *handled,
                    const char **call)
{
        struct swapin_job *job = w->run->job;
        size_t k = swapplan_ranges(job->pages.v + start, n, w->ranges), i = 0;

        while (i < k) {
                size_t j = i + 1;
                int r;

                while (j < k && w->ranges[j].proc == w->ranges[i].proc)
                        j++;
                r = do_proc(w, w->ranges + i, j - i, skipped, handled, call);
                if (r < 0)
                        return r;
                i = j;
        }
        return 0;
}

/*
 * This thread's time on a CPU and waiting for one (schedstat: since the thread started, so read at
 * its end); 0 if the kernel has no schedstat (CONFIG_SCHED_INFO) or the root is a fixture without it.
 */
static int sched_times(const char *root, uint64_t *on_cpu, uint64_t *runq)
{
        char buf[128];
        unsigned long long c, q;

        if (util_read_text_at(root, "/proc/thread-self/schedstat", buf, sizeof(buf)) < 0 ||
            sscanf(buf, "%llu %llu", &c, &q) != 2)
                return 0;
        /* A kernel without sched_info shows zeros: no figures rather than all of the time asleep. */
        if (c == 0 && q == 0)
                return 0;
        *on_cpu = c;
        *runq = q;
        return 1;
}

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct run *run = w->run;
        size_t start, n;
        uint64_t t = now_ns();

        while (take_batch(run, &start, &n)) {
                uint64_t skipped = 0, handled = 0;
                const char *call = NULL;
                int r;

                w->times.take += now_ns() - t;
                r = do_batch(w, start, n, &skipped, &handled, &call);

                pthread_mutex_lock(&run->lock);
                run->inflight_kib -= n * (PAGEMAP_PAGE / 1024);
                run->job->done_pages += handled - skipped;
                run->job->skipped_pages += skipped;
                if (r == -EINTR)
                        stop_locked(run, SWAPIN_SIGNAL, 0, NULL);
                else if (r < 0)
                        stop_locked(run, SWAPIN_ERROR, r, call);
                pthread_cond_broadcast(&run->changed);
                pthread_mutex_unlock(&run->lock);
                t = now_ns();
        }
        w->times.take += now_ns() - t;
        w->times.sched_threads = (unsigned)sched_times(run->job->root, &w->times.on_cpu, &w->times.runq);
        return NULL;
}

int swapin_run(struct swapin_job *job)
{
        struct run run = { .job = job };
        struct worker *w;
        pthread_t tid[SWAPIN_THREADS_MAX];
        unsigned started = 0, threads = job->threads;
        uint64_t t0 = now_ns();
        int r = 0;

        if (threads == 0 || threads > SWAPIN_THREADS_MAX || job->batch_pages == 0 ||
            job->batch_pages > SWAPIN_BATCH_MAX)
                return -EINVAL;
        job->stop = SWAPIN_DONE;
        job->done_pages = job->skipped_pages = 0;
        job->times = (struct swapin_times){ 0 };
        w = calloc(threads, sizeof(*w));
        if (!w)
                return -ENOMEM;
        pthread_mutex_init(&run.lock, NULL);
        pthread_cond_init(&run.changed, NULL);
        for (unsigned i = 0; i < threads; i++) {
                w[i].run = &run;
                w[i].ranges = malloc(job->batch_pages * sizeof(*w[i].ranges));
                if (!w[i].ranges) {
                        r = -ENOMEM;
                        break;
                }
        }
        for (unsigned i = 0; r == 0 && i < threads; i++) {
                r = -pthread_create(&tid[i], NULL, worker_main, &w[i]);
                if (r == 0)
                        started++;
        }
        /* A thread that could not start is no failure while others run. */
        if (started > 0)
                r = 0;
        for (unsigned i = 0; i < started; i++) {
                pthread_join(tid[i], NULL);
                job->times.advise += w[i].times.advise;
                job->times.map += w[i].times.map;
                job->times.take += w[i].times.take;
                job->times.on_cpu += w[i].times.on_cpu;
                job->times.runq += w[i].times.runq;
                job->times.sched_threads += w[i].times.sched_threads;
        }
        job->times.wall = now_ns() - t0;
        job->times.threads = started;
        for (unsigned i = 0; i < threads; i++)
                free(w[i].ranges);
        free(w);
        pthread_cond_destroy(&run.changed);
        pthread_mutex_destroy(&run.lock);
        return r;
}
