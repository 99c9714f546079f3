/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw swapin: bring swapped memory back after a resume, faster than swapoff and never below a floor. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cmd/cmd.h"
#include "dev/dm.h"
#include "base/log.h"
#include "system/power.h"
#include "swapin/collapse.h"
#include "swapin/progress.h"
#include "swapin/swapin.h"
#include "swapin/swapplan.h"
#include "base/util.h"

#define THREADS_DEFAULT 4
#define BATCH_DEFAULT_KIB (8 * 1024)
#define IOPRIO_CLASS_BE 2
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_WHO_PROCESS 1
#define NICE_LOW 19

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw swapin [--strategy prefetch|swapoff] [--floor SIZE] [--first PID|COMM]...\n"
                   "                   [--threads N] [--batch SIZE] [--no-collapse] [--name NAME] [--auto]\n"
                   "                   [--verbose] [--root DIR]\n\n"
                   "Bring memory that hibernation pushed out to swap back into RAM, at low CPU and I/O\n"
                   "priority, never letting available memory (MemAvailable) fall below the floor.\n\n"
                   "  -s, --strategy S  prefetch (default): read every process's swapped pages in swap\n"
                   "                    order, in large batches from several threads; swap stays on.\n"
                   "                    swapoff: swapoff and swapon of the thaw device, only when what\n"
                   "                    is swapped fits above the floor; refused otherwise\n"
                   "  -f, --floor SIZE  keep at least this much available: 512M, 1G, 10%% of RAM\n"
                   "                    (default: a tenth of RAM, at least 64 MiB)\n"
                   "      --first WHO   bring these processes back first: a PID or a command name\n"
                   "                    (as in /proc/PID/comm); repeat it or separate with commas\n"
                   "  -j, --threads N   threads issuing reads (default %d, at most %d)\n"
                   "      --batch SIZE  memory per batch of requests (default %dM)\n"
                   "      --no-collapse leave what prefetch brought back in 4 KiB pages. By default\n"
                   "                    each 2 MiB range it made whole again, in a mapping where huge\n"
                   "                    pages are allowed (THPeligible in smaps), becomes a transparent\n"
                   "                    huge page again (MADV_COLLAPSE, Linux 6.1), above the floor\n"
                   "  -n, --name NAME   the thaw mapping, for swapoff (default: rd.thaw.name=, name= in\n"
                   "                    thaw.conf, else " ARGS_NAME_DEFAULT ")\n"
                   "      --auto        as started after a resume: swapin= in thaw.conf chooses the\n"
                   "                    strategy (unless --strategy is given); swapin=off: do nothing\n"
                   "  -v, --verbose     after the summary, log where the prefetch's time went: its\n"
                   "                    threads' time in process_madvise, in process_vm_readv and\n"
                   "                    taking batches, its CPU time, and from schedstat its\n"
                   "                    threads' time on a CPU, waiting for one and asleep\n"
                   "      --root DIR    prefix for /proc, /sys, /dev and /etc (tests)\n"
                   "  -h, --help        show this help\n\n"
                   "On a terminal a progress bar shows MiB done, MiB/s and the time left; one summary\n"
                   "line is logged at the end. SIGINT and SIGTERM stop it within 4 MiB per thread: swap\n"
                   "stays on and the summary says how much is still in swap. Exit status 0 also when it\n"
                   "stopped at the floor (it says how much is still in swap), 1 on an error or a signal.\n",
                THREADS_DEFAULT, SWAPIN_THREADS_MAX, BATCH_DEFAULT_KIB / 1024);
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
        (void)sig;
        stop_requested = 1;
}

static void low_priority(void)
{
        /*
         * Best effort, lowest level rather than the idle class: idle I/O can starve for as long as
         * anything else reads, and the swap-in should finish. Both are per thread on Linux; the
         * worker threads inherit them from this one.
         */
        if (setpriority(PRIO_PROCESS, 0, NICE_LOW) < 0)
                log_msg(LOG_INFO, "cannot lower the CPU priority (%s): continuing", strerror(errno));
        if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT | 7) < 0)
                log_msg(LOG_INFO, "cannot lower the I/O priority (%s): continuing", strerror(errno));
}

