/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the swap-in plan: the pagemap reader on fixture files, the ordering, the floor. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "swapin/pagemap.h"
#include "system/power.h"
#include "swapin/swapin.h"
#include "swapin/swapplan.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SWP(type, off) (PAGEMAP_SWAPPED | ((uint64_t)(off) << 5) | (type))
#define PRESENT(pfn) (PAGEMAP_PRESENT | (pfn))

/* Write entries at the pagemap positions of addr, addr + 4096, ... (a sparse fixture file). */
static void put_entries(const char *rel, uint64_t addr, const uint64_t *e, size_t n)
{
        char path[PATH_MAX];
        int fd;

        ft_parents(rel);
        ft_abs(path, sizeof(path), rel);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, e, n * 8, (off_t)(addr / 4096 * 8)), (ssize_t)(n * 8));
        close(fd);
}

static void test_entry_decode(void **state)
{
        unsigned type = 99;
        uint64_t off = 99;

        (void)state;
        assert_int_equal(pagemap_swap_entry(SWP(0, 12345), &type, &off), 1);
        assert_int_equal(type, 0);
        assert_int_equal(off, 12345);
        assert_int_equal(pagemap_swap_entry(SWP(3, (1ULL << 50) - 1), &type, &off), 1);
        assert_int_equal(type, 3);
        assert_int_equal(off, (1ULL << 50) - 1);
        /* Soft-dirty and exclusive bits (55, 56) are not part of the offset. */
        assert_int_equal(pagemap_swap_entry(SWP(1, 7) | (1ULL << 55) | (1ULL << 56), &type, &off), 1);
        assert_int_equal(off, 7);
        type = 99;
        assert_int_equal(pagemap_swap_entry(0, &type, &off), 0);
        assert_int_equal(pagemap_swap_entry(PRESENT(42), &type, &off), 0);
        /* A migration entry (a high swap type) is not a page in a swap area. */
        assert_int_equal(pagemap_swap_entry(SWP(30, 5), &type, &off), 0);
        assert_int_equal(type, 99);
        /* Without CAP_SYS_ADMIN the kernel reports the bit but no type and offset. */
        assert_int_equal(pagemap_swap_entry(PAGEMAP_SWAPPED, &type, &off), 1);
        assert_int_equal(off, 0);
}

static void test_scan_fixture(void **state)
{
        struct swapped_list l = { 0 };
        const uint64_t heap[] = { PRESENT(1), SWP(0, 500), SWP(0, 501), 0, SWP(0, 100) };
        const uint64_t shared[] = { SWP(0, 7) }, none[] = { SWP(0, 8) }, stack[] = { SWP(1, 3) };

        (void)state;
        /* smaps as the kernel writes it; the stack's lines have no Swap: (read as before). */
        ft_puts("/proc/42/smaps",
                "00400000-00405000 rw-p 00000000 00:00 0                          [heap]\n"
                "Size:                 20 kB\n"
                "Swap:                 12 kB\n"
                "SwapPss:              12 kB\n"
                "VmFlags: rd wr mr mw me ac sd\n"
                "00500000-00501000 rw-s 00000000 00:05 17                         /dev/zero (deleted)\n"
                "Swap:                  4 kB\n"
                "00600000-00601000 ---p 00000000 00:00 0 \n"
                "Swap:                  4 kB\n"
                "7ffff000-80000000 rw-p 00000000 00:00 0                          [stack]\n"
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0          [vsyscall]\n"
                "Swap:                  0 kB\n");
        put_entries("/proc/42/pagemap", 0x400000, heap, 5);
        put_entries("/proc/42/pagemap", 0x500000, shared, 1);
        put_entries("/proc/42/pagemap", 0x600000, none, 1);
        put_entries("/proc/42/pagemap", 0x7ffff000, stack, 1);

        assert_int_equal(pagemap_scan(ft_root, 42, 7, 1, &l), 4);
        assert_int_equal(l.n, 4);
        assert_int_equal(l.v[0].addr, 0x401000);
        assert_int_equal(l.v[0].offset, 500);
        assert_int_equal(l.v[1].addr, 0x402000);
        assert_int_equal(l.v[2].addr, 0x404000);
        assert_int_equal(l.v[2].offset, 100);
        assert_int_equal(l.v[3].addr, 0x7ffff000);
        assert_int_equal(l.v[3].type, 1);
        for (size_t i = 0; i < l.n; i++) {
                assert_int_equal(l.v[i].proc, 7);
                assert_int_equal(l.v[i].cls, 1);
        }
        /* A process that is gone: an error, and the list is unchanged. */
        assert_int_equal(pagemap_scan(ft_root, 43, 8, 1, &l), -ENOENT);
        assert_int_equal(l.n, 4);
        swapped_list_free(&l);
}

