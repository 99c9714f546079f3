/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Our own mkswap: a version 1 swap header on a device or file. */
#pragma once
#include <stddef.h>

#define SWAP_LABEL_MAX 16
#define SWAP_MIN_PAGES 10 /* mkswap's minimum */

/*
 * Write a swap v1 header ("SWAPSPACE2", version 1, last_page from the size of path, no bad pages,
 * a random UUID, label if not NULL) over the first page of path and sync it. uuid (may be NULL,
 * 37 bytes) receives the UUID as text. -ENOSPC below SWAP_MIN_PAGES, -ENAMETOOLONG for a long label.
 */
int swap_write_header(const char *path, const char *label, char *uuid, size_t uuid_size);
/* The same on an open descriptor (writable), for a file that must not be reopened by name. */
int swap_write_header_fd(int fd, const char *label, char *uuid, size_t uuid_size);
