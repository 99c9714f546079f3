/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the huge-page collapse after the swap-in (collapse.c): which ranges, the floor, the kernel's answers. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakepagemap.h"
#include "faketree.h"
#include "swapin/collapse.h"
#include "swapin/swapin.h"

#define MB2 0x200000ULL

/* The fake process_madvise: records each call, answers from a script (errno values, 0: success). */
static struct call {
        int pidfd;
        uint64_t base, len;
        int advice;
} calls[64];
static size_t n_calls;
static int answers[64];
static size_t n_answers;

/* The fake write fault: records the pages, answers 0 (or fault_answer). */
static uint64_t faults[64];
static size_t n_faults;
static int fault_answer;

static int fake_fault(pid_t pid, uint64_t addr, const void *guard)
{
        assert_non_null(guard);
        assert_true(pid > 0);
        assert_true(n_faults < 64);
        faults[n_faults++] = addr;
        return fault_answer;
}

/* The fake pidfd check: the process of gone_pidfd is there for alive_left more checks, then gone. */
static int gone_pidfd;
static int alive_left;

static int fake_alive(int pidfd)
{
        if (pidfd != gone_pidfd)
                return 1;
        return alive_left-- > 0;
}

static ssize_t fake_madvise(int pidfd, const struct iovec *iov, size_t n, int advice)
{
        size_t i = n_calls;

        assert_int_equal(n, 1);
        assert_true(i < 64);
        calls[n_calls++] = (struct call){ pidfd, (uint64_t)(uintptr_t)iov->iov_base, iov->iov_len, advice };
        if (i < n_answers && answers[i]) {
                errno = answers[i];
                return -1;
        }
        return (ssize_t)iov->iov_len;
}

static void answer(const int *a, size_t n)
{
        memcpy(answers, a, n * sizeof(*a));
        n_answers = n;
}

static int setup(void **state)
{
        int r = ft_setup(state);

        n_calls = n_answers = n_faults = 0;
        fault_answer = 0;
        gone_pidfd = -1;
        alive_left = 0;
        memset(answers, 0, sizeof(answers));
        ft_puts("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 500000 kB\nAnonPages: 1000 kB\nShmem: 0 kB\n");
        return r;
}

#define EXCL (1ULL << 56)

/* A 2 MiB range in pagemap: every page present and this process's only (1), or one page still in swap (0), or one shared with a fork (2). */
static void put_range(const char *rel, uint64_t base, int how)
{
        static uint64_t e[512];

        for (size_t i = 0; i < 512; i++)
                e[i] = PRESENT(1000 + i) | EXCL;
        if (how == 0)
                e[300] = SWP(0, 77);
        if (how == 2)
                e[7] = PRESENT(99);
        put_entries(rel, base, e, 512);
}

/*
 * Process 4242: an anonymous THP-eligible mapping of three ranges (the second one not wholly
 * back), one not eligible, a private file mapping (eligible, but not anonymous), a 1 MiB one
 * that holds no whole range, and a shared one. One page of each was swapped in.
 */
static void proc_4242(void)
{
        ft_puts("/proc/4242/smaps",
                "00200000-00800000 rw-p 00000000 00:00 0 \n"
                "Size:               6144 kB\n"
                "AnonHugePages:         0 kB\n"
                "THPeligible:    1\n"
                "VmFlags: rd wr mr mw me ac\n"
                "00800000-00a00000 rw-p 00000000 00:00 0 \n"
                "THPeligible:    0\n"
                "VmFlags: rd wr mr mw me ac\n"
                "00a00000-00c00000 rw-p 00000000 08:01 1234                       /usr/lib/libx.so\n"
                "THPeligible:    1\n"
                "VmFlags: rd wr mr mw me ac\n"
                "00c00000-00d00000 rw-p 00000000 00:00 0 \n"
                "THPeligible:    1\n"
                "VmFlags: rd wr mr mw me ac\n"
                "00e00000-01000000 rw-s 00000000 00:01 99                         /dev/zero (deleted)\n"
                "THPeligible:    1\n"
                "VmFlags: rd wr sh mr mw me ms\n");
        put_range("/proc/4242/pagemap", 0x200000, 1);
        put_range("/proc/4242/pagemap", 0x400000, 0);
        put_range("/proc/4242/pagemap", 0x600000, 1);
        put_range("/proc/4242/pagemap", 0x800000, 1);
        put_range("/proc/4242/pagemap", 0xa00000, 1);
        put_range("/proc/4242/pagemap", 0xe00000, 1);
}

