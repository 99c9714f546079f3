/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image ticket thaw hibernate writes (ticket.h): prepared before the system freezes, written after. */
#pragma once
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "fsmark.h"
#include "secret.h"
#include "ticket.h"

struct hibticket {
        char root[PATH_MAX];
        char dev[PATH_MAX];          /* the LUKS2 device of the swap mapping */
        char uuid[64];               /* its LUKS2 UUID */
        struct secret *key;          /* its ticket key, from root's keyring */
        struct fsmark_list mounts;   /* the read-write block-device mounts, listed before the freeze */
        char unknown[512];           /* after write: file systems whose markers thaw cannot read */
        struct ticket t;             /* after write: the ticket written */
};

/*
 * Everything that may need a lookup or a new allocation, done while the system still runs: the
 * mapping's device and UUID, the ticket key, the mounts. -ENOKEY: no ticket key in the keyring
 * (why says what to do); other -errno with why.
 */
int hibticket_prepare(const char *root, const char *name, struct hibticket *h, char *why, size_t size);

/*
 * Read every mount's markers now, make a fresh ticket for writer w (image_mac: the HMAC of the
 * image stream thaw's writer computed, NULL for the kernel's), seal it and write it to the device.
 * Only reads the mounted devices and writes the LUKS2 header: safe while the system is frozen.
 */
int hibticket_write(struct hibticket *h, enum ticket_writer w, const uint8_t *image_mac, char *why, size_t size);

void hibticket_free(struct hibticket *h);
