/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The first page of a swap area: a hibernation image header, a plain swap header, or neither. */
#include "image/swsusp.h"
#include "base/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


int swsusp_parse(const uint8_t *page, size_t len, struct swsusp_header *out)
{
        struct swsusp_header h = { .kind = SWSUSP_OTHER };

        if (len < SWSUSP_PAGE)
                return -ENODATA;
        if (memcmp(page + SWSUSP_SIG_OFF, SWSUSP_SIG_SWAP, SWSUSP_SIG_LEN) == 0) {
                h.kind = SWSUSP_SWAP;
        } else if (memcmp(page + SWSUSP_SIG_OFF, SWSUSP_SIG_IMAGE, SWSUSP_SIG_LEN) == 0 &&
                   memcmp(page + SWSUSP_ORIG_SIG_OFF, SWSUSP_SIG_SWAP, SWSUSP_SIG_LEN) == 0) {
                h.kind = SWSUSP_IMAGE;
                h.image = bytes_le64(page + SWSUSP_IMAGE_OFF);
                h.flags = bytes_le32(page + SWSUSP_FLAGS_OFF);
        }
        *out = h;
        return 0;
}

static ssize_t read_page(int fd, uint8_t *buf, off_t off)
{
        size_t done = 0;

        while (done < SWSUSP_PAGE) {
                ssize_t got = pread(fd, buf + done, SWSUSP_PAGE - done, off + (off_t)done);

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                if (got == 0)
                        break;
                done += (size_t)got;
        }
        return (ssize_t)done;
}

int swsusp_read(const char *path, uint64_t offset, struct swsusp_header *out)
{
        off_t off = (off_t)(offset * SWSUSP_PAGE);
        uint8_t *page;
        ssize_t got;
        int fd, r;

        if (offset > (uint64_t)INT64_MAX / SWSUSP_PAGE)
                return -ERANGE;
        page = aligned_alloc(SWSUSP_PAGE, SWSUSP_PAGE);
        if (!page)
                return -ENOMEM;
        /*
         * The kernel resets the signature with its own bio, not through the page cache, so a
         * second buffered read could show a stale image. O_DIRECT reads the disk; files on
         * file systems without it (test fixtures) fall back to a buffered read.
         */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_DIRECT);
        if (fd < 0 && errno == EINVAL)
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        got = read_page(fd, page, off);
        if (got == -EINVAL) {
                close(fd);
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                got = fd < 0 ? -errno : read_page(fd, page, off);
        }
        if (fd >= 0) {
                /* Drop what we cached and close: the kernel must find the device unclaimed. */
                posix_fadvise(fd, off, SWSUSP_PAGE, POSIX_FADV_DONTNEED);
                close(fd);
        }
        if (got < 0)
                r = (int)got;
        else
                r = swsusp_parse(page, (size_t)got, out);
out:
        free(page);
        return r;
}

const char *swsusp_kind_name(enum swsusp_kind k)
{
        switch (k) {
        case SWSUSP_SWAP:
                return "swap";
        case SWSUSP_IMAGE:
                return "hibernation image";
        default:
                return "neither swap nor a hibernation image";
        }
}
