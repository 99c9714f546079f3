/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw provision: set up or grow thaw's swap as /etc/thaw/provision.conf asks, once per boot. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "cmd/cmd.h"
#include "dev/dm.h"
#include "provision/provconf.h"
#include "provision/provplan.h"
#include "system/power.h"

/* thaw's swap first: no other swap outranks it (see thaw hibernate's checks). */
#define PROVISION_PRIORITY 32767
#define DRACUT "/usr/bin/dracut"

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw provision [--dry-run] [--no-initramfs] [--root DIR]\n\n"
                   "Set up thaw's swap as " PROVCONF_PATH " asks (thaw-provision.service runs this\n"
                   "early at every boot; see thaw-provision.conf(5)): on a first boot thaw setup with its\n"
                   "device= or swapfile=, key= and size= (key='s tpm2 sources left out on an instance\n"
                   "with no TPM2); on a boot with more memory than the swap file\n"
                   "takes, make it again, larger; never while a hibernation image is on it. After a\n"
                   "change it rebuilds the running kernel's initramfs (dracut --force), which carries\n"
                   "thaw.conf, syncs, and turns the swap on with the highest priority. A boot with\n"
                   "nothing to change changes nothing. It prints the plan first: nothing to change,\n"
                   "first setup, grow the swap file, correct thaw.conf's offset, or refused and why.\n"
                   "Exit status 0: done or nothing to do (also without provision.conf); 1: refused\n"
                   "or failed. A swap set up at an earlier boot that is too small and cannot grow\n"
                   "(a partition, a full root) is refused and turned on all the same.\n\n"
                   "      --dry-run       only print the plan\n"
                   "      --no-initramfs  do not rebuild the initramfs after a change\n"
                   "                      (" ARGS_STALE_PATH " stays, and thaw hibernate\n"
                   "                      refuses until it is rebuilt)\n"
                   "      --root DIR      prefix for /proc, /sys, /dev and /etc (tests; nothing is\n"
                   "                      turned on, no initramfs is built)\n"
                   "  -h, --help          show this help\n");
}

/* dracut --force for the running kernel: the new thaw.conf goes into the initramfs. */
static int rebuild_initramfs(void)
{
        char *argv[] = { (char *)DRACUT, (char *)"--force", NULL };
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execv(DRACUT, argv);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EIO;
        return 0;
}

/*
 * Before thaw.conf changes: ARGS_STALE_PATH, on disk. Whatever stops the rebuild after (dracut
 * failing, a power cut, --no-initramfs), the next boot's plan rebuilds it, and thaw hibernate
 * refuses until then: an image the next boot's initramfs cannot find would be a session lost.
 */
static int mark_stale(const char *root)
{
        char path[PATH_MAX];
        int r = util_path(path, sizeof(path), root, ARGS_STALE_PATH);

        if (r == 0)
                r = util_write_file(path, "thaw.conf changed; the initramfs not rebuilt since\n", 0644);
        if (r == 0)
                r = util_sync_dir_of(path);
        if (r < 0)
                log_msg(LOG_ERR, "cannot write %s (%s): nothing changed", path, strerror(-r));
        return r;
}

static void clear_stale(void)
{
        if (unlink(ARGS_STALE_PATH) < 0 && errno != ENOENT)
                log_msg(LOG_WARNING, "cannot remove %s (%s): thaw hibernate refuses until it is removed",
                        ARGS_STALE_PATH, strerror(errno));
        else
                (void)util_sync_dir_of(ARGS_STALE_PATH);
}

/*
 * The running kernel's initramfs, rebuilt when p asks (the marker removed after). Only that one:
 * an image can be resumed only by the kernel that made it. CMD_FAILED if dracut failed.
 */
static enum cmd_status initramfs_step(const char *root, bool initramfs, bool wanted)
{
        int r;

        if (!wanted)
                return CMD_OK;
        if (*root) {
                log_msg(LOG_NOTICE, "with --root: no initramfs is built; %s stays", ARGS_STALE_PATH);
                return CMD_OK;
        }
        if (!initramfs) {
                log_msg(LOG_WARNING, "--no-initramfs: the initramfs does not carry the current %s; %s stays, "
                        "thaw hibernate refuses, and the next thaw provision rebuilds it", ARGS_CONF_PATH,
                        ARGS_STALE_PATH);
                return CMD_OK;
        }
        r = rebuild_initramfs();
        if (r < 0) {
                log_msg(LOG_ERR, "cannot rebuild the initramfs with %s --force (%s): the next boot does not "
                        "know thaw's swap and will not resume; thaw hibernate refuses until the next thaw "
                        "provision rebuilds it", DRACUT, r == -ENOENT ? "dracut is not installed" :
                        strerror(-r));
                sync();
                return CMD_FAILED;
        }
        sync();
        clear_stale();
        log_msg(LOG_NOTICE, "rebuilt the running kernel's initramfs (%s --force): it carries the current "
                "thaw.conf", DRACUT);
        return CMD_OK;
}

