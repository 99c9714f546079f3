/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Full verification of a hibernation image: decompress every chunk and check the kernel's CRC32. */
#include "image/imgverify.h"
#include "base/bytes.h"
#include "image/imgcrc.h"
#include "image/swsusp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lz4.h>
#include <lzo/lzo1x.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The stream pages in order, read through the map chain image_read_fd() validated. */
struct stream {
        int fd;
        const struct image_info *img;
        uint8_t map[SWSUSP_PAGE];
        size_t k;          /* next entry in map */
        uint64_t maps;     /* map pages read */
        imgverify_hook hook; /* NULL, or given the stream as the snapshot device gave it */
        void *hook_ctx;
        uint64_t left;     /* entries not yet read */
};

/* 1 with the next stream page in buf, 0 at the end of the stream, or a negative errno. */
static int stream_next(struct stream *s, uint8_t *buf)
{
        uint64_t e;

        if (s->left == 0)
                return 0;
        if (s->k == SWSUSP_MAP_ENTRIES) {
                uint64_t next = bytes_le64(s->map + SWSUSP_MAP_NEXT_OFF);

                /* The device may have changed since the walk: stay inside what it checked. */
                if (next == 0 || next >= s->img->device_pages || s->maps >= s->img->map_pages)
                        return 0;
                if (swsusp_read_page(s->fd, next, s->map) < 0)
                        return -EIO;
                s->maps++;
                s->k = 0;
        }
        e = bytes_le64(s->map + 8 * s->k++);
        if (e == 0 || e >= s->img->device_pages)
                return 0;
        s->left--;
        return swsusp_read_page(s->fd, e, buf) < 0 ? -EIO : 1;
}

__attribute__((format(printf, 3, 4)))
static int fail(struct imgverify *v, enum imgverify_result r, const char *fmt, ...)
{
        va_list ap;

        v->result = r;
        va_start(ap, fmt);
        vsnprintf(v->why, sizeof(v->why), fmt, ap);
        va_end(ap);
        return 1;
}

/* Decompress cmp (cmp_len bytes) into unc; the length produced, or -1. */
static long decompress(const struct image_info *img, const uint8_t *cmp, size_t cmp_len, uint8_t *unc)
{
        if (img->flags & SWSUSP_SF_LZ4) {
                int n = LZ4_decompress_safe((const char *)cmp, (char *)unc, (int)cmp_len,
                                            SWSUSP_UNC_MAX);

                return n < 0 ? -1 : n;
        }
        lzo_uint n = SWSUSP_UNC_MAX;

        if (lzo1x_decompress_safe(cmp, cmp_len, unc, &n, NULL) != LZO_E_OK)
                return -1;
        return (long)n;
}

/*
 * One compressed chunk, its first page already in cmp: the kernel's load_compressed_image() rules.
 * 0 and the chunk's pages added to v, 1 with v saying what is wrong, or a negative errno.
 */
static int chunk(struct stream *s, uint8_t *cmp, uint8_t *unc, uint64_t remaining, struct imgverify *v)
{
        uint64_t cmp_len = bytes_le64(cmp), need;
        long unc_len;
        int r;

        if (cmp_len == 0 || cmp_len > SWSUSP_CMP_MAX)
                return fail(v, IMGVERIFY_LENGTH, "chunk %" PRIu64 " has an invalid compressed length "
                            "(%" PRIu64 " bytes)", v->chunks, cmp_len);
        need = (SWSUSP_CMP_HEADER + cmp_len + SWSUSP_PAGE - 1) / SWSUSP_PAGE;
        for (uint64_t i = 1; i < need; i++) {
                r = stream_next(s, cmp + i * SWSUSP_PAGE);
                if (r < 0)
                        return r;
                if (r == 0)
                        return fail(v, IMGVERIFY_TRUNCATED, "the image ends inside chunk %" PRIu64
                                    " (%" PRIu64 " of its %" PRIu64 " pages stored)", v->chunks, i, need);
        }
        unc_len = decompress(s->img, cmp + SWSUSP_CMP_HEADER, (size_t)cmp_len, unc);
        if (unc_len < 0)
                return fail(v, IMGVERIFY_DECOMPRESS, "chunk %" PRIu64 " does not decompress (%s)",
                            v->chunks, image_compression(s->img->flags));
        if (unc_len == 0 || unc_len > SWSUSP_UNC_MAX || unc_len % SWSUSP_PAGE != 0)
                return fail(v, IMGVERIFY_LENGTH, "chunk %" PRIu64 " has an invalid uncompressed length "
                            "(%ld bytes)", v->chunks, unc_len);
        if ((uint64_t)unc_len / SWSUSP_PAGE > remaining)
                return fail(v, IMGVERIFY_LENGTH, "chunk %" PRIu64 " goes past the image's end (%ld pages, "
                            "%" PRIu64 " left)", v->chunks, unc_len / SWSUSP_PAGE, remaining);
        if (s->hook && s->hook(s->hook_ctx, unc, (size_t)unc_len) < 0)
                return -EIO;
        v->crc = imgcrc_update(v->crc, unc, (size_t)unc_len);
        v->pages += (uint64_t)unc_len / SWSUSP_PAGE;
        v->chunks++;
        return 0;
}

