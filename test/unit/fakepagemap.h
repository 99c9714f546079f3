/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pagemap entries written into a fixture /proc/PID/pagemap, and swapped pages made by hand. */
#pragma once
#include "faketree.h"
#include "swapin/pagemap.h"

#define SWP(type, off) (PAGEMAP_SWAPPED | ((uint64_t)(off) << 5) | (type))
#define PRESENT(pfn) (PAGEMAP_PRESENT | (pfn))

/* Write entries at the pagemap positions of addr, addr + 4096, ... (a sparse fixture file). */
static inline void put_entries(const char *rel, uint64_t addr, const uint64_t *e, size_t n)
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

static inline struct swapped_page pg(uint32_t proc, uint64_t addr, uint8_t type, uint64_t off, uint8_t cls)
{
        return (struct swapped_page){ .proc = proc, .addr = addr, .type = type, .offset = off, .cls = cls };
}
