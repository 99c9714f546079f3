/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hibernate/snapshot.h"
#include "base/clock.h"
#include "image/format.h"
#include "image/imgwrite.h"
#include "image/swsusp.h"
#include "ticket.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/reboot.h>
#include <linux/suspend_ioctls.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <unistd.h>

struct snap {
        int fd;
        struct ticket_mac *mac;
        uint64_t mac_ns; /* time spent in the image's MAC, for the writer's line */
};

static int read_page(void *ctx, uint8_t *page)
{
        struct snap *s = ctx;
        ssize_t n;

        do
                n = read(s->fd, page, SWSUSP_PAGE);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0;
        if (n != SWSUSP_PAGE)
                return -EIO;
        if (s->mac) {
                uint64_t t0 = clock_now_ns();

                if (ticket_mac_update(s->mac, page, SWSUSP_PAGE) < 0)
                        return -EIO;
                s->mac_ns += clock_now_ns() - t0;
        }
        return 1;
}

static int alloc_block(void *ctx, uint64_t *block)
{
        struct snap *s = ctx;
        __kernel_loff_t off;

        if (ioctl(s->fd, SNAPSHOT_ALLOC_SWAP_PAGE, &off) < 0)
                return -errno;
        if (off <= 0 || off % SWSUSP_PAGE)
                return -EINVAL;
        *block = (uint64_t)off / SWSUSP_PAGE;
        return 0;
}

/* The kernel log only: user space is frozen, and a pipe to a frozen reader could block us. */
static void kmsg(int fd, const char *fmt, ...)
{
        char line[512];
        va_list ap;
        int n;

        if (fd < 0)
                return;
        n = snprintf(line, sizeof(line), "<5>thaw: ");
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        va_end(ap);
        (void)!write(fd, line, strlen(line));
}

/*
 * The image is marked and could not be unmarked: the system must not go on past it (the next boot
 * would resume the old state over what came after). As the kernel's power_down() does when the
 * power-off fails: say so and stop, frozen.
 */
static void stop(int kmsg_fd, const struct snapshot_target *t)
{
        reboot(t->reboot ? RB_AUTOBOOT : RB_POWER_OFF);
        kmsg(kmsg_fd, "an image is marked on %s and cannot be unmarked, and %s failed (%s): the system "
             "stays frozen; power the machine off by hand\n", t->dev, t->reboot ? "reboot" : "power-off",
             strerror(errno));
        for (;;)
                pause();
}

/*
 * With the snapshot taken and user space frozen: write it, mark it, power off. Returns only on
 * failure, with no image left marked for the next boot to resume.
 */
static int write_and_power_off(struct snap *s, int dev, int kmsg_fd, const struct snapshot_target *t,
                               char *why, size_t size)
{
        struct imgwrite_source src = { read_page, s };
        struct imgwrite_alloc alloc = { alloc_block, s };
        struct imgwrite_result res;
        uint8_t mac[TICKET_MAC_SIZE];
        char seal_why[512];
        char mac_note[64] = "";
        uint64_t t0 = clock_now_ns();
        bool tried;
        int r;

        r = imgwrite_stream(dev, &src, &alloc, &res);
        if (r < 0)
                return util_why(why, size, r, "writing the image failed: %s", res.why);
        if (s->mac) {
                r = ticket_mac_end(s->mac, mac);
                s->mac = NULL;
                snprintf(mac_note, sizeof(mac_note), ", the image's MAC %.2f s", (double)s->mac_ns / 1e9);
                if (r < 0)
                        return util_why(why, size, r, "cannot finish the image's MAC: %s", strerror(-r));
        }
        /* The ticket before the mark: an image is never there for the kernel without it. */
        if (t->seal) {
                seal_why[0] = '\0';
                r = t->seal(t->seal_ctx, t->mac ? mac : NULL, &res, seal_why, sizeof(seal_why));
                if (r < 0)
                        return util_why(why, size, r, "the image was written but its ticket was not (%s), so it "
                                        "was not marked", seal_why[0] ? seal_why : strerror(-r));
        }
        r = imgwrite_header(dev, t->offset, &res, t->hw_sig, t->hw_sig_value, &tried);
        if (r < 0) {
                /* A failed write or flush of the header may have left the mark on disk. */
                if (tried && swsusp_unmark_fd(dev, t->offset) < 0)
                        stop(kmsg_fd, t);
                return util_why(why, size, r, "cannot mark the swap header at page %" PRIu64 " of %s: %s%s",
                                t->offset, t->dev, strerror(-r),
                                r == -EINVAL ? " (it is not plain swap)" : "");
        }
        kmsg(kmsg_fd, "wrote the image to %s: %" PRIu64 " pages in %" PRIu64 " blocks (%" PRIu64
             " MiB), CRC32 %08" PRIx32 ", in %.2f s (waiting for the disk %.2f s%s), flushed; powering off\n", t->dev,
             res.pages, res.blocks, res.blocks * SWSUSP_PAGE >> 20, res.crc, (double)(clock_now_ns() - t0) / 1e9,
             (double)res.wait_ns / 1e9, mac_note);
        reboot(t->reboot ? RB_AUTOBOOT : RB_POWER_OFF);
        r = -errno;
        /* Still running: the image must not be resumed later, over a system that went on. */
        if (swsusp_unmark_fd(dev, t->offset) < 0)
                stop(kmsg_fd, t);
        return util_why(why, size, r, "the image was written but %s failed (%s); it was unmarked again",
                        t->reboot ? "reboot" : "power-off", strerror(-r));
}

