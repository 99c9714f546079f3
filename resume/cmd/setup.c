/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw setup: turn a device into LUKS2 encrypted swap that thaw resume can unlock unattended. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "args.h"
#include "base/clock.h"
#include "cmd/cmd.h"
#include "dev/devcheck.h"
#include "dev/dm.h"
#include "imds_url.h"
#include "dev/fsdev.h"
#include "keysrc.h"
#include "base/log.h"
#include "luks.h"
#include "secret.h"
#include "system/swap.h"
#include "system/swapfile.h"
#include "image/swsusp.h"
#include "tpm2_counter.h"
#include "tpm2_token.h"
#include "base/util.h"

#define LUKS_LABEL_MAX 47   /* LUKS2 header label field is 48 bytes */
#define FETCH_WAIT_MS 5000  /* setup runs on a booted system: a source is there or soon is */
#define MAPPER_WAIT_MS 5000

struct setup_opts {
        const char *device;
        const char *key;
        const char *name;
        const char *label;
        const char *root;
        char allow_url[KEYSRC_ALLOW_MAX]; /* --allow-url, comma-joined */
        const char *swapfile;   /* --swapfile: a file on a LUKS2 root instead of a device */
        const char *unlock;     /* --unlock: sources of a key the root's container takes already */
        const char *rename_to;  /* thaw provision: swapfile is a temporary name, this the final one */
        uint64_t size;          /* --size, bytes */
        bool yes;
        bool format_only;
        bool integrity;
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw setup --device DEV --key SRC[,SRC...] [--name NAME] [--label L] [--yes]\n"
                   "                  [--format-only] [--allow-url http://HOST[:PORT]]... [--integrity]\n"
                   "                  [--root DIR]\n"
                   "       thaw setup --swapfile PATH --size SIZE --key SRC[,SRC...] [--unlock CHAIN]\n"
                   "                  [--root DIR]\n\n"
                   "Format DEV as LUKS2 encrypted swap unlocked by the key sources SRC, open it, make\n"
                   "swap on it, write /etc/thaw/thaw.conf and print the kernel command line arguments\n"
                   "to add. DESTROYS the data on DEV.\n"
                   "With --swapfile: create PATH (SIZE bytes, K/M/G suffixes) on a file system that sits\n"
                   "directly on a LUKS2 mapping (an encrypted root), allocated without holes (FIEMAP),\n"
                   "make swap in it, compute resume_offset, add a keyslot and a token for each SRC to\n"
                   "that LUKS2 container (unlocked with --unlock, a key it takes already, unless\n"
                   "it takes the SRC keys already), write thaw.conf and print the kernel arguments.\n"
                   "Key sources:\n"
                   "  fwcfg:NAME        QEMU fw_cfg blob NAME\n"
                   "  keyfile:PATH      a file\n"
                   "  smbios:NAME       credential NAME in an SMBIOS type 11 entry\n"
                   "                    (io.systemd.credential[.binary]:NAME=...)\n"
                   "  drive:LABEL:PATH  file PATH on the ISO 9660 or vfat config drive LABEL\n"
                   "  imds:FLAVOR[+b64]:PATH  body of PATH from the aws, gcp or azure instance\n"
                   "                    metadata service (+b64: the body is base64)\n"
                   "  imds:URL[;header=NAME:VALUE]...[;b64]  body of an http:// URL on a link-local\n"
                   "                    address (169.254.0.0/16, fe80::/10) or an --allow-url origin;\n"
                   "                    %%20 %%2C %%3B %%25 in VALUE for a space , ; %%\n"
                   "  tpm2[:pcrs=7+11][,bank=sha256][,lock=15]\n"
                   "                    a fresh key sealed to this TPM2 under the PCRs' present values\n"
                   "                    (default 7; 0-15 only) and lock PCR 15 at zero (see thaw enroll\n"
                   "                    --help); also defines DEV's anti-rollback TPM2 counter\n"
                   "  passphrase[:console]  a recovery passphrase (typed twice now; an argon2id\n"
                   "                    keyslot); at boot asked on the console, last in the chain only\n"
                   "  systemd-tpm2      at boot only: the key of the device's systemd-tpm2 token\n"
                   "                    (systemd-cryptenroll); nothing to enroll here\n\n"
                   "  -d, --device DEV  the device to format\n"
                   "  -k, --key CHAIN   key sources, tried in order at boot; each gets a keyslot\n"
                   "  -n, --name NAME   device-mapper name (default " ARGS_NAME_DEFAULT ")\n"
                   "  -l, --label L     LUKS2 label\n"
                   "  -y, --yes         format even if DEV holds a file system, LUKS or swap signature\n"
                   "      --format-only format and enroll only: do not open DEV nor write the swap\n"
                   "                    signature (an image file, a host without device-mapper;\n"
                   "                    mkswap on the opened mapping later)\n"
                   "      --allow-url ORIGIN  let imds:URL sources name http://HOST[:PORT] (not link-\n"
                   "                    local), now and, through thaw.conf, at boot\n"
                   "  -i, --integrity   authenticated encryption (dm-integrity, hmac(sha256) per 4 KiB\n"
                   "                    sector): a changed image is an I/O error, never restored;\n"
                   "                    writes all of DEV once, and ~1%% of it holds the tags\n"
                   "                    (hibernate with thaw hibernate, which writes the image\n"
                   "                    itself: Linux 6.1's own writer loses its end, thaw(8))\n"
                   "  -s, --swapfile PATH  make the swap file PATH on an encrypted root instead\n"
                   "  -S, --size SIZE   size of the swap file (bytes; K, M, G, T: powers of 1024)\n"
                   "  -u, --unlock CHAIN  sources of a key the root's container takes already (the\n"
                   "                    first that unlocks it adds the keyslots)\n"
                   "      --root DIR    prefix for /proc, /sys, /dev and /etc (tests)\n"
                   "  -h, --help        show this help\n");
}

