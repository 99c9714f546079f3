/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A synthetic uncompressed hibernation image (header page, swap-map pages, x86_64 header page),
 * built in memory and saved as ROOT/dev/swap of a fixture root: for the image reader, its checks
 * and unmarking.
 */
#pragma once
#include "faketree.h"
#include "image/image.h"
#include "image/swsusp.h"
#include "putle.h"

#define DEV_PAGES 1024
#define IMAGE_PAGES 600 /* data pages: 2 meta pages, 603 stream pages, 2 map pages */
#define STREAM (IMAGE_PAGES + 2 + 1)
#define MAPS 2
#define PHYS 196478

static uint8_t dev[DEV_PAGES][4096];

/* Header at block 0, map pages at 1..MAPS, the stream from MAPS+1 on; uncompressed. */
static inline void build(uint32_t flags)
{
        memset(dev, 0, sizeof(dev));
        memcpy(dev[0] + 4076, "SWAPSPACE2", 10);
        memcpy(dev[0] + 4086, "S1SUSPEND\0", 10);
        put64(dev[0] + 4064, 1);
        put32(dev[0] + 4072, flags);
        for (uint64_t i = 0; i < STREAM; i++)
                put64(dev[1 + i / 511] + 8 * (i % 511), MAPS + 1 + i);
        for (int m = 1; m < MAPS; m++)
                put64(dev[m] + 4088, (uint64_t)m + 1);
        put64(dev[MAPS + 1] + 24, SWSUSP_X86_64_MAGIC);
        put64(dev[MAPS + 1] + 32, 0xc3772fbf);
        put64(dev[MAPS + 1] + 400, PHYS);
        put64(dev[MAPS + 1] + 416, IMAGE_PAGES);
        put64(dev[MAPS + 1] + 424, STREAM);
        put64(dev[MAPS + 1] + 432, (uint64_t)STREAM * 4096);
}

static inline void save(void)
{
        ft_put("/dev/swap", dev, sizeof(dev));
}

static inline struct image_info read_it(void)
{
        struct image_info in;
        char path[PATH_MAX];

        save();
        ft_abs(path, sizeof(path), "/dev/swap");
        assert_int_equal(image_read(path, 0, &in), 0);
        return in;
}