/* CAP_SYS_BOOT in the effective set: without it the image could be written but not powered off. */
static bool may_reboot(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { 0 };

        if (syscall(SYS_capget, &h, d) < 0)
                return true; /* cannot tell: reboot() will */
        return d[CAP_SYS_BOOT / 32].effective & (1u << (CAP_SYS_BOOT % 32));
}

/* /sys/power/pm_test other than none: the kernel only pretends, and CREATE_IMAGE comes back as resumed. */
static int pm_test_off(const char *root, char *why, size_t size)
{
        char buf[256];

        if (util_read_text_at(root, "/sys/power/pm_test", buf, sizeof(buf)) < 0 || strstr(buf, "[none]"))
                return 0;
        buf[strcspn(buf, "\n")] = '\0';
        return util_why(why, size, -EBUSY, "/sys/power/pm_test is set (%s): write none to it first", buf);
}

int snapshot_hibernate(const char *root, const struct snapshot_target *t, char *why, size_t size)
{
        struct resume_swap_area area = {
                .offset = (__kernel_loff_t)t->offset,
                /* new_encode_dev(), as the kernel decodes it */
                .dev = (t->min & 0xff) | (t->maj << 8) | ((t->min & ~0xffu) << 12),
        };
        char path[4096];
        struct snap s = { .fd = -1, .mac = t->mac };
        int dev = -1, kmsg_fd = -1, in_suspend = 0, r;

        why[0] = '\0';
        if (!may_reboot())
                return util_why(why, size, -EPERM, "no CAP_SYS_BOOT: thaw could write the image but not power off");
        r = pm_test_off(root, why, size);
        if (r < 0)
                return r;
        r = util_path(path, sizeof(path), root, "/dev/snapshot");
        if (r == 0) {
                s.fd = open(path, O_RDONLY | O_CLOEXEC);
                if (s.fd < 0)
                        r = util_why(why, size, -errno, "cannot open %s: %s%s", path, strerror(errno),
                                errno == ENOENT ? " (no CONFIG_HIBERNATION_SNAPSHOT_DEV?)" : "");
        }
        if (r == 0) {
                dev = open(t->dev, O_RDWR | O_DIRECT | O_CLOEXEC);
                if (dev < 0)
                        r = util_why(why, size, -errno, "cannot open %s for writing: %s", t->dev, strerror(errno));
        }
        if (r == 0 && ioctl(s.fd, SNAPSHOT_SET_SWAP_AREA, &area) < 0)
                r = util_why(why, size, -errno, "the kernel does not take %s (%u:%u, offset %" PRIu64 ") as the "
                        "image's swap: %s", t->dev, t->maj, t->min, t->offset, strerror(errno));
        if (r < 0)
                goto out;
        if (util_path(path, sizeof(path), root, "/dev/kmsg") == 0)
                kmsg_fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
        /* Nothing of ours may need a page from swap or a new page while the system is frozen. */
        if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
                kmsg(kmsg_fd, "cannot lock memory (%s); going on\n", strerror(errno));
        if (ioctl(s.fd, SNAPSHOT_FREEZE) < 0) {
                r = util_why(why, size, -errno, "the kernel could not freeze the system: %s", strerror(errno));
                goto out;
        }
        if (ioctl(s.fd, SNAPSHOT_CREATE_IMAGE, &in_suspend) < 0) {
                r = util_why(why, size, -errno, "the kernel could not take the snapshot: %s (see the kernel log)",
                        strerror(errno));
        } else if (!in_suspend) {
                r = 1; /* here again, in the restored system */
        } else {
                r = write_and_power_off(&s, dev, kmsg_fd, t, why, size);
                ioctl(s.fd, SNAPSHOT_FREE_SWAP_PAGES);
                ioctl(s.fd, SNAPSHOT_FREE);
        }
        /* Closing thaws the system (snapshot_release()); so would SNAPSHOT_UNFREEZE. */
out:
        ticket_mac_free(s.mac); /* NULL once write_and_power_off() finished it */
        munlockall();
        if (kmsg_fd >= 0)
                close(kmsg_fd);
        if (dev >= 0)
                close(dev);
        if (s.fd >= 0)
                close(s.fd);
        return r;
}