/* "4096", "600M", "2G": bytes, rounded down to whole pages. */
static int parse_size(const char *s, uint64_t *out)
{
        uint64_t v;
        int r = util_parse_bytes(s, UINT64_MAX >> 1, &v);

        if (r < 0)
                return r;
        *out = v / SWSUSP_PAGE * SWSUSP_PAGE;
        return 0;
}

static enum cmd_status parse_swapfile(struct setup_opts *o, const char *size, bool extra)
{
        if (extra || o->device || o->label || o->format_only || !o->key || !size) {
                log_msg(LOG_ERR, "setup --swapfile needs --size and --key, and takes no --device, --label, --format-only "
                        "or other arguments");
                return CMD_USAGE;
        }
        if (o->swapfile[0] != '/') {
                log_msg(LOG_ERR, "--swapfile %s is not an absolute path", o->swapfile);
                return CMD_USAGE;
        }
        if (parse_size(size, &o->size) < 0 || o->size < (uint64_t)SWAP_MIN_PAGES * SWSUSP_PAGE) {
                log_msg(LOG_ERR, "--size %s is not a size of at least %d pages (bytes, or with K, M, G, T)",
                        size, SWAP_MIN_PAGES);
                return CMD_USAGE;
        }
        return CMD_FAILED; /* meaning: go on */
}

