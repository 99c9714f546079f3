/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pseudo-terminal posing as /dev/console in a fixture root, a person typing at it, and the
 * passphrase source fetching from it: for the prompt and the passphrase source.
 */
#pragma once
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <termios.h>

#include "base/clock.h"
#include "faketree.h"
#include "key_provider.h"

static int master = -1, slave = -1;
static char ptyname[PATH_MAX];

static inline int console_setup(void **state)
{
        if (ft_setup(state) < 0 || openpty(&master, &slave, ptyname, NULL, NULL) < 0)
                return -1;
        ft_mkdir("/dev");
        ft_symlink(ptyname, "/dev/console");
        ft_puts("/sys/class/tty/console/active", "tty0 ttyS0\n");
        return 0;
}

static inline int console_teardown(void **state)
{
        close(master);
        close(slave);
        return ft_teardown(state);
}

/* What the terminal has shown since the last call (the prompt, any echo), without waiting. */
static inline const char *screen(void)
{
        static char buf[4096];
        size_t len = 0;

        for (;;) {
                struct pollfd p = { .fd = master, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, 50) <= 0 || len == sizeof(buf) - 1)
                        break;
                n = read(master, buf + len, sizeof(buf) - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        return buf;
}

/* A person at the console: waits for each prompt (": "), then types the next of n lines. */
static inline pid_t typist_n(const char *const *text, int n)
{
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                char seen[2048] = "";
                size_t len = 0;

                for (int i = 0; i < n; i++) {
                        int prompts;

                        for (;;) {
                                const char *p = seen;
                                ssize_t got;

                                for (prompts = 0; (p = strstr(p, ": ")); p += 2)
                                        prompts++;
                                if (prompts > i || len == sizeof(seen) - 1)
                                        break;
                                got = read(master, seen + len, sizeof(seen) - 1 - len);
                                if (got <= 0)
                                        _exit(1);
                                len += (size_t)got;
                                seen[len] = '\0';
                        }
                        if (write(master, text[i], strlen(text[i])) != (ssize_t)strlen(text[i]))
                                _exit(1);
                }
                _exit(0);
        }
        return pid;
}

static inline pid_t typist(const char *text)
{
        return typist_n(&text, 1);
}

static inline void reap(pid_t pid)
{
        int status;

        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static char detail[256];

static inline int fetch_until(const char *arg, int64_t deadline, struct secret **out)
{
        struct keysrc_ctx ctx = { .root = ft_root, .deadline_ms = deadline, .device = "/dev/vdb",
                                  .detail = detail, .detail_size = sizeof(detail) };

        detail[0] = '\0';
        assert_int_equal(key_passphrase_provider.check(arg), 0);
        return key_passphrase_provider.fetch(arg, &ctx, out);
}

static inline int fetch(const char *arg, int64_t wait_ms, struct secret **out)
{
        return fetch_until(arg, clock_now_ms() + wait_ms, out);
}

static inline void assert_echo_restored(void)
{
        struct termios t;

        assert_int_equal(tcgetattr(slave, &t), 0);
        assert_true(t.c_lflag & ECHO);
}
