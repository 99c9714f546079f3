/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Huge pages back after the swap-in: MADV_COLLAPSE over the 2 MiB ranges it made whole again. */
#include "swapin/collapse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "swapin/pagemap.h"
#include "swapin/swapplan.h"
#include "system/power.h"

#define HPAGE_PAGES (COLLAPSE_HPAGE / PAGEMAP_PAGE)
#define SMAPS_LINE_MAX 512
#define SMAPS_VMAS_MAX 1000000            /* more than the kernel's default vm.max_map_count */
#define SMAPS_BYTES_MAX (1024ULL << 20)   /* about 1000 bytes per mapping: a cap far above it */
#define NOMEM_MAX 16                      /* no huge page this many times in a row: memory is fragmented */

int collapse_thp_mode(const char *root, enum collapse_thp *mode)
{
        char buf[128];
        int r = util_read_text_at(root, "/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf));

        if (r < 0)
                return r;
        if (strstr(buf, "[always]"))
                *mode = COLLAPSE_THP_ALWAYS;
        else if (strstr(buf, "[madvise]"))
                *mode = COLLAPSE_THP_MADVISE;
        else if (strstr(buf, "[never]"))
                *mode = COLLAPSE_THP_NEVER;
        else
                return -EINVAL;
        return 0;
}

static ssize_t sys_process_madvise(int pidfd, const struct iovec *iov, size_t n, int advice)
{
        return syscall(SYS_process_madvise, pidfd, iov, n, advice, 0);
}

int collapse_write_fault(pid_t pid, uint64_t addr, const void *guard)
{
        struct iovec local = { .iov_base = (void *)(uintptr_t)guard, .iov_len = 1 };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = 1 };
        ssize_t r = process_vm_writev(pid, &local, 1, &remote, 1, 0);

        /* Safety of the process's data: guard is unreadable, so no byte can go across. */
        if (r >= 0)
                return -EIO;
        return errno == EFAULT ? 0 : -errno;
}

/* A 2 MiB range of one process; cls as the swap-in's (0: --first). */
struct target {
        uint64_t base;
        uint32_t proc;
        uint8_t cls;
};

static int cmp_target(const void *pa, const void *pb)
{
        const struct target *a = pa, *b = pb;

        if (a->cls != b->cls)
                return a->cls < b->cls ? -1 : 1;
        if (a->proc != b->proc)
                return a->proc < b->proc ? -1 : 1;
        return a->base < b->base ? -1 : a->base > b->base;
}

/* The distinct 2 MiB ranges of the swapped pages, by --first, process and address. */
static int targets_of(const struct swapped_list *pages, struct target **out, size_t *n_out)
{
        struct target *v = NULL;
        size_t n = 0, cap = 0, k = 0;

        for (size_t i = 0; i < pages->n; i++) {
                struct target t = { .base = pages->v[i].addr & ~(uint64_t)(COLLAPSE_HPAGE - 1),
                                    .proc = pages->v[i].proc, .cls = pages->v[i].cls };

                /* Pages in swap order mostly come in runs of one range: keep one of each run. */
                if (n && v[n - 1].base == t.base && v[n - 1].proc == t.proc)
                        continue;
                if (n == cap) {
                        size_t c = cap ? cap * 2 : 256;
                        struct target *w = realloc(v, c * sizeof(*w));

                        if (!w) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = w;
                        cap = c;
                }
                v[n++] = t;
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_target);
        for (size_t i = 0; i < n; i++)
                if (k == 0 || cmp_target(&v[k - 1], &v[i]) != 0)
                        v[k++] = v[i];
        *out = v;
        *n_out = k;
        return 0;
}

struct vma {
        uint64_t start, end;
        int anon;      /* private, no file behind it */
        int eligible;  /* THPeligible: 1 */
        int writable;  /* VmFlags: wr, and no userfaultfd registration */
};

/* One process's targets in[0..n), by address, and those kept so far (out, in the same order). */
struct pick {
        const struct target *in;
        size_t n, cur;
        struct target *out;
        size_t kept;
};