static enum cmd_status parse(int argc, char **argv, struct setup_opts *o)
{
        static const struct option opts[] = {
                { "device", required_argument, NULL, 'd' },
                { "key", required_argument, NULL, 'k' },
                { "name", required_argument, NULL, 'n' },
                { "label", required_argument, NULL, 'l' },
                { "yes", no_argument, NULL, 'y' },
                { "format-only", no_argument, NULL, 'F' },
                { "allow-url", required_argument, NULL, 'a' },
                { "integrity", no_argument, NULL, 'i' },
                { "swapfile", required_argument, NULL, 's' },
                { "size", required_argument, NULL, 'S' },
                { "unlock", required_argument, NULL, 'u' },
                { "root", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *size = NULL;
        int c;

        while ((c = getopt_long(argc, argv, "d:k:n:l:yis:S:u:h", opts, NULL)) != -1) {
                switch (c) {
                case 'd': o->device = optarg; break;
                case 's': o->swapfile = optarg; break;
                case 'S': size = optarg; break;
                case 'u': o->unlock = optarg; break;
                case 'k': o->key = optarg; break;
                case 'n': o->name = optarg; break;
                case 'l': o->label = optarg; break;
                case 'y': o->yes = true; break;
                case 'F': o->format_only = true; break;
                case 'i': o->integrity = true; break;
                case 'r': o->root = optarg; break;
                case 'a':
                        if (imds_allow_join(o->allow_url, sizeof(o->allow_url), optarg) < 0) {
                                log_msg(LOG_ERR, "--allow-url %s is not an origin http://HOST[:PORT] (or one "
                                        "too many)", optarg);
                                return CMD_USAGE;
                        }
                        break;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        if (o->swapfile)
                return parse_swapfile(o, size, optind < argc);
        if (optind < argc || !o->device || !o->key || size || o->unlock) {
                log_msg(LOG_ERR, "setup needs --device and --key (and no other arguments)");
                return CMD_USAGE;
        }
        if (!args_name_valid(o->name)) {
                log_msg(LOG_ERR, "--name %s is not a usable device-mapper name", o->name);
                return CMD_USAGE;
        }
        if (o->label && strlen(o->label) > LUKS_LABEL_MAX) {
                log_msg(LOG_ERR, "--label is longer than %d bytes", LUKS_LABEL_MAX);
                return CMD_USAGE;
        }
        /* dm-integrity's superblock and the initial tags are written through device-mapper. */
        if (o->integrity && o->format_only) {
                log_msg(LOG_ERR, "--integrity needs device-mapper to write the integrity tags: it "
                        "cannot go with --format-only");
                return CMD_USAGE;
        }
        return CMD_FAILED; /* meaning: go on */
}

/* Refuse a device that is mounted, active swap or held; when says at which point we looked. */
static int refuse_in_use(const struct setup_opts *o, const char *when)
{
        char why[256];
        int r;

        r = devcheck_in_use(o->root, o->device, why, sizeof(why));
        if (r < 0) {
                log_msg(LOG_ERR, "cannot check %s%s (%s): nothing written", o->device, when, strerror(-r));
                return r;
        }
        if (r > 0) {
                log_msg(LOG_ERR, "refusing to format %s%s: %s; nothing written", o->device, when, why);
                return -EBUSY;
        }
        return 0;
}

/* Refuse a device in use always, and a device with a signature unless --yes. */
static int refuse(const struct setup_opts *o)
{
        char type[64];
        int r;

        r = refuse_in_use(o, "");
        if (r < 0)
                return r;
        r = devcheck_signature(o->device, type, sizeof(type));
        if (r < 0) {
                log_msg(LOG_ERR, "cannot probe %s (%s): nothing written", o->device, strerror(-r));
                return r;
        }
        if (r > 0 && !o->yes) {
                log_msg(LOG_ERR, "refusing to format %s: it holds a signature (%s); nothing written "
                        "(--yes formats it anyway, destroying its data)", o->device, type);
                return -EEXIST;
        }
        if (r > 0)
                log_msg(LOG_WARNING, "%s holds a signature (%s): overwriting it (--yes)", o->device, type);
        return 0;
}

/* The key (fetched, or made and sealed) and the token of each source, before anything is written. */
static int enroll_keys(const struct setup_opts *o, const struct keychain *chain, struct keysrc_enrollment *e)
{
        for (size_t i = 0; i < chain->n; i++) {
                char name[KEYSRC_ARG_MAX + 16], detail[512] = "";
                struct keysrc_ctx kc = { .root = o->root, .deadline_ms = clock_now_ms() + FETCH_WAIT_MS,
                                         .detail = detail, .detail_size = sizeof(detail) };
                int r = keysrc_enroll(&chain->src[i], &kc, &e[i]);

                if (r < 0) {
                        if (keysrc_format(&chain->src[i], name, sizeof(name)) < 0)
                                name[0] = '\0';
                        log_msg(LOG_ERR, "cannot read the key from %s (%s): nothing written to %s", name,
                                detail[0] ? detail : r == -ENOENT ? "not found" : strerror(-r),
                                o->device ? o->device : o->swapfile);
                        return r;
                }
        }
        return 0;
}

/*
 * With a tpm2 source in the chain, dev's anti-rollback counter in the TPM2 (tpm2_counter.h), its
 * auth from the ticket key that source's new key recovers. A failure is said; the setup is done
 * all the same (thaw enroll --tpm-counter tries again), and its exit status says it.
 */
static int setup_counter(const struct setup_opts *o, const char *dev, enum luks_profile profile,
                         const struct keychain *chain, const struct keysrc_enrollment *e)
{
        struct luks_policy p = { .profile = profile };
        char why[512];
        uint32_t index = 0;
        uint64_t value = 0;
        int r;

        for (size_t i = 0; i < chain->n; i++) {
                if (chain->src[i].type != KEYSRC_TPM2)
                        continue;
                r = tpm2_counter_enroll(o->root, dev, e[i].key, &p, clock_now_ms() + FETCH_WAIT_MS, &index, &value,
                                        why, sizeof(why));
                if (r < 0) {
                        log_msg(LOG_ERR, "the TPM2 counter of %s is not defined (%s): its images are not protected "
                                "against a rollback; thaw enroll --device %s --tpm-counter tries again", dev, why,
                                dev);
                        return r;
                }
                log_msg(LOG_INFO, "TPM2 counter of %s at NV index 0x%08x, value %" PRIu64 ": each hibernation "
                        "and each resume increment it", dev, index, value);
                return 0;
        }
        return 0;
}

/*
 * The fingerprint of dev's header as setup left it, checked against profile first (no key is
 * tried): what the boot will insist on (header= / rd.thaw.header=).
 */
static int pin_header(const char *dev, enum luks_profile profile, char *fp)
{
        struct luks_policy p = { .profile = profile };
        char why[LUKS_POLICY_WHY_MAX];
        int r = luks_header_check(dev, &p, fp, why, sizeof(why));

        if (r < 0)
                log_msg(LOG_ERR, "the LUKS2 header of %s does not pass thaw's header policy (%s): nothing "
                        "pinned", dev, *why ? why : strerror(-r));
        return r;
}

/* offset: resume_offset= of a swap file, 0 for a swap device (then not written). fp: the pin. */
static int write_conf(const struct setup_opts *o, const char *uuid, const char *chain, uint64_t offset,
                      const char *fp)
{
        char path[PATH_MAX], text[KEYCHAIN_SPEC_MAX + KEYSRC_ALLOW_MAX + 640], off[48] = "";
        int r, n;

        if (offset)
                snprintf(off, sizeof(off), "offset=%" PRIu64 "\n", offset);
        n = snprintf(text, sizeof(text),
                     "# thaw.conf: written by thaw setup. rd.thaw.* kernel arguments override these.\n"
                     "device=UUID=%s\nkey=%s\nname=%s\n%s%s%s%s"
                     "# the LUKS2 header as set up (re-pin after another tool changed it: thaw enroll --repin)\n"
                     "header=%s\n", uuid, chain, o->name,
                     *o->allow_url ? "# imds:URL sources may name these origins (no kernel argument can)\nallow-url=" : "",
                     o->allow_url, *o->allow_url ? "\n" : "", off, fp);
        if (n < 0 || (size_t)n >= sizeof(text))
                return -ENAMETOOLONG;
        r = util_path(path, sizeof(path), o->root, ARGS_CONF_PATH);
        return r < 0 ? r : util_write_file(path, text, 0644);
}

/*
 * thaw.conf is written last, so make sure it can be written before anything is formatted: a
 * read-only /etc must not leave a formatted, open device behind with no record of it.
 */
static int conf_dir_ready(const struct setup_opts *o)
{
        char dir[PATH_MAX];
        struct stat st;
        int r;

        r = util_path(dir, sizeof(dir), o->root, "/etc/thaw");
        if (r < 0)
                return r;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        if (stat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        return access(dir, W_OK) < 0 ? -errno : 0;
}

/*
 * Writing every sector of a large device through dm-integrity takes minutes on a slow disk: a line
 * about every CLOCK_PROGRESS_MS says how far it has got, so the console does not look hung.
 */
struct tags_said {
        const char *device;
        struct clock_every every;
};

static void say_tags_progress(uint64_t done, uint64_t total, void *userdata)
{
        struct tags_said *t = userdata;

        if (total == 0 || !clock_every_due(&t->every))
                return;
        log_msg(LOG_NOTICE, "writing the integrity tags of %s: %" PRIu64 "%% (%" PRIu64 " of %" PRIu64 " MiB)",
                t->device, done * 100 / total, done >> 20, total >> 20);
}

/* Format, open, make swap, record. Keys are only used here, and freed by the caller. */
static int format_and_open(const struct setup_opts *o, const struct keychain *chain,
                           const struct keysrc_enrollment *e, char *uuid, size_t usize)
{
        char mapper[PATH_MAX], rel[DM_MAPPER_PATH_MAX], swap_uuid[37];
        struct tags_said said = { .device = o->device };
        struct luks_progress progress = { .fn = say_tags_progress, .userdata = &said };
        int r;

        clock_every_start(&said.every, CLOCK_PROGRESS_MS);
        if (o->integrity)
                log_msg(LOG_INFO, "formatting %s as LUKS2 with integrity: every sector is written once, "
                        "this takes a while", o->device);
        r = luks_format(o->device, o->label, chain->n, e, o->integrity, &progress);
        if (r < 0) {
                log_msg(LOG_ERR, "formatting %s as LUKS2%s failed (%s)%s", o->device,
                        o->integrity ? " with integrity" : "", strerror(-r),
                        o->integrity ? ": does the kernel have dm-integrity and authenc?" : "");
                return r;
        }
        r = luks_uuid(o->device, uuid, usize);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot read the LUKS2 UUID of %s (%s)", o->device, strerror(-r));
                return r;
        }
        if (o->format_only) {
                log_msg(LOG_INFO, "%s is LUKS2 (UUID %s), not opened (--format-only)", o->device, uuid);
                return 0;
        }
        r = luks_activate(o->device, o->name, e[0].key, NULL);
        if (r < 0) {
                log_msg(LOG_ERR, "%s is LUKS2 now, but opening it as /dev/mapper/%s failed (%s)",
                        o->device, o->name, strerror(-r));
                return r;
        }
        r = dm_mapper_path(o->name, rel, sizeof(rel));
        if (r == 0)
                r = util_path(mapper, sizeof(mapper), o->root, rel);
        for (int waited = 0; r == 0 && !util_exists(mapper) && waited < MAPPER_WAIT_MS; waited += 100)
                clock_sleep_ms(100);
        if (r == 0)
                r = swap_write_header(mapper, NULL, swap_uuid, sizeof(swap_uuid));
        if (r < 0) {
                log_msg(LOG_ERR, "writing the swap header on /dev/mapper/%s failed (%s)", o->name,
                        strerror(-r));
                return r;
        }
        log_msg(LOG_INFO, "%s is LUKS2%s (UUID %s), open as %s with swap (UUID %s)", o->device,
                o->integrity ? " with integrity (hmac(sha256))" : "", uuid, rel, swap_uuid);
        return 0;
}

/* The LUKS2 container under the file system that will hold the swap file, its UUID and mapping. */
static int find_container(const struct setup_opts *o, struct fsdev *fs, char *backing, size_t bsize,
                          char *uuid, size_t usize)
{
        char dir[PATH_MAX], *slash;
        struct stat st;
        int r;

        if (util_copy(dir, sizeof(dir), o->swapfile) < 0)
                return -ENAMETOOLONG;
        slash = strrchr(dir, '/');
        slash[slash == dir] = '\0'; /* "/swapfile" -> "/" */
        if (stat(dir, &st) < 0) {
                r = -errno;
                log_msg(LOG_ERR, "cannot look at %s (%s): nothing written", dir, strerror(-r));
                return r;
        }
        r = fsdev_crypt(o->root, major(st.st_dev), minor(st.st_dev), fs);
        if (r < 0) {
                log_msg(LOG_ERR, "%s is not on a file system that sits directly on a LUKS2 mapping "
                        "(device %u:%u: %s): thaw can only resume a swap file from such an encrypted root; "
                        "nothing written", dir, major(st.st_dev), minor(st.st_dev),
                        r == -ENODEV ? "not a device-mapper device" :
                        r == -EMEDIUMTYPE ? "a mapping, but not LUKS2 (LVM, plain dm-crypt?)" :
                        r == -EXDEV ? "not over exactly one device" : strerror(-r));
                return r;
        }
        r = util_path(backing, bsize, o->root, fs->backing);
        if (r == 0)
                r = luks_uuid(backing, uuid, usize);
        if (r < 0)
                log_msg(LOG_ERR, "cannot read the LUKS2 header of %s under /dev/mapper/%s (%s): nothing "
                        "written", fs->backing, fs->name, strerror(-r));
        return r;
}

/* Create the file, make it swap, and find its first page: refused (and removed) with holes. *out_fd
 * stays open on success, for a removal on a later failure. */
static int make_swapfile(const struct setup_opts *o, uint64_t *offset, int *out_fd)
{
        struct swapfile_layout l;
        char swap_uuid[37];
        int fd, r;

        /* One descriptor from O_EXCL creation to the layout check: the name is never opened again,
         * so a file put in its place (a link to another file or device) is never written to. */
        fd = r = swapfile_create_fd(o->swapfile, o->size);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot create %s with %" PRIu64 " bytes allocated (%s)%s", o->swapfile,
                        o->size, strerror(-r), r == -EEXIST ? ": it exists; remove it (swapoff first) "
                        "or choose another path" : "");
                return r;
        }
        r = swap_write_header_fd(fd, NULL, swap_uuid, sizeof(swap_uuid));
        if (r == 0)
                r = swapfile_layout_fd(fd, &l);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot make swap in %s (%s): removed it", o->swapfile, strerror(-r));
                swapfile_remove(fd, o->swapfile);
                close(fd);
                return r;
        }
        /* The image's header page must be where resume_offset= says, and stay there. */
        if (*l.why) {
                log_msg(LOG_ERR, "refusing %s as a hibernation swap file: %s; removed it (the kernel "
                        "cannot swap to it either)", o->swapfile, l.why);
                swapfile_remove(fd, o->swapfile);
                close(fd);
                return -EFBIG;
        }
        *out_fd = fd;
        *offset = l.physical / SWSUSP_PAGE;
        log_msg(LOG_INFO, "%s: %" PRIu64 " MiB of swap (UUID %s), allocated without holes in %u "
                "piece(s), header at page %" PRIu64 " of the device", o->swapfile, o->size >> 20, swap_uuid,
                l.runs, *offset);
        return 0;
}

/*
 * Enroll the keys with the first --unlock source whose key the container takes (as thaw enroll's
 * --unlock). Sources that cannot be read are skipped; -EPERM if none unlocks it.
 */
static int enroll_with_unlock(const struct setup_opts *o, const char *backing, const struct keychain *chain,
                              const struct keysrc_enrollment *e)
{
        static const struct luks_policy foreign = { .profile = LUKS_PROFILE_FOREIGN };
        struct keychain c;
        int r;

        if (!o->unlock)
                return luks_enroll_sources(backing, NULL, chain, e, &foreign);
        if (keychain_parse(o->unlock, &c) < 0)
                return -EINVAL;
        r = -EPERM;
        for (size_t i = 0; i < c.n && (r == -EPERM || r == -ENOKEY); i++) {
                struct keysrc_ctx kc = { .root = o->root, .deadline_ms = clock_now_ms() + FETCH_WAIT_MS };
                struct secret *unlock = NULL;

                if (keysrc_fetch(&c.src[i], &kc, &unlock) < 0)
                        continue;
                r = luks_enroll_sources(backing, unlock, chain, e, &foreign);
                secret_free(unlock);
        }
        return r;
}

/* One run of thaw setup: what its steps hand on to each other. */
struct setup_run {
        struct setup_opts *o;
        struct keychain chain;
        struct keysrc_enrollment e[KEYCHAIN_MAX]; /* the fetched keys: wiped at the end, whatever happened */
        const char *dev;           /* the LUKS2 container: --device, or backing */
        char backing[PATH_MAX];    /* --swapfile: the LUKS2 container under the swap file's file system */
        char uuid[64], spec[KEYCHAIN_SPEC_MAX], fp[LUKS_FP_SIZE];
        struct fsdev fs;           /* --swapfile: the root's file system and its mapping */
        uint64_t offset;           /* --swapfile: resume_offset=; 0 for a device (not written) */
        int fd;                    /* --swapfile: the file, open from its creation to the end */
};

/* A swap device or a swap file: what differs between them. The rest is one flow, setup(). */
struct setup_kind {
        enum luks_profile profile;  /* THAW: a container thaw formats; FOREIGN: the root's, an installer's */
        const char *key_hint;       /* after "--key X is not a key source chain" */
        bool names_device;          /* thaw.conf's directory refused: "nothing written to DEV" */
        int (*prepare)(struct setup_run *s); /* before anything is written, or any key fetched */
        int (*install)(struct setup_run *s); /* with the keys fetched: the swap made, the keys in place */
        void (*report)(const struct setup_run *s); /* the closing lines, the kernel arguments */
};

static int device_prepare(struct setup_run *s)
{
        s->dev = s->o->device;
        return refuse(s->o);
}

static int device_install(struct setup_run *s)
{
        int r;

        if (luks_is_active(s->o->name) == 1) {
                log_msg(LOG_ERR, "/dev/mapper/%s is already active: close it or choose another --name; "
                        "nothing written", s->o->name);
                return -EEXIST;
        }
        /* Fetching the keys can take seconds (a late fw_cfg driver): look again right before writing. */
        r = refuse_in_use(s->o, " (checked again after fetching the keys)");
        return r < 0 ? r : format_and_open(s->o, &s->chain, s->e, s->uuid, sizeof(s->uuid));
}

static void device_report(const struct setup_run *s)
{
        log_msg(LOG_INFO, "wrote %s; add to the kernel command line:", ARGS_CONF_PATH);
        printf("rd.thaw.device=UUID=%s rd.thaw.key=%s", s->uuid, s->spec);
        if (strcmp(s->o->name, ARGS_NAME_DEFAULT) != 0)
                printf(" rd.thaw.name=%s", s->o->name);
        printf(" rd.thaw.header=%s", s->fp);
        printf("\n");
}

/* thaw setup --swapfile: a swap file on an encrypted root, resumed by unlocking the root's container. */
static int swapfile_prepare(struct setup_run *s)
{
        int r = find_container(s->o, &s->fs, s->backing, sizeof(s->backing), s->uuid, sizeof(s->uuid));

        s->dev = s->backing;
        /* The root's header, made by an installer: it must pass before any key is tried on it. */
        return r < 0 ? r : pin_header(s->dev, LUKS_PROFILE_FOREIGN, s->fp);
}

/*
 * thaw provision's swap file is made under a temporary name and takes its own only when complete,
 * and before thaw.conf: a power cut leaves either that temporary name, which only thaw uses and
 * may remove, or the whole swap file. Nothing else found at the final name is ever taken as ours.
 */
static int rename_into_place(struct setup_run *s)
{
        struct setup_opts *o = s->o;
        int r;

        if (rename(o->swapfile, o->rename_to) < 0) {
                r = -errno;
                log_msg(LOG_ERR, "cannot rename %s to %s (%s): removed it", o->swapfile, o->rename_to,
                        strerror(-r));
                swapfile_remove(s->fd, o->swapfile);
                return r;
        }
        o->swapfile = o->rename_to;
        /* The new name on disk before thaw.conf names its offset. */
        r = util_sync_dir_of(o->swapfile);
        if (r < 0)
                log_msg(LOG_ERR, "cannot sync the directory of %s (%s)", o->swapfile, strerror(-r));
        return r;
}

static int swapfile_install(struct setup_run *s)
{
        struct setup_opts *o = s->o;
        int r = make_swapfile(o, &s->offset, &s->fd);

        if (r < 0)
                return r;
        /* The boot opens the root container under the name this system gives it (see thaw.conf(5)). */
        o->name = s->fs.name;
        r = enroll_with_unlock(o, s->dev, &s->chain, s->e);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot enroll the keys in %s, the LUKS2 container of /dev/mapper/%s (%s); "
                        "removed %s", s->fs.backing, s->fs.name, r == -ENOKEY ? "a key does not unlock it yet: "
                        "give --unlock with a key it takes" : r == -EPERM ? "no --unlock source "
                        "unlocks it" : strerror(-r), o->swapfile);
                swapfile_remove(s->fd, o->swapfile);
                return r;
        }
        return o->rename_to ? rename_into_place(s) : 0;
}

