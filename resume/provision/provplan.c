/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What thaw provision would change: the size rule against this machine's memory, the swap as it is. */
#include "provision/provplan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/util.h"
#include "dev/devcheck.h"
#include "dev/devspec.h"
#include "dev/dm.h"
#include "luks.h"
#include "system/power.h"
#include "system/swapfile.h"

#define LIMIT (UINT64_C(1) << 62)

int provplan_size(const struct provsize *rule, uint64_t mem_total_kib, uint64_t *out)
{
        uint64_t mem, v;

        if (mem_total_kib > (LIMIT >> 10) / 1001)
                return -ERANGE;
        mem = mem_total_kib << 10;
        /* mem * milli / 1000 without overflow: mem < 2^52 and milli <= 1,000,999. */
        v = mem / 1000 * rule->milli + mem % 1000 * rule->milli / 1000;
        v += mem / 100 * rule->pct + mem % 100 * rule->pct / 100;
        if (v > LIMIT || rule->add > LIMIT - v)
                return -ERANGE;
        v += rule->add;
        if (v < rule->min)
                v = rule->min;
        v = (v + PROVPLAN_MIB - 1) / PROVPLAN_MIB * PROVPLAN_MIB;
        *out = v;
        return 0;
}

const char *provplan_action_name(enum provplan_action a)
{
        switch (a) {
        case PROVPLAN_NOTHING: return "nothing to change";
        case PROVPLAN_FIRST: return "first setup";
        case PROVPLAN_GROW: return "grow the swap file";
        case PROVPLAN_REPOINT: return "correct thaw.conf's offset";
        case PROVPLAN_REFUSE_IMAGE: return "refused: a hibernation image is on the swap";
        case PROVPLAN_REFUSE_ROOM: return "refused: no room";
        default: return "refused";
        }
}

#define MIB(b) ((b) / PROVPLAN_MIB)

__attribute__((format(printf, 3, 4)))
static int plan(struct provplan *p, enum provplan_action a, const char *fmt, ...)
{
        va_list ap;

        p->action = a;
        va_start(ap, fmt);
        vsnprintf(p->why, sizeof(p->why), fmt, ap);
        va_end(ap);
        return 0;
}

/* Said after the chain of a first setup that left out key='s tpm2 sources. */
#define NO_TPM2 " (this instance has no TPM2: no /dev/tpmrm0, no ACPI TPM2 table; key='s tpm2 left out)"

/* A first setup with no source left to enroll (key= names only tpm2, and there is no TPM2). */
static int refuse_key(const struct provconf *c, struct provplan *p)
{
        return plan(p, PROVPLAN_REFUSE_OTHER, "key=%s needs a TPM2 and this instance has none (no /dev/tpmrm0, "
                    "no ACPI TPM2 table): add a source every instance has to key=, one read before the network, e.g. "
                    "key=tpm2,smbios:thaw-key", c->key);
}

