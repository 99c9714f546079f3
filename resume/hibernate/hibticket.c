/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image ticket thaw hibernate writes (ticket.h): prepared before the system freezes, written after. */
#include "hibernate/hibticket.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "luks.h"
#include "tpm2_counter.h"
#include "base/util.h"

/*
 * Every mount's markers read once while the system runs: a file system whose markers cannot be
 * read stops the hibernation here rather than frozen, and those thaw does not know are listed in
 * h->unknown for the one warning.
 */
static int trial_read(struct hibticket *h, char *why, size_t size)
{
        char path[PATH_MAX], what[FSMARK_WHY_MAX];
        size_t used = 0;
        struct fsmark m;
        int r;

        h->unknown[0] = '\0';
        for (size_t i = 0; i < h->mounts.n; i++) {
                what[0] = '\0';
                r = util_path(path, sizeof(path), h->root, h->mounts.m[i].dev);
                if (r == 0)
                        r = fsmark_read(path, &m, what, sizeof(what));
                if (r < 0)
                        return util_why(why, size, r, "cannot read the markers of %s, mounted on %s (%s)",
                                        h->mounts.m[i].dev, h->mounts.m[i].dir, what[0] ? what : strerror(-r));
                if (!m.known && used < sizeof(h->unknown))
                        used += (size_t)snprintf(h->unknown + used, sizeof(h->unknown) - used, "%s%s on %s",
                                                 used ? ", " : "", m.type, h->mounts.m[i].dir);
        }
        return 0;
}

int hibticket_prepare(const char *root, const char *name, struct hibticket *h, char *why, size_t size)
{
        int r;

        memset(h, 0, sizeof(*h));
        snprintf(h->root, sizeof(h->root), "%s", root ? root : "");
        r = luks_active_device(name, h->dev, sizeof(h->dev));
        if (r < 0)
                return util_why(why, size, r, "cannot tell which LUKS2 device /dev/mapper/%s was opened from (%s)",
                                name, strerror(-r));
        r = luks_uuid(h->dev, h->uuid, sizeof(h->uuid));
        if (r < 0)
                return util_why(why, size, r, "cannot read the LUKS2 UUID of %s (%s)", h->dev, strerror(-r));
        r = ticket_key_load(h->uuid, &h->key);
        if (r < 0)
                return util_why(why, size, r, "no ticket key of %s in root's keyring (%s): it is put there when thaw "
                                "resume unlocks the device at boot, or thaw setup formats it; boot through thaw's "
                                "initramfs once", h->dev, strerror(-r));
        r = fsmark_mounts(h->root, &h->mounts);
        if (r < 0)
                return util_why(why, size, r, "cannot list the mounted file systems (%s)", strerror(-r));
        return trial_read(h, why, size);
}

/* A TPM that is there answers within seconds; one that is not must not hold the hibernation long. */
#define COUNTER_WAIT_MS 5000

/*
 * Security against a rollback: the counter is incremented before the image is written and the ticket
 * records the new value, so every older image's ticket is behind it. Before the freeze: no TPM
 * command while the system is frozen (the TPM driver may be suspended). A hibernation that fails
 * after this leaves the counter ahead of every ticket: the next one increments it again.
 */
int hibticket_count(struct hibticket *h, char *why, size_t size)
{
        struct luks_tokens *tokens = NULL;
        char what[512];
        bool want;
        int r;

        h->has_counter = false;
        h->no_counter[0] = '\0';
        r = luks_tokens_read(h->dev, &tokens);
        if (r < 0)
                return util_why(why, size, r, "cannot read the LUKS2 tokens of %s (%s)", h->dev, strerror(-r));
        want = tpm2_counter_wanted(tokens);
        luks_tokens_free(tokens);
        if (!want)
                return 0;
        r = tpm2_counter_volume(h->root, h->uuid, h->key, TPM2_COUNTER_INCREMENT, clock_now_ms() + COUNTER_WAIT_MS,
                                &h->counter, what, sizeof(what));
        if (r == -ENOENT) {
                snprintf(h->no_counter, sizeof(h->no_counter), "%s", what);
                return 0;
        }
        if (r < 0)
                return util_why(why, size, r, "%s: the next boot could not tell this image from an older copy", what);
        h->has_counter = true;
        return 0;
}

int hibticket_write(struct hibticket *h, enum ticket_writer w, const struct hibticket_image *img, char *why,
                    size_t size)
{
        char path[PATH_MAX], what[FSMARK_WHY_MAX];
        struct ticket *t = &h->t;
        size_t used = 0;
        int r;

        r = ticket_new(t);
        if (r < 0)
                return util_why(why, size, r, "cannot make a ticket (%s)", strerror(-r));
        t->writer = w;
        if (img && img->mac) {
                t->has_image_mac = true;
                memcpy(t->image_mac, img->mac, sizeof(t->image_mac));
        }
        if (img) {
                t->has_image_head = true;
                t->image_crc32 = img->crc32;
                t->image_first_map = img->first_map;
                t->image_pages = img->pages;
        }
        h->unknown[0] = '\0';
        for (size_t i = 0; i < h->mounts.n && t->n_fs < TICKET_FS_MAX; i++) {
                struct fsmark *m = &t->fs[t->n_fs];

                what[0] = '\0';
                r = util_path(path, sizeof(path), h->root, h->mounts.m[i].dev);
                if (r == 0)
                        r = fsmark_read(path, m, what, sizeof(what));
                /*
                 * Security of the file systems: one whose markers cannot be read would not be checked
                 * at boot, so the image would be resumed over whatever happened to it: no ticket.
                 */
                if (r < 0)
                        return util_why(why, size, r, "cannot read the markers of %s, mounted on %s (%s)",
                                        h->mounts.m[i].dev, h->mounts.m[i].dir, what[0] ? what : strerror(-r));
                if (!m->known && used < sizeof(h->unknown))
                        used += (size_t)snprintf(h->unknown + used, sizeof(h->unknown) - used, "%s%s on %s",
                                                 used ? ", " : "", m->type, h->mounts.m[i].dir);
                t->n_fs++;
        }
        t->has_tpm_counter = h->has_counter;
        t->tpm_counter = h->has_counter ? h->counter : 0;
        r = ticket_seal(t, h->key);
        if (r < 0)
                return util_why(why, size, r, "cannot seal the ticket (%s)", strerror(-r));
        r = ticket_write(h->dev, t);
        if (r < 0)
                return util_why(why, size, r, "cannot write the ticket to the LUKS2 header of %s (%s)", h->dev,
                                strerror(-r));
        return 0;
}

void hibticket_free(struct hibticket *h)
{
        if (!h)
                return;
        secret_free(h->key);
        h->key = NULL;
}
