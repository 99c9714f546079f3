/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Can this system hibernate to the thaw swap so that the next boot resumes? */
#include "hibernate/hibcheck.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "system/handoff.h"
#include "system/power.h"
#include "system/swapfile.h"

__attribute__((format(printf, 2, 3)))
static void problem(struct hibcheck *h, const char *fmt, ...)
{
        size_t used = strlen(h->problems);
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(h->problems + used, sizeof(h->problems) - used, fmt, ap);
        va_end(ap);
        used = strlen(h->problems);
        if (used + 1 < sizeof(h->problems))
                strcpy(h->problems + used, "\n");
}

/* thaw's swap, active: the mapping, or the swap file on it at offset; its priority and free room. */
static int find_swap(const char *root, const char *name, uint64_t offset, struct hibcheck *h)
{
        char path[DM_MAPPER_PATH_MAX];
        struct power_swap sw;
        int r;

        r = dm_devnum(root, name, &h->maj, &h->min, h->kname, sizeof(h->kname));
        if (r < 0) {
                if (r == -ENOENT)
                        problem(h, "/dev/mapper/%s is not active: run thaw setup, or open the device",
                                name);
                else
                        problem(h, "cannot look for /dev/mapper/%s in /sys/block (%s)", name,
                                strerror(-r));
                return 1;
        }
        r = dm_mapper_path(name, path, sizeof(path));
        if (r < 0) {
                problem(h, "%s is not a usable device-mapper name", name);
                return 1;
        }
        if (offset != 0) {
                /* A swap file on the file system in the mapping, at the page resume_offset= names. */
                r = swapfile_find_active(root, h->maj, h->min, offset, h->swapfile, sizeof(h->swapfile),
                                         &sw);
                if (r < 0) {
                        problem(h, "no active swap file on %s starts at resume_offset=%" PRIu64 ": swapon "
                                "the file thaw setup --swapfile made (if it was moved or made again, run "
                                "thaw setup --swapfile again for the new offset)", path, offset);
                        return 1;
                }
        } else if (power_swap_find(root, h->kname, path, &sw) < 0) {
                problem(h, "%s is not active swap: run swapon %s", path, path);
                return 1;
        }
        h->priority = sw.priority;
        h->free_kib = sw.size_kib > sw.used_kib ? sw.size_kib - sw.used_kib : 0;
        return 0;
}

static int check_swap(const char *root, const char *name, uint64_t offset, struct hibcheck *h)
{
        char path[DM_MAPPER_PATH_MAX];
        struct power_meminfo mi;
        int r = find_swap(root, name, offset, h);

        if (r != 0)
                return r;
        if (dm_mapper_path(name, path, sizeof(path)) < 0)
                return 1;
        r = power_meminfo(root, &mi);
        if (r < 0) {
                problem(h, "cannot read /proc/meminfo (%s)", strerror(-r));
                return 1;
        }
        h->needed_kib = power_image_estimate_kib(&mi);
        if (h->free_kib < h->needed_kib) {
                problem(h, "not enough free swap on %s: about %" PRIu64 " MiB needed, %" PRIu64
                        " MiB free: grow the swap device or free memory", path,
                        (h->needed_kib + 1023) / 1024, h->free_kib / 1024);
                return 1;
        }
        return 0;
}

/*
 * Security: only thaw's swap may take this system's memory. Another swap of the same or a higher
 * priority takes, first or in turns, what the kernel pushes out to make room for the image (and
 * --reclaim), and it is what systemd-sleep picks for the image of systemctl hibernate: a swap
 * thaw cannot vouch for (often not encrypted), on a disk an attacker may hold while this VM is
 * stopped. thaw cannot change an active swap's priority without swapoff, which may have to read
 * gigabytes back into memory or fail, so it refuses and says what to change.
 */
