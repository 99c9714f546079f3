/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw resume: the initramfs helper. Never stops the boot: exits 0 except on a bad command line. */
#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "base/log.h"
#include "boot/resume.h"

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw resume [--root DIR] [--cmdline STRING] [--stderr]\n\n"
                   "Unlock the swap device named by rd.thaw.device= with the key chain rd.thaw.key=\n"
                   "(or key= in thaw.conf), and hand a hibernation image on it to the kernel.\n"
                   "Reads /proc/cmdline and /etc/thaw/thaw.conf; the command line wins.\n"
                   "Before the handoff it checks what the kernel will check; rd.thaw.verify=1 also\n"
                   "decompresses the whole image and checks its CRC32. A failed check keeps the image\n"
                   "(rd.thaw.mismatch=keep, the default) or gives the swap back (=discard).\n\n"
                   "  --root DIR        prefix for /proc, /sys, /dev and /etc (tests)\n"
                   "  --cmdline STRING  use STRING instead of /proc/cmdline\n"
                   "  --stderr          log to stderr instead of /dev/kmsg\n"
                   "  -h, --help        show this help\n");
}

enum cmd_status cmd_resume(int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "cmdline", required_argument, NULL, 'c' },
                { "stderr", no_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "", *cmdline = NULL;
        struct thaw_args args;
        struct resume_ctx ctx;
        bool to_stderr = false;
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        root = optarg;
                        break;
                case 'c':
                        cmdline = optarg;
                        break;
                case 's':
                        to_stderr = true;
                        break;
                case 'h':
                        usage(stdout);
                        return CMD_OK;
                default:
                        usage(stderr);
                        return CMD_USAGE;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "thaw resume: unexpected argument '%s'\n", argv[optind]);
                return CMD_USAGE;
        }
        log_setup(root, to_stderr);
        args_load(root, cmdline, 0, &args, log_say, NULL);
        ctx = (struct resume_ctx){
                .root = root,
                .args = &args,
                .ops = &resume_default_ops,
                .say = log_say,
        };
        resume_run(&ctx);
        log_close();
        /* Every runtime outcome has been logged; the boot goes on in all of them. */
        return CMD_OK;
}
