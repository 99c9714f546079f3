/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw hibernate: check that the next boot can resume from the thaw swap, then hibernate. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmd.h"
#include "handoff.h"
#include "hibcheck.h"
#include "log.h"
#include "resume.h"
#include "util.h"

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw hibernate [--mode shutdown|platform|reboot] [--name NAME] [--root DIR]\n"
                   "                      [--dry-run]\n\n"
                   "Check that the next boot would resume (thaw.conf and this boot's kernel command\n"
                   "line name a device and a key, no noresume, no resume_offset), that /dev/mapper/NAME\n"
                   "is active swap with room for the image and that hibernation is available, then\n"
                   "hibernate to it.\n\n"
                   "  -m, --mode MODE  what to do after writing the image (default shutdown)\n"
                   "  -n, --name NAME  device-mapper name (default: rd.thaw.name=, name= in\n"
                   "                   thaw.conf, else " ARGS_NAME_DEFAULT ")\n"
                   "      --root DIR   prefix for /proc, /sys, /dev and /etc (tests)\n"
                   "      --dry-run    only check\n"
                   "  -h, --help       show this help\n");
}

static void say(void *userdata, int level, const char *msg)
{
        (void)userdata;
        log_msg(level, "%s", msg);
}

static enum cmd_status hibernate(const char *root, const char *mode, const struct hibcheck *h,
                                 const char *name)
{
        int r;

        log_msg(LOG_NOTICE, "hibernating to /dev/mapper/%s (%u:%u, mode %s): %" PRIu64 " MiB free swap, "
                "about %" PRIu64 " MiB needed", name, h->maj, h->min, mode, h->free_kib / 1024,
                (h->needed_kib + 1023) / 1024);
        /* The next boot's thaw resume hands the same device over; this tells the kernel where to write. */
        r = handoff_write(root, h->maj, h->min, 0);
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

enum cmd_status cmd_hibernate(int argc, char **argv)
{
        static const struct option opts[] = {
                { "mode", required_argument, NULL, 'm' },
                { "name", required_argument, NULL, 'n' },
                { "root", required_argument, NULL, 'r' },
                { "dry-run", no_argument, NULL, 'D' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "", *mode = "shutdown", *name_opt = NULL;
        struct thaw_args args;
        struct hibcheck h;
        bool dry_run = false;
        int c, failed;

        log_setup("", true);
        while ((c = getopt_long(argc, argv, "m:n:h", opts, NULL)) != -1) {
                switch (c) {
                case 'm': mode = optarg; break;
                case 'n': name_opt = optarg; break;
                case 'r': root = optarg; break;
                case 'D': dry_run = true; break;
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
        resume_load_args(root, NULL, &args, say, NULL);
        if (name_opt && (!args_name_valid(name_opt) ||
                         util_copy(args.name, sizeof(args.name), name_opt) < 0)) {
                log_msg(LOG_ERR, "--name %s is not a usable device-mapper name", name_opt);
                return CMD_USAGE;
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
        if (dry_run) {
                log_msg(LOG_NOTICE, "ready to hibernate to /dev/mapper/%s (%u:%u): %" PRIu64 " MiB free "
                        "swap, about %" PRIu64 " MiB needed", args.name, h.maj, h.min, h.free_kib / 1024,
                        (h.needed_kib + 1023) / 1024);
                return CMD_OK;
        }
        return hibernate(root, mode, &h, args.name);
}
