/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pages of a swap area read and written whole; the first: an image header, a plain swap header, or neither. */
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

int swsusp_read_page(int fd, uint64_t block, uint8_t *buf)
{
        size_t done = 0;

        if (block > (uint64_t)INT64_MAX / SWSUSP_PAGE)
                return -ERANGE;
        while (done < SWSUSP_PAGE) {
                ssize_t got = pread(fd, buf + done, SWSUSP_PAGE - done, (off_t)(block * SWSUSP_PAGE + done));

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                if (got == 0)
                        return -ENODATA;
                done += (size_t)got;
        }
        return 0;
}

int swsusp_write_pages(int fd, uint64_t block, const uint8_t *buf, size_t n)
{
        uint64_t off, len;

        if (n > (uint64_t)INT64_MAX / SWSUSP_PAGE || block > (uint64_t)INT64_MAX / SWSUSP_PAGE - n)
                return -ERANGE;
        off = block * SWSUSP_PAGE;
        len = (uint64_t)n * SWSUSP_PAGE;
        while (len > 0) {
                ssize_t w = pwrite(fd, buf, len, (off_t)off);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EIO;
                buf += w;
                len -= (uint64_t)w;
                off += (uint64_t)w;
        }
        return 0;
}

int swsusp_read(const char *path, uint64_t offset, struct swsusp_header *out)
{
        uint8_t *page;
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
        r = swsusp_read_page(fd, offset, page);
        if (r == -EINVAL) {
                close(fd);
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                r = fd < 0 ? -errno : swsusp_read_page(fd, offset, page);
        }
        if (fd >= 0) {
                /* Drop what we cached and close: the kernel must find the device unclaimed. */
                posix_fadvise(fd, (off_t)(offset * SWSUSP_PAGE), SWSUSP_PAGE, POSIX_FADV_DONTNEED);
                close(fd);
        }
        if (r == 0)
                r = swsusp_parse(page, SWSUSP_PAGE, out);
out:
        free(page);
        return r;
}

int swsusp_load(int fd, uint64_t block, uint8_t **page, struct swsusp_header *out)
{
        int r;

        *page = aligned_alloc(SWSUSP_PAGE, SWSUSP_PAGE);
        if (!*page)
                return -ENOMEM;
        r = swsusp_read_page(fd, block, *page);
        if (r == 0)
                r = swsusp_parse(*page, SWSUSP_PAGE, out);
        return r;
}

int swsusp_unmark_fd(int fd, uint64_t block)
{
        struct swsusp_header h;
        uint8_t *page;
        int r = swsusp_load(fd, block, &page, &h);

        if (r == 0 && h.kind == SWSUSP_IMAGE) {
                /* Exactly what the kernel's swsusp_check() writes: the swap signature comes back. */
                memcpy(page + SWSUSP_SIG_OFF, page + SWSUSP_ORIG_SIG_OFF, SWSUSP_SIG_LEN);
                r = swsusp_write_pages(fd, block, page, 1);
                if (r == 0 && fsync(fd) < 0)
                        r = -errno;
                if (r == 0)
                        r = 1;
        }
        free(page);
        return r;
}

int swsusp_unmark(const char *path, uint64_t offset)
{
        int fd, r;

        if (offset > (uint64_t)INT64_MAX / SWSUSP_PAGE)
                return -ERANGE;
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        r = swsusp_unmark_fd(fd, offset);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
        return r == 0 ? -ENOMSG : r < 0 ? r : 0;
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
