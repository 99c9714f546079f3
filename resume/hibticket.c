/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image ticket thaw hibernate writes (ticket.h): prepared before the system freezes, written after. */
#include "hibticket.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "luks.h"
#include "util.h"

__attribute__((format(printf, 4, 5)))
static int fail(char *why, size_t size, int r, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return r;
}

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
                        return fail(why, size, r, "cannot read the markers of %s, mounted on %s (%s)",
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
                return fail(why, size, r, "cannot tell which LUKS2 device /dev/mapper/%s was opened from (%s)",
                            name, strerror(-r));
        r = luks_uuid(h->dev, h->uuid, sizeof(h->uuid));
        if (r < 0)
                return fail(why, size, r, "cannot read the LUKS2 UUID of %s (%s)", h->dev, strerror(-r));
        r = ticket_key_load(h->uuid, &h->key);
        if (r < 0)
                return fail(why, size, r, "no ticket key of %s in root's keyring (%s): it is put there when thaw "
                            "resume unlocks the device at boot, or thaw setup formats it; boot through thaw's "
                            "initramfs once", h->dev, strerror(-r));
        r = fsmark_mounts(h->root, &h->mounts);
        if (r < 0)
                return fail(why, size, r, "cannot list the mounted file systems (%s)", strerror(-r));
        return trial_read(h, why, size);
}

int hibticket_write(struct hibticket *h, enum ticket_writer w, const uint8_t *image_mac, char *why, size_t size)
{
        char path[PATH_MAX], what[FSMARK_WHY_MAX];
        struct ticket *t = &h->t;
        size_t used = 0;
        int r;

        r = ticket_new(t);
        if (r < 0)
                return fail(why, size, r, "cannot make a ticket (%s)", strerror(-r));
        t->writer = w;
        if (image_mac) {
                t->has_image_mac = true;
                memcpy(t->image_mac, image_mac, sizeof(t->image_mac));
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
                        return fail(why, size, r, "cannot read the markers of %s, mounted on %s (%s)",
                                    h->mounts.m[i].dev, h->mounts.m[i].dir, what[0] ? what : strerror(-r));
                if (!m->known && used < sizeof(h->unknown))
                        used += (size_t)snprintf(h->unknown + used, sizeof(h->unknown) - used, "%s%s on %s",
                                                 used ? ", " : "", m->type, h->mounts.m[i].dir);
                t->n_fs++;
        }
        r = ticket_seal(t, h->key);
        if (r < 0)
                return fail(why, size, r, "cannot seal the ticket (%s)", strerror(-r));
        r = ticket_write(h->dev, t);
        if (r < 0)
                return fail(why, size, r, "cannot write the ticket to the LUKS2 header of %s (%s)", h->dev,
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
