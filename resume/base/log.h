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
/* log_msg() as a message callback (args_say_fn, resume_say_fn…); userdata is unused. */
void log_say(void *userdata, int level, const char *msg);
