/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Will this machine's kernel accept a hibernation image? The checks it makes, made beforehand. */
#pragma once
#include <stdbool.h>

#include "image/image.h"
#include "image/machine.h"

enum imgcheck_result {
        IMGCHECK_OK,
        IMGCHECK_MALFORMED, /* the image's own structure (image_info.defect) */
        IMGCHECK_FLAGS,     /* flag bits this kernel does not know */
        IMGCHECK_LZ4,       /* LZ4 image, kernel without LZ4 */
        IMGCHECK_HW_SIG,    /* ACPI hardware signature */
        IMGCHECK_MEMORY,    /* num_physpages differs */
        IMGCHECK_E820,      /* firmware memory map differs */
        IMGCHECK_DAMAGED,   /* the full verification failed (imgverify), checked last */
};

struct imgcheck {
        enum imgcheck_result result; /* the first failed check, in the order above */
        char why[384];               /* for people: what differs and how to resume the image */
};

/*
 * Compare img with the machine m; s4_hwsig: acpi_sleep=s4_hwsig is on the kernel command line.
 * A fact the machine could not tell is not held against the image.
 */
void imgcheck_run(const struct image_info *img, const struct machine_info *m, bool s4_hwsig,
                  struct imgcheck *out);
/* Short name for state files and JSON: "ok", "malformed", "flags", "lz4", "hw-sig", "memory", "e820",
 * "damaged". */
const char *imgcheck_name(enum imgcheck_result r);
/* Memory of n pages in MiB, rounded up: present pages fall a little short of the RAM size. */
unsigned long long imgcheck_mib(unsigned long long pages);
