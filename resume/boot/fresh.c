/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether an image's ticket lets thaw resume it: authentic, fresh, and its file systems as it left them. */
#include "boot/fresh.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "image/imgverify.h"
#include "base/util.h"

static int mac_hook(void *ctx, const void *data, size_t len)
{
        return ticket_mac_update(ctx, data, len);
}

int fresh_verify_image(const char *path, const struct image_info *img, const struct ticket *t,
                       const struct secret *key, struct imgverify *v)
{
        struct ticket_mac *mac = NULL;
        uint8_t got[TICKET_MAC_SIZE];
        int r = 0;

        if (t && t->has_image_mac && key)
                r = ticket_mac_begin_check(key, t->image_mac, &mac);
        if (r == 0)
                r = imgverify_hooked(path, img, mac ? mac_hook : NULL, mac, v);
        if (r == 0 && v->result == IMGVERIFY_OK && mac) {
                r = ticket_mac_end(mac, got);
                mac = NULL;
                /* Security: any changed, moved or replayed sector of the image changes it. */
                if (r == 0 && CRYPTO_memcmp(got, t->image_mac, sizeof(got)) != 0) {
                        v->result = IMGVERIFY_CRC;
                        snprintf(v->why, sizeof(v->why), "it does not match the MAC its ticket holds (a sector "
                                 "changed, moved or replayed)");
                } else if (r == 0) {
                        size_t n = strlen(v->why);

                        snprintf(v->why + n, sizeof(v->why) - n, "; the MAC of the whole image matches its "
                                 "ticket");
                }
        }
        ticket_mac_free(mac);
        return r;
}

void fresh_time(int64_t t, char *buf, size_t size)
{
        time_t tt = (time_t)t;
        struct tm tm;

        if (!gmtime_r(&tt, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm) == 0)
                snprintf(buf, size, "@%lld", (long long)t);
}

/* Append one clause to a "; "-separated list. */
__attribute__((format(printf, 3, 4)))
static void add(char *buf, size_t size, const char *fmt, ...)
{
        size_t used = strlen(buf);
        va_list ap;

        if (used + 2 >= size)
                return;
        if (used)
                used += (size_t)snprintf(buf + used, size - used, ", ");
        va_start(ap, fmt);
        vsnprintf(buf + used, size - used, fmt, ap);
        va_end(ap);
}

/*
 * Security, and the file systems: the markers are the authenticated part an attacker who resets
 * the (unauthenticated) state still meets, and what catches a boot that went on without thaw. A
 * file system that cannot be found at boot (a root in a container the initramfs opens later) is
 * not checked, and the note says so; one that is found but cannot be read is refused.
 */
static enum fresh_verdict check_fs(const struct ticket *t, fresh_fs_read_fn fs_read, const char *made,
                                   char *why, size_t size, char *note, size_t nsize)
{
        enum fsmark_level level = t->writer == TICKET_WRITER_THAW ? FSMARK_ALL : FSMARK_MOUNT;
        char skipped[512] = "", dev[256], what[FSMARK_WHY_MAX];
        size_t checked = 0;

        for (size_t i = 0; i < t->n_fs; i++) {
                const struct fsmark *rec = &t->fs[i];
                struct fsmark now;
                int r;

                if (!rec->known) {
                        add(skipped, sizeof(skipped), "%s %s (thaw cannot read its markers)", rec->type, rec->uuid);
                        continue;
                }
                what[0] = dev[0] = '\0';
                r = fs_read ? fs_read(rec, level, dev, sizeof(dev), &now, what, sizeof(what)) : -ENOSYS;
                if (r == -ENOENT) {
                        add(skipped, sizeof(skipped), "%s %s (not found at boot)", rec->type, rec->uuid);
                        continue;
                }
                /*
                 * Security: a copy of the disk beside it (a snapshot attached to the VM) could be the
                 * one found; when copies differ, thaw cannot tell which one the image had mounted.
                 */
                if (r == -ENOTUNIQ)
                        return util_why(why, size, FRESH_STALE, "image of %s: %s %s is on %s and on another device "
                                        "that differs (%s): thaw cannot tell which one the image had mounted, and "
                                        "resuming over the changed one would corrupt it", made, rec->type, rec->uuid,
                                        dev, what);
                /*
                 * Security: found but unreadable (a broken superblock or journal: damage, or an edit
                 * meant to turn "changed" into "not checked"): refused, not skipped.
                 */
                if (r < 0)
                        return util_why(why, size, FRESH_STALE, "image of %s: the markers of %s %s on %s cannot be "
                                        "read (%s), so thaw cannot tell whether it changed since", made, rec->type,
                                        rec->uuid, dev[0] ? dev : "its device", what[0] ? what : strerror(-r));
                if (fsmark_compare(rec, &now, level, what, sizeof(what)) != 0)
                        return util_why(why, size, FRESH_STALE, "image of %s is older than its file systems: "
                                        "%s %s on %s changed since it was made (%s): resuming it would corrupt "
                                        "it", made, rec->type, rec->uuid, dev, what);
                checked++;
        }
        snprintf(note, nsize, "%zu file system(s) as the image left them (%s)%s%s", checked,
                 level == FSMARK_ALL ? "every marker" : "mount count and time only: the kernel wrote the image",
                 *skipped ? "; not checked: " : "", skipped);
        return FRESH_YES;
}

