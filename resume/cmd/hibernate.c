/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw hibernate: check that the next boot can resume from the thaw swap, then hibernate. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cmd/cmd.h"
#include "dev/dm.h"
#include "system/handoff.h"
#include "hibernate/hibcheck.h"
#include "hibernate/hibticket.h"
#include "image/imgwrite.h"
#include "base/clock.h"
#include "base/log.h"
#include "luks.h"
#include "luks_mapping.h"
#include "luks_policy.h"
#include "image/machine.h"
#include "system/power.h"
#include "hibernate/snapshot.h"
#include "swapin/swapplan.h"
#include "base/util.h"

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw hibernate [--mode shutdown|platform|reboot] [--name NAME] [--root DIR]\n"
                   "                      [--image-size SIZE] [--reclaim] [--no-swapin]\n"
                   "                      [--writer auto|kernel|thaw] [--dry-run] [--ticket-only]\n\n"
                   "Check that the next boot would resume (thaw.conf and this boot's kernel command\n"
                   "line name a device and a key, no noresume), that /dev/mapper/NAME is active swap\n"
                   "(with resume_offset=: holds the active swap file that starts at that page) with\n"
                   "room for the image, that no other swap but zram has a priority as high as its\n"
                   "own and that hibernation is available, then hibernate to it.\n"
                   "It refuses a mapping whose live table is not the encryption its LUKS2 header\n"
                   "says (one aes-xts-plain64 crypt target, key size, sector size, offset, integrity).\n"
                   "Before the image is marked, it writes the image's ticket (a LUKS2 token: an id, the\n"
                   "time, this boot, and markers of every file system mounted read-write), sealed with\n"
                   "a key derived from the volume key: the next boot resumes only a fresh image.\n\n"
                   "  -m, --mode MODE  what to do after writing the image (default shutdown)\n"
                   "  -n, --name NAME  device-mapper name (default: rd.thaw.name=, name= in\n"
                   "                   thaw.conf, else " ARGS_NAME_DEFAULT ")\n"
                   "      --image-size SIZE  write SIZE (e.g. 64M, 0: as small as possible) to\n"
                   "                   /sys/power/image_size first (default: image_size= in thaw.conf,\n"
                   "                   else the kernel's setting)\n"
                   "      --reclaim    first ask the kernel (cgroup v2 memory.reclaim) to swap out what\n"
                   "                   the image would not hold anyway\n"
                   "      --no-swapin  after the resume, do not start thaw swapin (default: start it,\n"
                   "                   with the strategy of swapin= in thaw.conf; swapin=off: never)\n"
                   "      --writer W   who writes the image: kernel (Linux, as systemctl hibernate),\n"
                   "                   thaw (the kernel takes the snapshot through /dev/snapshot, thaw\n"
                   "                   writes it in the kernel's format, reads the file-system markers\n"
                   "                   with the system frozen, authenticates the whole image in its\n"
                   "                   ticket and flushes the device before powering off), or auto\n"
                   "                   (default: writer= in thaw.conf, else thaw where /dev/snapshot\n"
                   "                   exists). With the kernel writing, the ticket's markers are read\n"
                   "                   before the freeze, and the next boot trusts only the mount\n"
                   "                   count and time of each. thaw's writer does --mode shutdown or reboot\n"
                   "      --root DIR   prefix for /proc, /sys, /dev and /etc (tests)\n"
                   "      --dry-run    only check\n"
                   "      --ticket-only  only write the ticket of an image the kernel is about to\n"
                   "                   write (the systemd-sleep hook runs this for systemctl hibernate),\n"
                   "                   first pointing /sys/power/resume at thaw's swap if systemd-sleep\n"
                   "                   chose another; with another swap of a priority as high as thaw's\n"
                   "                   it writes no ticket and exits 1 (it cannot stop systemd-sleep)\n"
                   "  -h, --help       show this help\n");
}

/*
 * Start thaw swapin, detached (its own session, reparented to init), so that this command returns
 * at once and the swap-in runs in the background at its low priority. Its messages go where ours go.
 */
