/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The decisions of `thaw resume`: unlock the swap device, hand an image to the kernel, or step aside. */
#include "boot/resume.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "base/clock.h"
#include "dev/devcheck.h"
#include "dev/devspec.h"
#include "dev/dm.h"
#include "boot/fresh.h"
#include "dev/fsmark.h"
#include "system/handoff.h"
#include "image/image.h"
#include "image/imgcheck.h"
#include "image/imgverify.h"
#include "luks.h"
#include "luks_mapping.h"
#include "image/machine.h"
#include "system/power.h"
#include "boot/state.h"
#include "boot/unlock.h"
#include "image/swsusp.h"
#include "tpm2_counter.h"
#include "tpm2_lock.h"
#include "ticket.h"
#include "tpm2_token.h"
#include "base/util.h"

#define POLL_MS 200           /* device and mapping polling interval */
#define MAPPING_GRACE_MS 2000 /* the mapping node may lag the activation */
#define REASONS_MAX 2048
/*
 * The TPM lock's wait for a TPM device, within rd.thaw.timeout='s deadline: a driver that is there
 * has made its device by then (tpm2_open_boot() gives one 1 s), and a VM without a TPM must not
 * wait the whole timeout before its handoff or its boot for a lock it does not need.
 */
#define LOCK_WAIT_MS 3000

/* The volume's ticket key, which the unlock left in root's keyring (luks.c). */
static int boot_ticket_key(const char *dev, struct secret **out)
{
        char uuid[64];
        int r = luks_uuid(dev, uuid, sizeof(uuid));

        return r < 0 ? r : ticket_key_load(uuid, out);
}

static int boot_fs_read(const struct fsmark *rec, enum fsmark_level level, char *dev, size_t dsize, struct fsmark *m,
                        char *why, size_t size)
{
        int r = fsmark_find(rec->uuid, dev, dsize);

        if (r == 0)
                r = fsmark_read_as(dev, rec->type, m, why, size);
        return r < 0 ? r : fsmark_others("", dev, rec, level, why, size);
}

static int boot_counter(const char *root, const char *dev, const struct secret *key, enum tpm2_counter_op op,
                        int64_t deadline_ms, uint64_t *value, char *why, size_t size)
{
        char uuid[64];
        int r = luks_uuid(dev, uuid, sizeof(uuid));

        if (r < 0) {
                snprintf(why, size, "cannot read the LUKS2 UUID of %s (%s)", dev, strerror(-r));
                return r;
        }
        return tpm2_counter_volume(root, uuid, key, op, deadline_ms, value, why, size);
}

static int boot_counter_read(const char *root, const char *dev, const struct secret *key, int64_t deadline_ms,
                             uint64_t *value, char *why, size_t size)
{
        return boot_counter(root, dev, key, TPM2_COUNTER_READ, deadline_ms, value, why, size);
}

static int boot_counter_increment(const char *root, const char *dev, const struct secret *key,
                                  int64_t deadline_ms, uint64_t *value, char *why, size_t size)
{
        return boot_counter(root, dev, key, TPM2_COUNTER_INCREMENT, deadline_ms, value, why, size);
}

const struct resume_ops resume_default_ops = {
        .probe = luks_probe,
        .fetch = keysrc_fetch,
        .tokens = luks_tokens_read,
        .tokens_free = luks_tokens_free,
        .check_header = luks_header_check,
        .activate = luks_activate,
        .activate_passphrase = luks_activate_passphrase,
        .deactivate = luks_deactivate,
        .is_active = luks_is_active,
        .check_mapping = luks_mapping_check,
        .handoff = handoff_write,
        .ticket_read = ticket_read,
        .ticket_set_state = ticket_set_state,
        .ticket_key = boot_ticket_key,
        .fs_read = boot_fs_read,
        .poweroff = power_off_now,
        .tpm_counter_read = boot_counter_read,
        .tpm_counter_increment = boot_counter_increment,
        .tpm_lock = tpm2_lock_boot,
};

#define SAY resume_say

/*
 * What one run did, for the state file: filled in as run() goes (note_*() as it gets there, settle()
 * once its outcome is decided), completed and written by resume_run() alone.
 */
struct resume_result {
        struct state state;
        char dev[PATH_MAX];     /* the LUKS2 device once its header passed, "" before: its ticket may be written */
};

/* An outcome's line, cut where log_sayf() cuts every line; the state file holds one. */
#define LINE_SIZE sizeof(((struct state *)0)->message)

/*
 * The one place a run's outcome is recorded, and how every path of run() ends: its line (said
 * already) becomes the state's message and reason (if not NULL) the failed check, whatever is said
 * after it (the TPM lock, the ticket, a failed power-off).
 */
static enum resume_outcome settle(const struct resume_ctx *c, enum resume_outcome o, const char *reason,
                                  const char *line)
{
        if (c->result) {
                snprintf(c->result->state.message, sizeof(c->result->state.message), "%s", line);
                snprintf(c->result->state.reason, sizeof(c->result->state.reason), "%s", reason ? reason : "");
        }
        return o;
}

__attribute__((format(printf, 5, 0)))
static void vsay_kept(const struct resume_ctx *c, int level, char *line, size_t size, const char *fmt, va_list ap)
{
        if (vsnprintf(line, size, fmt, ap) < 0)
                line[0] = '\0';
        SAY(c, level, "%s", line);
}

/* A line said where it happens and kept for the outcome decided later (noresume's, a refused check's). */
__attribute__((format(printf, 5, 6)))
static void say_kept(const struct resume_ctx *c, int level, char *line, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsay_kept(c, level, line, size, fmt, ap);
        va_end(ap);
}

