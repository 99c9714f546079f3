/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hibernating through the kernel's snapshot device (/dev/snapshot, CONFIG_HIBERNATION_SNAPSHOT_DEV)
 * with thaw writing the image (imgwrite.h) instead of the kernel: the kernel freezes the system and
 * takes the snapshot, thaw compresses it, writes it to the swap in the kernel's format, flushes
 * the device, marks the header, flushes again and powers off. The next boot resumes it through
 * /sys/power/resume like any image.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ticket_mac;
struct imgwrite_result;

struct snapshot_target {
        const char *dev;        /* the swap's block device, e.g. /dev/mapper/thaw-swap */
        unsigned maj, min;      /* its number */
        uint64_t offset;        /* the swap header's page on it (resume_offset; 0 for a partition) */
        bool reboot;            /* reboot instead of powering off after writing */
        bool hw_sig;            /* store the ACPI hardware signature (acpi_sleep=s4_hwsig) */
        uint32_t hw_sig_value;
        /* NULL, or the MAC of the image stream (ticket.h), fed each page as the kernel gives it; taken: freed */
        struct ticket_mac *mac;
        /*
         * NULL, or called once the stream is written and flushed, before the header marks it, with
         * the stream's MAC (NULL without mac): the image's ticket. Runs frozen. Its failure
         * leaves no image: the header is not marked and the system keeps running.
         */
        int (*seal)(void *ctx, const uint8_t *image_mac, const struct imgwrite_result *img, char *why, size_t size);
        void *seal_ctx;
};

/*
 * Hibernate. Returns 1 in the resumed system, or -errno when no image was written (or the one
 * written was unmarked again) and the system keeps running; why says what happened. Never returns
 * after a successful write: the machine powers off (or reboots).
 */
int snapshot_hibernate(const char *root, const struct snapshot_target *t, char *why, size_t size);