/* A maps line longer than the reader's line buffer does not derail the next line. */
static void test_scan_long_path(void **state)
{
        struct swapped_list l = { 0 };
        char maps[2048];
        const uint64_t e[] = { SWP(0, 9) };

        (void)state;
        snprintf(maps, sizeof(maps), "00400000-00401000 rw-p 00000000 00:00 0 /%01000d\n"
                                     "Swap:                  0 kB\n"
                                     "00800000-00801000 rw-p 00000000 00:00 0\n"
                                     "Swap:                  4 kB\n", 0);
        ft_puts("/proc/5/smaps", maps);
        put_entries("/proc/5/pagemap", 0x800000, e, 1);
        assert_int_equal(pagemap_scan(ft_root, 5, 0, 0, &l), 1);
        assert_int_equal(l.v[0].addr, 0x800000);
        swapped_list_free(&l);
}

/*
 * A mapping whose smaps says Swap: 0 kB is not read at all, however large: its pagemap here holds
 * swap entries that would be listed if it were. A mapping with swap next to it still is.
 */
static void test_scan_skips_unswapped(void **state)
{
        struct swapped_list l = { 0 };
        const uint64_t decoy[] = { SWP(0, 1), SWP(0, 2) }, real[] = { PRESENT(3), SWP(0, 77) };

        (void)state;
        ft_puts("/proc/9/smaps",
                "10000000-10010000000 rw-p 00000000 00:00 0 \n"
                "Size:           1073741824 kB\n"
                "Rss:                   8 kB\n"
                "Swap:                  0 kB\n"
                "SwapPss:               0 kB\n"
                "VmFlags: rd wr mr mw me nr sd\n"
                "7f0000000000-7f0000002000 rw-p 00000000 00:00 0 \n"
                "Size:                  8 kB\n"
                "Swap:                  4 kB\n"
                "VmFlags: rd wr mr mw me ac sd\n");
        put_entries("/proc/9/pagemap", 0x10000000, decoy, 2);
        put_entries("/proc/9/pagemap", 0x7f0000000000, real, 2);
        assert_int_equal(pagemap_scan(ft_root, 9, 0, 1, &l), 1);
        assert_int_equal(l.v[0].addr, 0x7f0000001000);
        assert_int_equal(l.v[0].offset, 77);
        swapped_list_free(&l);
}

static struct swapped_page pg(uint32_t proc, uint64_t addr, uint8_t type, uint64_t off, uint8_t cls)
{
        return (struct swapped_page){ .proc = proc, .addr = addr, .type = type, .offset = off, .cls = cls };
}

static void test_sort_order(void **state)
{
        struct swapped_page v[] = {
                pg(1, 0x9000, 0, 30, 1), pg(2, 0x1000, 1, 1, 1), pg(1, 0x1000, 0, 10, 1),
                pg(3, 0x5000, 0, 99, 0), pg(2, 0x8000, 0, 20, 1),
        };

        (void)state;
        swapplan_sort(v, 5);
        /* --first pages lead; then swap area 0 front to back, then area 1. */
        assert_int_equal(v[0].proc, 3);
        assert_int_equal(v[1].offset, 10);
        assert_int_equal(v[2].offset, 20);
        assert_int_equal(v[3].offset, 30);
        assert_int_equal(v[4].type, 1);
}