/* Keep the targets that lie wholly in v if it is an anonymous THP-eligible writable mapping. */
static void keep_inside(const struct vma *v, struct pick *p)
{
        if (!v->anon || !v->eligible || !v->writable)
                return;
        /* Mappings come by address and never overlap: targets before this one fit none. */
        while (p->cur < p->n && p->in[p->cur].base < v->start)
                p->cur++;
        for (; p->cur < p->n && p->in[p->cur].base + COLLAPSE_HPAGE <= v->end; p->cur++)
                p->out[p->kept++] = p->in[p->cur];
}

/*
 * 1 if the "VmFlags:" list (two letters each) allows the write fault: "wr" (without it the fault
 * fails, or on a mapping the process made read-only means something else), and none of "uw",
 * "um", "ui": a userfaultfd monitor (write-protect, missing, minor: a background snapshot, CRIU)
 * would be woken by a write that never happens, and until it answers the fault waits, holding
 * thaw swapin against all but SIGKILL. Security: a mapping without this line is not touched.
 */
static int writable_flags(const char *f)
{
        int wr = 0;

        for (f += strspn(f, " \t\n"); *f; f += strspn(f, " \t\n")) {
                size_t len = strcspn(f, " \t\n");

                if (len == 2 && strncmp(f, "wr", 2) == 0)
                        wr = 1;
                else if (len == 2 && (strncmp(f, "uw", 2) == 0 || strncmp(f, "um", 2) == 0 ||
                                      strncmp(f, "ui", 2) == 0))
                        return 0;
                f += len;
        }
        return wr;
}

/* One line of smaps: the heading of a mapping, or its "THPeligible:" or "VmFlags:" line. */
static void smaps_line(const char *line, struct vma *v, struct pick *p)
{
        unsigned long long s, e, inode;
        char perms[8];
        const char *sp = strpbrk(line, " \t\n");

        if (sp && sp > line && sp[-1] == ':') {
                if (strncmp(line, "THPeligible:", 12) == 0)
                        v->eligible = atoi(line + 12) == 1;
                else if (strncmp(line, "VmFlags:", 8) == 0)
                        v->writable = writable_flags(line + 8);
                return;
        }
        keep_inside(v, p);
        *v = (struct vma){ 0 };
        if (sscanf(line, "%llx-%llx %7s %*s %*s %llu", &s, &e, perms, &inode) != 4 || s >= e)
                return;
        v->start = s;
        v->end = e;
        v->anon = strlen(perms) == 4 && perms[3] == 'p' && inode == 0;
}

/*
 * Keep, of one process's targets t[0..n) (by address), those in an anonymous private mapping that
 * smaps calls THPeligible (it says so only where the THP setting and the mapping allow huge pages:
 * enabled=madvise and no MADV_HUGEPAGE, or MADV_NOHUGEPAGE, is 0) and whose VmFlags allow the
 * write fault (writable_flags()). Returns how many, -ESRCH if the process is gone, -errno.
 */
static int eligible(struct collapse_job *cj, const struct swapin_proc *proc, struct target *t, size_t n)
{
        char line[SMAPS_LINE_MAX];
        struct target *out = malloc(n * sizeof(*t));
        struct pick p = { .in = t, .n = n, .out = out };
        struct vma v = { 0 };
        size_t vmas = 0;
        uint64_t bytes = 0;
        FILE *f;
        int fd, r = 0;

        if (!out)
                return -ENOMEM;
        fd = pagemap_open_proc(cj->root, proc->pid, "smaps", O_RDONLY);
        /* Security: alive after the open, so the file opened is the scanned process's, not a reused PID's. */
        if (fd >= 0 && !cj->alive(proc->pidfd)) {
                close(fd);
                fd = -ESRCH;
        }
        if (fd < 0 || !(f = fdopen(fd, "r"))) {
                r = fd < 0 ? fd : -errno;
                if (fd >= 0)
                        close(fd);
                free(out);
                return r;
        }
        while (fgets(line, sizeof(line), f)) {
                int whole = strchr(line, '\n') != NULL;

                bytes += strlen(line);
                /* A heading starts with its address (hex), a field with its name (a capital). */
                if (!(line[0] >= 'A' && line[0] <= 'Z') && ++vmas > SMAPS_VMAS_MAX) {
                        r = -E2BIG;
                        break;
                }
                smaps_line(line, &v, &p);
                /* A long path: drop the rest of the line. */
                while (!whole && fgets(line, sizeof(line), f)) {
                        whole = strchr(line, '\n') != NULL;
                        bytes += strlen(line);
                }
                if (bytes > SMAPS_BYTES_MAX) {
                        r = -EFBIG;
                        break;
                }
        }
        if (r == 0 && ferror(f))
                r = -EIO;
        if (r == 0)
                keep_inside(&v, &p);
        fclose(f);
        if (r == 0)
                memcpy(t, out, p.kept * sizeof(*t));
        free(out);
        return r < 0 ? r : (int)p.kept;
}

