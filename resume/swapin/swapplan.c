/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The swap-in plan: swapped pages in device order, cut into batches of ranges, within a memory floor. */
#include "swapin/swapplan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
        return a < b ? -1 : a > b;
}

static int cmp_page(const void *pa, const void *pb)
{
        const struct swapped_page *a = pa, *b = pb;
        int c = cmp_u64(a->cls, b->cls);

        if (!c)
                c = cmp_u64(a->type, b->type);
        if (!c)
                c = cmp_u64(a->offset, b->offset);
        if (!c)
                c = cmp_u64(a->proc, b->proc);
        return c ? c : cmp_u64(a->addr, b->addr);
}

void swapplan_sort(struct swapped_page *v, size_t n)
{
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_page);
}

/* By process, then by position in the batch (first is the index of the range's first page). */
struct tagged_range {
        struct swap_range r;
        size_t first;
};

static int cmp_range(const void *pa, const void *pb)
{
        const struct tagged_range *a = pa, *b = pb;
        int c = cmp_u64(a->r.proc, b->r.proc);

        return c ? c : cmp_u64(a->first, b->first);
}

size_t swapplan_ranges(const struct swapped_page *v, size_t n, struct swap_range *out)
{
        struct tagged_range *t;
        size_t k = 0;

        if (n == 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                const struct swapped_page *p = &v[i], *q = i ? &v[i - 1] : NULL;
                struct swap_range *last = k ? &out[k - 1] : NULL;

                /* The next page in swap is also the next page of the same range. */
                if (last && q->proc == p->proc && q->type == p->type && p->offset == q->offset + 1 &&
                    p->addr == last->addr + last->pages * PAGEMAP_PAGE) {
                        last->pages++;
                        continue;
                }
                out[k++] = (struct swap_range){ .addr = p->addr, .pages = 1, .proc = p->proc };
        }
        /* Group by process for one call per process, keeping each process's ranges in swap order. */
        t = malloc(k * sizeof(*t));
        if (!t) {
                /* Ungrouped ranges are still correct, only more calls. */
                return k;
        }
        for (size_t i = 0; i < k; i++)
                t[i] = (struct tagged_range){ .r = out[i], .first = i };
        qsort(t, k, sizeof(*t), cmp_range);
        for (size_t i = 0; i < k; i++)
                out[i] = t[i].r;
        free(t);
        return k;
}

uint64_t swapplan_room_kib(uint64_t available_kib, uint64_t floor_kib, uint64_t inflight_kib)
{
        if (available_kib <= floor_kib)
                return 0;
        available_kib -= floor_kib;
        return available_kib > inflight_kib ? available_kib - inflight_kib : 0;
}

uint64_t swapplan_floor_default_kib(uint64_t mem_total_kib)
{
        uint64_t f = mem_total_kib / 10;

        if (f < 64 * 1024)
                f = 64 * 1024;
        if (f > mem_total_kib / 2)
                f = mem_total_kib / 2;
        return f;
}

int swapplan_parse_size(const char *s, uint64_t mem_total_kib, uint64_t *kib)
{
        char num[32];
        size_t n = strlen(s);
        uint64_t v;
        int r;

        if (n > 0 && n < sizeof(num) && s[n - 1] == '%') {
                memcpy(num, s, n - 1);
                num[n - 1] = '\0';
                r = util_parse_u64(num, 100, &v);
                if (r < 0)
                        return r;
                *kib = mem_total_kib / 100 * v + mem_total_kib % 100 * v / 100;
                return 0;
        }
        r = util_parse_bytes(s, UINT64_MAX, &v);
        if (r < 0)
                return r;
        *kib = v / 1024;
        return 0;
}

uint64_t swapplan_swapped_kib(const struct power_meminfo *m)
{
        uint64_t used = m->swap_total_kib > m->swap_free_kib ? m->swap_total_kib - m->swap_free_kib : 0;

        return used > m->swap_cached_kib ? used - m->swap_cached_kib : 0;
}