static void spawn_swapin(const char *root, const char *strategy, const char *name)
{
        char *argv[12], devnull[PATH_MAX];
        int n = 0, status;
        pid_t pid;

        argv[n++] = (char *)"thaw";
        argv[n++] = (char *)"swapin";
        argv[n++] = (char *)"--strategy";
        argv[n++] = (char *)strategy;
        argv[n++] = (char *)"--name";
        argv[n++] = (char *)name;
        if (root && *root) {
                argv[n++] = (char *)"--root";
                argv[n++] = (char *)root;
        }
        argv[n] = NULL;
        if (util_path(devnull, sizeof(devnull), root ? root : "", "/dev/null") < 0)
                devnull[0] = '\0';
        pid = fork();
        if (pid < 0) {
                log_msg(LOG_WARNING, "cannot start thaw swapin (%s): memory comes back as it is used",
                        strerror(errno));
                return;
        }
        if (pid == 0) {
                int null = *devnull ? open(devnull, O_RDONLY | O_CLOEXEC) : -1;

                setsid();
                if (null >= 0)
                        dup2(null, STDIN_FILENO);
                if (fork() != 0)
                        _exit(0);
                /*
                 * This very program: not whatever "thaw" PATH would find (our own /proc entry, so
                 * not under the root prefix).
                 */
                execv("/proc/self/exe", argv);
                log_msg(LOG_WARNING, "cannot run thaw swapin (%s): memory comes back as it is used",
                        strerror(errno));
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        log_msg(LOG_NOTICE, "started thaw swapin --strategy %s in the background", strategy);
}

/*
 * Reclaim in steps of this size, saying how far it has got about every CLOCK_PROGRESS_MS: a reclaim
 * of a few hundred MiB to an encrypted swap takes 10-15 s on a slow VM.
 */
#define RECLAIM_STEP_KIB (32u * 1024u)

/* Asks for want KiB in steps, up to the first that fails: 0, or that step's negative errno. */
static int reclaim_steps(const char *root, uint64_t want)
{
        struct clock_every say;
        uint64_t done = 0;

        clock_every_start(&say, CLOCK_PROGRESS_MS);
        while (done < want) {
                uint64_t step = want - done < RECLAIM_STEP_KIB ? want - done : RECLAIM_STEP_KIB;
                int r = power_reclaim(root, step);

                if (r < 0)
                        return r;
                done += step;
                if (done < want && clock_every_due(&say))
                        log_msg(LOG_NOTICE, "reclaiming: %" PRIu64 " of %" PRIu64 " MiB so far", done / 1024,
                                want / 1024);
        }
        return 0;
}

/* Reclaim down to the image size the kernel aims at, and say how long it took. */
static void reclaim(const char *root)
{
        struct power_meminfo m;
        int64_t t0;
        uint64_t used, want;
        int r = power_meminfo(root, &m);

        if (r < 0 || m.image_size_kib == UINT64_MAX) {
                log_msg(LOG_WARNING, "cannot read %s (%s): not reclaiming", r < 0 ? "/proc/meminfo" :
                        "/sys/power/image_size", strerror(r < 0 ? -r : ENOENT));
                return;
        }
        used = m.mem_total_kib > m.mem_available_kib ? m.mem_total_kib - m.mem_available_kib : 0;
        if (used <= m.image_size_kib) {
                log_msg(LOG_INFO, "reclaim: %" PRIu64 " MiB in use fit image_size, nothing to do", used / 1024);
                return;
        }
        want = used - m.image_size_kib;
        t0 = clock_now_ms();
        r = reclaim_steps(root, want);
        if (r < 0 && r != -EAGAIN) {
                log_msg(LOG_WARNING, "cannot reclaim through /sys/fs/cgroup/memory.reclaim (%s): the kernel "
                        "will shrink memory while hibernating", strerror(-r));
                return;
        }
        log_msg(LOG_NOTICE, "reclaimed %s%" PRIu64 " MiB in %.1f s before hibernating", r ? "part of " : "",
                want / 1024, (double)(clock_now_ms() - t0) / 1000.0);
}

/*
 * The ticket of an image the kernel writes: its markers are read now, while the system runs, so
 * the next boot trusts only each file system's mount count and time (fsmark.h).
 */
static int write_kernel_ticket(struct hibticket *ticket)
{
        char why[768];
        int r = hibticket_write(ticket, TICKET_WRITER_KERNEL, NULL, why, sizeof(why));

        if (r < 0) {
                log_msg(LOG_ERR, "%s: not hibernating (the next boot would not resume an image without it)", why);
                return r;
        }
        log_msg(LOG_NOTICE, "image ticket written to %s: %zu file system(s); the kernel writes the image, so the "
                "next boot checks only their mount count and time", ticket->dev, ticket->t.n_fs);
        return 0;
}

/*
 * The ticket's key and the mounts, before anything is frozen. A --root fixture without
 * device-mapper (host tests) has no ticket: 1, and nothing to write.
 */
static int prepare_ticket(const char *root, const char *name, struct hibticket *ticket)
{
        char control[PATH_MAX], why[768];
        int r;

        if (*root && util_path(control, sizeof(control), root, "/dev/mapper/control") == 0 &&
            !util_exists(control)) {
                log_msg(LOG_WARNING, "no %s: no image ticket is written", control);
                return 1;
        }
        r = hibticket_prepare(root, name, ticket, why, sizeof(why));
        if (r < 0)
                log_msg(LOG_ERR, "cannot prepare the image's ticket: %s; not hibernating", why);
        else if (*ticket->unknown)
                log_msg(LOG_WARNING, "thaw cannot read the markers of %s: the next boot cannot tell whether they "
                        "were mounted or written since the image was made", ticket->unknown);
        return r;
}

/* The TPM2 counter, incremented right before the image is made (hibticket_count()). */
static int count_ticket(struct hibticket *ticket)
{
        char why[768];
        int r = hibticket_count(ticket, why, sizeof(why));

        if (r < 0)
                log_msg(LOG_ERR, "cannot increment the TPM2 counter of %s: %s; not hibernating", ticket->dev, why);
        else if (ticket->has_counter)
                log_msg(LOG_INFO, "TPM2 counter of %s incremented to %" PRIu64 ": the image's ticket records it",
                        ticket->dev, ticket->counter);
        else if (*ticket->no_counter)
                log_msg(LOG_WARNING, "%s has a thaw-tpm2 token but %s: this image is not protected against a "
                        "rollback", ticket->dev, ticket->no_counter);
        return r;
}

/* The one line both writers log before hibernating. */
static void announce(const char *mode, const struct hibcheck *h, const char *name, uint64_t offset,
                     bool thaw_writes)
{
        log_msg(LOG_NOTICE, "hibernating to /dev/mapper/%s (%u:%u%s%s, offset %" PRIu64 ", mode %s): %"
                PRIu64 " MiB free swap, about %" PRIu64 " MiB needed%s", name, h->maj, h->min,
                *h->swapfile ? ", swap file " : "", h->swapfile, offset, mode, h->free_kib / 1024,
                (h->needed_kib + 1023) / 1024, thaw_writes ? "; thaw writes the image" : "");
}

/* The seal callback of thaw's writer: the ticket, with the system frozen and the stream written. */
static int seal(void *ctx, const uint8_t *image_mac, const struct imgwrite_result *res, char *why, size_t size)
{
        struct hibticket_image img = { .mac = image_mac, .crc32 = res->crc, .first_map = res->first_map,
                                       .pages = res->pages };
        /*
         * Every other process is frozen, and one may hold libcryptsetup's metadata lock on the
         * device (a cryptsetup or thaw run): taking it would wait forever. Nothing else can write
         * the header now.
         */
        int r = luks_locking_off();

        if (r < 0) {
                snprintf(why, size, "cannot turn libcryptsetup's locking off (%s)", strerror(-r));
                return r;
        }
        return hibticket_write(ctx, TICKET_WRITER_THAW, &img, why, size);
}

/* thaw writes the image: the kernel freezes and snapshots, thaw writes, flushes and powers off. */
static enum cmd_status hibernate_thaw(const char *root, const char *mode, const struct hibcheck *h,
                                      const struct thaw_args *a, struct hibticket *ticket)
{
        struct snapshot_target t = { .maj = h->maj, .min = h->min, .offset = a->offset,
                                     .reboot = strcmp(mode, "reboot") == 0 };
        struct machine_info m = { 0 };
        char dev[PATH_MAX], rel[PATH_MAX], why[512];
        int r;

        snprintf(rel, sizeof(rel), "/dev/mapper/%s", a->name);
        if (util_path(dev, sizeof(dev), root, rel) < 0)
                return CMD_FAILED;
        t.dev = dev;
        /* As the kernel does with acpi_sleep=s4_hwsig: the next boot compares it. */
        machine_read_facs(root, &m);
        t.hw_sig = a->s4_hwsig && m.have_facs && m.facs_sig != 0;
        t.hw_sig_value = m.facs_sig;
        /*
         * THAW_BENCH_NO_IMAGE_MAC: make bench-hibernate's baseline, to measure what the MAC adds to
         * the write. The ticket then holds no image MAC, as with the kernel's writer.
         */
        if (ticket && !secure_getenv("THAW_BENCH_NO_IMAGE_MAC")) {
                r = ticket_mac_begin(ticket->key, &t.mac);
                if (r < 0) {
                        log_msg(LOG_ERR, "cannot start the image's MAC (%s): not hibernating", strerror(-r));
                        return CMD_FAILED;
                }
        }
        if (ticket) {
                t.seal = seal;
                t.seal_ctx = ticket;
        }
        announce(mode, h, a->name, a->offset, true);
        r = snapshot_hibernate(root, &t, why, sizeof(why));
        if (r < 0) {
                log_msg(LOG_ERR, "hibernation failed: %s; the system keeps running", why);
                return CMD_FAILED;
        }
        log_msg(LOG_NOTICE, "resumed");
        return CMD_OK;
}

static enum cmd_status hibernate(const char *root, const char *mode, const struct hibcheck *h,
                                 const char *name, uint64_t offset, struct hibticket *ticket)
{
        int r;

        announce(mode, h, name, offset, false);
        if (ticket && write_kernel_ticket(ticket) < 0)
                return CMD_FAILED;
        /* The next boot's thaw resume hands the same device over; this tells the kernel where to write. */
        r = handoff_write(root, h->maj, h->min, offset);
        if (r == 0)
                r = util_write_text_at(root, "/sys/power/disk", mode);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot prepare hibernation through /sys/power (%s): not hibernating",
                        strerror(-r));
                return CMD_FAILED;
        }
        /* Returns after the resume, or at once if the kernel could not write the image. */
        r = util_write_text_at(root, "/sys/power/state", "disk");
        if (r < 0) {
                log_msg(LOG_ERR, "hibernation failed (%s; see the kernel log): the system keeps running",
                        strerror(-r));
                return CMD_FAILED;
        }
        log_msg(LOG_NOTICE, "resumed");
        return CMD_OK;
}

