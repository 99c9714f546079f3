/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether an image's ticket lets thaw resume it: authentic, fresh, and its file systems as it left them. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "dev/fsmark.h"
#include "secret.h"
#include "ticket.h"

enum fresh_verdict {
        FRESH_YES,        /* resume it */
        FRESH_STALE,      /* never: forged, consumed, superseded, or a file system changed since */
        FRESH_NO_TICKET,  /* no ticket at all: the rd.thaw.mismatch= policy decides */
        FRESH_UNPROVEN,   /* this boot cannot prove it fresh (its TPM counter unreadable or behind): the
                             rd.thaw.mismatch= policy decides, as the image may well be fresh */
};

/*
 * The markers the file system recorded as rec (its UUID and type) has now: dev gets the device it was
 * found on. -ENOENT if no device holds it now; -ENOTUNIQ (with why) if another device holds it too
 * with markers other than rec's at level; other -errno (with why) if it cannot be read.
 */
typedef int (*fresh_fs_read_fn)(const struct fsmark *rec, enum fsmark_level level, char *dev, size_t dsize,
                                 struct fsmark *m, char *why, size_t size);

struct image_info;
struct imgverify;

/*
 * imgverify() of the image on path, and with key and a ticket that holds the image's MAC, that
 * MAC over the stream as well: v->result IMGVERIFY_CRC, with why, if it differs; v->why says it
 * matched otherwise. 0 or -errno as imgverify().
 */
int fresh_verify_image(const char *path, const struct image_info *img, const struct ticket *t,
                       const struct secret *key, struct imgverify *v);

/* "2026-12-03 18:40 UTC" */
void fresh_time(int64_t t, char *buf, size_t size);

/*
 * Judge ticket t (read is ticket_read()'s result for it: 0, -ENOENT, -EINVAL with read_why, ...)
 * with key (NULL: not in the keyring). FRESH_YES with what was checked in note ("2 file system(s)
 * as the image left them; not checked: ..."), else why says why not, for the refusal line.
 */
enum fresh_verdict fresh_judge(int read, const char *read_why, const struct ticket *t, const struct secret *key,
                               int key_error, fresh_fs_read_fn fs_read, char *why, size_t size, char *note,
                               size_t nsize);

/*
 * The TPM2 counter's verdict on ticket t, which fresh_judge() passed: FRESH_YES if it has no counter
 * or the counter (read: 0 and now, or -errno with read_why) holds its value (note says so);
 * FRESH_STALE if the counter is ahead ("image of ... is 2 hibernations old"); FRESH_UNPROVEN if it
 * is behind or cannot be read. why says why not.
 */
enum fresh_verdict fresh_judge_counter(const struct ticket *t, int read, const char *read_why, uint64_t now,
                                       char *why, size_t size, char *note, size_t nsize);