static int decide_swapfile(const struct provconf *c, const struct provstate *s, struct provplan *p)
{
        const char *f = c->swapfile;
        char extra[96] = "";
        /* PATH.thaw-new, which a power cut in a setup or grow left, is removed first: its room is free. */
        uint64_t room = s->fresh_bytes > UINT64_MAX - s->room ? UINT64_MAX : s->room + s->fresh_bytes;

        p->have = s->exists ? s->bytes : 0;
        /* Whoever can write a directory on the path can put another file, a link, in its place. */
        if (*s->unsafe_dir)
                return plan(p, PROVPLAN_REFUSE_OTHER, "%s: %s is not a root-owned directory that only root can "
                            "write, so anyone who can write it could put another file in the swap file's place: "
                            "chown root and chmod go-w it, or name another swapfile=", f, s->unsafe_dir);
        if (s->configured) {
                if (s->conf_offset == 0)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s names a swap device (%s), provision.conf a "
                                    "swap file: set up by hand; remove one of them", ARGS_CONF_PATH,
                                    s->conf_device);
                if (!s->exists)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s names a swap file (offset=%" PRIu64 ") but %s "
                                    "is missing: remove %s to set it up again", ARGS_CONF_PATH, s->conf_offset, f,
                                    ARGS_CONF_PATH);
                /* Only thaw's swap file is ever grown or repointed: not a link, a device, or data. */
                if (!s->regular)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s is not a regular file (a symbolic link, a "
                                    "device?): thaw provision changes only the swap file it made; name that file",
                                    f);
                if (s->kind_known && s->kind == SWSUSP_IMAGE)
                        return s->bytes >= p->want ?
                                plan(p, PROVPLAN_NOTHING, "%s (%" PRIu64 " MiB) holds a hibernation image and is "
                                     "large enough: nothing to change", f, MIB(s->bytes)) :
                                plan(p, PROVPLAN_REFUSE_IMAGE, "%s (%" PRIu64 " MiB) is smaller than the %" PRIu64
                                     " MiB the size rule asks for, but holds a hibernation image: not touched "
                                     "(it grows at a boot after the image is resumed or given up)", f,
                                     MIB(s->bytes), MIB(p->want));
                if (!s->kind_known || s->kind != SWSUSP_SWAP)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s is not swap (its first page has no swap "
                                    "signature): not thaw's swap file, never grown or written over; check "
                                    "swapfile= and %s", f, ARGS_CONF_PATH);
                /* A grow cut short between the new file and thaw.conf: the file is the truth. */
                if (s->offset_known && s->file_offset != s->conf_offset) {
                        p->offset = s->file_offset;
                        return plan(p, PROVPLAN_REPOINT, "%s starts at page %" PRIu64 ", %s says offset=%" PRIu64
                                    ": write offset=%" PRIu64, f, s->file_offset, ARGS_CONF_PATH, s->conf_offset,
                                    s->file_offset);
                }
                if (s->bytes >= p->want)
                        return plan(p, PROVPLAN_NOTHING, "%s has %" PRIu64 " MiB, the size rule asks for %" PRIu64
                                    " MiB: nothing to change", f, MIB(s->bytes), MIB(p->want));
                if (s->fresh && !s->fresh_regular)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s" PROVPLAN_FRESH " exists and is not a regular "
                                    "file: thaw provision makes the new swap file under that name; remove it", f);
                p->remove_fresh = s->fresh;
                /* The new file is made beside the old one, which goes only once the new one is in place. */
                if (room < p->want + PROVPLAN_SPARE_BYTES)
                        return plan(p, PROVPLAN_REFUSE_ROOM, "%s has %" PRIu64 " MiB, the size rule asks for %"
                                    PRIu64 " MiB, but its file system has %" PRIu64 " MiB free (%" PRIu64 " MiB "
                                    "needed, %" PRIu64 " MiB of it left free): grow the root", f, MIB(s->bytes),
                                    MIB(p->want), MIB(room), MIB(p->want + PROVPLAN_SPARE_BYTES),
                                    MIB(PROVPLAN_SPARE_BYTES));
                if (p->remove_fresh)
                        snprintf(extra, sizeof(extra), " (first removing the " PROVPLAN_FRESH " file a stopped "
                                 "grow left, %" PRIu64 " MiB)", MIB(s->fresh_bytes));
                return plan(p, PROVPLAN_GROW, "%s has %" PRIu64 " MiB, the size rule asks for %" PRIu64 " MiB: "
                            "make it again at that size%s", f, MIB(s->bytes), MIB(p->want), extra);
        }
        if (s->exists) {
                if (s->kind_known && s->kind == SWSUSP_IMAGE)
                        return plan(p, PROVPLAN_REFUSE_IMAGE, "%s holds a hibernation image but %s is missing: "
                                    "not touched", f, ARGS_CONF_PATH);
                if (s->active)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s is active swap not set up by thaw: swapoff it "
                                    "and remove it, or name another swapfile=", f);
                /*
                 * Only a file whose first page says plain swap is replaced: inactive swap with no
                 * image holds nothing anyone keeps (it is what a power cut after the rename into
                 * place, before thaw.conf, leaves). A zero first page is no sign of ours: a disk
                 * image or a database can start so. Anything else is left alone.
                 */
                if (!s->regular || !s->kind_known || s->kind != SWSUSP_SWAP)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s exists and is not swap: thaw provision does not "
                                    "remove it; name another swapfile=", f);
                p->replace_leftover = true;
                room = room > UINT64_MAX - s->bytes ? UINT64_MAX : room + s->bytes;
        }
        if (s->fresh && !s->fresh_regular)
                return plan(p, PROVPLAN_REFUSE_OTHER, "%s" PROVPLAN_FRESH " exists and is not a regular file: "
                            "thaw provision makes the swap file under that name; remove it", f);
        p->remove_fresh = s->fresh;
        if (room < p->want + PROVPLAN_SPARE_BYTES)
                return plan(p, PROVPLAN_REFUSE_ROOM, "the size rule asks for %" PRIu64 " MiB of swap in %s, but "
                            "its file system has %" PRIu64 " MiB free (%" PRIu64 " MiB of it left free): grow the "
                            "root or change size=", MIB(p->want), f, MIB(room), MIB(PROVPLAN_SPARE_BYTES));
        if (!*p->key)
                return refuse_key(c, p);
        return plan(p, PROVPLAN_FIRST, "make %s with %" PRIu64 " MiB%s%s, enroll key=%s in the root's LUKS2 "
                    "container%s", f, MIB(p->want), p->replace_leftover ? " (replacing the plain swap file "
                    "there, which holds no image)" : "", p->remove_fresh ? " (removing the " PROVPLAN_FRESH
                    " file a stopped setup left)" : "", p->key, p->tpm2_left_out ? NO_TPM2 : "");
}