/*
 * 1 if every page of [base, base + 2 MiB) is in memory now and mapped by this process only (a page
 * shared with a fork would be copied, by the write fault and by the collapse), 0 if not, -errno.
 */
static int resident(int pagemap_fd, uint64_t base)
{
        uint64_t e[HPAGE_PAGES];
        ssize_t got;

        do
                got = pread(pagemap_fd, e, sizeof(e), (off_t)(base / PAGEMAP_PAGE * sizeof(e[0])));
        while (got < 0 && errno == EINTR);
        if (got < 0)
                return -errno;
        if ((size_t)got != sizeof(e))
                return 0;
        for (size_t i = 0; i < HPAGE_PAGES; i++)
                if (!(e[i] & PAGEMAP_PRESENT) || !(e[i] & PAGEMAP_EXCLUSIVE))
                        return 0;
        return 1;
}

static void stop(struct collapse_job *cj, enum collapse_stop why, int error)
{
        cj->stop = why;
        cj->error = error;
}

/* Room for one more huge page above the floor: the kernel copies into it before freeing the rest. */
static int room_for_one(struct collapse_job *cj)
{
        struct power_meminfo m;

        if (power_meminfo(cj->root, &m) < 0 || m.mem_available_kib == 0) {
                stop(cj, COLLAPSE_ERROR, -ENODATA);
                return 0;
        }
        if (swapplan_room_kib(m.mem_available_kib, cj->floor_kib, 0) < COLLAPSE_HPAGE / 1024) {
                stop(cj, COLLAPSE_FLOOR, 0);
                return 0;
        }
        return 1;
}

/* What one run carries from process to process. */
struct pass {
        int probed;         /* the kernel said it takes MADV_COLLAPSE */
        unsigned nomem;     /* ENOMEM answers in a row */
        const void *guard;  /* a PROT_NONE page, for collapse_write_fault() */
};

/*
 * One range of process p: its first page made writable, then MADV_COLLAPSE. 1 collapsed, 0 the
 * kernel could not, -ESRCH the process is gone, -errno to stop. EAGAIN (a page locked or off the
 * LRU for a moment) is tried once more.
 */
static int collapse_one(struct collapse_job *cj, const struct swapin_proc *p, uint64_t base, struct pass *ps)
{
        struct iovec iov = { .iov_base = (void *)(uintptr_t)base, .iov_len = COLLAPSE_HPAGE };
        int again = 1, r;

        /*
         * Security: the fault goes by PID, which another process may hold once the scanned one
         * has exited; its pidfd says whether it has, just before. (The PID would have to be
         * reused between this check and the next system call.)
         */
        if (!cj->alive(p->pidfd))
                return -ESRCH;
        r = cj->fault(p->pid, base, ps->guard);
        /* Only gone or refused is worth saying; without the fault the collapse says EINVAL. */
        if (r == -ESRCH || r == -EPERM || r == -EIO)
                return r;
        for (;;) {
                ssize_t got = cj->madvise(p->pidfd, &iov, 1, COLLAPSE_MADV);
                int err = errno;

                if (got >= 0) {
                        ps->nomem = 0;
                        return 1;
                }
                if (err == EINTR || (err == EAGAIN && again--))
                        continue;
                if (err == ESRCH)
                        return -ESRCH;
                /* ENOMEM: no free huge page (or the range is gone); EBUSY: the cgroup's limit. */
                if (err == ENOMEM)
                        ps->nomem++;
                if (err == EAGAIN || err == ENOMEM || err == EBUSY || err == EINVAL)
                        return 0;
                return -err;
        }
}

