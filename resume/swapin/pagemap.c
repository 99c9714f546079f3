/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which pages of a process are out in swap, and where: /proc/PID/smaps and /proc/PID/pagemap. */
#include "swapin/pagemap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

#define CHUNK_ENTRIES 8192      /* pagemap entries per read (64 KiB) */
#define MAPS_LINE_MAX 512       /* enough for the fields we parse; longer paths are skipped */
#define MAPS_VMAS_MAX 1000000   /* more than the kernel's default vm.max_map_count */
#define USER_ADDR_END (1ULL << 57) /* above any user address (5-level paging) */

int pagemap_swap_entry(uint64_t entry, unsigned *type, uint64_t *offset)
{
        unsigned t;

        if ((entry & PAGEMAP_PRESENT) || !(entry & PAGEMAP_SWAPPED))
                return 0;
        t = (unsigned)(entry & PAGEMAP_TYPE_MASK);
        if (t >= PAGEMAP_TYPE_REAL_MAX)
                return 0;
        *type = t;
        *offset = (entry >> PAGEMAP_TYPE_BITS) & PAGEMAP_OFFSET_MASK;
        return 1;
}

void swapped_list_free(struct swapped_list *list)
{
        free(list->v);
        list->v = NULL;
        list->n = list->cap = 0;
}

static int list_push(struct swapped_list *l, const struct swapped_page *p)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 4096;
                struct swapped_page *v;

                if (cap > PAGEMAP_LIST_MAX)
                        cap = PAGEMAP_LIST_MAX;
                if (l->n >= cap)
                        return -E2BIG;
                v = realloc(l->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->cap = cap;
        }
        l->v[l->n++] = *p;
        return 0;
}

/* Add the swapped pages of [start, end) from the open pagemap fd. */
static int scan_range(int fd, uint64_t start, uint64_t end, const struct swapped_page *tag,
                      struct swapped_list *l)
{
        static __thread uint64_t buf[CHUNK_ENTRIES];
        uint64_t first = start / PAGEMAP_PAGE, last = end / PAGEMAP_PAGE;

        while (first < last) {
                uint64_t want = last - first < CHUNK_ENTRIES ? last - first : CHUNK_ENTRIES;
                ssize_t got = pread(fd, buf, want * sizeof(buf[0]), (off_t)(first * sizeof(buf[0])));
                size_t n;

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                n = (size_t)got / sizeof(buf[0]);
                if (n == 0)
                        break; /* the mapping went away while we read */
                for (size_t i = 0; i < n; i++) {
                        struct swapped_page p = *tag;
                        unsigned type;
                        int r;

                        if (!pagemap_swap_entry(buf[i], &type, &p.offset))
                                continue;
                        p.type = (uint8_t)type;
                        p.addr = (first + i) * PAGEMAP_PAGE;
                        r = list_push(l, &p);
                        if (r < 0)
                                return r;
                }
                first += n;
        }
        return 0;
}

/* Parse "start-end perms ..." ; 1 if the mapping may hold swapped anonymous pages. */
static int maps_line(const char *line, uint64_t *start, uint64_t *end)
{
        unsigned long long s, e;
        char perms[8];

        if (sscanf(line, "%llx-%llx %7s", &s, &e, perms) != 3 || s >= e || e > USER_ADDR_END)
                return 0;
        if (strlen(perms) != 4 || perms[3] != 'p')
                return 0; /* shared: swapped through the page cache, not shown in pagemap */
        if (perms[0] == '-' && perms[1] == '-' && perms[2] == '-')
                return 0; /* reserved address space (PROT_NONE): nothing to bring back */
        *start = s;
        *end = e;
        return 1;
}

/* One mapping of smaps: its range, whether it is worth reading, what its Swap: line said. */
struct vma {
        uint64_t start, end;
        int wanted;     /* private and accessible (maps_line) */
        int swap_known; /* a Swap: line was seen */
        uint64_t swap_kib;
};

/*
 * Read the pagemap of a finished mapping, unless smaps said it has nothing in swap: a huge sparse
 * mapping (a JIT's reserve, an ASan shadow) costs 8 bytes of pagemap per page, swapped or not.
 * No Swap: line (a kernel without it, a fixture): read it all, as before.
 */
static int flush_vma(int pfd, struct vma *v, const struct swapped_page *tag, struct swapped_list *l)
{
        int wanted = v->wanted && (!v->swap_known || v->swap_kib > 0);

        v->wanted = 0;
        return wanted ? scan_range(pfd, v->start, v->end, tag, l) : 0;
}

/* One line of smaps: "Key: value kB" within a mapping, or the heading of the next mapping. */
static int smaps_line(int pfd, const char *line, struct vma *v, const struct swapped_page *tag,
                      struct swapped_list *l, size_t *vmas)
{
        const char *sp = strpbrk(line, " \t\n");
        unsigned long long kib;
        int r;

        if (sp && sp > line && sp[-1] == ':') {
                if (strncmp(line, "Swap:", 5) == 0 && sscanf(line + 5, "%llu", &kib) == 1) {
                        v->swap_known = 1;
                        v->swap_kib = kib;
                }
                return 0;
        }
        r = flush_vma(pfd, v, tag, l);
        if (r < 0)
                return r;
        if (++*vmas > MAPS_VMAS_MAX)
                return -E2BIG;
        *v = (struct vma){ 0 };
        v->wanted = maps_line(line, &v->start, &v->end);
        return 0;
}

int pagemap_open_proc(const char *root, pid_t pid, const char *what, int flags)
{
        char rel[64], path[PATH_MAX];
        int r = snprintf(rel, sizeof(rel), "/proc/%d/%s", (int)pid, what);

        if (r < 0 || (size_t)r >= sizeof(rel))
                return -EINVAL;
        r = util_path(path, sizeof(path), root, rel);
        if (r < 0)
                return r;
        r = open(path, flags | O_CLOEXEC | O_NOCTTY);
        return r < 0 ? -errno : r;
}

int pagemap_scan(const char *root, pid_t pid, uint32_t proc, uint8_t cls, struct swapped_list *list)
{
        const struct swapped_page tag = { .proc = proc, .cls = cls };
        size_t before = list->n, vmas = 0;
        char line[MAPS_LINE_MAX];
        struct vma v = { 0 };
        int mfd, pfd, r = 0;
        FILE *smaps;

        if (pid <= 0)
                return -EINVAL;
        mfd = pagemap_open_proc(root, pid, "smaps", O_RDONLY);
        if (mfd < 0)
                return mfd;
        pfd = pagemap_open_proc(root, pid, "pagemap", O_RDONLY);
        if (pfd < 0) {
                close(mfd);
                return pfd;
        }
        smaps = fdopen(mfd, "r");
        if (!smaps) {
                r = -errno;
                close(mfd);
                close(pfd);
                return r;
        }
        while (r == 0 && fgets(line, sizeof(line), smaps)) {
                int whole = strchr(line, '\n') != NULL;

                r = smaps_line(pfd, line, &v, &tag, list, &vmas);
                /* A long path: drop the rest of the line. */
                while (r == 0 && !whole && fgets(line, sizeof(line), smaps))
                        whole = strchr(line, '\n') != NULL;
        }
        if (r == 0 && ferror(smaps))
                r = -EIO;
        if (r == 0)
                r = flush_vma(pfd, &v, &tag, list);
        fclose(smaps);
        close(pfd);
        if (r < 0) {
                list->n = before;
                return r;
        }
        return (int)(list->n - before > INT_MAX ? INT_MAX : list->n - before);
}