/*
 * Security: systemctl hibernate. systemd-sleep writes /sys/power/resume before it runs its hooks,
 * with the swap it picked (a resume= already set, else the highest priority and then the most
 * free space): the kernel writes the image there. It must be thaw's swap and nothing else (an image
 * on another swap is this system's memory, unauthenticated and often in the clear), so the hook
 * points the kernel at it. Writing resume while that swap is active starts no resume: the swap is
 * claimed, and the kernel's exclusive open fails.
 */
static int point_resume(const char *root, const struct thaw_args *a)
{
        char kname[DM_KNAME_MAX];
        unsigned maj, min, rmaj = 0, rmin = 0;
        uint64_t roff = 0;
        int r;

        r = dm_devnum(root, a->name, &maj, &min, kname, sizeof(kname));
        if (r < 0) {
                log_msg(LOG_ERR, "cannot find /dev/mapper/%s (%s): the kernel writes the image where "
                        "/sys/power/resume says, and no ticket is written", a->name, strerror(-r));
                return r;
        }
        r = handoff_read(root, &rmaj, &rmin, &roff);
        if (r == 0 && rmaj == maj && rmin == min && roff == a->offset)
                return 0;
        r = handoff_write(root, maj, min, a->offset);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot point /sys/power/resume at /dev/mapper/%s (%s): the kernel "
                        "writes the image where systemd-sleep chose, and no ticket is written", a->name,
                        strerror(-r));
                return r;
        }
        log_msg(LOG_WARNING, "/sys/power/resume named %u:%u offset %" PRIu64 ", not thaw's swap: pointed "
                "it at /dev/mapper/%s (%u:%u, offset %" PRIu64 "), so the image goes to thaw's swap",
                rmaj, rmin, roff, a->name, maj, min, a->offset);
        return 0;
}

