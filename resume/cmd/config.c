/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw config: thaw.conf as kernel arguments, its key source types or one setting, for the dracut module. */
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
        fprintf(f, "Usage: thaw config [--cmdline | --key-types | --get NAME] [--root DIR]\n\n"
                   "Print the settings of %s (not this boot's kernel command line), for\n"
                   "the dracut module. Exit status 1 if it cannot be read or names no device (--get:\n"
                   "if NAME has no value).\n\n"
                   "      --cmdline    as kernel arguments, rd.thaw.device=... (the default)\n"
                   "      --key-types  the key source types of key=, one per line (fwcfg, tpm2...),\n"
                   "                   even when it names no device\n"
                   "      --get NAME   the value of NAME (device, key, timeout...) as thaw reads it,\n"
                   "                   its default if unset; nothing if it has none\n"
                   "      --root DIR   read DIR/etc/thaw/thaw.conf (dracut --sysroot)\n"
                   "  -h, --help       show this help\n", ARGS_CONF_PATH);
}

static int no_device(const char *root)
{
        log_msg(LOG_ERR, "%s%s names no device (device=)", root, ARGS_CONF_PATH);
        return -ENODEV;
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

static int print_cmdline(const struct thaw_args *a)
{
        char line[ARGS_CMDLINE_MAX];
        int r = args_format_cmdline(a, line, sizeof(line));

        if (r == 0)
                printf("%s\n", line);
        return r;
}

/* Setting NAME; -ENODATA, silently, when it has none: a script asks, the exit status answers. */
static int print_setting(const struct thaw_args *a, const char *name)
{
        char value[ARGS_CMDLINE_MAX];
        int r = args_get(a, name, value, sizeof(value));

        if (r < 0) {
                log_msg(LOG_ERR, "cannot print %s= of %s (%s)", name, ARGS_CONF_PATH, strerror(-r));
                return r;
        }
        if (r == 0)
                return -ENODATA;
        printf("%s\n", value);
        return 0;
}

enum cmd_status cmd_config(int argc, char **argv)
{
        static const struct option opts[] = {
                { "cmdline", no_argument, NULL, 'c' },
                { "key-types", no_argument, NULL, 'k' },
                { "get", required_argument, NULL, 'g' },
                { "root", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        enum { CMDLINE, KEY_TYPES, GET } mode = CMDLINE;
        const char *root = "", *name = NULL;
        struct thaw_args a;
        char probe[32]; /* enough for every default value */
        int c, r;

        log_setup("", true);
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'c': mode = CMDLINE; break;
                case 'k': mode = KEY_TYPES; break;
                case 'g': mode = GET; name = optarg; break;
                case 'r': root = optarg; break;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return CMD_USAGE;
        }
        /* An unknown NAME is a usage error, whatever thaw.conf holds. */
        args_init(&a);
        if (mode == GET && args_get(&a, name, probe, sizeof(probe)) == -ENOENT) {
                log_msg(LOG_ERR, "--get %s: thaw.conf has no such setting (see thaw.conf(5))", name);
                return CMD_USAGE;
        }
        r = args_load(root, NULL, ARGS_LOAD_CONF_ONLY, &a, log_say, NULL);
        if (r == 0 && mode == GET)
                r = print_setting(&a, name);
        else if (r == 0) {
                /* The types even without a device: the boot may take the device from its command line
                 * and the chain from here, and the initramfs must hold what that chain needs. */
                if (mode == KEY_TYPES)
                        r = print_key_types(&a);
                if (r == 0 && !*a.device)
                        r = no_device(root);
                if (r == 0 && mode == CMDLINE)
                        r = print_cmdline(&a);
        }
        return r < 0 ? CMD_FAILED : CMD_OK;
}
