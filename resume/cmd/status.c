/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw status: what thaw resume did at this boot, from /run/thaw/state, in words. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmd/cmd.h"
#include "base/escape.h"
#include "boot/state.h"
#include "boot/fresh.h"
#include "luks.h"
#include "ticket.h"

/* LABEL: TEXT, TEXT escaped: the state file quotes the device and the header's own text. */
static void say(const char *label, const char *text)
{
        char safe[4 * sizeof(((struct state *)0)->message) + 1];

        escape_text(safe, sizeof(safe), text);
        printf("%s: %s\n", label, safe);
}

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw status [--root DIR]\n\n"
                   "Say what thaw resume did with the hibernation image at this boot (from %s).\n\n"
                   "  --root DIR   prefix for /run (tests)\n"
                   "  -h, --help   show this help\n", STATE_PATH);
}

static const char *summary(const char *outcome)
{
        static const struct {
                const char *outcome, *words;
        } table[] = {
                { "mismatch-kept", "an image this machine cannot resume was kept; the swap is not in use" },
                { "mismatch-discarded", "an image this machine cannot resume was discarded "
                                        "(rd.thaw.mismatch=discard); the swap is ready" },
                { "stale", "an image that could not be resumed safely was discarded (its ticket: a boot "
                           "went on without it, it was resumed already, its file systems changed, or it is "
                           "not authentic); the swap is ready" },
                { "no-image", "there was no image; the swap is ready" },
                { "consumed", "the kernel took the image but did not restore it; the swap is ready" },
                { "kept", "the kernel did not look at the image; it was kept" },
                { "unavailable", "hibernation is unavailable on this boot; the image was kept" },
                { "offset-mismatch", "resume_offset= does not point at the image; it was kept" },
                { "noresume", "resume was turned off on the command line; nothing was unlocked" },
                { "disabled", "thaw was turned off (rd.thaw=0)" },
                { "no-key", "no key source unlocked the device; any image on it was kept" },
                { "no-key-source", "no key source is configured; any image was kept" },
                { "bad-mapping", "the mapping was not encrypted as its LUKS2 header says; it was closed "
                                 "unread" },
                { "bad-header", "the LUKS2 header is not one thaw wrote (or not the pinned one); no key "
                                "was tried, nothing was unlocked" },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcmp(outcome, table[i].outcome) == 0)
                        return table[i].words;
        return "no resume";
}

/*
 * The ticket on the swap device now (ticket.h), when its mapping is open: what the next boot would
 * find, and how strong its file-system check is. Nothing if there is no mapping or no ticket.
 */
static void live_ticket(const char *root)
{
        char dev[4096], made[40], when[40], line[768];
        struct thaw_args a;
        struct ticket t;

        args_load(root, NULL, 0, &a, NULL, NULL);
        if (*root || luks_active_device(a.name, dev, sizeof(dev)) < 0 || ticket_read(dev, &t, NULL, 0) < 0)
                return;
        fresh_time(t.time, made, sizeof(made));
        fresh_time(t.state_time, when, sizeof(when));
        snprintf(line, sizeof(line), "on %.256s: image of %s, written by %s (%s), %s%s%s%s%s", dev, made,
                 t.writer == TICKET_WRITER_THAW ? "thaw" : "the kernel",
                 t.writer == TICKET_WRITER_THAW ? "every file-system marker is checked at boot" :
                                                  "only mount count and time are checked at boot",
                 ticket_state_name(t.state), t.state == TICKET_FRESH ? "" : " at ",
                 t.state == TICKET_FRESH ? "" : when, *t.state_why ? ": " : "", t.state_why);
        say("Ticket now", line);
}

enum cmd_status cmd_status(int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "";
        struct state s;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        root = optarg;
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
                usage(stderr);
                return CMD_USAGE;
        }
        r = state_read(root, &s);
        if (r < 0) {
                printf("thaw resume left no record at this boot (%s: %s): it did not run, or the "
                       "system was resumed from an image\n", STATE_PATH, strerror(-r));
                return CMD_FAILED;
        }
        printf("At boot, thaw resume: %s.\n", summary(s.outcome));
        if (*s.device)
                say("Device", s.device);
        if (*s.reason)
                say("Failed check", s.reason);
        say("Details", s.message);
        if (*s.ticket)
                say("Image ticket", s.ticket);
        live_ticket(root);
        return CMD_OK;
}
