/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer harness: the image reader, the pre-handoff checks and the full verification on one input. */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image/image.h"
#include "image/imgcheck.h"
#include "image/imgverify.h"
#include "image/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is the device: the reader takes an fd, so it lives in a memfd (a regular file). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static int fd = -1;
        static const struct machine_info m = {
                .release = "6.1.0-57-amd64", .kmajor = 6, .kminor = 1, .lz4 = 1, .have_facs = true,
                .facs_sig = 0xcafe0001, .have_mem = true, .present_pages = 196478, .have_e820 = true,
                .e820_crc = 0xc3772fbf, .e820_entries = 5,
        };
        struct image_info in;
        struct imgverify v;
        struct imgcheck c;

        if (fd < 0)
                fd = memfd_create("fuzz-image", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
                return 0;
        if (image_read_fd(fd, 0, &in) < 0)
                return 0;
        imgcheck_run(&in, &m, size & 1, &c);
        if (in.defect == IMAGE_OK)
                imgverify_fd(fd, &in, &v);
        return 0;
}
