/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Program-side logging: "<level>thaw: msg" to the kernel log, or "thaw: msg" to stderr. */
#include "base/log.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/util.h"

static int kmsg_fd = -1;

void log_setup(const char *root, bool to_stderr)
{
        char path[PATH_MAX];

        log_close();
        if (to_stderr || util_path(path, sizeof(path), root, "/dev/kmsg") < 0)
                return;
        kmsg_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
}

void log_close(void)
{
        if (kmsg_fd >= 0)
                close(kmsg_fd);
        kmsg_fd = -1;
}

void log_msg(int level, const char *fmt, ...)
{
        char msg[LOG_LINE_MAX], safe[LOG_LINE_MAX], line[LOG_LINE_MAX + 16];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        /* A message longer than a kmsg record is cut, never split. */
        for (char *p = msg; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        /* Messages quote header text (token types, ciphers) and device names: no control byte
         * reaches a console or the kernel log raw. */
        escape_text(safe, sizeof(safe), msg);
        if (kmsg_fd >= 0) {
                n = snprintf(line, sizeof(line), "<%d>thaw: %s\n", level & 7, safe);
                /* One write() is one kernel log record. */
                if (n > 0 && write(kmsg_fd, line, strlen(line)) >= 0)
                        return;
        }
        fprintf(stderr, "thaw: %s\n", safe);
}

void log_say(void *userdata, int level, const char *msg)
{
        (void)userdata;
        log_msg(level, "%s", msg);
}

void log_sayf(log_say_fn fn, void *userdata, int level, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (n >= 0 && fn)
                fn(userdata, level, msg);
}