/* The outcome decided and its line said at once: the usual end of a path. */
__attribute__((format(printf, 5, 6)))
static enum resume_outcome conclude(const struct resume_ctx *c, enum resume_outcome o, const char *reason, int level,
                                    const char *fmt, ...)
{
        char line[LINE_SIZE];
        va_list ap;

        va_start(ap, fmt);
        vsay_kept(c, level, line, sizeof(line), fmt, ap);
        va_end(ap);
        return settle(c, o, reason, line);
}

static void note_header_ok(const struct resume_ctx *c, const char *dev)
{
        if (c->result)
                snprintf(c->result->dev, sizeof(c->result->dev), "%s", dev);
}

static void note_device(const struct resume_ctx *c, const char *device)
{
        if (c->result)
                snprintf(c->result->state.device, sizeof(c->result->state.device), "%s", device);
}

static int64_t max64(int64_t a, int64_t b)
{
        return a > b ? a : b;
}

static void sleep_until(int64_t deadline_ms)
{
        int64_t left = deadline_ms - clock_now_ms();

        if (left > 0)
                clock_sleep_ms(left < POLL_MS ? left : POLL_MS);
}

/* Poll until the device appears or the deadline passes (checked once even if it has passed). */
static int wait_device(const struct resume_ctx *c, int64_t deadline, char *dev, size_t size)
{
        struct devspec_wait w = { 0 };
        int said = 0;

        for (;;) {
                int64_t now = clock_now_ms();
                bool final = now >= deadline;
                int r = devspec_poll(c->root, c->args->device, &w, now, final, dev, size);

                if (r != -ENOENT)
                        return r;
                if (final)
                        return -ETIMEDOUT;
                if (!said++)
                        SAY(c, LOG_INFO, "waiting up to %u s for %s", c->args->timeout_s,
                            c->args->device);
                sleep_until(deadline);
        }
}

static int wait_path(const char *path, int64_t deadline)
{
        for (;;) {
                if (util_exists(path))
                        return 0;
                if (clock_now_ms() >= deadline)
                        return -ETIMEDOUT;
                sleep_until(deadline);
        }
}

/*
 * 1 if the mapping holds a file system with the swap file in it (resume_offset= and a file system
 * signature, not a swap or image one, at the start): an encrypted root, which the boot mounts.
 */
static int holds_file_system(const struct resume_ctx *c)
{
        char rel[DM_MAPPER_PATH_MAX], path[PATH_MAX], type[64];

        if (c->args->offset == 0 || dm_mapper_path(c->args->name, rel, sizeof(rel)) < 0 ||
            util_path(path, sizeof(path), c->root, rel) < 0 || devcheck_signature(path, type, sizeof(type)) != 1)
                return 0;
        return strcmp(type, "swap") != 0 && strcmp(type, "swsuspend") != 0;
}

/* Close the mapping so the real system cannot swapon it and destroy the image. */
static int close_mapping(const struct resume_ctx *c, char *note, size_t size)
{
        int r;

        /*
         * A swap file on an encrypted root: closing the root's mapping would stop the boot, and
         * would not protect the image anyway (swapon(8) reinitialises a swap file that holds one).
         */
        if (holds_file_system(c)) {
                snprintf(note, size, "mapping left open for the file system on it (activating the swap "
                         "file would destroy the image)");
                return 0;
        }
        r = c->ops->deactivate(c->args->name);

        if (r < 0)
                snprintf(note, size, "closing the mapping failed (%s): do not use it as swap",
                         strerror(-r));
        else
                snprintf(note, size, "mapping closed");
        return r;
}

/* Why an image is not handed over: the state's reason, the outcome line's why, and what to do. */
struct refusal {
        const char *reason;  /* imgcheck_name(), or the ticket's: "stale", "no-ticket", "tpm-counter" */
        char why[768];
        char advice[256];    /* "" unless a boot on the right machine would resume it (advise()) */
};

/*
 * rd.thaw.verify=1: what the kernel's loader checks last (chunk lengths, CRC32), checked first;
 * and with a ticket from thaw's writer the HMAC of the whole stream, under the ticket key.
 * Security: then any changed, moved or replayed sector of the image is refused before the handoff.
 */
static int verify(const struct resume_ctx *c, const char *dev, const char *mapper, const struct image_info *img,
                  const struct ticket *t, struct refusal *ref)
{
        int64_t t0 = clock_now_ms();
        struct secret *key = NULL;
        struct imgverify v;
        int r = 0;

        /* The ticket passed: its key is there (a ticket without an image MAC needs none). */
        if (t && t->has_image_mac && c->ops->ticket_key)
                r = c->ops->ticket_key(dev, &key);
        if (r == 0)
                r = fresh_verify_image(mapper, img, t, key, &v);
        secret_free(key);
        if (r < 0 || v.result != IMGVERIFY_OK) {
                ref->reason = imgcheck_name(IMGCHECK_DAMAGED);
                if (r < 0)
                        snprintf(ref->why, sizeof(ref->why), "image data is damaged: it cannot be read (%s)",
                                 strerror(-r));
                else
                        snprintf(ref->why, sizeof(ref->why), "image data is damaged: %s", v.why);
                return 1;
        }
        SAY(c, LOG_INFO, "image verified in %" PRId64 " ms: %s", clock_now_ms() - t0, v.why);
        return 0;
}

/*
 * For a check a boot on the right machine would pass (the image is fine, this boot is not its
 * machine): what to do to resume it, for rd.thaw.mismatch=poweroff. "" for a damaged image.
 */
