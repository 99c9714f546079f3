/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which pages of a process are out in swap, and where: /proc/PID/smaps and /proc/PID/pagemap. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PAGEMAP_PAGE 4096u
#define PAGEMAP_PRESENT (1ULL << 63)
#define PAGEMAP_SWAPPED (1ULL << 62)
#define PAGEMAP_EXCLUSIVE (1ULL << 56) /* mapped by this process only */
#define PAGEMAP_TYPE_BITS 5
#define PAGEMAP_TYPE_MASK ((1ULL << PAGEMAP_TYPE_BITS) - 1)
#define PAGEMAP_OFFSET_MASK ((1ULL << 50) - 1) /* bits 5-54 */
/*
 * Swap types at or above this are not swap areas but migration, device-private, hwpoison or
 * marker entries (MAX_SWAPFILES is 32 minus those, 22 or more on x86_64 kernels); they are transient.
 */
#define PAGEMAP_TYPE_REAL_MAX 20
#define PAGEMAP_LIST_MAX (1u << 26) /* 256 GiB of swapped pages per run */

/* One swapped page: where it is in swap and in which process. */
struct swapped_page {
        uint64_t offset; /* page offset in the swap area */
        uint64_t addr;   /* virtual address in the process */
        uint32_t proc;   /* the caller's index of the process */
        uint8_t type;    /* swap area (the kernel's swap type) */
        uint8_t cls;     /* 0: wanted first (--first), 1: the rest */
};

struct swapped_list {
        struct swapped_page *v;
        size_t n, cap;
};

/*
 * Decode one pagemap entry. 1 if it is a page in a swap area (type and offset set), 0 if not
 * (present, empty, or a non-swap entry). offset is 0 when the reader lacked CAP_SYS_ADMIN.
 */
int pagemap_swap_entry(uint64_t entry, unsigned *type, uint64_t *offset);

/*
 * Append the swapped pages of ROOT/proc/PID to list, tagged with proc and cls. Only private
 * mappings that allow some access are read (shared memory is swapped through the page cache and
 * pagemap does not show it), and of those only the ones whose smaps Swap: is not 0 kB. Returns the number added, -ENOENT/-ESRCH if the process is gone,
 * -E2BIG past PAGEMAP_LIST_MAX, -errno. On failure the list keeps what it had before.
 */
int pagemap_scan(const char *root, pid_t pid, uint32_t proc, uint8_t cls, struct swapped_list *list);

/* Opens ROOT/proc/PID/WHAT (smaps, pagemap) with flags | O_CLOEXEC; the fd or -errno. */
int pagemap_open_proc(const char *root, pid_t pid, const char *what, int flags);

void swapped_list_free(struct swapped_list *list);
