/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image ticket thaw hibernate writes (ticket.h): prepared before the system freezes, written after. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/fsmark.h"
#include "secret.h"
#include "ticket.h"

struct hibticket {
        char root[PATH_MAX];
        char dev[PATH_MAX];          /* the LUKS2 device of the swap mapping */
        char uuid[64];               /* its LUKS2 UUID */
        struct secret *key;          /* its ticket key, from root's keyring */
        struct fsmark_list mounts;   /* the read-write block-device mounts, listed before the freeze */
        char unknown[512];           /* after write: file systems whose markers thaw cannot read */
        bool has_counter;            /* after count: the TPM counter was incremented to counter */
        uint64_t counter;
        char no_counter[512];        /* after count: why a device with a thaw-tpm2 token has no counter */
        struct ticket t;             /* after write: the ticket written */
};

/*
 * Everything that may need a lookup or a new allocation, done while the system still runs: the
 * mapping's device and UUID, the ticket key, the mounts. -ENOKEY: no ticket key in the keyring
 * (why says what to do); other -errno with why.
 */
int hibticket_prepare(const char *root, const char *name, struct hibticket *h, char *why, size_t size);

/* What thaw's writer knows of the image it wrote, for its ticket. */
struct hibticket_image {
        const uint8_t *mac;     /* the MAC of the stream (TICKET_MAC_SIZE bytes: nonce and tag), NULL if none */
        uint32_t crc32;         /* the header's CRC32, first swap-map block, stream pages */
        uint64_t first_map, pages;
};

/*
 * With a thaw-tpm2 token on the device: increment the volume's TPM2 counter (tpm2_counter.h) now,
 * while the system runs, for hibernate_write() to record in the ticket. 0 as well without a token,
 * or when the TPM has no counter of this volume (h->no_counter says why); -errno with why if the
 * counter is there and cannot be incremented.
 */
int hibticket_count(struct hibticket *h, char *why, size_t size);

/*
 * Read every mount's markers now, make a fresh ticket for writer w (img: what thaw's writer wrote,
 * NULL for the kernel's), seal it and write it to the device. Only reads the mounted devices and
 * writes the LUKS2 header: safe while the system is frozen.
 */
int hibticket_write(struct hibticket *h, enum ticket_writer w, const struct hibticket_image *img, char *why,
                    size_t size);

void hibticket_free(struct hibticket *h);
