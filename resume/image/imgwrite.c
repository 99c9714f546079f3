/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image/imgwrite.h"
#include "base/bytes.h"
#include "base/clock.h"
#include "image/image.h"
#include "image/imgcrc.h"
#include "image/swsusp.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/aio_abi.h>
#include <lzo/lzo1x.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RUN_PAGES 256              /* consecutive blocks written in one request: 1 MiB */
#define RUNS 4                     /* requests in flight while the next run is compressed */

/* One run of consecutive blocks, and its request while the disk has it. */
struct run {
        uint8_t *buf;              /* RUN_PAGES pages, page-aligned (O_DIRECT) */
        uint64_t start;
        size_t n;
        bool busy;                 /* submitted, not yet complete */
        struct iocb cb;
};

struct writer {
        int fd;
        const struct imgwrite_alloc *alloc;
        struct imgwrite_result *out;
        /*
         * Linux AIO (no helper threads: the rest of user space is frozen while this runs): the disk
         * and dm-crypt write one run while this thread compresses, checksums and MACs the next.
         * aio 0: io_setup failed, runs are written with pwrite one at a time.
         */
        aio_context_t aio;
        struct run runs[RUNS];
        struct run *run;           /* the one being filled */
        size_t next;               /* index of the next run to fill */
        uint8_t *map;              /* the swap-map page being filled */
        uint64_t map_block;
        size_t map_n;
};

static int fail(struct imgwrite_result *out, int err, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(out->why, sizeof(out->why), fmt, ap);
        va_end(ap);
        return err;
}

static int run_failed(struct writer *w, const struct run *run, int r)
{
        return fail(w->out, r, "cannot write blocks %" PRIu64 "-%" PRIu64 ": %s", run->start, run->start + run->n - 1,
                    strerror(-r));
}

/* Wait for one submitted run to complete (the oldest or any: each is checked on its own). */
static int reap_one(struct writer *w)
{
        struct io_event ev;
        uint64_t t0 = clock_now_ns();
        struct run *run;
        long n;

        do
                n = syscall(SYS_io_getevents, w->aio, 1, 1, &ev, NULL);
        while (n < 0 && errno == EINTR);
        w->out->wait_ns += clock_now_ns() - t0;
        if (n != 1)
                return fail(w->out, n < 0 ? -errno : -EIO, "cannot wait for the image's writes: %s",
                            n < 0 ? strerror(errno) : "no completion");
        run = (struct run *)(uintptr_t)ev.data;
        run->busy = false;
        /* A block device with O_DIRECT writes all of it or fails: a short write is an error too. */
        if (ev.res < 0 || (uint64_t)ev.res != run->n * SWSUSP_PAGE)
                return run_failed(w, run, ev.res < 0 ? (int)ev.res : -EIO);
        w->out->blocks += run->n;
        run->n = 0;
        return 0;
}

/* Every submitted run complete; the first failure is what is said. */
static int reap_all(struct writer *w)
{
        int r = 0;

        for (size_t i = 0; i < RUNS; i++)
                while (w->runs[i].busy) {
                        int e = reap_one(w);

                        if (r == 0)
                                r = e;
                }
        return r;
}