static int decide_device(const struct provconf *c, const struct provstate *s, struct provplan *p)
{
        const char *d = c->device, *shown = *s->device ? s->device + s->device_root : d;
        uint64_t usable = s->bytes > PROVPLAN_LUKS_BYTES ? s->bytes - PROVPLAN_LUKS_BYTES : 0;
        char uuid[ARGS_DEVICE_MAX];

        if (!s->exists)
                return plan(p, PROVPLAN_REFUSE_OTHER, "device=%s is not there: check the spec in provision.conf",
                            d);
        p->have = s->configured ? usable : 0;
        if (s->configured) {
                snprintf(uuid, sizeof(uuid), "UUID=%s", s->luks_uuid);
                if (!*s->luks_uuid || strcmp(uuid, s->conf_device) != 0)
                        return plan(p, PROVPLAN_REFUSE_OTHER, "%s names device=%s, which is not %s%s%s: set up "
                                    "by hand; remove one of them", ARGS_CONF_PATH, s->conf_device, d,
                                    *s->luks_uuid ? ", LUKS2 UUID " : " (not LUKS2)", s->luks_uuid);
                if (s->kind_known && s->kind == SWSUSP_IMAGE && usable < p->want)
                        return plan(p, PROVPLAN_REFUSE_IMAGE, "%s (%" PRIu64 " MiB of swap) is smaller than the %"
                                    PRIu64 " MiB the size rule asks for, and holds a hibernation image: not "
                                    "touched", d, MIB(usable), MIB(p->want));
                if (usable < p->want)
                        return plan(p, PROVPLAN_REFUSE_ROOM, "%s gives %" PRIu64 " MiB of swap, the size rule asks "
                                    "for %" PRIu64 " MiB: a partition cannot grow here; make it larger in the "
                                    "image, or change size=", d, MIB(usable), MIB(p->want));
                return plan(p, PROVPLAN_NOTHING, "%s gives %" PRIu64 " MiB of swap, the size rule asks for %" PRIu64
                            " MiB: nothing to change", d, MIB(usable), MIB(p->want));
        }
        if (*s->in_use)
                return plan(p, PROVPLAN_REFUSE_OTHER, "%s is in use: %s; thaw provision formats only an unused, "
                            "blank partition", d, s->in_use);
        if (*s->luks_uuid || *s->signature)
                return plan(p, PROVPLAN_REFUSE_OTHER, "%s holds %s and %s is missing: thaw provision formats only "
                            "a blank partition (wipefs -a it in the image)", d, *s->luks_uuid ? "LUKS2" :
                            s->signature, ARGS_CONF_PATH);
        if (usable < p->want)
                return plan(p, PROVPLAN_REFUSE_ROOM, "%s gives %" PRIu64 " MiB of swap, the size rule asks for %"
                            PRIu64 " MiB: make the partition larger in the image, or change size=", d,
                            MIB(usable), MIB(p->want));
        if (!*p->key)
                return refuse_key(c, p);
        return plan(p, PROVPLAN_FIRST, "format %s%s%s%s as LUKS2 swap (%" PRIu64 " MiB; the size rule asks "
                    "for %" PRIu64 " MiB), open it as /dev/mapper/%s, enroll key=%s%s", shown, strcmp(shown, d) ?
                    " (" : "", strcmp(shown, d) ? d : "", strcmp(shown, d) ? ")" : "", MIB(usable),
                    MIB(p->want), c->name, p->key, p->tpm2_left_out ? NO_TPM2 : "");
}

/*
 * The chain a first setup enrolls: key=, but on an instance with no TPM2 without its tpm2 sources
 * (one image serves instance types with and without one); "" when nothing would be left.
 */
