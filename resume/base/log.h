/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Program-side logging: "<level>thaw: msg" to the kernel log, or "thaw: msg" to stderr. */
#pragma once
#include <stdbool.h>
#include <syslog.h> /* LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO */

#define LOG_LINE_MAX 900 /* below the kernel's /dev/kmsg record limit */

/* Send messages to ROOT/dev/kmsg, or to stderr if to_stderr or kmsg cannot be opened. */
void log_setup(const char *root, bool to_stderr);
void log_close(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The library's messages go to a callback of the program's, without the "thaw: " prefix; level is
 * a syslog level. log_say() is the one that logs them (userdata unused); log_sayf() formats one
 * for fn (nothing if fn is NULL).
 */
typedef void (*log_say_fn)(void *userdata, int level, const char *msg);
void log_say(void *userdata, int level, const char *msg);
void log_sayf(log_say_fn fn, void *userdata, int level, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