/*
 * Does this kernel take MADV_COLLAPSE in process_madvise? It checks the advice before any range,
 * so an empty one asks without touching memory: 0 yes, -EINVAL no (before 6.1), -errno.
 */
static int probe(struct collapse_job *cj, int pidfd, uint64_t base)
{
        struct iovec iov = { .iov_base = (void *)(uintptr_t)base, .iov_len = 0 };

        return cj->madvise(pidfd, &iov, 1, COLLAPSE_MADV) < 0 ? -errno : 0;
}

/* The targets t[0..n) of one process. 0 to go on (also when it is gone), -1 when stopped. */
static int one_proc(struct collapse_job *cj, const struct swapin_proc *p, struct target *t, size_t n,
                    struct pass *ps)
{
        int fd, k, r = 0;

        if (p->pidfd < 0)
                return 0;
        k = eligible(cj, p, t, n);
        if (k <= 0)
                return 0; /* gone, or nothing eligible */
        fd = pagemap_open_proc(cj->root, p->pid, "pagemap", O_RDONLY);
        if (fd < 0)
                return 0;
        /* Security: as smaps, the pagemap opened is the scanned process's only if it is still there. */
        if (!cj->alive(p->pidfd)) {
                close(fd);
                return 0;
        }
        if (!ps->probed) {
                r = probe(cj, p->pidfd, t[0].base);
                if (r == -EINVAL)
                        stop(cj, COLLAPSE_UNSUPPORTED, r);
                else if (r < 0 && r != -ESRCH)
                        stop(cj, COLLAPSE_ERROR, r);
                ps->probed = r == 0;
        }
        for (int i = 0; r == 0 && cj->stop == COLLAPSE_DONE && i < k; i++) {
                cj->candidates++;
                if (cj->stop_flag && *cj->stop_flag) {
                        stop(cj, COLLAPSE_SIGNAL, 0);
                        break;
                }
                r = resident(fd, t[i].base);
                if (r <= 0) {
                        cj->not_resident++;
                        r = 0;
                        continue;
                }
                if (!room_for_one(cj))
                        break;
                r = collapse_one(cj, p, t[i].base, ps);
                if (r > 0)
                        cj->collapsed++;
                else if (r == 0)
                        cj->failed++;
                r = r > 0 ? 0 : r;
                if (ps->nomem >= NOMEM_MAX)
                        stop(cj, COLLAPSE_NOMEM, -ENOMEM);
                else if (r < 0 && r != -ESRCH)
                        stop(cj, COLLAPSE_ERROR, r);
        }
        close(fd);
        return cj->stop == COLLAPSE_DONE ? 0 : -1;
}

int collapse_run(struct collapse_job *cj, const struct swapin_job *job)
{
        struct pass ps = { 0 };
        struct target *t;
        size_t n, i = 0;
        void *guard;
        int r;

        cj->candidates = cj->collapsed = cj->not_resident = cj->failed = 0;
        cj->stop = COLLAPSE_DONE;
        cj->error = 0;
        if (!cj->madvise)
                cj->madvise = sys_process_madvise;
        if (!cj->fault)
                cj->fault = collapse_write_fault;
        if (!cj->alive)
                cj->alive = swapin_pidfd_alive;
        guard = mmap(NULL, PAGEMAP_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (guard == MAP_FAILED)
                return -errno;
        ps.guard = guard;
        r = targets_of(&job->pages, &t, &n);
        if (r < 0) {
                munmap(guard, PAGEMAP_PAGE);
                return r;
        }
        while (i < n) {
                size_t j = i + 1;

                while (j < n && t[j].proc == t[i].proc)
                        j++;
                if (t[i].proc < job->n_procs &&
                    one_proc(cj, &job->procs[t[i].proc], t + i, j - i, &ps) < 0)
                        break;
                i = j;
        }
        free(t);
        munmap(guard, PAGEMAP_PAGE);
        return 0;
}