/*
 * Security: the LUKS2 header is not authenticated, and a segment switched to cipher_null maps the
 * disk in the clear: the image, all of this system's memory, would go to the disk as it is. So
 * before anything is frozen or written, the mapping's live table must be the encryption its
 * header says (luks_mapping_check()). Only a --root fixture without device-mapper (host tests)
 * skips it: with --root every write goes under that root, so nothing can hibernate this machine.
 */
static int check_mapping(const char *root, const struct thaw_args *a)
{
        /*
         * Security, and the user's work: the header policy and pin the next boot's thaw resume will
         * apply (thaw.conf and this boot's command line). An image written behind a header that boot
         * refuses could never be resumed, and would be lost to the swap later.
         */
        struct luks_policy p = { .profile = a->offset ? LUKS_PROFILE_FOREIGN : LUKS_PROFILE_THAW,
                                 .pin = a->header };
        const char *name = a->name;
        char control[PATH_MAX], why[768];
        int r;

        if (*root && util_path(control, sizeof(control), root, "/dev/mapper/control") == 0 &&
            !util_exists(control)) {
                log_msg(LOG_WARNING, "no %s: the live table of /dev/mapper/%s is not checked", control, name);
                return 0;
        }
        r = luks_mapping_check_policy(root, NULL, name, &p, why, sizeof(why));
        if (r == -LUKS_EPOLICY && strstr(why, "differs from the pinned"))
                log_msg(LOG_ERR, "refusing to hibernate to /dev/mapper/%s: %s; the next boot would not resume "
                        "it (after a change on purpose: thaw enroll --repin, then rebuild the initramfs or "
                        "update rd.thaw.header=)", name, why);
        else if (r < 0)
                log_msg(LOG_ERR, "refusing to hibernate to /dev/mapper/%s: %s", name, why);
        return r;
}

