/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Our own mkswap: a version 1 swap header on a device or file. */
#include "system/swap.h"
#include "base/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "image/swsusp.h"

/* union swap_header's info part (include/linux/swap.h), after 1024 bytes of boot bits. */
#define INFO_OFF 1024
#define VERSION_OFF (INFO_OFF + 0)
#define LAST_PAGE_OFF (INFO_OFF + 4)
#define NR_BADPAGES_OFF (INFO_OFF + 8)
#define UUID_OFF (INFO_OFF + 12)
#define LABEL_OFF (INFO_OFF + 28)

static int random_uuid(uint8_t uuid[16])
{
        ssize_t n = getrandom(uuid, 16, 0);

        if (n != 16)
                return n < 0 ? -errno : -EIO;
        uuid[6] = (uuid[6] & 0x0f) | 0x40; /* version 4 */
        uuid[8] = (uuid[8] & 0x3f) | 0x80; /* RFC 4122 variant */
        return 0;
}

static void format_uuid(const uint8_t u[16], char *out, size_t size)
{
        snprintf(out, size,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
                 u[13], u[14], u[15]);
}

int swap_write_header(const char *path, const char *label, char *uuid, size_t uuid_size)
{
        int fd, r;

        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        r = swap_write_header_fd(fd, label, uuid, uuid_size);
        close(fd);
        return r;
}

int swap_write_header_fd(int fd, const char *label, char *uuid, size_t uuid_size)
{
        uint8_t page[SWSUSP_PAGE] = { 0 }, id[16];
        uint64_t pages;
        off_t size;
        int r;

        if (label && strlen(label) > SWAP_LABEL_MAX)
                return -ENAMETOOLONG;
        if (uuid && uuid_size < 37)
                return -ENOBUFS;
        r = random_uuid(id);
        if (r < 0)
                return r;
        size = lseek(fd, 0, SEEK_END);
        if (size < 0)
                return -errno;
        pages = (uint64_t)size / SWSUSP_PAGE;
        if (pages < SWAP_MIN_PAGES)
                return -ENOSPC;
        if (pages - 1 > UINT32_MAX)
                pages = (uint64_t)UINT32_MAX + 1; /* last_page is 32 bits; the kernel caps anyway */
        bytes_put_le(page + VERSION_OFF, 1, 4);
        bytes_put_le(page + LAST_PAGE_OFF, (uint32_t)(pages - 1), 4);
        bytes_put_le(page + NR_BADPAGES_OFF, 0, 4);
        memcpy(page + UUID_OFF, id, sizeof(id));
        if (label)
                memcpy(page + LABEL_OFF, label, strlen(label));
        memcpy(page + SWSUSP_SIG_OFF, SWSUSP_SIG_SWAP, SWSUSP_SIG_LEN);
        r = swsusp_write_pages(fd, 0, page, 1);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (r == 0 && uuid)
                format_uuid(id, uuid, uuid_size);
        return r;
}
