/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Will this machine's kernel accept a hibernation image? The checks it makes, made beforehand. */
#include "image/imgcheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

/* The flags the kernel knows: 6.1 .. 6.8, and 6.9+ with LZ4. */
#define KNOWN_FLAGS_OLD (SWSUSP_SF_PLATFORM | SWSUSP_SF_NOCOMPRESS | SWSUSP_SF_CRC32 | SWSUSP_SF_HW_SIG)
#define KNOWN_FLAGS_LZ4 (KNOWN_FLAGS_OLD | SWSUSP_SF_LZ4)

__attribute__((format(printf, 3, 4)))
static void fail(struct imgcheck *c, enum imgcheck_result r, const char *fmt, ...)
{
        va_list ap;

        c->result = r;
        va_start(ap, fmt);
        vsnprintf(c->why, sizeof(c->why), fmt, ap);
        va_end(ap);
}

unsigned long long imgcheck_mib(unsigned long long pages)
{
        return (pages * SWSUSP_PAGE + (1ULL << 20) - 1) >> 20;
}

static int kernel_has_lz4_images(const struct machine_info *m)
{
        return m->kmajor > 6 || (m->kmajor == 6 && m->kminor >= 9);
}

/*
 * Flags. A kernel before 6.9 ignores bit 16 and would decompress an LZ4 image as LZO, failing only
 * after it has consumed the image; so an unknown bit is refused, not guessed at.
 */
static int check_flags(const struct image_info *img, const struct machine_info *m, struct imgcheck *c)
{
        uint32_t known = m->kmajor == 0 || kernel_has_lz4_images(m) ? KNOWN_FLAGS_LZ4 : KNOWN_FLAGS_OLD;
        bool lz4 = (img->flags & SWSUSP_SF_LZ4) && !(img->flags & SWSUSP_SF_NOCOMPRESS);

        if (lz4 && !(known & SWSUSP_SF_LZ4)) {
                fail(c, IMGCHECK_LZ4, "the image is compressed with LZ4, which this kernel (%s) cannot "
                     "read (LZ4 images need Linux 6.9 or later): boot the kernel that wrote it",
                     m->release);
                return 1;
        }
        if (img->flags & ~known) {
                fail(c, IMGCHECK_FLAGS, "the image has flags %#" PRIx32 " this kernel (%s) does not know "
                     "(%#" PRIx32 "): boot the kernel that wrote it", img->flags, m->release,
                     img->flags & ~known);
                return 1;
        }
        if (lz4 && m->lz4 == 0) {
                fail(c, IMGCHECK_LZ4, "the image is compressed with LZ4, but this kernel (%s) has no lz4 "
                     "compressor (built in or as a module): boot a kernel with CONFIG_CRYPTO_LZ4",
                     m->release);
                return 1;
        }
        return 0;
}

/* The boot kernel compares with FACS only under acpi_sleep=s4_hwsig; otherwise with 0. */
static int check_hw_sig(const struct image_info *img, const struct machine_info *m, bool s4_hwsig,
                        struct imgcheck *c)
{
        if (!(img->flags & SWSUSP_SF_HW_SIG))
                return 0;
        if (!s4_hwsig) {
                fail(c, IMGCHECK_HW_SIG, "the image carries the ACPI hardware signature %08" PRIx32 ", "
                     "which this kernel only accepts with acpi_sleep=s4_hwsig on its command line: add "
                     "it", img->hw_sig);
                return 1;
        }
        if (m->have_facs && m->facs_sig != img->hw_sig) {
                fail(c, IMGCHECK_HW_SIG, "the ACPI hardware signature changed (%08" PRIx32 " in the "
                     "image, %08" PRIx32 " now): the image was made on other hardware", img->hw_sig,
                     m->facs_sig);
                return 1;
        }
        return 0;
}

void imgcheck_run(const struct image_info *img, const struct machine_info *m, bool s4_hwsig,
                  struct imgcheck *out)
{
        struct imgcheck c = { .result = IMGCHECK_OK };

        snprintf(c.why, sizeof(c.why), "this machine can resume the image");
        if (img->defect != IMAGE_OK) {
                fail(&c, IMGCHECK_MALFORMED, "the image is damaged: %s", img->why);
        } else if (check_flags(img, m, &c) || check_hw_sig(img, m, s4_hwsig, &c)) {
                /* c says why */
        } else if (m->have_mem && m->present_pages != img->num_physpages) {
                if (imgcheck_mib(m->present_pages) != imgcheck_mib(img->num_physpages))
                        fail(&c, IMGCHECK_MEMORY, "image was made with %llu MiB of memory, this machine "
                             "has %llu MiB", imgcheck_mib(img->num_physpages), imgcheck_mib(m->present_pages));
                else
                        fail(&c, IMGCHECK_MEMORY, "image was made with %" PRIu64 " pages of memory, this "
                             "machine has %" PRIu64, img->num_physpages, m->present_pages);
        } else if (m->have_e820 && m->e820_crc != img->e820_crc) {
                fail(&c, IMGCHECK_E820, "the firmware memory map changed (e820 checksum %08" PRIx32 " in "
                     "the image, %08" PRIx32 " on this machine): boot it on the machine type it was "
                     "made on", img->e820_crc, m->e820_crc);
        }
        *out = c;
}

const char *imgcheck_name(enum imgcheck_result r)
{
        switch (r) {
        case IMGCHECK_OK:
                return "ok";
        case IMGCHECK_MALFORMED:
                return "malformed";
        case IMGCHECK_FLAGS:
                return "flags";
        case IMGCHECK_LZ4:
                return "lz4";
        case IMGCHECK_HW_SIG:
                return "hw-sig";
        case IMGCHECK_MEMORY:
                return "memory";
        case IMGCHECK_DAMAGED:
                return "damaged";
        default:
                return "e820";
        }
}