enum cmd_status cmd_hibernate(int argc, char **argv)
{
        static const struct option opts[] = {
                { "mode", required_argument, NULL, 'm' },
                { "name", required_argument, NULL, 'n' },
                { "root", required_argument, NULL, 'r' },
                { "dry-run", no_argument, NULL, 'D' },
                { "image-size", required_argument, NULL, 'I' },
                { "reclaim", no_argument, NULL, 'R' },
                { "no-swapin", no_argument, NULL, 'S' },
                { "writer", required_argument, NULL, 'W' },
                { "ticket-only", no_argument, NULL, 'T' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "", *mode = "shutdown", *name_opt = NULL, *image_opt = NULL, *writer_opt = NULL;
        struct thaw_args args;
        struct hibcheck h;
        bool dry_run = false, do_reclaim = false, no_swapin = false, ticket_only = false, thaw_writes;
        struct hibticket ticket;
        int have_ticket;
        char text[32];
        enum cmd_status st;
        int c, failed;

        log_setup("", true);
        while ((c = getopt_long(argc, argv, "m:n:h", opts, NULL)) != -1) {
                switch (c) {
                case 'm': mode = optarg; break;
                case 'n': name_opt = optarg; break;
                case 'r': root = optarg; break;
                case 'D': dry_run = true; break;
                case 'I': image_opt = optarg; break;
                case 'R': do_reclaim = true; break;
                case 'S': no_swapin = true; break;
                case 'W': writer_opt = optarg; break;
                case 'T': ticket_only = true; break;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        if (optind < argc || (strcmp(mode, "shutdown") && strcmp(mode, "platform") &&
                              strcmp(mode, "reboot"))) {
                log_msg(LOG_ERR, "hibernate takes --mode shutdown, platform or reboot, and no arguments");
                return CMD_USAGE;
        }
        /* The settings the next boot's thaw resume will read, if this boot's command line stays. */
        args_load(root, NULL, 0, &args, log_say, NULL);
        if (name_opt && (!args_name_valid(name_opt) ||
                         util_copy(args.name, sizeof(args.name), name_opt) < 0)) {
                log_msg(LOG_ERR, "--name %s is not a usable device-mapper name", name_opt);
                return CMD_USAGE;
        }
        if (image_opt && (!*image_opt || image_opt[strlen(image_opt) - 1] == '%' ||
                          swapplan_parse_size(image_opt, 0, &args.image_size_kib) < 0)) {
                log_msg(LOG_ERR, "--image-size %s: give a size like 64M, 1G or 0", image_opt);
                return CMD_USAGE;
        }
        if (writer_opt && (strcmp(writer_opt, "auto") && strcmp(writer_opt, "kernel") &&
                           strcmp(writer_opt, "thaw"))) {
                log_msg(LOG_ERR, "--writer takes auto, kernel or thaw");
                return CMD_USAGE;
        }
        if (writer_opt)
                util_copy(args.writer, sizeof(args.writer), writer_opt);
        if (check_mapping(root, &args) < 0)
                return CMD_FAILED;
        if (ticket_only) {
                if (point_resume(root, &args) < 0)
                        return CMD_FAILED;
                /*
                 * Security: as thaw hibernate's own checks, another swap that outranks thaw's took
                 * memory pushed out for the image. The hook cannot stop systemd-sleep; without a
                 * ticket the next boot does not resume this image.
                 */
                if (hibcheck_rival(root, &args, &h) > 0) {
                        util_rstrip(h.problems);
                        log_msg(LOG_ERR, "%s; no ticket is written, so the next boot does not resume this "
                                "image (this hook cannot stop systemd-sleep's hibernation)", h.problems);
                        return CMD_FAILED;
                }
                have_ticket = prepare_ticket(root, args.name, &ticket);
                st = have_ticket < 0 ? CMD_FAILED : CMD_OK;
                if (have_ticket == 0)
                        st = count_ticket(&ticket) < 0 || write_kernel_ticket(&ticket) < 0 ? CMD_FAILED : CMD_OK;
                hibticket_free(&ticket);
                return st;
        }
        /* Before the checks: the room needed for the image depends on it. */
        if (!dry_run && args.image_size_kib != UINT64_MAX) {
                snprintf(text, sizeof(text), "%" PRIu64, args.image_size_kib * 1024);
                if (util_write_text_at(root, "/sys/power/image_size", text) < 0)
                        log_msg(LOG_WARNING, "cannot set /sys/power/image_size to %s: the kernel keeps its "
                                "own", text);
        }
        failed = hibcheck_run(root, &args, mode, &h);
        if (failed > 0) {
                for (char *line = h.problems, *next; line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        log_msg(LOG_ERR, "%s", line);
                }
                log_msg(LOG_ERR, "not hibernating: the next boot could not resume");
                return CMD_FAILED;
        }
        if (h.resume_elsewhere)
                log_msg(LOG_NOTICE, "/sys/power/resume names %s, not thaw's swap: thaw hibernate writes the "
                        "image to /dev/mapper/%s all the same, and so does systemctl hibernate through "
                        "thaw's sleep hook", h.resume_now, args.name);
        if (strcmp(args.writer, "auto") == 0) {
                char snap[PATH_MAX];

                /*
                 * thaw's writer reads the file-system markers with the system frozen and authenticates
                 * the whole image: the stronger ticket. The kernel writes only without /dev/snapshot.
                 */
                thaw_writes = util_path(snap, sizeof(snap), root, "/dev/snapshot") == 0 && util_exists(snap);
                /* --mode platform is the kernel's to do; with integrity thaw must write (see --help). */
                if (thaw_writes && strcmp(mode, "platform") == 0 && luks_active_integrity(args.name) != 1)
                        thaw_writes = false;
                else if (!thaw_writes)
                        log_msg(LOG_WARNING, "no /dev/snapshot: the kernel writes the image, and the next boot "
                                "checks only the file systems' mount count and time");
        } else
                thaw_writes = strcmp(args.writer, "thaw") == 0;
        if (thaw_writes && strcmp(mode, "platform") == 0) {
                log_msg(LOG_ERR, "thaw writes the image here (%s), and then powers off or reboots itself: "
                        "use --mode shutdown or reboot, or --writer kernel", strcmp(args.writer, "auto") ?
                        "--writer thaw" : "the container has integrity");
                return CMD_USAGE;
        }
        have_ticket = prepare_ticket(root, args.name, &ticket);
        if (have_ticket < 0)
                return CMD_FAILED;
        if (dry_run) {
                hibticket_free(&ticket);
                log_msg(LOG_NOTICE, "ready to hibernate to /dev/mapper/%s (%u:%u): %" PRIu64 " MiB free "
                        "swap, about %" PRIu64 " MiB needed; %s would write the image", args.name, h.maj,
                        h.min, h.free_kib / 1024, (h.needed_kib + 1023) / 1024, thaw_writes ? "thaw" : "the kernel");
                return CMD_OK;
        }
        if (have_ticket == 0 && count_ticket(&ticket) < 0) {
                hibticket_free(&ticket);
                return CMD_FAILED;
        }
        if (do_reclaim)
                reclaim(root);
        if (thaw_writes)
                st = hibernate_thaw(root, mode, &h, &args, have_ticket == 0 ? &ticket : NULL);
        else
                st = hibernate(root, mode, &h, args.name, args.offset, have_ticket == 0 ? &ticket : NULL);
        hibticket_free(&ticket);
        if (st == CMD_OK && !no_swapin && strcmp(args.swapin, "off") != 0)
                spawn_swapin(root, args.swapin, args.name);
        return st;
}