/* Process 5151 (a --first one): one eligible range, wholly back. */
static void proc_5151(void)
{
        ft_puts("/proc/5151/smaps", "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \nTHPeligible: 1\n"
                "VmFlags: rd wr mr mw me ac\n");
        put_range("/proc/5151/pagemap", 0x7f0000200000ULL, 1);
}

static struct swapin_proc procs[2];
static struct swapped_page pages[32];

/* The swap-in's list for both: pages in swap order, several in one range. */
static void job_of(struct swapin_job *job)
{
        size_t n = 0;

        procs[0] = (struct swapin_proc){ .pid = 4242, .pidfd = 42 };
        procs[1] = (struct swapin_proc){ .pid = 5151, .pidfd = 51 };
        pages[n++] = pg(1, 0x7f0000200000ULL + 4096, 0, 1, 0);
        pages[n++] = pg(1, 0x7f0000200000ULL, 0, 2, 0);
        pages[n++] = pg(0, 0x600000 + 8192, 0, 10, 1);
        pages[n++] = pg(0, 0x200000, 0, 11, 1);
        pages[n++] = pg(0, 0x200000 + 4096, 0, 12, 1);
        pages[n++] = pg(0, 0x400000 + 300 * 4096, 0, 13, 1);
        pages[n++] = pg(0, 0x600000, 0, 14, 1);
        pages[n++] = pg(0, 0x800000, 0, 15, 1);
        pages[n++] = pg(0, 0xa00000, 0, 16, 1);
        pages[n++] = pg(0, 0xc00000, 0, 17, 1);
        pages[n++] = pg(0, 0xe00000, 0, 18, 1);
        *job = (struct swapin_job){ .root = ft_root, .procs = procs, .n_procs = 2 };
        job->pages = (struct swapped_list){ .v = pages, .n = n, .cap = n };
}

/* The fixture most tests start from: both processes' smaps and pagemap, and the job over them. */
static void two_procs(struct swapin_job *job)
{
        proc_4242();
        proc_5151();
        job_of(job);
}

static struct collapse_job cjob(volatile sig_atomic_t *stop)
{
        return (struct collapse_job){ .root = ft_root, .floor_kib = 100000, .stop_flag = stop,
                                      .madvise = fake_madvise, .fault = fake_fault,
                                      .alive = fake_alive };
}

