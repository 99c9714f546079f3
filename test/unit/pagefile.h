/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A file of swap pages in a fixture root, with one page written at a given one (or none). */
#pragma once
#include "faketree.h"
#include "image/swsusp.h"

static inline void put_file(const char *rel, uint64_t pages, uint64_t at, const uint8_t *page)
{
        char path[PATH_MAX];
        int fd;

        ft_parents(rel);
        ft_abs(path, sizeof(path), rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t)(pages * SWSUSP_PAGE)), 0);
        if (page)
                assert_int_equal(pwrite(fd, page, SWSUSP_PAGE, (off_t)(at * SWSUSP_PAGE)), SWSUSP_PAGE);
        close(fd);
}
