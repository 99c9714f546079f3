/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a passphrase from a terminal: no echo, a deadline, the terminal restored on every path. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "base/clock.h"
#include "prompt.h"

static int write_all(int fd, const char *s)
{
        size_t len = strlen(s), done = 0;

        while (done < len) {
                ssize_t n = write(fd, s + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                done += (size_t)n;
        }
        return 0;
}

/* Read one line into s (without its end) until the deadline; the terminal is in canonical mode. */
static int read_line(int fd, int64_t deadline_ms, struct secret *s)
{
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int64_t left = deadline_ms - clock_now_ms();
                uint8_t *nl;
                ssize_t n;
                int r;

                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        continue; /* the loop head says whether the deadline has passed */
                if (p.revents & (POLLERR | POLLNVAL))
                        return -EIO;
                if (s->len == s->cap)
                        return -EMSGSIZE;
                n = read(fd, s->data + s->len, s->cap - s->len);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return s->len ? 0 : -ENODATA; /* end of input (^D, or a hangup) */
                s->len += (size_t)n;
                nl = memchr(s->data, '\n', s->len);
                if (nl) {
                        /* Security: bytes after the line end are not ours to keep; wipe them. */
                        size_t keep = (size_t)(nl - s->data);

                        explicit_bzero(nl, s->len - keep);
                        s->len = keep;
                        return 0;
                }
        }
}

int prompt_passphrase(int fd, const char *prompt, int64_t deadline_ms, struct secret **out)
{
        struct termios old, quiet;
        struct secret *s = NULL;
        int r, r2;

        if (fd < 0 || !prompt || !out)
                return -EINVAL;
        if (tcgetattr(fd, &old) < 0)
                return -errno; /* -ENOTTY: not a terminal */
        if (deadline_ms <= clock_now_ms())
                return -ETIMEDOUT; /* no time left to ask: do not print a prompt nobody can answer */
        r = secret_new(PROMPT_PASSPHRASE_MAX, &s);
        if (r < 0)
                return r;
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK);
        quiet.c_lflag |= ICANON | ECHONL;
        /* TCSAFLUSH: what was typed before the prompt was echoed on the screen; it is not used. */
        if (tcsetattr(fd, TCSAFLUSH, &quiet) < 0) {
                r = -errno;
                secret_free(s);
                return r;
        }
        r = write_all(fd, prompt);
        if (r == 0)
                r = read_line(fd, deadline_ms, s);
        if (r == 0 && s->len > 0 && s->data[s->len - 1] == '\r')
                s->data[--s->len] = '\0';
        if (r == 0 && s->len == 0)
                r = -ENODATA;
        /* Restored on every path, timeout included; a line end so the next message starts clean. */
        r2 = tcsetattr(fd, TCSAFLUSH, &old) < 0 ? -errno : 0;
        if (r != 0 || r2 != 0)
                (void)write_all(fd, "\n");
        if (r == 0)
                r = r2;
        if (r < 0) {
                secret_free(s);
                return r;
        }
        *out = s;
        return 0;
}