static void test_thp_mode(void **state)
{
        enum collapse_thp m = COLLAPSE_THP_NEVER;

        (void)state;
        assert_int_equal(collapse_thp_mode(ft_root, &m), -ENOENT);
        ft_puts("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
        assert_int_equal(collapse_thp_mode(ft_root, &m), 0);
        assert_int_equal(m, COLLAPSE_THP_ALWAYS);
        ft_puts("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
        assert_int_equal(collapse_thp_mode(ft_root, &m), 0);
        assert_int_equal(m, COLLAPSE_THP_MADVISE);
        ft_puts("/sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
        assert_int_equal(collapse_thp_mode(ft_root, &m), 0);
        assert_int_equal(m, COLLAPSE_THP_NEVER);
        ft_puts("/sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n");
        assert_int_equal(collapse_thp_mode(ft_root, &m), -EINVAL);
}

/* Only wholly resident ranges of anonymous THP-eligible mappings, each once, --first first. */
static void test_which_ranges(void **state)
{
        struct swapin_job job;
        struct collapse_job cj = cjob(NULL);

        (void)state;
        two_procs(&job);
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_DONE);
        assert_int_equal(cj.candidates, 4);
        assert_int_equal(cj.collapsed, 3);
        assert_int_equal(cj.not_resident, 1);
        assert_int_equal(cj.failed, 0);
        /* The probe (an empty range), then 5151's range, then 4242's two whole ones, by address. */
        assert_int_equal(n_calls, 4);
        assert_int_equal(calls[0].len, 0);
        assert_int_equal(calls[0].advice, COLLAPSE_MADV);
        assert_int_equal(calls[1].pidfd, 51);
        assert_int_equal(calls[1].base, 0x7f0000200000ULL);
        assert_int_equal(calls[2].pidfd, 42);
        assert_int_equal(calls[2].base, 0x200000);
        assert_int_equal(calls[3].base, 0x600000);
        for (size_t i = 1; i < n_calls; i++) {
                assert_int_equal(calls[i].len, MB2);
                assert_int_equal(calls[i].advice, COLLAPSE_MADV);
        }
        /* Each range's first page made writable just before. */
        assert_int_equal(n_faults, 3);
        assert_int_equal(faults[0], 0x7f0000200000ULL);
        assert_int_equal(faults[1], 0x200000);
        assert_int_equal(faults[2], 0x600000);

        /* A page of 4242's first range shared with a fork: left alone (it would be copied). */
        put_range("/proc/4242/pagemap", 0x200000, 2);
        n_calls = n_faults = 0;
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.collapsed, 2);
        assert_int_equal(cj.not_resident, 2);
        assert_int_equal(calls[n_calls - 1].base, 0x600000);
        assert_int_equal(n_faults, 2);

        /* The write fault refused (no ptrace access): stopped, said. */
        fault_answer = -EPERM;
        n_calls = 0;
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_ERROR);
        assert_int_equal(cj.error, -EPERM);
        assert_int_equal(n_calls, 1); /* the probe only */
}

/*
 * No write fault where a userfaultfd monitor waits on the range (write-protect, missing, minor:
 * it would be woken by a write that never happens) or where the mapping is not writable: such
 * ranges are no collapse targets at all.
 */
static void test_not_writable(void **state)
{
        struct swapin_job job;
        struct collapse_job cj = cjob(NULL);
        size_t n = 0;

        (void)state;
        ft_puts("/proc/4242/smaps",
                "10000000-10200000 rw-p 00000000 00:00 0 \nTHPeligible: 1\nVmFlags: rd wr mr mw me ac uw\n"
                "10200000-10400000 rw-p 00000000 00:00 0 \nTHPeligible: 1\nVmFlags: rd wr mr mw me um ac\n"
                "10400000-10600000 rw-p 00000000 00:00 0 \nTHPeligible: 1\nVmFlags: ui rd wr mr mw me ac\n"
                "10600000-10800000 r--p 00000000 00:00 0 \nTHPeligible: 1\nVmFlags: rd mr mw me ac\n"
                "10800000-10a00000 rw-p 00000000 00:00 0 \nTHPeligible: 1\n"
                "10a00000-10c00000 rw-p 00000000 00:00 0 \nTHPeligible: 1\nVmFlags: rd wr mr mw me ac\n");
        for (unsigned i = 0; i < 6; i++) {
                put_range("/proc/4242/pagemap", 0x10000000ULL + i * MB2, 1);
                pages[n++] = pg(0, 0x10000000ULL + i * MB2, 0, i, 1);
        }
        procs[0] = (struct swapin_proc){ .pid = 4242, .pidfd = 42 };
        job = (struct swapin_job){ .root = ft_root, .procs = procs, .n_procs = 1 };
        job.pages = (struct swapped_list){ .v = pages, .n = n, .cap = n };
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_DONE);
        /* Only the last mapping: the one without a VmFlags line is not trusted either. */
        assert_int_equal(cj.candidates, 1);
        assert_int_equal(cj.collapsed, 1);
        assert_int_equal(n_faults, 1);
        assert_int_equal(faults[0], 0x10a00000ULL);
        assert_int_equal(calls[n_calls - 1].base, 0x10a00000ULL);
}

/*
 * A process whose pidfd says it has exited is not touched, since its PID may name another one
 * by now: not its smaps, not its pagemap, no write fault; the others' ranges still come.
 */
