/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw: encrypted hibernation. main() parses global options and dispatches to a subcommand. */
#include <getopt.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "secret.h"

static const struct {
        const char *name;
        enum cmd_status (*run)(int argc, char **argv);
        const char *summary;
} commands[] = {
        { "setup", cmd_setup, "format a device as LUKS2 encrypted swap for hibernation" },
        { "provision", cmd_provision, "set up or grow thaw's swap as /etc/thaw/provision.conf asks (at boot)" },
        { "enroll", cmd_enroll, "add a key source (tpm2, fwcfg, …) to a thaw device; list or remove them" },
        { "resume", cmd_resume, "(initramfs) unlock the swap, hand a hibernation image to the kernel" },
        { "hibernate", cmd_hibernate, "check that the next boot can resume, then hibernate" },
        { "inspect", cmd_inspect, "describe a hibernation image; can this machine resume it?" },
        { "status", cmd_status, "what thaw resume did with the image at this boot" },
        { "doctor", cmd_doctor, "check the kernel's config and /sys/power for what thaw needs" },
        { "swapin", cmd_swapin, "bring swapped memory back after a resume, within a memory floor" },
        { "config", cmd_config, "print thaw.conf's settings, as thaw reads them (for the dracut module)" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw [--help | --version] COMMAND [OPTIONS]\n\n"
                   "Hibernation to an encrypted swap device that unlocks at boot without a person.\n\n"
                   "Commands:\n");
        for (size_t i = 0; i < N_COMMANDS; i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "\nRun 'thaw COMMAND --help' for its options. See thaw(8).\n");
}

/* The one place a command's status becomes an exit status. */
static int exit_status(enum cmd_status s)
{
        switch (s) {
        case CMD_OK:
                return 0;
        case CMD_USAGE:
                return 2;
        default:
                return 1;
        }
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { 0 },
        };
        int c;

        /*
         * First of all: libcryptsetup copies the key and the volume key into memory we cannot lock
         * or wipe ourselves, so no core dump (and no /proc/PID/mem reader) may ever see this process.
         * A failure here is reported but does not stop the command: the boot must go on.
         */
        if (secret_protect_process() < 0)
                fprintf(stderr, "thaw: cannot make the process non-dumpable: continuing\n");

        /* tpm2-tss logs warnings to stderr by default, and its messages are not thaw's: thaw says
         * itself what failed. Set here, in the program, never in the library, which the token plugin
         * loads into other processes. TSS2_LOG set by a person debugging wins. */
        setenv("TSS2_LOG", "all+none", 0);

        /* '+': stop at the subcommand; its options are its own. */
        while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout);
                        return 0;
                case 'V':
                        printf("thaw %s\n", THAW_VERSION);
                        return 0;
                default:
                        usage(stderr);
                        return exit_status(CMD_USAGE);
                }
        }
        if (optind >= argc) {
                usage(stderr);
                return exit_status(CMD_USAGE);
        }
        for (size_t i = 0; i < N_COMMANDS; i++) {
                if (strcmp(argv[optind], commands[i].name) != 0)
                        continue;
                argv += optind;
                argc -= optind;
                optind = 0; /* restart getopt for the subcommand (GNU: full reinitialisation) */
                return exit_status(commands[i].run(argc, argv));
        }
        fprintf(stderr, "thaw: unknown command '%s'\n\n", argv[optind]);
        usage(stderr);
        return exit_status(CMD_USAGE);
}
