/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads a hibernation image's structure: header page, swap-map chain, swsusp_info page. */
#include "image/image.h"
#include "base/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/swsusp.h"

#define SET_SLOTS_MAX ((size_t)1 << 20) /* 8 MiB for the visited set: map pages of a 1 TiB image */

static uint64_t div_up(uint64_t a, uint64_t b)
{
        return a / b + (a % b != 0);
}

const char *image_compression(uint32_t flags)
{
        if (flags & SWSUSP_SF_NOCOMPRESS)
                return "none";
        return flags & SWSUSP_SF_LZ4 ? "lz4" : "lzo";
}

__attribute__((format(printf, 3, 4)))
static int defect(struct image_info *in, enum image_defect d, const char *fmt, ...)
{
        va_list ap;

        in->defect = d;
        va_start(ap, fmt);
        vsnprintf(in->why, sizeof(in->why), fmt, ap);
        va_end(ap);
        return 0;
}

static int device_pages(int fd, uint64_t *out)
{
        struct stat st;
        uint64_t bytes;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISBLK(st.st_mode)) {
                if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
                        return -errno;
        } else if (S_ISREG(st.st_mode)) {
                bytes = (uint64_t)st.st_size;
        } else {
                return -ENOTBLK;
        }
        *out = bytes / SWSUSP_PAGE;
        return 0;
}

/* The visited map pages: open addressing over a power-of-two table; 0 is never a map page. */
struct blockset {
        uint64_t *slot;
        size_t mask;
};

static int set_init(struct blockset *s, uint64_t max)
{
        size_t n = 16;

        while (n < 2 * max && n < SET_SLOTS_MAX)
                n <<= 1;
        s->slot = calloc(n, sizeof(*s->slot));
        s->mask = n - 1;
        return s->slot ? 0 : -ENOMEM;
}

/* 1 if b was already in the set, 0 once added. The caller keeps the count below the table size. */
static int set_add(struct blockset *s, uint64_t b)
{
        size_t i = (size_t)(b * UINT64_C(0x9E3779B97F4A7C15) >> 20) & s->mask;

        while (s->slot[i]) {
                if (s->slot[i] == b)
                        return 1;
                i = (i + 1) & s->mask;
        }
        s->slot[i] = b;
        return 0;
}

static int in_device(const struct image_info *in, uint64_t b)
{
        return b != 0 && b < in->device_pages;
}

/* The swsusp_info page: always uncompressed, stream entry 0. */
static int check_info(struct image_info *in, const uint8_t *p)
{
        in->magic = bytes_le64(p + SWSUSP_INFO_MAGIC_OFF);
        in->e820_crc = (uint32_t)bytes_le64(p + SWSUSP_INFO_E820_CRC_OFF);
        in->num_physpages = bytes_le64(p + SWSUSP_INFO_NUM_PHYSPAGES_OFF);
        in->image_pages = bytes_le64(p + SWSUSP_INFO_IMAGE_PAGES_OFF);
        in->pages = bytes_le64(p + SWSUSP_INFO_PAGES_OFF);
        in->size = bytes_le64(p + SWSUSP_INFO_SIZE_OFF);
        if (in->magic != SWSUSP_X86_64_MAGIC)
                return defect(in, IMAGE_BAD_MAGIC, "the image header is not an x86_64 restore record "
                              "(magic %#" PRIx64 ")", in->magic);
        if (in->image_pages == 0 || in->image_pages >= IMAGE_PAGES_MAX ||
            in->pages != in->image_pages + div_up(in->image_pages * 8, SWSUSP_PAGE) + 1 ||
            in->size != in->pages * SWSUSP_PAGE)
                return defect(in, IMAGE_BAD_COUNTS, "the image header's page counts disagree (%" PRIu64
                              " data pages, %" PRIu64 " pages, %" PRIu64 " bytes)", in->image_pages,
                              in->pages, in->size);
        return 0;
}

/* Most stream pages the image can take on disk, info page included. */
static uint64_t max_entries(const struct image_info *in)
{
        if (in->flags & SWSUSP_SF_NOCOMPRESS)
                return in->pages;
        return 1 + div_up(in->pages - 1, SWSUSP_CHUNK_PAGES) * SWSUSP_CHUNK_DISK_PAGES;
}

static uint64_t min_entries(const struct image_info *in)
{
        if (in->flags & SWSUSP_SF_NOCOMPRESS)
                return in->pages;
        return 1 + div_up(in->pages - 1, SWSUSP_CHUNK_PAGES);
}