static void enroll_chain(const struct provconf *c, const struct provstate *s, struct provplan *p)
{
        struct keychain all, kept = { 0 };

        p->key[0] = '\0';
        if (keychain_parse(c->key, &all) < 0) { /* provconf_parse() checked it; thaw setup says why */
                snprintf(p->key, sizeof(p->key), "%s", c->key);
                return;
        }
        for (size_t i = 0; i < all.n; i++)
                if (all.src[i].type != KEYSRC_TPM2 || s->tpm2)
                        kept.src[kept.n++] = all.src[i];
        p->tpm2_left_out = kept.n < all.n;
        if (!p->tpm2_left_out)
                snprintf(p->key, sizeof(p->key), "%s", c->key); /* as written */
        else if (kept.n > 0 && keychain_format(&kept, p->key, sizeof(p->key)) < 0)
                snprintf(p->key, sizeof(p->key), "%s", c->key); /* fewer sources fit: unreachable */
}

int provplan_decide(const struct provconf *c, const struct provstate *s, struct provplan *out)
{
        struct provplan p = { 0 };
        int r = provplan_size(&c->size, s->mem_total_kib, &p.want);

        if (r < 0)
                return r;
        enroll_chain(c, s, &p);
        if (*c->swapfile)
                decide_swapfile(c, s, &p);
        else
                decide_device(c, s, &p);
        /* A change to thaw.conf counts only once the initramfs carries it (ARGS_STALE_PATH). */
        if (p.action == PROVPLAN_FIRST || p.action == PROVPLAN_GROW || p.action == PROVPLAN_REPOINT)
                p.rebuild_initramfs = true;
        if (p.action == PROVPLAN_NOTHING && s->initramfs_stale) {
                size_t n = strlen(p.why);

                p.rebuild_initramfs = true;
                snprintf(p.why + n, sizeof(p.why) - n, "; but the initramfs does not carry %s yet (%s): "
                         "rebuild it", ARGS_CONF_PATH, ARGS_STALE_PATH);
        }
        *out = p;
        return 0;
}

/*
 * thaw.conf as the boot will read it. Any thaw.conf counts as a setup, even one that names no
 * device: thaw setup writes it last and whole (rename()), so it is someone's, never set up over.
 */
static void observe_conf(const char *root, struct provstate *s)
{
        char *text = malloc(ARGS_CONF_MAX + 2);
        struct thaw_args a;
        int r;

        if (!text)
                return;
        r = util_read_text_at(root, ARGS_CONF_PATH, text, ARGS_CONF_MAX + 2);
        if (r >= 0) {
                args_init(&a);
                (void)args_parse_conf(text, &a, NULL, 0);
                s->configured = true;
                snprintf(s->conf_device, sizeof(s->conf_device), "%s", *a.device ? a.device : "?");
                s->conf_offset = a.offset;
        } else if (r != -ENOENT)
                s->configured = true; /* there, but unreadable: never set up over it */
        free(text);
}

/* The first page of path: its kind, and whether it is blank. */
static void observe_page(const char *path, struct provstate *s)
{
        uint8_t page[SWSUSP_PAGE];
        struct swsusp_header h;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t n;

        if (fd < 0)
                return;
        n = pread(fd, page, sizeof(page), 0);
        close(fd);
        if (n != (ssize_t)sizeof(page) || swsusp_parse(page, sizeof(page), &h) < 0)
                return;
        s->kind_known = true;
        s->kind = h.kind;
        s->blank = true;
        for (size_t i = 0; i < sizeof(page) && s->blank; i++)
                s->blank = page[i] == 0;
}

/* The first directory on path's way up to root (included) that is not root-owned and closed to others. */
static void observe_dirs(const char *root, const char *path, struct provstate *s)
{
        char dir[PATH_MAX], *slash;
        size_t stop = strlen(root);
        struct stat st;

        if (util_copy(dir, sizeof(dir), path) < 0)
                return;
        while ((slash = strrchr(dir, '/'))) {
                slash[slash == dir] = '\0';
                if (strlen(dir) < stop || lstat(dir, &st) < 0)
                        return;
                /* geteuid(): the tests' fixture roots belong to whoever runs them; thaw runs as root. */
                if (!S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
                    (st.st_mode & (S_IWGRP | S_IWOTH))) {
                        snprintf(s->unsafe_dir, sizeof(s->unsafe_dir), "%s", dir[stop] ? dir + stop : "/");
                        return;
                }
                if (slash == dir)
                        return;
        }
}