static void swapfile_report(const struct setup_run *s)
{
        log_msg(LOG_INFO, "keys enrolled in %s (UUID %s, open as /dev/mapper/%s); wrote %s; activate "
                "the swap with swapon %s; add to the kernel command line:", s->fs.backing, s->uuid, s->fs.name,
                ARGS_CONF_PATH, s->o->swapfile);
        printf("rd.thaw.device=UUID=%s rd.thaw.key=%s rd.thaw.name=%s rd.thaw.header=%s resume_offset=%"
               PRIu64 "\n", s->uuid, s->spec, s->fs.name, s->fp, s->offset);
}

static const struct setup_kind setup_device = {
        .profile = LUKS_PROFILE_THAW,
        .key_hint = " (fwcfg:NAME, keyfile:PATH, comma-separated)",
        .names_device = true,
        .prepare = device_prepare,
        .install = device_install,
        .report = device_report,
};

static const struct setup_kind setup_swapfile = {
        .profile = LUKS_PROFILE_FOREIGN,
        .key_hint = "",
        .names_device = false,
        .prepare = swapfile_prepare,
        .install = swapfile_install,
        .report = swapfile_report,
};

/* The key chain of --key (and --unlock), the origins --allow-url allows: CMD_FAILED to go on. */
static enum cmd_status setup_chain(struct setup_run *s, const struct setup_kind *k)
{
        const struct setup_opts *o = s->o;
        struct keychain unlock;
        int r = keychain_parse(o->key, &s->chain);