static void advise(enum imgcheck_result r, const struct image_info *img, char *advice, size_t size)
{
        switch (r) {
        case IMGCHECK_MEMORY:
                snprintf(advice, size, "start the VM again with %llu MiB to resume it, or boot with "
                         "rd.thaw.mismatch=discard to drop it", imgcheck_mib(img->num_physpages));
                break;
        case IMGCHECK_LZ4:
        case IMGCHECK_FLAGS:
                snprintf(advice, size, "boot a kernel that reads its format (the one that wrote it) to resume "
                         "it, or boot with rd.thaw.mismatch=discard to drop it");
                break;
        case IMGCHECK_HW_SIG:
        case IMGCHECK_E820:
                snprintf(advice, size, "start the VM again with the machine shape it hibernated on to resume "
                         "it, or boot with rd.thaw.mismatch=discard to drop it");
                break;
        default:
                advice[0] = '\0';
        }
}

/*
 * What the kernel will check once it has consumed the image, checked before it sees it: 0 to hand
 * off, 1 (ref filled in) if the kernel would refuse the image, 2 (ref's why) if it is not the image
 * its ticket t was made for. Facts this machine cannot tell do not count.
 */
static int precheck(const struct resume_ctx *c, const char *dev, const char *mapper, const struct ticket *t,
                    struct refusal *ref)
{
        int64_t t0 = clock_now_ms();
        struct machine_info m;
        struct image_info img;
        struct imgcheck chk;
        int r;

        r = image_read(mapper, c->args->offset, &img);
        if (r < 0) {
                ref->reason = imgcheck_name(IMGCHECK_MALFORMED);
                snprintf(ref->why, sizeof(ref->why), "the image cannot be read (%s)", strerror(-r));
                return 1;
        }
        /*
         * Security of the file systems: the ticket holds for the image thaw's writer wrote under it,
         * not an older one put back beneath the current header (the header page is encrypted: its
         * CRC32 and map block cannot be made to match without the key). 2: stale.
         */
        if (t && t->has_image_head && img.defect == IMAGE_OK &&
            (img.crc32 != t->image_crc32 || img.image != t->image_first_map || img.pages != t->image_pages)) {
                snprintf(ref->why, sizeof(ref->why), "the image on the device is not the one its ticket was made "
                         "for (CRC32 %08" PRIx32 ", ticket %08" PRIx32 "): an older image put back?", img.crc32,
                         t->image_crc32);
                return 2;
        }
        machine_read(c->root, &m);
        imgcheck_run(&img, &m, c->args->s4_hwsig, &chk);
        if (chk.result != IMGCHECK_OK) {
                ref->reason = imgcheck_name(chk.result);
                snprintf(ref->why, sizeof(ref->why), "%s", chk.why);
                advise(chk.result, &img, ref->advice, sizeof(ref->advice));
                return 1;
        }
        if (c->args->verify && verify(c, dev, mapper, &img, t, ref))
                return 1;
        SAY(c, LOG_INFO, "image checks passed in %" PRId64 " ms: %" PRIu64 " pages, %s, made with %llu "
            "MiB (%s), e820 checksum %08" PRIx32 " (%s)", clock_now_ms() - t0, img.pages,
            image_compression(img.flags), imgcheck_mib(img.num_physpages),
            m.have_mem ? "as here" : "not checked", img.e820_crc,
            m.have_e820 ? "as here" : "not checked");
        return 0;
}

/*
 * rd.thaw.mismatch=: an image a boot on the right machine could resume (advice says how) powers
 * this one off before anything is mounted (poweroff, the default), or gives the swap back
 * (discard). A damaged one (advice "") is kept, out of the real system's swapon's reach, and the
 * boot goes on: its ticket is superseded at the end (resume_run()), so it is never resumed.
 */
static enum resume_outcome refuse(const struct resume_ctx *c, const char *mapper, const char *shown,
                                  const struct refusal *ref)
{
        char note[160];
        int r;

        if (c->args->mismatch_discard) {
                r = swsusp_unmark(mapper, c->args->offset);
                if (r == 0)
                        return conclude(c, RESUME_MISMATCH_DISCARDED, ref->reason, LOG_WARNING,
                                        "not resuming the image on %s: %s; rd.thaw.mismatch=discard: "
                                        "image discarded, boot continues, swap ready", shown, ref->why);
                SAY(c, LOG_WARNING, "cannot discard the image on %s (%s): keeping it", shown,
                    strerror(-r));
        }
        /* Security of the user's work: closed, the mapping cannot be swapped on over the image. */
        close_mapping(c, note, sizeof(note));
        /*
         * Security of the file systems: booting past an image that could still be resumed would
         * mount what it had open, after which resuming it corrupts them. Nothing is mounted yet.
         */
        if (*ref->advice)
                return conclude(c, RESUME_POWEROFF, ref->reason, LOG_EMERG,
                                "not resuming the image on %s: %s; rd.thaw.mismatch=poweroff: powering off "
                                "before anything is mounted, image kept: %s", shown, ref->why, ref->advice);
        return conclude(c, RESUME_MISMATCH_KEPT, ref->reason, LOG_WARNING,
                        "not resuming the image on %s: %s; image kept, %s, boot continues without "
                        "resume (rd.thaw.mismatch=discard gives the swap back)", shown, ref->why, note);
}

/* resume_run()'s TPM2 lock: what it needs to know, filled in as run() gets there. */
struct resume_lock {
        char dev[PATH_MAX];   /* the LUKS2 device once probed, "" before */
        int64_t deadline_ms;  /* rd.thaw.timeout='s deadline once set, 0 before (then LOCK_WAIT_MS) */
        bool done;
        struct unlock_keys keys; /* the chain and the device's tokens, shared with the unlock */
};

