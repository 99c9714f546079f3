/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw inspect: what a hibernation image holds and whether this machine can resume it. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "base/clock.h"
#include "cmd/cmd.h"
#include "base/escape.h"
#include "boot/fresh.h"
#include "image/image.h"
#include "image/imgcheck.h"
#include "image/imgverify.h"
#include "image/inspect.h"
#include "luks.h"
#include "image/machine.h"
#include "ticket.h"
#include "base/util.h"

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw inspect DEV|FILE [--offset N] [--json] [--verify] [--root DIR]\n\n"
                   "Describe the hibernation image on DEV (the opened mapping, or a copy of it) and say\n"
                   "whether this machine's kernel would resume it, and why not. Exit status 0 if it would,\n"
                   "1 if not or if there is no image.\n\n"
                   "  --offset N   the image header's page (resume_offset=); default 0\n"
                   "  --json       print JSON instead of text\n"
                   "  --verify     also decompress every chunk and check the image's CRC32, as the\n"
                   "               kernel's loader will (reads the whole image); on an open mapping\n"
                   "               whose device has an image ticket with the image's MAC (thaw's\n"
                   "               writer), and its key in root's keyring, that MAC too\n"
                   "  --root DIR   prefix for /proc and /sys (tests)\n"
                   "  -h, --help   show this help\n");
}

static void print_text(const char *dev, uint64_t offset, const struct image_info *img,
                       const struct machine_info *m, const struct imgcheck *c, const char *verified)
{
        char flags[96], release[4 * sizeof(m->release)], structure[4 * sizeof(img->why)],
                why[4 * sizeof(c->why)];

        /* The image's and the machine's text, escaped as all text thaw did not write itself. */
        escape_text(release, sizeof(release), *m->release ? m->release : "unknown");
        escape_text(structure, sizeof(structure), img->why);
        escape_text(why, sizeof(why), c->result == IMGCHECK_OK ? "" : c->why);
        inspect_flag_names(img->flags, flags, sizeof(flags));
        printf("%s: hibernation image at offset %" PRIu64 "\n", dev, offset);
        printf("  flags:          %#" PRIx32 " (%s)\n", img->flags, flags);
        printf("  compression:    %s\n", image_compression(img->flags));
        printf("  pages:          %" PRIu64 " (%" PRIu64 " data), %llu MiB uncompressed\n", img->pages,
               img->image_pages, imgcheck_mib(img->pages));
        printf("  stored:         %" PRIu64 " pages listed by %" PRIu64 " map pages\n", img->entries,
               img->map_pages);
        printf("  memory:         made with %llu MiB (%" PRIu64 " pages)", imgcheck_mib(img->num_physpages),
               img->num_physpages);
        if (m->have_mem)
                printf(", this machine has %llu MiB (%" PRIu64 " pages)", imgcheck_mib(m->present_pages),
                       m->present_pages);
        printf("\n  e820 checksum:  image %08" PRIx32 ", this machine ", img->e820_crc);
        if (m->have_e820)
                printf("%08" PRIx32 " (%u entries)\n", m->e820_crc, m->e820_entries);
        else
                printf("unknown\n");
        if (img->flags & SWSUSP_SF_HW_SIG)
                printf("  hw signature:   %08" PRIx32 "\n", img->hw_sig);
        printf("  kernel:         %s\n", release);
        printf("  structure:      %s\n", structure);
        if (*verified)
                printf("  verified:       %s\n", verified);
        printf("  resumable here: %s%s\n", c->result == IMGCHECK_OK ? "yes" : "no: ", why);
}

/*
 * The ticket of the LUKS2 device behind the mapping dev (/dev/mapper/NAME) and its key from root's
 * keyring, for the image's MAC: 1 with both, 0 (note says why) if there is none to check.
 */
