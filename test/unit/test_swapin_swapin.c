/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the swap-in (resume/swapin/swapin.c): the scan of live processes, the run, a reused PID, a stop. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakepagemap.h"
#include "faketree.h"
#include "swapin/pagemap.h"
#include "swapin/swapin.h"

/* A live process (a pidfd can be opened for it) whose /proc entries come from the fixture. */
static pid_t fake_proc(const char *comm, uint64_t addr, const uint64_t *e, size_t n)
{
        char rel[64], maps[128];
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                pause();
                _exit(0);
        }
        snprintf(rel, sizeof(rel), "/proc/%d/comm", (int)pid);
        ft_puts(rel, comm);
        snprintf(rel, sizeof(rel), "/proc/%d/smaps", (int)pid);
        snprintf(maps, sizeof(maps), "%08llx-%08llx rw-p 00000000 00:00 0\nSwap: %zu kB\n",
                 (unsigned long long)addr, (unsigned long long)(addr + n * 4096), n * 4);
        ft_puts(rel, maps);
        snprintf(rel, sizeof(rel), "/proc/%d/pagemap", (int)pid);
        put_entries(rel, addr, e, n);
        return pid;
}

static void test_scan_first(void **state)
{
        const uint64_t a[] = { SWP(0, 10), SWP(0, 11), SWP(0, 12) }, b[] = { SWP(0, 50), SWP(0, 51) };
        const uint64_t me[] = { SWP(0, 1) };
        struct swapin_job job = { .root = ft_root, .first = { "beta" }, .n_first = 1 };
        pid_t pa, pb;
        char rel[64];

        (void)state;
        pa = fake_proc("alpha\n", 0x10000, a, 3);
        pb = fake_proc("beta\n", 0x20000, b, 2);
        /* This process itself is never a target. */
        snprintf(rel, sizeof(rel), "/proc/%d/smaps", (int)getpid());
        ft_puts(rel, "00030000-00031000 rw-p 00000000 00:00 0\n");
        snprintf(rel, sizeof(rel), "/proc/%d/pagemap", (int)getpid());
        put_entries(rel, 0x30000, me, 1);
        /* Nor is a PID that no longer runs. */
        ft_puts("/proc/999999999/smaps", "00040000-00041000 rw-p 00000000 00:00 0\n");

        assert_int_equal(swapin_scan(&job), 5);
        assert_int_equal(job.n_procs, 2);
        assert_int_equal(job.first_pages, 2);
        assert_true(job.offsets_known);
        /* beta's pages lead although they sit later in swap; then alpha's in swap order. */
        assert_int_equal(job.procs[job.pages.v[0].proc].pid, pb);
        assert_int_equal(job.pages.v[0].offset, 50);
        assert_int_equal(job.pages.v[1].offset, 51);
        assert_int_equal(job.procs[job.pages.v[2].proc].pid, pa);
        assert_int_equal(job.pages.v[2].offset, 10);
        assert_int_equal(job.pages.v[4].offset, 12);
        swapin_free(&job);
        kill(pa, SIGKILL);
        kill(pb, SIGKILL);
        waitpid(pa, NULL, 0);
        waitpid(pb, NULL, 0);
}

/*
 * swapin_run over 4 pages of this very process, named by PID, with the pidfd of the scan being
 * either this process's or that of a child already gone (as when the scanned process exited and
 * its PID went to another one): in the second case the reads do reach a live process, but
 * none may count as brought back. A stop asked for before the run brings nothing back.
 */
static void run_self(int pidfd, volatile sig_atomic_t *stop, struct swapin_job *job)
{
        static char buf[4 * 4096] __attribute__((aligned(4096)));
        static struct swapin_proc proc;

        memset(buf, 1, sizeof(buf));
        proc = (struct swapin_proc){ .pid = getpid(), .pidfd = pidfd };
        *job = (struct swapin_job){ .root = ft_root, .threads = 1, .batch_pages = 8, .floor_kib = 1024,
                                    .stop_flag = stop, .procs = &proc, .n_procs = 1 };
        job->pages.v = calloc(4, sizeof(*job->pages.v));
        assert_non_null(job->pages.v);
        for (unsigned i = 0; i < 4; i++)
                job->pages.v[i] = pg(0, (uint64_t)(uintptr_t)buf + i * 4096, 0, 100 + i, 1);
        job->pages.n = job->pages.cap = 4;
        assert_int_equal(swapin_run(job), 0);
        free(job->pages.v);
}

static void test_run_pid_reuse_and_stop(void **state)
{
        volatile sig_atomic_t stop = 0;
        struct swapin_job job;
        int self, dead;
        pid_t child;

        (void)state;
        ft_puts("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 500000 kB\nAnonPages: 1000 kB\n"
                                 "Shmem: 0 kB\n");
        self = (int)syscall(SYS_pidfd_open, getpid(), 0);
        assert_true(self >= 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0)
                _exit(0);
        dead = (int)syscall(SYS_pidfd_open, child, 0);
        assert_true(dead >= 0);
        assert_int_equal(waitpid(child, NULL, 0), child);

        run_self(self, &stop, &job);
        assert_int_equal(job.stop, SWAPIN_DONE);
        assert_int_equal(job.done_pages, 4);
        assert_int_equal(job.skipped_pages, 0);
        /* --verbose's breakdown: the one thread's times fit in the run's. */
        assert_true(job.times.wall > 0);
        assert_true(job.times.map > 0);
        assert_true(job.times.advise + job.times.map + job.times.take <= job.times.wall);
        assert_int_equal(job.times.threads, 1);
        assert_int_equal(job.times.sched_threads, 0); /* no schedstat in the fixture yet */
        /* A kernel without sched_info shows zeros: no figures, not all of the time asleep. */
        ft_puts("/proc/thread-self/schedstat", "0 0 0\n");
        run_self(self, &stop, &job);
        assert_int_equal(job.times.sched_threads, 0);
        ft_puts("/proc/thread-self/schedstat", "123456 7890 12\n");
        run_self(self, &stop, &job);
        assert_int_equal(job.times.sched_threads, 1);
        assert_int_equal(job.times.on_cpu, 123456);
        assert_int_equal(job.times.runq, 7890);

        run_self(dead, &stop, &job);
        assert_int_equal(job.stop, SWAPIN_DONE);
        assert_int_equal(job.done_pages, 0);
        assert_int_equal(job.skipped_pages, 4);

        stop = 1;
        run_self(self, &stop, &job);
        assert_int_equal(job.stop, SWAPIN_SIGNAL);
        assert_int_equal(job.done_pages, 0);
        close(self);
        close(dead);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_scan_first, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_run_pid_reuse_and_stop, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
