/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What /sys/power and /proc say about hibernation: availability, swap space, memory. */
#include "system/power.h"

#include <errno.h>
#include <sys/reboot.h>
#include <unistd.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/swap.h>

#include "base/util.h"

#define POWER_TEXT_MAX 4096
#define SWAPS_MAX 65536

/* 1 if word appears in text as a whole, space-separated word (brackets stripped). */
static int has_word(const char *text, const char *word)
{
        size_t n = strlen(word);

        for (const char *p = text; (p = strstr(p, word)); p += n) {
                int start = p == text || p[-1] == ' ' || p[-1] == '[' || p[-1] == '\n';
                char e = p[n];

                if (start && (e == '\0' || e == ' ' || e == ']' || e == '\n'))
                        return 1;
        }
        return 0;
}

int power_hibernation_available(const char *root, char *why, size_t size)
{
        char buf[POWER_TEXT_MAX];
        int r;

        r = util_read_text_at(root, "/sys/power/disk", buf, sizeof(buf));
        if (r == -ENOENT) {
                snprintf(why, size, "/sys/power/disk is missing: kernel built without hibernation");
                return 0;
        }
        if (r < 0)
                return r;
        if (strstr(buf, "[disabled]")) {
                snprintf(why, size, "/sys/power/disk says [disabled]: hibernation is off "
                                    "(kernel lockdown, Secure Boot or nohibernate)");
                return 0;
        }
        r = util_read_text_at(root, "/sys/power/state", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (!has_word(buf, "disk")) {
                snprintf(why, size, "/sys/power/state does not offer \"disk\"");
                return 0;
        }
        return 1;
}

int power_mode_offered(const char *root, const char *mode)
{
        char buf[POWER_TEXT_MAX];
        int r = util_read_text_at(root, "/sys/power/disk", buf, sizeof(buf));

        return r < 0 ? r : has_word(buf, mode);
}

static int meminfo_field(const char *text, const char *key, uint64_t *out)
{
        size_t n = strlen(key);

        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                unsigned long long v;

                if (strncmp(p, key, n) == 0 && p[n] == ':' &&
                    sscanf(p + n + 1, " %llu", &v) == 1) {
                        *out = v;
                        return 0;
                }
        }
        return -ENODATA;
}

/* A field older kernels may lack counts as 0. */
static void meminfo_optional(const char *text, const char *key, uint64_t *out)
{
        if (meminfo_field(text, key, out) < 0)
                *out = 0;
}