static void observe_swapfile(const char *root, const struct provconf *c, struct provstate *s)
{
        char path[PATH_MAX], dir[PATH_MAX], fresh[PATH_MAX + 16], *slash;
        struct swapfile_layout l;
        struct power_swap sw;
        struct statvfs vfs;
        struct stat st;

        if (util_path(path, sizeof(path), root, c->swapfile) < 0)
                return;
        observe_dirs(root, path, s);
        if (snprintf(fresh, sizeof(fresh), "%s" PROVPLAN_FRESH, path) < (int)sizeof(fresh) &&
            lstat(fresh, &st) == 0) {
                s->fresh = true;
                s->fresh_regular = S_ISREG(st.st_mode);
                s->fresh_bytes = s->fresh_regular ? (uint64_t)st.st_blocks * 512 : 0;
        }
        if (lstat(path, &st) == 0) {
                s->exists = true;
                s->regular = S_ISREG(st.st_mode);
                s->bytes = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
                if (S_ISREG(st.st_mode))
                        observe_page(path, s);
                if (S_ISREG(st.st_mode) && swapfile_layout(path, &l) == 0 && !*l.why) {
                        s->offset_known = true;
                        s->file_offset = l.physical / SWSUSP_PAGE;
                }
                s->active = power_swap_find(root, NULL, c->swapfile, &sw) == 0;
        }
        snprintf(dir, sizeof(dir), "%s", path);
        slash = strrchr(dir, '/');
        if (slash)
                slash[slash == dir] = '\0';
        if (statvfs(dir, &vfs) == 0)
                s->room = (uint64_t)vfs.f_bavail * vfs.f_frsize;
}

static void observe_device(const char *root, const struct provconf *c, struct provstate *s)
{
        char mapper[DM_MAPPER_PATH_MAX], mpath[PATH_MAX], *dev = s->device;
        size_t rlen = strlen(root);
        off_t end;
        int fd;

        /* Resolved once: the first setup formats this path, not the spec looked up again. */
        if (devspec_resolve(root, c->device, s->device, sizeof(s->device)) < 0) {
                s->device[0] = '\0';
                return;
        }
        s->device_root = strncmp(s->device, root, rlen) == 0 && s->device[rlen] == '/' ? rlen : 0;
        fd = open(dev, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return;
        end = lseek(fd, 0, SEEK_END);
        close(fd);
        s->exists = true;
        s->bytes = end > 0 ? (uint64_t)end : 0;
        if (luks_uuid(dev, s->luks_uuid, sizeof(s->luks_uuid)) < 0)
                s->luks_uuid[0] = '\0';
        if (!*s->luks_uuid && devcheck_signature(dev, s->signature, sizeof(s->signature)) <= 0)
                s->signature[0] = '\0';
        if (devcheck_in_use(root, dev, s->in_use, sizeof(s->in_use)) <= 0)
                s->in_use[0] = '\0';
        /* The image, if any, is inside the encryption: readable only through the open mapping. */
        if (dm_mapper_path(c->name, mapper, sizeof(mapper)) == 0 &&
            util_path(mpath, sizeof(mpath), root, mapper) == 0 && util_exists(mpath))
                observe_page(mpath, s);
}

int provplan_observe(const char *root, const struct provconf *c, struct provstate *out)
{
        struct provstate s = { 0 };
        struct power_meminfo m;
        char stale[PATH_MAX], tpm[PATH_MAX];
        int r = power_meminfo(root, &m);

        if (r < 0)
                return r;
        s.mem_total_kib = m.mem_total_kib;
        observe_conf(root, &s);
        if (util_path(stale, sizeof(stale), root, ARGS_STALE_PATH) == 0)
                s.initramfs_stale = util_exists(stale) == 1;
        /*
         * Security: whether key='s tpm2 is enrolled. devtmpfs and sysfs say it, not the disks: a disk
         * writer cannot make a TPM2 look absent. The firmware's table counts before the driver has
         * made the device: such a TPM2 is waited for by the setup, never left out.
         */
        s.tpm2 = (util_path(tpm, sizeof(tpm), root, "/dev/tpmrm0") == 0 && util_exists(tpm) == 1) ||
                 (util_path(tpm, sizeof(tpm), root, "/sys/firmware/acpi/tables/TPM2") == 0 && util_exists(tpm) == 1);
        if (*c->swapfile)
                observe_swapfile(root, c, &s);
        else
                observe_device(root, c, &s);
        *out = s;
        return 0;
}