static int verify_compressed(struct stream *s, uint8_t *cmp, uint8_t *unc, struct imgverify *v)
{
        uint64_t payload = s->img->pages - 1;
        int r;

        while (v->pages < payload) {
                r = stream_next(s, cmp);
                if (r < 0)
                        return r;
                if (r == 0)
                        return fail(v, IMGVERIFY_TRUNCATED, "the image ends after %" PRIu64 " of its %"
                                    PRIu64 " pages", v->pages, payload);
                r = chunk(s, cmp, unc, payload - v->pages, v);
                if (r != 0)
                        return r;
        }
        if ((s->img->flags & SWSUSP_SF_CRC32) && v->crc != s->img->crc32)
                return fail(v, IMGVERIFY_CRC, "CRC32 mismatch (image %08" PRIx32 ", computed %08" PRIx32 ")",
                            s->img->crc32, v->crc);
        if (s->img->flags & SWSUSP_SF_CRC32)
                snprintf(v->why, sizeof(v->why), "CRC32 %08" PRIx32 " matches (%" PRIu64 " chunks, %"
                         PRIu64 " pages)", v->crc, v->chunks, v->pages);
        else
                snprintf(v->why, sizeof(v->why), "all %" PRIu64 " chunks decompress (%" PRIu64 " pages); "
                         "the image carries no CRC32", v->chunks, v->pages);
        return 0;
}

/* Uncompressed images carry no checksum: every page is read, so at least each one is there. */
static int verify_plain(struct stream *s, uint8_t *page, struct imgverify *v)
{
        uint64_t payload = s->img->pages - 1;
        int r;

        while (v->pages < payload) {
                r = stream_next(s, page);
                if (r < 0)
                        return r;
                if (r == 0)
                        return fail(v, IMGVERIFY_TRUNCATED, "the image ends after %" PRIu64 " of its %"
                                    PRIu64 " pages", v->pages, payload);
                if (s->hook && s->hook(s->hook_ctx, page, SWSUSP_PAGE) < 0)
                        return -EIO;
                v->pages++;
        }
        snprintf(v->why, sizeof(v->why), "all %" PRIu64 " pages read; uncompressed images carry no "
                 "checksum", v->pages);
        return 0;
}

int imgverify_fd_hook(int fd, const struct image_info *img, imgverify_hook hook, void *ctx, struct imgverify *out)
{
        struct imgverify v = { .result = IMGVERIFY_OK };
        struct stream *s;
        uint8_t *cmp = NULL, *unc = NULL;
        int r;

        if (img->defect != IMAGE_OK || img->pages < 2)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        cmp = malloc((size_t)SWSUSP_CHUNK_DISK_PAGES * SWSUSP_PAGE);
        unc = malloc(SWSUSP_UNC_MAX);
        r = -ENOMEM;
        if (!s || !cmp || !unc)
                goto out;
        *s = (struct stream){ .fd = fd, .img = img, .k = 0, .maps = 1, .left = img->entries, .hook = hook,
                              .hook_ctx = ctx };
        r = swsusp_read_page(fd, img->image, s->map) < 0 ? -EIO : 0;
        /* Stream entry 0 is the swsusp_info page, outside the payload and the CRC. */
        if (r == 0)
                r = stream_next(s, cmp);
        if (r == 0)
                r = -EIO;
        if (r > 0 && hook && hook(ctx, cmp, SWSUSP_PAGE) < 0)
                r = -EIO;
        if (r < 0)
                goto out;
        if (img->flags & SWSUSP_SF_NOCOMPRESS)
                r = verify_plain(s, cmp, &v);
        else
                r = verify_compressed(s, cmp, unc, &v);
        if (r >= 0) {
                r = 0;
                *out = v;
        }
out:
        free(unc);
        free(cmp);
        free(s);
        return r;
}

int imgverify_fd(int fd, const struct image_info *img, struct imgverify *out)
{
        return imgverify_fd_hook(fd, img, NULL, NULL, out);
}

int imgverify_hooked(const char *path, const struct image_info *img, imgverify_hook hook, void *ctx,
                     struct imgverify *out)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        int r;

        if (fd < 0)
                return -errno;
        r = imgverify_fd_hook(fd, img, hook, ctx, out);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
        return r;
}

int imgverify(const char *path, const struct image_info *img, struct imgverify *out)
{
        return imgverify_hooked(path, img, NULL, NULL, out);
}