/* A TPM's answers are awaited a few seconds, within rd.thaw.timeout='s deadline (the TPM lock's wait). */
static int64_t tpm_deadline(const struct resume_ctx *c)
{
        int64_t deadline = clock_now_ms() + LOCK_WAIT_MS;

        if (c->lock && c->lock->deadline_ms && c->lock->deadline_ms < deadline)
                deadline = c->lock->deadline_ms;
        return deadline;
}

/*
 * Security: once thaw is done, whatever the outcome (handoff, no image, image refused, wrong key,
 * another source won, an error), nothing later in this boot may unseal a thaw-tpm2 key: not a
 * shell, not the system that boots on, not the resumed one. So each lock PCR the boot could have
 * used (the chain's tpm2 sources', the device's thaw-tpm2 tokens') is extended right before the
 * handoff and at the end of every other path. A failure here is said and the boot goes on.
 */
static void lock_tpm(const struct resume_ctx *c)
{
        static const struct keychain none = { 0 };
        struct resume_lock *l = c->lock;
        const struct keychain *chain;
        char why[512], list[64];
        int64_t deadline;
        uint32_t pcrs;
        int r;

        if (!l || l->done || !c->ops->tpm_lock)
                return;
        l->done = true;
        chain = unlock_keys_chain(c, &l->keys);
        pcrs = tpm2_lock_pcrs(chain ? chain : &none, l->dev[0] ? unlock_keys_tokens(c, &l->keys, l->dev) : NULL);
        if (pcrs == 0)
                return;
        deadline = tpm_deadline(c);
        r = c->ops->tpm_lock(c->root, pcrs, deadline, why, sizeof(why));
        tpm2_pcrs_format(pcrs, list, sizeof(list));
        if (r == 0)
                SAY(c, LOG_INFO, "TPM2 lock PCR %s extended: no thaw-tpm2 key unseals for the rest of this "
                    "boot", list);
        else if (r == -ENODEV)
                SAY(c, LOG_INFO, "no TPM2 device (yet): lock PCR %s not extended", list);
        else
                SAY(c, LOG_WARNING, "cannot extend TPM2 lock PCR %s (%s): a thaw-tpm2 key may still unseal "
                    "later in this boot", list, why[0] ? why : strerror(-r));
}

/* The peak memory of this process so far, for whoever sizes the initramfs's RAM; nothing if unknown. */
static void say_peak_memory(const struct resume_ctx *c)
{
        char status[4096];
        const char *hwm;

        if (util_read_text_at(c->root, "/proc/self/status", status, sizeof(status)) < 0 ||
            !(hwm = strstr(status, "VmHWM:")))
                return;
        hwm += strlen("VmHWM:");
        hwm += strspn(hwm, " \t");
        SAY(c, LOG_INFO, "peak memory of thaw resume before the handoff: %.*s (VmHWM)", (int)strcspn(hwm, "\n"),
            hwm);
}

/*
 * The ticket's verdict on the image (fresh.h), said when it passes. FRESH_YES without ticket ops
 * (tests of other steps).
 */
static enum fresh_verdict judge_ticket(const struct resume_ctx *c, const char *dev, struct ticket *out, char *why,
                                       size_t size)
{
        char read_why[256] = "", note[768], made[40];
        struct secret *key = NULL;
        int64_t t0 = clock_now_ms();
        enum fresh_verdict v;
        struct ticket t;
        int r, kr = -ENOKEY;

        memset(out, 0, sizeof(*out));
        if (!c->ops->ticket_read)
                return FRESH_YES;
        r = c->ops->ticket_read(dev, &t, read_why, sizeof(read_why));
        if (r == 0 && c->ops->ticket_key)
                kr = c->ops->ticket_key(dev, &key);
        v = fresh_judge(r, read_why, &t, kr == 0 ? key : NULL, kr, c->ops->fs_read, why, size, note, sizeof(note));
        /* The counter's policy is its auth value, not PCRs: the lock PCR does not matter here. */
        if (v == FRESH_YES && t.has_tpm_counter) {
                char cwhy[384] = "", cnote[96];
                uint64_t now = 0;
                size_t used = strlen(note);

                r = c->ops->tpm_counter_read ? c->ops->tpm_counter_read(c->root, dev, key, tpm_deadline(c), &now,
                                                                        cwhy, sizeof(cwhy)) : -ENODEV;
                v = fresh_judge_counter(&t, r, cwhy, now, why, size, cnote, sizeof(cnote));
                if (v == FRESH_YES && used < sizeof(note))
                        snprintf(note + used, sizeof(note) - used, "; %s", cnote);
        }
        secret_free(key);
        if (v == FRESH_YES) {
                fresh_time(t.time, made, sizeof(made));
                SAY(c, LOG_INFO, "image ticket verified in %" PRId64 " ms: image of %s, %s", clock_now_ms() - t0,
                    made, note);
                *out = t;
        }
        return v;
}

/*
 * Security of the file systems: an image whose ticket is not fresh (a boot went on without it, it
 * was resumed once already, its file systems changed since) or not authentic must never be
 * resumed, not by this boot nor a later one. The boot goes on, so it is dropped and the swap given
 * back.
 */
static enum resume_outcome drop_stale(const struct resume_ctx *c, const char *mapper, const char *shown,
                                      const struct refusal *ref)
{
        char note[160];
        int r;

        r = swsusp_unmark(mapper, c->args->offset);
        if (r == 0)
                return conclude(c, RESUME_STALE, ref->reason, LOG_WARNING,
                                "not resuming the image on %s: %s; image discarded, boot continues, swap ready",
                                shown, ref->why);
        close_mapping(c, note, sizeof(note));
        return conclude(c, RESUME_STALE, ref->reason, LOG_WARNING,
                        "not resuming the image on %s: %s; it cannot be discarded (%s): %s, boot continues "
                        "without resume", shown, ref->why, strerror(-r), note);
}