/* After a change: the initramfs, everything on disk before anyone may hibernate, the swap on. */
static enum cmd_status settle(const char *root, bool initramfs, const char *swap)
{
        if (*root) {
                log_msg(LOG_NOTICE, "with --root: no initramfs is built and %s is not turned on", swap);
                return CMD_OK;
        }
        if (initramfs_step(root, initramfs, true) != CMD_OK)
                return CMD_FAILED;
        sync();
        if (swapon(swap, SWAP_FLAG_PREFER | (PROVISION_PRIORITY << SWAP_FLAG_PRIO_SHIFT)) < 0 && errno != EBUSY) {
                log_msg(LOG_ERR, "cannot turn on %s as swap (%s)", swap, strerror(errno));
                return CMD_FAILED;
        }
        log_msg(LOG_NOTICE, "%s is swap, priority %d", swap, PROVISION_PRIORITY);
        return CMD_OK;
}

/* thaw.conf with offset=N instead of its offset= line; every other line as it was. */
static int rewrite_offset(const char *root, uint64_t offset)
{
        char path[PATH_MAX], *in = malloc(ARGS_CONF_MAX + 2), *out = malloc(ARGS_CONF_MAX + 64);
        size_t used = 0;
        int r, done = 0;

        r = in && out ? util_path(path, sizeof(path), root, ARGS_CONF_PATH) : -ENOMEM;
        if (r == 0)
                r = util_read_text(path, in, ARGS_CONF_MAX + 2);
        for (char *line = in, *next; r >= 0 && line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (strncmp(line, "offset=", 7) == 0 && !done++)
                        used += (size_t)snprintf(out + used, ARGS_CONF_MAX + 64 - used, "offset=%" PRIu64 "\n",
                                                 offset);
                else if (strncmp(line, "offset=", 7) != 0)
                        used += (size_t)snprintf(out + used, ARGS_CONF_MAX + 64 - used, "%s\n", line);
                if (used >= ARGS_CONF_MAX)
                        r = -EFBIG;
        }
        if (r >= 0 && !done)
                r = -ENODATA; /* a swap file's thaw.conf always has offset= */
        if (r >= 0)
                r = util_write_file(path, out, 0644);
        free(in);
        free(out);
        return r;
}

/* A grow that failed after swapoff: the old file back on, so this boot keeps its swap. */
static void restore(const char *root, const char *path, bool was_active)
{
        if (!was_active || *root)
                return;
        if (swapon(path, SWAP_FLAG_PREFER | (PROVISION_PRIORITY << SWAP_FLAG_PRIO_SHIFT)) < 0)
                log_msg(LOG_WARNING, "cannot turn %s on again (%s)", path, strerror(errno));
}

static int remove_leftover(const char *path, const char *what)
{
        if (unlink(path) < 0 && errno != ENOENT) {
                int r = -errno;

                log_msg(LOG_ERR, "cannot remove %s, %s (%s): nothing changed", path, what, strerror(-r));
                return r;
        }
        log_msg(LOG_NOTICE, "removed %s, %s", path, what);
        return 0;
}

/* Make the swap file again at the new size, beside the old one, then in its place; then thaw.conf. */
static enum cmd_status grow(const char *root, const struct provconf *c, const struct provplan *p,
                            const struct provstate *s, bool initramfs)
{
        char path[PATH_MAX], fresh[PATH_MAX + 16];
        uint64_t offset;
        int r;

        if (util_path(path, sizeof(path), root, c->swapfile) < 0 ||
            snprintf(fresh, sizeof(fresh), "%s" PROVPLAN_FRESH, path) >= (int)sizeof(fresh))
                return CMD_FAILED;
        /* Its room counted as free in the plan: gone before the new file is made. */
        if (p->remove_fresh && remove_leftover(fresh, "which a stopped grow left") < 0)
                return CMD_FAILED;
        if (s->active && !*root && swapoff(path) < 0) {
                log_msg(LOG_ERR, "cannot swapoff %s to grow it (%s): it stays as it is", path, strerror(errno));
                return CMD_FAILED;
        }
        r = cmd_setup_make_swapfile(fresh, p->want, &offset);
        if (r < 0) {
                restore(root, path, s->active);
                return CMD_FAILED;
        }
        /*
         * The new file takes the name, then thaw.conf its offset. A power cut between the two leaves
         * thaw.conf pointing at freed blocks: the next boot finds no image there, and thaw provision
         * then corrects the offset (PROVPLAN_REPOINT).
         */
        if (rename(fresh, path) < 0) {
                log_msg(LOG_ERR, "cannot put %s in place of %s (%s): removed it", fresh, path, strerror(errno));
                (void)unlink(fresh);
                restore(root, path, s->active);
                return CMD_FAILED;
        }
        /* The rename on disk before thaw.conf names the new offset, as the first setup does. */
        r = util_sync_dir_of(path);
        if (r < 0)
                log_msg(LOG_WARNING, "cannot sync the directory of %s (%s): a power cut now may leave the "
                        "old name, which the next thaw provision puts right", path, strerror(-r));
        r = rewrite_offset(root, offset);
        if (r < 0) {
                log_msg(LOG_ERR, "%s is %" PRIu64 " MiB now, but writing offset=%" PRIu64 " to %s failed (%s): "
                        "the next thaw provision corrects it", path, p->want >> 20, offset, ARGS_CONF_PATH,
                        strerror(-r));
                restore(root, path, s->active); /* the new file: this boot keeps its swap */
                return CMD_FAILED;
        }
        log_msg(LOG_NOTICE, "grew %s to %" PRIu64 " MiB; %s says offset=%" PRIu64, path, p->want >> 20,
                ARGS_CONF_PATH, offset);
        return settle(root, initramfs, path);
}