static void test_gone(void **state)
{
        struct swapin_job job;
        struct collapse_job cj = cjob(NULL);

        (void)state;
        two_procs(&job);
        /* 5151 gone after 0 checks (smaps), 1 (pagemap), 2 (just before the write fault). */
        for (int left = 0; left <= 2; left++) {
                n_calls = n_faults = 0;
                gone_pidfd = 51;
                alive_left = left;
                assert_int_equal(collapse_run(&cj, &job), 0);
                assert_int_equal(cj.stop, COLLAPSE_DONE);
                assert_int_equal(cj.collapsed, 2);
                assert_int_equal(n_faults, 2);
                assert_int_equal(faults[0], 0x200000);
                assert_int_equal(faults[1], 0x600000);
                for (size_t i = 0; i < n_calls; i++)
                        assert_true(calls[i].len == 0 || calls[i].pidfd == 42);
        }
        /* 4242 gone just before its second range's fault: its first one only. */
        n_calls = n_faults = 0;
        gone_pidfd = 42;
        alive_left = 3;
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_DONE);
        assert_int_equal(cj.collapsed, 2);
        assert_int_equal(n_faults, 2);
        assert_int_equal(faults[1], 0x200000);
}

/* This process's pagemap entry for the page at addr. */
static uint64_t own_pagemap(const void *addr)
{
        uint64_t e = 0;
        int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / 4096 * sizeof(e))), sizeof(e));
        close(fd);
        return e;
}

/*
 * The real write fault, on this process: the page keeps every byte, the call says it failed to
 * copy, and the kernel did take the page for writing. A private page shared with a forked child
 * is mapped read-only in both (copy on write) and is no longer this process's only; a write
 * fault gives this process its own copy, which pagemap shows as mapped by it only again.
 */
static void test_write_fault_writes_nothing(void **state)
{
        static unsigned char buf[2 * 4096] __attribute__((aligned(4096)));
        void *guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        unsigned char *cow = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        uint64_t before, after;
        int r, status;
        pid_t child;

        (void)state;
        assert_true(guard != MAP_FAILED);
        assert_true(cow != MAP_FAILED);
        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (unsigned char)(i * 7 + 3);
        assert_int_equal(collapse_write_fault(getpid(), (uint64_t)(uintptr_t)buf, guard), 0);
        assert_int_equal(collapse_write_fault(getpid(), (uint64_t)(uintptr_t)(buf + 4095), guard), 0);
        for (size_t i = 0; i < sizeof(buf); i++)
                assert_int_equal(buf[i], (unsigned char)(i * 7 + 3));

        for (size_t i = 0; i < 4096; i++)
                cow[i] = (unsigned char)(i * 5 + 1);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                for (;;)
                        pause(); /* holds the page until killed */
        }
        before = own_pagemap(cow);
        r = collapse_write_fault(getpid(), (uint64_t)(uintptr_t)(cow + 100), guard);
        after = own_pagemap(cow);
        kill(child, SIGKILL);
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_int_equal(r, 0);
        assert_true(before & PAGEMAP_PRESENT);
        assert_false(before & PAGEMAP_EXCLUSIVE);
        assert_true(after & PAGEMAP_PRESENT);
        assert_true(after & PAGEMAP_EXCLUSIVE);
        for (size_t i = 0; i < 4096; i++)
                assert_int_equal(cow[i], (unsigned char)(i * 5 + 1));

        /* A process that is gone. */
        assert_int_equal(collapse_write_fault(999999999, (uint64_t)(uintptr_t)buf, guard), -ESRCH);
        munmap(cow, 4096);
        munmap(guard, 4096);
}

/* A kernel before 6.1 refuses the advice itself: said once, no range tried. */
static void test_unsupported(void **state)
{
        const int a[] = { EINVAL };
        struct swapin_job job;
        struct collapse_job cj = cjob(NULL);

        (void)state;
        two_procs(&job);
        answer(a, 1);
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_UNSUPPORTED);
        assert_int_equal(n_calls, 1);
        assert_int_equal(cj.collapsed, 0);
}

