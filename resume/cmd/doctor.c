/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw doctor: say whether this kernel and system can hibernate with thaw, and what is missing. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "system/doctor.h"
#include "system/kconfig.h"
#include "base/util.h"

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw doctor [--root DIR] [--fragment FILE] [--show-fragment]\n\n"
                   "Check the running kernel's configuration (/proc/config.gz, else\n"
                   "/boot/config-RELEASE) against the options thaw relies on, and /sys/power,\n"
                   "kernel lockdown, /dev/mapper/control, fw_cfg and active swap. One line per\n"
                   "check: ok, missing (thaw cannot hibernate until it is fixed), optional (only\n"
                   "some setups need it) or skip (does not apply or cannot be read).\n\n"
                   "      --root DIR       prefix for /proc, /sys, /dev and /boot (tests)\n"
                   "      --fragment FILE  check against this kconfig fragment instead of the\n"
                   "                       built-in copy of kernel/thaw.config\n"
                   "      --show-fragment  print the built-in fragment and exit\n"
                   "  -h, --help           show this help\n\n"
                   "Exit status: 0 if nothing required is missing, 1 otherwise.\n");
}

enum cmd_status cmd_doctor(int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "fragment", required_argument, NULL, 'f' },
                { "show-fragment", no_argument, NULL, 'S' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "", *fragment_path = NULL;
        struct doctor_report *rep = NULL;
        enum cmd_status st = CMD_FAILED;
        char *fragment = NULL;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'r': root = optarg; break;
                case 'f': fragment_path = optarg; break;
                case 'S': fputs(kconfig_thaw_fragment(), stdout); return CMD_OK;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return CMD_USAGE;
        }
        rep = malloc(sizeof(*rep));
        if (fragment_path)
                fragment = malloc(UTIL_READ_MAX);
        if (!rep || (fragment_path && !fragment)) {
                fprintf(stderr, "thaw: doctor: out of memory\n");
                goto out;
        }
        if (fragment_path && (r = util_read_text(fragment_path, fragment, UTIL_READ_MAX)) < 0) {
                fprintf(stderr, "thaw: doctor: cannot read %s (%s)\n", fragment_path, strerror(-r));
                st = CMD_USAGE;
                goto out;
        }
        r = doctor_run(root, fragment, rep);
        if (r < 0) {
                fprintf(stderr, "thaw: doctor: cannot check (%s%s)\n", strerror(-r),
                        r == -EINVAL ? ": the kconfig fragment has a line it cannot read" : "");
                goto out;
        }
        for (size_t i = 0; i < rep->n; i++)
                printf("%-8s %s: %s\n", doctor_state_name(rep->items[i].state), rep->items[i].what,
                       rep->items[i].text);
        if (r > 0)
                printf("thaw doctor: %d required item%s missing: thaw cannot hibernate and resume here\n",
                       r, r > 1 ? "s" : "");
        else
                printf("thaw doctor: nothing required is missing\n");
        st = r > 0 ? CMD_FAILED : CMD_OK;
out:
        free(fragment);
        free(rep);
        return st;
}