int power_meminfo(const char *root, struct power_meminfo *out)
{
        char buf[POWER_TEXT_MAX * 2];
        struct power_meminfo m;
        uint64_t bytes;
        int r = util_read_text_at(root, "/proc/meminfo", buf, sizeof(buf));

        if (r < 0)
                return r;
        r = meminfo_field(buf, "MemTotal", &m.mem_total_kib);
        if (r == 0)
                r = meminfo_field(buf, "AnonPages", &m.anon_kib);
        if (r == 0)
                r = meminfo_field(buf, "Shmem", &m.shmem_kib);
        if (r < 0)
                return r;
        meminfo_optional(buf, "MemAvailable", &m.mem_available_kib);
        meminfo_optional(buf, "SUnreclaim", &m.sunreclaim_kib);
        meminfo_optional(buf, "PageTables", &m.pagetables_kib);
        meminfo_optional(buf, "KernelStack", &m.kernelstack_kib);
        meminfo_optional(buf, "SwapTotal", &m.swap_total_kib);
        meminfo_optional(buf, "SwapFree", &m.swap_free_kib);
        meminfo_optional(buf, "SwapCached", &m.swap_cached_kib);
        m.image_size_kib = UINT64_MAX;
        if (util_read_text_at(root, "/sys/power/image_size", buf, sizeof(buf)) >= 0) {
                util_rstrip(buf);
                if (util_parse_u64(buf, UINT64_MAX, &bytes) == 0)
                        m.image_size_kib = bytes / 1024;
        }
        *out = m;
        return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t power_image_estimate_kib(const struct power_meminfo *m)
{
        uint64_t fixed = 0, used, shrunk;

        fixed = sat_add(fixed, m->anon_kib);
        fixed = sat_add(fixed, m->shmem_kib);
        fixed = sat_add(fixed, m->sunreclaim_kib);
        fixed = sat_add(fixed, m->pagetables_kib);
        fixed = sat_add(fixed, m->kernelstack_kib);
        used = m->mem_total_kib > m->mem_available_kib ? m->mem_total_kib - m->mem_available_kib : 0;
        shrunk = m->image_size_kib < used ? m->image_size_kib : used;
        return fixed > shrunk ? fixed : shrunk;
}

int power_swap_find(const char *root, const char *kname, const char *path, struct power_swap *out)
{
        char buf[SWAPS_MAX];
        char dev[64];
        int r = util_read_text_at(root, "/proc/swaps", buf, sizeof(buf));

        if (r < 0)
                return r;
        r = snprintf(dev, sizeof(dev), "/dev/%s", kname ? kname : "");
        if (r < 0 || (size_t)r >= sizeof(dev))
                return -ENAMETOOLONG;
        for (char *line = buf, *next; line && *line; line = next) {
                char name[4096], type[32];
                unsigned long long size, used;
                int prio = -1;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (sscanf(line, "%4095s %31s %llu %llu %d", name, type, &size, &used, &prio) < 4)
                        continue; /* the heading, or a name too long to be ours */
                if ((kname && strcmp(name, dev) == 0) || (path && strcmp(name, path) == 0)) {
                        out->size_kib = size;
                        out->used_kib = used;
                        out->priority = prio;
                        return 0;
                }
        }
        return -ENOENT;
}

static int is_mine(const char *name, const char *const *mine)
{
        for (; mine && *mine; mine++)
                if (**mine && strcmp(name, *mine) == 0)
                        return 1;
        return 0;
}

int power_swap_rival(const char *root, const char *const *mine, int priority, struct power_rival *out)
{
        char *buf = malloc(SWAPS_MAX);
        struct power_rival best = { .priority = INT_MIN };
        int r;

        if (!buf)
                return -ENOMEM;
        r = util_read_text_at(root, "/proc/swaps", buf, SWAPS_MAX);
        if (r < 0)
                goto out;
        for (char *line = buf, *next; line && *line; line = next) {
                char name[4096], type[32];
                unsigned long long size, used;
                int prio;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (sscanf(line, "%4095s %31s %llu %llu %d", name, type, &size, &used, &prio) != 5)
                        continue; /* the heading */
                util_unescape_octal(name);
                /*
                 * zram is memory: what it holds is in the image itself, and neither the kernel nor
                 * systemd-sleep writes an image to it.
                 */
                if (is_mine(name, mine) || strncmp(name, "/dev/zram", 9) == 0 || prio < priority)
                        continue;
                best.count++;
                if (prio > best.priority) {
                        best.priority = prio;
                        best.free_kib = size > used ? size - used : 0;
                        snprintf(best.name, sizeof(best.name), "%.*s", (int)sizeof(best.name) - 1, name);
                }
        }
        r = best.count > 0;
        if (r)
                *out = best;
out:
        free(buf);
        return r;
}

int power_swapon_flags(int priority)
{
        /*
         * A priority the kernel chose (negative) cannot be asked for again: swapon without one
         * gets the next lower automatic priority, which keeps this area below any the admin set.
         */
        if (priority < 0)
                return 0;
        if (priority > (SWAP_FLAG_PRIO_MASK >> SWAP_FLAG_PRIO_SHIFT))
                priority = SWAP_FLAG_PRIO_MASK >> SWAP_FLAG_PRIO_SHIFT;
        return SWAP_FLAG_PREFER | ((priority << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
}

int power_reclaim(const char *root, uint64_t kib)
{
        char text[32];

        snprintf(text, sizeof(text), "%" PRIu64 "K", kib);
        return util_write_text_at(root, "/sys/fs/cgroup/memory.reclaim", text);
}

int power_off_now(const char *root)
{
        if (root && *root)
                return -ENOTSUP;
        sync();
        reboot(RB_POWER_OFF);
        return -errno;
}