/* Send the run being filled to the disk and take the next free one. */
static int flush_run(struct writer *w)
{
        struct run *run = w->run;
        struct iocb *cbs[1];
        long n;
        int r;

        if (run->n == 0)
                return 0;
        if (!w->aio) {
                uint64_t t0 = clock_now_ns();

                r = swsusp_write_pages(w->fd, run->start, run->buf, run->n);
                w->out->wait_ns += clock_now_ns() - t0;
                if (r < 0)
                        return run_failed(w, run, r);
                w->out->blocks += run->n;
                run->n = 0;
                return 0;
        }
        memset(&run->cb, 0, sizeof(run->cb));
        run->cb.aio_data = (uint64_t)(uintptr_t)run;
        run->cb.aio_lio_opcode = IOCB_CMD_PWRITE;
        run->cb.aio_fildes = (uint32_t)w->fd;
        run->cb.aio_buf = (uint64_t)(uintptr_t)run->buf;
        run->cb.aio_nbytes = run->n * SWSUSP_PAGE;
        run->cb.aio_offset = (int64_t)(run->start * SWSUSP_PAGE);
        cbs[0] = &run->cb;
        do
                n = syscall(SYS_io_submit, w->aio, 1, cbs);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                return run_failed(w, run, n < 0 ? -errno : -EIO);
        run->busy = true;
        w->run = &w->runs[w->next];
        w->next = (w->next + 1) % RUNS;
        while (w->run->busy) {
                r = reap_one(w);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Queue one page for block; consecutive blocks are written together. */
static int put_block(struct writer *w, uint64_t block, const uint8_t *page)
{
        int r;

        if (w->run->n > 0 && (block != w->run->start + w->run->n || w->run->n == RUN_PAGES)) {
                r = flush_run(w);
                if (r < 0)
                        return r;
        }
        if (w->run->n == 0)
                w->run->start = block;
        memcpy(w->run->buf + w->run->n * SWSUSP_PAGE, page, SWSUSP_PAGE);
        w->run->n++;
        return 0;
}

/* Blocks queued or submitted, not yet complete. */
static uint64_t in_flight(const struct writer *w)
{
        uint64_t n = 0;

        for (size_t i = 0; i < RUNS; i++)
                n += w->runs[i].n;
        return n;
}

static int alloc_block(struct writer *w, uint64_t *block)
{
        int r = w->alloc->alloc(w->alloc->ctx, block);

        if (r == -ENOSPC)
                return fail(w->out, r, "the swap device is full after %" PRIu64 " blocks of the image",
                            w->out->blocks + in_flight(w));
        if (r < 0)
                return fail(w->out, r, "cannot allocate a swap block: %s", strerror(-r));
        if (*block == 0)
                return fail(w->out, -EINVAL, "the kernel gave swap block 0 (the header) for the image");
        return 0;
}

/* One stream page to the next swap block, recorded in the map as swap_write_page() does. */
static int write_page(struct writer *w, const uint8_t *page)
{
        uint64_t block, next;
        int r = alloc_block(w, &block);

        if (r == 0)
                r = put_block(w, block, page);
        if (r < 0)
                return r;
        bytes_put_le(w->map + 8 * w->map_n++, block, 8);
        if (w->map_n < SWSUSP_MAP_ENTRIES)
                return 0;
        r = alloc_block(w, &next);
        if (r < 0)
                return r;
        bytes_put_le(w->map + SWSUSP_MAP_NEXT_OFF, next, 8);
        r = put_block(w, w->map_block, w->map);
        memset(w->map, 0, SWSUSP_PAGE);
        w->map_block = next;
        w->map_n = 0;
        return r;
}

/* One chunk of up to 32 pages, compressed and framed as save_image_lzo() does. */
static int write_chunk(struct writer *w, const uint8_t *unc, size_t len, uint8_t *cmp, void *wrk)
{
        lzo_uint cmp_len = 0;
        size_t total, pages;
        int r;

        if (lzo1x_1_compress(unc, len, cmp + SWSUSP_CMP_HEADER, &cmp_len, wrk) != LZO_E_OK || cmp_len == 0 ||
            cmp_len > SWSUSP_CMP_MAX)
                return fail(w->out, -EIO, "LZO compression of chunk %" PRIu64 " failed", w->out->chunks);
        bytes_put_le(cmp, cmp_len, 8);
        total = SWSUSP_CMP_HEADER + cmp_len;
        pages = (total + SWSUSP_PAGE - 1) / SWSUSP_PAGE;
        /* The tail of the last page is the kernel's garbage; ours is zero. */
        memset(cmp + total, 0, pages * SWSUSP_PAGE - total);
        w->out->crc = imgcrc_update(w->out->crc, unc, len);
        w->out->chunks++;
        for (size_t i = 0; i < pages; i++) {
                r = write_page(w, cmp + i * SWSUSP_PAGE);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int stream(struct writer *w, const struct imgwrite_source *src, uint8_t *unc, uint8_t *cmp,
                  void *wrk)
{
        uint64_t want, got = 1;
        size_t n = 0;
        int r;

        r = src->read_page(src->ctx, unc);
        if (r <= 0)
                return fail(w->out, r < 0 ? r : -ENODATA, "cannot read the image's first page: %s",
                            r < 0 ? strerror(-r) : "the snapshot is empty");
        want = bytes_le64(unc + SWSUSP_INFO_PAGES_OFF);
        if (want < 2)
                return fail(w->out, -EINVAL, "the snapshot's header page says %" PRIu64 " pages", want);
        w->out->pages = want;
        r = alloc_block(w, &w->map_block);
        if (r < 0)
                return r;
        w->out->first_map = w->map_block;
        /* The swsusp_info page is stored uncompressed. */
        r = write_page(w, unc);
        if (r < 0)
                return r;
        for (;;) {
                r = got < want ? src->read_page(src->ctx, unc + n * SWSUSP_PAGE) : 0;
                if (r < 0)
                        return fail(w->out, r, "cannot read page %" PRIu64 " of the snapshot: %s", got,
                                    strerror(-r));
                if (r > 0) {
                        got++;
                        n++;
                }
                if (n > 0 && (n == SWSUSP_CHUNK_PAGES || r == 0)) {
                        int e = write_chunk(w, unc, n * SWSUSP_PAGE, cmp, wrk);

                        if (e < 0)
                                return e;
                        n = 0;
                }
                if (r == 0)
                        break;
        }
        if (got != want)
                return fail(w->out, -EIO, "the snapshot ended after %" PRIu64 " of %" PRIu64 " pages", got, want);
        /* The last map page, partly filled, next_swap 0: flush_swap_writer(). */
        r = put_block(w, w->map_block, w->map);
        if (r == 0)
                r = flush_run(w);
        if (r == 0)
                r = reap_all(w);
        if (r == 0 && fdatasync(w->fd) < 0)
                r = fail(w->out, -errno, "cannot flush the image to the device: %s", strerror(errno));
        return r;
}

int imgwrite_stream(int fd, const struct imgwrite_source *src, const struct imgwrite_alloc *alloc,
                    struct imgwrite_result *out)
{
        struct writer w = { .fd = fd, .alloc = alloc, .out = out };
        uint8_t *unc = NULL, *cmp = NULL;
        void *wrk = NULL;
        int r = -ENOMEM;

        memset(out, 0, sizeof(*out));
        if (lzo_init() != LZO_E_OK)
                return fail(out, -EIO, "liblzo2 did not initialise");
        /* Page-aligned: the device is opened with O_DIRECT, around the page cache. */
        for (size_t i = 0; i < RUNS; i++)
                if (posix_memalign((void **)&w.runs[i].buf, SWSUSP_PAGE, RUN_PAGES * SWSUSP_PAGE) != 0) {
                        fail(out, r, "out of memory");
                        goto out;
                }
        w.run = &w.runs[0];
        w.next = 1;
        if (posix_memalign((void **)&w.map, SWSUSP_PAGE, SWSUSP_PAGE) != 0 ||
            posix_memalign((void **)&unc, SWSUSP_PAGE, SWSUSP_CHUNK_PAGES * SWSUSP_PAGE) != 0 ||
            posix_memalign((void **)&cmp, SWSUSP_PAGE, SWSUSP_CHUNK_DISK_PAGES * SWSUSP_PAGE) != 0 ||
            !(wrk = malloc(LZO1X_1_MEM_COMPRESS))) {
                fail(out, r, "out of memory");
                goto out;
        }
        memset(w.map, 0, SWSUSP_PAGE);
        /* No AIO (a kernel without it, aio-max-nr reached): one synchronous write at a time. */
        if (syscall(SYS_io_setup, RUNS, &w.aio) < 0)
                w.aio = 0;
        r = stream(&w, src, unc, cmp, wrk);
        /* After a failure, no buffer is freed under a write the disk still has; the first reason stays. */
        if (w.aio) {
                char why[sizeof(out->why)];

                memcpy(why, out->why, sizeof(why));
                reap_all(&w);
                memcpy(out->why, why, sizeof(why));
                syscall(SYS_io_destroy, w.aio);
        }
out:
        for (size_t i = 0; i < RUNS; i++)
                free(w.runs[i].buf);
        free(w.map);
        free(unc);
        free(cmp);
        free(wrk);
        return r;
}

int imgwrite_header(int fd, uint64_t resume_block, const struct imgwrite_result *img, bool hw_sig,
                    uint32_t hw_sig_value, bool *tried)
{
        struct swsusp_header h;
        uint8_t *page;
        uint32_t flags = SWSUSP_SF_CRC32;
        int r;

        *tried = false;
        r = swsusp_load(fd, resume_block, &page, &h);
        if (r == 0 && h.kind != SWSUSP_SWAP)
                r = -EINVAL; /* mark_swapfiles(): "Swap header not found!" */
        if (r == 0) {
                memcpy(page + SWSUSP_ORIG_SIG_OFF, page + SWSUSP_SIG_OFF, SWSUSP_SIG_LEN);
                memcpy(page + SWSUSP_SIG_OFF, SWSUSP_SIG_IMAGE, SWSUSP_SIG_LEN);
                bytes_put_le(page + SWSUSP_IMAGE_OFF, img->first_map, 8);
                if (hw_sig) {
                        flags |= SWSUSP_SF_HW_SIG;
                        bytes_put_le(page + SWSUSP_HW_SIG_OFF, hw_sig_value, 4);
                }
                bytes_put_le(page + SWSUSP_FLAGS_OFF, flags, 4);
                bytes_put_le(page + SWSUSP_CRC32_OFF, img->crc, 4);
                *tried = true;
                r = swsusp_write_pages(fd, resume_block, page, 1);
                if (r == 0 && fdatasync(fd) < 0)
                        r = -errno;
        }
        free(page);
        return r;
}