        /* The enrolment's own fetch may use the origins --allow-url allows. */
        if (r == 0)
                r = imds_allow_urls(o->allow_url);
        if (r == 0)
                r = keychain_format(&s->chain, s->spec, sizeof(s->spec));
        if (r == -ERANGE) {
                log_msg(LOG_ERR, "--key %s: pcrs= names a PCR of 16-23, which software can reset: %s", o->key,
                        TPM2_RESETTABLE_WHY);
                return CMD_USAGE;
        }
        if (r < 0) {
                log_msg(LOG_ERR, "--key %s is not a key source chain%s", o->key, k->key_hint);
                return CMD_USAGE;
        }
        if (o->unlock && keychain_parse(o->unlock, &unlock) < 0) {
                log_msg(LOG_ERR, "--unlock %s is not a key source chain", o->unlock);
                return CMD_USAGE;
        }
        return CMD_FAILED; /* meaning: go on */
}

/*
 * Check, fetch the keys, make the swap and put the keys in place (k), record: the counter, the
 * header's pin and thaw.conf last, so that a failure before leaves no record of a half setup.
 */
static enum cmd_status setup(struct setup_opts *o, const struct setup_kind *k)
{
        struct setup_run s = { .o = o, .fd = -1 };
        enum cmd_status st;
        int r, counter_r = 0;