/* Less than a huge page above the floor: nothing collapsed. */
static void test_floor(void **state)
{
        struct swapin_job job;
        struct collapse_job cj = cjob(NULL);

        (void)state;
        two_procs(&job);
        ft_puts("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 102000 kB\nAnonPages: 1000 kB\nShmem: 0 kB\n");
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_FLOOR);
        assert_int_equal(cj.collapsed, 0);
        assert_int_equal(n_calls, 1); /* the probe only */
        /* A huge page of room: one at a time, each checked. */
        ft_puts("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 102048 kB\nAnonPages: 1000 kB\nShmem: 0 kB\n");
        n_calls = 0;
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_DONE);
        assert_int_equal(cj.collapsed, 3);
}

/* EAGAIN is tried once more; ENOMEM and EBUSY count as not collapsed; a gone process is skipped. */
static void test_kernel_answers(void **state)
{
        const int a[] = { 0, EAGAIN, 0, EBUSY, ENOMEM };
        const int gone[] = { 0, ESRCH }, perm[] = { 0, EPERM };
        struct swapin_job job;
        struct collapse_job cj = cjob(NULL);

        (void)state;
        two_procs(&job);
        answer(a, 5);
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_DONE);
        assert_int_equal(n_calls, 5);
        assert_int_equal(calls[2].base, calls[1].base);
        assert_int_equal(cj.collapsed, 1);
        assert_int_equal(cj.failed, 2);

        /* 5151 is gone at its first range: 4242's still come. */
        n_calls = 0;
        answer(gone, 2);
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_DONE);
        assert_int_equal(cj.collapsed, 2);
        assert_int_equal(calls[n_calls - 1].base, 0x600000);

        /* Another error (EPERM: no CAP_SYS_NICE) stops it and says which. */
        n_calls = 0;
        answer(perm, 2);
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_ERROR);
        assert_int_equal(cj.error, -EPERM);
        assert_int_equal(n_calls, 2);
}

/* No free huge page, time after time: it stops instead of compacting memory for every range. */
static void test_no_huge_pages(void **state)
{
        int a[32];
        struct swapin_job job;
        struct collapse_job cj = cjob(NULL);
        size_t n = 0;

        (void)state;
        ft_puts("/proc/4242/smaps", "10000000-18000000 rw-p 00000000 00:00 0 \nTHPeligible: 1\n"
                "VmFlags: rd wr mr mw me ac\n");
        for (unsigned i = 0; i < 20; i++) {
                put_range("/proc/4242/pagemap", 0x10000000ULL + i * MB2, 1);
                pages[n++] = pg(0, 0x10000000ULL + i * MB2, 0, i, 1);
        }
        /* The probe and the first range pass, then no huge page. */
        for (unsigned i = 0; i < 32; i++)
                a[i] = i < 2 ? 0 : ENOMEM;
        answer(a, 32);
        procs[0] = (struct swapin_proc){ .pid = 4242, .pidfd = 42 };
        job = (struct swapin_job){ .root = ft_root, .procs = procs, .n_procs = 1 };
        job.pages = (struct swapped_list){ .v = pages, .n = n, .cap = n };
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_NOMEM);
        assert_int_equal(cj.collapsed, 1);
        assert_int_equal(cj.failed, 16);
        assert_int_equal(n_calls, 18);
}

/* A signal stops it before the next range. */
static void test_signal(void **state)
{
        volatile sig_atomic_t stop = 1;
        struct swapin_job job;
        struct collapse_job cj = cjob(&stop);

        (void)state;
        two_procs(&job);
        assert_int_equal(collapse_run(&cj, &job), 0);
        assert_int_equal(cj.stop, COLLAPSE_SIGNAL);
        assert_int_equal(cj.collapsed, 0);
        assert_int_equal(n_calls, 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_thp_mode, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_which_ranges, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_not_writable, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_gone, setup, ft_teardown),
                cmocka_unit_test(test_write_fault_writes_nothing),
                cmocka_unit_test_setup_teardown(test_unsupported, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_floor, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_kernel_answers, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_no_huge_pages, setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_signal, setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