static double now_s(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double tv_s(struct timeval t)
{
        return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static double mib(uint64_t pages)
{
        return (double)pages * PAGEMAP_PAGE / (1024.0 * 1024.0);
}

struct progress {
        struct swapin_job *job;
        double t0;
        volatile int done;
};

static void draw(const struct progress *p)
{
        uint64_t done = p->job->done_pages + p->job->skipped_pages;
        char line[PROGRESS_LINE_MAX];

        /* \033[K: erase what a longer line before left at the end. */
        if (progress_format(line, sizeof(line), done * (PAGEMAP_PAGE / 1024),
                            p->job->pages.n * (PAGEMAP_PAGE / 1024), now_s() - p->t0) > 0)
                fprintf(stderr, "\r%s\033[K", line);
}

static void *progress_main(void *arg)
{
        struct progress *p = arg;
        const struct timespec tick = { 0, 250000000L };

        while (!p->done) {
                draw(p);
                nanosleep(&tick, NULL);
        }
        draw(p);
        fputc('\n', stderr);
        return NULL;
}

/*
 * --verbose: where the threads' time went (see struct swapin_times), and the CPU time of this
 * process over the run (the decryption of the reads runs in kernel workers, not in it).
 */
static void log_times(const struct swapin_job *job, const struct rusage *r0, const struct rusage *r1)
{
        const struct swapin_times *t = &job->times;
        double total = (double)t->wall * t->threads / 1e9;
        double busy = (double)(t->advise + t->map + t->take) / 1e9;
        char sched[160] = "";

        /* Of the threads' time: running, runnable but without a CPU (nice 19), and the rest asleep. */
        if (t->threads > 0 && t->sched_threads == t->threads && total * 1e9 >= (double)(t->on_cpu + t->runq)) {
                int n = snprintf(sched, sizeof(sched), "; threads on a CPU %.1f s, waiting for one %.1f s, "
                                 "asleep (I/O, locks, floor) %.1f s", (double)t->on_cpu / 1e9,
                                 (double)t->runq / 1e9, total - (double)(t->on_cpu + t->runq) / 1e9);

                if (n < 0 || (size_t)n >= sizeof(sched))
                        sched[0] = '\0'; /* cannot happen with these formats; no half a figure if it did */
        }
        log_msg(LOG_INFO, "swap-in time: %.1f s x %u threads = %.1f s: %.1f s in process_madvise (queueing "
                "the reads), %.1f s in process_vm_readv (waiting for the reads, mapping), %.1f s taking "
                "batches (lock, MemAvailable, floor), %.1f s other or done early; CPU %.1f s user, "
                "%.1f s system%s",
                (double)t->wall / 1e9, t->threads, total, (double)t->advise / 1e9, (double)t->map / 1e9,
                (double)t->take / 1e9, total > busy ? total - busy : 0.0,
                tv_s(r1->ru_utime) - tv_s(r0->ru_utime), tv_s(r1->ru_stime) - tv_s(r0->ru_stime), sched);
}

/*
 * The pages came back as 4 KiB pages (Linux 6.1 swaps none in as a huge page): make the 2 MiB
 * ranges whole again into huge pages. Says once why it cannot; what it did goes into text (for
 * the summary). Returns false on a signal or an error.
 */
static bool huge_pages(const struct swapin_job *job, char *text, size_t size)
{
        struct collapse_job cj = { .root = job->root, .floor_kib = job->floor_kib, .stop_flag = job->stop_flag };
        enum collapse_thp mode;
        double t0 = now_s();
        int r = collapse_thp_mode(job->root, &mode);

        text[0] = '\0';
        if (r < 0) {
                log_msg(LOG_INFO, "no transparent huge pages in this kernel (%s/sys/kernel/mm/transparent_hugepage: "
                        "%s): nothing to collapse", job->root, strerror(-r));
                return true;
        }
        if (mode == COLLAPSE_THP_NEVER) {
                log_msg(LOG_NOTICE, "transparent huge pages are off (transparent_hugepage/enabled is never): "
                        "the pages stay 4 KiB pages");
                return true;
        }
        r = collapse_run(&cj, job);
        if (r < 0) {
                log_msg(LOG_WARNING, "cannot list the ranges to make huge pages again (%s): the pages stay "
                        "4 KiB pages", strerror(-r));
                return true;
        }
        if (cj.stop == COLLAPSE_UNSUPPORTED) {
                log_msg(LOG_NOTICE, "this kernel takes no MADV_COLLAPSE in process_madvise (Linux 6.1 does): "
                        "the pages stay 4 KiB pages until khugepaged joins them");
                return true;
        }
        snprintf(text, size, "; %.0f MiB back in huge pages in %.1f s%s%s%s%s",
                 mib(cj.collapsed * (COLLAPSE_HPAGE / PAGEMAP_PAGE)), now_s() - t0,
                 cj.failed ? " (the kernel could not join some ranges)" : "",
                 cj.stop == COLLAPSE_FLOOR ? ", stopped at the memory floor" : "",
                 cj.stop == COLLAPSE_NOMEM ? ", stopped: no free huge pages" : "",
                 cj.stop == COLLAPSE_SIGNAL ? ", interrupted" : "");
        if (cj.stop == COLLAPSE_ERROR)
                log_msg(LOG_ERR, "making huge pages failed (%s): the other ranges stay 4 KiB pages",
                        strerror(-cj.error));
        return cj.stop != COLLAPSE_ERROR && cj.stop != COLLAPSE_SIGNAL;
}

static enum cmd_status prefetch(struct swapin_job *job, bool tty, bool collapse, bool verbose)
{
        struct rusage ru0, ru1;
        char huge[160] = "";
        bool huge_ok = true;
        struct progress prog = { .job = job };
        struct power_meminfo m;
        pthread_t tid;
        bool drawing = false;
        double secs;
        int r;

        r = swapin_scan(job);
        if (r == -EINTR) {
                if (power_meminfo(job->root, &m) < 0)
                        memset(&m, 0, sizeof(m));
                log_msg(LOG_WARNING, "swap-in interrupted while listing swapped pages: nothing brought "
                        "back; %" PRIu64 " MiB still only in swap", swapplan_swapped_kib(&m) / 1024);
                return CMD_FAILED;
        }
        if (r < 0) {
                log_msg(LOG_ERR, "cannot list swapped pages under %s/proc (%s): nothing brought back",
                        job->root, strerror(-r));
                return CMD_FAILED;
        }
        if (job->pages.n == 0) {
                log_msg(LOG_NOTICE, "swap-in: no process has pages in swap; nothing to do");
                return CMD_OK;
        }
        if (!job->offsets_known)
                log_msg(LOG_WARNING, "pagemap shows no swap offsets (not CAP_SYS_ADMIN?): reading in "
                        "address order, not device order");
        prog.t0 = now_s();
        getrusage(RUSAGE_SELF, &ru0);
        if (tty)
                drawing = pthread_create(&tid, NULL, progress_main, &prog) == 0;
        r = swapin_run(job);
        prog.done = 1;
        if (drawing)
                pthread_join(tid, NULL);
        secs = now_s() - prog.t0;
        getrusage(RUSAGE_SELF, &ru1);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot start the swap-in (%s): nothing brought back", strerror(-r));
                return CMD_FAILED;
        }
        /* Only after a swap-in that ran its course: not against a signal or an error. */
        if (collapse && (job->stop == SWAPIN_DONE || job->stop == SWAPIN_FLOOR))
                huge_ok = huge_pages(job, huge, sizeof(huge));
        if (power_meminfo(job->root, &m) < 0)
                memset(&m, 0, sizeof(m));
        log_msg(job->stop == SWAPIN_DONE && huge_ok ? LOG_NOTICE : LOG_WARNING,
                "swap-in %s: %.0f of %.0f MiB from %zu processes in %.1f s (%.1f MiB/s, %u threads)%s; "
                "%" PRIu64 " MiB still only in swap, %" PRIu64 " MiB available (floor %" PRIu64 " MiB)%s",
                job->stop == SWAPIN_DONE ? "done" :
                job->stop == SWAPIN_FLOOR ? "stopped at the memory floor" :
                job->stop == SWAPIN_SIGNAL ? "interrupted" : "failed",
                mib(job->done_pages), mib(job->pages.n), job->n_procs, secs,
                secs > 0 ? mib(job->done_pages) / secs : 0.0, job->threads,
                job->skipped_pages ? " (some pages went away meanwhile)" : "",
                swapplan_swapped_kib(&m) / 1024, m.mem_available_kib / 1024, job->floor_kib / 1024, huge);
        if (verbose)
                log_times(job, &ru0, &ru1);
        if (job->stop == SWAPIN_ERROR) {
                log_msg(LOG_ERR, "%s failed (%s)%s", job->error_call ? job->error_call : "swap-in",
                        strerror(-job->error),
                        job->error == -EINVAL ? ": process_madvise(MADV_WILLNEED) needs Linux 5.15" : "");
                return CMD_FAILED;
        }
        return job->stop == SWAPIN_SIGNAL || !huge_ok ? CMD_FAILED : CMD_OK;
}

/* swapoff and swapon of the thaw mapping, only if what is out in swap fits above the floor. */
static enum cmd_status by_swapoff(const char *root, const char *name, uint64_t floor_kib)
{
        char rel[DM_MAPPER_PATH_MAX], path[PATH_MAX], kname[DM_KNAME_MAX];
        struct power_meminfo m;
        struct power_swap sw;
        unsigned maj, min;
        uint64_t out_kib, room;
        double t0;
        int r;

        r = dm_mapper_path(name, rel, sizeof(rel));
        if (r == 0)
                r = util_path(path, sizeof(path), root, rel);
        if (r == 0)
                r = dm_devnum(root, name, &maj, &min, kname, sizeof(kname));
        if (r == 0)
                r = power_swap_find(root, kname, rel, &sw);
        if (r < 0) {
                log_msg(LOG_ERR, "%s is not active swap (%s): nothing to swap off", rel, strerror(-r));
                return CMD_FAILED;
        }
        r = power_meminfo(root, &m);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot read %s/proc/meminfo (%s): not swapping off", root, strerror(-r));
                return CMD_FAILED;
        }
        /* Pages also in the swap cache are in RAM already: swapoff needs no memory for them. */
        out_kib = sw.used_kib - (m.swap_cached_kib < sw.used_kib ? m.swap_cached_kib : sw.used_kib);
        room = swapplan_room_kib(m.mem_available_kib, floor_kib, 0);
        if (out_kib > room) {
                log_msg(LOG_ERR, "swapoff refused: %" PRIu64 " MiB are swapped out on %s, but only %" PRIu64
                        " MiB are available above the floor (%" PRIu64 " MiB available, floor %" PRIu64
                        " MiB); swapoff would hang the system in D state. Use --strategy prefetch: it brings "
                        "back what fits and stops at the floor", out_kib / 1024, rel, room / 1024,
                        m.mem_available_kib / 1024, floor_kib / 1024);
                return CMD_FAILED;
        }
        t0 = now_s();
        if (swapoff(path) < 0) {
                log_msg(LOG_ERR, "swapoff %s failed (%s): the swap stays on", rel, strerror(errno));
                return CMD_FAILED;
        }
        /* With the priority it had, so the order among several swap areas stays as it was. */
        if (swapon(path, power_swapon_flags(sw.priority)) < 0) {
                log_msg(LOG_ERR, "swapon %s failed after swapoff (%s): the system runs without this swap, "
                        "and cannot hibernate to it until it is turned on again", rel, strerror(errno));
                return CMD_FAILED;
        }
        log_msg(LOG_NOTICE, "swap-in done by swapoff: %" PRIu64 " MiB in %.1f s; %s is on again "
                "(priority %d%s)", out_kib / 1024, now_s() - t0, rel, sw.priority,
                sw.priority < 0 ? ", chosen by the kernel" : "");
        return CMD_OK;
}