static enum cmd_status first(const char *root, const struct provconf *c, const struct provplan *p,
                             const struct provstate *s, bool initramfs)
{
        struct cmd_setup_req req = { .root = root, .key = p->key, .name = c->name };
        char path[PATH_MAX], fresh[PATH_MAX + 16], mapper[DM_MAPPER_PATH_MAX];
        enum cmd_status st;

        if (*c->swapfile) {
                if (util_path(path, sizeof(path), root, c->swapfile) < 0 ||
                    snprintf(fresh, sizeof(fresh), "%s" PROVPLAN_FRESH, path) >= (int)sizeof(fresh))
                        return CMD_FAILED;
                if (p->remove_fresh && remove_leftover(fresh, "which a stopped setup left") < 0)
                        return CMD_FAILED;
                if (p->replace_leftover && remove_leftover(path, "a plain swap file with no image") < 0)
                        return CMD_FAILED;
                /*
                 * Security, said because thaw cannot fix it: the ticket key comes from the root's
                 * volume key, which every instance of one image shares unless each re-encrypted it.
                 */
                log_msg(LOG_WARNING, "the swap file's ticket key is derived from the root's LUKS2 volume key, "
                        "which every instance started from this image shares unless each got its own "
                        "(cryptsetup reencrypt of the root at first boot, before thaw provision); thaw does "
                        "not re-encrypt it (see thaw-provision.conf(5))");
                /* Made under fresh, renamed to path when complete (see cmd_setup_run()). */
                req.swapfile = fresh;
                req.rename_to = path;
                req.size = p->want;
                req.unlock = *c->unlock ? c->unlock : NULL;
                req.name = NULL;
        } else
                req.device = s->device; /* resolved once, in provplan_observe() */
        if (p->tpm2_left_out)
                log_msg(LOG_WARNING, "this instance has no TPM2: key=%s is enrolled without its tpm2 sources "
                        "(key=%s), and so without the TPM2's anti-rollback counter; an instance type with "
                        "a TPM2 later does not change that (thaw enroll adds tpm2 then)", c->key, p->key);
        st = cmd_setup_run(&req);
        if (st != CMD_OK)
                return st;
        if (*c->swapfile)
                return settle(root, initramfs, path);
        if (dm_mapper_path(c->name, mapper, sizeof(mapper)) < 0)
                return CMD_FAILED;
        return settle(root, initramfs, mapper);
}

/*
 * The swap holds an image this boot did not resume: it stays swap-less at every boot until the
 * image is resumed or given up, so say how, and fail (the unit shows it).
 */
static enum cmd_status kept_image(const char *swap)
{
        log_msg(LOG_WARNING, "%s holds a hibernation image this boot did not resume (thaw status says why): "
                "this system has no thaw swap until it is resumed (start the VM as it was made) or given up "
                "(boot once with rd.thaw.mismatch=discard on the kernel command line)", swap);
        return CMD_FAILED;
}

/*
 * Nothing to change: thaw's swap on, at the highest priority, if it is not yet (no fstab line is
 * needed). Not a swap that holds an image: the kernel would refuse it anyway.
 */
static enum cmd_status ensure_on(const char *root, const struct provconf *c, const struct provstate *s)
{
        char mapper[DM_MAPPER_PATH_MAX];
        const char *swap = c->swapfile;