/*
 * Security against a rollback: after the consumed mark, the TPM2 counter goes one past the ticket,
 * so that this image can never pass again, even with that mark reset and its disks rolled back
 * with it. No increment, no handoff.
 */
static int count_resume(const struct resume_ctx *c, const char *dev, const char *shown)
{
        struct secret *key = NULL;
        char why[384] = "";
        uint64_t now = 0;
        int r = c->ops->ticket_key ? c->ops->ticket_key(dev, &key) : -ENOKEY;

        if (r == 0)
                r = c->ops->tpm_counter_increment ? c->ops->tpm_counter_increment(c->root, dev, key, tpm_deadline(c),
                                                                                  &now, why, sizeof(why)) : -ENODEV;
        secret_free(key);
        if (r < 0)
                SAY(c, LOG_WARNING, "cannot increment the TPM2 counter of %s (%s)", shown, why[0] ? why : strerror(-r));
        else
                SAY(c, LOG_INFO, "TPM2 counter incremented to %" PRIu64 ": this image can never pass again", now);
        return r;
}

/* The image passed its checks: to the kernel, which resumes it (no return) or not; the disk tells which. */
static enum resume_outcome hand_over(const struct resume_ctx *c, const char *dev, const char *mapper,
                                     const char *shown, const struct ticket *t)
{
        const struct thaw_args *a = c->args;
        struct swsusp_header h;
        unsigned maj, min;
        char note[160];
        int r;

        r = dm_devnum(c->root, a->name, &maj, &min, NULL, 0);
        if (r < 0) {
                close_mapping(c, note, sizeof(note));
                return conclude(c, RESUME_NO_MAPPING, NULL, LOG_WARNING,
                                "cannot find the device number of %s (%s): image kept, %s", shown, strerror(-r), note);
        }
        /*
         * Security of the file systems: consumed before the kernel sees it, so that the image is
         * never resumed twice (a copy put back meets the markers too). No mark, no handoff.
         */
        if (c->ops->ticket_set_state && (r = c->ops->ticket_set_state(dev, TICKET_CONSUMED, "resumed")) < 0) {
                close_mapping(c, note, sizeof(note));
                return conclude(c, RESUME_KEPT, NULL, LOG_WARNING,
                                "cannot mark the image's ticket consumed on %s (%s): not resuming it, image "
                                "kept, %s, boot continues without resume", dev, strerror(-r), note);
        }
        if (t->has_tpm_counter && count_resume(c, dev, shown) < 0) {
                close_mapping(c, note, sizeof(note));
                return conclude(c, RESUME_KEPT, NULL, LOG_WARNING,
                                "not resuming the image on %s: its ticket is consumed, and without the TPM2 "
                                "counter a copy of it could pass again; %s, boot continues without resume",
                                shown, note);
        }
        lock_tpm(c); /* the resumed system must not unseal either */
        say_peak_memory(c);
        SAY(c, LOG_NOTICE, "resuming from %s (%u:%u, offset %" PRIu64 ")", shown, maj, min, a->offset);
        r = c->ops->handoff(c->root, maj, min, a->offset);
        /* Still here: the kernel found no image, refused it, or never looked. The disk tells which. */
        if (r < 0)
                SAY(c, LOG_WARNING, "handing %s to the kernel through /sys/power failed (%s)", shown,
                    strerror(-r));
        r = swsusp_read(mapper, a->offset, &h);
        if (r == 0 && h.kind == SWSUSP_SWAP)
                return conclude(c, RESUME_CONSUMED, NULL, LOG_WARNING,
                                "kernel did not resume the image on %s (it was consumed; see "
                                "kernel log): boot continues, swap ready", shown);
        /* Image still marked (or unreadable): it can still be resumed, so keep it from swapon. */
        close_mapping(c, note, sizeof(note));
        return conclude(c, RESUME_KEPT, NULL, LOG_WARNING,
                        "kernel did not look at the image on %s (hibernation unavailable?): image "
                        "kept, %s", shown, note);
}

static enum resume_outcome handle_image(const struct resume_ctx *c, const char *dev, const char *mapper,
                                        const char *shown)
{
        struct refusal ref = { .reason = NULL };
        char note[160];
        struct ticket t;
        int r;

        /*
         * An image is never handed to a kernel that will not look at it (lockdown says [disabled]):
         * the mapping would stay open and the real system's swapon would overwrite the image. If
         * /sys/power cannot be read, the handoff goes ahead and the disk tells what happened.
         */
        if (power_hibernation_available(c->root, ref.why, sizeof(ref.why)) == 0) {
                close_mapping(c, note, sizeof(note));
                return conclude(c, RESUME_UNAVAILABLE, NULL, LOG_WARNING,
                                "hibernation is unavailable on this boot (%s): image on %s kept, %s",
                                ref.why, shown, note);
        }
        switch (judge_ticket(c, dev, &t, ref.why, sizeof(ref.why))) {
        case FRESH_STALE:
                ref.reason = "stale";
                return drop_stale(c, mapper, shown, &ref);
        case FRESH_NO_TICKET:
                /*
                 * Never resumed by thaw, whatever the policy: powering off would gain nothing (no boot
                 * resumes it) and would let anyone who deletes the token stop the VM for good. This
                 * boot goes on, so the image is dropped as a stale one.
                 */
                ref.reason = "no-ticket";
                return drop_stale(c, mapper, shown, &ref);
        case FRESH_UNPROVEN:
                ref.reason = "tpm-counter";
                snprintf(ref.advice, sizeof(ref.advice), "start the VM again with the TPM it hibernated with to "
                         "resume it, or boot with rd.thaw.mismatch=discard to drop it");
                return refuse(c, mapper, shown, &ref);
        case FRESH_YES:
                break;
        }
        /* The kernel consumes the image before its own checks: a refusal there would lose it. */
        r = precheck(c, dev, mapper, &t, &ref);
        if (r == 2) {
                ref.reason = "stale";
                return drop_stale(c, mapper, shown, &ref);
        }
        if (r)
                return refuse(c, mapper, shown, &ref);
        return hand_over(c, dev, mapper, shown, &t);
}