static void test_ranges(void **state)
{
        /* Sorted by offset: 1 has 0x1000.. at 10,11,12; 2 interleaves at 13; 1 again at 14 (not adjacent). */
        struct swapped_page v[] = {
                pg(1, 0x1000, 0, 10, 1), pg(1, 0x2000, 0, 11, 1), pg(1, 0x3000, 0, 12, 1),
                pg(2, 0x7000, 0, 13, 1), pg(1, 0x4000, 0, 14, 1), pg(1, 0x9000, 0, 15, 1),
                pg(2, 0x8000, 0, 16, 1),
        };
        struct swap_range r[7];
        size_t n;

        (void)state;
        n = swapplan_ranges(v, 7, r);
        assert_int_equal(n, 5);
        /* Process 1's ranges first, each in swap order; then process 2's. */
        assert_int_equal(r[0].proc, 1);
        assert_int_equal(r[0].addr, 0x1000);
        assert_int_equal(r[0].pages, 3);
        assert_int_equal(r[1].addr, 0x4000);
        assert_int_equal(r[1].pages, 1);
        assert_int_equal(r[2].addr, 0x9000);
        assert_int_equal(r[3].proc, 2);
        assert_int_equal(r[3].addr, 0x7000);
        assert_int_equal(r[4].addr, 0x8000);
        assert_int_equal(swapplan_ranges(v, 0, r), 0);
}

/* Contiguous in memory but not in swap (or the other way round) is not one range. */
static void test_ranges_need_both(void **state)
{
        struct swapped_page v[] = { pg(1, 0x1000, 0, 10, 1), pg(1, 0x2000, 0, 12, 1),
                                    pg(1, 0x5000, 0, 13, 1) };
        struct swap_range r[3];

        (void)state;
        assert_int_equal(swapplan_ranges(v, 3, r), 3);
}

static void test_floor(void **state)
{
        uint64_t kib = 0;

        (void)state;
        assert_int_equal(swapplan_room_kib(500000, 100000, 0), 400000);
        assert_int_equal(swapplan_room_kib(500000, 100000, 350000), 50000);
        assert_int_equal(swapplan_room_kib(500000, 100000, 400000), 0);
        assert_int_equal(swapplan_room_kib(500000, 100000, 900000), 0);
        assert_int_equal(swapplan_room_kib(90000, 100000, 0), 0);
        /* A tenth of RAM, at least 64 MiB, never more than half. */
        assert_int_equal(swapplan_floor_default_kib(1048576), 104857);
        assert_int_equal(swapplan_floor_default_kib(262144), 65536);
        assert_int_equal(swapplan_floor_default_kib(100000), 50000);

        assert_int_equal(swapplan_parse_size("128M", 1048576, &kib), 0);
        assert_int_equal(kib, 131072);
        assert_int_equal(swapplan_parse_size("1G", 1048576, &kib), 0);
        assert_int_equal(kib, 1048576);
        assert_int_equal(swapplan_parse_size("4096", 1048576, &kib), 0);
        assert_int_equal(kib, 4);
        assert_int_equal(swapplan_parse_size("25%", 1048576, &kib), 0);
        assert_int_equal(kib, 262144);
        assert_int_equal(swapplan_parse_size("101%", 1048576, &kib), -ERANGE);
        assert_int_equal(swapplan_parse_size("", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("M", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("12X", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("-5M", 1048576, &kib), -EINVAL);
        assert_int_equal(swapplan_parse_size("99999999999999999T", 1048576, &kib), -ERANGE);
}

static void test_swapped(void **state)
{
        struct power_meminfo m = { 0 };

        (void)state;
        ft_puts("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 300000 kB\nAnonPages: 600000 kB\n"
                                 "Shmem: 1000 kB\nSwapCached: 200000 kB\nSwapTotal: 2000000 kB\n"
                                 "SwapFree: 1500000 kB\n");
        assert_int_equal(power_meminfo(ft_root, &m), 0);
        /* 500 MB of swap in use, 200 MB of it also in RAM: 300 MB still only in swap. */
        assert_int_equal(swapplan_swapped_kib(&m), 300000);
        m.swap_cached_kib = 600000;
        assert_int_equal(swapplan_swapped_kib(&m), 0);
}

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
                cmocka_unit_test(test_entry_decode),
                cmocka_unit_test_setup_teardown(test_scan_fixture, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_scan_long_path, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_scan_skips_unswapped, ft_setup, ft_teardown),
                cmocka_unit_test(test_sort_order),
                cmocka_unit_test(test_ranges),
                cmocka_unit_test(test_ranges_need_both),
                cmocka_unit_test(test_floor),
                cmocka_unit_test_setup_teardown(test_swapped, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_scan_first, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_run_pid_reuse_and_stop, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