        if (*root || (s->kind_known && s->kind == SWSUSP_IMAGE))
                return CMD_OK;
        if (!*swap) {
                if (dm_mapper_path(c->name, mapper, sizeof(mapper)) < 0 || !util_exists(mapper))
                        return CMD_OK; /* not open at this boot: thaw resume did not open it */
                swap = mapper;
        }
        if (swapon(swap, SWAP_FLAG_PREFER | (PROVISION_PRIORITY << SWAP_FLAG_PRIO_SHIFT)) == 0)
                log_msg(LOG_NOTICE, "%s is swap, priority %d", swap, PROVISION_PRIORITY);
        else if (errno != EBUSY)
                log_msg(LOG_WARNING, "cannot turn on %s as swap (%s)", swap, strerror(errno));
        return CMD_OK;
}

enum cmd_status cmd_provision(int argc, char **argv)
{
        static const struct option opts[] = {
                { "dry-run", no_argument, NULL, 'D' },
                { "no-initramfs", no_argument, NULL, 'I' },
                { "root", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "";
        bool dry_run = false, initramfs = true;
        char why[PROVCONF_WHY_MAX] = "";
        struct provconf c;
        struct provstate s;
        struct provplan p;
        enum cmd_status st;
        int64_t t0 = clock_now_ms();
        int ch, r;

        log_setup("", true);
        while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (ch) {
                case 'D': dry_run = true; break;
                case 'I': initramfs = false; break;
                case 'r': root = optarg; break;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return CMD_USAGE;
        }
        r = provconf_load(root, &c, why, sizeof(why));
        if (r == -ENOENT) {
                log_msg(LOG_INFO, "no %s: nothing to provision", PROVCONF_PATH);
                return CMD_OK;
        }
        if (r < 0) {
                log_msg(LOG_ERR, "%s: %s; nothing changed", PROVCONF_PATH, why);
                return CMD_FAILED;
        }
        r = provplan_observe(root, &c, &s);
        if (r == 0)
                r = provplan_decide(&c, &s, &p);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot make a plan (%s: %s); nothing changed", r == -ERANGE ?
                        "the size rule gives more than 2^62 bytes" : "reading /proc/meminfo", strerror(-r));
                return CMD_FAILED;
        }
        printf("%s: %s\n", provplan_action_name(p.action), p.why);
        if (p.rebuild_initramfs && !initramfs)
                printf("initramfs: not rebuilt (--no-initramfs): %s stays, and thaw hibernate refuses until "
                       "a thaw provision without it, or dracut --force, rebuilds it\n", ARGS_STALE_PATH);
        fflush(stdout);
        switch (p.action) {
        case PROVPLAN_NOTHING:
                log_msg(LOG_INFO, "nothing to change (%" PRId64 " ms)", clock_now_ms() - t0);
                if (dry_run)
                        return CMD_OK;
                st = initramfs_step(root, initramfs, p.rebuild_initramfs);
                if (st == CMD_OK && s.kind_known && s.kind == SWSUSP_IMAGE)
                        st = kept_image(*c.swapfile ? c.swapfile : c.device);
                return st != CMD_OK ? st : ensure_on(root, &c, &s);
        case PROVPLAN_FIRST:
        case PROVPLAN_GROW:
        case PROVPLAN_REPOINT:
                break;
        default:
                log_msg(LOG_ERR, "%s; nothing changed", p.why);
                if (p.action == PROVPLAN_REFUSE_IMAGE)
                        kept_image(*c.swapfile ? c.swapfile : c.device);
                /*
                 * Smaller than the rule asks, and no room to grow: still thaw's swap, set up and
                 * sound, so it is on as at any boot. Whether an image fits is thaw hibernate's
                 * check when a hibernation is asked for ("not enough free swap").
                 */
                if (p.action == PROVPLAN_REFUSE_ROOM && s.configured && !dry_run) {
                        /* A change an earlier boot made and did not carry into the initramfs yet. */
                        (void)initramfs_step(root, initramfs, s.initramfs_stale);
                        ensure_on(root, &c, &s);
                }
                return CMD_FAILED;
        }
        if (dry_run)
                return CMD_OK;
        if (mark_stale(root) < 0)
                return CMD_FAILED;
        if (p.action == PROVPLAN_FIRST)
                return first(root, &c, &p, &s, initramfs);
        if (p.action == PROVPLAN_GROW)
                return grow(root, &c, &p, &s, initramfs);
        r = rewrite_offset(root, p.offset);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot write offset=%" PRIu64 " to %s (%s)", p.offset, ARGS_CONF_PATH,
                        strerror(-r));
                return CMD_FAILED;
        }
        log_msg(LOG_NOTICE, "wrote offset=%" PRIu64 " to %s", p.offset, ARGS_CONF_PATH);
        return settle(root, initramfs, c.swapfile);
}