/* No image at resume_offset. The mapping stays open for swap only if nothing there could be lost. */
static enum resume_outcome no_image(const struct resume_ctx *c, const char *mapper, const char *shown,
                                    const struct swsusp_header *h)
{
        const struct thaw_args *a = c->args;
        struct swsusp_header h0;
        char note[160];

        /*
         * A stale resume_offset= (left from a swap file setup, say) must not hide an image at the
         * start of the device: swapon would rewrite that page. The image is kept for a boot with
         * the right offset.
         */
        if (a->offset != 0 && swsusp_read(mapper, 0, &h0) == 0 && h0.kind == SWSUSP_IMAGE) {
                close_mapping(c, note, sizeof(note));
                return conclude(c, RESUME_OFFSET_MISMATCH, NULL, LOG_WARNING,
                                "no hibernation image on %s at resume_offset=%" PRIu64 ", but page 0 "
                                "holds one: the offsets disagree; image kept, %s, boot continues without resume",
                                shown, a->offset, note);
        }
        if (h->kind == SWSUSP_SWAP)
                return conclude(c, RESUME_NO_IMAGE, NULL, LOG_NOTICE,
                                "no hibernation image on %s: boot continues, swap ready", shown);
        /* Neither image nor swap: whatever is there may matter (an image elsewhere), so hands off. */
        close_mapping(c, note, sizeof(note));
        return conclude(c, RESUME_FOREIGN, NULL, LOG_WARNING,
                        "no hibernation image and no swap signature on %s at offset %" PRIu64 ": %s "
                        "(an image may sit elsewhere: check resume_offset=; mkswap makes it swap), boot continues "
                        "without resume", shown, a->offset, note);
}

/*
 * Security: the header is not authenticated, and libcryptsetup maps whatever it says (a segment
 * switched to cipher_null maps the disk in the clear). Before anything reads through the mapping,
 * its live table, as the kernel holds it, must be the encryption the header says; one thaw made
 * and one that was already active alike. A mapping that is not is closed unread, whatever it holds
 * (even a root file system: its content is not what the header promises). 1 if refused, its line
 * said and kept in line.
 */
static int check_mapping(const struct resume_ctx *c, const char *dev, const char *shown, char *line, size_t size)
{
        char why[512], note[160];
        int r;

        if (!c->ops->check_mapping)
                return 0;
        r = c->ops->check_mapping(c->root, dev, c->args->name, why, sizeof(why));
        if (r == 0)
                return 0;
        if (!why[0])
                snprintf(why, sizeof(why), "it cannot be checked (%s)", strerror(-r));
        r = c->ops->deactivate(c->args->name);
        if (r < 0)
                snprintf(note, sizeof(note), "closing the mapping failed (%s): do not use it", strerror(-r));
        else
                snprintf(note, sizeof(note), "mapping closed");
        say_kept(c, LOG_WARNING, line, size,
                 "%s is not mapped as its header says: %s; %s, boot continues without resume", shown, why, note);
        return 1;
}

static enum resume_outcome after_unlock(const struct resume_ctx *c, const char *dev, int64_t deadline)
{
        const struct thaw_args *a = c->args;
        char mapper[PATH_MAX], shown[DM_MAPPER_PATH_MAX], note[160], line[LINE_SIZE];
        struct swsusp_header h;
        int r;

        r = dm_mapper_path(a->name, shown, sizeof(shown));
        if (r < 0) /* args_name_valid() let the name in: cannot happen, but never build a bad path */
                snprintf(shown, sizeof(shown), "/dev/mapper/(bad name)");
        else
                r = util_path(mapper, sizeof(mapper), c->root, shown);
        if (r == 0)
                r = wait_path(mapper, max64(deadline, clock_now_ms() + MAPPING_GRACE_MS));
        if (r < 0) {
                close_mapping(c, note, sizeof(note));
                return conclude(c, RESUME_NO_MAPPING, NULL, LOG_WARNING,
                                "%s did not appear after unlocking %s: %s, boot continues without "
                                "resume; the image, if any, is kept", shown, dev, note);
        }
        note_device(c, shown);
        if (check_mapping(c, dev, shown, line, sizeof(line)))
                return settle(c, RESUME_BAD_MAPPING, NULL, line);
        r = swsusp_read(mapper, a->offset, &h);
        if (r < 0) {
                close_mapping(c, note, sizeof(note));
                return conclude(c, RESUME_NO_MAPPING, NULL, LOG_WARNING,
                                "cannot read the header page of %s at offset %" PRIu64 " (%s): %s, "
                                "boot continues without resume", shown, a->offset, strerror(-r), note);
        }
        if (h.kind == SWSUSP_IMAGE)
                return handle_image(c, dev, mapper, shown);
        return no_image(c, mapper, shown, &h);
}

