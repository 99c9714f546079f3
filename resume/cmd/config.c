/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw config: thaw.conf as kernel arguments or key source types, for dracut's host-only images. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmd/cmd.h"
#include "keysrc.h"
#include "base/log.h"
#include "base/util.h"

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw config [--cmdline | --key-types] [--root DIR]\n\n"
                   "Print the settings of %s (not this boot's kernel command line), for\n"
                   "the dracut module building a host-only initramfs. Exit status 1 if it names no device.\n\n"
                   "      --cmdline    as kernel arguments, rd.thaw.device=... (the default)\n"
                   "      --key-types  the key source types of key=, one per line (fwcfg, tpm2...)\n"
                   "      --root DIR   read DIR/etc/thaw/thaw.conf (dracut --sysroot)\n"
                   "  -h, --help       show this help\n", ARGS_CONF_PATH);
}

static int load(const char *root, struct thaw_args *a)
{
        int r = args_load(root, NULL, ARGS_LOAD_CONF_ONLY, a, log_say, NULL);

        if (r < 0)
                return r;
        if (!*a->device) {
                log_msg(LOG_ERR, "%s%s names no device (device=)", root, ARGS_CONF_PATH);
                return -ENODEV;
        }
        return 0;
}

static int print_key_types(const struct thaw_args *a)
{
        struct keychain chain;
        bool seen[64] = { false };

        if (!*a->key)
                return 0;
        if (keychain_parse(a->key, &chain) < 0) {
                log_msg(LOG_ERR, "key=%s in %s is not a key source chain", a->key, ARGS_CONF_PATH);
                return -EINVAL;
        }
        for (size_t i = 0; i < chain.n; i++) {
                unsigned t = (unsigned)chain.src[i].type;

                if (t < sizeof(seen) && !seen[t]) {
                        seen[t] = true;
                        printf("%s\n", keysrc_type_name(chain.src[i].type));
                }
        }
        return 0;
}

enum cmd_status cmd_config(int argc, char **argv)
{
        static const struct option opts[] = {
                { "cmdline", no_argument, NULL, 'c' },
                { "key-types", no_argument, NULL, 'k' },
                { "root", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "";
        bool types = false;
        struct thaw_args a;
        char line[ARGS_CMDLINE_MAX];
        int c, r;

        log_setup("", true);
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'c': types = false; break;
                case 'k': types = true; break;
                case 'r': root = optarg; break;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return CMD_USAGE;
        }
        r = load(root, &a);
        if (r == 0 && types)
                r = print_key_types(&a);
        else if (r == 0) {
                r = args_format_cmdline(&a, line, sizeof(line));
                if (r == 0)
                        printf("%s\n", line);
        }
        return r < 0 ? CMD_FAILED : CMD_OK;
}