/* Follow next_swap from in->image; page holds the first map page already. */
static int walk_chain(int fd, struct image_info *in, uint8_t *page)
{
        uint64_t cap = div_up(max_entries(in), SWSUSP_MAP_ENTRIES) + 1, block = in->image;
        struct blockset seen;
        int ended = 0, r = 0;

        /* A chain cannot hold more map pages than fit on the device beside their data. */
        if (cap > in->device_pages / (SWSUSP_MAP_ENTRIES + 1) + 1)
                cap = in->device_pages / (SWSUSP_MAP_ENTRIES + 1) + 1;
        if (cap > SET_SLOTS_MAX / 2 - 1)
                cap = SET_SLOTS_MAX / 2 - 1;
        if (set_init(&seen, cap + 1) < 0)
                return -ENOMEM;
        for (;;) {
                if (set_add(&seen, block)) {
                        defect(in, IMAGE_CHAIN_LOOP, "the swap-map chain loops back to block %" PRIu64
                               " after %" PRIu64 " map pages", block, in->map_pages);
                        goto out;
                }
                if (in->map_pages >= cap) {
                        defect(in, IMAGE_CHAIN_LONG, "the swap-map chain is longer than the image "
                               "can need (more than %" PRIu64 " map pages)", cap);
                        goto out;
                }
                in->map_pages++;
                for (size_t k = 0; k < SWSUSP_MAP_ENTRIES && !ended; k++) {
                        uint64_t e = bytes_le64(page + 8 * k);

                        if (e == 0) {
                                ended = 1;
                        } else if (!in_device(in, e)) {
                                defect(in, IMAGE_BAD_BLOCK, "data page %" PRIu64 " is at block %" PRIu64
                                       ", outside the device (%" PRIu64 " blocks)", in->entries, e,
                                       in->device_pages);
                                goto out;
                        } else {
                                in->entries++;
                        }
                }
                block = bytes_le64(page + SWSUSP_MAP_NEXT_OFF);
                if (block == 0)
                        break;
                if (!in_device(in, block)) {
                        defect(in, IMAGE_BAD_BLOCK, "map page %" PRIu64 " points to block %" PRIu64
                               ", outside the device (%" PRIu64 " blocks)", in->map_pages, block,
                               in->device_pages);
                        goto out;
                }
                r = swsusp_read_page(fd, block, page);
                if (r < 0)
                        goto out;
        }
        if (in->entries > max_entries(in))
                defect(in, IMAGE_CHAIN_LONG, "the swap-map chain lists %" PRIu64 " pages, more than "
                       "the image can need (%" PRIu64 ")", in->entries, max_entries(in));
        else if (in->entries < min_entries(in))
                defect(in, IMAGE_TRUNCATED, "the swap-map chain lists %" PRIu64 " pages, fewer than "
                       "the image needs (%" PRIu64 ")", in->entries, min_entries(in));
out:
        free(seen.slot);
        return r;
}

static int read_image(int fd, uint64_t offset, struct image_info *in, uint8_t *page)
{
        struct swsusp_header h;
        uint64_t info;
        int r;

        r = device_pages(fd, &in->device_pages);
        if (r < 0)
                return r;
        if (offset >= in->device_pages)
                return -ENODATA;
        r = swsusp_read_page(fd, offset, page);
        if (r < 0)
                return r;
        swsusp_parse(page, SWSUSP_PAGE, &h);
        if (h.kind != SWSUSP_IMAGE)
                return defect(in, IMAGE_NOT_IMAGE, "no hibernation image (%s)", swsusp_kind_name(h.kind));
        in->flags = h.flags;
        in->image = h.image;
        in->crc32 = bytes_le32(page + SWSUSP_CRC32_OFF);
        in->hw_sig = bytes_le32(page + SWSUSP_HW_SIG_OFF);
        if (!in_device(in, in->image) || in->image == offset)
                return defect(in, IMAGE_BAD_BLOCK, "the first map page is at block %" PRIu64 ", outside "
                              "the device (%" PRIu64 " blocks)", in->image, in->device_pages);
        r = swsusp_read_page(fd, in->image, page);
        if (r < 0)
                return r;
        info = bytes_le64(page);
        if (!in_device(in, info))
                return defect(in, IMAGE_BAD_BLOCK, "the image header page is at block %" PRIu64
                              ", outside the device (%" PRIu64 " blocks)", info, in->device_pages);
        /* page keeps the first map page for the walk; the info page goes to the other half. */
        r = swsusp_read_page(fd, info, page + SWSUSP_PAGE);
        if (r < 0)
                return r;
        check_info(in, page + SWSUSP_PAGE);
        if (in->defect != IMAGE_OK)
                return 0;
        return walk_chain(fd, in, page);
}

int image_read_fd(int fd, uint64_t offset, struct image_info *out)
{
        struct image_info in = { .defect = IMAGE_OK };
        uint8_t *page = malloc(2 * SWSUSP_PAGE);
        int r;

        if (!page)
                return -ENOMEM;
        r = read_image(fd, offset, &in, page);
        free(page);
        if (r < 0)
                return r;
        if (in.defect == IMAGE_OK)
                snprintf(in.why, sizeof(in.why), "well-formed");
        *out = in;
        return 0;
}

int image_read(const char *path, uint64_t offset, struct image_info *out)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        int r;

        if (fd < 0)
                return -errno;
        r = image_read_fd(fd, offset, out);
        /* Leave no cached header behind: the kernel rewrites it with its own bio. */
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
        return r;
}
