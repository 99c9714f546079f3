/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small file helpers: root-prefixed paths, capped reads, sysfs-style writes. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define UTIL_READ_MAX (1u << 20) /* no text file we read may be larger than this */

/* buf = root + path; -ENAMETOOLONG if it does not fit. root may be "" or NULL. */
int util_path(char *buf, size_t size, const char *root, const char *path);
/* Copy src into dst; -ENAMETOOLONG if it does not fit (dst untouched then). */
int util_copy(char *dst, size_t size, const char *src);
/* Read a whole text file into buf (NUL-terminated). Returns the length, -EFBIG if it does not fit. */
int util_read_text(const char *path, char *buf, size_t size);
/* Same, for root + rel. */
int util_read_text_at(const char *root, const char *rel, char *buf, size_t size);
/* Write text to an existing file (sysfs attribute) in one write(); no O_CREAT. */
int util_write_text(const char *path, const char *text);
int util_write_text_at(const char *root, const char *rel, const char *text);
/* Create or replace path with text through a temporary file and rename(); parents created 0755. */
int util_write_file(const char *path, const char *text, unsigned mode);
/* fsync() the directory that holds path (a rename in it, on disk). -EINVAL if path has no '/'. */
int util_sync_dir_of(const char *path);
/* 1 if path exists (following symlinks), 0 if not. */
int util_exists(const char *path);
/* Strip trailing whitespace in place. */
void util_rstrip(char *s);
/* Parse an unsigned decimal number, all of s, at most max. -EINVAL / -ERANGE. */
/* Undoes in place the \ooo escapes with which /proc/self/mounts and /proc/swaps (seq_file) write
 * space, tab, newline and backslash. */
void util_unescape_octal(char *s);

int util_parse_u64(const char *s, uint64_t max, uint64_t *out);
/* "4096", "600M", "2G", "1T" (K, M, G, T: powers of 1024): bytes, at most max. -EINVAL / -ERANGE. */
int util_parse_bytes(const char *s, uint64_t max, uint64_t *out);
/*
 * Why something failed, into why (nothing if why is NULL or size 0), and r back, for the library's
 * one-line reasons: return util_why(why, size, -EINVAL, "\"%s\" is missing", name);
 */
int util_why(char *why, size_t size, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