/*
 * Security: the LUKS2 header is not authenticated. Before any key is tried on it, it must be what
 * thaw set up (luks_policy.h) and, if a fingerprint is pinned, that very header: a cipher_null
 * segment would map an attacker's cleartext image, a cipher_null keyslot opens with any key, a
 * digest asking for 2^32 iterations would hold the boot. Refused: nothing unlocked, nothing written;
 * a negative errno, the refusal's line said and kept in line.
 */
static int check_header(const struct resume_ctx *c, const char *dev, int64_t deadline, char *line, size_t size)
{
        struct luks_policy p = unlock_policy(c, deadline);
        char why[LUKS_POLICY_WHY_MAX], note[512] = "nothing unlocked", closed[160];
        int r;

        if (!c->ops->check_header)
                return 0;
        why[0] = '\0';
        r = c->ops->check_header(dev, &p, NULL, why, sizeof(why));
        if (r == 0)
                return 0;
        if (!why[0])
                snprintf(why, sizeof(why), "cannot read it (%s)", strerror(-r));
        /*
         * Security: a mapping already open over a refused header (opened by another tool, or by a
         * token of the forged header) must not become this system's swap, nor the next image's home.
         */
        if (c->ops->is_active(c->args->name) == 1) {
                close_mapping(c, closed, sizeof(closed));
                snprintf(note, sizeof(note), "/dev/mapper/%s was already open: %s", c->args->name, closed);
        }
        say_kept(c, LOG_WARNING, line, size,
                 "LUKS2 header of %s refused before any key was tried: %s; %s, boot continues "
                 "without resume", dev, why, note);
        return r < 0 ? r : -EINVAL;
}

/* The header passed: open the device (or take its open mapping) and go on with what it holds. */
static enum resume_outcome open_device(const struct resume_ctx *c, const char *dev, int64_t deadline)
{
        const struct thaw_args *a = c->args;
        char why[REASONS_MAX];
        int r;

        if (c->ops->is_active(a->name) == 1) {
                SAY(c, LOG_INFO, "/dev/mapper/%s is already active: using it", a->name);
                return after_unlock(c, dev, deadline);
        }
        /*
         * Security: the key source comes only from the kernel command line or thaw.conf, which the
         * boot chain and the initramfs vouch for, never from the device. The LUKS2 header, its
         * thaw-* tokens included, is unauthenticated: whoever can write the disk could format it
         * with a "key" from keyfile:/etc/os-release or a predictable fw_cfg blob, name that source
         * in a token, and have us hand the kernel an image of their making.
         */
        if (!*a->key)
                return conclude(c, RESUME_NO_KEY_SOURCE, NULL, LOG_WARNING,
                                "no key source configured for %s (rd.thaw.key= or key= in %s): boot "
                                "continues without resume; the image, if any, is kept", dev, ARGS_CONF_PATH);
        r = unlock_device(c, &c->lock->keys, dev, deadline, why, sizeof(why));
        if (r == -LUKS_EPOLICY)
                return conclude(c, RESUME_BAD_HEADER, NULL, LOG_WARNING,
                                "LUKS2 header of %s refused: %s; nothing unlocked, boot continues without resume",
                                dev, why);
        if (r < 0)
                return conclude(c, RESUME_NO_KEY, NULL, LOG_WARNING,
                                "no key source unlocked %s (%s): boot continues without resume; the "
                                "image, if any, is kept", dev, why);
        return after_unlock(c, dev, deadline);
}

static enum resume_outcome run(const struct resume_ctx *c)
{
        const struct thaw_args *a = c->args;
        char dev[PATH_MAX], skip[LINE_SIZE] = "", line[LINE_SIZE];
        int64_t deadline;
        int r;

        if (a->disabled)
                return conclude(c, RESUME_DISABLED, NULL, LOG_NOTICE, "resume disabled (rd.thaw=0)");
        if (!*a->device)
                return conclude(c, RESUME_NO_DEVICE, NULL, LOG_NOTICE,
                                "no device configured (rd.thaw.device=): nothing to do");
        /*
         * noresume: the user wants this boot fresh. Nothing is unlocked, but the device is found so
         * that an image's ticket can be superseded (resume_run()): this boot mounts what it had open.
         * Its line comes first, and stays the outcome's if the device is missing or its header refused.
         */
        if (a->noresume)
                say_kept(c, LOG_NOTICE, skip, sizeof(skip),
                         "%s given: not unlocking %s; an image on it will not be resumed",
                         a->noresume_by ? a->noresume_by : "noresume", a->device);
        if (devspec_check(a->device) < 0)
                return conclude(c, RESUME_BAD_DEVICE, NULL, LOG_WARNING,
                                "rd.thaw.device=%s is not UUID=, PARTUUID=, LABEL= or a /dev path: "
                                "boot continues without resume", a->device);
        deadline = clock_now_ms() + (int64_t)a->timeout_s * 1000;
        if (c->lock)
                c->lock->deadline_ms = deadline;
        r = wait_device(c, deadline, dev, sizeof(dev));
        if (r < 0 && a->noresume)
                return settle(c, RESUME_NORESUME, NULL, skip);
        if (r < 0)
                return conclude(c, RESUME_DEVICE_TIMEOUT, NULL, LOG_WARNING,
                                "device %s did not appear within %u s: boot continues without resume",
                                a->device, a->timeout_s);
        r = c->ops->probe(dev);
        if (r <= 0 && a->noresume)
                return settle(c, RESUME_NORESUME, NULL, skip);
        if (r == 0)
                return conclude(c, RESUME_NOT_LUKS, NULL, LOG_WARNING,
                                "%s is not a LUKS2 container: boot continues without resume", dev);
        if (r < 0)
                return conclude(c, RESUME_NOT_LUKS, NULL, LOG_WARNING,
                                "%s is not a LUKS2 container (cannot read it: %s): boot "
                                "continues without resume", dev, strerror(-r));
        if (c->lock)
                snprintf(c->lock->dev, sizeof(c->lock->dev), "%s", dev);
        r = check_header(c, dev, deadline, line, sizeof(line));
        if (r < 0 && !a->noresume)
                return settle(c, RESUME_BAD_HEADER, NULL, line);
        if (r == 0)
                note_header_ok(c, dev);
        if (a->noresume)
                return settle(c, RESUME_NORESUME, NULL, skip);
        return open_device(c, dev, deadline);
}