static int check_rival(const char *root, const char *name, struct hibcheck *h)
{
        char dev[64], mapper[DM_MAPPER_PATH_MAX];
        const char *mine[] = { dev, mapper, h->swapfile, NULL };
        struct power_rival rv;
        int r;

        snprintf(dev, sizeof(dev), "/dev/%s", h->kname);
        if (dm_mapper_path(name, mapper, sizeof(mapper)) < 0)
                mapper[0] = '\0';
        r = power_swap_rival(root, mine, h->priority, &rv);
        if (r < 0) {
                problem(h, "cannot read /proc/swaps (%s)", strerror(-r));
                return 1;
        }
        if (r == 0)
                return 0;
        problem(h, "%s is active swap of priority %d, not below thaw's swap (%d)%s: memory pushed out "
                "before the image is made would go there, and systemctl hibernate would write the image "
                "there; swapoff it, or give thaw's swap the highest priority (pri= in /etc/fstab, swapon "
                "--priority)", rv.name, rv.priority, h->priority,
                rv.count > 1 ? ", and so are others" : "");
        return 1;
}

/* Where the kernel would write an image now: systemctl hibernate leaves a set resume= alone. */
static void check_resume(const char *root, const struct thaw_args *a, struct hibcheck *h)
{
        unsigned maj, min;
        uint64_t offset;

        if (handoff_read(root, &maj, &min, &offset) < 0 || (maj == 0 && min == 0))
                return;
        if (maj == h->maj && min == h->min && offset == a->offset)
                return;
        h->resume_elsewhere = true;
        snprintf(h->resume_now, sizeof(h->resume_now), "%u:%u offset %" PRIu64, maj, min, offset);
}

/* What the next boot's thaw resume reads (if the command line stays the same) must let it resume. */
static int check_config(const struct thaw_args *a, struct hibcheck *h)
{
        int failed = 0;

        if (a->disabled) {
                problem(h, "rd.thaw=0 is on the kernel command line: the next boot would not resume; "
                        "remove it from the boot loader configuration");
                failed++;
        }
        if (a->noresume) {
                problem(h, "%s is on the kernel command line: the next boot would not resume; remove it "
                        "from the boot loader configuration", a->noresume_by ? a->noresume_by : "noresume");
                failed++;
        }
        if (!*a->device) {
                problem(h, "no device configured: add device= to %s or rd.thaw.device= to the kernel "
                        "command line (thaw setup prints it)", ARGS_CONF_PATH);
                failed++;
        }
        if (!*a->key) {
                problem(h, "no key source configured: add key= to %s or rd.thaw.key= to the kernel "
                        "command line (thaw setup prints it)", ARGS_CONF_PATH);
                failed++;
        }
        return failed;
}

/* thaw provision changed thaw.conf and the initramfs was not rebuilt since: the next boot uses the old one. */
static int check_initramfs(const char *root, struct hibcheck *h)
{
        char path[4096];

        if (util_path(path, sizeof(path), root, ARGS_STALE_PATH) < 0 || !util_exists(path))
                return 0;
        problem(h, "the initramfs does not carry the current %s yet (%s is there): the next boot would "
                "not find the image; run thaw provision, or dracut --force and then remove %s",
                ARGS_CONF_PATH, ARGS_STALE_PATH, ARGS_STALE_PATH);
        return 1;
}

int hibcheck_rival(const char *root, const struct thaw_args *a, struct hibcheck *out)
{
        struct hibcheck h = { 0 };
        int failed = find_swap(root, a->name, a->offset, &h);

        if (failed == 0)
                failed = check_rival(root, a->name, &h);
        *out = h;
        return failed;
}

int hibcheck_run(const char *root, const struct thaw_args *a, const char *mode, struct hibcheck *out)
{
        struct hibcheck h = { 0 };
        char why[256];
        int failed, r;

        failed = check_config(a, &h);
        failed += check_initramfs(root, &h);
        r = check_swap(root, a->name, a->offset, &h);
        failed += r;
        if (r == 0) {
                failed += check_rival(root, a->name, &h);
                check_resume(root, a, &h);
        }
        r = power_hibernation_available(root, why, sizeof(why));
        if (r == 0)
                problem(&h, "hibernation is not available: %s", why);
        else if (r < 0)
                problem(&h, "cannot read /sys/power (%s)", strerror(-r));
        failed += r <= 0;
        if (r > 0) {
                r = power_mode_offered(root, mode);
                if (r <= 0) {
                        problem(&h, "hibernation mode %s is not offered by /sys/power/disk: "
                                "choose another --mode", mode);
                        failed++;
                }
        }
        *out = h;
        return failed;
}