static int ticket_of(const char *dev, struct ticket *t, struct secret **key, char *note, size_t size)
{
        const char *name = strncmp(dev, "/dev/mapper/", 12) == 0 ? dev + 12 : NULL;
        char luks[PATH_MAX], uuid[64];

        note[0] = '\0';
        if (!name || luks_active_device(name, luks, sizeof(luks)) < 0 || ticket_read(luks, t, NULL, 0) < 0 ||
            !t->has_image_mac)
                return 0;
        if (luks_uuid(luks, uuid, sizeof(uuid)) < 0 || ticket_key_load(uuid, key) < 0) {
                snprintf(note, size, "; the image's MAC in its ticket not checked (no ticket key of %.160s in root's keyring)",
                         luks);
                return 0;
        }
        return 1;
}

/* The full verification, its verdict folded into c when everything else passed. */
static struct json_object *verify(const char *dev, const struct image_info *img, struct imgcheck *c,
                                  char *line, size_t size)
{
        int64_t t0 = clock_now_ms();
        struct json_object *o = NULL;
        struct secret *key = NULL;
        struct imgverify v;
        struct ticket t;
        char why[sizeof(v.why) + 256], note[256];
        int have = ticket_of(dev, &t, &key, note, sizeof(note));
        int r = img->defect == IMAGE_OK ? fresh_verify_image(dev, img, have ? &t : NULL, key, &v) : -EINVAL;
        int64_t ms = clock_now_ms() - t0;
        bool ok = r == 0 && v.result == IMGVERIFY_OK;

        if (r == -EINVAL)
                snprintf(why, sizeof(why), "not attempted: the image's structure is damaged");
        else if (r < 0)
                snprintf(why, sizeof(why), "the image cannot be read (%s)", strerror(-r));
        else
                snprintf(why, sizeof(why), "%s%s", v.why, note);
        secret_free(key);
        if (!ok && c->result == IMGCHECK_OK) {
                c->result = IMGCHECK_DAMAGED;
                snprintf(c->why, sizeof(c->why), "image data is damaged: %.300s", why);
        }
        snprintf(line, size, "%s%.300s (%" PRId64 " ms)", ok ? "yes: " : "no: ", why, ms);
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "ok", json_object_new_boolean(ok));
        json_object_object_add(o, "result", json_object_new_string(why));
        json_object_object_add(o, "chunks", r == 0 ? json_object_new_int64((int64_t)v.chunks) : NULL);
        json_object_object_add(o, "pages", r == 0 ? json_object_new_int64((int64_t)v.pages) : NULL);
        json_object_object_add(o, "ms", json_object_new_int64(ms));
        return o;
}

/*
 * DEV is a LUKS2 container: its header against thaw's policy (the profile thaw.conf implies) and,
 * when it is thaw.conf's device, the pinned fingerprint. A refused header is shown with why; no
 * key is tried, nothing is unlocked.
 */
static enum cmd_status inspect_header(const char *root, const char *dev, bool json)
{
        char fp[LUKS_FP_SIZE] = "", why[LUKS_POLICY_WHY_MAX] = "", uuid[64] = "", spec[80];
        struct luks_policy p = { .profile = LUKS_PROFILE_THAW };
        struct thaw_args args;
        int r;