enum fresh_verdict fresh_judge(int read, const char *read_why, const struct ticket *t, const struct secret *key,
                               int key_error, fresh_fs_read_fn fs_read, char *why, size_t size, char *note,
                               size_t nsize)
{
        char made[40], when[40];

        note[0] = '\0';
        if (read == -ENOENT)
                return util_why(why, size, FRESH_NO_TICKET, "the image has no thaw ticket (written without thaw "
                                "hibernate, or by an older thaw): thaw cannot tell whether a boot went on without it, "
                                "and never resumes it");
        if (read == -EINVAL)
                return util_why(why, size, FRESH_STALE, "its ticket is malformed (%s)", read_why ? read_why : "");
        if (read < 0)
                return util_why(why, size, FRESH_STALE, "its ticket cannot be read (%s)", strerror(-read));
        if (!key)
                return util_why(why, size, FRESH_STALE, "its ticket cannot be checked: no ticket key of this "
                                "volume in the keyring (%s)", strerror(key_error < 0 ? -key_error : ENOKEY));
        /* Security: before any field of it is believed. */
        if (ticket_verify(t, key) != 0)
                return util_why(why, size, FRESH_STALE, "its ticket does not verify (edited, or not made with "
                                "this volume's key)");
        fresh_time(t->time, made, sizeof(made));
        fresh_time(t->state_time, when, sizeof(when));
        if (t->state == TICKET_CONSUMED)
                return util_why(why, size, FRESH_STALE, "image of %s was already resumed once, at %s: resuming "
                                "it again would corrupt file systems", made, when);
        if (t->state == TICKET_SUPERSEDED)
                return util_why(why, size, FRESH_STALE, "image of %s was superseded by the boot of %s (%s): "
                                "resuming it would corrupt file systems it had mounted", made, when,
                                t->state_why[0] ? t->state_why : "no reason recorded");
        return check_fs(t, fs_read, made, why, size, note, nsize);
}

/*
 * Security against a rollback: the counter goes up at every hibernation and every resume, and never
 * down, so only the newest image's ticket holds its value. One ahead of its ticket is older (a copy
 * put back): dropped. One behind, or none to read, is not this image's fault (another TPM, a vTPM
 * whose state was rolled back, a VM started without its TPM): nothing is resumed, and the image
 * is kept for a boot that has its TPM (rd.thaw.mismatch=).
 */
enum fresh_verdict fresh_judge_counter(const struct ticket *t, int read, const char *read_why, uint64_t now,
                                       char *why, size_t size, char *note, size_t nsize)
{
        char made[40];

        note[0] = '\0';
        if (!t->has_tpm_counter)
                return FRESH_YES;
        fresh_time(t->time, made, sizeof(made));
        if (read < 0)
                return util_why(why, size, FRESH_UNPROVEN, "image of %s cannot be checked against the TPM2 counter "
                                "its ticket names (value %" PRIu64 "): %s", made, t->tpm_counter,
                                read_why && *read_why ? read_why : strerror(-read));
        if (now > t->tpm_counter)
                return util_why(why, size, FRESH_STALE, "image of %s is %" PRIu64 " hibernations old: the TPM2 "
                                "counter is at %" PRIu64 ", its ticket says %" PRIu64 " (an older copy of the swap "
                                "device put back): resuming it would corrupt file systems", made,
                                now - t->tpm_counter, now, t->tpm_counter);
        if (now < t->tpm_counter)
                return util_why(why, size, FRESH_UNPROVEN, "the TPM2 counter (%" PRIu64 ") is behind the ticket of "
                                "the image of %s (%" PRIu64 "): another TPM, or its state was rolled back", now,
                                made, t->tpm_counter);
        snprintf(note, nsize, "TPM2 counter %" PRIu64 " as its ticket says", now);
        return FRESH_YES;
}