const char *resume_outcome_name(enum resume_outcome o)
{
        static const char *const names[] = {
                [RESUME_DISABLED] = "disabled",
                [RESUME_NO_DEVICE] = "no-device",
                [RESUME_NORESUME] = "noresume",
                [RESUME_BAD_DEVICE] = "bad-device",
                [RESUME_DEVICE_TIMEOUT] = "device-timeout",
                [RESUME_NOT_LUKS] = "not-luks",
                [RESUME_BAD_HEADER] = "bad-header",
                [RESUME_NO_KEY_SOURCE] = "no-key-source",
                [RESUME_NO_KEY] = "no-key",
                [RESUME_NO_MAPPING] = "no-mapping",
                [RESUME_BAD_MAPPING] = "bad-mapping",
                [RESUME_NO_IMAGE] = "no-image",
                [RESUME_FOREIGN] = "foreign",
                [RESUME_OFFSET_MISMATCH] = "offset-mismatch",
                [RESUME_UNAVAILABLE] = "unavailable",
                [RESUME_CONSUMED] = "consumed",
                [RESUME_KEPT] = "kept",
                [RESUME_MISMATCH_KEPT] = "mismatch-kept",
                [RESUME_MISMATCH_DISCARDED] = "mismatch-discarded",
                [RESUME_STALE] = "stale",
                [RESUME_POWEROFF] = "poweroff",
        };

        return (size_t)o < sizeof(names) / sizeof(names[0]) && names[o] ? names[o] : "unknown";
}

/*
 * Security of the file systems: this boot goes on, and mounts what a hibernated system had open;
 * its image, if the device holds one with a fresh ticket, must never be resumed afterwards. The
 * ticket is marked superseded (token metadata, no key needed) before the initramfs leaves. Only on
 * a header that passed the policy: a refused one is not written to.
 */
static void supersede(const struct resume_ctx *c, struct resume_result *res, enum resume_outcome o)
{
        char made[40], line[512];
        struct ticket t;
        bool gone = o == RESUME_NO_IMAGE || o == RESUME_STALE || o == RESUME_MISMATCH_DISCARDED;
        int r;

        if (!*res->dev || !c->ops->ticket_read || !c->ops->ticket_set_state || o == RESUME_POWEROFF)
                return;
        if (c->ops->ticket_read(res->dev, &t, NULL, 0) < 0 || t.state != TICKET_FRESH)
                return;
        fresh_time(t.time, made, sizeof(made));
        r = c->ops->ticket_set_state(res->dev, TICKET_SUPERSEDED, resume_outcome_name(o));
        if (r < 0) {
                snprintf(line, sizeof(line), "cannot mark the ticket of the image of %s on %.200s superseded (%s): "
                         "its file-system markers still keep it from being resumed", made, res->dev, strerror(-r));
                resume_say(c, LOG_WARNING, "%s", line);
        } else if (gone) {
                snprintf(line, sizeof(line), "ticket of the image of %s marked superseded (%s): no image of it "
                         "is left to resume", made, resume_outcome_name(o));
                resume_say(c, LOG_INFO, "%s", line);
        } else {
                snprintf(line, sizeof(line), "image of %s superseded by this boot (%s): it will never be resumed "
                         "(resuming it would corrupt file systems it had mounted)", made, resume_outcome_name(o));
                resume_say(c, LOG_WARNING, "%s", line);
        }
        snprintf(res->state.ticket, sizeof(res->state.ticket), "%s", line);
}

enum resume_outcome resume_run(const struct resume_ctx *c)
{
        struct resume_result res = { .dev = "" };
        struct resume_lock lock = { .done = false, .keys = { .parsed = false } };
        struct resume_ctx outer = *c;
        enum resume_outcome o;
        int r;

        outer.lock = &lock;
        outer.result = &res;
        o = run(&outer);
        /* What is said from here on follows the outcome, whose line run() has settle()d. */
        lock_tpm(&outer); /* every path that did not hand off */
        unlock_keys_free(&outer, &lock.keys);
        if (o == RESUME_POWEROFF && c->ops->poweroff) {
                r = c->ops->poweroff(c->root);
                /* Still here: it could not. The boot goes on, and the image is superseded below. */
                if (r < 0) {
                        resume_say(c, LOG_WARNING, "cannot power off (%s): boot continues without "
                            "resume", strerror(-r));
                        o = RESUME_MISMATCH_KEPT;
                }
        }
        supersede(&outer, &res, o);
        snprintf(res.state.outcome, sizeof(res.state.outcome), "%s", resume_outcome_name(o));
        if (!*res.state.device)
                snprintf(res.state.device, sizeof(res.state.device), "%s", c->args->device);
        r = state_write(c->root, &res.state);
        if (r < 0)
                resume_say(c, LOG_WARNING, "cannot write %s (%s): thaw status will not know "
                    "what happened at this boot", STATE_PATH, strerror(-r));
        return o;
}