        st = setup_chain(&s, k);
        if (st != CMD_FAILED)
                return st;
        r = k->prepare(&s);
        if (r == 0) {
                r = conf_dir_ready(o);
                if (r < 0)
                        log_msg(LOG_ERR, "cannot write %s (%s): nothing written%s%s", ARGS_CONF_PATH,
                                strerror(-r), k->names_device ? " to " : "", k->names_device ? o->device : "");
        }
        if (r == 0)
                r = enroll_keys(o, &s.chain, s.e);
        if (r == 0)
                r = k->install(&s);
        if (r < 0)
                goto out;
        counter_r = setup_counter(o, s.dev, k->profile, &s.chain, s.e);
        r = pin_header(s.dev, k->profile, s.fp);
        if (r == 0)
                r = write_conf(o, s.uuid, s.spec, s.offset, s.fp);
        if (r < 0) {
                log_msg(LOG_ERR, "writing %s failed (%s)", ARGS_CONF_PATH, strerror(-r));
                goto out;
        }
        k->report(&s);
out:
        if (s.fd >= 0)
                close(s.fd);
        /* Every path, success included, wipes every key we fetched. */
        for (size_t i = 0; i < KEYCHAIN_MAX; i++)
                keysrc_enrollment_free(&s.e[i]);
        return r < 0 || counter_r < 0 ? CMD_FAILED : CMD_OK;
}

enum cmd_status cmd_setup_run(const struct cmd_setup_req *req)
{
        struct setup_opts o = { .root = req->root, .device = req->device, .swapfile = req->swapfile,
                                .size = req->size, .key = req->key, .unlock = req->unlock,
                                .rename_to = req->rename_to,
                                .name = req->name ? req->name : ARGS_NAME_DEFAULT };

        return setup(&o, o.swapfile ? &setup_swapfile : &setup_device);
}

int cmd_setup_make_swapfile(const char *path, uint64_t size, uint64_t *offset)
{
        struct setup_opts o = { .swapfile = path, .size = size };
        int fd = -1, r = make_swapfile(&o, offset, &fd);

        if (fd >= 0)
                close(fd);
        return r;
}

enum cmd_status cmd_setup(int argc, char **argv)
{
        struct setup_opts o = { .name = ARGS_NAME_DEFAULT, .root = "" };
        enum cmd_status st;

        log_setup("", true);
        st = parse(argc, argv, &o);
        if (st != CMD_FAILED)
                return st;
        return setup(&o, o.swapfile ? &setup_swapfile : &setup_device);
}