        args_load(root, NULL, 0, &args, NULL, NULL);
        if (args.offset)
                p.profile = LUKS_PROFILE_FOREIGN;
        if (luks_uuid(dev, uuid, sizeof(uuid)) == 0 && snprintf(spec, sizeof(spec), "UUID=%s", uuid) <
            (int)sizeof(spec) && strcmp(spec, args.device) == 0)
                p.pin = args.header;
        r = luks_header_check(dev, &p, fp, why, sizeof(why));
        if (r < 0 && !*why)
                snprintf(why, sizeof(why), "cannot read it (%s)", strerror(-r));
        if (json) {
                struct json_object *o = json_object_new_object(), *h = json_object_new_object();

                if (!o || !h) {
                        json_object_put(o);
                        json_object_put(h);
                        return CMD_FAILED;
                }
                json_object_object_add(h, "uuid", json_object_new_string(uuid));
                json_object_object_add(h, "fingerprint", *fp ? json_object_new_string(fp) : NULL);
                json_object_object_add(h, "profile", json_object_new_string(p.profile == LUKS_PROFILE_FOREIGN ?
                                                                           "foreign" : "thaw"));
                json_object_object_add(h, "pinned", p.pin && *p.pin ? json_object_new_string(p.pin) : NULL);
                json_object_object_add(h, "accepted", json_object_new_boolean(r == 0));
                json_object_object_add(h, "reason", r == 0 ? NULL : json_object_new_string(why));
                json_object_object_add(o, "luks2", h);
                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
                json_object_put(o);
        } else {
                /* Both are the header's text (an attacker may have written them): escaped, as all such text. */
                char uuid_shown[4 * sizeof(uuid)], why_shown[4 * sizeof(why)];

                escape_text(uuid_shown, sizeof(uuid_shown), uuid);
                escape_text(why_shown, sizeof(why_shown), why);
                printf("%s: LUKS2 container (UUID %s)\n", dev, uuid_shown);
                printf("  fingerprint:    %s\n", *fp ? fp : "unknown");
                printf("  pinned:         %s\n", p.pin && *p.pin ? p.pin : "no (not thaw.conf's device, or no header=)");
                printf("  header policy:  %s%s (%s profile)\n", r == 0 ? "accepted" : "refused: ", r == 0 ? "" : why_shown,
                       p.profile == LUKS_PROFILE_FOREIGN ? "foreign" : "thaw");
        }
        return r == 0 ? CMD_OK : CMD_FAILED;
}

static enum cmd_status inspect(const char *root, const char *dev, uint64_t offset, bool json,
                               bool full)
{
        struct json_object *vj = NULL;
        char verified[384] = "";
        struct thaw_args args;
        struct machine_info m;
        struct image_info img;
        struct imgcheck c;
        int r;

        /* A LUKS2 container: what can be seen without a key is its header. */
        if (luks_probe(dev) == 1)
                return inspect_header(root, dev, json);
        r = image_read(dev, offset, &img);
        if (r < 0) {
                fprintf(stderr, "thaw inspect: cannot read %s at offset %" PRIu64 ": %s\n", dev, offset,
                        strerror(-r));
                return CMD_FAILED;
        }
        if (img.defect == IMAGE_NOT_IMAGE) {
                if (json)
                        printf("{ \"image\": null, \"resumable\": false, \"reason\": \"%s\" }\n", img.why);
                else
                        printf("%s: %s at offset %" PRIu64 "\n", dev, img.why, offset);
                return CMD_FAILED;
        }
        args_load(root, NULL, 0, &args, NULL, NULL); /* acpi_sleep=s4_hwsig */
        machine_read(root, &m);
        imgcheck_run(&img, &m, args.s4_hwsig, &c);
        if (json) {
                struct json_object *o;

                if (full)
                        vj = verify(dev, &img, &c, verified, sizeof(verified));
                o = inspect_json(&img, &m, &c);
                if (!o) {
                        json_object_put(vj);
                        fprintf(stderr, "thaw inspect: out of memory\n");
                        return CMD_FAILED;
                }
                if (full)
                        json_object_object_add(json_object_object_get(o, "image"), "verify", vj);
                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
                json_object_put(o);
        } else {
                if (full)
                        json_object_put(verify(dev, &img, &c, verified, sizeof(verified)));
                print_text(dev, offset, &img, &m, &c, verified);
        }
        return c.result == IMGCHECK_OK ? CMD_OK : CMD_FAILED;
}

enum cmd_status cmd_inspect(int argc, char **argv)
{
        static const struct option opts[] = {
                { "offset", required_argument, NULL, 'o' },
                { "json", no_argument, NULL, 'j' },
                { "verify", no_argument, NULL, 'v' },
                { "root", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *root = "";
        uint64_t offset = 0;
        bool json = false, full = false;
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'o':
                        if (util_parse_u64(optarg, ARGS_OFFSET_MAX, &offset) < 0) {
                                fprintf(stderr, "thaw inspect: --offset %s is not a page number\n", optarg);
                                return CMD_USAGE;
                        }
                        break;
                case 'j':
                        json = true;
                        break;
                case 'v':
                        full = true;
                        break;
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
        if (optind + 1 != argc) {
                usage(stderr);
                return CMD_USAGE;
        }
        return inspect(root, argv[optind], offset, json, full);
}