/* --first a,b,c: each name goes into job->first. */
static int add_first(struct swapin_job *job, char *list)
{
        for (char *save = NULL, *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                if (job->n_first == SWAPIN_FIRST_MAX || strlen(w) > 15)
                        return -EINVAL;
                job->first[job->n_first++] = w;
        }
        return 0;
}

enum cmd_status cmd_swapin(int argc, char **argv)
{
        static const struct option opts[] = {
                { "strategy", required_argument, NULL, 's' },
                { "floor", required_argument, NULL, 'f' },
                { "first", required_argument, NULL, 'F' },
                { "threads", required_argument, NULL, 'j' },
                { "batch", required_argument, NULL, 'b' },
                { "name", required_argument, NULL, 'n' },
                { "root", required_argument, NULL, 'r' },
                { "auto", no_argument, NULL, 'A' },
                { "no-collapse", no_argument, NULL, 'C' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *strategy = NULL, *floor_opt = NULL, *batch_opt = NULL, *name_opt = NULL;
        struct swapin_job job = { .root = "", .threads = THREADS_DEFAULT, .stop_flag = &stop_requested };
        struct sigaction sa = { .sa_handler = on_signal };
        struct power_meminfo m;
        struct thaw_args args;
        uint64_t v, batch_kib = BATCH_DEFAULT_KIB;
        enum cmd_status st;
        bool auto_mode = false, collapse = true, verbose = false;
        int c, r;

        log_setup("", true);
        while ((c = getopt_long(argc, argv, "s:f:j:n:vh", opts, NULL)) != -1) {
                switch (c) {
                case 's': strategy = optarg; break;
                case 'f': floor_opt = optarg; break;
                case 'F':
                        if (add_first(&job, optarg) < 0) {
                                log_msg(LOG_ERR, "--first takes at most %d PIDs or command names "
                                        "(15 characters)", SWAPIN_FIRST_MAX);
                                return CMD_USAGE;
                        }
                        break;
                case 'j':
                        if (util_parse_u64(optarg, SWAPIN_THREADS_MAX, &v) < 0 || v == 0) {
                                log_msg(LOG_ERR, "--threads takes 1 to %d", SWAPIN_THREADS_MAX);
                                return CMD_USAGE;
                        }
                        job.threads = (unsigned)v;
                        break;
                case 'b': batch_opt = optarg; break;
                case 'n': name_opt = optarg; break;
                case 'r': job.root = optarg; break;
                case 'A': auto_mode = true; break;
                case 'C': collapse = false; break;
                case 'v': verbose = true; break;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        args_load(job.root, NULL, 0, &args, log_say, NULL);
        if (auto_mode && !strategy && strcmp(args.swapin, "off") == 0) {
                log_msg(LOG_NOTICE, "swapin=off in thaw.conf: memory comes back as it is used");
                return CMD_OK;
        }
        if (!strategy)
                strategy = auto_mode && strcmp(args.swapin, "swapoff") == 0 ? "swapoff" : "prefetch";
        if (optind < argc || (strcmp(strategy, "prefetch") && strcmp(strategy, "swapoff"))) {
                log_msg(LOG_ERR, "swapin takes --strategy prefetch or swapoff, and no arguments");
                return CMD_USAGE;
        }
        r = power_meminfo(job.root, &m);
        if (r < 0 || m.mem_available_kib == 0) {
                log_msg(LOG_ERR, "cannot read MemAvailable from %s/proc/meminfo (%s): nothing brought back",
                        job.root, strerror(r < 0 ? -r : ENODATA));
                return CMD_FAILED;
        }
        job.floor_kib = swapplan_floor_default_kib(m.mem_total_kib);
        if (floor_opt && (swapplan_parse_size(floor_opt, m.mem_total_kib, &job.floor_kib) < 0 ||
                          job.floor_kib > m.mem_total_kib)) {
                log_msg(LOG_ERR, "--floor %s: give a size below RAM, like 256M, 1G or 10%%", floor_opt);
                return CMD_USAGE;
        }
        if (batch_opt && (swapplan_parse_size(batch_opt, m.mem_total_kib, &batch_kib) < 0 ||
                          batch_kib < PAGEMAP_PAGE / 1024 ||
                          batch_kib / (PAGEMAP_PAGE / 1024) > SWAPIN_BATCH_MAX)) {
                log_msg(LOG_ERR, "--batch %s: give a size from 4K to %dM", batch_opt,
                        SWAPIN_BATCH_MAX / 256);
                return CMD_USAGE;
        }
        job.batch_pages = (unsigned)(batch_kib / (PAGEMAP_PAGE / 1024));
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        low_priority();
        if (strcmp(strategy, "swapoff") == 0) {
                if (name_opt && (!args_name_valid(name_opt) ||
                                 util_copy(args.name, sizeof(args.name), name_opt) < 0)) {
                        log_msg(LOG_ERR, "--name %s is not a usable device-mapper name", name_opt);
                        return CMD_USAGE;
                }
                return by_swapoff(job.root, args.name, job.floor_kib);
        }
        st = prefetch(&job, isatty(STDERR_FILENO), collapse, verbose);
        swapin_free(&job);
        return st;
}
