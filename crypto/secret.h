/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key material in locked memory, wiped on free: the only place a key lives. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* A secret owns one mlock()ed mapping; data[] holds len valid bytes of cap. */
struct secret {
        size_t len;
        size_t cap;
        uint8_t *data;
};

#define SECRET_MAX 4096 /* no key source may deliver more than this */
/* Input that holds a key among other bytes (an SMBIOS entry with an encoded credential). */
#define SECRET_SCRATCH_MAX 65536

int secret_new(size_t cap, struct secret **out);            /* -ENOMEM, -EINVAL */
/* The same for scratch input holding a key among other bytes: cap up to SECRET_SCRATCH_MAX. */
int secret_new_scratch(size_t cap, struct secret **out);
int secret_random(size_t len, struct secret **out);         /* getrandom() filled */
void secret_free(struct secret *s);                         /* NULL ok; wipes first */
void secret_freep(struct secret **s);                       /* for __attribute__((cleanup)) */
int secret_equal(const struct secret *a, const struct secret *b); /* constant time, 1 = equal */
/* Read fd to its end into a new secret: -ENODATA empty, -EMSGSIZE more than SECRET_MAX bytes. */
int secret_read_fd(int fd, struct secret **out);
/* The same with a cap up to SECRET_SCRATCH_MAX, for scratch input that is parsed and then freed. */
int secret_read_fd_cap(int fd, size_t cap, struct secret **out);
/*
 * Make this process non-dumpable and without core files: key copies we do not own (libcryptsetup
 * keeps its own) must not land in a core dump or be readable through /proc/PID/mem. 0 or -errno.
 */
int secret_protect_process(void);
/*
 * A bare locked mapping of len bytes, with a secret's care (locked, out of core dumps and forks),
 * for a key copy another library owns (the token plugin's buffer for libcryptsetup); NULL if it
 * cannot be had. secret_unmap() wipes and unmaps it (NULL ok).
 */
void *secret_map(size_t len);
void secret_unmap(void *p, size_t len);
